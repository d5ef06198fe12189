//! Stress test of point-to-point messaging: many random messages, in every send mode and through
//! blocking, nonblocking and `start_send` calls, of sizes from 0 B to 256 KiB, received through
//! specific and wildcard patterns. Each rank checks that every message meant for it arrives
//! exactly once, intact (every byte), and in non-overtaking order (`docs/p2p.md` §2, §3;
//! MPI 4.1 §3.5).
//!
//! The plan — who sends what to whom, in which mode, and how each receiver posts its receives —
//! is a deterministic function of a seed (a small xorshift generator, no `rand`), and every rank
//! computes the whole of it, so a receiver knows exactly what to expect.
//!
//! The programs are `async fn`s of a [`Comm`] so that another backend (the simulator) can run
//! them unchanged: only [`launcher`] names the backend.
//!
//! # Why the stress program cannot deadlock or mismatch
//!
//! The run is cut into rounds. In each round every rank (1) posts all its receives of the round
//! (nonblocking), (2) issues its sends of the round — non-ready ones first, in plan order, then
//! ready ones — and (3) waits for everything. Every receive a rank waits for is posted before any
//! send of that round, so by induction on rounds every send and receive completes; the only
//! wait inside step 2 is the one before a ready send (below), on a message that its peer sends in
//! step 2 before any wait of its own.
//!
//! Receives are exact: for each round a rank posts exactly as many receives as messages are sent
//! to it, specific `(source, tag)` receives first, then wildcard ones of one shape per (rank,
//! round): either `(ANY_SOURCE, tag)` or `(source, ANY_TAG)`. Whatever the arrival order, a
//! wildcard then only takes a message whose specific receives are all satisfied, so every
//! message finds a receive (and one posted already when it arrives). Tags are unique to a round,
//! so `ANY_SOURCE` receives cannot take another round's message; an `(s, ANY_TAG)` receive could
//! in principle, but channels are FIFO and the round's messages from `s` are exactly as many as
//! the receives for them, so they are all taken before a later round's message from `s` arrives.
//! `(ANY_SOURCE, ANY_TAG)` receives are not used here (they could take a message of the next
//! round from a rank that is ahead); the second test uses only those, in one phase.
//!
//! Ready sends: a message `s → d` is a ready send only if `d` also sends `s` a non-ready
//! message in the same round, and that message is received through a specific `(d, tag)`
//! receive. Before the ready send, `s` waits for that receive (it gets a non-ready message from
//! `d`: channels carry their non-ready messages first), so `d` has posted all its receives of the
//! round. The run is in strict mode, so an rsend that found no posted receive would fail the test
//! (`ReadyNotPosted`). (The wait is a `wait_all` on that one receive, the one the ready send
//! depends on, rather than a `wait_any` over all of them. A `wait_any` that missed a wake-up
//! and parked for good on the threads backend, found while writing this test, was fixed in
//! the same change; `request.rs` keeps its regression test
//! (`p2p_p17_wait_any_sees_a_completion_its_own_poll_took_in`).)
//!
//! Buffered sends: every rank attaches the total its buffered sends of the whole run may need
//! (`bytes + BSEND_OVERHEAD` each): a buffered message holds its bytes until it is delivered,
//! and a rank may run rounds ahead of its receivers, so a per-round bound would not be safe.
//! The buffer is detached at the end (which waits for delivery) and must come back whole.
//!
//! Bounded: the threads backend reports a deadlock instead of hanging; on top of that the run
//! happens on a helper thread and the test fails if it has not finished after [`TIME_LIMIT`].

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use mpsim::{
    BSEND_OVERHEAD, Backend, Comm, Launcher, Request, Result, SendMode, Source, Status, Tag,
    wait_all,
};

/// The seed of the 8-rank plan (any value gives a valid plan).
const STRESS_SEED: u64 = 0x5EED_0000_0008_0001;
/// The seed of the 3-rank wildcard plan.
const WILDCARD_SEED: u64 = 0x5EED_0000_0003_0002;
/// A run that has not finished after this long fails the test instead of hanging it.
const TIME_LIMIT: Duration = Duration::from_secs(120);
/// The largest message.
const MAX_BYTES: usize = 256 * 1024;
/// The eager threshold of standard sends on the threads backend (the launcher's default).
const EAGER_THRESHOLD: usize = 64 * 1024;
/// Distinct tags per round of the stress plan.
const TAGS_PER_ROUND: u64 = 3;
/// What receive buffers hold before a receive; bytes past the message must keep it.
const SENTINEL: u8 = 0xA5;

