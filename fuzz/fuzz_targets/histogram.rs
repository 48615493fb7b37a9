//! The histogram decoder (a results file's `histogram.data`, base64 aside) on any bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    dbsweep::results::fuzz_histogram_bytes(data);
});
