//! The machine model: how long communication takes (`docs/timing.md` §4).
//!
//! A narrow interface — "how long for `n` bytes in this mode" plus a few constants — so that a
//! model can be measured (calibration) and swapped without touching the kernel. Validation
//! happens at construction: a [`Model`] that exists is a valid one.

use mpsim_proto::collective::AlgorithmChoices;
use mpsim_proto::p2p::BSEND_OVERHEAD;

/// Why a model is not valid.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A delay table with no point.
    #[error("delay table `{table}` is empty")]
    EmptyTable {
        /// Which table.
        table: String,
    },
    /// Sizes must strictly increase.
    #[error("delay table `{table}`: sizes must strictly increase ({prev} then {next})")]
    SizesNotIncreasing {
        /// Which table.
        table: String,
        /// The earlier size.
        prev: u64,
        /// The size that does not exceed it.
        next: u64,
    },
    /// Delays must be positive.
    #[error("delay table `{table}`: delay at {size} bytes is 0; delays must be > 0")]
    ZeroDelay {
        /// Which table.
        table: String,
        /// At which size.
        size: u64,
    },
    /// A parameter that must be positive is 0.
    #[error("model parameter `{name}` must be > 0")]
    NotPositive {
        /// The parameter.
        name: &'static str,
    },
}

/// Delays in nanoseconds by message size, interpolated (`timing.md` §4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DelayTable {
    points: Vec<(u64, u64)>,
}

impl DelayTable {
    /// A table from `(size_bytes, delay_ns)` points, sizes strictly increasing, delays `> 0`.
    ///
    /// ```
    /// use mpsim_sim::DelayTable;
    /// let t = DelayTable::new("ssend", vec![(8, 1000), (1024, 9000)]).unwrap();
    /// assert_eq!((t.delay(0), t.delay(8), t.delay(516), t.delay(2040)), (1000, 1000, 5000, 17000));
    /// ```
    pub fn new(name: &str, points: Vec<(u64, u64)>) -> Result<Self, ModelError> {
        if points.is_empty() {
            return Err(ModelError::EmptyTable { table: name.into() });
        }
        for w in points.windows(2) {
            if w[1].0 <= w[0].0 {
                return Err(ModelError::SizesNotIncreasing {
                    table: name.into(),
                    prev: w[0].0,
                    next: w[1].0,
                });
            }
        }
        if let Some(&(size, _)) = points.iter().find(|p| p.1 == 0) {
            return Err(ModelError::ZeroDelay {
                table: name.into(),
                size,
            });
        }
        Ok(DelayTable { points })
    }

    /// A table with one value for every size.
    pub fn constant(delay_ns: u64) -> Result<Self, ModelError> {
        Self::new("constant", vec![(0, delay_ns)])
    }

    /// The points.
    pub fn points(&self) -> &[(u64, u64)] {
        &self.points
    }

    /// The smallest delay the table can yield (for the lookahead).
    pub fn min_delay(&self) -> u64 {
        // Interpolation between points never goes below the smaller end, and beyond the last
        // point never below the last value; below the first point it is the first value.
        self.points.iter().map(|p| p.1).min().unwrap_or(1)
    }

