//! A half-duplex channel over one slot: the rank sends a call, the proxy answers, the rank
//! runs on.
//!
//! The slot's futex word says whose turn it is. A message is a fixed head and a payload of any
//! length: the first chunk carries the head and as much payload as fits, each further chunk
//! only payload; between chunks the reader hands the turn back (an acknowledgement), and after
//! the last one it keeps it, since answering is its turn. So a call and its answer cost two
//! hand-overs when they fit the data area, plus two per extra chunk.
//!
//! Messages that need no answer can be queued ([`Channel::queue`]) instead: they wait in the
//! data area, in order, and cross with the next message sent, ahead of its head; the receiver
//! takes them ([`Channel::take_queued`]) before that message. A call that cannot block then
//! costs no hand-over at all.
//!
//! Waiting spins briefly (a hand-over between two processes on different cores is then a few
//! hundred nanoseconds) and then sleeps on the futex, so a rank that computes for long, or a
//! proxy waiting for it, costs no CPU. A side that sleeps says so in the turn word, and the
//! other side makes the `futex` wake system call only then. When both sides run on one CPU
//! ([`Channel::on_one_cpu`]) a spin could only delay the other side: they sleep at once, and a
//! hand-over is a wake and a switch on that CPU.

use std::sync::atomic::Ordering;
use std::time::Duration;

use linux_futex::{AsFutex, Shared};

use crate::segment::{Slot, turn};

/// Which side of the channel this process is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The rank (the C program's process).
    Rank,
    /// The proxy (in the mpsim run).
    Proxy,
}

impl Side {
    fn mine(self) -> u32 {
        match self {
            Side::Rank => turn::RANK,
            Side::Proxy => turn::PROXY,
        }
    }

    fn theirs(self) -> u32 {
        match self {
            Side::Rank => turn::PROXY,
            Side::Proxy => turn::RANK,
        }
    }
}

/// The other side is gone: its process ended (the zygote marked the slot), or stopped
/// answering because its process is no more ([`Channel::wait_turn`]'s liveness check).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gone;

/// Marks a slot's rank as gone (the zygote, once it reaped the process) and wakes its proxy.
pub fn mark_dead(control: &crate::segment::SlotControl) {
    control.turn.store(turn::DEAD, Ordering::Release);
    AsFutex::<Shared>::as_futex(&control.turn).wake(i32::MAX);
}

/// The bit of the turn word a waiter sets before it sleeps on the futex: the side that passes
/// the turn makes the `futex` wake system call only when it is set.
const SLEEPING: u32 = 1 << 8;

/// How long each side spins before it sleeps, in pauses (about 37 ns each on this project's
/// 2-core host). The proxy waits for a rank that is running and usually answers within
/// microseconds, but a rank woken from its sleep may take tens of them to be scheduled; a
/// rank waits for a reply that, for any call that blocks, comes only after other ranks have
/// run, and its spinning would take the core they need (2,000 pauses on both sides made a
/// call cost 40 us, and 60 times that with the cores shared), so it spins only briefly.
/// Chosen by measuring `bench/c-ring.sh` with 16 and 1,024 ranks on a loaded host (docs/c.md).
fn spins(side: Side) -> u32 {
    match side {
        Side::Rank => 50,
        Side::Proxy => 3_000,
    }
}

/// Room a queue leaves in the data area for the head of the message that carries it.
const HEAD_ROOM: usize = 1024;
/// How often a waiting proxy checks that the rank's process still lives.
const LIVENESS_EVERY: Duration = Duration::from_millis(100);

/// One side's end of a slot.
#[derive(Clone, Copy)]
pub struct Channel<'s> {
    slot: Slot<'s>,
    side: Side,
    /// Pauses to spin before sleeping.
    spins: u32,
}

impl<'s> Channel<'s> {
    /// This side's end of `slot`.
    pub fn new(slot: Slot<'s>, side: Side) -> Self {
        Channel {
            slot,
            side,
            spins: spins(side),
        }
    }

    /// This end, for a run whose sides share one CPU (`Header::one_cpu`): it never spins.
    pub fn on_one_cpu(self, one_cpu: bool) -> Self {
        Channel {
            spins: if one_cpu { 0 } else { self.spins },
            ..self
        }
    }

