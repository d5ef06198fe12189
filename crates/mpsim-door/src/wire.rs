//! The calls a C rank makes through the door and the proxy's replies.
//!
//! Each crosses as a fixed head ([`CallHead`], [`ReplyHead`]: plain `repr(C)` values, copied
//! as bytes) and a payload: the data a send carries, the data a receive returns, a list of
//! requests, an error's text. What the head's argument words mean is the [`Op`]'s doc.
//! Datatypes never cross: the C library packs derived datatypes into bytes on its side, so the
//! proxy sees bytes and, for reductions, the element type ([`Elem`]) and operation
//! ([`ReduceOp`]).
//!
//! Calls that need no answer may be *queued* by the rank (in a simulated run, for a call whose
//! errors are fatal: a blocking or nonblocking send, a nonblocking receive, a request's free):
//! each is a [`CallHead`] and its payload, carried ahead of the head of the next call sent
//! ([`crate::channel::Channel::queue`]). The proxy executes them in order before that call, each
//! after charging its `cpu_ns`, and replies to that call only; an error in one ends the run as
//! that call's error.

use bytemuck::{Pod, Zeroable};

macro_rules! codes {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident = $n:expr,)* }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u32)]
        pub enum $name { $($(#[$vm])* $v = $n,)* }
        impl $name {
            /// The value of a code, if it is one.
            pub fn from_u32(n: u32) -> Option<Self> {
                match n { $($n => Some($name::$v),)* _ => None }
            }
            /// The name, as in the C API where it is one.
            pub fn name(self) -> &'static str {
                match self { $($name::$v => stringify!($v),)* }
            }
        }
    };
}

