//! Paths of the test guest components (`plugins/testing/`), built for `wasm32-wasip2` by this
//! crate's build script. A dev-dependency only: tests and benchmarks use these files, the
//! library never does.

include!(concat!(env!("OUT_DIR"), "/artifacts.rs"));
