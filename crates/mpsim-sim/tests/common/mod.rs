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
use mpsim_proto::runtime::{Payload, RankRuntime};
use mpsim_sim::{Model, Options, Outcome, Progress, simulate_observed};

/// A rank's view for these tests: the four core calls plus compute.
pub struct Rank(Rc<dyn RankRuntime>);

impl Rank {
    pub fn me(&self) -> u32 {
        self.0.rank()
    }

    pub fn isend(&self, mode: SendMode, to: u32, tag: i32, bytes: usize) -> Result<ReqId, Error> {
        let env = Envelope::new(ContextId(0), self.me(), tag);
        let mut out = None;
        self.0.with_endpoint(&mut |ep| {
            out = Some(ep.isend(mode, to, env, Payload::from_elem(self.me() as u8, bytes)))
        });
        out.expect("ran")
    }

    pub fn irecv(&self, source: Source, tag: Tag) -> ReqId {
        let mut out = None;
        self.0.with_endpoint(&mut |ep| {
            out = Some(ep.irecv(Pattern::new(ContextId(0), source, tag), 1 << 20))
        });
        out.expect("ran")
    }

    pub async fn wait(&self, req: ReqId) -> Result<Completion<Payload>, Error> {
        poll_fn(|cx| self.0.poll_done(req, "wait", cx)).await?;
        let mut out = None;
        self.0.with_endpoint(&mut |ep| out = Some(ep.test(req)));
        Ok(out.expect("ran")?.expect("complete"))
    }

    pub async fn compute(&self, ns: u64) {
        self.0.compute(Duration::from_nanos(ns));
        yield_once().await;
    }

    pub fn attach(&self, bytes: usize) {
        self.0
            .with_endpoint(&mut |ep| ep.buffer_attach(bytes).expect("attach"));
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
    let program = move |rt: Rc<dyn RankRuntime>| program(Rank(rt));
    simulate_observed(options, &program, observe)
}
