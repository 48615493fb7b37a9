//! Exports the C functions that sysbench Lua scripts reach through LuaJIT's FFI (`ffi.C.NAME`
//! resolves against the running binary's dynamic symbols): those of `FFI_CDEF` in
//! src/lua/api.rs that dbsweep defines.

const FFI_EXPORTS: [&str; 4] = [
    "sb_counter_inc",
    "sb_more_events",
    "sb_event_start",
    "sb_event_stop",
];

fn main() {
    for name in FFI_EXPORTS {
        println!("cargo:rustc-link-arg-bins=-Wl,--export-dynamic-symbol={name}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
