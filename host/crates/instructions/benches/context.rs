//! Context-loading benchmark (filled in below).

fn main() {}