codes! {
    /// A call. Argument words `a[i]` of [`CallHead`]; `comm` is always `a[0]` where there is
    /// one; counts and lengths are in bytes of packed data unless said otherwise.
    Op {
        /// `MPI_Init`: reply `v = [rank, size, 1 if the run charges the rank's CPU time as its
        /// compute (else the rank need not measure it), 1 if the rank may queue the calls that
        /// need no answer (a simulated run)]`. `a[1]` = where the program's executable is
        /// loaded (run-time minus link-time addresses), for [`CallHead::site`].
        Init = 1,
        /// `MPI_Finalize`: `a = [MPI_COMM_WORLD, groups, datatypes, operations, requests]`,
        /// what the rank made and never freed (requests not in flight), for the checks.
        Finalize = 2,
        /// `MPI_Abort(comm, a[1] = code)`.
        Abort = 3,
        /// `MPI_Wtime`: reply `v[0]` = nanoseconds.
        Wtime = 4,
        /// An error the rank found itself (a bad handle, say) under `MPI_ERRORS_ARE_FATAL`:
        /// `a = [error class]`, payload the call's name, a NUL, then the text. The proxy
        /// ends the run with it; there is no reply.
        Fatal = 5,
        /// Blocking send: `a = [comm, dest, tag, mode]`, payload the data.
        Send = 10,
        /// Blocking receive: `a = [comm, source, tag, capacity]`; reply status, payload.
        Recv = 11,
        /// Nonblocking send: as `Send`, and `a[7]` = the request's id, chosen by the rank
        /// ([`RANK_IDS`]; 0 for one the proxy chooses); reply `v[0]` = request.
        Isend = 12,
        /// Nonblocking receive: as `Recv`, `a[7]` as `Isend`'s; reply `v[0]` = request.
        Irecv = 13,
        /// Wait on one request `a[1]`: reply status and payload (a receive's data).
        Wait = 14,
        /// Test one request `a[1]`: reply `v[0]` = flag, then as `Wait`.
        Test = 15,
        /// Wait on several: payload the request ids (`i64` each, 0 for a null one); reply
        /// payload: per request a [`WireStatus`], then the receives' data in order.
        Waitall = 16,
        /// As `Waitall`, reply `v[0]` = flag.
        Testall = 17,
        /// Reply `v[0]` = index or -1; status, payload.
        Waitany = 18,
        /// Reply `v[0]` = flag, `v[1]` = index or -1.
        Testany = 19,
        /// Reply `v[0]` = how many completed; payload per completed: index (`i64`), a
        /// [`WireStatus`], then their data in order.
        Waitsome = 20,
        /// As `Waitsome` (0 completed is possible).
        Testsome = 21,
        /// `MPI_Request_free(a[1])`.
        RequestFree = 22,
        /// `MPI_Cancel(a[1])`.
        Cancel = 23,
        /// Blocking probe `a = [comm, source, tag]`: reply status.
        Probe = 24,
        /// `a = [comm, source, tag]`: reply `v[0]` = flag, status.
        Iprobe = 25,
        /// Matched probe: reply status, `v[0]` = message id.
        Mprobe = 26,
        /// Reply `v[0]` = flag, `v[1]` = message id, status.
        Improbe = 27,
        /// Receive a matched message `a = [message, capacity]`: reply status and payload.
        Mrecv = 28,
        /// Nonblocking: reply `v[0]` = request.
        Imrecv = 29,
        /// `a = [comm, dest, sendtag, source, recvtag, capacity]`, payload the data sent;
        /// reply status and the data received.
        Sendrecv = 30,
        /// `MPI_Buffer_attach(a[0] = bytes)`.
        BufferAttach = 31,
        /// Reply `v[0]` = bytes of the buffer detached.
        BufferDetach = 32,
        /// `MPI_Isendrecv` on `comm` (`a[0]`): the send request `a[1]` and the receive
        /// request `a[2]` become one, the receive's id, complete when both are, with the
        /// receive's status.
        PairRequests = 33,
        /// `MPI_Comm_dup(comm)`: reply `v = [new comm, rank, size]`.
        CommDup = 40,
        /// `MPI_Comm_split(comm, a[1] = color or -1 undefined, a[2] = key)`: reply as dup,
        /// `v[0] = 0` for none.
        CommSplit = 41,
        /// `MPI_Comm_free(comm)`.
        CommFree = 42,
        /// The world ranks of `comm`'s members, in rank order: reply payload `u32` each.
        CommMembers = 43,
        /// `MPI_Comm_create_group(comm, group, a[1] = tag)`: payload the members, ranks of
        /// `comm` in new-rank order (`u32` each); reply as dup. Only the members call it.
        CommCreateGroup = 44,
        /// `a = [comm, 1 for errors-return / 0 for fatal]`.
        SetErrhandler = 45,
        /// An intercommunicator's point-to-point side (`Comm::intercomm`), made on `comm`
        /// (which holds both groups; every member calls it): `a[1]` = the local group's size,
        /// payload the local group's then the remote group's ranks of `comm` (`u32` each);
        /// reply as dup, its size the remote group's.
        CommInter = 46,
        /// `MPI_Barrier(comm)`.
        Barrier = 50,
        /// `a = [comm, root]`, payload the root's data; reply payload the data.
        Bcast = 51,
        /// `a = [comm, root, elem, op]`, payload the contribution; reply payload the result
        /// (root only).
        Reduce = 52,
        /// `a = [comm, elem, op]`.
        Allreduce = 53,
        /// `a = [comm, root, block bytes]`.
        Gather = 54,
        /// `a = [comm, root]`, payload the contribution then (root) the counts in bytes
        /// (`u64` each), `a[2]` = bytes of the contribution.
        Gatherv = 55,
        /// `a = [comm, root, block bytes]`, payload (root) the blocks.
        Scatter = 56,
        /// `a = [comm, root, recv bytes]`, payload (root) counts (`u64` each) then data.
        Scatterv = 57,
        /// `a = [comm]`, payload the block.
        Allgather = 58,
        /// `a = [comm, contribution bytes]`, payload the contribution then the counts.
        Allgatherv = 59,
        /// `a = [comm]`, payload the blocks.
        Alltoall = 60,
        /// `a = [comm, send bytes]`, payload send counts, receive counts (`u64` each), data.
        Alltoallv = 61,
        /// `a = [comm, elem, op]`, payload the counts (elements, `u64` each) then the data.
        ReduceScatter = 62,
        /// `a = [comm, elem, op]`, payload the data.
        ReduceScatterBlock = 63,
        /// `a = [comm, elem, op]`.
        Scan = 64,
        /// `a = [comm, elem, op]`.
        Exscan = 65,
        /// The nonblocking collectives: each takes its blocking form's arguments and payload
        /// ([`Op::nonblocking`] pairs them) and replies `v[0]` = the request; the wait that
        /// completes it returns the blocking form's reply payload (the status's `bytes` is its
        /// length).
        Ibarrier = 70,
        /// `MPI_Ibcast`, as [`Op::Bcast`].
        Ibcast = 71,
        /// `MPI_Ireduce`, as [`Op::Reduce`].
        Ireduce = 72,
        /// `MPI_Iallreduce`, as [`Op::Allreduce`].
        Iallreduce = 73,
        /// `MPI_Igather`, as [`Op::Gather`].
        Igather = 74,
        /// `MPI_Igatherv`, as [`Op::Gatherv`].
        Igatherv = 75,
        /// `MPI_Iscatter`, as [`Op::Scatter`].
        Iscatter = 76,
        /// `MPI_Iscatterv`, as [`Op::Scatterv`].
        Iscatterv = 77,
        /// `MPI_Iallgather`, as [`Op::Allgather`].
        Iallgather = 78,
        /// `MPI_Iallgatherv`, as [`Op::Allgatherv`].
        Iallgatherv = 79,
        /// `MPI_Ialltoall`, as [`Op::Alltoall`].
        Ialltoall = 80,
        /// `MPI_Ialltoallv`, as [`Op::Alltoallv`].
        Ialltoallv = 81,
        /// `MPI_Ireduce_scatter`, as [`Op::ReduceScatter`].
        IreduceScatter = 82,
        /// `MPI_Ireduce_scatter_block`, as [`Op::ReduceScatterBlock`].
        IreduceScatterBlock = 83,
        /// `MPI_Iscan`, as [`Op::Scan`].
        Iscan = 84,
        /// `MPI_Iexscan`, as [`Op::Exscan`].
        Iexscan = 85,
        /// `MPI_Reduce_local` with a predefined operation: a[1] element type, a[2] operation;
        /// the payload is `inbuf` then `inoutbuf` packed, the same length; the reply is the
        /// new `inoutbuf`. Local: nothing is sent and no time passes.
        ReduceLocal = 100,
    }
}

