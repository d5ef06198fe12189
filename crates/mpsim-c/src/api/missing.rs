//! The MPI functions this library does not implement yet: they link, say so on standard
//! error once each, and return `MPI_ERR_OTHER` (test suites' helper files reference dozens of
//! them). A program that calls one learns which, instead of failing to link.

/// Says that `name` is not implemented, once per function.
pub fn not_implemented(name: &str) -> std::ffi::c_int {
    use std::collections::HashSet;
    use std::sync::Mutex;
    static SAID: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    let mut said = SAID.lock().unwrap_or_else(|p| p.into_inner());
    if said
        .get_or_insert_with(HashSet::new)
        .insert(name.to_string())
    {
        eprintln!(
            "mpsim: {name} is not implemented in this version of mpsim (returns MPI_ERR_OTHER)"
        );
    }
    mpsim_door::wire::class::OTHER
}

macro_rules! missing {
    ($($name:ident / $pname:ident),* $(,)?) => {$(
        #[unsafe(no_mangle)]
        pub extern "C" fn $pname() -> std::ffi::c_int {
            not_implemented(stringify!($name))
        }
        #[unsafe(no_mangle)]
        pub extern "C" fn $name() -> std::ffi::c_int {
            not_implemented(stringify!($name))
        }
    )*};
}

// Declared in mpi.h with their real signatures; called with any arguments, these ignore them
// (the C calling convention lets a callee ignore its arguments).
missing! {
MPI_Grequest_start / PMPI_Grequest_start,
MPI_Grequest_complete / PMPI_Grequest_complete,
MPI_Win_allocate_shared / PMPI_Win_allocate_shared, MPI_Win_shared_query / PMPI_Win_shared_query,
MPI_Win_create_dynamic / PMPI_Win_create_dynamic, MPI_Win_attach / PMPI_Win_attach,
MPI_Win_detach / PMPI_Win_detach,
MPI_File_open / PMPI_File_open, MPI_File_close / PMPI_File_close,
MPI_Comm_spawn / PMPI_Comm_spawn, MPI_Comm_get_parent / PMPI_Comm_get_parent,
}
