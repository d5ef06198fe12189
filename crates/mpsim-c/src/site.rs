//! Where the program called the library from: each exported `MPI_`/`PMPI_` function is a
//! trampoline (the `mpi!` macro, `api/mod.rs`) that stores its return address here, then jumps
//! to the function's body; the door sends it with the call (`CallHead::site`) and the mpsim run
//! turns it into `file.c:LINE (function)` when a report names the call.
//!
//! The body is an ordinary (not exported) Rust function, so the library's own calls of one MPI
//! function from another go straight to the body and leave the program's address in place. On
//! x86-64 the trampoline is three instructions (a load, a store, a jump); elsewhere the exported
//! functions are plain wrappers and no site is known (0).
//!
//! One address per process: a rank is a process, and its calls come one at a time (a program
//! calling from several threads at once may see another thread's site in a report).

use std::sync::atomic::{AtomicU64, Ordering};

/// The return address of the program's last call into the library (0: none known).
pub static CALL_SITE: AtomicU64 = AtomicU64::new(0);

/// The return address of the program's last call into the library, or 0.
pub fn last() -> u64 {
    CALL_SITE.load(Ordering::Relaxed)
}

/// Where the program's executable is loaded: the address its file offset 0 maps to (the
/// difference between run-time and link-time addresses, 0 for a non-PIE executable), so that
/// the mpsim run can find a return address in the file.
pub fn load_bias() -> u64 {
    // SAFETY: getauxval reads the process's auxiliary vector.
    let phdr = unsafe { libc::getauxval(libc::AT_PHDR) };
    let phnum = unsafe { libc::getauxval(libc::AT_PHNUM) };
    if phdr == 0 {
        return 0;
    }
    // SAFETY: AT_PHDR points to AT_PHNUM program headers of the main executable, mapped.
    let headers =
        unsafe { std::slice::from_raw_parts(phdr as *const libc::Elf64_Phdr, phnum as usize) };
    headers
        .iter()
        .find(|h| h.p_type == libc::PT_PHDR)
        .map(|h| phdr.wrapping_sub(h.p_vaddr))
        // No PT_PHDR (an odd executable): no site is shown.
        .unwrap_or(0)
}
