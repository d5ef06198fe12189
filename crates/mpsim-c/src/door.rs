//! A rank's calls through the door: one [`call`] sends a head and payload to the proxy and
//! waits for its reply.
//!
//! This is the only place that knows the rank lives in a process of its own: the API above it
//! builds heads and payloads, and a fiber host would replace this file's body (a switch to the
//! proxy's stack instead of a hand-over through shared memory).
//!
//! It also measures the rank's compute: the CPU time of this process from the moment a call
//! returns to the next call goes with the next call (`CallHead::cpu_ns`), and the proxy charges
//! it when the run's compute is measured.
//!
//! Calls that need no answer ([`post`]) are queued in the slot instead of handed over, in a
//! simulated run: they cross with the next call that needs one, and the proxy executes them
//! in order before it, so virtual time, the order of events and every error are as if each had
//! been handed over on its own, at a fraction of the cost (a hand-over wakes another process).

use std::cell::Cell;

use bytemuck::Zeroable;
use mpsim_door::wire::{CallHead, Op, ReplyHead};

use crate::boot::booted;

thread_local! {
    static CPU_AT_RETURN: Cell<u64> = const { Cell::new(0) };
    /// Whether the run charges the rank's CPU time (until `MPI_Init` says: yes). Reading the
    /// process CPU clock is a system call, two per MPI call: skipped when nobody uses it.
    static MEASURE: Cell<bool> = const { Cell::new(true) };
    /// Whether calls that need no answer may be queued (`MPI_Init`'s reply says: in a
    /// simulated run; a run on threads hands each over at once, so a send leaves when made).
    static QUEUE: Cell<bool> = const { Cell::new(false) };
    /// The last request id this rank chose ([`request_id`]).
    static LAST_ID: Cell<i64> = const { Cell::new(mpsim_door::wire::RANK_IDS) };
}

/// Whether to measure the rank's compute from now on (`MPI_Init`'s reply says).
pub fn measure_compute(on: bool) {
    MEASURE.with(|m| m.set(on));
}

/// Whether calls that need no answer may be queued from now on (`MPI_Init`'s reply says).
pub fn queue_calls(on: bool) {
    QUEUE.with(|q| q.set(on));
}

/// A fresh request id, chosen by the rank (`wire::RANK_IDS`), for a call that may be queued.
pub fn request_id() -> i64 {
    LAST_ID.with(|c| {
        c.set(c.get() + 1);
        c.get()
    })
}

/// CPU time of this process, in nanoseconds.
fn cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The rank starts running now (its first turn).
pub fn started() {
    CPU_AT_RETURN.with(|c| c.set(cpu_ns()));
}

/// The library's own checks just read `bytes` bytes of the program's buffers (checksums of
/// buffers in flight, `state::Guard`): when that is long enough to matter, its CPU time is
/// left out of the program's compute, which the next call would otherwise charge.
pub fn checked(bytes: usize) {
    if bytes >= 4096 && MEASURE.with(Cell::get) {
        CPU_AT_RETURN.with(|c| c.set(cpu_ns()));
    }
}

/// A failed call: the MPI error class and the proxy's words for it.
#[derive(Debug)]
pub struct Failed {
    /// The error class.
    pub class: i32,
    /// What the proxy said.
    pub text: String,
}

/// Makes call `op` with arguments `a` and payload `payload` (its parts one after another);
/// the reply's payload goes to `sink`. Not started by `mpsim run`: an error, never a hang.
pub fn call(
    op: Op,
    a: &[i64],
    payload: &[&[u8]],
    sink: &mut dyn FnMut(&[u8]),
) -> Result<ReplyHead, Failed> {
    let Some(door) = booted() else {
        return Err(Failed {
            class: mpsim_door::wire::class::OTHER,
            text: "this program was not started by `mpsim run` (run it as `mpsim run -np N \
                   ./program`)"
                .into(),
        });
    };
    let mut head = head(op, a, payload);
    let measure = MEASURE.with(Cell::get);
    if measure {
        head.cpu_ns = cpu_ns().saturating_sub(CPU_AT_RETURN.with(Cell::get));
    }
    let gone = |_| Failed {
        class: mpsim_door::wire::class::INTERN,
        text: "the mpsim run is gone".into(),
    };
    door.channel
        .send(bytemuck::bytes_of(&head), payload, None)
        .map_err(gone)?;
    door.channel.wait_turn(None).map_err(gone)?;
    let mut reply = ReplyHead::zeroed();
    let mut text = Vec::new();
    let failed = Cell::new(false);
    door.channel
        .recv(
            bytemuck::bytes_of_mut(&mut reply),
            |h| {
                let r: ReplyHead = bytemuck::pod_read_unaligned(h);
                failed.set(r.rc != 0);
                r.payload_len as usize
            },
            |bytes| {
                if failed.get() {
                    text.extend_from_slice(bytes)
                } else {
                    sink(bytes)
                }
            },
            None,
        )
        .map_err(gone)?;
    if measure {
        CPU_AT_RETURN.with(|c| c.set(cpu_ns()));
    }
    if reply.rc != 0 {
        return Err(Failed {
            class: reply.rc,
            text: String::from_utf8_lossy(&text).into_owned(),
        });
    }
    Ok(reply)
}

fn head(op: Op, a: &[i64], payload: &[&[u8]]) -> CallHead {
    let mut head = CallHead {
        op: op as u32,
        payload_len: payload.iter().map(|p| p.len() as u64).sum(),
        site: crate::site::last(),
        ..CallHead::zeroed()
    };
    head.a[..a.len()].copy_from_slice(a);
    head
}

/// Makes call `op`, which needs no answer: queued when the run allows it, `queueable` (its
/// errors end the run, so the program never sees them) and there is room, handed over at once
/// (with the calls queued before it) otherwise. The proxy executes queued calls in order before
/// the next call handed over, so the call's effects and errors come in the program's order;
/// the program only runs on meanwhile, as it would after a call that returned at once.
pub fn post(op: Op, a: &[i64], payload: &[&[u8]], queueable: bool) -> Result<(), Failed> {
    if queueable && QUEUE.with(Cell::get) {
        let Some(door) = booted() else {
            return simple(op, a, payload).map(drop);
        };
        let mut h = head(op, a, payload);
        let measure = MEASURE.with(Cell::get);
        let now = if measure { cpu_ns() } else { 0 };
        if measure {
            h.cpu_ns = now.saturating_sub(CPU_AT_RETURN.with(Cell::get));
        }
        if door.channel.queue(bytemuck::bytes_of(&h), payload) {
            if measure {
                CPU_AT_RETURN.with(|c| c.set(now));
            }
            return Ok(());
        }
    }
    simple(op, a, payload).map(drop)
}

/// A call whose reply has no payload.
pub fn simple(op: Op, a: &[i64], payload: &[&[u8]]) -> Result<ReplyHead, Failed> {
    call(op, a, payload, &mut |_| {})
}

/// A call whose reply payload is collected.
pub fn collect(op: Op, a: &[i64], payload: &[&[u8]]) -> Result<(ReplyHead, Vec<u8>), Failed> {
    let mut out = Vec::new();
    let head = call(op, a, payload, &mut |b| out.extend_from_slice(b))?;
    Ok((head, out))
}
