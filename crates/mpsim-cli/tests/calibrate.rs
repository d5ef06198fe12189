//! `mpsim calibrate` end to end through the binary: a short sweep (`--max-size 4096 --reps 1`)
//! writes a model that `mpsim model check` accepts and whose tables and ack latency are valid.
//! No timing thresholds: only the shape of what was measured is checked.

mod common;

use common::{mpsim, text};

use std::fs;
use std::path::Path;

use mpsim_sim::ModelFile;

#[test]
fn calibrate_threads_writes_a_valid_model() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("calibrate-{}", std::process::id()))
        .join("model");
    let _ = fs::remove_dir_all(&dir);
    let arg = dir.to_str().expect("UTF-8 path");
    let out = mpsim(&[
        "calibrate",
        "--backend",
        "threads",
        "--out",
        arg,
        "--reps",
        "1",
        "--max-size",
        "4096",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("bsend_ns") && stdout.contains("ssend_ns"),
        "{stdout}"
    );
    assert!(stdout.contains(&format!("wrote {arg}")), "{stdout}");

    let check = mpsim(&["model", "check", arg]);
    assert!(check.status.success(), "{}", text(&check.stderr));
    assert_eq!(text(&check.stdout), format!("ok: {arg}\n"));

    let file = ModelFile::load(&dir).expect("the calibrated model loads");
    let m = &file.model;
    assert!(m.ack_latency_ns > 0);
    let want: Vec<u64> = vec![1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096];
    for table in [&m.bsend, &m.ssend] {
        let points = table.points();
        let sizes: Vec<u64> = points.iter().map(|p| p.0).collect();
        assert_eq!(sizes, want);
        assert!(points.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(points.iter().all(|p| p.1 > 0));
    }
    let description = file.description.expect("a [meta] description");
    assert!(description.contains("threads backend"), "{description}");
}

#[test]
fn calibrate_rejects_bad_flags() {
    for args in [
        &["calibrate"][..],
        &["calibrate", "--backend", "mpi"],
        &["calibrate", "--backend", "threads", "--reps", "0"],
        &["calibrate", "--backend", "threads", "--max-size", "0"],
    ] {
        let out = mpsim(args);
        assert!(!out.status.success(), "{args:?} should fail");
    }
}
