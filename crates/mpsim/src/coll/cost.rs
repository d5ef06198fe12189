//! What each collective algorithm costs on a machine model: the alpha-beta cost of Thakur,
//! Rabenseifner and Gropp (2005) with every `alpha + n * beta` read from the model's own delay
//! tables, and the protocol of `docs/timing.md` (eager sends complete at once; a rendezvous
//! send holds its sender until the ack). The choice of algorithm takes the cheapest
//! (`algo.rs`); `docs/collectives.md` §4 lists the formulas, and `tests/coll_timing.rs` checks
//! them against the simulator on flat models.
//!
//! # The three costs of a message of `s` bytes
//!
//! - `e(s)`, its arrival: `D_bsend(s)` when `s <= eager_threshold` (eager), else `D_ssend(s)`.
//! - `h(s)`, how long its sender is held: 0 when eager, else `D_ssend(s) + ack_latency` (the
//!   sender waits for the ack, sent when the message is matched).
//! - `x(s) = max(e(s), h(s))`: a step in which ranks that are equally far along exchange `s`
//!   bytes each way (a `sendrecv`) ends that long after it began, on the rank that ends last.
//!
//! The gamma term (time per combined element) is 0: the simulator charges no virtual time for
//! a reduction's local combining under modeled compute (`docs/collectives.md` §10).
//!
//! # Exact and bounded
//!
//! Each formula is a few sums over `log2 size` steps (trees are walked by subtree size, full
//! subtrees once each), so the choice costs about a microsecond per call. Every formula is
//! exact on a flat model (every rank entering at once; all messages eager, or all rendezvous)
//! for every size, with counts that divide evenly into blocks, except the fold of sizes that
//! are not a power of two (recursive doubling, recursive halving, Rabenseifner's), where the
//! formula adds the fold's two messages in full, an upper bound: ranks outside the fold start
//! the exchanges early and absorb part of it.

use mpsim_sim::{DelayTable, Model};

use super::algo::{Algorithm, Collective, Shape};

/// A machine model's delays as the formulas read them.
#[derive(Clone, Debug)]
pub(crate) struct Costs {
    ssend: DelayTable,
    bsend: DelayTable,
    ack: u64,
    eager: u64,
}

impl Costs {
    /// The costs of `model` (with the eager threshold the run uses).
    pub fn of(model: &Model) -> Self {
        Costs {
            ssend: model.ssend.clone(),
            bsend: model.bsend.clone(),
            ack: model.ack_latency_ns,
            eager: model.eager_threshold as u64,
        }
    }

    /// When a message of `s` bytes arrives after it is sent.
    pub fn e(&self, s: u64) -> u64 {
        if s <= self.eager {
            self.bsend.delay(s)
        } else {
            self.ssend.delay(s)
        }
    }

    /// How long its sender is held (0 for an eager message).
    pub fn h(&self, s: u64) -> u64 {
        if s <= self.eager {
            0
        } else {
            self.ssend.delay(s).saturating_add(self.ack)
        }
    }

    /// A step of ranks exchanging `s` bytes each way.
    pub fn x(&self, s: u64) -> u64 {
        self.e(s).max(self.h(s))
    }

