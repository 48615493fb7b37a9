//! A results file's reader, checks, histograms and merge on any text.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        dbsweep::results::fuzz_results_text(text);
    }
});
