//! The daemon's own process, closed to what it runs: not dumpable (as ssh-agent), so
//! `/proc/<hermesd>/{environ,fd,mem,maps}` need `CAP_SYS_PTRACE`, which a user's processes do
//! not have and a root daemon's children lose; and the environment block it was started with
//! wiped in place, so even where the kernel lets a root process read `/proc/<pid>/environ` it
//! finds zeros. The variables themselves live on in the C library's copy.

use std::io;

/// Clear the dumpable flag.
pub fn make_undumpable() {
    if let Err(e) = nix::sys::prctl::set_dumpable(false) {
        tracing::warn!(error = %e, "cannot clear the dumpable flag; /proc/<pid> of hermesd stays readable to its user");
    }
}

/// The `[start, end)` addresses of the environment block the kernel shows as
/// `/proc/self/environ` (fields 50 and 51 of `/proc/self/stat`).
fn environ_block() -> io::Result<(usize, usize)> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    let after_comm = stat
        .rfind(')')
        .map(|i| &stat[i + 2..])
        .ok_or_else(|| io::Error::other("/proc/self/stat has no command name"))?;
    // Fields after the name start at field 3 (state); env_start is field 50.
    let fields: Vec<&str> = after_comm.split_whitespace().collect();
    let field = |n: usize| -> io::Result<usize> {
        fields
            .get(n - 3)
            .and_then(|f| f.parse().ok())
            .ok_or_else(|| io::Error::other(format!("/proc/self/stat has no field {n}")))
    };
    Ok((field(50)?, field(51)?))
}

/// Move every variable out of the initial environment block into the C library's own copies,
/// then zero the block. Call first thing in `main`, while the process has one thread.
pub fn scrub_initial_environment() -> io::Result<()> {
    let (start, end) = environ_block()?;
    if end <= start {
        return Ok(());
    }
    for (key, value) in std::env::vars_os().collect::<Vec<_>>() {
        // SAFETY: called while the process is single-threaded (first thing in main), so no
        // other thread reads the environment during the change.
        unsafe { std::env::set_var(&key, &value) };
    }
    // The C library's pointers now lead to its own copies; nothing refers to the block any more.
    // SAFETY: `[start, end)` is this process's environment block as the kernel reports it,
    // mapped and writable (the initial stack).
    unsafe { std::ptr::write_bytes(start as *mut u8, 0, end - start) };
    Ok(())
}
