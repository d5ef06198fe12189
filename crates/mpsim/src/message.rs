//! [`Message`]: a message taken off the matching queues by a matched probe
//! (`Comm::mprobe` / `Comm::improbe`, `docs/p2p.md` §5, `matching.md` M9). No receive can match
//! it any more; only [`Message::mrecv`] / [`Message::imrecv`] receive it. This is how a
//! multithreaded or multi-stage program receives exactly the message it probed.

use crate::runtime::Rt;
use bytemuck::Pod;
use mpsim_proto::error::Result;
use mpsim_proto::p2p::{MessageId, Status};

use crate::request::{Names, Request, named, stamped};

/// A message taken by a matched probe, to be received with [`Message::mrecv`].
///
/// Dropping it unreceived discards it (MPI calls that erroneous), and the run's warnings say
/// so, as for a receive dropped after a message matched it.
#[must_use = "a matched message must be received with mrecv"]
pub struct Message {
    rt: Rt,
    /// `None` for the message of `PROC_NULL`.
    id: Option<MessageId>,
    status: Status,
}

impl Message {
    pub(crate) fn new(rt: Rt, id: Option<MessageId>, status: Status) -> Self {
        Message { rt, id, status }
    }

    /// What the probe saw: source, tag and length of the message.
    pub fn status(&self) -> Status {
        self.status
    }

    /// Receives the message into `buf` (a longer message fills `buf` and gives `Truncate`).
    pub async fn mrecv<T: Pod>(self, buf: &mut [T]) -> Result<Status> {
        self.imrecv_as("mrecv", bytemuck::cast_slice_mut(buf))?
            .wait()
            .await
    }

    /// Starts receiving the message into `buf`; the request is complete at once.
    pub fn imrecv<T: Pod>(self, buf: &mut [T]) -> Result<Request<'_>> {
        self.imrecv_as("imrecv", bytemuck::cast_slice_mut(buf))
    }

    /// Receives the message into `bytes` for the program's call `call`, which errors name.
    fn imrecv_as<'b>(mut self, call: &'static str, bytes: &'b mut [u8]) -> Result<Request<'b>> {
        let Some(id) = self.id.take() else {
            return Ok(Request::null(self.rt.clone(), self.status, Some(bytes)));
        };
        let capacity = bytes.len();
        let req = self
            .rt
            .mrecv(id, capacity)
            .map_err(|e| stamped(&self.rt, named(e, call)))?;
        let names = Names {
            call,
            wait: "mrecv",
        };
        Ok(Request::active(self.rt.clone(), req, names, Some(bytes)))
    }
}

impl Drop for Message {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.rt.drop_message(id, self.status);
        }
    }
}

impl std::fmt::Debug for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Message")
            .field("status", &self.status)
            .finish()
    }
}
