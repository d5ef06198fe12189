//! [`Outbox`]: where an [`Endpoint`](super::Endpoint) keeps its outputs until the driver drains
//! them, and how a driver of many endpoints lends one outbox around so that no endpoint holds
//! output memory between inputs.
//!
//! An endpoint has no outbox (one null pointer) until its first output. A driver that drains an
//! endpoint after every input (a simulator holding millions of them) keeps one spare outbox:
//! [`Endpoint::lend_outbox`](super::Endpoint::lend_outbox) before an input,
//! [`Endpoint::take_outputs`](super::Endpoint::take_outputs) after it, drain, and keep the
//! outbox for the next loan. Its storage then moves from endpoint to endpoint instead of each
//! keeping queues of its own. A driver of one endpoint (the threads backend) lends it back the
//! outbox it took, drained.
//!
//! Completions are not in it: an endpoint tells them by one flag beside the outbox, which a
//! driver takes with [`Endpoint::take_completed`](super::Endpoint::take_completed) after every
//! input, with or without an outbox.

use std::collections::VecDeque;

use super::Event;
use crate::p2p::packet::Transmit;

/// An endpoint's outputs in order: packets to send, then events (drain in that order).
pub struct Outbox<P> {
    pub(super) transmits: VecDeque<Transmit<P>>,
    pub(super) events: VecDeque<Event>,
}

impl<P> Default for Outbox<P> {
    fn default() -> Self {
        Outbox {
            transmits: VecDeque::new(),
            events: VecDeque::new(),
        }
    }
}

impl<P> Outbox<P> {
    /// The next packet to deliver, in order.
    #[inline]
    pub fn poll_transmit(&mut self) -> Option<Transmit<P>> {
        self.transmits.pop_front()
    }

    /// The next event, once the transmits are drained.
    #[inline]
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Whether both queues are empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.transmits.is_empty() && self.events.is_empty()
    }
}

impl<P> super::Endpoint<P> {
    /// Queues a packet to send (in the outbox, allocated at the first output).
    #[inline]
    pub(super) fn push_transmit(&mut self, transmit: Transmit<P>) {
        self.out
            .get_or_insert_with(Box::default)
            .transmits
            .push_back(transmit);
    }

    /// Queues an event (in the outbox, allocated at the first output).
    #[inline]
    pub(super) fn push_event(&mut self, event: Event) {
        self.out
            .get_or_insert_with(Box::default)
            .events
            .push_back(event);
    }

    /// Lends the endpoint the spare outbox `spare` (drained) for the outputs of the inputs that
    /// follow, unless it has one. After them, [`Endpoint::take_outputs`](super::Endpoint::take_outputs).
    #[inline]
    pub fn lend_outbox(&mut self, spare: &mut Option<Box<Outbox<P>>>) {
        if self.out.is_none() {
            self.out = spare.take();
        }
    }

    /// Takes the endpoint's outbox with the outputs in it: the driver drains them from there
    /// ([`Outbox::poll_transmit`], then [`Outbox::poll_event`]) and keeps it to lend again. The
    /// endpoint then holds no output memory until its next output or loan. A flagged
    /// completion is not in it: take it with `take_completed` (module doc).
    #[inline]
    pub fn take_outputs(&mut self) -> Option<Box<Outbox<P>>> {
        self.out.take()
    }
}
