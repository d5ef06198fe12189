//! One rank's proxy: a future, run by the mpsim run like any rank's program, that takes the C
//! rank's calls from the door one by one and executes each with `Comm`.
//!
//! In a simulated run the kernel polls one rank at a time; while this proxy waits for its
//! rank's next call, the kernel thread waits with it (the rank's process runs, the others and
//! the kernel do not), so a C run is as deterministic as a Rust one: the order of events
//! depends only on virtual time. The rank's CPU time between two calls is its measured compute
//! (`--compute measured`, the default for C), charged before its next call.
//!
//! Requests the rank makes are held here (the C side has only their ids), with the buffers of
//! receives, whose data goes back with the wait that completes them.

use std::sync::Arc;
use std::time::Duration;

use bytemuck::Zeroable;
use mpsim::{Comm, Error, Message, Request, Result, SendMode, Source, Status, Tag};
use mpsim_door::channel::{Channel, Gone};
use mpsim_door::check::{self, Coll, Record, Sig};
use mpsim_door::segment::{Segment, end};
use mpsim_door::wire::{self, CallHead, Op, ReplyHead, WireStatus};

use crate::reduce;

/// The proxy's tables are keyed by handles and ids the program and the library choose: a fast
/// hash, and the same iteration order every run.
type HashMap<K, V> = rustc_hash::FxHashMap<K, V>;

/// A request of the rank's: a send's, a receive's or a nonblocking collective's, with the
/// buffer its request borrows (fields drop in order: the request first, never outliving the
/// buffer).
pub(crate) struct Held {
    pub req: Option<Request<'static>>,
    pub buf: Option<Buf>,
    /// A nonblocking collective's: its whole buffer is the result (a receive's is cut to the
    /// bytes received).
    pub coll: bool,
    /// A receive's: what the type checks need when it completes.
    pub check: Option<crate::checks::RecvCheck>,
    /// An `MPI_Isendrecv`'s: the other half of the request.
    pub pair: Option<Pair>,
}

/// The other half of an `MPI_Isendrecv` request, whose [`Held::req`] is the receive until it
/// completes, then the send.
pub(crate) enum Pair {
    /// The send, beside the receive in `req`.
    Send(Request<'static>),
    /// The receive completed with this status (its data in `buf`); `req` is the send.
    Received(Status),
}

/// A request's buffer, aligned for any element type a reduction works on (8 bytes), so a
/// typed collective can borrow it as `[T]`; its heap memory never moves.
pub(crate) struct Buf {
    words: Box<[u64]>,
    len: usize,
}

impl Buf {
    /// `len` zero bytes.
    pub fn zeroed(len: usize) -> Buf {
        Buf {
            words: vec![0u64; len.div_ceil(8)].into_boxed_slice(),
            len,
        }
    }

    /// A copy of `bytes`.
    pub fn of(bytes: &[u8]) -> Buf {
        let mut b = Buf::zeroed(bytes.len());
        b.bytes_mut().copy_from_slice(bytes);
        b
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut::<u64, u8>(&mut self.words)[..self.len]
    }

    /// The buffer as `[T]` (`len / size_of::<T>()` elements), for a request to borrow.
    ///
    /// # Safety
    /// The caller keeps the view no longer than the buffer (a [`Held`] drops its request
    /// first) and uses the buffer through nothing else meanwhile.
    pub unsafe fn view<T: bytemuck::Pod>(&mut self) -> &'static mut [T] {
        let n = self.len / std::mem::size_of::<T>().max(1);
        let whole = n * std::mem::size_of::<T>();
        let typed: &mut [T] = bytemuck::cast_slice_mut(&mut self.bytes_mut()[..whole]);
        // SAFETY: as the caller promises; the boxed words never move.
        unsafe { &mut *(typed as *mut [T]) }
    }

    /// Its first `upto` bytes.
    pub fn into_vec(mut self, upto: usize) -> Vec<u8> {
        let n = upto.min(self.len);
        self.bytes_mut()[..n].to_vec()
    }
}

