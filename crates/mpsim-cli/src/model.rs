//! `mpsim model show|check PATH`: a machine model in human terms, or whether it loads.
//!
//! Loading is `mpsim_sim::ModelFile::open`, the same call `--model` makes in a program, so a
//! model that `check` passes is one a simulated run accepts, and a failure here prints the same
//! `FILE:LINE: ...` message the run would. `PATH` is a `model.toml`, a directory holding one, or
//! `default` for the model compiled into mpsim.
//!
//! `show` prints exact values (times in ns, us, ms or s without rounding, sizes in the largest
//! binary unit that divides them) so that what it prints is what the simulator uses.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Subcommand;
use mpsim_sim::units::{BINARY_SIZES, exact_decimal, in_largest_unit};
use mpsim_sim::{DelayTable, ModelFile, ModelFileError};

/// `mpsim model ...`.
#[derive(Subcommand)]
pub enum ModelCommand {
    /// Print every parameter of a model and both delay tables, with units.
    Show {
        /// A model.toml, a directory holding one, or `default` (the embedded model).
        path: PathBuf,
    },
    /// Load a model and print `ok: PATH`, or its first problem as FILE:LINE: ... (exit 1).
    Check {
        /// A model.toml, a directory holding one, or `default` (the embedded model).
        path: PathBuf,
    },
}

/// Runs a `model` subcommand; returns what to print.
pub fn run(cmd: ModelCommand) -> Result<String, ModelFileError> {
    match cmd {
        ModelCommand::Show { path } => ModelFile::open(&path).map(|f| show(&f)),
        ModelCommand::Check { path } => {
            ModelFile::open(&path).map(|_| format!("ok: {}\n", path.display()))
        }
    }
}

/// The human-readable description of a model.
fn show(f: &ModelFile) -> String {
    let m = &f.model;
    let mut s = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(s, "model: {}", f.path.display());
    if let Some(d) = &f.description {
        let _ = writeln!(s, "description: {d}");
    }
    let row = |s: &mut String, name: &str, value: String, note: &str| {
        let _ = if note.is_empty() {
            writeln!(s, "  {name:<19} {value}")
        } else {
            writeln!(s, "  {name:<19} {value:<22} {note}")
        };
    };

    let _ = writeln!(s, "\nnetwork");
    row(
        &mut s,
        "ack_latency",
        time(m.ack_latency_ns),
        "an acknowledgement's delay",
    );
    row(
        &mut s,
        "eager_threshold",
        size(m.eager_threshold as u64),
        "standard sends up to this size go eagerly",
    );
    row(
        &mut s,
        "bsend_overhead",
        size(m.bsend_overhead as u64),
        "charged per buffered message",
    );
    row(
        &mut s,
        "system_buffer",
        m.system_buffer
            .map_or_else(|| "unbounded".into(), |b| size(b as u64)),
        "eager send capacity",
    );
    row(
        &mut s,
        "poll_cost",
        time(m.poll_cost_ns),
        "a test/iprobe that finds nothing",
    );
    row(
        &mut s,
        "lookahead",
        time(m.lookahead()),
        "smallest delay of any message or ack",
    );

    let _ = writeln!(s, "\ncompute");
    row(
        &mut s,
        "mode",
        m.compute.name().into(),
        "a program's --compute overrides it",
    );
    row(&mut s, "flops_per_s", flops(m.flops_per_s), "");
    row(
        &mut s,
        "host_to_target",
        exact_decimal(m.host_to_target_ppm, 6),
        "measured mode: target time per host time",
    );

    let _ = writeln!(s, "\nbsp");
    row(
        &mut s,
        "g",
        m.bsp_g_ps_per_byte.map_or_else(
            || "not measured".into(),
            |g| format!("{} ns/byte", exact_decimal(g, 3)),
        ),
        "",
    );
    row(
        &mut s,
        "l",
        m.bsp_l_ns.map_or_else(|| "not measured".into(), time),
        "",
    );

    let c = &m.cpu;
    let _ = writeln!(s, "\ncpu");
    row(
        &mut s,
        "send_overhead",
        time(c.send_overhead_ns),
        "X1: CPU time per nonblocking send",
    );
    row(
        &mut s,
        "recv_overhead",
        time(c.recv_overhead_ns),
        "X1: CPU time per nonblocking receive",
    );
    row(
        &mut s,
        "cores",
        c.cores
            .map_or_else(|| "unlimited".into(), |n| n.to_string()),
        "X2: more ranks than this share cores",
    );
    row(
        &mut s,
        "wake_latency",
        time(c.wake_latency_ns),
        "X2: a blocked rank's wake-up when ranks > cores",
    );
    row(
        &mut s,
        "handover",
        time(c.handover_ns),
        "X2: per core mate, a woken rank's wait (measured compute)",
    );
    row(
        &mut s,
        "measure_overhead",
        time(c.measure_overhead_ns),
        "X3: taken off each measured-compute stretch",
    );
    row(
        &mut s,
        "concurrent_slowdown",
        exact_decimal(c.concurrent_slowdown_ppm, 6),
        "X2: measured compute slower when ranks compute at once",
    );

    let _ = writeln!(s, "\ncollectives");
    row(
        &mut s,
        "reproducible",
        m.collectives.reproducible.to_string(),
        "reductions run their reproducible algorithm",
    );
    let mut named = m.collectives.named().peekable();
    if named.peek().is_none() {
        row(
            &mut s,
            "(none named)",
            String::new(),
            "each call: the cheapest by this model's costs",
        );
    }
    for (coll, algo) in named {
        row(&mut s, coll.name(), algo.name().into(), "");
    }

    table(&mut s, "ssend", &f.ssend_table, &m.ssend);
    table(&mut s, "bsend", &f.bsend_table, &m.bsend);
    s
}

