//! The values of the MPI standard ABI (MPI 5.0's ABI annex) that the library reads: handle
//! constants, sentinels, comparison results. `include/mpi.h` declares the same values for C;
//! `tests/c_abi.rs` checks the two agree.
//!
//! Handles are pointer-sized. Predefined ones are small constants (below 0x400); handles the
//! library makes start at [`FIRST_DYNAMIC`], so a predefined handle is never mistaken for
//! another object.

/// A handle as C passes it (`MPI_Comm`, `MPI_Datatype`, ... are pointers to incomplete types).
pub type Handle = usize;

/// Handles this library makes are at or above this value.
pub const FIRST_DYNAMIC: Handle = 0x1_0000;

pub const MPI_OP_NULL: Handle = 0x20;
pub const MPI_SUM: Handle = 0x21;
pub const MPI_MIN: Handle = 0x22;
pub const MPI_MAX: Handle = 0x23;
pub const MPI_PROD: Handle = 0x24;
pub const MPI_BAND: Handle = 0x28;
pub const MPI_BOR: Handle = 0x29;
pub const MPI_BXOR: Handle = 0x2a;
pub const MPI_LAND: Handle = 0x30;
pub const MPI_LOR: Handle = 0x31;
pub const MPI_LXOR: Handle = 0x32;
pub const MPI_MINLOC: Handle = 0x38;
pub const MPI_MAXLOC: Handle = 0x39;
pub const MPI_REPLACE: Handle = 0x3c;
pub const MPI_NO_OP: Handle = 0x3d;

pub const MPI_COMM_NULL: Handle = 0x100;
pub const MPI_COMM_WORLD: Handle = 0x101;
pub const MPI_COMM_SELF: Handle = 0x102;

pub const MPI_GROUP_NULL: Handle = 0x108;
pub const MPI_GROUP_EMPTY: Handle = 0x109;

pub const MPI_MESSAGE_NULL: Handle = 0x128;
pub const MPI_MESSAGE_NO_PROC: Handle = 0x129;

pub const MPI_INFO_NULL: Handle = 0x130;

pub const MPI_ERRHANDLER_NULL: Handle = 0x140;
pub const MPI_ERRORS_ARE_FATAL: Handle = 0x141;
pub const MPI_ERRORS_ABORT: Handle = 0x142;
pub const MPI_ERRORS_RETURN: Handle = 0x143;

pub const MPI_REQUEST_NULL: Handle = 0x180;

pub const MPI_DATATYPE_NULL: Handle = 0x200;
/// Predefined datatypes `MPI_Type_match_size` gives (`dtype.rs` has every layout).
pub const MPI_LONG_DOUBLE: Handle = 0x220;
pub const MPI_INTEGER1: Handle = 0x2c1;
pub const MPI_INTEGER2: Handle = 0x2c9;
pub const MPI_INTEGER4: Handle = 0x2d1;
pub const MPI_REAL4: Handle = 0x2d2;
pub const MPI_INTEGER8: Handle = 0x2d9;
pub const MPI_REAL8: Handle = 0x2da;
pub const MPI_COMPLEX8: Handle = 0x2db;
pub const MPI_COMPLEX16: Handle = 0x2e3;
pub const MPI_COMPLEX32: Handle = 0x2eb;
/// `MPI_Type_match_size`'s type classes.
pub const MPI_TYPECLASS_INTEGER: i32 = 192;
pub const MPI_TYPECLASS_REAL: i32 = 193;
pub const MPI_TYPECLASS_COMPLEX: i32 = 194;

pub const MPI_ANY_SOURCE: i32 = -1;
pub const MPI_ANY_TAG: i32 = -2;
pub const MPI_PROC_NULL: i32 = -3;
pub const MPI_ROOT: i32 = -4;
pub const MPI_UNDEFINED: i32 = -32766;

pub const MPI_IDENT: i32 = 201;
pub const MPI_CONGRUENT: i32 = 202;
pub const MPI_SIMILAR: i32 = 203;
pub const MPI_UNEQUAL: i32 = 204;

/// `MPI_CART` (`MPI_Topo_test`).
pub const MPI_CART: i32 = 211;
/// `MPI_GRAPH`, `MPI_DIST_GRAPH` (`MPI_Topo_test`).
pub const MPI_GRAPH: i32 = 212;
pub const MPI_DIST_GRAPH: i32 = 213;