/// The collectives in their blocking and nonblocking forms, paired.
const COLLECTIVES: [(Op, Op); 16] = [
    (Op::Barrier, Op::Ibarrier),
    (Op::Bcast, Op::Ibcast),
    (Op::Reduce, Op::Ireduce),
    (Op::Allreduce, Op::Iallreduce),
    (Op::Gather, Op::Igather),
    (Op::Gatherv, Op::Igatherv),
    (Op::Scatter, Op::Iscatter),
    (Op::Scatterv, Op::Iscatterv),
    (Op::Allgather, Op::Iallgather),
    (Op::Allgatherv, Op::Iallgatherv),
    (Op::Alltoall, Op::Ialltoall),
    (Op::Alltoallv, Op::Ialltoallv),
    (Op::ReduceScatter, Op::IreduceScatter),
    (Op::ReduceScatterBlock, Op::IreduceScatterBlock),
    (Op::Scan, Op::Iscan),
    (Op::Exscan, Op::Iexscan),
];

impl Op {
    /// The nonblocking form of a blocking collective (`None` for any other call).
    pub fn nonblocking(self) -> Option<Op> {
        COLLECTIVES.iter().find(|p| p.0 == self).map(|p| p.1)
    }

    /// The blocking form of a nonblocking collective (`None` for any other call).
    pub fn blocking(self) -> Option<Op> {
        COLLECTIVES.iter().find(|p| p.1 == self).map(|p| p.0)
    }
}