/// A delay table, one point per line.
fn table(s: &mut String, name: &str, path: &Path, t: &DelayTable) {
    let points = t.points();
    let _ = writeln!(
        s,
        "\n{name} table: {} ({} point{}; linear between points and beyond the last)",
        path.display(),
        points.len(),
        if points.len() == 1 { "" } else { "s" }
    );
    let _ = writeln!(s, "  {:>12}  {:>14}", "size", "delay");
    for &(bytes, ns) in points {
        let _ = writeln!(s, "  {:>12}  {:>14}", size(bytes), time(ns));
    }
}

/// A time, exact, in the largest unit not above it (also the plot's tooltips and summary).
pub(crate) fn time(ns: u64) -> String {
    let (digits, unit) = match ns {
        0..1_000 => return format!("{ns} ns"),
        1_000..1_000_000 => (3, "us"),
        1_000_000..1_000_000_000 => (6, "ms"),
        _ => (9, "s"),
    };
    let d = exact_decimal(ns, digits);
    format!("{} {unit}", d.strip_suffix(".0").unwrap_or(&d))
}

/// A size in the largest binary unit that divides it.
fn size(bytes: u64) -> String {
    in_largest_unit(bytes, &BINARY_SIZES, "B", " ")
}

/// A rate with thousands separators and an SI summary.
fn flops(f: u64) -> String {
    let digits = f.to_string();
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let si = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
        .iter()
        .find(|(k, _)| f as f64 >= *k)
        .map(|(k, p)| {
            let v = format!("{:.3}", f as f64 / k);
            let v = v.trim_end_matches('0').trim_end_matches('.');
            format!(" ({v} {p}flop/s)")
        });
    format!("{grouped} flop/s{}", si.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mpsim_sim::Model;

    fn default_file() -> ModelFile {
        ModelFile::embedded_default().expect("the embedded model loads")
    }

    #[test]
    fn units_are_exact() {
        assert_eq!(time(999), "999 ns");
        assert_eq!(time(12_990), "12.99 us");
        assert_eq!(time(517_632), "517.632 us");
        assert_eq!(time(1_500_000_000), "1.5 s");
        assert_eq!(time(2_000_000), "2 ms");
        assert_eq!(size(65_536), "64 KiB");
        assert_eq!(size(1000), "1000 B");
        assert_eq!(size(0), "0 B");
        assert_eq!(flops(10_000_000_000), "10,000,000,000 flop/s (10 Gflop/s)");
        assert_eq!(flops(999), "999 flop/s");
        assert_eq!(exact_decimal(500_000, 6), "0.5");
        assert_eq!(flops(2_500_000_000), "2,500,000,000 flop/s (2.5 Gflop/s)");
    }

    #[test]
    fn show_lists_every_parameter_and_table() {
        let out = show(&default_file());
        for word in [
            "ack_latency",
            "150 ns",
            "eager_threshold",
            "64 KiB",
            "bsend_overhead",
            "system_buffer",
            "unbounded",
            "poll_cost",
            "mode",
            "modeled",
            "flops_per_s",
            "host_to_target",
            "not measured",
            "ssend table",
            "bsend table",
            "517.632 us",
            "send_overhead",
            "recv_overhead",
            "cores",
            "unlimited",
            "wake_latency",
            "handover",
            "measure_overhead",
            "Open MPI 4.1.4",
        ] {
            assert!(out.contains(word), "missing `{word}` in\n{out}");
        }
        assert_eq!(default_file().model, Model::default_machine());
    }
}