/// The one place that builds a launcher: every program here runs under both backends (the
/// functional equivalence of `sim` and `threads`).
fn launcher(ranks: u32, backend: Backend) -> Launcher {
    Launcher::new(ranks).backend(backend)
}

// ---- deterministic randomness and payloads ----

/// xorshift64 (Marsaglia's 13/7/17), seeded through splitmix64 so that any seed works.
#[derive(Clone, Debug)]
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> Self {
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        XorShift(if z == 0 { 1 } else { z })
    }

    fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// Uniform in `0..n` (the modulo bias is negligible for the small `n` used here).
    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// Uniform in `lo..=hi`.
    fn between(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below((hi - lo + 1) as u64) as usize
    }

    fn percent(&mut self, p: u64) -> bool {
        self.below(100) < p
    }
}

/// The payload of the `seq`-th message `src` sends: a byte stream determined by `(src, seq)`,
/// so that the receiver can check every byte.
fn payload(src: u32, seq: u64, bytes: usize, out: &mut Vec<u8>) {
    out.clear();
    let mut g = XorShift::new((u64::from(src) << 48) ^ seq ^ 0xDA7A_0000_0000_0000);
    while out.len() < bytes {
        out.extend_from_slice(&g.next_u64().to_le_bytes());
    }
    out.truncate(bytes);
}

/// Message sizes, skewed: mostly small, some up to 256 KiB, and the edges (0 B, the eager
/// threshold and one past it, 256 KiB) on purpose.
fn random_size(rng: &mut XorShift) -> usize {
    match rng.below(200) {
        0..=3 => [0, 1, EAGER_THRESHOLD, EAGER_THRESHOLD + 1, MAX_BYTES][rng.below(5) as usize],
        4..=83 => rng.between(0, 16),
        84..=153 => rng.between(17, 1024),
        154..=187 => rng.between(1025, 16 * 1024),
        188..=197 => rng.between(16 * 1024 + 1, EAGER_THRESHOLD),
        _ => rng.between(EAGER_THRESHOLD + 1, MAX_BYTES),
    }
}

fn random_mode(rng: &mut XorShift, with_ready: bool) -> SendMode {
    match rng.below(if with_ready { 4 } else { 3 }) {
        0 => SendMode::Standard,
        1 => SendMode::Synchronous,
        2 => SendMode::Buffered,
        _ => SendMode::Ready,
    }
}

/// Which call issues a send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Call {
    /// `send`, `ssend`, `bsend`, `rsend`, awaited on the spot.
    Blocking,
    /// `isend`, `issend`, `ibsend`, `irsend`.
    Nonblocking,
    /// `start_send(mode, …)`.
    StartSend,
}

/// Issues `m` with payload `data`: a blocking call completes here, the others return their
/// request.
async fn issue(
    world: &Comm,
    mode: SendMode,
    call: Call,
    data: &[u8],
    dst: u32,
    tag: i32,
) -> Result<Option<Request<'static>>> {
    Ok(match call {
        Call::Blocking => {
            match mode {
                SendMode::Standard => world.send(data, dst, tag).await?,
                SendMode::Synchronous => world.ssend(data, dst, tag).await?,
                SendMode::Buffered => world.bsend(data, dst, tag).await?,
                SendMode::Ready => world.rsend(data, dst, tag).await?,
            }
            None
        }
        Call::Nonblocking => Some(match mode {
            SendMode::Standard => world.isend(data, dst, tag)?,
            SendMode::Synchronous => world.issend(data, dst, tag)?,
            SendMode::Buffered => world.ibsend(data, dst, tag)?,
            SendMode::Ready => world.irsend(data, dst, tag)?,
        }),
        Call::StartSend => Some(world.start_send(mode, data, dst, tag)?),
    })
}

/// What the ranks count together, checked after the run.
#[derive(Default)]
pub(crate) struct Tally {
    pub(crate) messages: AtomicU64,
    pub(crate) bytes: AtomicU64,
}