    /// The delay for `size` bytes: exact points, first value below the first point, linear
    /// between points and beyond the last (from the last two, never below the last value),
    /// rounded as `timing.md` §4 says (floor, halves up), in exact integer arithmetic.
    pub fn delay(&self, size: u64) -> u64 {
        let p = &self.points;
        if p.len() == 1 || size <= p[0].0 {
            return p[0].1;
        }
        let i = p.partition_point(|&(x, _)| x <= size);
        if i > 0 && p[i - 1].0 == size {
            return p[i - 1].1;
        }
        let (beyond, (x0, y0), (x1, y1)) = if i == p.len() {
            (true, p[i - 2], p[i - 1])
        } else {
            (false, p[i - 1], p[i])
        };
        // D = y0 + floor((2·dy·ds + dx) / (2·dx)) with dy = y1 − y0, ds = size − x0 ≥ 0 and
        // dx = x1 − x0 > 0. |dy|·ds fits in u128 (both < 2^64), 2·|dy|·ds may not, so with
        // m = |dy|·ds = q·dx + r: the step is q + [2r ≥ dx] going up, and going down
        // −q when r = 0, else −(q + 1) + [2(dx − r) ≥ dx].
        let dx = u128::from(x1 - x0);
        // The product fits in 64 bits for any realistic table: divide there (a 128-bit
        // division is a slow library call, and this runs once per simulated message).
        let (q, r) = match y1.abs_diff(y0).checked_mul(size - x0) {
            Some(m) => {
                let dx = x1 - x0;
                (u128::from(m / dx), u128::from(m % dx))
            }
            None => {
                let m = u128::from(y1.abs_diff(y0)) * u128::from(size - x0);
                (m / dx, m % dx)
            }
        };
        let up = y1 >= y0;
        let y0 = u128::from(y0);
        let d = if up {
            y0.saturating_add(q + u128::from(2 * r >= dx))
        } else if r == 0 {
            y0.saturating_sub(q)
        } else {
            y0.saturating_sub(q + 1) + u128::from(2 * (dx - r) >= dx)
        };
        let d = if beyond { d.max(u128::from(y1)) } else { d };
        u64::try_from(d.max(1)).unwrap_or(u64::MAX)
    }
}

/// A one-entry memo of [`DelayTable::delay`]: the last size looked up and its delay.
///
/// The kernel times every simulated message with a table lookup (a binary search and an
/// interpolation); programs mostly send the same size again and again, so keeping the last
/// answer makes the common case one comparison. Invariant: `delay == table.delay(size)` for
/// the table the memo was made from, which never changes (the kernel's model is read-only).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LastDelay {
    size: u64,
    delay: u64,
}

impl LastDelay {
    /// A memo of `table`, holding its first point (a lookup it would answer anyway).
    pub fn new(table: &DelayTable) -> Self {
        let (size, delay) = table.points[0];
        LastDelay { size, delay }
    }

    /// `table.delay(size)`, for the `table` this memo was made from.
    #[inline]
    pub fn delay(&mut self, table: &DelayTable, size: u64) -> u64 {
        if size != self.size {
            self.delay = table.delay(size);
            self.size = size;
        }
        self.delay
    }
}

/// How computation between communication calls is charged (`timing.md` §7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ComputeMode {
    /// Only explicit `compute(duration)` / `compute_flops(n)` advance the clock. Deterministic.
    #[default]
    Modeled,
    /// The host CPU time of the rank's own code, times [`Model::host_to_target_ppm`], is
    /// charged too (explicit `compute` calls still count). Not deterministic. The time measured
    /// while a rank runs is charged before its next action after it suspends, so packets it sends
    /// within one burst of calls carry the burst's start time.
    Measured,
    /// Compute costs nothing.
    Ignored,
}

impl ComputeMode {
    /// The mode's name in model files and on the command line: `modeled`, `measured`,
    /// `ignored`.
    pub fn name(self) -> &'static str {
        match self {
            ComputeMode::Modeled => "modeled",
            ComputeMode::Measured => "measured",
            ComputeMode::Ignored => "ignored",
        }
    }
}

/// Costs on the ranks' processors that the delay tables (measured with blocking calls) do not hold: the timing extensions
/// X1–X3 of `docs/extensions.md` (a model file's `[cpu]` section). The default
/// charges nothing and gives every rank a core of its own, so that `docs/timing.md` holds as
/// written (its worked examples and settled details are exact under it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuModel {
    /// X1: CPU time a rank spends per nonblocking send request (`isend` family), ns, before
    /// the message leaves (LogGP's `o` at the sender); the rank's clock moves by it.
    pub send_overhead_ns: u64,
    /// X1: CPU time a rank spends per nonblocking receive request (`irecv`), ns, before the
    /// receive is posted; the rank's clock moves by it.
    pub recv_overhead_ns: u64,
    /// X2: cores the ranks share; `None` is a core per rank (unlimited). More ranks than cores
    /// make a run *oversubscribed*.
    pub cores: Option<u32>,
    /// X2: on an oversubscribed run, the time a blocked rank takes to run again once what it
    /// waits for has arrived (the host parks waiting threads), ns.
    pub wake_latency_ns: u64,
    /// X3: measured compute: host CPU time subtracted from each measured stretch of a rank's
    /// code (reading the thread CPU clock twice, and the simulator's own work in the stretch),
    /// ns.
    pub measure_overhead_ns: u64,
    /// X2: on an oversubscribed run with measured compute, the time a rank that resumes from
    /// a wait waits for each other rank of its core to hand the core over, ns
    /// ([`CpuModel::handover_charge_ns`]).
    pub handover_ns: u64,
    /// X2: measured compute runs this much slower, in parts per million, when two or more
    /// ranks can compute at once (ranks and cores both at least 2): they share caches and
    /// memory bandwidth, which measured compute, taken one rank at a time, cannot see.
    pub concurrent_slowdown_ppm: u64,
}

