//! How much of the program stays resident while the daemon idles: its code and read-only data are
//! mapped page by page as they run, instead of in the kernel's fault-around blocks (64 KiB by
//! default). Start-up touches code spread over the whole binary, and fault-around then maps most
//! of it: about 6 MiB of an 8 MiB text segment, where the daemon runs far less. This is advice
//! only (`MADV_RANDOM`): no content or protection changes, and under memory pressure the kernel
//! could drop those clean pages anyway.
#![allow(unsafe_code)] // one `madvise` call; see the SAFETY note

use std::{ffi::c_void, ptr::NonNull};

use nix::sys::mman::{MmapAdvise, madvise};

/// Ask for on-demand mapping of every read-only, file-backed mapping of this process (its own
/// code and constants, and the shared libraries'); returns how many bytes were advised.
pub fn map_code_on_demand() -> usize {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return 0;
    };
    maps.lines()
        .filter_map(read_only_file_mapping)
        .filter(|&(start, length)| {
            let Some(start) = NonNull::new(start as *mut c_void) else {
                return false;
            };
            // SAFETY: the range is one whole mapping of this process, as the kernel lists it, and
            // MADV_RANDOM only changes how the kernel pages it in: no content, protection or
            // lifetime changes, so no reference into it is affected.
            unsafe { madvise(start, length, MmapAdvise::MADV_RANDOM) }.is_ok()
        })
        .map(|(_, length)| length)
        .sum()
}

/// `(start, length)` of a `/proc/self/maps` line that maps a file without write access.
fn read_only_file_mapping(line: &str) -> Option<(usize, usize)> {
    let mut fields = line.split_whitespace();
    let (range, perms) = (fields.next()?, fields.next()?);
    let inode = fields.nth(2)?;
    let path = fields.next()?;
    if !perms.starts_with('r') || perms.as_bytes().get(1) != Some(&b'-') || inode == "0" {
        return None;
    }
    if !path.starts_with('/') {
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
        ] {
            assert_eq!(read_only_file_mapping(other), None, "{other}");
        }
    }

    #[test]
    fn this_process_has_code_to_advise() {
        assert!(map_code_on_demand() > 0);
    }
}
