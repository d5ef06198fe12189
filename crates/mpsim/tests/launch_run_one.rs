//! `mpsim::rank::run_one`: one rank run on a runtime its caller made, on the caller's thread,
//! as an MPI backend (a rank per process) or the C interface will run ranks.
//!
//! The runtime here is the smallest real one, on the backend seam alone: each rank's protocol
//! endpoint on the thread that runs the rank, and an inbox per rank (a mutex and a condition
//! variable) that peers push packets into. Its `block` sleeps on the condition variable until a
//! packet comes: the tests show that `run_one` blocks there until then, and what it returns.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::task::Poll;
use std::time::Instant;

use mpsim::rank::{RankRuntime, run_one};
use mpsim::{Comm, Error};
use mpsim_proto::p2p::{Config, Endpoint, Event, Packet, Queued, SendCall};
use mpsim_proto::runtime::endpoint::{answer, first_done, probe_now};
use mpsim_proto::runtime::{Call, Needs, Payload, Started, Wait, Waited, Work};

/// What peers left for one rank: packets by sender.
#[derive(Default)]
struct Inbox {
    packets: Mutex<Vec<(u32, Packet<Payload>)>>,
    /// Notified when a packet comes.
    arrived: Condvar,
}

/// Every rank's inbox, shared by the ranks' threads.
type Net = Arc<Vec<Inbox>>;

/// One rank of a run whose ranks exchange packets through a [`Net`].
struct LinkedRank {
    rank: u32,
    net: Net,
    endpoint: RefCell<Endpoint<Payload>>,
    /// Polls answered `Pending` (the rank's thread then blocks in `run_one`).
    pending: Cell<u32>,
    /// The code of the program's `abort`, once called.
    aborted: Cell<Option<i32>>,
    /// Told once, the first time the rank waits (for a test that starts a peer only then).
    first_wait: RefCell<Option<mpsc::Sender<()>>>,
    start: Instant,
}

impl LinkedRank {
    fn new(rank: u32, net: &Net) -> Rc<Self> {
        Rc::new(LinkedRank {
            rank,
            net: Arc::clone(net),
            endpoint: RefCell::new(Endpoint::new(rank, Config::default())),
            pending: Cell::new(0),
            aborted: Cell::new(None),
            first_wait: RefCell::new(None),
            start: Instant::now(),
        })
    }

    /// Runs `f` on the endpoint after taking in what arrived, then sends what it produced.
    fn on_endpoint<R>(&self, f: impl FnOnce(&mut Endpoint<Payload>) -> R) -> R {
        let mut ep = self.endpoint.borrow_mut();
        let arrived = std::mem::take(&mut *self.net[self.rank as usize].packets.lock().unwrap());
        for (from, packet) in arrived {
            ep.handle_packet(from, packet);
        }
        let out = f(&mut ep);
        if let Some(mut outbox) = ep.take_outputs() {
            while let Some(t) = outbox.poll_transmit() {
                let inbox = &self.net[t.to as usize];
                inbox.packets.lock().unwrap().push((self.rank, t.packet));
                inbox.arrived.notify_one();
            }
            while let Some(event) = outbox.poll_event() {
                if let Event::Fatal(e) = event {
                    panic!("the protocol failed: {e}");
                }
            }
        }
        out
    }

    /// A wait's answer: ready with `found`, or pending (counted; the first one told).
    fn answer_wait(&self, found: Option<Waited>) -> Poll<Result<Waited, Error>> {
        if let Some(waited) = found {
            return Poll::Ready(Ok(waited));
        }
        self.pending.set(self.pending.get() + 1);
        if let Some(told) = self.first_wait.borrow_mut().take() {
            told.send(()).unwrap();
        }
        Poll::Pending
    }
}

impl RankRuntime for LinkedRank {
    fn rank(&self) -> u32 {
        self.rank
    }

    fn size(&self) -> u32 {
        self.net.len() as u32
    }

    fn start(&self, call: Call) -> Result<Started, Error> {
        self.on_endpoint(|ep| match call {
            Call::Send {
                call,
                mode,
                to,
                envelope,
                payload,
                blocking,
            } => {
                let send = SendCall {
                    call,
                    mode,
                    to,
                    envelope,
                    payload,
                    blocking,
                };
                ep.start_send(send, Queued).map(Started::Request)
            }
            Call::Recv {
                pattern,
                capacity,
                source_world,
                ..
            } => Ok(Started::Request(Some(ep.irecv_from(
                pattern,
                capacity,
                source_world,
            )))),
            Call::NullRequest(_) => Ok(Started::Done),
            call => answer(ep, call).0,
        })
    }

