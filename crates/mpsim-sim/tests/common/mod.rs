//! A minimal program layer over the rank runtime for the simulator's own tests: the four core
//! calls of `timing.md` §3 plus compute, without the public API.
#![allow(dead_code)]

pub mod child;

use std::future::{Future, poll_fn};
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

use mpsim_proto::error::Error;
use mpsim_proto::matching::{ContextId, Envelope, Pattern, Source, Tag};
use mpsim_proto::p2p::{Completion, ReqId, SendMode};
use mpsim_proto::runtime::{Call, Payload, RankRuntime, Started, Wait, Waited, Work};
use mpsim_sim::{Model, Options, Outcome, Progress, SimRank, simulate_observed};

/// A rank's view for these tests: the four core calls plus compute, through the backend seam.
pub struct Rank(Rc<SimRank>);

impl Rank {
    /// The rank's runtime, for what the seam does not carry (external waits).
    pub fn sim(&self) -> &SimRank {
        &self.0
    }

    pub fn me(&self) -> u32 {
        self.0.rank()
    }

    pub fn isend(&self, mode: SendMode, to: u32, tag: i32, bytes: usize) -> Result<ReqId, Error> {
        let envelope = Envelope::new(ContextId(0), self.me(), tag);
        let call = Call::Send {
            call: mode.icall(),
            mode,
            to,
            envelope,
            payload: Payload::from_elem(self.me() as u8, bytes),
            blocking: false,
        };
        match self.0.start(call)? {
            Started::Request(Some(req)) => Ok(req),
            other => panic!("an isend answered {other:?}"),
        }
    }

    pub fn irecv(&self, source: Source, tag: Tag) -> ReqId {
        let call = Call::Recv {
            pattern: Pattern::new(ContextId(0), source, tag),
            capacity: 1 << 20,
            source_world: None,
            blocking: true,
        };
        match self.0.start(call) {
            Ok(Started::Request(Some(req))) => req,
            other => panic!("an irecv answered {other:?}"),
        }
    }

    pub async fn wait(&self, req: ReqId) -> Result<Completion<Payload>, Error> {
        let wait = Wait::Request { req, call: "wait" };
        match poll_fn(|_| self.0.poll_wait(wait)).await? {
            Waited::Completion(completion) => Ok(completion),
            other => panic!("a wait answered {other:?}"),
        }
    }

    pub async fn compute(&self, ns: u64) {
        self.0.compute(Work::Time(Duration::from_nanos(ns)));
        yield_once().await;
    }

    pub fn attach(&self, bytes: usize) {
        self.0.start(Call::BufferAttach(bytes)).expect("attach");
    }

    pub fn now(&self) -> u64 {
        self.0.now_ns()
    }
}

pub async fn yield_once() {
    let mut done = false;
    poll_fn(|_| {
        if std::mem::replace(&mut done, true) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await
}

pub fn run<F, Fut>(ranks: u32, model: Model, program: F) -> Outcome
where
    F: Fn(Rank) -> Fut + Sync,
    Fut: Future<Output = Result<(), Error>>,
{
    run_with(&Options::new(ranks, model), program)
}

pub fn clocks(o: &Outcome) -> Vec<u64> {
    o.report.ranks.iter().map(|r| r.clock_ns).collect()
}

/// Like [`run`] with the ranks' programs created in `order`.
pub fn run_in_order<F, Fut>(ranks: u32, model: Model, order: Vec<u32>, program: F) -> Outcome
where
    F: Fn(Rank) -> Fut + Sync,
    Fut: Future<Output = Result<(), Error>>,
{
    let options = Options {
        spawn_order: Some(order),
        ..Options::new(ranks, model)
    };
    run_with(&options, program)
}

/// Like [`run`] with any options.
pub fn run_with<F, Fut>(options: &Options, program: F) -> Outcome
where
    F: Fn(Rank) -> Fut + Sync,
    Fut: Future<Output = Result<(), Error>>,
{
    run_observed(options, &mut |_| {}, program)
}

/// Like [`run_with`], telling `observe` how far the run has got as it goes.
pub fn run_observed<F, Fut>(
    options: &Options,
    observe: &mut dyn FnMut(Progress),
    program: F,
) -> Outcome
where
    F: Fn(Rank) -> Fut + Sync,
    Fut: Future<Output = Result<(), Error>>,
{
    let program = move |rt: Rc<SimRank>| program(Rank(rt));
    simulate_observed(options, &program, observe)
}
