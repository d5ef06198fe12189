//! The types of the built-in backends' fast paths: plain methods of the simulator's and the
//! threads backend's rank types that the API layer calls by their types (static dispatch,
//! `mpsim`'s `runtime` module) on the hottest calls, a blocking send or receive and its wait.
//! They do in one pass through the backend what the seam does in two (start, then test the
//! request the wait found complete), and copy a receive's data while they hold the endpoint.
//! A new backend needs none of this: the API layer reaches it through the seam alone.

use crate::error::Error;
use crate::matching::Pattern;
use crate::p2p::{Endpoint, RecvStart, ReqId, Status};

use super::Payload;

/// A blocking call as it started: finished at once with its status (an eager send's is
/// empty), or waiting for the request it posted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Posted {
    /// Finished when called.
    Done(Status),
    /// Waits for this request.
    Waiting(ReqId),
}

/// Why a wait on one request failed: the request's own error (it is finished: a receive's
/// `Truncate`), or the wait's (a deadlock, the run's end: the program still holds the
/// request).
#[derive(Debug, PartialEq)]
pub enum Failed {
    /// The request finished with this error.
    Request(Error),
    /// The wait ended with this error before the request completed.
    Wait(Error),
}

/// The requests of a wait on several after the one polled (`wait_all` in order), which it
/// appends to the list it is given; called only when the backend needs them (a deadlock
/// report names them all).
pub type RestOfWait<'a> = &'a dyn Fn(&mut Vec<ReqId>);

/// Posts a blocking receive for `pattern` into `buf` on `ep` ([`Endpoint::recv`]): the request
/// to wait for, or the message that matched at once finished into `buf`
/// ([`crate::p2p::Completion::finish_into`]). The body of both built-in backends' fast
/// receive.
#[inline]
pub fn recv_into(
    ep: &mut Endpoint<Payload>,
    pattern: Pattern,
    buf: &mut [u8],
    source_world: Option<u32>,
) -> Result<Posted, Error> {
    match ep.recv(pattern, buf.len(), source_world) {
        RecvStart::Posted(req) => Ok(Posted::Waiting(req)),
        RecvStart::Done(mut completion) => match completion.finish_into(Some(buf)) {
            Ok(status) => Ok(Posted::Done(status)),
            Err(e) => Err(*e),
        },
    }
}

/// A send's start ([`Endpoint::start_send`]) as a blocking call's: the request to wait for, or done
/// at once with the empty status.
#[inline]
pub fn sent(started: Result<Option<ReqId>, Error>) -> Result<Posted, Error> {
    match started {
        Ok(Some(req)) => Ok(Posted::Waiting(req)),
        Ok(None) => Ok(Posted::Done(Status::default())),
        Err(e) => Err(e),
    }
}