    /// The predicted time of `coll` run by `algo` for a call of `shape` (every rank entering
    /// at once), ns, saturating.
    pub fn cost(&self, coll: Collective, algo: Algorithm, shape: &Shape) -> u64 {
        let p = u64::from(shape.size);
        if p <= 1 {
            return 0;
        }
        let v = Vector::of(shape);
        let n = v.bytes();
        use Algorithm as A;
        use Collective as C;
        match (coll, algo) {
            (C::Barrier, _) => mul(ceil_log2(p), self.x(0)),
            (C::Bcast, A::Binomial) => {
                mul(ceil_log2(p), self.h(n)).max(mul(floor_log2(p), self.e(n)))
            }
            (C::Bcast, A::ScatterRing) => {
                let scattered = self.scatter_tree(p, |c| v.blocks(0, c, p));
                scattered.saturating_add(mul(p - 1, self.x(v.block(p))))
            }
            (C::Bcast, _) => {
                let scattered = self.scatter_tree(p, |c| v.blocks(0, c, p));
                scattered.saturating_add(self.doubling_allgather(p, &v))
            }
            (C::Reduce, A::Rabenseifner) => self.rabenseifner_reduce(p, &v),
            // Costed for root 0 (a reduce in rank order to another root sends the result on
            // once more).
            (C::Reduce, _) => self.gather_tree(p, |_| n).end(),
            (C::Allreduce, A::RecursiveDoubling) => {
                let steps = mul(floor_log2(p), self.x(n));
                steps.saturating_add(self.fold(p, n, n))
            }
            (C::Allreduce, A::Rabenseifner) => {
                let halving = self.halving(p, &v);
                mul(2, halving).saturating_add(self.fold(p, n, n))
            }
            (C::Allreduce, A::Ring) => mul(2 * (p - 1), self.x(v.block(p))),
            (C::Allreduce, _) => {
                let tree = self.gather_tree(p, |_| n);
                let bcast = Collective::Bcast
                    .algorithms()
                    .iter()
                    .map(|&a| self.cost(C::Bcast, a, shape))
                    .min()
                    .unwrap_or(0);
                tree.then(bcast)
            }
            (C::Gather | C::Gatherv, A::Binomial) => {
                self.gather_tree(p, |c| v.blocks(0, c, p)).end()
            }
            (C::Scatter | C::Scatterv, A::Binomial) => self.scatter_tree(p, |c| v.blocks(0, c, p)),
            (C::Gather | C::Gatherv | C::Scatter | C::Scatterv, _) => self.x(v.block(p)),
            (C::Allgather | C::Allgatherv, A::Ring) => mul(p - 1, self.x(v.block(p))),
            (C::Allgather | C::Allgatherv, A::Bruck) => {
                let mut t = 0u64;
                let mut k = 1;
                while k < p {
                    t = t.saturating_add(self.x(v.blocks(0, k.min(p - k), p)));
                    k <<= 1;
                }
                t
            }
            (C::Allgather | C::Allgatherv, _) => self.doubling_allgather(p, &v),
            (C::Alltoall | C::Alltoallv, A::Bruck) => {
                let mut t = 0u64;
                let mut k = 1;
                while k < p {
                    // The blocks whose index has bit `k`: `k` of every `2k`, and the tail.
                    let moved = (p / (2 * k)) * k + (p % (2 * k)).saturating_sub(k);
                    t = t.saturating_add(self.x(n.saturating_mul(moved)));
                    k <<= 1;
                }
                t
            }
            (C::Alltoall | C::Alltoallv, A::Pairwise) => mul(p - 1, self.x(n)),
            (C::Alltoall | C::Alltoallv, _) => self.x(n),
            (C::ReduceScatter, A::RecursiveHalving) => {
                // Newrank `i < rem` stands for two ranks' blocks: the first half is the
                // largest.
                let pof2 = 1u64 << floor_log2(p);
                let rem = p - pof2;
                let mut t = 0u64;
                let mut mask = pof2 >> 1;
                while mask > 0 {
                    t = t.saturating_add(self.x(v.blocks(0, mask + mask.min(rem), p)));
                    mask >>= 1;
                }
                t.saturating_add(self.fold(p, n, v.block(p)))
            }
            (C::ReduceScatter, A::Pairwise) => mul(p - 1, self.x(v.block(p))),
            (C::ReduceScatter, _) => self.gather_tree(p, |_| n).then(self.x(v.block(p))),
            (C::Scan | C::Exscan, _) => mul(p - 2, self.e(n)).saturating_add(self.x(n)),
            _ => u64::MAX,
        }
    }

    /// The fold of a size that is not a power of two: `n_in` bytes in before the exchanges,
    /// `n_out` back after them (0 for a power of two).
    fn fold(&self, p: u64, n_in: u64, n_out: u64) -> u64 {
        if p.is_power_of_two() {
            0
        } else {
            self.e(n_in).saturating_add(self.x(n_out))
        }
    }

    /// Recursive vector halving among the power of two below `p`: steps exchanging half the
    /// window, `n/2`, `n/4`, ..., one block of `pof2`.
    fn halving(&self, p: u64, v: &Vector) -> u64 {
        let pof2 = 1u64 << floor_log2(p);
        let mut t = 0u64;
        let mut half = pof2 >> 1;
        while half > 0 {
            t = t.saturating_add(self.x(v.blocks(0, half, pof2)));
            half >>= 1;
        }
        t
    }