impl Tally {
    fn add(&self, bytes: usize) {
        self.messages.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(bytes as u64, Ordering::Relaxed);
    }
}

/// Runs `program` on `launcher` on a helper thread; a run still going after [`TIME_LIMIT`]
/// fails the test (the helper thread is then abandoned).
fn run_bounded<F, Fut>(what: &str, launcher: Launcher, program: F) -> Result<()>
where
    F: Fn(Comm) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<()>>,
{
    bounded(what, move || launcher.run(program))
}

/// `run()` on a helper thread named after `what`, bounded by [`TIME_LIMIT`] (a hang fails the
/// test rather than the whole test binary).
fn bounded<T: Send + 'static>(what: &str, run: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name(format!("{what}-launcher"))
        .spawn(move || {
            let _ = tx.send(run());
        })
        .expect("spawning the launcher thread");
    match rx.recv_timeout(TIME_LIMIT) {
        Ok(result) => result,
        Err(RecvTimeoutError::Timeout) => panic!("{what}: no result after {TIME_LIMIT:?} (hang)"),
        Err(RecvTimeoutError::Disconnected) => panic!("{what}: the launcher thread panicked"),
    }
}

// ---- the 8-rank stress plan ----

/// One message of the plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Msg {
    src: u32,
    pub(crate) dst: u32,
    tag: i32,
    pub(crate) bytes: usize,
    mode: SendMode,
    call: Call,
    /// Index of the message among all messages `src` sends (its payload seed).
    seq: u64,
    /// Received through a wildcard receive if the receiver's style of the round has one.
    wild: bool,
}

/// How a rank posts its receives in one round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RecvStyle {
    /// `(source, tag)` only.
    Specific,
    /// `(source, tag)` for some messages, `(ANY_SOURCE, tag)` for the others.
    AnySource,
    /// `(source, tag)` for some messages, `(source, ANY_TAG)` for the others.
    AnyTag,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Round {
    index: usize,
    /// Grouped by source, each source's messages in the order it issues them.
    msgs: Vec<Msg>,
    /// Per rank.
    styles: Vec<RecvStyle>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    rounds: Vec<Round>,
}

impl Plan {
    pub(crate) fn new(seed: u64, ranks: u32, total: usize) -> Plan {
        let mut rng = XorShift::new(seed);
        let mut next_seq = vec![0u64; ranks as usize];
        let mut rounds = Vec::new();
        let mut left = total;
        while left > 0 {
            let index = rounds.len();
            let n = rng.between(16, 160).min(left);
            let base_tag = index as u64 * TAGS_PER_ROUND;
            let mut msgs: Vec<Msg> = Vec::with_capacity(n);
            for _ in 0..n {
                // Half the messages reuse a channel of the round, so that channels carry
                // several messages of mixed modes and sizes (the non-overtaking check).
                let (src, dst, tag) = if !msgs.is_empty() && rng.percent(50) {
                    let m = msgs[rng.below(msgs.len() as u64) as usize];
                    (m.src, m.dst, m.tag)
                } else {
                    let src = rng.below(u64::from(ranks)) as u32;
                    let dst = rng.below(u64::from(ranks)) as u32; // self-sends included
                    let tag = i32::try_from(base_tag + rng.below(TAGS_PER_ROUND)).unwrap();
                    (src, dst, tag)
                };
                let bytes = random_size(&mut rng);
                let mode = random_mode(&mut rng, true);
                let call = match rng.below(4) {
                    0 => Call::Blocking,
                    1 => Call::StartSend,
                    _ => Call::Nonblocking,
                };
                let wild = rng.percent(50);
                msgs.push(Msg {
                    src,
                    dst,
                    tag,
                    bytes,
                    mode,
                    call,
                    seq: 0,
                    wild,
                });
            }
            // A ready send s → d needs a non-ready message d → s in the round (see the top).
            let answered: HashSet<(u32, u32)> = msgs
                .iter()
                .filter(|m| m.mode != SendMode::Ready)
                .map(|m| (m.src, m.dst))
                .collect();
            for m in &mut msgs {
                if m.mode == SendMode::Ready && !answered.contains(&(m.dst, m.src)) {
                    m.mode = SendMode::Standard;
                }
            }
            // Issue order: by source, non-ready sends first (stable sort keeps plan order).
            msgs.sort_by_key(|m| (m.src, m.mode == SendMode::Ready));
            for m in &mut msgs {
                m.seq = next_seq[m.src as usize];
                next_seq[m.src as usize] += 1;
            }
            // The ready sender s → d waits for d's first non-ready message to s through a
            // specific receive: that message must not be a wildcard one.
            let ready: HashSet<(u32, u32)> = msgs
                .iter()
                .filter(|m| m.mode == SendMode::Ready)
                .map(|m| (m.src, m.dst))
                .collect();
            for (s, d) in ready {
                let first = msgs
                    .iter_mut()
                    .find(|m| m.src == d && m.dst == s && m.mode != SendMode::Ready)
                    .expect("checked above");
                first.wild = false;
            }
            let styles = (0..ranks)
                .map(|_| match rng.below(3) {
                    0 => RecvStyle::Specific,
                    1 => RecvStyle::AnySource,
                    _ => RecvStyle::AnyTag,
                })
                .collect();
            rounds.push(Round {
                index,
                msgs,
                styles,
            });
            left -= n;
        }
        Plan { rounds }
    }

