//! A half-duplex channel over one slot: the rank sends a call, the proxy answers, the rank
//! runs on.
//!
//! The slot's futex word says whose turn it is. A message is a fixed head and a payload of any
//! length: the first chunk carries the head and as much payload as fits, each further chunk
//! only payload; between chunks the reader hands the turn back (an acknowledgement), and after
//! the last one it keeps it, since answering is its turn. So a call and its answer cost two
//! hand-overs when they fit the data area, plus two per extra chunk.
//!
//! Waiting spins briefly (a hand-over between two processes on different cores is then a few
//! hundred nanoseconds) and then sleeps on the futex, so a rank that computes for long, or a
//! proxy waiting for it, costs no CPU.

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

/// Spins before sleeping on the futex.
const SPINS: u32 = 2_000;
/// How often a waiting proxy checks that the rank's process still lives.
const LIVENESS_EVERY: Duration = Duration::from_millis(100);

/// One side's end of a slot.
#[derive(Clone, Copy)]
pub struct Channel<'s> {
    slot: Slot<'s>,
    side: Side,
}

impl<'s> Channel<'s> {
    /// This side's end of `slot`.
    pub fn new(slot: Slot<'s>, side: Side) -> Self {
        Channel { slot, side }
    }

    /// The slot.
    pub fn slot(&self) -> Slot<'s> {
        self.slot
    }

    /// Hands the turn to the other side (unless the rank is gone: the zygote's mark stays).
    pub fn pass(&self) {
        let word = &self.slot.control().turn;
        let _ = word.compare_exchange(
            self.side.mine(),
            self.side.theirs(),
            Ordering::AcqRel,
            Ordering::Acquire,
        );
        AsFutex::<Shared>::as_futex(word).wake(i32::MAX);
    }

    /// Waits for this side's turn. `alive` (the proxy's) is asked every 100 ms whether the
    /// other side can still answer; `false` ends the wait with [`Gone`].
    pub fn wait_turn(&self, alive: Option<&dyn Fn() -> bool>) -> Result<(), Gone> {
        let word = &self.slot.control().turn;
        let mine = self.side.mine();
        for _ in 0..SPINS {
            match word.load(Ordering::Acquire) {
                v if v == mine => return Ok(()),
                turn::DEAD => return Err(Gone),
                _ => std::hint::spin_loop(),
            }
        }
        let futex = AsFutex::<Shared>::as_futex(word);
        loop {
            let v = word.load(Ordering::Acquire);
            if v == mine {
                return Ok(());
            }
            if v == turn::DEAD {
                return Err(Gone);
            }
            match alive {
                Some(alive) => {
                    let _ = futex.wait_for(v, LIVENESS_EVERY);
                    if word.load(Ordering::Acquire) != mine && !alive() {
                        return Err(Gone);
                    }
                }
                None => {
                    let _ = futex.wait(v);
                }
            }
        }
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
        assert!(head.len() <= cap, "a head larger than the data area");
        let data = self.slot.data();
        // SAFETY: our turn: the data area is ours to write, `head.len() <= cap`.
        unsafe { std::ptr::copy_nonoverlapping(head.as_ptr(), data, head.len()) };
        let mut used = head.len();
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
        if len < head.len() || len > cap {
            return Err(Gone);
        }
        // SAFETY: our turn; `head.len() <= len <= cap`.
        unsafe { std::ptr::copy_nonoverlapping(data, head.as_mut_ptr(), head.len()) };
        let mut left = payload_len(head);
        let mut from = head.len();
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