    /// A recursive-doubling allgather of `p` blocks (`v` whole): steps exchanging 1, 2, 4, ...
    /// blocks, after a fold for sizes that are not a power of two (whose newranks hold two
    /// blocks).
    fn doubling_allgather(&self, p: u64, v: &Vector) -> u64 {
        let pof2 = 1u64 << floor_log2(p);
        let rem = p - pof2;
        let mut t = 0u64;
        let mut mask = 1;
        while mask < pof2 {
            t = t.saturating_add(self.x(v.blocks(0, mask + mask.min(rem), p)));
            mask <<= 1;
        }
        t.saturating_add(self.fold(p, v.block(p), v.bytes()))
    }

    /// Rabenseifner's reduce: the fold, halving, then the windows gathered back to newrank 0
    /// (1, 2, 4, ... blocks; each sender is done once its window is taken), then to the root
    /// when newrank 0 is another rank (costed for root 0: rank 1 after a fold).
    fn rabenseifner_reduce(&self, p: u64, v: &Vector) -> u64 {
        let pof2 = 1u64 << floor_log2(p);
        let n = v.bytes();
        let mut t = self.halving(p, v);
        let mut last = 0u64;
        let mut width = 1;
        while width < pof2 {
            let s = v.blocks(0, width, pof2);
            last = t.saturating_add(self.x(s));
            t = t.saturating_add(self.e(s));
            width <<= 1;
        }
        let gathered = t.max(last);
        if p.is_power_of_two() {
            gathered
        } else {
            self.e(n)
                .saturating_add(gathered.max(t.saturating_add(self.x(n))))
        }
    }

    /// A binomial scatter from relative rank 0 over `p` ranks: each rank sends its children's
    /// subtrees, the largest first, `bytes(c)` to a child whose subtree has `c` ranks. The
    /// latest any rank is done (holds its part and has sent its children theirs).
    fn scatter_tree(&self, p: u64, bytes: impl Fn(u64) -> u64) -> u64 {
        // done[j]: the same for a full subtree of 2^j ranks, from its root's start.
        let levels = ceil_log2(p) as usize + 1;
        let mut done = vec![0u64; levels];
        for j in 1..levels {
            done[j] = self.scatter_node(1 << j, &bytes, &done);
        }
        self.scatter_node(p, &bytes, &done)
    }

    /// One node of a scatter with a subtree of `s` ranks (`done` for full subtrees below).
    fn scatter_node(&self, s: u64, bytes: &impl Fn(u64) -> u64, done: &[u64]) -> u64 {
        // Children at distances 2^j < s, sent to from the largest j down.
        let mut children: Vec<u64> = Vec::new();
        let mut m = 1;
        while m < s {
            children.push((s - m).min(m));
            m <<= 1;
        }
        let mut held = 0u64;
        let mut latest = 0u64;
        for &c in children.iter().rev() {
            let sent = bytes(c);
            let arrives = held.saturating_add(self.e(sent));
            let below = if c.is_power_of_two() {
                done[c.trailing_zeros() as usize]
            } else {
                self.scatter_node(c, bytes, done)
            };
            latest = latest.max(arrives.saturating_add(below));
            held = held.saturating_add(self.h(sent));
        }
        latest.max(held)
    }

    /// A binomial gather (or reduce) at relative rank 0 over `p` ranks: each rank receives
    /// from its children in turn, the smallest subtree first, then sends `bytes(c)` (`c`: the
    /// ranks of its own subtree) to its parent.
    fn gather_tree(&self, p: u64, bytes: impl Fn(u64) -> u64) -> Tree {
        let levels = ceil_log2(p) as usize + 1;
        let mut full = vec![Tree::default(); levels];
        for j in 1..levels {
            full[j] = self.gather_node(1 << j, &bytes, &full);
        }
        self.gather_node(p, &bytes, &full)
    }

    fn gather_node(&self, s: u64, bytes: &impl Fn(u64) -> u64, full: &[Tree]) -> Tree {
        let mut t = 0u64;
        let mut others = 0u64;
        let mut m = 1;
        while m < s {
            let c = (s - m).min(m);
            let below = if c.is_power_of_two() {
                full[c.trailing_zeros() as usize]
            } else {
                self.gather_node(c, bytes, full)
            };
            let sent = bytes(c);
            let arrives = below.ready.saturating_add(self.e(sent));
            // The child is done when its message is taken (rendezvous: the ack of a receive
            // posted once the previous child's was done), or at once (eager).
            let child = if self.h(sent) == 0 {
                below.ready
            } else {
                arrives.max(t).saturating_add(self.ack)
            };
            others = others.max(child).max(below.others);
            t = t.max(arrives);
            m <<= 1;
        }
        Tree { ready: t, others }
    }
}