    pub(crate) fn messages(&self) -> impl Iterator<Item = &Msg> {
        self.rounds.iter().flat_map(|r| &r.msgs)
    }

    /// What `rank`'s buffered sends may hold of the attached buffer at most.
    fn bsend_budget(&self, rank: u32) -> usize {
        self.messages()
            .filter(|m| m.src == rank && m.mode == SendMode::Buffered)
            .map(|m| m.bytes + BSEND_OVERHEAD)
            .sum()
    }
}

/// One receive to post: pattern and buffer size.
#[derive(Clone, Copy, Debug)]
struct RecvSpec {
    source: Source,
    tag: Tag,
    capacity: usize,
}

impl RecvSpec {
    fn accepts(&self, status: &Status) -> bool {
        (self.source == Source::Any || self.source == Source::Rank(status.source))
            && (self.tag == Tag::Any || self.tag == Tag::Value(status.tag))
    }
}

/// The receives `me` posts in a round, in posting order: specific ones first, then wildcards,
/// each with the message it is planned for (it may get another of its class). A receive's
/// buffer fits the largest message it could match.
fn recv_specs<'m>(incoming: &[&'m Msg], style: RecvStyle) -> Vec<(RecvSpec, &'m Msg)> {
    let max_of = |keep: &dyn Fn(&Msg) -> bool| {
        incoming
            .iter()
            .filter(|m| keep(m))
            .map(|m| m.bytes)
            .max()
            .unwrap_or(0)
    };
    let specific = |m: &'m Msg| {
        let spec = RecvSpec {
            source: Source::Rank(m.src),
            tag: Tag::Value(m.tag),
            capacity: max_of(&|o| o.src == m.src && o.tag == m.tag),
        };
        (spec, m)
    };
    let wild = |m: &Msg| style != RecvStyle::Specific && m.wild;
    let mut specs: Vec<(RecvSpec, &Msg)> = incoming
        .iter()
        .filter(|m| !wild(m))
        .map(|&m| specific(m))
        .collect();
    specs.extend(incoming.iter().filter(|m| wild(m)).map(|&m| {
        let spec = match style {
            RecvStyle::AnySource => RecvSpec {
                source: Source::Any,
                tag: Tag::Value(m.tag),
                capacity: max_of(&|o| o.tag == m.tag),
            },
            RecvStyle::AnyTag => RecvSpec {
                source: Source::Rank(m.src),
                tag: Tag::Any,
                capacity: max_of(&|o| o.src == m.src),
            },
            RecvStyle::Specific => unreachable!(),
        };
        (spec, m)
    }));
    specs
}

/// The 8-rank stress program of one rank.
pub(crate) async fn stress_rank(
    world: Comm,
    seed: u64,
    total: usize,
    tally: Arc<Tally>,
) -> Result<()> {
    let plan = Plan::new(seed, world.size(), total);
    let me = world.rank();
    // Never zero, so that detach always has a buffer to return.
    let attached = plan.bsend_budget(me) + BSEND_OVERHEAD;
    world.buffer_attach(attached)?;
    let mut scratch = Vec::with_capacity(MAX_BYTES);
    for round in &plan.rounds {
        stress_round(&world, round, &mut scratch, &tally).await?;
    }
    let detached = world.buffer_detach().await?;
    assert_eq!(detached, attached, "rank {me}: buffer_detach size");
    Ok(())
}