pub const MPI_THREAD_SINGLE: i32 = 0;
pub const MPI_THREAD_FUNNELED: i32 = 1024;
pub const MPI_THREAD_SERIALIZED: i32 = 2048;

/// Keyvals of the predefined attributes, and the invalid keyval.
pub const MPI_KEYVAL_INVALID: i32 = 0;
pub const MPI_TAG_UB: i32 = 501;
pub const MPI_IO: i32 = 502;
pub const MPI_HOST: i32 = 503;
pub const MPI_WTIME_IS_GLOBAL: i32 = 504;
pub const MPI_APPNUM: i32 = 505;
pub const MPI_LASTUSEDCODE: i32 = 506;
pub const MPI_UNIVERSE_SIZE: i32 = 507;

/// Error classes the door's wire does not name.
pub const MPI_ERR_KEYVAL: i32 = 36;
pub const MPI_ERR_ERRHANDLER: i32 = 61;
pub const MPI_ERR_INFO_NOKEY: i32 = 32;

/// `MPI_MAX_INFO_KEY`.
pub const MPI_MAX_INFO_KEY: usize = 256;

/// `MPI_Comm_split_type`'s types.
pub const MPI_COMM_TYPE_SHARED: i32 = 221;
pub const MPI_COMM_TYPE_HW_UNGUIDED: i32 = 222;
pub const MPI_COMM_TYPE_HW_GUIDED: i32 = 223;
pub const MPI_COMM_TYPE_RESOURCE_GUIDED: i32 = 224;

/// Array orders and distributions (`MPI_Type_create_subarray`, `_darray`).
pub const MPI_ORDER_C: i32 = 12;
pub const MPI_ORDER_FORTRAN: i32 = 15;
pub const MPI_DISTRIBUTE_NONE: i32 = 16;
pub const MPI_DISTRIBUTE_BLOCK: i32 = 17;
pub const MPI_DISTRIBUTE_CYCLIC: i32 = 18;
pub const MPI_DISTRIBUTE_DFLT_DARG: i32 = 19;

/// `MPI_IN_PLACE`.
pub const MPI_IN_PLACE: usize = 1;

/// `MPI_MAX_PROCESSOR_NAME`.
pub const MPI_MAX_PROCESSOR_NAME: usize = 256;
/// `MPI_MAX_ERROR_STRING`.
pub const MPI_MAX_ERROR_STRING: usize = 512;
/// `MPI_MAX_OBJECT_NAME`.
pub const MPI_MAX_OBJECT_NAME: usize = 128;
/// The largest tag (`MPI_TAG_UB`'s value).
pub const TAG_UB: i32 = 0x3fff_ffff;

/// `MPI_Status` as the ABI lays it out: three public fields, five words of ours (bytes
/// received as two halves, and whether the request was cancelled).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct MpiStatus {
    pub source: i32,
    pub tag: i32,
    pub error: i32,
    pub bytes_lo: i32,
    pub bytes_hi: i32,
    pub cancelled: i32,
    pub reserved: [i32; 2],
}

impl MpiStatus {
    /// Bytes received.
    pub fn bytes(&self) -> u64 {
        (self.bytes_lo as u32 as u64) | ((self.bytes_hi as u32 as u64) << 32)
    }

    /// From the wire.
    pub fn from_wire(w: &mpsim_door::wire::WireStatus) -> Self {
        MpiStatus {
            source: w.source,
            tag: w.tag,
            error: w.error,
            bytes_lo: w.bytes as u32 as i32,
            bytes_hi: (w.bytes >> 32) as u32 as i32,
            cancelled: w.cancelled,
            reserved: [0; 2],
        }
    }

    /// The status of a receive from `MPI_PROC_NULL` (MPI: source `MPI_PROC_NULL`, tag
    /// `MPI_ANY_TAG`, count 0).
    pub fn proc_null() -> Self {
        MpiStatus {
            source: MPI_PROC_NULL,
            tag: MPI_ANY_TAG,
            ..MpiStatus::default()
        }
    }

    /// The empty status (MPI's for a null or inactive request).
    pub fn empty() -> Self {
        MpiStatus {
            source: MPI_ANY_SOURCE,
            tag: MPI_ANY_TAG,
            ..MpiStatus::default()
        }
    }
}
