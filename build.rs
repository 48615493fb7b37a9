//! Exports the C functions that sysbench Lua scripts reach through LuaJIT's FFI (`ffi.C.NAME`
//! resolves against the running binary's dynamic symbols).

fn main() {
    for symbol in ["sb_counter_inc"] {
        println!("cargo:rustc-link-arg-bins=-Wl,--export-dynamic-symbol={symbol}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