/// A communicator of the rank's, and whether its errors return to the rank.
pub(crate) struct HeldComm {
    pub comm: Comm,
    pub errors_return: bool,
}

/// The proxy's state for one rank.
pub(crate) struct Proxy<'s> {
    pub channel: Channel<'s>,
    pub world: Comm,
    pub comms: HashMap<i64, HeldComm>,
    pub requests: HashMap<i64, Held>,
    /// Receives the rank freed while active (`MPI_Request_free`): their buffers live on until
    /// the end, as MPI lets them complete on their own.
    pub freed: Vec<Held>,
    pub messages: HashMap<i64, Message>,
    pub next_id: i64,
    pub charge_compute: bool,
    /// The rank may queue calls that need no answer (a simulated run: `wire`'s doc).
    pub queue_calls: bool,
    pub last_call: &'static str,
    /// The return address in the program of the call being executed (`crate::site`).
    pub site: u64,
    pub initialized: bool,
    zygote: i32,
    /// The run's checks, shared by all proxies.
    pub checks: &'s crate::checks::Checks,
    /// Collectives this rank made so far, per communicator (by `Comm::id`).
    pub coll_seq: HashMap<u64, u64>,
    /// Receives this rank posted so far (their order, for the type checks).
    pub recv_seq: u64,
    /// The last point-to-point check record decoded, as its bytes and its signature: a rank
    /// sends the same one again and again ([`Proxy::take_record`]).
    last_sig: Option<(Vec<u8>, Arc<Sig>)>,
    /// A buffer kept from the last answer's payload, for the next receive's data
    /// ([`Proxy::buffer`]), when at most [`KEPT_BUFFER`] bytes.
    spare: Vec<u8>,
}

/// The largest buffer a proxy keeps between calls (`Proxy::spare`, and the payloads of the
/// rank's calls, three in all): small, so that a run of many ranks holds at most 3 KiB per
/// rank for them (a larger message's copy costs more than its allocation anyway).
const KEPT_BUFFER: usize = 1024;

/// A call's check record as the proxy holds it (`mpsim_door::check::Record`): a
/// point-to-point signature is shared, so that a record the rank sends again costs neither
/// decoding nor allocation ([`Proxy::take_record`]).
pub(crate) enum Rec {
    P2p(Arc<Sig>),
    Coll(Coll),
}

/// What executing a call gives: the reply's head values and payload.
#[derive(Default)]
pub(crate) struct Answer {
    pub status: WireStatus,
    pub v: [i64; 4],
    pub payload: Vec<u8>,
}

impl Answer {
    pub fn v(v: &[i64]) -> Self {
        let mut a = Answer::default();
        a.v[..v.len()].copy_from_slice(v);
        a
    }
    pub fn data(payload: Vec<u8>) -> Self {
        Answer {
            payload,
            ..Answer::default()
        }
    }
}

/// The wire's status of `s`.
pub(crate) fn wire_status(s: &Status) -> WireStatus {
    WireStatus {
        source: if s.source == Status::NO_SOURCE {
            wire::ANY_SOURCE
        } else {
            s.source as i32
        },
        tag: if s.tag == Status::NO_TAG {
            wire::ANY_TAG
        } else {
            s.tag
        },
        error: 0,
        cancelled: s.cancelled as i32,
        bytes: s.bytes as u64,
    }
}

/// The source pattern of a wire source.
pub(crate) fn source(v: i64) -> Source {
    if v == wire::ANY_SOURCE as i64 {
        Source::Any
    } else {
        Source::Rank(v as u32)
    }
}

/// The tag pattern of a wire tag.
pub(crate) fn tag(v: i64) -> Tag {
    if v == wire::ANY_TAG as i64 {
        Tag::Any
    } else {
        Tag::Value(v as i32)
    }
}

