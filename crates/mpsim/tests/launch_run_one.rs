//! `mpsim::rank::run_one`: one rank run on a runtime its caller made, on the caller's thread,
//! as an MPI backend (a rank per process) or the C interface will run ranks.
//!
//! The runtime here is the smallest real one: each rank's protocol endpoint on the thread that
//! runs the rank, and an inbox per rank (a mutex) that peers push packets into, waking the
//! waker the rank's last pending poll left there. Nothing else wakes a rank: the tests show
//! that `run_one` parks until that waker is woken, and what it returns.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use mpsim::rank::{RankRuntime, run_one};
use mpsim::{Comm, Error};
use mpsim_proto::deadlock::Awaited;
use mpsim_proto::p2p::{Config, Endpoint, Event, Packet, ReqId};
use mpsim_proto::runtime::Payload;

/// What peers left for one rank: packets by sender, and the waker of its pending poll.
#[derive(Default)]
struct Inbox {
    packets: Vec<(u32, Packet<Payload>)>,
    waker: Option<Waker>,
}

/// Every rank's inbox, shared by the ranks' threads.
type Net = Arc<Vec<Mutex<Inbox>>>;

/// One rank of a run whose ranks exchange packets through a [`Net`].
struct LinkedRank {
    rank: u32,
    net: Net,
    endpoint: RefCell<Endpoint<Payload>>,
    arrivals: Cell<u64>,
    /// Polls answered `Pending` (the rank's thread then parks in `run_one`).
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
            arrivals: Cell::new(0),
            pending: Cell::new(0),
            aborted: Cell::new(None),
            first_wait: RefCell::new(None),
            start: Instant::now(),
        })
    }

    /// Ready once `done` holds of the endpoint, after taking in what arrived; otherwise leaves
    /// `cx`'s waker in the inbox first, so that a packet pushed after the look wakes it.
    fn wait_until(
        &self,
        cx: &mut Context<'_>,
        mut done: impl FnMut(&mut Endpoint<Payload>) -> bool,
    ) -> Poll<Result<(), Error>> {
        self.net[self.rank as usize].lock().unwrap().waker = Some(cx.waker().clone());
        let mut ready = false;
        self.with_endpoint(&mut |ep| ready = done(ep));
        if ready {
            return Poll::Ready(Ok(()));
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

    fn with_endpoint(&self, f: &mut dyn FnMut(&mut Endpoint<Payload>)) {
        let mut ep = self.endpoint.borrow_mut();
        let arrived = std::mem::take(&mut self.net[self.rank as usize].lock().unwrap().packets);
        for (from, packet) in arrived {
            if matches!(packet, Packet::Message { .. }) {
                self.arrivals.set(self.arrivals.get() + 1);
            }
            ep.handle_packet(from, packet);
        }
        f(&mut ep);
        while let Some(t) = ep.poll_transmit() {
            let waker = {
                let mut inbox = self.net[t.to as usize].lock().unwrap();
                inbox.packets.push((self.rank, t.packet));
                inbox.waker.take()
            };
            if let Some(waker) = waker {
                waker.wake();
            }
        }
        while let Some(event) = ep.poll_event() {
            if let Event::Fatal(e) = event {
                panic!("the protocol failed: {e}");
            }
        }
    }

    fn poll_done(
        &self,
        req: ReqId,
        _call: &'static str,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), Error>> {
        self.wait_until(cx, |ep| ep.is_done(req))
    }

    fn arrivals(&self) -> u64 {
        self.arrivals.get()
    }

    fn poll_arrival(
        &self,
        seen: u64,
        _call: &'static str,
        _awaited: Awaited,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), Error>> {
        self.wait_until(cx, |_| self.arrivals.get() > seen)
    }

    fn poll_buffer_free(&self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        self.wait_until(cx, |ep| ep.buffer_in_use() == 0)
    }

    fn compute(&self, _d: Duration) {}

    fn compute_flops(&self, _flops: u64) {}

    fn idle_poll(&self, _call: &'static str) {
        std::thread::yield_now();
    }

    fn abort(&self, code: i32) {
        self.aborted.set(Some(code));
    }

    fn discarded(&self, _warning: String) {}

    fn now_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }
}

/// `size` inboxes.
fn net(size: usize) -> Net {
    Arc::new((0..size).map(|_| Mutex::default()).collect())
}

/// Two ranks, each run by `run_one` on a thread of its own with its own runtime: rank 0 waits
/// for a number that rank 1 sends only once rank 0 has parked, so rank 0 is woken by its
/// runtime's waker, and each returns what it received. Afterwards each runtime's only owner is
/// the test (run_one has dropped the program and its communicators).
#[test]
fn run_one_parks_a_rank_until_its_runtime_wakes_it_and_returns_its_value() {
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
    assert!(pending0 >= 1, "rank 0 parked at least once");
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