impl CpuModel {
    /// Whether `ranks` ranks outnumber the cores (X2).
    pub fn oversubscribed(&self, ranks: u32) -> bool {
        self.cores.is_some_and(|c| ranks > c)
    }

    /// The wake-up latency a blocked rank pays on a run of `ranks` ranks (X2): the model's
    /// `wake_latency` when oversubscribed, else 0.
    pub fn wake_ns(&self, ranks: u32) -> u64 {
        if self.oversubscribed(ranks) {
            self.wake_latency_ns
        } else {
            0
        }
    }

    /// How many ranks take turns on the busiest core when `ranks` ranks share the cores (X2):
    /// `ceil(ranks / cores)` when oversubscribed, else 1.
    pub fn turns(&self, ranks: u32) -> u64 {
        match self.cores {
            Some(c) if ranks > c && c > 0 => u64::from(ranks.div_ceil(c)),
            _ => 1,
        }
    }

    /// What a rank that resumes from a wait pays before its next action on a run of `ranks`
    /// ranks (X2 hand-over): with measured compute (`measured`) on an oversubscribed run, a
    /// hand-over from each other rank of the busiest core, `(ceil(ranks / cores) - 1) ·
    /// handover`; else 0. Ranks whose code runs on the host keep their core mates busy; in a
    /// run of pure communication the mates wait too and give the core up at once, which
    /// `wake_latency` covers.
    pub fn handover_charge_ns(&self, ranks: u32, measured: bool) -> u64 {
        if measured {
            self.handover_ns.saturating_mul(self.turns(ranks) - 1)
        } else {
            0
        }
    }

    /// X1's overhead of one request (`ns`) when `ranks` ranks share the cores (X2): CPU work
    /// like measured compute, so `ns · ceil(ranks / cores)` when oversubscribed.
    pub fn shared_overhead_ns(&self, ranks: u32, ns: u64) -> u64 {
        ns.saturating_mul(self.turns(ranks))
    }

    /// Time `ns` of one rank's measured compute takes when `ranks` ranks share the cores (X2):
    /// `ns · ceil(ranks / cores)` when oversubscribed (the ranks on the busiest core take
    /// turns, and the others wait for them at their next exchange), else `ns`; then, when two
    /// or more ranks can compute at once, `concurrent_slowdown` more (truncated to whole ns).
    pub fn shared_ns(&self, ranks: u32, ns: u64) -> u64 {
        let ns = ns.saturating_mul(self.turns(ranks));
        let concurrent = ranks >= 2 && self.cores.is_none_or(|c| c >= 2);
        if concurrent && self.concurrent_slowdown_ppm > 0 {
            let extra = u128::from(ns) * u128::from(self.concurrent_slowdown_ppm) / 1_000_000;
            ns.saturating_add(u64::try_from(extra).unwrap_or(u64::MAX))
        } else {
            ns
        }
    }
}

