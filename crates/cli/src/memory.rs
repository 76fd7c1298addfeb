//! How the process's heap is kept lean (Linux; elsewhere these do nothing).

/// Keeps the kernel from backing the heap with 2 MiB transparent huge pages: mimalloc asks for
/// them (`madvise`), and half-used ones stay resident. An idle hub with 1,000 push clusters
/// held about 65 MB less without them, at no CPU cost measured.
pub fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    {
        use std::ffi::{c_int, c_ulong};
        unsafe extern "C" {
            fn prctl(option: c_int, ...) -> c_int;
        }
        /// `PR_SET_THP_DISABLE` of linux/prctl.h.
        const PR_SET_THP_DISABLE: c_int = 41;
        // SAFETY: prctl with an integer flag and zeroed unused arguments.
        let done = unsafe {
            let (on, zero): (c_ulong, c_ulong) = (1, 0);
            prctl(PR_SET_THP_DISABLE, on, zero, zero, zero)
        };
        if done != 0 {
            tracing::debug!("cannot turn transparent huge pages off");
        }
    }
}

/// Makes mimalloc hand freed memory back to the system at once rather than after its purge
/// delay (1 s, and only on later allocations): less resident memory for a process that idles
/// after freeing much, at the cost of more `madvise` calls (a busy hub spent more CPU on them
/// than it saved, so only `flotilla dns` does this).
pub fn purge_at_once() {
    #[cfg(all(target_os = "linux", not(feature = "system-allocator")))]
    {
        use std::ffi::{c_int, c_long};
        unsafe extern "C" {
            fn mi_option_get(option: c_int) -> c_long;
            fn mi_option_set(option: c_int, value: c_long);
        }
        /// `mi_option_purge_delay` in the option enum of mimalloc v3's mimalloc.h, default 1000.
        const MI_OPTION_PURGE_DELAY: c_int = 15;
        // SAFETY: mimalloc's option calls read and write its own option table. The purge delay
        // is only set if the option at that index has its documented default, so another
        // mimalloc version's enum cannot be mistaken for it.
        unsafe {
            if mi_option_get(MI_OPTION_PURGE_DELAY) == 1000 {
                mi_option_set(MI_OPTION_PURGE_DELAY, 0);
            }
        }
    }
}
