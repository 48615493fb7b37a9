//! dbsweep's PostgreSQL client over TLS (a real handshake with an in-process server)
//! against a server whose bytes inside TLS are the input.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    dbsweep::db::fuzzing::postgres_tls_session(data);
});
