//! What the backends built on an [`Endpoint`] share when they answer the seam's calls: the
//! calls that only act on the rank's endpoint ([`answer`]), and the looks a wait takes
//! ([`first_done`], [`probe_now`]). A backend runs them on its endpoint at the call's time and
//! then sends what they produced, as for every input.

use crate::error::Error;
use crate::matching::Pattern;
use crate::p2p::{Endpoint, ReqId, Status, discarded_receive};

use super::{Call, Payload, Probed, Started};

/// Answers `call` on `ep`, for every call but the sends and receives, which a backend posts
/// by its own path (they charge a request's overhead, and their messages go to its
/// transport), and the `NullRequest`, which touches no endpoint. A call that discards data (a
/// receive let go after it matched, a message dropped after a matched probe) hands back the
/// warning the run lists.
pub fn answer(ep: &mut Endpoint<Payload>, call: Call) -> (Result<Started, Error>, Option<String>) {
    let answer = match call {
        Call::MatchedRecv { message, capacity } => ep
            .mrecv(message, capacity)
            .map(|r| Started::Request(Some(r))),
        Call::Probe { pattern, take } => Ok(Started::Probed(probe_now(ep, &pattern, take))),
        Call::Test(req) => ep.test(req).map(Started::Completion),
        Call::IsDone(req) => Ok(Started::Flag(ep.is_done(req))),
        Call::Cancel(req) => ep.cancel(req).map(|()| Started::Done),
        Call::LetGo(req) => return (Ok(Started::Done), let_go(ep, req)),
        Call::DropMessage { message, status } => {
            // Received nowhere: the endpoint forgets it.
            let _ = ep.mrecv(message, 0).map(|req| ep.free(req));
            let Status {
                source, tag, bytes, ..
            } = status;
            let warning = format!(
                "rank {} dropped a message of {bytes} bytes (source {source}, tag {tag}) that a \
                 matched probe had taken, without receiving it: its data was discarded (receive \
                 it with mrecv or imrecv)",
                ep.rank()
            );
            return (Ok(Started::Done), Some(warning));
        }
        Call::BufferAttach(bytes) => ep.buffer_attach(bytes).map(|()| Started::Done),
        Call::BufferDetach => ep.buffer_detach().map(Started::Detached),
        Call::Send { .. } | Call::Recv { .. } | Call::NullRequest(_) => {
            super::wrong_answer("endpoint::answer", &call)
        }
    };
    (answer, None)
}

/// The program lets go of `req` ([`Call::LetGo`]): a receive not complete is withdrawn; the
/// request is freed. A receive that had matched a message holds its data for the wait that
/// will not come: the data is discarded, and the warning says so. Errors only mean the request
/// already completed.
fn let_go(ep: &mut Endpoint<Payload>, req: ReqId) -> Option<String> {
    if !ep.is_done(req) && ep.describe(req).is_some_and(|d| d.0 == "recv") {
        let _ = ep.cancel(req);
    }
    let matched = ep.matched_unread(req);
    let _ = ep.free(req);
    let (source, tag, context, bytes) = matched?;
    Some(discarded_receive(ep.rank(), source, tag, context, bytes))
}

/// Of `reqs`, the index of the first complete for the program and of the first not complete,
/// on `ep` (a wait on several, [`super::Wait::Requests`]).
pub fn first_done(ep: &Endpoint<Payload>, reqs: &[ReqId]) -> (Option<usize>, Option<usize>) {
    let (mut done, mut incomplete) = (None, None);
    for (i, &req) in reqs.iter().enumerate() {
        if ep.is_done(req) {
            done.get_or_insert(i);
        } else {
            incomplete.get_or_insert(i);
        }
        if done.is_some() && incomplete.is_some() {
            break;
        }
    }
    (done, incomplete)
}

/// What a probe for `pattern` finds on `ep` now: taken when `take`.
pub fn probe_now(ep: &mut Endpoint<Payload>, pattern: &Pattern, take: bool) -> Option<Probed> {
    if take {
        ep.improbe(pattern).map(|(id, status)| (status, Some(id)))
    } else {
        ep.iprobe(pattern).map(|status| (status, None))
    }
}
