//! The yardstick of the simulator's speed: the same token ring as `examples/ring` under
//! `--backend sim`, on a bare discrete-event loop (`docs/peers.md`, "A bare event loop"): ranks are
//! futures, events are a binary heap of (time, sequence, rank), a message is a `u64` put in
//! its receiver's mailbox after a fixed 1 us, and there is no matching, protocol, model,
//! statistics or error handling. Whatever the simulator does beyond this is the product; the
//! ratio of the two rates says what that costs on this host today (`bench/sim-ring.sh` prints
//! it beside SMPI's rate).
//!
//! `cargo run --release -p mpsim-sim --example bare_ring -- 1024 1000`

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

/// One microsecond, the ring's link latency, in virtual nanoseconds.
const LATENCY_NS: u64 = 1_000;

/// What the ranks share: the global time, the event heap and one mailbox per rank.
struct World {
    now: u64,
    seq: u64,
    /// (arrival time, sequence number, receiver, value).
    events: BinaryHeap<Reverse<(u64, u64, u32, u64)>>,
    mailbox: Vec<Option<u64>>,
}

/// A rank's handle on the world.
struct Rank {
    me: u32,
    world: Rc<RefCell<World>>,
}

impl Rank {
    /// Sends `value` to `to`: it lands in `to`'s mailbox one latency from now.
    fn send(&self, to: u32, value: u64) {
        let mut w = self.world.borrow_mut();
        let (t, seq) = (w.now + LATENCY_NS, w.seq);
        w.seq += 1;
        w.events.push(Reverse((t, seq, to, value)));
    }

    /// Waits for a value in this rank's mailbox.
    async fn recv(&self) -> u64 {
        poll_fn(
            |_| match self.world.borrow_mut().mailbox[self.me as usize].take() {
                Some(v) => Poll::Ready(v),
                None => Poll::Pending,
            },
        )
        .await
    }
}

async fn ring(rank: Rank, n: u32, iters: u64) -> u64 {
    let (me, right) = (rank.me, (rank.me + 1) % n);
    let mut last = 0;
    for i in 0..iters {
        if me == 0 {
            rank.send(right, i * n as u64);
            last = rank.recv().await;
            assert_eq!(last, i * n as u64 + n as u64 - 1, "token damaged");
        } else {
            last = rank.recv().await;
            rank.send(right, last + 1);
        }
    }
    last
}

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<u64>());
    let ranks = args.next().unwrap_or(Ok(1024)).expect("RANKS is a number") as u32;
    let iters = args.next().unwrap_or(Ok(1000)).expect("ITERS is a number");
    assert!(ranks >= 2, "a ring needs 2 ranks");
    let start = Instant::now();
    let world = Rc::new(RefCell::new(World {
        now: 0,
        seq: 0,
        events: BinaryHeap::new(),
        mailbox: vec![None; ranks as usize],
    }));
    let mut ranks_futures: Vec<Pin<Box<dyn Future<Output = u64>>>> = (0..ranks)
        .map(|me| {
            let rank = Rank {
                me,
                world: Rc::clone(&world),
            };
            Box::pin(ring(rank, ranks, iters)) as Pin<Box<dyn Future<Output = u64>>>
        })
        .collect();
    let mut cx = Context::from_waker(Waker::noop());
    let mut done = 0;
    for f in &mut ranks_futures {
        if f.as_mut().poll(&mut cx).is_ready() {
            done += 1;
        }
    }
    let mut events = 0u64;
    loop {
        let next = world.borrow_mut().events.pop();
        let Some(Reverse((t, _, r, value))) = next else {
            break;
        };
        {
            let mut w = world.borrow_mut();
            w.now = t;
            w.mailbox[r as usize] = Some(value);
        }
        events += 1;
        if ranks_futures[r as usize].as_mut().poll(&mut cx).is_ready() {
            done += 1;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(done, ranks, "every rank finished");
    let msgs = ranks as u64 * iters;
    assert_eq!(events, msgs, "one event per message");
    println!(
        "bare: {ranks} ranks x {iters} iters = {msgs} msgs in {secs:.3} s host time = {:.0} msgs/s \
         (virtual end {} ns)",
        msgs as f64 / secs,
        world.borrow().now
    );
}