async fn stress_round(
    world: &Comm,
    round: &Round,
    scratch: &mut Vec<u8>,
    tally: &Tally,
) -> Result<()> {
    let me = world.rank();
    let r = round.index;
    let incoming: Vec<&Msg> = round.msgs.iter().filter(|m| m.dst == me).collect();
    let specs = recv_specs(&incoming, round.styles[me as usize]);
    assert_eq!(specs.len(), incoming.len());

    // 1. Post every receive of the round.
    let mut bufs: Vec<Vec<u8>> = specs
        .iter()
        .map(|(s, _)| vec![SENTINEL; s.capacity])
        .collect();
    let mut recvs: Vec<Request<'_>> = bufs
        .iter_mut()
        .zip(&specs)
        .map(|(buf, (s, _))| world.irecv(buf, s.source, s.tag))
        .collect::<Result<_>>()?;

    // 2. Send, in plan order (non-ready first). Before a ready send to d, wait for a specific
    //    receive that gets a non-ready message from d: d has then posted all its receives.
    let mut sends = Vec::new();
    for m in round.msgs.iter().filter(|m| m.src == me) {
        if m.mode == SendMode::Ready {
            let i = specs
                .iter()
                .position(|(s, planned)| {
                    s.source == Source::Rank(m.dst)
                        && s.tag != Tag::Any
                        && planned.mode != SendMode::Ready
                })
                .expect("the plan gives every ready send a specific receive to wait for");
            let status = wait_all(&mut recvs[i..=i]).await?[0];
            assert_eq!(
                status.source, m.dst,
                "rank {me} round {r}: handshake receive"
            );
        }
        payload(me, m.seq, m.bytes, scratch);
        if let Some(req) = issue(world, m.mode, m.call, scratch, m.dst, m.tag).await? {
            sends.push(req);
        }
    }

    // 3. Wait for everything, then check what arrived, receive by receive in posting order.
    wait_all(&mut sends).await?;
    let statuses = wait_all(&mut recvs).await?;
    drop(recvs);
    // Per (source, tag) channel: its messages in send order, and how many were seen so far.
    let mut channels: HashMap<(u32, i32), (Vec<&Msg>, usize)> = HashMap::new();
    for m in &incoming {
        channels.entry((m.src, m.tag)).or_default().0.push(m);
    }
    for (i, (status, (spec, _))) in statuses.iter().zip(&specs).enumerate() {
        let (src, tag) = (status.source, status.tag);
        let at = format!(
            "rank {me} round {r} receive #{i} ({}, {})",
            spec.source, spec.tag
        );
        assert!(
            spec.accepts(status),
            "{at}: got a message from {src} tag {tag}"
        );
        assert!(!status.cancelled, "{at}: cancelled");
        let Some((msgs, seen)) = channels.get_mut(&(src, tag)) else {
            panic!("{at}: got a message from {src} tag {tag}, which sends nothing here this round");
        };
        let Some(&m) = msgs.get(*seen) else {
            panic!(
                "{at}: message {} on channel ({src}, {tag}), which has only {} (duplicate)",
                *seen + 1,
                msgs.len()
            );
        };
        *seen += 1;
        assert_eq!(
            status.bytes,
            m.bytes,
            "{at}: channel ({src}, {tag}) message #{} should be seq {} of {} bytes (order?)",
            *seen - 1,
            m.seq,
            m.bytes
        );
        payload(src, m.seq, m.bytes, scratch);
        let buf = &bufs[i];
        if buf[..m.bytes] != scratch[..] {
            let bad = (0..m.bytes).find(|&k| buf[k] != scratch[k]).unwrap();
            panic!(
                "{at}: seq {} from {src} ({:?}, {} bytes) corrupt or out of order at byte {bad}",
                m.seq, m.mode, m.bytes
            );
        }
        assert!(
            buf[m.bytes..].iter().all(|&b| b == SENTINEL),
            "{at}: bytes written past the {}-byte message",
            m.bytes
        );
        tally.add(m.bytes);
    }
    for ((src, tag), (msgs, seen)) in &channels {
        assert_eq!(
            *seen,
            msgs.len(),
            "rank {me} round {r}: channel ({src}, {tag}) lost messages"
        );
    }
    Ok(())
}