/// A machine model: delay tables per send mode and the constants of `timing.md` §4.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// `D_ssend`: synchronous, ready and rendezvous standard sends.
    pub ssend: DelayTable,
    /// `D_bsend`: buffered sends and eager standard sends.
    pub bsend: DelayTable,
    /// Constant latency of an acknowledgement, ns (`> 0`).
    pub ack_latency_ns: u64,
    /// Bytes charged per buffered message on top of its length.
    pub bsend_overhead: usize,
    /// Standard sends up to this size go eagerly (from the system buffer).
    pub eager_threshold: usize,
    /// System buffer capacity for eager sends; `None` is unbounded.
    pub system_buffer: Option<usize>,
    /// Virtual time charged to a `test` / `iprobe` that finds nothing, ns (`> 0`).
    pub poll_cost_ns: u64,
    /// Target compute speed for `compute_flops`.
    pub flops_per_s: u64,
    /// How compute is charged.
    pub compute: ComputeMode,
    /// Measured compute: target time per host time, in parts per million (1,000,000: the
    /// target is as fast as this host; 500,000: twice as fast).
    pub host_to_target_ppm: u64,
    /// BSP `g`: time per byte of an h-relation when every process communicates at once, in
    /// picoseconds per byte (`bsplib.md` §3; integer like every clock quantity, and fine enough
    /// for memory bandwidths: 125 ps/byte is 8 GB/s). `None`: not measured for this machine.
    pub bsp_g_ps_per_byte: Option<u64>,
    /// BSP `l`: the cost of a superstep's barrier, paid even when nothing is sent, ns.
    /// `None`: not measured for this machine.
    pub bsp_l_ns: Option<u64>,
    /// How the simulator times BSP programs' supersteps (`[bsp] timing`): by the cost model
    /// `w + h·g + l`, or as the messages of their syncs (the default).
    pub bsp_timing: crate::BspTiming,
    /// Per-message CPU overheads, cores and measurement costs (extensions X1–X3); the default
    /// charges nothing.
    pub cpu: CpuModel,
    /// The collective algorithms the model file names (`[collectives]`,
    /// `docs/collectives.md` §4), and whether reductions are to be reproducible; by default
    /// none: each call's algorithm is the cheapest by this model's costs.
    pub collectives: AlgorithmChoices,
}

impl Model {
    /// The model of `timing.md` §8's worked examples: every delay 1000 ns, ack 200 ns, no bsend
    /// overhead, compute modeled.
    pub fn worked_examples() -> Self {
        let flat = DelayTable::constant(1000).expect("1000 > 0");
        Model {
            ssend: flat.clone(),
            bsend: flat,
            ack_latency_ns: 200,
            bsend_overhead: 0,
            eager_threshold: 65_536,
            system_buffer: None,
            poll_cost_ns: 100,
            flops_per_s: 1_000_000_000,
            compute: ComputeMode::Modeled,
            host_to_target_ppm: 1_000_000,
            bsp_g_ps_per_byte: None,
            bsp_l_ns: None,
            bsp_timing: crate::BspTiming::P2p,
            cpu: CpuModel::default(),
            collectives: AlgorithmChoices::default(),
        }
    }

    /// The embedded default: Open MPI 4.1.4 over shared memory on this project's reference
    /// machine (2 cores), one-way ping-pong minima from `bench/ompi-pingpong.sh` on 2026-11-23;
    /// `ssend` adds a handshake's worth (0.3 us) at every size. BSP `g` and `l` were not
    /// measured. A placeholder until `mpsim calibrate` writes measured models. The same model
    /// as files, with these notes, is `models/default/` in this crate
    /// ([`ModelFile::embedded_default`](crate::ModelFile::embedded_default)).
    pub fn default_machine() -> Self {
        let bsend = vec![
            (1, 197),
            (8, 205),
            (64, 219),
            (512, 390),
            (2048, 485),
            (4096, 3_877),
            (16_384, 5_978),
            (65_536, 12_690),
            (262_144, 40_084),
            (1_048_576, 125_799),
            (4_194_304, 517_332),
        ];
        let ssend = bsend.iter().map(|&(s, d)| (s, d + 300)).collect();
        Model {
            ssend: DelayTable::new("ssend", ssend).expect("valid default table"),
            bsend: DelayTable::new("bsend", bsend).expect("valid default table"),
            ack_latency_ns: 150,
            bsend_overhead: BSEND_OVERHEAD,
            eager_threshold: 65_536,
            system_buffer: None,
            poll_cost_ns: 100,
            flops_per_s: 10_000_000_000,
            compute: ComputeMode::Modeled,
            host_to_target_ppm: 1_000_000,
            bsp_g_ps_per_byte: None,
            bsp_l_ns: None,
            bsp_timing: crate::BspTiming::P2p,
            cpu: CpuModel::default(),
            collectives: AlgorithmChoices::default(),
        }
    }

