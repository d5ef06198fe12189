//! The p2p stress program of the Rust tests (`crates/mpsim/tests/p2p_stress.rs`) and its C
//! port (`tests/c/p2p_stress.c`, built by `mpsim cc`, run by `mpsim run`) give the same report
//! and the same trace, byte for byte, simulated with modeled compute (issue 38: the C door
//! executes a C rank's calls with the same `Comm` calls a Rust rank makes, so the simulator
//! sees the same program). 20,000 random messages on 8 ranks, every send mode, blocking,
//! nonblocking and persistent sends, wildcard receives, strict ready sends.
//!
//! A test harness of its own (`harness = false`, as `mpsim/tests/mpi_backend.rs`): it includes
//! `p2p_stress.rs` as a module for its program, whose own `#[test]`s then stay out of this
//! binary. The MPI library is built as `tests/c_door.rs` builds it.

#[allow(dead_code, unused_imports)]
#[path = "../../mpsim/tests/p2p_stress.rs"]
mod stress;

#[path = "common/c_door.rs"]
mod c_lib;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::Arc;

use mpsim::Launcher;

const MPSIM: &str = env!("CARGO_BIN_EXE_mpsim");
/// The Rust test's seed of its 8-rank plan.
const SEED: u64 = 0x5EED_0000_0008_0001;
const RANKS: u32 = 8;
const TOTAL: usize = 20_000;

/// Builds the C program (and the MPI library, as `c_door.rs` does, into the same directory).
fn build_c(dir: &Path) -> PathBuf {
    let exe = dir.join("p2p_stress");
    c_lib::build("p2p_stress", &exe);
    exe
}

/// c_p2p_stress_same_report_and_trace_as_rust: the report and trace of both, simulated.
fn same_report_and_trace_as_rust() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (rust_report, rust_trace) = (dir.path().join("rust.txt"), dir.path().join("rust.trace"));
    let (c_report, c_trace) = (dir.path().join("c.txt"), dir.path().join("c.trace"));

    let tally = Arc::new(stress::Tally::default());
    let t = Arc::clone(&tally);
    Launcher::new(RANKS)
        .strict(true)
        .report_out(&rust_report)
        .trace(&rust_trace)
        .run(move |world| stress::stress_rank(world, SEED, TOTAL, Arc::clone(&t)))
        .expect("the Rust stress run");

    let exe = build_c(dir.path());
    let out = Command::new(MPSIM)
        .args([
            "run",
            "-np",
            &RANKS.to_string(),
            "--strict",
            "--compute",
            "modeled",
        ])
        .arg("--report-out")
        .arg(&c_report)
        .arg("--trace")
        .arg(&c_trace)
        .arg(&exe)
        .args([format!("{SEED:#x}"), TOTAL.to_string()])
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .expect("mpsim run runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the C stress run failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Each rank checked what the plan sends it: together, every message.
    let checked: u64 = stdout
        .lines()
        .filter_map(|l| {
            l.split(" checked ")
                .nth(1)?
                .split(' ')
                .next()?
                .parse::<u64>()
                .ok()
        })
        .sum();
    assert_eq!(checked, TOTAL as u64, "{stdout}");

    let read = |p: &Path| std::fs::read_to_string(p).expect("an output file");
    let (r, c) = (read(&rust_report), read(&c_report));
    // The C run's report says its compute is modeled; a Rust run's says the same.
    assert_eq!(c, r, "reports differ");
    assert!(read(&c_trace) == read(&rust_trace), "traces differ");
}

fn main() -> ExitCode {
    // `cargo test -- --list` and filters: one test, by name.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let name = "c_p2p_stress_same_report_and_trace_as_rust";
    if args.iter().any(|a| a == "--list") {
        println!("{name}: test");
        return ExitCode::SUCCESS;
    }
    if let Some(filter) = args.iter().find(|a| !a.starts_with('-'))
        && !name.contains(filter.as_str())
    {
        return ExitCode::SUCCESS;
    }
    same_report_and_trace_as_rust();
    println!("test {name} ... ok");
    ExitCode::SUCCESS
}