/// A gather tree's times: when its root holds everything, and the latest any other rank of
/// it is done.
#[derive(Clone, Copy, Debug, Default)]
struct Tree {
    ready: u64,
    others: u64,
}

impl Tree {
    /// When the last rank is done.
    fn end(self) -> u64 {
        self.ready.max(self.others)
    }

    /// When the last rank is done if the root then takes `more`.
    fn then(self, more: u64) -> u64 {
        self.ready.saturating_add(more).max(self.others)
    }
}

/// A call's vector: `count` elements of `elem` bytes, cut into near-equal blocks as
/// `Layout::Equal` cuts it.
struct Vector {
    count: u64,
    elem: u64,
}

impl Vector {
    fn of(shape: &Shape) -> Self {
        Vector {
            count: shape.count as u64,
            elem: shape.elem as u64,
        }
    }

    fn bytes(&self) -> u64 {
        self.count.saturating_mul(self.elem)
    }

    /// The bytes of `k` blocks of the `parts` starting at block `from` (the first
    /// `count % parts` blocks are one element longer).
    fn blocks(&self, from: u64, k: u64, parts: u64) -> u64 {
        let start = |i: u64| {
            let (base, extra) = (self.count / parts, self.count % parts);
            i * base + i.min(extra)
        };
        (start(from + k) - start(from)).saturating_mul(self.elem)
    }

    /// The bytes of the largest of `parts` blocks.
    fn block(&self, parts: u64) -> u64 {
        self.blocks(0, 1, parts)
    }
}

fn mul(k: u64, t: u64) -> u64 {
    k.saturating_mul(t)
}

/// `floor(log2 p)`, `p >= 1`.
pub(crate) fn floor_log2(p: u64) -> u64 {
    u64::from(63 - p.leading_zeros())
}

/// `ceil(log2 p)`, `p >= 1`.
pub(crate) fn ceil_log2(p: u64) -> u64 {
    floor_log2(p) + u64::from(!p.is_power_of_two())
}

/// A call's shape from what the public functions take.
fn shape_of(ranks: u32, count: usize, elem: usize, commutative: bool) -> Shape {
    Shape {
        size: ranks,
        bytes: count.saturating_mul(elem),
        count,
        elem,
        commutative,
    }
}

/// The predicted time, ns, of one call of `coll` run by `algo` on `ranks` ranks of `model`,
/// every rank entering at once: the cost the model's choice compares (`docs/collectives.md`
/// §4). `count` elements of `elem` bytes are the call's vector as the choice reads it: a
/// bcast's or a reduction's whole vector, a gather's or an allgather's whole result, an
/// alltoall's block for one rank.
///
/// ```
/// use mpsim::sim::{Model, collective_ns};
/// use mpsim::{Algorithm, Collective};
/// // A binomial bcast of 8 bytes on 16 ranks: four eager steps of 205 ns on the default model.
/// let t = collective_ns(&Model::default(), Collective::Bcast, Algorithm::Binomial, 16, 1, 8);
/// assert_eq!(t, 4 * 205);
/// ```
pub fn collective_ns(
    model: &Model,
    coll: Collective,
    algo: Algorithm,
    ranks: u32,
    count: usize,
    elem: usize,
) -> u64 {
    Costs::of(model).cost(coll, algo, &shape_of(ranks, count, elem, true))
}

/// The algorithm a simulated run on `model` chooses for such a call when nothing names one
/// (the cheapest by [`collective_ns`]; the first listed of equally cheap ones), for an
/// operation that is `commutative` or not. `None` for `alltoallv`, whose ranks' counts differ
/// (the fixed table chooses).
///
/// ```
/// use mpsim::sim::{Model, collective_choice};
/// use mpsim::{Algorithm, Collective};
/// let m = Model::default();
/// let small = collective_choice(&m, Collective::Allreduce, 64, 1, 8, true);
/// assert_eq!(small, Some(Algorithm::RecursiveDoubling));
/// ```
pub fn collective_choice(
    model: &Model,
    coll: Collective,
    ranks: u32,
    count: usize,
    elem: usize,
    commutative: bool,
) -> Option<Algorithm> {
    if coll == Collective::Alltoallv {
        return None;
    }
    let policy = super::policy::Policy::new(Some(model), Default::default());
    Some(
        policy
            .choose(coll, shape_of(ranks, count, elem, commutative))
            .algo,
    )
}
