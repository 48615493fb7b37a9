//! dbsweep's MySQL client against a server whose bytes are the input.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    dbsweep::db::fuzzing::mysql_session(data);
});
