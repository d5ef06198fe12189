//! Point-to-point on a communicator's hidden collective context, for the collectives
//! (`crate::coll`): thin, crate-private wrappers over the same paths the public `isend`,
//! `irecv` and `wait_all` take (`Comm::post_send`, `Comm::post_recv`, `wait_all_in`), on the
//! context `mix(id, 1)` (module docs of [`super`], "Context ids") that no user receive can
//! name. The collectives go through these and nothing lower, so that they run unchanged on
//! whatever carries point-to-point underneath.
//!
//! Requests made here are named after the collective (`"bcast"`, `"allreduce"`): errors,
//! deadlock reports, wait reports and traces name the program's call, not a hidden send.

use mpsim_proto::error::Result;
use mpsim_proto::matching::Pattern;
use mpsim_proto::p2p::{SendMode, Status};

use super::*;
use crate::coll::algo::Forced;
use crate::request::{Names, Request, wait_all_in};

impl Comm {
    /// A standard send of `bytes` to communicator rank `dest` (a member: the collectives only
    /// name members) with `tag` on the collective context, for the collective `call`.
    pub(crate) fn coll_isend(
        &self,
        call: &'static str,
        context: ContextId,
        bytes: &[u8],
        dest: u32,
        tag: i32,
    ) -> Result<Request<'static>> {
        debug_assert!(dest < self.size(), "a collective sends to members only");
        let names = Names { call, wait: call };
        self.post_send(context, names, SendMode::Standard, bytes, dest, tag)
    }

    /// A receive into `buf` of the message from communicator rank `source` with `tag` on the
    /// collective context, for the collective `call`.
    pub(crate) fn coll_irecv<'b>(
        &self,
        call: &'static str,
        context: ContextId,
        buf: &'b mut [u8],
        source: u32,
        tag: i32,
    ) -> Request<'b> {
        debug_assert!(
            source < self.size(),
            "a collective receives from members only"
        );
        let names = Names { call, wait: call };
        let pattern = Pattern::new(context, source, tag);
        self.post_recv(names, Some(pattern), buf)
    }

    /// The hidden collective context of the blocking collectives.
    pub(crate) fn coll_context(&self) -> ContextId {
        self.inner.coll
    }

    /// The context of the nonblocking collective number `seq` on this communicator (counted
    /// by every member alike, since all start them in the same order): `mix(coll, seq + 1)`,
    /// one per call, so that several in flight at once never take each other's messages, nor
    /// those of the blocking ones, whatever order their steps post in.
    pub(crate) fn nonblocking_context(&self, seq: u64) -> ContextId {
        ContextId(mix(self.inner.coll.0, seq + 1))
    }

    /// Waits for `requests` in order, as `wait_all` does, inside the collective `call` (which
    /// deadlock reports name). `wait_all_in`'s own future, not one around it (which would
    /// hold the arguments again, in every waiting rank's state).
    pub(crate) fn coll_wait_all<'a, 'b>(
        &self,
        requests: &'a mut [Request<'b>],
        call: &'static str,
    ) -> impl Future<Output = Result<Vec<Status>>> + use<'a, 'b> {
        wait_all_in(requests, call)
    }

    /// The run's collective policy (`crate::coll::policy`).
    pub(crate) fn coll_policy(&self) -> &Policy {
        &self.inner.policy
    }

    /// The collective algorithms forced on this communicator and its clones (tests; see
    /// `Comm::force_algorithm`).
    pub(crate) fn coll_forced(&self) -> &std::cell::Cell<Forced> {
        &self.inner.forced
    }
}
