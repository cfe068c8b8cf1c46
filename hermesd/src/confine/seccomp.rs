//! The seccomp filter every confined child carries, and how the daemon recognises a process that
//! carries it.
//!
//! The filter refuses `ioctl(TIOCSTI)` and `ioctl(TIOCLINUX)` — pushing characters into a
//! terminal's input, the classic way out of a sandbox through a shared terminal — and the x32
//! system call ABI, whose numbers would slip past that check. It is also the mark of the agent:
//! the kernel never removes a seccomp filter from a process, its children inherit it across
//! `fork` and `exec`, and `/proc/<pid>/status` counts them (`Seccomp_filters`, Linux 5.9). A
//! process with more filters than the daemon itself has was started, directly or not, by a
//! confined child: no `setsid`, double fork, `exec` or change of environment sheds the mark.
//! The filter is eleven BPF instructions; a crate for that is more than the filter.

use std::io;
use std::path::Path;

const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x15;
const BPF_JSET_K: u16 = 0x45;
const BPF_RET_K: u16 = 0x06;
/// `struct seccomp_data`: the call number, the architecture, the low half of the second argument.
const DATA_NR: u32 = 0;
const DATA_ARCH: u32 = 4;
const DATA_ARG1_LOW: u32 = 24;
const TIOCSTI: u32 = 0x5412;
const TIOCLINUX: u32 = 0x541C;

#[cfg(target_arch = "x86_64")]
mod arch {
    pub const NATIVE: u32 = 0xC000_003E;
    pub const NATIVE_IOCTL: u32 = 16;
    /// x32 system calls carry this bit in their number.
    pub const FOREIGN_ABI_BIT: u32 = 0x4000_0000;
    pub const COMPAT: u32 = 0x4000_0003;
    pub const COMPAT_IOCTL: u32 = 54;
}

#[cfg(target_arch = "aarch64")]
mod arch {
    pub const NATIVE: u32 = 0xC000_00B7;
    pub const NATIVE_IOCTL: u32 = 29;
    pub const FOREIGN_ABI_BIT: u32 = 0;
    pub const COMPAT: u32 = 0x4000_0028;
    pub const COMPAT_IOCTL: u32 = 54;
}

fn stmt(code: u16, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// The filter's instructions (see the module's text). Jump offsets count from the next one.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub fn program() -> Vec<libc::sock_filter> {
    let deny = SECCOMP_RET_ERRNO | libc::EPERM as u32;
    vec![
        /* 0 */ stmt(BPF_LD_W_ABS, DATA_ARCH),
        /* 1 */ jump(BPF_JEQ_K, arch::NATIVE, 0, 3),
        /* 2 */ stmt(BPF_LD_W_ABS, DATA_NR),
        /* 3 */ jump(BPF_JSET_K, arch::FOREIGN_ABI_BIT, 8, 0),
        /* 4 */ jump(BPF_JEQ_K, arch::NATIVE_IOCTL, 3, 6),
        /* 5 */ jump(BPF_JEQ_K, arch::COMPAT, 0, 5),
        /* 6 */ stmt(BPF_LD_W_ABS, DATA_NR),
        /* 7 */ jump(BPF_JEQ_K, arch::COMPAT_IOCTL, 0, 3),
        /* 8 */ stmt(BPF_LD_W_ABS, DATA_ARG1_LOW),
        /* 9 */ jump(BPF_JEQ_K, TIOCSTI, 2, 0),
        /* 10 */ jump(BPF_JEQ_K, TIOCLINUX, 1, 0),
        /* 11 */ stmt(BPF_RET_K, SECCOMP_RET_ALLOW),
        /* 12 */ stmt(BPF_RET_K, deny),
    ]
}

/// No filter on other architectures: the daemon then cannot mark its children.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn program() -> Vec<libc::sock_filter> {
    Vec::new()
}

/// Install `filter` on the calling thread (in the child, after `fork`), setting `no_new_privs`
/// first only when the kernel asks for it. Async-signal-safe: system calls only.
pub fn install(filter: &libc::sock_fprog) -> io::Result<()> {
    // SAFETY: `filter` points at a live program of `filter.len` instructions (owned by the
    // confinement, which outlives every spawn); the rest are plain system calls.
    unsafe {
        let set = |prog: &libc::sock_fprog| {
            libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                std::ptr::from_ref(prog),
                0,
                0,
            )
        };
        if set(filter) == 0 {
            return Ok(());
        }
        let first = io::Error::last_os_error();
        if !matches!(first.raw_os_error(), Some(libc::EACCES | libc::EPERM)) {
            return Err(first);
        }
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || set(filter) != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// How many seccomp filters the process `pid` carries (`/proc/<pid>/status`), `None` when the
/// process is gone or the kernel does not count them.
pub fn filters_of(proc_dir: &Path) -> Option<u32> {
    let status = std::fs::read_to_string(proc_dir.join("status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("Seccomp_filters:"))
        .and_then(|n| n.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_jump_lands_inside_the_program() {
        let program = program();
        for (at, ins) in program.iter().enumerate() {
            if ins.code == BPF_JEQ_K || ins.code == BPF_JSET_K {
                assert!(at + 1 + usize::from(ins.jt) < program.len(), "jt of {at}");
                assert!(at + 1 + usize::from(ins.jf) < program.len(), "jf of {at}");
            }
        }
        assert_eq!(program.last().map(|i| i.code), Some(BPF_RET_K));
    }

    #[test]
    fn this_process_reports_a_count() {
        assert!(filters_of(Path::new("/proc/self")).is_some());
    }
}
