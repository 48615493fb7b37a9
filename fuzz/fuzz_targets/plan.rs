//! The plan parser and validator on any text.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        // Parses and validates the text as `dbsweep sweep PLAN --dry-run` would.
        let _ = dbsweep::plan::sweep_plan::Sweep::parse("fuzz.toml", text, &Default::default());
    }
});
