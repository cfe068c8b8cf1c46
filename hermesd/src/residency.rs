//! What of the daemon stays in memory once it has started: start-up runs code spread over the
//! whole binary (configuration, migrations, the policy's rule compilers, the server's set-up),
//! and the kernel reads it in 128 KiB read-ahead and maps it in 64 KiB fault-around blocks, so an
//! idle daemon held about 6 MiB of code for the few hundred pages its timers, polls and
//! heartbeats run. Once serving, the daemon hands back the clean pages of its read-only file
//! mappings (`MADV_PAGEOUT`: what it runs next is paged in again, as the kernel would do after
//! reclaiming them under pressure) and marks them `MADV_RANDOM`, so that what it runs next is
//! read and mapped a page at a time — a page it touches brings in that page, not the 64 KiB
//! around it — and the free memory of its heaps (`malloc_trim`). The same happens when a burst of work is over and every live session has
//! been evicted: the code the burst ran, and the heap it freed, go back.
#![allow(unsafe_code)] // `madvise`, `malloc_trim` and `mallopt` calls; see the SAFETY notes

use std::{ffi::c_void, ptr::NonNull};

use nix::sys::mman::{MmapAdvise, madvise};

/// What [`release_unused_memory`] gave back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Released {
    /// Bytes of read-only file mappings advised out.
    pub mapped_bytes: usize,
    /// Whether the allocator returned memory to the system.
    pub heap_trimmed: bool,
}

/// Give back pages the daemon may not need again soon: clean code and constants, and free heap
/// memory — once start-up is over, and again when a burst of work is over (every live session
/// evicted). Advice only: a
/// kernel without `MADV_PAGEOUT` (before 5.4) refuses it and nothing changes.
pub fn release_unused_memory() -> Released {
    let mapped_bytes = std::fs::read_to_string("/proc/self/maps")
        .map(|maps| {
            maps.lines()
                .filter_map(read_only_file_mapping)
                .filter(|&(start, length)| page_out(start, length))
                .map(|(_, length)| length)
                .sum()
        })
        .unwrap_or(0);
    // SAFETY: malloc_trim only returns free memory of glibc's heaps to the kernel; it touches no
    // live allocation and is safe to call from any thread at any time.
    let heap_trimmed = unsafe { libc::malloc_trim(0) } == 1;
    Released {
        mapped_bytes,
        heap_trimmed,
    }
}

/// Let glibc keep at most two heaps (arenas) instead of eight per core: threads of the blocking
/// pool each took one under load, and the memory freed in them stayed as fragments. Call before
/// the runtime starts its threads; whether it was accepted.
pub fn limit_heaps() -> bool {
    // SAFETY: mallopt only sets an allocator tunable, under the allocator's own lock.
    unsafe { libc::mallopt(libc::M_ARENA_MAX, 2) == 1 }
}

/// Give the free memory of the heaps back to the system (after idle sessions were evicted, say);
/// whether anything was returned.
pub fn trim_heaps() -> bool {
    // SAFETY: as in `release_unused_memory`: only free memory is returned.
    unsafe { libc::malloc_trim(0) == 1 }
}

fn page_out(start: usize, length: usize) -> bool {
    let Some(start) = NonNull::new(start as *mut c_void) else {
        return false;
    };
    // SAFETY: the range is one whole read-only mapping of a file, as the kernel lists it for this
    // process. Access-pattern advice and paging out clean file pages change no content and no
    // protection: the next access reads the same bytes from the page cache or the file, so no
    // reference into it is affected.
    unsafe {
        let _ = madvise(start, length, MmapAdvise::MADV_RANDOM);
        madvise(start, length, MmapAdvise::MADV_PAGEOUT).is_ok()
    }
}

/// `(start, length)` of a `/proc/self/maps` line that maps a file without write access.
fn read_only_file_mapping(line: &str) -> Option<(usize, usize)> {
    let mut fields = line.split_whitespace();
    let (range, perms) = (fields.next()?, fields.next()?);
    let inode = fields.nth(2)?;
    let path = fields.next()?;
    let writable = perms.as_bytes().get(1) != Some(&b'-');
    if !perms.starts_with('r') || writable || inode == "0" || !path.starts_with('/') {
        return None;
    }
    let (start, end) = range.split_once('-')?;
    let start = usize::from_str_radix(start, 16).ok()?;
    let end = usize::from_str_radix(end, 16).ok()?;
    (end > start).then_some((start, end - start))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_read_only_file_mappings_are_advised() {
        let code = "55d0c0a00000-55d0c1000000 r-xp 002d6000 fd:01 1234 /usr/bin/hermesd";
        assert_eq!(
            read_only_file_mapping(code),
            Some((0x55d0c0a00000, 0x600000))
        );
        for other in [
            "55d0c1000000-55d0c1010000 rw-p 00a80000 fd:01 1234 /usr/bin/hermesd",
            "7f0000000000-7f0000100000 rw-p 00000000 00:00 0",
            "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]",
            "7ffd00100000-7ffd00102000 r-xp 00000000 00:00 0 [vdso]",
            "7ffd00100000-7ffd00102000 ---p 00000000 fd:01 1234 /usr/lib/libc.so.6",
        ] {
            assert_eq!(read_only_file_mapping(other), None, "{other}");
        }
    }

    /// This process's own code and libraries are advised out (a kernel before 5.4 refuses, and
    /// this fails there).
    #[test]
    fn this_process_has_mappings_to_page_out() {
        let released = release_unused_memory();
        assert!(released.mapped_bytes > 0, "{released:?}");
    }
}
