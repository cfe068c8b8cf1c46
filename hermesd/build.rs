//! One link option for the hermesd binary: pack its relative relocations (DT_RELR) when the
//! toolchain and the C library it runs on support them. The dynamic loader then reads ~10 KB of
//! relocations at every start instead of ~560 KB, which keeps about half a MiB out of the idle
//! daemon's resident memory. Cross builds and older systems link as before.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let target = std::env::var("TARGET").unwrap_or_default();
    let host = std::env::var("HOST").unwrap_or_default();
    if target == host && target.ends_with("-linux-gnu") && glibc_has_relr() && linker_has_relr() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// glibc 2.36 or newer (the first to load DT_RELR).
fn glibc_has_relr() -> bool {
    let Ok(out) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let version = text.trim().trim_start_matches("glibc").trim();
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (2, 36)
}

/// The system linker knows the option.
fn linker_has_relr() -> bool {
    Command::new("ld")
        .arg("--help")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains("pack-relative-relocs"))
}