    /// Checks the constants (tables are checked when built).
    pub fn validate(&self) -> Result<(), ModelError> {
        if self.cpu.cores == Some(0) {
            return Err(ModelError::NotPositive { name: "cores" });
        }
        for (name, v) in [
            ("ack_latency_ns", self.ack_latency_ns),
            ("poll_cost_ns", self.poll_cost_ns),
            ("flops_per_s", self.flops_per_s),
        ] {
            if v == 0 {
                return Err(ModelError::NotPositive { name });
            }
        }
        Ok(())
    }

    /// This model with a free network: every delay of point-to-point 1 ns (the least a delay
    /// can be), no request, poll or wake-up overheads, no shared cores; compute and the BSP
    /// parameters as they are. The BSP cost-model timing runs the syncs' messages on it, so
    /// that they take (almost) no virtual time and the cost formula sets the clocks
    /// (`docs/bsplib.md` §4).
    pub fn free_network(&self) -> Model {
        let one = DelayTable::constant(1).expect("1 > 0");
        Model {
            ssend: one.clone(),
            bsend: one,
            ack_latency_ns: 1,
            bsend_overhead: 0,
            system_buffer: None,
            poll_cost_ns: 1,
            cpu: CpuModel {
                send_overhead_ns: 0,
                recv_overhead_ns: 0,
                cores: None,
                wake_latency_ns: 0,
                handover_ns: 0,
                ..self.cpu
            },
            ..self.clone()
        }
    }

    /// The lookahead `L`: no message or ack sent at `t` arrives before `t + L`.
    pub fn lookahead(&self) -> u64 {
        self.ssend
            .min_delay()
            .min(self.bsend.min_delay())
            .min(self.ack_latency_ns)
    }

    /// Target nanoseconds for `host_ns` of measured host CPU time.
    pub fn measured_ns(&self, host_ns: u64) -> u64 {
        let t = u128::from(host_ns) * u128::from(self.host_to_target_ppm) / 1_000_000;
        u64::try_from(t).unwrap_or(u64::MAX)
    }

    /// Target nanoseconds charged for one measured stretch of `host_ns` host CPU time on a run
    /// of `ranks` ranks: the measurement's own cost taken off (X3), scaled to the target
    /// ([`Model::measured_ns`]), then slowed by core sharing when oversubscribed (X2).
    pub fn measured_stretch_ns(&self, host_ns: u64, ranks: u32) -> u64 {
        let own = host_ns.saturating_sub(self.cpu.measure_overhead_ns);
        self.cpu.shared_ns(ranks, self.measured_ns(own))
    }

    /// Virtual time of `compute_flops(n)`: `ceil(n · 10⁹ / flops_per_s)` (S3).
    pub fn flops_ns(&self, flops: u64) -> u64 {
        let num = u128::from(flops) * 1_000_000_000;
        let den = u128::from(self.flops_per_s.max(1));
        u64::try_from(num.div_ceil(den)).unwrap_or(u64::MAX)
    }
}

