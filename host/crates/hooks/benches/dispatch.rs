//! Dispatch latency benchmark.

fn main() {}
