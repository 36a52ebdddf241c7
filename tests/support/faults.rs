//! Minor page faults, as `getrusage` counts them: a fresh sandbox's copy-on-write and
//! first-touch faults are most of what a big guest's call costs beyond running it.

/// Minor page faults so far of `who`: `libc::RUSAGE_SELF` (the whole process) or
/// `libc::RUSAGE_THREAD` (the calling thread only, so other threads' work does not count).
pub fn minor_faults(who: libc::c_int) -> i64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a whole rusage into the pointer it is given.
    let usage = unsafe {
        assert_eq!(libc::getrusage(who, usage.as_mut_ptr()), 0, "getrusage");
        usage.assume_init()
    };
    usage.ru_minflt
}
