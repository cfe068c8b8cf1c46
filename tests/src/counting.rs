//! A global allocator for the bench binaries that counts the live bytes of the threads that turn
//! counting on (a fake server in the same process allocates on its own threads, uncounted). A
//! bench declares `#[global_allocator] static A: hermes_tests::counting::Counting = Counting;`.
#![allow(unsafe_code)]

use std::{
    alloc::{GlobalAlloc, Layout, System},
    cell::Cell,
};

thread_local! {
    static ON: Cell<bool> = const { Cell::new(false) };
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn add(delta: isize) {
    let _ = ON.try_with(|on| {
        if on.get() {
            let live = LIVE.get() + delta;
            LIVE.set(live);
            PEAK.set(PEAK.get().max(live));
        }
    });
}

pub struct Counting;

// SAFETY: every call goes to `System` unchanged; the counting touches only const-initialised
// thread-locals, which neither allocate nor panic.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            add(layout.size() as isize);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            add(layout.size() as isize);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        add(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            add(new_size as isize - layout.size() as isize);
        }
        new
    }
}

/// Counts this thread's allocations from now on, from zero.
pub fn start() {
    LIVE.set(0);
    PEAK.set(0);
    ON.set(true);
}

/// Stops counting; returns (live, peak live) bytes relative to `start`.
pub fn stop() -> (isize, isize) {
    ON.set(false);
    (LIVE.get(), PEAK.get())
}
