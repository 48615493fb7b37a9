//! Exports the C functions that sysbench Lua scripts reach through LuaJIT's FFI (`ffi.C.NAME`
//! resolves against the running binary's dynamic symbols).

fn main() {
    println!("cargo:rustc-link-arg-bins=-Wl,--export-dynamic-symbol=sb_counter_inc");
    println!("cargo:rerun-if-changed=build.rs");
}