#[test]
fn p2p_stress_8_ranks_100k_random_messages() {
    stress_8_ranks_100k(Backend::Threads);
}

#[test]
fn sim_p2p_stress_8_ranks_100k_random_messages() {
    stress_8_ranks_100k(Backend::Sim);
}

fn stress_8_ranks_100k(backend: Backend) {
    const RANKS: u32 = 8;
    const TOTAL: usize = 100_000;
    let plan = Plan::new(STRESS_SEED, RANKS, TOTAL);
    assert_eq!(
        plan,
        Plan::new(STRESS_SEED, RANKS, TOTAL),
        "plan not deterministic"
    );
    // The plan covers what the test is about.
    let msgs: Vec<&Msg> = plan.messages().collect();
    assert_eq!(msgs.len(), TOTAL);
    let total_bytes: usize = msgs.iter().map(|m| m.bytes).sum();
    let count = |f: &dyn Fn(&Msg) -> bool| msgs.iter().filter(|m| f(m)).count();
    for mode in [
        SendMode::Standard,
        SendMode::Synchronous,
        SendMode::Buffered,
        SendMode::Ready,
    ] {
        for call in [Call::Blocking, Call::Nonblocking, Call::StartSend] {
            assert!(
                count(&|m| m.mode == mode && m.call == call) > 100,
                "{mode:?} {call:?}"
            );
        }
    }
    for edge in [0, EAGER_THRESHOLD, EAGER_THRESHOLD + 1, MAX_BYTES] {
        assert!(count(&|m| m.bytes == edge) > 10, "size {edge}");
    }
    let wild = |style| {
        plan.rounds
            .iter()
            .flat_map(|r| {
                r.msgs
                    .iter()
                    .filter(move |m| m.wild && r.styles[m.dst as usize] == style)
            })
            .count()
    };
    let (any_source, any_tag) = (wild(RecvStyle::AnySource), wild(RecvStyle::AnyTag));
    assert!(any_source > 10_000 && any_tag > 10_000);
    println!(
        "plan: {} messages in {} rounds, {:.1} MiB; standard {}, synchronous {}, buffered {}, \
         ready {}; above the eager threshold {}; received by (ANY_SOURCE, tag) {any_source}, \
         by (source, ANY_TAG) {any_tag}",
        msgs.len(),
        plan.rounds.len(),
        total_bytes as f64 / (1 << 20) as f64,
        count(&|m| m.mode == SendMode::Standard),
        count(&|m| m.mode == SendMode::Synchronous),
        count(&|m| m.mode == SendMode::Buffered),
        count(&|m| m.mode == SendMode::Ready),
        count(&|m| m.bytes > EAGER_THRESHOLD),
    );

    let tally = Arc::new(Tally::default());
    let t = Arc::clone(&tally);
    let start = Instant::now();
    run_bounded(
        "stress",
        launcher(RANKS, backend).strict(true),
        move |world| stress_rank(world, STRESS_SEED, TOTAL, Arc::clone(&t)),
    )
    .expect("stress run");
    println!("stress run: {:.2?}", start.elapsed());
    assert_eq!(tally.messages.load(Ordering::Relaxed), TOTAL as u64);
    assert_eq!(tally.bytes.load(Ordering::Relaxed), total_bytes as u64);
}

// ---- the 3-rank wildcard-only test ----

/// One message of the wildcard plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct WildMsg {
    dst: u32,
    tag: i32,
    bytes: usize,
    mode: SendMode,
    blocking: bool,
}

/// `sends[s]`: what rank `s` sends, in order. Tags are 0..8 at random, so per-source order
/// across tags is what the receiver checks.
fn wildcard_plan(seed: u64, ranks: u32, per_rank: usize) -> Vec<Vec<WildMsg>> {
    let mut rng = XorShift::new(seed);
    (0..ranks)
        .map(|src| {
            (0..per_rank)
                .map(|_| {
                    // Every rank also sends to itself now and then.
                    let dst = (src + 1 + rng.below(u64::from(ranks)) as u32) % ranks;
                    let mode = random_mode(&mut rng, false);
                    WildMsg {
                        dst,
                        tag: rng.below(8) as i32,
                        bytes: random_size(&mut rng),
                        mode,
                        // Only bsend may block here: it completes locally.
                        blocking: mode == SendMode::Buffered && rng.percent(50),
                    }
                })
                .collect()
        })
        .collect()
}

