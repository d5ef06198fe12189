//! What every nonblocking collective (`ibarrier`, `ibcast`, ...) shares: its start
//! ([`Comm::start_coll`]). Each call itself lives beside its blocking form, in its family's
//! file, and runs the same algorithm functions on a [`Ctx`] whose steps only test
//! (`Ctx::wait`); `crate::progress` moves it on.
//!
//! Each call checks its arguments and chooses its algorithm as the blocking form does (the
//! same errors, named after the nonblocking call), copies the input it needs, and starts: its
//! first step is posted before the call returns. Its messages go over a context of its own
//! (`Comm::nonblocking_context`, numbered by the nonblocking collectives started on the
//! communicator so far), so that several in flight at once, and blocking ones meanwhile,
//! never take each other's messages; within one, the tags are the blocking form's, which keep
//! telling ranks that call different collectives apart (a deadlock naming each).

use std::future::Future;
use std::rc::Rc;

use bytemuck::Pod;

use super::Ctx;
use super::algo::{Chosen, Collective};
use crate::Comm;
use crate::progress::{Awaiting, Output, Task};
use crate::request::Request;

impl Comm {
    /// Starts the nonblocking collective `call`, running `what`'s algorithm (the collective,
    /// the algorithm chosen and why, the root; the policy records it as the blocking
    /// collective's when the task ends) as `body` does on the `Ctx` it is given; the vector `body`
    /// ends with is copied into `out` when the request completes (`None`: this rank gets no
    /// result, and `body` ends with an empty vector).
    pub(crate) fn start_coll<'b, T: Pod, Fut>(
        &self,
        call: &'static str,
        what: (Collective, Chosen, u32),
        out: Option<&'b mut [T]>,
        body: impl FnOnce(Ctx) -> Fut,
    ) -> Request<'b>
    where
        Fut: Future<Output = mpsim_proto::error::Result<Vec<T>>> + 'static,
    {
        let progress = self.progress_made();
        let context = self.nonblocking_context(progress.next_on(self.id()));
        let awaiting = Awaiting::default();
        let cx = Ctx::nonblocking(self, call, what, context, Rc::clone(&awaiting));
        let run = body(cx);
        let task = Rc::new(Task::new(
            call,
            self.rt().clone(),
            progress,
            awaiting,
            Box::pin(async move { run.await.map(|v| Box::new(v) as Box<dyn Output>) }),
        ));
        task.poll_body();
        progress.add(Rc::clone(&task));
        Request::coll(
            self.rt().clone(),
            task,
            out.map(|o| bytemuck::cast_slice_mut(o)),
        )
    }
}
