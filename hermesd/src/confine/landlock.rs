//! Landlock, by its three system calls: which ABI the kernel offers, and the one ruleset every
//! confined child enters (`landlock_restrict_self` in the child, before `exec`).
//!
//! The ruleset is small on purpose. Files are hidden and made read-only by the mount namespace
//! (`mounts.rs`), which can cover a single path; Landlock's part is what only it gives an
//! unprivileged process, and what holds those mounts in place:
//! - a process in a Landlock domain may not `mount`, `umount`, `pivot_root` or move a mount, so
//!   no child takes the covers off (not even a root child);
//! - it may not ptrace, nor open `/proc/<pid>/{environ,fd,mem,maps,root,cwd}` of, any process
//!   outside its domain: the daemon, the owner's shells, init (so `/proc/<pid>/root/…` does not
//!   lead back into the uncovered tree either);
//! - it may not create device nodes (`MAKE_CHAR`, `MAKE_BLOCK`: the handled rights, with no rule
//!   granting them);
//! - from ABI 6, it may not connect to an abstract Unix socket bound outside its domain (the
//!   session bus, other daemons listening in the abstract namespace).
//!
//! The `landlock` crate is not used: its value is building rule sets across ABIs, and this
//! ruleset has no rules; what matters here is that the child's part is one system call on a
//! descriptor made beforehand, with nothing allocated after `fork`.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
const ACCESS_FS_MAKE_CHAR: u64 = 1 << 6;
const ACCESS_FS_MAKE_BLOCK: u64 = 1 << 11;
const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;

/// `struct landlock_ruleset_attr` as of ABI 6; older kernels accept it while the fields they do
/// not know are zero.
#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

/// The Landlock ABI version the kernel offers, or `None` without Landlock (not built in, not
/// enabled at boot, or a kernel before 5.13).
pub fn abi_version() -> Option<u32> {
    // SAFETY: with a null attribute, size 0 and the VERSION flag the call only returns a number.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(version).ok().filter(|v| *v >= 1)
}

/// The ruleset confined children enter (see the module's text), for a kernel of ABI `abi`.
pub fn ruleset(abi: u32) -> io::Result<OwnedFd> {
    let attr = RulesetAttr {
        handled_access_fs: ACCESS_FS_MAKE_CHAR | ACCESS_FS_MAKE_BLOCK,
        handled_access_net: 0,
        scoped: if abi >= 6 {
            SCOPE_ABSTRACT_UNIX_SOCKET
        } else {
            0
        },
    };
    // SAFETY: `attr` is a valid, initialised struct of the size passed; the result is a new
    // descriptor (close-on-exec, as Landlock makes them) or -1.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            &raw const attr,
            std::mem::size_of::<RulesetAttr>(),
            0u32,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd =
        RawFd::try_from(fd).map_err(|_| io::Error::other("ruleset descriptor out of range"))?;
    // SAFETY: the kernel just returned this descriptor to us; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Enter the ruleset `fd` (in the child, after `fork`). Without `CAP_SYS_ADMIN` in its user
/// namespace a process must set `no_new_privs` first; that is done only when the kernel asks.
/// Async-signal-safe: system calls only.
pub fn restrict_self(fd: RawFd) -> io::Result<()> {
    // SAFETY: plain system calls on integers.
    unsafe {
        if libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) == 0 {
            return Ok(());
        }
        if io::Error::last_os_error().raw_os_error() != Some(libc::EPERM) {
            return Err(io::Error::last_os_error());
        }
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(io::Error::last_os_error());
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
}