/// Every receive is `(ANY_SOURCE, ANY_TAG)`, posted in windows of 1 to 16; status tells who sent
/// what, and each source's messages must come in its send order whatever their tags.
async fn wildcard_rank(world: Comm, seed: u64, per_rank: usize, tally: Arc<Tally>) -> Result<()> {
    let (me, n) = (world.rank(), world.size());
    let plan = wildcard_plan(seed, n, per_rank);
    let mut rng = XorShift::new(seed ^ (u64::from(me) + 1).wrapping_mul(0x1234_5678_9ABC_DEF1));
    // Per source: the messages for me, in its send order (with their seq), and how many came.
    let expected: Vec<Vec<(u64, WildMsg)>> = plan
        .iter()
        .map(|sends| {
            (0u64..)
                .zip(sends.iter().copied())
                .filter(|(_, m)| m.dst == me)
                .collect()
        })
        .collect();
    let mut seen = vec![0usize; n as usize];
    let mut left: usize = expected.iter().map(Vec::len).sum();
    let attached = plan[me as usize]
        .iter()
        .filter(|m| m.mode == SendMode::Buffered)
        .map(|m| m.bytes + BSEND_OVERHEAD)
        .sum::<usize>()
        + BSEND_OVERHEAD;
    world.buffer_attach(attached)?;

    const WINDOW: usize = 16;
    let mut bufs = vec![vec![SENTINEL; MAX_BYTES]; WINDOW];
    let mut used = [0usize; WINDOW]; // bytes to reset before reuse
    let mut scratch = Vec::with_capacity(MAX_BYTES);
    let mut first = true;
    let mut sends = Vec::new();
    while left > 0 || first {
        let w = rng.between(1, WINDOW).min(left);
        for (buf, used) in bufs.iter_mut().zip(&mut used).take(w) {
            buf[..*used].fill(SENTINEL);
            *used = 0;
        }
        let mut recvs: Vec<Request<'_>> = bufs
            .iter_mut()
            .take(w)
            .map(|buf| world.irecv(buf, Source::Any, Tag::Any))
            .collect::<Result<_>>()?;
        if first {
            // Send everything after the first window is posted: some messages meet a posted
            // receive, most wait as unexpected ones. Nothing blocks but local bsends.
            first = false;
            for (seq, m) in (0u64..).zip(&plan[me as usize]) {
                payload(me, seq, m.bytes, &mut scratch);
                if m.blocking {
                    world.bsend(&scratch, m.dst, m.tag).await?;
                } else {
                    sends.push(world.start_send(m.mode, &scratch, m.dst, m.tag)?);
                }
            }
        }
        let statuses = wait_all(&mut recvs).await?;
        drop(recvs);
        for (i, status) in statuses.iter().enumerate() {
            let src = status.source;
            let at = format!("rank {me}: (ANY_SOURCE, ANY_TAG) receive got source {src}");
            let from = expected.get(src as usize).unwrap_or_else(|| panic!("{at}"));
            let Some(&(seq, m)) = from.get(seen[src as usize]) else {
                panic!("{at}: more messages than it sent here ({})", from.len());
            };
            seen[src as usize] += 1;
            assert_eq!(
                (status.tag, status.bytes),
                (m.tag, m.bytes),
                "{at}: expected its seq {seq} (tag {}, {} bytes): out of order or lost",
                m.tag,
                m.bytes
            );
            payload(src, seq, m.bytes, &mut scratch);
            assert!(
                bufs[i][..m.bytes] == scratch[..],
                "{at}: seq {seq} ({:?}, {} bytes) corrupt",
                m.mode,
                m.bytes
            );
            assert!(
                bufs[i][m.bytes..].iter().all(|&b| b == SENTINEL),
                "{at}: overrun"
            );
            used[i] = m.bytes;
            tally.add(m.bytes);
        }
        left -= w;
    }
    wait_all(&mut sends).await?;
    assert_eq!(world.buffer_detach().await?, attached);
    for (src, from) in expected.iter().enumerate() {
        assert_eq!(seen[src], from.len(), "rank {me}: from {src}");
    }
    Ok(())
}