codes! {
    /// A send's mode.
    SendMode {
        /// `MPI_Send`.
        Standard = 0,
        /// `MPI_Ssend`.
        Synchronous = 1,
        /// `MPI_Bsend`.
        Buffered = 2,
        /// `MPI_Rsend`.
        Ready = 3,
    }
}

codes! {
    /// The element type of a reduction (the C library knows it from the datatype).
    Elem {
        /// `signed char`, `int8_t`.
        I8 = 1,
        /// `unsigned char`, `uint8_t`, `MPI_BYTE`, `C_BOOL`.
        U8 = 2,
        /// `short`.
        I16 = 3,
        /// `unsigned short`.
        U16 = 4,
        /// `int`.
        I32 = 5,
        /// `unsigned`.
        U32 = 6,
        /// `long`, `long long`, `int64_t`, `MPI_AINT`, `MPI_COUNT`, `MPI_OFFSET`.
        I64 = 7,
        /// `unsigned long`, ...
        U64 = 8,
        /// `float`.
        F32 = 9,
        /// `double`.
        F64 = 10,
        /// `long double` (16 bytes; x86-64's 80-bit extended format).
        LongDouble = 11,
        /// `MPI_FLOAT_INT`: `{float, int}`.
        FloatInt = 20,
        /// `MPI_DOUBLE_INT`: `{double, int}` (16 bytes with padding).
        DoubleInt = 21,
        /// `MPI_LONG_INT`: `{long, int}` (16 bytes).
        LongInt = 22,
        /// `MPI_2INT`.
        TwoInt = 23,
        /// `MPI_SHORT_INT`: `{short, int}` (8 bytes).
        ShortInt = 24,
        /// `MPI_LONG_DOUBLE_INT`: `{long double, int}`, packed to 20 bytes.
        LongDoubleInt = 25,
    }
}

codes! {
    /// A built-in reduction.
    ReduceOp {
        /// `MPI_SUM`.
        Sum = 1,
        /// `MPI_PROD`.
        Prod = 2,
        /// `MPI_MIN`.
        Min = 3,
        /// `MPI_MAX`.
        Max = 4,
        /// `MPI_BAND`.
        Band = 5,
        /// `MPI_BOR`.
        Bor = 6,
        /// `MPI_BXOR`.
        Bxor = 7,
        /// `MPI_LAND`.
        Land = 8,
        /// `MPI_LOR`.
        Lor = 9,
        /// `MPI_LXOR`.
        Lxor = 10,
        /// `MPI_MINLOC`.
        Minloc = 11,
        /// `MPI_MAXLOC`.
        Maxloc = 12,
        /// `MPI_REPLACE`.
        Replace = 13,
        /// `MPI_NO_OP`.
        NoOp = 14,
    }
}

/// `MPI_ANY_SOURCE` as it crosses (the standard ABI's value).
pub const ANY_SOURCE: i32 = -1;
/// `MPI_PROC_NULL` as it crosses.
pub const PROC_NULL: i32 = -3;
/// `MPI_ANY_TAG` as it crosses.
pub const ANY_TAG: i32 = -2;

/// A status as it crosses.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct WireStatus {
    /// `MPI_SOURCE` (rank in the communicator, or the C library's `MPI_PROC_NULL`/...).
    pub source: i32,
    /// `MPI_TAG`.
    pub tag: i32,
    /// `MPI_ERROR`: the error class, 0 for success.
    pub error: i32,
    /// 1 when the request was cancelled.
    pub cancelled: i32,
    /// Bytes received.
    pub bytes: u64,
}

/// Request ids a rank chooses itself start here, far above the proxy's own: a queued call
/// (a call that needs no answer, carried by the next one) gets no reply to learn its id from.
pub const RANK_IDS: i64 = 1 << 48;

/// Argument words of a call.
pub const ARGS: usize = 8;

