//! The plan parser and validator on any text.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        dbsweep::db::fuzzing::plan(text);
    }
});