#[test]
fn p2p_stress_3_ranks_wildcard_receives_keep_per_source_order() {
    wildcard_3_ranks(Backend::Threads);
}

#[test]
fn sim_p2p_stress_3_ranks_wildcard_receives_keep_per_source_order() {
    wildcard_3_ranks(Backend::Sim);
}

fn wildcard_3_ranks(backend: Backend) {
    const RANKS: u32 = 3;
    const PER_RANK: usize = 2_000;
    let plan = wildcard_plan(WILDCARD_SEED, RANKS, PER_RANK);
    let total_bytes: usize = plan.iter().flatten().map(|m| m.bytes).sum();
    assert!(plan.iter().flatten().any(|m| m.bytes == MAX_BYTES));
    let tally = Arc::new(Tally::default());
    let t = Arc::clone(&tally);
    let start = Instant::now();
    run_bounded("wildcard", launcher(RANKS, backend), move |world| {
        wildcard_rank(world, WILDCARD_SEED, PER_RANK, Arc::clone(&t))
    })
    .expect("wildcard run");
    println!(
        "wildcard run: {} messages, {:.1} MiB, {:.2?}",
        RANKS as usize * PER_RANK,
        total_bytes as f64 / (1 << 20) as f64,
        start.elapsed()
    );
    assert_eq!(
        tally.messages.load(Ordering::Relaxed),
        u64::from(RANKS) * PER_RANK as u64
    );
    assert_eq!(tally.bytes.load(Ordering::Relaxed), total_bytes as u64);
}

// ---- the parallel simulator ----

/// The text report (and error) of `program` simulated by `launcher` on `threads` threads,
/// bounded like [`run_bounded`].
fn simulated_report<F, Fut>(what: &str, launcher: Launcher, threads: u32, program: F) -> String
where
    F: Fn(Comm) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<()>>,
{
    bounded(what, move || {
        let o = launcher.sim_threads(threads).simulate(program);
        format!("{}\nerror: {:?}", o.report, o.error)
    })
}

/// Determinism (docs/timing.md §5): 20,000 random messages of the stress plan (every send mode
/// and call, wildcards, strict ready sends) give the same report sequentially and on 3 and 8
/// threads (8: every message crosses partitions). Fewer than the 100,000 of the functional
/// test: on this 2-core machine 8 threads take 5 times as long as one.
#[test]
fn sim_parallel_p2p_stress_same_report_on_1_3_and_8_threads() {
    const RANKS: u32 = 8;
    const TOTAL: usize = 20_000;
    let reports: Vec<(u32, String)> = [1, 3, 8]
        .into_iter()
        .map(|threads| {
            let tally = Arc::new(Tally::default());
            let t = Arc::clone(&tally);
            let launcher = launcher(RANKS, Backend::Sim).strict(true);
            let start = Instant::now();
            let report = simulated_report("stress", launcher, threads, move |world| {
                stress_rank(world, STRESS_SEED, TOTAL, Arc::clone(&t))
            });
            println!("stress on {threads} thread(s): {:.2?}", start.elapsed());
            assert_eq!(tally.messages.load(Ordering::Relaxed), TOTAL as u64);
            (threads, report)
        })
        .collect();
    assert!(reports[0].1.ends_with("error: None"), "{}", reports[0].1);
    for (threads, report) in &reports[1..] {
        assert_eq!(report, &reports[0].1, "{threads} threads");
    }
}

/// The wildcard plan (every receive `(ANY_SOURCE, ANY_TAG)`): the same report sequentially
/// and on one thread per rank.
#[test]
fn sim_parallel_wildcard_receives_same_report_on_1_and_3_threads() {
    const RANKS: u32 = 3;
    const PER_RANK: usize = 2_000;
    let report = |threads| {
        let t = Arc::new(Tally::default());
        simulated_report(
            "wildcard",
            launcher(RANKS, Backend::Sim),
            threads,
            move |world| wildcard_rank(world, WILDCARD_SEED, PER_RANK, Arc::clone(&t)),
        )
    };
    let sequential = report(1);
    assert!(sequential.ends_with("error: None"), "{sequential}");
    assert_eq!(report(3), sequential);
}