    /// The slot.
    pub fn slot(&self) -> Slot<'s> {
        self.slot
    }

    /// Hands the turn to the other side (unless the rank is gone: the zygote's mark stays),
    /// waking it only if it sleeps.
    pub fn pass(&self) {
        let word = &self.slot.control().turn;
        let mine = self.side.mine();
        let mut v = word.load(Ordering::Relaxed);
        loop {
            if v & !SLEEPING != mine {
                // Gone (DEAD), or not ours to pass.
                return;
            }
            match word.compare_exchange_weak(
                v,
                self.side.theirs(),
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(now) => v = now,
            }
        }
        if v & SLEEPING != 0 {
            AsFutex::<Shared>::as_futex(word).wake(i32::MAX);
        }
    }

    /// Waits for this side's turn. `alive` (the proxy's) is asked every 100 ms whether the
    /// other side can still answer; `false` ends the wait with [`Gone`].
    pub fn wait_turn(&self, alive: Option<&dyn Fn() -> bool>) -> Result<(), Gone> {
        let word = &self.slot.control().turn;
        let mine = self.side.mine();
        let theirs = self.side.theirs();
        // The turn is this side's whether or not the other side sleeps.
        for _ in 0..self.spins {
            match word.load(Ordering::Acquire) {
                v if v & !SLEEPING == mine => return Ok(()),
                turn::DEAD => return Err(Gone),
                _ => std::hint::spin_loop(),
            }
        }
        let futex = AsFutex::<Shared>::as_futex(word);
        loop {
            let v = word.load(Ordering::Acquire);
            if v & !SLEEPING == mine {
                return Ok(());
            }
            if v == turn::DEAD {
                return Err(Gone);
            }
            // Say that this side sleeps before sleeping; the other side wakes it when it
            // passes the turn.
            if v == theirs
                && word
                    .compare_exchange(v, theirs | SLEEPING, Ordering::AcqRel, Ordering::Acquire)
                    .is_err()
            {
                continue;
            }
            let v = theirs | SLEEPING;
            match alive {
                Some(alive) => {
                    let _ = futex.wait_for(v, LIVENESS_EVERY);
                    let now = word.load(Ordering::Acquire);
                    if now & !SLEEPING != mine && now != turn::DEAD && !alive() {
                        return Err(Gone);
                    }
                }
                None => {
                    let _ = futex.wait(v);
                }
            }
        }
    }

    /// Queues a message that needs no answer (the rank's side, in its turn): `head` and the
    /// `payload` parts are appended to the data area, where they wait for the next message
    /// [`Channel::send`] sends, which carries them. `false` (nothing queued) when they do not fit
    /// with room left for that message's head.
    pub fn queue(&self, head: &[u8], payload: &[&[u8]]) -> bool {
        let control = self.slot.control();
        let at = control.queued.load(Ordering::Relaxed) as usize;
        let len = head.len() + payload.iter().map(|p| p.len()).sum::<usize>();
        if at + len + HEAD_ROOM > self.slot.capacity() {
            return false;
        }
        let data = self.slot.data();
        let mut used = at;
        for part in std::iter::once(head).chain(payload.iter().copied()) {
            // SAFETY: our turn; `used + part.len() <= at + len < capacity`.
            unsafe { std::ptr::copy_nonoverlapping(part.as_ptr(), data.add(used), part.len()) };
            used += part.len();
        }
        control.queued.store(used as u32, Ordering::Relaxed);
        true
    }

    /// The messages queued before the current one (after [`Channel::wait_turn`], before
    /// [`Channel::recv`]), given to `sink` as they lie, one after another. Also usable when
    /// the other side is gone, to see what it had queued.
    pub fn take_queued(&self, sink: impl FnOnce(&[u8])) {
        let control = self.slot.control();
        let n = (control.queued.load(Ordering::Relaxed) as usize).min(self.slot.capacity());
        // SAFETY: our turn (or the other side is gone); `n <= capacity`.
        sink(unsafe { std::slice::from_raw_parts(self.slot.data(), n) });
    }

    /// Sends a message (it must be this side's turn): `head`, then the `payload` parts one
    /// after another. On return the turn is the other side's.
    pub fn send(
        &self,
        head: &[u8],
        payload: &[&[u8]],
        alive: Option<&dyn Fn() -> bool>,
    ) -> Result<(), Gone> {
        let cap = self.slot.capacity();
        let at = self.slot.control().queued.load(Ordering::Relaxed) as usize;
        assert!(at + head.len() <= cap, "a head larger than the data area");
        let data = self.slot.data();
        // SAFETY: our turn: the data area is ours to write, `at + head.len() <= cap`.
        unsafe { std::ptr::copy_nonoverlapping(head.as_ptr(), data.add(at), head.len()) };
        let mut used = at + head.len();
        let mut parts = payload.iter().map(|p| &p[..]).filter(|p| !p.is_empty());
        let mut rest: &[u8] = parts.next().unwrap_or(&[]);
        loop {
            while !rest.is_empty() && used < cap {
                let n = rest.len().min(cap - used);
                // SAFETY: `used + n <= cap`, our turn.
                unsafe { std::ptr::copy_nonoverlapping(rest.as_ptr(), data.add(used), n) };
                used += n;
                rest = &rest[n..];
                if rest.is_empty() {
                    rest = parts.next().unwrap_or(&[]);
                }
            }
            let more = !rest.is_empty();
            let control = self.slot.control();
            control.len.store(used as u32, Ordering::Relaxed);
            control.more.store(more as u32, Ordering::Relaxed);
            self.pass();
            if !more {
                return Ok(());
            }
            self.wait_turn(alive)?;
            used = 0;
        }
    }

    /// Receives a message (after [`Channel::wait_turn`]): its head into `head`, then its
    /// payload, `payload_len(head)` bytes, given to `sink` piece by piece in order. On return
    /// the turn is still this side's.
    pub fn recv(
        &self,
        head: &mut [u8],
        payload_len: impl FnOnce(&[u8]) -> usize,
        mut sink: impl FnMut(&[u8]),
        alive: Option<&dyn Fn() -> bool>,
    ) -> Result<(), Gone> {
        let data = self.slot.data();
        let control = self.slot.control();
        let mut len = control.len.load(Ordering::Relaxed) as usize;
        let cap = self.slot.capacity();
        // The head follows the queued messages, which the receiver has taken by now.
        let at = control.queued.swap(0, Ordering::Relaxed) as usize;
        if at + head.len() > len || len > cap {
            return Err(Gone);
        }
        // SAFETY: our turn; `at + head.len() <= len <= cap`.
        unsafe { std::ptr::copy_nonoverlapping(data.add(at), head.as_mut_ptr(), head.len()) };
        let mut left = payload_len(head);
        let mut from = at + head.len();
        loop {
            let n = (len - from).min(left);
            if n > 0 {
                // SAFETY: `from + n <= len <= cap`, our turn.
                sink(unsafe { std::slice::from_raw_parts(data.add(from), n) });
                left -= n;
            }
            if control.more.load(Ordering::Relaxed) == 0 {
                return if left == 0 { Ok(()) } else { Err(Gone) };
            }
            self.pass();
            self.wait_turn(alive)?;
            len = control.len.load(Ordering::Relaxed) as usize;
            if len > cap {
                return Err(Gone);
            }
            from = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment::Segment;

    /// Queued messages cross ahead of the next one sent, in order, and the receiver finds that
    /// message's head after them, also when its payload takes several chunks; each side sleeps
    /// and is woken (the rank's side waits here long past its spin).
    #[test]
    fn queued_messages_cross_with_the_next_one_in_order() {
        let segment = Segment::create(1, 8192).expect("a segment");
        let slot = segment.slot(0);
        let big: Vec<u8> = (0..20_000u32).map(|i| i as u8).collect();
        std::thread::scope(|s| {
            let rank = s.spawn(|| {
                let ch = Channel::new(slot, Side::Rank);
                ch.wait_turn(None).expect("the first turn");
                assert!(ch.queue(b"head1", &[b"ab"]));
                assert!(ch.queue(b"head2", &[b"", b"cde"]));
                // Too large to queue: it would leave no room for the next head.
                assert!(!ch.queue(&[0; 8], &[&[0; 8192]]));
                ch.send(b"HEAD", &[&big], None).expect("sent");
                ch.wait_turn(None).expect("the reply's turn");
                let mut head = [0u8; 2];
                ch.recv(&mut head, |_| 0, |_| {}, None).expect("the reply");
                assert_eq!(&head, b"ok");
            });
            let proxy = Channel::new(slot, Side::Proxy);
            std::thread::sleep(Duration::from_millis(50));
            proxy.pass();
            proxy.wait_turn(None).expect("the call");
            let mut queued = Vec::new();
            proxy.take_queued(|q| queued.extend_from_slice(q));
            assert_eq!(queued, b"head1abhead2cde");
            let mut head = [0u8; 4];
            let mut payload = Vec::new();
            proxy
                .recv(
                    &mut head,
                    |_| big.len(),
                    |b| payload.extend_from_slice(b),
                    None,
                )
                .expect("the call's payload");
            assert_eq!((&head, payload == big), (b"HEAD", true));
            // Nothing queued ahead of the reply.
            std::thread::sleep(Duration::from_millis(50));
            proxy.send(b"ok", &[], None).expect("the reply");
            rank.join().expect("the rank's side");
        });
    }
}