impl Default for Model {
    fn default() -> Self {
        Self::default_machine()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timing_s3_flops_round_up() {
        let m = Model {
            flops_per_s: 3,
            ..Model::worked_examples()
        };
        assert_eq!(m.flops_ns(1), 333_333_334);
        assert_eq!(m.flops_ns(3), 1_000_000_000);
    }

    #[test]
    fn timing_x2_handover_is_charged_per_core_mate_under_measured_compute() {
        let cpu = CpuModel {
            cores: Some(2),
            handover_ns: 400,
            ..CpuModel::default()
        };
        assert_eq!(cpu.handover_charge_ns(2, true), 0, "a core per rank");
        assert_eq!(
            cpu.handover_charge_ns(3, true),
            400,
            "one mate on the busiest core"
        );
        assert_eq!(cpu.handover_charge_ns(4, true), 400);
        assert_eq!(cpu.handover_charge_ns(5, true), 800, "two mates");
        assert_eq!(cpu.handover_charge_ns(5, false), 0, "pure communication");
        assert_eq!(CpuModel::default().handover_charge_ns(9, true), 0);
        let huge = CpuModel {
            handover_ns: u64::MAX,
            ..cpu
        };
        assert_eq!(huge.handover_charge_ns(6, true), u64::MAX, "saturates");
    }

    #[test]
    fn timing_x2_measured_compute_is_shared_when_ranks_outnumber_cores() {
        let cpu = CpuModel {
            cores: Some(2),
            ..CpuModel::default()
        };
        assert_eq!(cpu.shared_ns(2, 1000), 1000, "a core per rank");
        assert_eq!(
            cpu.shared_ns(3, 1000),
            2000,
            "the busiest core holds 2 ranks"
        );
        assert_eq!(cpu.shared_ns(4, 1001), 2002);
        assert_eq!(cpu.shared_ns(5, 7), 21);
        assert_eq!(CpuModel::default().shared_ns(1000, 7), 7, "unlimited cores");
        assert_eq!(cpu.shared_ns(u32::MAX, u64::MAX), u64::MAX, "saturates");
        assert!(!cpu.oversubscribed(2) && cpu.oversubscribed(3));
        let slow = CpuModel {
            concurrent_slowdown_ppm: 100_000,
            ..cpu
        };
        assert_eq!(slow.shared_ns(1, 1000), 1000, "one rank computes alone");
        assert_eq!(slow.shared_ns(2, 1000), 1100, "two at once: 10% slower");
        assert_eq!(slow.shared_ns(3, 1000), 2200, "shared, then slower");
        let one_core = CpuModel {
            cores: Some(1),
            ..slow
        };
        assert_eq!(one_core.shared_ns(2, 1000), 2000, "one core: never at once");
        let unlimited = CpuModel {
            cores: None,
            ..slow
        };
        assert_eq!(unlimited.shared_ns(64, 1000), 1100);
    }

    #[test]
    fn timing_x3_measured_stretches_lose_the_measurement_cost_first() {
        let m = Model {
            host_to_target_ppm: 500_000,
            cpu: CpuModel {
                cores: Some(2),
                measure_overhead_ns: 700,
                ..CpuModel::default()
            },
            ..Model::worked_examples()
        };
        assert_eq!(m.measured_stretch_ns(1700, 2), 500, "(1700 - 700) x 0.5");
        assert_eq!(m.measured_stretch_ns(1700, 4), 1000, "then x 2 shared");
        assert_eq!(
            m.measured_stretch_ns(1700, 3),
            1000,
            "3 ranks: the busiest core has 2"
        );
        assert_eq!(m.measured_stretch_ns(500, 2), 0, "never below 0");
        let plain = Model::worked_examples();
        assert_eq!(
            plain.measured_stretch_ns(1234, 64),
            1234,
            "default: as measured"
        );
    }

    #[test]
    fn delay_interpolation_rounds_halves_up_and_never_drops_below_last() {
        let t = DelayTable::new("t", vec![(0, 10), (2, 11)]).expect("valid");
        assert_eq!(t.delay(1), 11); // 10.5 rounds up
        let down = DelayTable::new("d", vec![(0, 100), (10, 50)]).expect("valid");
        assert_eq!(down.delay(5), 75);
        assert_eq!(
            down.delay(1000),
            50,
            "beyond the last point: never below the last value"
        );
        let one = DelayTable::constant(7).expect("valid");
        assert_eq!((one.delay(0), one.delay(1 << 40)), (7, 7));
    }

    /// The formula of `timing.md` §4 in i128 (no operand here is big enough to overflow it).
    fn reference_delay(p: &[(u64, u64)], size: u64) -> u64 {
        if p.len() == 1 || size <= p[0].0 {
            return p[0].1;
        }
        if let Some(&(_, y)) = p.iter().find(|q| q.0 == size) {
            return y;
        }
        let i = p.partition_point(|&(x, _)| x <= size);
        let beyond = i == p.len();
        let ((x0, y0), (x1, y1)) = if beyond {
            (p[i - 2], p[i - 1])
        } else {
            (p[i - 1], p[i])
        };
        let (x0, y0, x1, y1, s) = (x0 as i128, y0 as i128, x1 as i128, y1 as i128, size as i128);
        let d = y0 + (2 * (y1 - y0) * (s - x0) + (x1 - x0)).div_euclid(2 * (x1 - x0));
        let d = if beyond { d.max(y1) } else { d };
        // Beyond u64 (a step extrapolated far past the table) the delay saturates.
        u64::try_from(d.max(1)).unwrap_or(u64::MAX)
    }

    /// A table with points at the running sums of the `steps`' x increments, `delay(size)`
    /// compared with [`reference_delay`].
    fn check_against_reference(
        steps: &[(u64, u64)],
        size: u64,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let (points, t) = table_of_steps(steps);
        proptest::prop_assert_eq!(t.delay(size), reference_delay(&points, size));
        Ok(())
    }

    /// The points at the running sums of the `steps`' x increments, and their table.
    fn table_of_steps(steps: &[(u64, u64)]) -> (Vec<(u64, u64)>, DelayTable) {
        let mut x = 0;
        let points: Vec<(u64, u64)> = steps
            .iter()
            .map(|&(dx, y)| {
                x += dx;
                (x, y)
            })
            .collect();
        let t = DelayTable::new("p", points.clone()).expect("valid");
        (points, t)
    }

    proptest::proptest! {
        #[test]
        fn delay_matches_the_i128_formula(
            steps in proptest::collection::vec((1u64..1 << 30, 1u64..1 << 30), 1..6),
            size in 0u64..1 << 33,
        ) {
            check_against_reference(&steps, size)?;
        }

        /// Delays near 2^62: the step's product overflows 64 bits, the 128-bit path runs.
        #[test]
        fn delay_matches_the_i128_formula_with_huge_delays(
            steps in proptest::collection::vec((1u64..1 << 30, 1u64..1 << 62), 2..6),
            size in 0u64..1 << 40,
        ) {
            check_against_reference(&steps, size)?;
        }
    }

    proptest::proptest! {
        /// The memo answers every lookup as the table does, whatever the order of sizes
        /// (repeats, the first point, and sizes around the table's points).
        #[test]
        fn last_delay_matches_the_table(
            steps in proptest::collection::vec((1u64..1 << 12, 1u64..1 << 20), 1..5),
            sizes in proptest::collection::vec((0u64..1 << 14, 0u8..3), 0..40),
        ) {
            let (points, t) = table_of_steps(&steps);
            let mut memo = LastDelay::new(&t);
            let mut last = 0;
            for (size, how) in sizes {
                // Any size, the last one again, or a point's size.
                let s = match how {
                    0 => size,
                    1 => last,
                    _ => points[size as usize % points.len()].0,
                };
                proptest::prop_assert_eq!(memo.delay(&t, s), t.delay(s));
                last = s;
            }
        }
    }

    #[test]
    fn delay_never_overflows_on_extreme_tables() {
        let up = DelayTable::new("up", vec![(0, 1), (1, u64::MAX)]).expect("valid");
        assert_eq!(up.delay(u64::MAX), u64::MAX);
        let down = DelayTable::new("down", vec![(0, u64::MAX), (1, 1)]).expect("valid");
        assert_eq!(down.delay(u64::MAX), 1);
        let wide = DelayTable::new("wide", vec![(0, 1), (u64::MAX, u64::MAX)]).expect("valid");
        assert_eq!(wide.delay(u64::MAX / 2), u64::MAX / 2 + 1);
    }

    #[test]
    fn invalid_tables_are_errors() {
        assert!(matches!(
            DelayTable::new("x", vec![]),
            Err(ModelError::EmptyTable { .. })
        ));
        assert!(matches!(
            DelayTable::new("x", vec![(8, 1), (8, 2)]),
            Err(ModelError::SizesNotIncreasing {
                prev: 8,
                next: 8,
                ..
            })
        ));
        assert!(matches!(
            DelayTable::new("x", vec![(8, 0)]),
            Err(ModelError::ZeroDelay { size: 8, .. })
        ));
    }
}
