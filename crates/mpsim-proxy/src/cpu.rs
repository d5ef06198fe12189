//! One CPU for a simulated C run.
//!
//! In a simulated run exactly one process runs at a time: the mpsim process or one rank. Kept
//! on one CPU, a hand-over between them is a futex wake and a switch on that CPU; spread over
//! several, each one wakes a CPU that sleeps (an interrupt to another core, an exit from the
//! idle state: on a virtual machine, a trip through the hypervisor), and each side spins while
//! it waits to avoid that. `bench/c-ring.sh` measured a third less host time per message with
//! one CPU (docs/c.md). The CPU is the one the run starts on, within the process's allowed
//! set; the mpsim thread that simulates (the calling one) goes back to its former set after the
//! run.

/// The calling thread's allowed CPUs before [`pin`] narrowed them.
pub struct Pinned {
    before: libc::cpu_set_t,
}

/// Keeps the calling thread, and the processes it starts from now on, on the CPU it runs on.
/// `None` when the system does not say which CPU that is or refuses the change (the run then
/// goes on as it is).
pub fn pin() -> Option<Pinned> {
    // SAFETY: plain system calls on this thread with valid out-pointers.
    unsafe {
        let mut before: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut before) != 0 {
            return None;
        }
        let cpu = libc::sched_getcpu();
        if cpu < 0 || cpu as usize >= 8 * size_of::<libc::cpu_set_t>() {
            return None;
        }
        let mut one: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut one);
        if libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &one) != 0 {
            return None;
        }
        Some(Pinned { before })
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // SAFETY: restores the set read by `pin` on the same thread.
        unsafe { libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &self.before) };
    }
}
