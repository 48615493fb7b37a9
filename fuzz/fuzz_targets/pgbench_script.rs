//! pgbench scripts and their expressions: read, and every expression evaluated once.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        dbsweep::workload::pgbench::script::fuzz_script(text);
    }
});
