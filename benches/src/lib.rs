//! Benchmarks live in `src/bin`.
