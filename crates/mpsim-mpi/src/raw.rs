//! The MPI calls the backend makes, each a thin wrapper over the C function (`mpi::ffi`, the
//! system library's own), in one place: every `unsafe` block of the crate is here, with the
//! reason it is sound. Buffers handed to a nonblocking call are the caller's `Vec<u8>`, whose
//! heap storage does not move while the caller keeps the vector (the request table owns it
//! until the request completes).

use std::ffi::{c_int, c_void};
use std::mem::MaybeUninit;

use mpi::ffi;

pub use ffi::{MPI_Comm, MPI_Message, MPI_Request, MPI_Status};

/// The MPI error code of a failed call (its class and text by [`describe`]).
pub type Code = c_int;

/// `Ok` for `MPI_SUCCESS`, else the code.
fn check(code: c_int) -> Result<(), Code> {
    if code == ffi::MPI_SUCCESS as c_int {
        Ok(())
    } else {
        Err(code)
    }
}

/// The library's text for `code` (`MPI_Error_string`).
pub fn describe(code: Code) -> String {
    let mut text = vec![0 as std::ffi::c_char; ffi::MPI_MAX_ERROR_STRING as usize + 1];
    let mut len: c_int = 0;
    // SAFETY: `text` holds MPI_MAX_ERROR_STRING characters, as the call needs.
    let ok = unsafe { ffi::MPI_Error_string(code, text.as_mut_ptr(), &mut len) };
    if ok != ffi::MPI_SUCCESS as c_int {
        return format!("MPI error {code}");
    }
    let bytes: Vec<u8> = text[..len.max(0) as usize]
        .iter()
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The error class of `code` (`MPI_Error_class`).
pub fn class(code: Code) -> c_int {
    let mut class: c_int = 0;
    // SAFETY: plain out-parameter.
    unsafe { ffi::MPI_Error_class(code, &mut class) };
    class
}

/// `MPI_ERR_BUFFER`, `MPI_ERR_TRUNCATE`.
pub const ERR_BUFFER: c_int = ffi::MPI_ERR_BUFFER as c_int;
/// See [`ERR_BUFFER`].
pub const ERR_TRUNCATE: c_int = ffi::MPI_ERR_TRUNCATE as c_int;
const ERR_IN_STATUS: c_int = ffi::MPI_ERR_IN_STATUS as c_int;

/// The library's per-message overhead of a buffered send (`MPI_BSEND_OVERHEAD`).
pub const BSEND_OVERHEAD: usize = ffi::MPI_BSEND_OVERHEAD as usize;

fn byte() -> ffi::MPI_Datatype {
    // SAFETY: a constant the library defines, read after MPI_Init.
    unsafe { ffi::RSMPI_UINT8_T }
}

/// Makes the call `f` with a count and datatype that describe `len` bytes: `len` of `MPI_BYTE`
/// up to `i32::MAX` (every message but the largest: nothing more is done for them), else one
/// element of a derived type of `len` bytes ([`Large`], freed after the call).
#[inline(always)]
fn spanned(len: usize, f: impl FnOnce(c_int, ffi::MPI_Datatype) -> c_int) -> Result<(), Code> {
    match c_int::try_from(len) {
        Ok(n) => check(f(n, byte())),
        Err(_) => spanned_large(len, f),
    }
}

/// [`spanned`] beyond `i32::MAX` bytes.
#[cold]
#[inline(never)]
fn spanned_large(
    len: usize,
    f: impl FnOnce(c_int, ffi::MPI_Datatype) -> c_int,
) -> Result<(), Code> {
    let large = Large::new(len)?;
    check(f(1, large.0))
}

/// A committed datatype of more than `i32::MAX` contiguous bytes (MPI's counts are `int`, and
/// Open MPI 4.1 has no `_c` large-count calls): `q` blocks of [`LARGE_BLOCK`] bytes
/// (`MPI_Type_contiguous` twice) and, if the length is not a multiple, the rest after them as
/// bytes (`MPI_Type_create_struct`). Its signature is `len` bytes, so it matches `len` bytes
/// of `MPI_BYTE` (or a shorter message: a receive may take less than its buffer). Freed on
/// drop; MPI lets a datatype be freed while a call that uses it is in flight.
struct Large(ffi::MPI_Datatype);

/// The block of [`Large`]: 1 GiB.
const LARGE_BLOCK: usize = 1 << 30;

impl Large {
    fn new(len: usize) -> Result<Large, Code> {
        let count = |n: usize| c_int::try_from(n).map_err(|_| ffi::MPI_ERR_COUNT as c_int);
        let (q, rest) = (count(len / LARGE_BLOCK)?, count(len % LARGE_BLOCK)?);
        let made = |f: &mut dyn FnMut(*mut ffi::MPI_Datatype) -> c_int| {
            let mut t = MaybeUninit::<ffi::MPI_Datatype>::uninit();
            check(f(t.as_mut_ptr()))?;
            // SAFETY: written by the call on success.
            Ok::<_, Code>(unsafe { t.assume_init() })
        };
        // SAFETY (the constructors below): the library's datatypes, arrays of the count they
        // are given, out-parameters.
        let mut block =
            made(&mut |t| unsafe { ffi::MPI_Type_contiguous(LARGE_BLOCK as c_int, byte(), t) })?;
        let blocks = made(&mut |t| unsafe { ffi::MPI_Type_contiguous(q, block, t) });
        // SAFETY: a datatype this function made; `blocks` (if made) keeps what it needs.
        unsafe { ffi::MPI_Type_free(&mut block) };
        let mut blocks = blocks?;
        let mut whole = if rest == 0 {
            blocks
        } else {
            let lens = [1, rest];
            let displs = [0, (len - len % LARGE_BLOCK) as ffi::MPI_Aint];
            let types = [blocks, byte()];
            let whole = made(&mut |t| unsafe {
                ffi::MPI_Type_create_struct(2, lens.as_ptr(), displs.as_ptr(), types.as_ptr(), t)
            });
            // SAFETY: as `block`.
            unsafe { ffi::MPI_Type_free(&mut blocks) };
            whole?
        };
        // SAFETY: a datatype this function made.
        if let Err(code) = check(unsafe { ffi::MPI_Type_commit(&mut whole) }) {
            // SAFETY: as `block`.
            unsafe { ffi::MPI_Type_free(&mut whole) };
            return Err(code);
        }
        Ok(Large(whole))
    }
}

impl Drop for Large {
    fn drop(&mut self) {
        // SAFETY: a datatype `Large::new` made and committed, not used after.
        unsafe { ffi::MPI_Type_free(&mut self.0) };
    }
}

/// `MPI_ANY_SOURCE`, `MPI_ANY_TAG`.
pub fn any_source() -> c_int {
    // SAFETY: as `byte`.
    unsafe { ffi::RSMPI_ANY_SOURCE }
}

/// See [`any_source`].
pub fn any_tag() -> c_int {
    // SAFETY: as `byte`.
    unsafe { ffi::RSMPI_ANY_TAG }
}

/// `MPI_COMM_WORLD`.
pub fn comm_world() -> MPI_Comm {
    // SAFETY: as `byte`.
    unsafe { ffi::RSMPI_COMM_WORLD }
}

/// `MPI_REQUEST_NULL`.
pub fn request_null() -> MPI_Request {
    // SAFETY: as `byte`.
    unsafe { ffi::RSMPI_REQUEST_NULL }
}

/// An empty status, to be filled by a call.
pub fn empty_status() -> MPI_Status {
    // SAFETY: MPI_Status is plain C data (integers); all zeros is a valid value.
    unsafe { MaybeUninit::zeroed().assume_init() }
}

/// A new communicator with the group of `comm` and its own matching context
/// (`MPI_Comm_dup`), whose errors are returned to the caller (`MPI_ERRORS_RETURN`) rather
/// than end the process. Collective over `comm`.
pub fn dup(comm: MPI_Comm) -> Result<MPI_Comm, Code> {
    let mut new = MaybeUninit::<MPI_Comm>::uninit();
    // SAFETY: out-parameter written by the call on success.
    check(unsafe { ffi::MPI_Comm_dup(comm, new.as_mut_ptr()) })?;
    // SAFETY: written above.
    let new = unsafe { new.assume_init() };
    // SAFETY: a valid communicator and the library's handler.
    check(unsafe { ffi::MPI_Comm_set_errhandler(new, ffi::RSMPI_ERRORS_RETURN) })?;
    Ok(new)
}

/// Rank and size of `comm`.
pub fn rank_size(comm: MPI_Comm) -> (u32, u32) {
    let (mut rank, mut size): (c_int, c_int) = (0, 0);
    // SAFETY: out-parameters.
    unsafe {
        ffi::MPI_Comm_rank(comm, &mut rank);
        ffi::MPI_Comm_size(comm, &mut size);
    }
    (rank as u32, size as u32)
}

/// The four ways to start a send.
#[derive(Clone, Copy, Debug)]
pub enum Mode {
    /// `MPI_Isend`.
    Standard,
    /// `MPI_Issend`.
    Synchronous,
    /// `MPI_Ibsend`.
    Buffered,
    /// `MPI_Irsend`.
    Ready,
}

/// Starts a send of `buf` to `dest` with `tag` on `comm` in `mode`. `buf` must stay where it
/// is until the request completes (the caller keeps the vector).
pub fn isend(
    mode: Mode,
    buf: &[u8],
    dest: u32,
    tag: i32,
    comm: MPI_Comm,
) -> Result<MPI_Request, Code> {
    let mut req = request_null();
    let f = match mode {
        Mode::Standard => ffi::MPI_Isend,
        Mode::Synchronous => ffi::MPI_Issend,
        Mode::Buffered => ffi::MPI_Ibsend,
        Mode::Ready => ffi::MPI_Irsend,
    };
    // SAFETY: `buf` is valid for `count` elements of `ty` (its length in bytes), and the
    // caller keeps it in place until the request completes; `req` is an out-parameter.
    spanned(buf.len(), |count, ty| unsafe {
        f(
            buf.as_ptr().cast::<c_void>(),
            count,
            ty,
            dest as c_int,
            tag,
            comm,
            &mut req,
        )
    })?;
    Ok(req)
}

/// Starts a receive into `buf` from `source` (or [`any_source`]) with `tag` (or [`any_tag`])
/// on `comm`. `buf` must stay where it is until the request completes; MPI writes the bytes the
/// status counts (the receives' buffers are not zeroed first).
pub fn irecv(
    buf: &mut [MaybeUninit<u8>],
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> Result<MPI_Request, Code> {
    let mut req = request_null();
    let len = buf.len();
    // SAFETY: as `isend`, the buffer writable.
    spanned(len, |count, ty| unsafe {
        ffi::MPI_Irecv(
            buf.as_mut_ptr().cast::<c_void>(),
            count,
            ty,
            source,
            tag,
            comm,
            &mut req,
        )
    })?;
    Ok(req)
}

/// Starts the receive of a message a matched probe took into `buf` (`MPI_Imrecv`).
pub fn imrecv(buf: &mut [MaybeUninit<u8>], message: &mut MPI_Message) -> Result<MPI_Request, Code> {
    let mut req = request_null();
    let len = buf.len();
    // SAFETY: as `irecv`; `message` is a handle from `improbe`.
    spanned(len, |count, ty| unsafe {
        ffi::MPI_Imrecv(
            buf.as_mut_ptr().cast::<c_void>(),
            count,
            ty,
            message,
            &mut req,
        )
    })?;
    Ok(req)
}

/// Receives a message a matched probe took into `buf` at once (`MPI_Mrecv`).
pub fn mrecv(buf: &mut [MaybeUninit<u8>], message: &mut MPI_Message) -> Result<MPI_Status, Code> {
    let mut status = empty_status();
    let len = buf.len();
    // SAFETY: `buf` valid for `count` elements of `ty` (its length in bytes) for the duration
    // of this blocking call.
    spanned(len, |count, ty| unsafe {
        ffi::MPI_Mrecv(
            buf.as_mut_ptr().cast::<c_void>(),
            count,
            ty,
            message,
            &mut status,
        )
    })?;
    Ok(status)
}

/// A message from `source` with `tag` on `comm`, if one has arrived: its status, and when
/// `take` (`MPI_Improbe`) the message, which no other receive can match any more.
pub fn probe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    take: bool,
) -> Result<Option<(MPI_Status, Option<MPI_Message>)>, Code> {
    let mut flag: c_int = 0;
    let mut status = empty_status();
    if take {
        let mut message = MaybeUninit::<MPI_Message>::uninit();
        // SAFETY: out-parameters.
        check(unsafe {
            ffi::MPI_Improbe(
                source,
                tag,
                comm,
                &mut flag,
                message.as_mut_ptr(),
                &mut status,
            )
        })?;
        // SAFETY: the message is written when the flag is set.
        Ok((flag != 0).then(|| (status, Some(unsafe { message.assume_init() }))))
    } else {
        // SAFETY: out-parameters.
        check(unsafe { ffi::MPI_Iprobe(source, tag, comm, &mut flag, &mut status) })?;
        Ok((flag != 0).then_some((status, None)))
    }
}

/// The bytes a status counts (`MPI_Get_count` in bytes; beyond `i32::MAX`, which it cannot
/// say, `MPI_Get_elements_x` in bytes, whose count is 64-bit).
pub fn count(status: &MPI_Status) -> usize {
    let mut n: c_int = 0;
    // SAFETY: a status the library filled.
    unsafe { ffi::MPI_Get_count(status, byte(), &mut n) };
    if n >= 0 {
        return n as usize;
    }
    let mut big: ffi::MPI_Count = 0;
    // SAFETY: as above.
    unsafe { ffi::MPI_Get_elements_x(status, byte(), &mut big) };
    usize::try_from(big).unwrap_or(0)
}

/// Whether a completed request was cancelled (`MPI_Test_cancelled`).
pub fn cancelled(status: &MPI_Status) -> bool {
    let mut flag: c_int = 0;
    // SAFETY: a status the library filled.
    unsafe { ffi::MPI_Test_cancelled(status, &mut flag) };
    flag != 0
}

/// Asks to cancel `req` (`MPI_Cancel`); it completes as the library decides.
pub fn cancel(req: &mut MPI_Request) -> Result<(), Code> {
    // SAFETY: an active request of this process.
    check(unsafe { ffi::MPI_Cancel(req) })
}

/// Of `reqs`, those complete now (`MPI_Testsome`): their indices in `done`, with their
/// statuses and, for each, the request's own error code (0 for none). Completed entries of
/// `reqs` become `MPI_REQUEST_NULL`.
pub fn testsome(
    reqs: &mut [MPI_Request],
    done: &mut Vec<(usize, MPI_Status, Code)>,
) -> Result<(), Code> {
    done.clear();
    if reqs.is_empty() {
        return Ok(());
    }
    let n = reqs.len();
    let mut outcount: c_int = 0;
    // Small arrays on the stack: the usual wait has a request or two in flight (one alone
    // costs no array of eight to clear).
    let (mut one_idx, mut one_st) = ([0 as c_int; 1], [empty_status(); 1]);
    let (mut small_idx, mut small_st);
    let (mut big_idx, mut big_st) = (Vec::new(), Vec::new());
    let (indices, statuses): (&mut [c_int], &mut [MPI_Status]) = if n == 1 {
        (&mut one_idx, &mut one_st)
    } else if n <= 8 {
        (small_idx, small_st) = ([0 as c_int; 8], [empty_status(); 8]);
        (&mut small_idx[..n], &mut small_st[..n])
    } else {
        big_idx.resize(n, 0);
        big_st.resize(n, empty_status());
        (&mut big_idx, &mut big_st)
    };
    // SAFETY: arrays of `n` entries each; the requests are active requests of this process or
    // null.
    let code = unsafe {
        ffi::MPI_Testsome(
            n as c_int,
            reqs.as_mut_ptr(),
            &mut outcount,
            indices.as_mut_ptr(),
            statuses.as_mut_ptr(),
        )
    };
    let in_status = code == ERR_IN_STATUS;
    if !in_status {
        check(code)?;
    }
    for k in 0..outcount.max(0) as usize {
        let status = statuses[k];
        let error = if in_status { status.MPI_ERROR } else { 0 };
        done.push((indices[k] as usize, status, error));
    }
    Ok(())
}

/// Attaches `buf` for buffered sends (`MPI_Buffer_attach`); it must stay in place until
/// [`buffer_detach`].
pub fn buffer_attach(buf: &mut [u8]) -> Result<(), Code> {
    let size = c_int::try_from(buf.len()).map_err(|_| ffi::MPI_ERR_BUFFER as c_int)?;
    // SAFETY: `buf` valid for `size` bytes until the detach, which the caller makes before it
    // drops the buffer.
    check(unsafe { ffi::MPI_Buffer_attach(buf.as_mut_ptr().cast::<c_void>(), size) })
}

/// Detaches the attached buffer, once the library has delivered the messages it holds
/// (`MPI_Buffer_detach`, which blocks until then).
pub fn buffer_detach() -> Result<(), Code> {
    let mut addr: *mut c_void = std::ptr::null_mut();
    let mut size: c_int = 0;
    // SAFETY: out-parameters (the buffer's address and size).
    check(unsafe { ffi::MPI_Buffer_detach((&mut addr as *mut *mut c_void).cast(), &mut size) })
}

/// Waits until every process of `comm` calls it (`MPI_Barrier`).
pub fn barrier(comm: MPI_Comm) -> Result<(), Code> {
    // SAFETY: a valid communicator.
    check(unsafe { ffi::MPI_Barrier(comm) })
}

/// Ends every process of the job with `code` (`MPI_Abort`).
pub fn abort(code: i32) -> ! {
    // SAFETY: ends the job; nothing of this process runs after it.
    unsafe { ffi::MPI_Abort(comm_world(), code) };
    std::process::exit(if code == 0 { 1 } else { code })
}

/// Gathers `mine` from every process of `comm` at rank 0 (`MPI_Gather` then `MPI_Gatherv`
/// of the lengths and bytes): every rank's bytes in rank order at rank 0, nothing elsewhere.
pub fn gather_bytes(mine: &[u8], comm: MPI_Comm) -> Result<Option<Vec<Vec<u8>>>, Code> {
    let (rank, size) = rank_size(comm);
    let len = c_int::try_from(mine.len()).map_err(|_| ffi::MPI_ERR_COUNT as c_int)?;
    let mut lens = vec![0 as c_int; if rank == 0 { size as usize } else { 0 }];
    // SAFETY: one int sent, `size` ints received at the root.
    check(unsafe {
        ffi::MPI_Gather(
            (&len as *const c_int).cast(),
            1,
            ffi::RSMPI_INT32_T,
            lens.as_mut_ptr().cast(),
            1,
            ffi::RSMPI_INT32_T,
            0,
            comm,
        )
    })?;
    let mut displs = Vec::with_capacity(lens.len());
    let mut total: c_int = 0;
    for &l in &lens {
        displs.push(total);
        total = total.checked_add(l).ok_or(ffi::MPI_ERR_COUNT as c_int)?;
    }
    let mut all = vec![0u8; total as usize];
    // SAFETY: `mine` valid for `len` bytes; at the root `all` holds the sum of the lengths at
    // their displacements.
    check(unsafe {
        ffi::MPI_Gatherv(
            mine.as_ptr().cast(),
            len,
            byte(),
            all.as_mut_ptr().cast(),
            lens.as_ptr(),
            displs.as_ptr(),
            byte(),
            0,
            comm,
        )
    })?;
    if rank != 0 {
        return Ok(None);
    }
    Ok(Some(
        lens.iter()
            .zip(&displs)
            .map(|(&l, &d)| all[d as usize..(d + l) as usize].to_vec())
            .collect(),
    ))
}

/// The number of processes of `comm` on this node (`MPI_Comm_split_type` by shared memory).
pub fn node_size(comm: MPI_Comm) -> Result<u32, Code> {
    let mut node = MaybeUninit::<MPI_Comm>::uninit();
    // SAFETY: a valid communicator, the library's constants, an out-parameter.
    check(unsafe {
        ffi::MPI_Comm_split_type(
            comm,
            ffi::RSMPI_COMM_TYPE_SHARED,
            0,
            ffi::RSMPI_INFO_NULL,
            node.as_mut_ptr(),
        )
    })?;
    // SAFETY: written above.
    let mut node = unsafe { node.assume_init() };
    let (_, size) = rank_size(node);
    // SAFETY: a communicator this function made.
    unsafe { ffi::MPI_Comm_free(&mut node) };
    Ok(size)
}

/// Frees a communicator [`dup`] made (`MPI_Comm_free`).
pub fn free(comm: &mut MPI_Comm) {
    // SAFETY: a communicator of this process, not used after.
    unsafe { ffi::MPI_Comm_free(comm) };
}

/// Starts the sum over every process of `comm` of `mine` into `sum` (`MPI_Iallreduce` of
/// 64-bit unsigned integers). Both arrays must stay in place, unread and unwritten, until
/// [`test`] says the request is complete.
pub fn iallreduce_sum(mine: &[u64], sum: &mut [u64], comm: MPI_Comm) -> Result<MPI_Request, Code> {
    debug_assert_eq!(mine.len(), sum.len());
    let mut req = request_null();
    // SAFETY: both arrays hold `len` integers and stay in place until the request completes
    // (the caller's promise); the datatype and operation are the library's constants.
    check(unsafe {
        ffi::MPI_Iallreduce(
            mine.as_ptr().cast(),
            sum.as_mut_ptr().cast(),
            mine.len() as c_int,
            ffi::RSMPI_UINT64_T,
            ffi::RSMPI_SUM,
            comm,
            &mut req,
        )
    })?;
    Ok(req)
}

/// Whether `req` is complete, leaving it as it is (`MPI_Request_get_status`: the library
/// progresses once when it is not; a later test completes it).
pub fn is_complete(req: MPI_Request) -> Result<bool, Code> {
    let mut flag: c_int = 0;
    let mut status = empty_status();
    // SAFETY: an active request of this process; out-parameters.
    check(unsafe { ffi::MPI_Request_get_status(req, &mut flag, &mut status) })?;
    Ok(flag != 0)
}

/// Whether `req` is complete (`MPI_Test`); a complete request becomes `MPI_REQUEST_NULL`.
pub fn test(req: &mut MPI_Request) -> Result<bool, Code> {
    let mut flag: c_int = 0;
    let mut status = empty_status();
    // SAFETY: an active request of this process; out-parameters.
    check(unsafe { ffi::MPI_Test(req, &mut flag, &mut status) })?;
    Ok(flag != 0)
}

/// A communicator of the processes `ranks` of `base` (their ranks in `base`, in the new
/// communicator's order), made by them alone (`MPI_Comm_create_group` with `tag`), its errors
/// returned. Collective over those processes only.
pub fn create_group(base: MPI_Comm, ranks: &[c_int], tag: c_int) -> Result<MPI_Comm, Code> {
    let n = c_int::try_from(ranks.len()).map_err(|_| ffi::MPI_ERR_COUNT as c_int)?;
    let mut whole = MaybeUninit::<ffi::MPI_Group>::uninit();
    // SAFETY: a valid communicator; out-parameter.
    check(unsafe { ffi::MPI_Comm_group(base, whole.as_mut_ptr()) })?;
    // SAFETY: written above.
    let mut whole = unsafe { whole.assume_init() };
    let mut part = MaybeUninit::<ffi::MPI_Group>::uninit();
    // SAFETY: `ranks` holds `n` ranks of the group; out-parameter.
    let made = check(unsafe { ffi::MPI_Group_incl(whole, n, ranks.as_ptr(), part.as_mut_ptr()) });
    // SAFETY: a group this function made.
    unsafe { ffi::MPI_Group_free(&mut whole) };
    made?;
    // SAFETY: written above.
    let mut part = unsafe { part.assume_init() };
    let mut new = MaybeUninit::<MPI_Comm>::uninit();
    // SAFETY: a valid communicator and group; out-parameter.
    let made = check(unsafe { ffi::MPI_Comm_create_group(base, part, tag, new.as_mut_ptr()) });
    // SAFETY: a group this function made.
    unsafe { ffi::MPI_Group_free(&mut part) };
    made?;
    // SAFETY: written above.
    let new = unsafe { new.assume_init() };
    // SAFETY: a valid communicator and the library's handler.
    check(unsafe { ffi::MPI_Comm_set_errhandler(new, ffi::RSMPI_ERRORS_RETURN) })?;
    Ok(new)
}

/// An element type of a reduction, as the library names it.
pub fn datatype(elem: mpsim_proto::runtime::Elem) -> ffi::MPI_Datatype {
    use mpsim_proto::runtime::Elem;
    // SAFETY: constants the library defines, read after MPI_Init.
    unsafe {
        match elem {
            Elem::I8 => ffi::RSMPI_INT8_T,
            Elem::I16 => ffi::RSMPI_INT16_T,
            Elem::I32 => ffi::RSMPI_INT32_T,
            Elem::I64 => ffi::RSMPI_INT64_T,
            Elem::U8 => ffi::RSMPI_UINT8_T,
            Elem::U16 => ffi::RSMPI_UINT16_T,
            Elem::U32 => ffi::RSMPI_UINT32_T,
            Elem::U64 => ffi::RSMPI_UINT64_T,
            Elem::F32 => ffi::RSMPI_FLOAT,
            Elem::F64 => ffi::RSMPI_DOUBLE,
        }
    }
}

/// A built-in reduction, as the library names it.
pub fn operation(op: mpsim_proto::runtime::ReduceOp) -> ffi::MPI_Op {
    use mpsim_proto::runtime::ReduceOp;
    // SAFETY: as `datatype`.
    unsafe {
        match op {
            ReduceOp::Sum => ffi::RSMPI_SUM,
            ReduceOp::Prod => ffi::RSMPI_PROD,
            ReduceOp::Min => ffi::RSMPI_MIN,
            ReduceOp::Max => ffi::RSMPI_MAX,
            ReduceOp::Band => ffi::RSMPI_BAND,
            ReduceOp::Bor => ffi::RSMPI_BOR,
            ReduceOp::Bxor => ffi::RSMPI_BXOR,
            ReduceOp::Land => ffi::RSMPI_LAND,
            ReduceOp::Lor => ffi::RSMPI_LOR,
            ReduceOp::Lxor => ffi::RSMPI_LXOR,
        }
    }
}

/// The bytes of one element of `elem`.
pub fn elem_bytes(elem: mpsim_proto::runtime::Elem) -> usize {
    use mpsim_proto::runtime::Elem;
    match elem {
        Elem::I8 | Elem::U8 => 1,
        Elem::I16 | Elem::U16 => 2,
        Elem::I32 | Elem::U32 | Elem::F32 => 4,
        Elem::I64 | Elem::U64 | Elem::F64 => 8,
    }
}

/// A nonblocking collective of the library, with its arguments: what [`icoll`] starts.
#[derive(Debug)]
pub enum Coll {
    Barrier,
    Bcast {
        count: c_int,
        root: c_int,
    },
    Reduce {
        count: c_int,
        ty: ffi::MPI_Datatype,
        op: ffi::MPI_Op,
        root: c_int,
    },
    Allreduce {
        count: c_int,
        ty: ffi::MPI_Datatype,
        op: ffi::MPI_Op,
    },
    Scan {
        count: c_int,
        ty: ffi::MPI_Datatype,
        op: ffi::MPI_Op,
    },
    Exscan {
        count: c_int,
        ty: ffi::MPI_Datatype,
        op: ffi::MPI_Op,
    },
    /// Bytes per rank.
    Gather {
        block: c_int,
        root: c_int,
    },
    Scatter {
        block: c_int,
        root: c_int,
    },
    Allgather {
        block: c_int,
    },
    Alltoall {
        block: c_int,
    },
    /// Bytes from each rank and where they go in the root's `recv` (the root's; empty
    /// elsewhere), this rank's bytes.
    Gatherv {
        counts: Vec<c_int>,
        displs: Vec<c_int>,
        mine: c_int,
        root: c_int,
    },
    /// Bytes to each rank and where they are in the root's `send` (the root's; empty
    /// elsewhere), this rank's bytes.
    Scatterv {
        counts: Vec<c_int>,
        displs: Vec<c_int>,
        mine: c_int,
        root: c_int,
    },
    Allgatherv {
        counts: Vec<c_int>,
        displs: Vec<c_int>,
        mine: c_int,
    },
    Alltoallv {
        send_counts: Vec<c_int>,
        send_displs: Vec<c_int>,
        recv_counts: Vec<c_int>,
        recv_displs: Vec<c_int>,
    },
    /// Elements of `ty` each rank gets.
    ReduceScatter {
        counts: Vec<c_int>,
        ty: ffi::MPI_Datatype,
        op: ffi::MPI_Op,
    },
    ReduceScatterBlock {
        count: c_int,
        ty: ffi::MPI_Datatype,
        op: ffi::MPI_Op,
    },
}

/// Starts `coll` on `comm` reading `send` and writing `recv` (`MPI_Ibarrier`, `MPI_Ibcast` on
/// `recv`, `MPI_Ireduce`, ...). Both, and `coll`'s arrays of counts and displacements (MPI
/// reads them while the collective runs), must stay where they are until the request
/// completes (the caller keeps them), and be as long as `coll` says (the caller's checks).
pub fn icoll(
    coll: &Coll,
    send: &[u8],
    recv: &mut [u8],
    comm: MPI_Comm,
) -> Result<MPI_Request, Code> {
    let mut req = request_null();
    // An empty vector's address is 1, which is Open MPI's `MPI_IN_PLACE`: an empty buffer
    // (a rank with no block) is handed over at another address, never read nor written.
    let nowhere = std::ptr::NonNull::<u64>::dangling()
        .as_ptr()
        .cast::<c_void>();
    let s = if send.is_empty() {
        nowhere
    } else {
        send.as_ptr().cast::<c_void>()
    };
    let r = if recv.is_empty() {
        nowhere
    } else {
        recv.as_mut_ptr().cast::<c_void>()
    };
    let b = byte();
    // SAFETY: the buffers are valid for the counts the caller checked, and stay in place until
    // the request completes; `req` is an out-parameter.
    let code = unsafe {
        match *coll {
            Coll::Barrier => ffi::MPI_Ibarrier(comm, &mut req),
            Coll::Bcast { count, root } => ffi::MPI_Ibcast(r, count, b, root, comm, &mut req),
            Coll::Reduce {
                count,
                ty,
                op,
                root,
            } => ffi::MPI_Ireduce(s, r, count, ty, op, root, comm, &mut req),
            Coll::Allreduce { count, ty, op } => {
                ffi::MPI_Iallreduce(s, r, count, ty, op, comm, &mut req)
            }
            Coll::Scan { count, ty, op } => ffi::MPI_Iscan(s, r, count, ty, op, comm, &mut req),
            Coll::Exscan { count, ty, op } => ffi::MPI_Iexscan(s, r, count, ty, op, comm, &mut req),
            Coll::Gather { block, root } => {
                ffi::MPI_Igather(s, block, b, r, block, b, root, comm, &mut req)
            }
            Coll::Scatter { block, root } => {
                ffi::MPI_Iscatter(s, block, b, r, block, b, root, comm, &mut req)
            }
            Coll::Allgather { block } => {
                ffi::MPI_Iallgather(s, block, b, r, block, b, comm, &mut req)
            }
            Coll::Alltoall { block } => {
                ffi::MPI_Ialltoall(s, block, b, r, block, b, comm, &mut req)
            }
            Coll::Gatherv {
                ref counts,
                ref displs,
                mine,
                root,
            } => ffi::MPI_Igatherv(
                s,
                mine,
                b,
                r,
                counts.as_ptr(),
                displs.as_ptr(),
                b,
                root,
                comm,
                &mut req,
            ),
            Coll::Scatterv {
                ref counts,
                ref displs,
                mine,
                root,
            } => ffi::MPI_Iscatterv(
                s,
                counts.as_ptr(),
                displs.as_ptr(),
                b,
                r,
                mine,
                b,
                root,
                comm,
                &mut req,
            ),
            Coll::Allgatherv {
                ref counts,
                ref displs,
                mine,
            } => ffi::MPI_Iallgatherv(
                s,
                mine,
                b,
                r,
                counts.as_ptr(),
                displs.as_ptr(),
                b,
                comm,
                &mut req,
            ),
            Coll::Alltoallv {
                ref send_counts,
                ref send_displs,
                ref recv_counts,
                ref recv_displs,
            } => ffi::MPI_Ialltoallv(
                s,
                send_counts.as_ptr(),
                send_displs.as_ptr(),
                b,
                r,
                recv_counts.as_ptr(),
                recv_displs.as_ptr(),
                b,
                comm,
                &mut req,
            ),
            Coll::ReduceScatter { ref counts, ty, op } => {
                ffi::MPI_Ireduce_scatter(s, r, counts.as_ptr(), ty, op, comm, &mut req)
            }
            Coll::ReduceScatterBlock { count, ty, op } => {
                ffi::MPI_Ireduce_scatter_block(s, r, count, ty, op, comm, &mut req)
            }
        }
    };
    check(code)?;
    Ok(req)
}