/// The send mode of a wire mode.
pub(crate) fn mode(v: i64) -> SendMode {
    match wire::SendMode::from_u32(v as u32) {
        Some(wire::SendMode::Synchronous) => SendMode::Synchronous,
        Some(wire::SendMode::Buffered) => SendMode::Buffered,
        Some(wire::SendMode::Ready) => SendMode::Ready,
        _ => SendMode::Standard,
    }
}

/// The standard ABI's number of an error's class.
pub(crate) fn class_number(e: &Error) -> i32 {
    use mpsim::ErrorClass as C;
    match e.class() {
        C::Buffer => 1,
        C::Count => 2,
        C::Type => 3,
        C::Tag => 4,
        C::Comm => 5,
        C::Rank => 6,
        C::Request => 7,
        C::Root => 8,
        C::Group => 9,
        C::Op => 10,
        C::Arg => 13,
        C::Unknown => 14,
        C::Truncate => 15,
        C::Other => 16,
        C::Intern => 17,
        C::Pending => 18,
        C::InStatus => 19,
        C::NoMem => 39,
        C::Io => 35,
        C::UnsupportedOperation => 55,
        C::ProcAborted => 58,
        _ => 16,
    }
}

impl<'s> Proxy<'s> {
    pub fn new(
        segment: &'s Segment,
        world: Comm,
        charge_compute: bool,
        queue_calls: bool,
        checks: &'s crate::checks::Checks,
    ) -> Self {
        let rank = world.rank();
        let one_cpu = segment
            .header()
            .one_cpu
            .load(std::sync::atomic::Ordering::Relaxed)
            == 1;
        let channel =
            Channel::new(segment.slot(rank), mpsim_door::channel::Side::Proxy).on_one_cpu(one_cpu);
        let mut comms = HashMap::default();
        comms.insert(
            0x101,
            HeldComm {
                comm: world.clone(),
                errors_return: false,
            },
        );
        comms.insert(
            0x102,
            HeldComm {
                comm: world.solo(),
                errors_return: false,
            },
        );
        Proxy {
            channel,
            world,
            comms,
            requests: HashMap::default(),
            freed: Vec::new(),
            messages: HashMap::default(),
            next_id: 0x1000,
            charge_compute,
            queue_calls,
            last_call: "(none yet)",
            site: 0,
            initialized: false,
            checks,
            coll_seq: HashMap::default(),
            recv_seq: 0,
            last_sig: None,
            spare: Vec::new(),
            zygote: segment
                .header()
                .zygote_pid
                .load(std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// Takes the check record off the end of a call's `payload` (`a[check::ARG]` bytes of
    /// it), as `Record::take` does; a point-to-point record the same, byte for byte, as the
    /// last one gives the same signature again, not decoded.
    pub fn take_record(&mut self, a: &[i64], payload: &mut Vec<u8>) -> Option<Rec> {
        let n = usize::try_from(*a.get(check::ARG)?)
            .ok()
            .filter(|&n| n > 0)?;
        let at = payload.len().checked_sub(n)?;
        let bytes = &payload[at..];
        let rec = match &self.last_sig {
            Some((last, sig)) if last[..] == *bytes => Some(Rec::P2p(Arc::clone(sig))),
            _ => match Record::decode(bytes) {
                Some(Record::P2p(sig)) => {
                    let sig = Arc::new(sig);
                    self.last_sig = Some((bytes.to_vec(), Arc::clone(&sig)));
                    Some(Rec::P2p(sig))
                }
                Some(Record::Coll(c)) => Some(Rec::Coll(c)),
                None => None,
            },
        };
        payload.truncate(at);
        rec
    }

    /// A zeroed buffer of `len` bytes for a receive's data: the one kept from the last answer
    /// when there is one.
    pub fn buffer(&mut self, len: usize) -> Vec<u8> {
        let mut b = std::mem::take(&mut self.spare);
        b.clear();
        b.resize(len, 0);
        b
    }

    /// Keeps `b`, an answer's payload sent, for the next [`Proxy::buffer`] (unless small
    /// enough to be nothing, or too large to keep).
    fn keep(&mut self, b: Vec<u8>) {
        if b.capacity() > self.spare.capacity() && b.capacity() <= KEPT_BUFFER {
            self.spare = b;
        }
    }

    pub fn id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    /// The communicator of wire id `id`.
    pub fn comm(&self, id: i64, call: &'static str) -> Result<Comm> {
        self.comms.get(&id).map(|c| c.comm.clone()).ok_or_else(|| {
            Error::program(format!(
                "{call}: the C library named unknown communicator {id:#x}"
            ))
        })
    }

    /// Serves the rank until it finalizes or its process ends.
    pub async fn serve(mut self) -> Result<()> {
        let zygote = self.zygote;
        // Also false once a signal asks the run to stop: a rank that computes for ever, or
        // makes calls that never block, would otherwise keep the kernel here.
        let alive = move || zygote_alive(zygote) && mpsim::stop_requested().is_none();
        // The rank's first turn: it runs from the start of `main` to its first call.
        self.channel.pass();
        let mut queued = Vec::new();
        // A call's payload, and a queued call's: kept from call to call (up to
        // `KEPT_BUFFER` bytes), as the buffers their data is copied into.
        let (mut payload, mut queued_payload) = (Vec::new(), Vec::new());
        loop {
            let mut head = CallHead::zeroed();
            for b in [&mut payload, &mut queued_payload] {
                if b.capacity() > KEPT_BUFFER {
                    *b = Vec::new();
                }
                b.clear();
            }
            queued.clear();
            let got = self.channel.wait_turn(Some(&alive)).and_then(|()| {
                self.channel.take_queued(|q| queued.extend_from_slice(q));
                self.channel.recv(
                    bytemuck::bytes_of_mut(&mut head),
                    |h| bytemuck::pod_read_unaligned::<CallHead>(h).payload_len as usize,
                    |b| payload.extend_from_slice(b),
                    Some(&alive),
                )
            });
            let stop = mpsim::stop_requested();
            if got.is_err() || stop.is_some() {
                if let Some(signal) = stop.or_else(mpsim::stop_requested) {
                    return Err(Error::Interrupted {
                        signal,
                        time_ns: Some(self.world.now_ns()),
                    });
                }
                self.name_queued_on_end();
                return self.ended();
            }
            // The calls the rank queued come first, in order.
            let mut at = 0;
            while at < queued.len() {
                let (qhead, range) = queued_call(&queued, at)?;
                at = range.end;
                queued_payload.clear();
                queued_payload.extend_from_slice(&queued[range]);
                if let Err(e) = self.run_queued(qhead, &mut queued_payload).await {
                    return Err(self.at_site(e));
                }
            }
            let Some(op) = Op::from_u32(head.op) else {
                return Err(Error::program(format!(
                    "the C library sent an unknown call ({}); is the program built by this \
                     version's `mpsim cc`?",
                    head.op
                )));
            };
            self.last_call = op_name(op);
            self.at_call(head.site);
            if op == Op::Init {
                self.checks.sites.set_bias(head.a[1] as u64);
            }
            if self.charge_compute && head.cpu_ns > 0 {
                self.world.compute(Duration::from_nanos(head.cpu_ns)).await;
            }
            if op == Op::Fatal {
                return Err(self.at_site(fatal(&payload, head.a[0])));
            }
            if op == Op::Abort {
                let code = head.a[1] as i32;
                match self.world.abort(code).await {}
            }
            let comm_id = head.a[0];
            let record = self.take_record(&head.a, &mut payload);
            let result = crate::exec::execute(&mut self, op, &head.a, &mut payload, record).await;
            let (reply, data) = match result {
                Ok(a) => (
                    ReplyHead {
                        status: a.status,
                        v: a.v,
                        payload_len: a.payload.len() as u64,
                        ..ReplyHead::zeroed()
                    },
                    a.payload,
                ),
                Err(e) => {
                    let returns = self.comms.get(&comm_id).is_some_and(|c| c.errors_return)
                        && op_has_comm(op);
                    if !returns {
                        return Err(self.at_site(e));
                    }
                    let text = e.to_string().into_bytes();
                    (
                        ReplyHead {
                            rc: class_number(&e),
                            payload_len: text.len() as u64,
                            ..ReplyHead::zeroed()
                        },
                        text,
                    )
                }
            };
            if op == Op::Init {
                self.initialized = true;
            }
            if op == Op::Finalize && !self.requests.is_empty() {
                let n = self.requests.len();
                return Err(self.at_site(Error::program(format!(
                    "MPI_Finalize with {n} request{} neither completed nor freed",
                    if n == 1 { "" } else { "s" }
                ))));
            }
            if op == Op::Finalize {
                // Communicators of the rank's own (not the world, not self) left: a warning.
                let leaked = self
                    .comms
                    .keys()
                    .filter(|&&id| id != 0x101 && id != 0x102)
                    .count();
                // What the rank's library counted of the others (`api/init.rs`).
                let counts = [leaked as i64, head.a[1], head.a[2], head.a[3], head.a[4]];
                for (leak, n) in crate::checks::LEAKS.into_iter().zip(counts) {
                    if n > 0 {
                        self.checks.leak(&self.world, leak, n as usize, self.site);
                    }
                }
                // The rank's part of the run is over; its process goes on to exit.
                self.channel
                    .slot()
                    .control()
                    .finalized
                    .store(1, std::sync::atomic::Ordering::Release);
                self.requests.clear();
                self.freed.clear();
                let _ = self
                    .channel
                    .send(bytemuck::bytes_of(&reply), &[&data], Some(&alive));
                return Ok(());
            }
            if self
                .channel
                .send(bytemuck::bytes_of(&reply), &[&data], Some(&alive))
                .is_err()
            {
                return self.ended();
            }
            self.keep(data);
        }
    }

    /// Executes a call the rank queued (one that needs no answer): as any call, after charging
    /// its compute, but its error always ends the run (the rank queues only calls whose errors
    /// would), and its answer goes nowhere.
    async fn run_queued(&mut self, head: CallHead, payload: &mut Vec<u8>) -> Result<()> {
        let op = Op::from_u32(head.op)
            .filter(|op| queueable(*op))
            .ok_or_else(|| {
                Error::program(format!(
                    "the C library queued a call that needs an answer ({}); is the program \
                     built by this version's `mpsim cc`?",
                    head.op
                ))
            })?;
        self.last_call = op_name(op);
        self.at_call(head.site);
        if self.charge_compute && head.cpu_ns > 0 {
            self.world.compute(Duration::from_nanos(head.cpu_ns)).await;
        }
        let record = self.take_record(&head.a, payload);
        crate::exec::execute(self, op, &head.a, payload, record)
            .await
            .map(drop)
    }

    /// The rank's process ended during its turn: the last call it made may be one it queued,
    /// still in its slot.
    fn name_queued_on_end(&mut self) {
        let control = self.channel.slot().control();
        if control.end.load(std::sync::atomic::Ordering::Acquire) == end::RUNNING {
            return;
        }
        let mut last = None;
        self.channel.take_queued(|q| {
            let mut at = 0;
            while let Ok((h, range)) = queued_call(q, at) {
                last = Op::from_u32(h.op).map(|op| (op, h.site));
                at = range.end;
            }
        });
        if let Some((op, site)) = last {
            self.last_call = op_name(op);
            self.at_call(site);
        }
    }

    /// The rank's process ended before `MPI_Finalize`: fine if it never called `MPI_Init`
    /// and exited 0, an error naming how it ended and its last call otherwise.
    fn ended(&self) -> Result<()> {
        let control = self.channel.slot().control();
        let how = control.end.load(std::sync::atomic::Ordering::Acquire);
        let value = control.end_value.load(std::sync::atomic::Ordering::Relaxed);
        if how == end::EXITED && value == 0 && !self.initialized {
            return Ok(());
        }
        let ended = match how {
            end::SIGNALED => format!("was killed by signal {value} ({})", signal_name(value)),
            end::EXITED => format!("exited with status {value}"),
            _ => "stopped answering (its process is gone)".to_string(),
        };
        let _ = Gone;
        Err(Error::program(format!(
            "the rank's process {ended} before MPI_Finalize; its last MPI call was {}{}",
            self.last_call,
            self.checks.sites.from(self.site)
        )))
    }

    /// The rank makes a call from return address `site`.
    #[inline]
    fn at_call(&mut self, site: u64) {
        self.site = site;
        self.checks.sites.set_current(self.world.rank(), site);
    }

    /// Error `e` of the rank's current call, naming where the program made it: ` from
    /// FILE:LINE in FUNCTION` after the call's name (`MPI_Send from ring.c:42 in main: ...`,
    /// `rank 1 in ssend from ring.c:42 in main ...`), or `(called from ...)` at the end of a
    /// text that does not start with it.
    fn at_site(&self, mut e: Error) -> Error {
        let Some(w) = self.checks.sites.describe(self.site) else {
            return e;
        };
        if let Some(site) = e.site_mut() {
            // An error ends the run: the leaked text is made once.
            site.call = Box::leak(format!("{} from {w}", site.call).into_boxed_str());
        } else if let Error::Program(failure) = &mut e {
            match failure.what.find(": ") {
                Some(at) if failure.what.starts_with("MPI_") => {
                    failure.what.insert_str(at, &format!(" from {w}"))
                }
                _ => failure.what.push_str(&format!(" (called from {w})")),
            }
        }
        e
    }
}

/// The calls a rank may queue: they need no answer ([`mpsim_door::wire`]).
fn queueable(op: Op) -> bool {
    matches!(op, Op::Send | Op::Isend | Op::Irecv | Op::RequestFree)
}

/// The queued call at byte `at` of `queued`: its head and the range of its payload.
fn queued_call(queued: &[u8], at: usize) -> Result<(CallHead, std::ops::Range<usize>)> {
    let broken = || Error::program("the C library queued a broken call".to_string());
    let body = at + std::mem::size_of::<CallHead>();
    let head: CallHead = bytemuck::pod_read_unaligned(queued.get(at..body).ok_or_else(broken)?);
    let end = usize::try_from(head.payload_len)
        .ok()
        .and_then(|n| body.checked_add(n))
        .filter(|&e| e <= queued.len())
        .ok_or_else(broken)?;
    Ok((head, body..end))
}

/// Whether the zygote still runs: it exists and is not a zombie (it is `mpsim run`'s child,
/// reaped only at the end of the run).
fn zygote_alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command's closing parenthesis.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => false,
    }
}

/// The error a rank's `Op::Fatal` carries.
fn fatal(payload: &[u8], class: i64) -> Error {
    let text = String::from_utf8_lossy(payload);
    let (call, what) = text.split_once('\0').unwrap_or(("an MPI call", &text));
    Error::program(format!("{call}: {what} (MPI error class {class})"))
}

fn op_has_comm(op: Op) -> bool {
    !matches!(
        op,
        Op::Wait
            | Op::Test
            | Op::Waitall
            | Op::Testall
            | Op::Waitany
            | Op::Testany
            | Op::Waitsome
            | Op::Testsome
            | Op::RequestFree
            | Op::Cancel
            | Op::Mrecv
            | Op::Imrecv
            | Op::BufferAttach
            | Op::BufferDetach
    )
}

/// The C name of a call.
pub(crate) fn op_name(op: Op) -> &'static str {
    match op {
        Op::Init => "MPI_Init",
        Op::Finalize => "MPI_Finalize",
        Op::Abort => "MPI_Abort",
        Op::Wtime => "MPI_Wtime",
        Op::Fatal => "an MPI call with a bad argument",
        Op::Send => "MPI_Send (or Ssend/Bsend/Rsend)",
        Op::Recv => "MPI_Recv",
        Op::Isend => "MPI_Isend (or Issend/Ibsend/Irsend/Start)",
        Op::Irecv => "MPI_Irecv (or Start)",
        Op::Wait => "MPI_Wait",
        Op::Test => "MPI_Test",
        Op::Waitall => "MPI_Waitall",
        Op::Testall => "MPI_Testall",
        Op::Waitany => "MPI_Waitany",
        Op::Testany => "MPI_Testany",
        Op::Waitsome => "MPI_Waitsome",
        Op::Testsome => "MPI_Testsome",
        Op::RequestFree => "MPI_Request_free",
        Op::Cancel => "MPI_Cancel",
        Op::Probe => "MPI_Probe",
        Op::Iprobe => "MPI_Iprobe",
        Op::Mprobe => "MPI_Mprobe",
        Op::Improbe => "MPI_Improbe",
        Op::Mrecv => "MPI_Mrecv",
        Op::Imrecv => "MPI_Imrecv",
        Op::Sendrecv => "MPI_Sendrecv",
        Op::PairRequests => "MPI_Isendrecv (or Isendrecv_replace)",
        Op::BufferAttach => "MPI_Buffer_attach",
        Op::BufferDetach => "MPI_Buffer_detach",
        Op::CommDup => "MPI_Comm_dup",
        Op::CommSplit => "MPI_Comm_split (or Comm_create)",
        Op::CommFree => "MPI_Comm_free",
        Op::CommMembers => "MPI_Comm_group",
        Op::CommCreateGroup => "MPI_Comm_create_group",
        Op::CommInter => "MPI_Intercomm_create",
        Op::SetErrhandler => "MPI_Comm_set_errhandler",
        Op::Barrier => "MPI_Barrier",
        Op::Bcast => "MPI_Bcast",
        Op::Reduce => "MPI_Reduce",
        Op::Allreduce => "MPI_Allreduce",
        Op::Gather => "MPI_Gather",
        Op::Gatherv => "MPI_Gatherv",
        Op::Scatter => "MPI_Scatter",
        Op::Scatterv => "MPI_Scatterv",
        Op::Allgather => "MPI_Allgather",
        Op::Allgatherv => "MPI_Allgatherv",
        Op::Alltoall => "MPI_Alltoall",
        Op::Alltoallv => "MPI_Alltoallv",
        Op::ReduceScatter => "MPI_Reduce_scatter",
        Op::ReduceScatterBlock => "MPI_Reduce_scatter_block",
        Op::Scan => "MPI_Scan",
        Op::Exscan => "MPI_Exscan",
        Op::Ibarrier => "MPI_Ibarrier",
        Op::Ibcast => "MPI_Ibcast",
        Op::Ireduce => "MPI_Ireduce",
        Op::Iallreduce => "MPI_Iallreduce",
        Op::Igather => "MPI_Igather",
        Op::Igatherv => "MPI_Igatherv",
        Op::Iscatter => "MPI_Iscatter",
        Op::Iscatterv => "MPI_Iscatterv",
        Op::Iallgather => "MPI_Iallgather",
        Op::Iallgatherv => "MPI_Iallgatherv",
        Op::Ialltoall => "MPI_Ialltoall",
        Op::Ialltoallv => "MPI_Ialltoallv",
        Op::IreduceScatter => "MPI_Ireduce_scatter",
        Op::IreduceScatterBlock => "MPI_Ireduce_scatter_block",
        Op::Iscan => "MPI_Iscan",
        Op::Iexscan => "MPI_Iexscan",
        Op::ReduceLocal => "MPI_Reduce_local",
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        _ => "signal",
    }
}

// Reductions live in their own module.
#[allow(unused_imports)]
use reduce as _;