/// A call's head.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct CallHead {
    /// The [`Op`].
    pub op: u32,
    /// Reserved.
    pub flags: u32,
    /// Bytes of payload that follow.
    pub payload_len: u64,
    /// Nanoseconds of CPU time the rank spent since the previous call returned (its compute).
    pub cpu_ns: u64,
    /// The arguments, as the [`Op`] says.
    pub a: [i64; ARGS],
    /// Where the program made the call: the return address of its call into the library (0
    /// when not known). `MPI_Init`'s `a[1]` says where the program's executable is loaded, so
    /// the mpsim run can find the address in the file and name the source line.
    pub site: u64,
}

/// A reply's head.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct ReplyHead {
    /// 0 for success, else the MPI error class (the standard ABI's number); the payload is then
    /// the error's text.
    pub rc: i32,
    /// Reserved.
    pub flags: u32,
    /// Bytes of payload that follow.
    pub payload_len: u64,
    /// The status, for calls that give one.
    pub status: WireStatus,
    /// Values, as the [`Op`] says.
    pub v: [i64; 4],
}

/// The standard ABI's MPI error classes the proxy returns (`mpi.h` has all of them).
pub mod class {
    /// `MPI_SUCCESS`.
    pub const SUCCESS: i32 = 0;
    /// `MPI_ERR_BUFFER`.
    pub const BUFFER: i32 = 1;
    /// `MPI_ERR_COUNT`.
    pub const COUNT: i32 = 2;
    /// `MPI_ERR_TYPE`.
    pub const TYPE: i32 = 3;
    /// `MPI_ERR_TAG`.
    pub const TAG: i32 = 4;
    /// `MPI_ERR_COMM`.
    pub const COMM: i32 = 5;
    /// `MPI_ERR_RANK`.
    pub const RANK: i32 = 6;
    /// `MPI_ERR_REQUEST`.
    pub const REQUEST: i32 = 7;
    /// `MPI_ERR_ROOT`.
    pub const ROOT: i32 = 8;
    /// `MPI_ERR_GROUP`.
    pub const GROUP: i32 = 9;
    /// `MPI_ERR_OP`.
    pub const OP: i32 = 10;
    /// `MPI_ERR_TOPOLOGY`.
    pub const TOPOLOGY: i32 = 11;
    /// `MPI_ERR_DIMS`.
    pub const DIMS: i32 = 12;
    /// `MPI_ERR_ARG`.
    pub const ARG: i32 = 13;
    /// `MPI_ERR_UNKNOWN`.
    pub const UNKNOWN: i32 = 14;
    /// `MPI_ERR_TRUNCATE`.
    pub const TRUNCATE: i32 = 15;
    /// `MPI_ERR_OTHER`.
    pub const OTHER: i32 = 16;
    /// `MPI_ERR_INTERN`.
    pub const INTERN: i32 = 17;
    /// `MPI_ERR_PENDING`.
    pub const PENDING: i32 = 18;
    /// `MPI_ERR_IN_STATUS`.
    pub const IN_STATUS: i32 = 19;
    /// `MPI_ERR_INFO`.
    pub const INFO: i32 = 34;
    /// `MPI_ERR_NO_MEM`.
    pub const NO_MEM: i32 = 39;
    /// `MPI_ERR_PROC_ABORTED`.
    pub const PROC_ABORTED: i32 = 58;
    /// `MPI_ERR_UNSUPPORTED_OPERATION`.
    pub const UNSUPPORTED_OPERATION: i32 = 55;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Codes round-trip, and an unknown one is refused.
    #[test]
    fn codes_round_trip() {
        for op in [Op::Init, Op::Sendrecv, Op::Exscan] {
            assert_eq!(Op::from_u32(op as u32), Some(op));
        }
        assert_eq!(Op::from_u32(9999), None);
        assert_eq!(
            Elem::from_u32(Elem::DoubleInt as u32),
            Some(Elem::DoubleInt)
        );
        assert_eq!(ReduceOp::Maxloc.name(), "Maxloc");
        assert_eq!(Op::Allreduce.nonblocking(), Some(Op::Iallreduce));
        assert_eq!(Op::Iexscan.blocking(), Some(Op::Exscan));
        assert_eq!(Op::Send.nonblocking(), None);
        assert_eq!(Op::Ibarrier.nonblocking(), None);
    }
}