    fn poll_wait(&self, wait: Wait<'_>) -> Poll<Result<Waited, Error>> {
        let found = self.on_endpoint(|ep| match wait {
            Wait::Request { req, .. } => ep.take_if_done(req).map(Waited::Completion),
            Wait::Requests { reqs, needs, .. } => match (needs, first_done(ep, reqs)) {
                (Needs::Any, (Some(i), _)) | (Needs::All, (Some(i), None)) => {
                    Some(Waited::Index(i))
                }
                _ => None,
            },
            Wait::Probe { pattern, take, .. } => probe_now(ep, pattern, take).map(Waited::Probed),
            Wait::BufferFree => (ep.buffer_in_use() == 0).then_some(Waited::Done),
        });
        self.answer_wait(found)
    }

    fn block(&self) {
        let inbox = &self.net[self.rank as usize];
        let packets = inbox.packets.lock().unwrap();
        drop(inbox.arrived.wait_while(packets, |p| p.is_empty()).unwrap());
    }

    fn idle(&self, _call: &'static str) {
        std::thread::yield_now();
    }

    fn compute(&self, _work: Work) {}

    fn abort(&self, code: i32) {
        self.aborted.set(Some(code));
    }

    fn now_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }
}

/// `size` inboxes.
fn net(size: usize) -> Net {
    Arc::new((0..size).map(|_| Inbox::default()).collect())
}

/// Two ranks, each run by `run_one` on a thread of its own with its own runtime: rank 0 waits
/// for a number that rank 1 sends only once rank 0 has blocked, so rank 0 goes on when its
/// runtime's `block` returns, and each returns what it received. Afterwards each runtime's only owner is
/// the test (run_one has dropped the program and its communicators).
#[test]
fn run_one_blocks_a_rank_until_its_runtime_returns_and_returns_its_value() {
    let net = net(2);
    let (told, parked) = mpsc::channel();
    let rank0 = {
        let net = Arc::clone(&net);
        std::thread::spawn(move || {
            let rt = LinkedRank::new(0, &net);
            *rt.first_wait.borrow_mut() = Some(told);
            let got = run_one(rt.clone(), |world: Comm| async move {
                let mut n = [0u64];
                world.recv(&mut n, 1, 5).await?;
                world.send(&[n[0] + 1], 1, 6).await?;
                Ok(n[0])
            });
            (got, rt.pending.get(), Rc::strong_count(&rt))
        })
    };
    parked.recv().expect("rank 0 waits for its number");
    let rank1 = std::thread::spawn(move || {
        let rt = LinkedRank::new(1, &net);
        let got = run_one(rt.clone(), |world: Comm| async move {
            world.send(&[41u64], 0, 5).await?;
            let mut n = [0u64];
            world.recv(&mut n, 0, 6).await?;
            Ok(n[0])
        });
        (got, Rc::strong_count(&rt))
    });
    let (got0, pending0, owners0) = rank0.join().unwrap();
    let (got1, owners1) = rank1.join().unwrap();
    assert_eq!((got0, got1), (Ok(41), Ok(42)));
    assert!(pending0 >= 1, "rank 0 blocked at least once");
    assert_eq!((owners0, owners1), (1, 1));
}

/// A program that calls `abort(code)`: the runtime's `abort` is called, and `run_one` returns
/// `Abort` naming the rank and the code (a real runtime's `abort` may end the process).
#[test]
fn run_one_ends_a_rank_that_aborts_with_its_code() {
    let rt = LinkedRank::new(0, &net(1));
    let ended: mpsim::Result<()> = run_one(rt.clone(), |world: Comm| async move {
        match world.abort(3).await {}
    });
    let abort = Error::Abort {
        rank: 0,
        code: 3,
        time_ns: None,
    };
    assert_eq!((ended, rt.aborted.get()), (Err(abort), Some(3)));
}

/// A program's own failure comes back naming its rank, as the launcher's backends name it; a
/// panic comes back as `Aborted` with its message.
#[test]
fn run_one_returns_a_programs_failure_naming_its_rank() {
    let rt = LinkedRank::new(0, &net(1));
    let failed: mpsim::Result<()> =
        run_one(rt, |_world: Comm| async move { Err("no input".into()) });
    let text = failed.unwrap_err().to_string();
    assert!(
        text.contains("rank 0") && text.contains("no input"),
        "{text}"
    );

    let rt = LinkedRank::new(0, &net(1));
    let panicked: mpsim::Result<()> = run_one(rt, |_world: Comm| async move {
        panic!("a bug in the program");
    });
    match panicked {
        Err(Error::Aborted { rank: 0, cause }) => assert!(cause.contains("a bug in the program")),
        other => panic!("not a panic's error: {other:?}"),
    }
}
