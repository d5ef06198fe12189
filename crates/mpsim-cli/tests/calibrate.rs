//! `mpsim calibrate` end to end through the binary: short sweeps (`--reps 1`, small
//! `--max-size`) on the threads backend and through the system MPI write models that
//! `mpsim model check` accepts and whose tables and ack latency are valid; `--from-osu` turns
//! the samples in `tests/data/` into tables equal to their figures, and names `FILE:LINE` of a
//! malformed row. No timing thresholds: only the shape of what was measured is checked.
//!
//! The MPI tests hold on any machine: with `mpirun` on PATH the calibration runs, without it
//! the error that says how to install Open MPI is what is checked (and the missing-MPI error is
//! checked everywhere by running with an empty PATH).

mod common;

use common::{mpsim, text};

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard};

use mpsim_sim::{Model, ModelFile};

/// Held by the tests that measure: each calibration busy-polls two cores, and two at once on a
/// 2-core machine would each take many times longer (the minima would survive, the runtime not).
static MEASURING: Mutex<()> = Mutex::new(());

/// Takes [`MEASURING`], whether or not a test that held it failed.
fn measuring() -> MutexGuard<'static, ()> {
    MEASURING.lock().unwrap_or_else(|e| e.into_inner())
}

/// A fresh directory for one test's files.
fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("calibrate-{}", std::process::id()))
        .join(test);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("the scratch directory can be created");
    dir
}

/// A sample of `osu_latency` output from `tests/data`.
fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// The `(size, ns)` rows of an osu_latency file, read independently of mpsim's parser: every
/// figure in the samples has two decimals, so `0.15` us is `15 * 10` ns.
fn osu_rows(path: &Path) -> Vec<(u64, u64)> {
    let text = fs::read_to_string(path).expect("the sample is readable");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (size, us) = l.split_once(' ').expect("a row has two fields");
            let us = us.trim();
            assert_eq!(us.len() - us.find('.').expect("a decimal point"), 3, "{l}");
            let hundredths: u64 = us.replace('.', "").parse().expect("a number");
            (size.parse().expect("a size"), hundredths * 10)
        })
        .collect()
}

/// `mpsim calibrate --from-osu FILE --out OUT EXTRA...`.
fn from_osu(file: &Path, out: &Path, extra: &[&str]) -> Output {
    let (file, out) = (file.to_str().expect("UTF-8"), out.to_str().expect("UTF-8"));
    let mut args = vec!["calibrate", "--from-osu", file, "--out", out];
    args.extend(extra);
    mpsim(&args)
}

/// Whether `mpirun` can be started here.
fn mpirun_on_path() -> bool {
    match Command::new("mpirun").arg("--version").output() {
        Ok(_) => true,
        Err(e) if e.kind() == io::ErrorKind::NotFound => false,
        Err(e) => panic!("mpirun exists but does not start: {e}"),
    }
}

/// Checks the error `--backend mpi` gives without `mpirun`.
fn assert_says_mpi_is_missing(out: &Output) {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("`mpirun` not found on PATH")
            && stderr.contains("bench/install-peers.sh")
            && stderr.contains("apt-get install -y openmpi-bin libopenmpi-dev"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// `mpsim calibrate --backend BACKEND --reps 1 --max-size MAX_SIZE` into a fresh directory
/// (holding [`MEASURING`]); returns what it did and the directory.
fn calibrate_quickly(backend: &str, max_size: &str) -> (Output, PathBuf) {
    let dir = scratch(backend).join("model");
    let arg = dir.to_str().expect("UTF-8 path");
    let _measuring = measuring();
    let out = mpsim(&[
        "calibrate",
        "--backend",
        backend,
        "--out",
        arg,
        "--reps",
        "1",
        "--max-size",
        max_size,
    ]);
    (out, dir)
}

/// Checks a successful quick calibration: it printed both tables, `mpsim model check` accepts
/// what it wrote, and the model has a positive ack latency and tables of exactly `sizes` with
/// positive delays. Returns the model.
fn assert_measured_model(out: &Output, dir: &Path, sizes: &[u64]) -> ModelFile {
    let arg = dir.to_str().expect("UTF-8 path");
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

    let file = ModelFile::load(dir).expect("the calibrated model loads");
    let m = &file.model;
    assert!(m.ack_latency_ns > 0);
    for table in [&m.bsend, &m.ssend] {
        let points = table.points();
        assert_eq!(points.iter().map(|p| p.0).collect::<Vec<_>>(), sizes);
        assert!(points.iter().all(|p| p.1 > 0));
    }
    file
}

#[test]
fn calibrate_threads_writes_a_valid_model() {
    let (out, dir) = calibrate_quickly("threads", "4096");
    let sizes = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096];
    let file = assert_measured_model(&out, &dir, &sizes);
    let description = file.description.expect("a [meta] description");
    assert!(description.contains("threads backend"), "{description}");
}

/// `--bsp` also measures r, g and l (bspbench's way, `spec/bsplib.md` §3) and writes them:
/// `flops_per_s` and `[bsp]`, a model `model check` accepts; one process is refused.
#[test]
fn calibrate_threads_bsp_writes_r_g_and_l() {
    let dir = scratch("threads-bsp").join("model");
    let arg = dir.to_str().expect("UTF-8 path");
    let out = {
        let _measuring = measuring();
        mpsim(&[
            "calibrate",
            "--backend",
            "threads",
            "--out",
            arg,
            "--reps",
            "1",
            "--max-size",
            "8",
            "--bsp",
        ])
    };
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("BSP on 2 processes: r "),
        "{}",
        text(&out.stdout)
    );
    let file = ModelFile::open(&dir).expect("the model loads");
    let m = &file.model;
    assert!(m.bsp_l_ns.is_some_and(|l| l >= 1), "{:?}", m.bsp_l_ns);
    assert!(m.bsp_g_ps_per_byte.is_some());
    assert_ne!(m.flops_per_s, Model::default_machine().flops_per_s);
    let refused = mpsim(&[
        "calibrate",
        "--backend",
        "threads",
        "--bsp",
        "--bsp-procs",
        "1",
    ]);
    assert!(!refused.status.success());
}

#[test]
fn calibrate_rejects_bad_flags() {
    let cwd = scratch("bad-flags");
    for args in [
        &["calibrate"][..],
        &["calibrate", "--backend", "bogus"],
        &["calibrate", "--backend", "threads", "--reps", "0"],
        &["calibrate", "--backend", "threads", "--max-size", "0"],
        // One size measured: a one-point table, the same delay for every size.
        &["calibrate", "--backend", "threads", "--max-size", "7"],
        &["calibrate", "--backend", "threads", "--from-osu", "lat.txt"],
        &["calibrate", "--backend", "threads", "--mode", "ssend"],
        &["calibrate", "--from-osu", "lat.txt", "--reps", "2"],
        &["calibrate", "--from-osu", "lat.txt", "--max-size", "64"],
        &["calibrate", "--from-osu", "lat.txt", "--mode", "eager"],
    ] {
        // In a scratch directory, so that a flag accepted by mistake leaves no model behind.
        let out = Command::new(env!("CARGO_BIN_EXE_mpsim"))
            .args(args)
            .current_dir(&cwd)
            .output()
            .expect("the mpsim binary runs");
        // clap's usage errors exit with 2, before anything is read or measured.
        assert_eq!(out.status.code(), Some(2), "{args:?} should fail");
    }
}

#[test]
fn calibrate_mpi_without_mpirun_says_how_to_install() {
    let empty = scratch("empty-path");
    let out = Command::new(env!("CARGO_BIN_EXE_mpsim"))
        .args([
            "calibrate",
            "--backend",
            "mpi",
            "--max-size",
            "8",
            "--reps",
            "1",
        ])
        .arg("--out")
        .arg(empty.join("model"))
        .env("PATH", &empty)
        .output()
        .expect("the mpsim binary runs");
    assert_says_mpi_is_missing(&out);
    assert!(!empty.join("model").exists());
}

#[test]
fn calibrate_mpi_writes_a_valid_model_or_says_mpi_is_missing() {
    let (out, dir) = calibrate_quickly("mpi", "1024");
    if !mpirun_on_path() {
        assert_says_mpi_is_missing(&out);
        return;
    }
    let sizes = [1, 8, 16, 32, 64, 128, 256, 512, 1024];
    let file = assert_measured_model(&out, &dir, &sizes);
    let version = Command::new("mpirun")
        .arg("--version")
        .output()
        .expect("mpirun runs");
    let version = text(&version.stdout);
    let first = version.lines().next().unwrap_or("").trim();
    let description = file.description.expect("a [meta] description");
    assert!(
        description.contains(&format!("`{first}`")) && description.contains("MPI_Bsend"),
        "{description}"
    );
}

#[test]
fn calibrate_from_osu_v7_fills_both_tables_with_its_figures() {
    let osu = sample("osu_latency-v7.1.txt");
    let dir = scratch("osu-v7").join("model");
    let out = from_osu(&osu, &dir, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("wrote "),
        "{}",
        text(&out.stdout)
    );
    let check = mpsim(&["model", "check", dir.to_str().expect("UTF-8")]);
    assert!(check.status.success(), "{}", text(&check.stderr));

    let rows = osu_rows(&osu);
    assert_eq!(
        (rows.len(), rows[3], rows[22]),
        (23, (8, 150), (4_194_304, 380_240))
    );
    let file = ModelFile::load(&dir).expect("the converted model loads");
    let m = &file.model;
    assert_eq!(m.bsend.points(), &rows[..]);
    assert_eq!(m.ssend.points(), &rows[..]);
    // No 0-byte row in the v7 layout: the smallest size gives the ack latency.
    assert_eq!(m.ack_latency_ns, 150);
    let default = Model::default_machine();
    assert_eq!(
        (m.eager_threshold, m.bsend_overhead, m.poll_cost_ns),
        (
            default.eager_threshold,
            default.bsend_overhead,
            default.poll_cost_ns
        )
    );
    let description = file.description.expect("a [meta] description");
    assert!(
        description.contains("OSU MPI Latency Test v7.1")
            && description.contains("standard sends only"),
        "{description}"
    );
}

#[test]
fn calibrate_from_osu_v5_takes_the_ack_latency_from_its_0_byte_row() {
    let osu = sample("osu_latency-v5.8.txt");
    let dir = scratch("osu-v5").join("model");
    let out = from_osu(&osu, &dir, &["--mode", "ssend"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let file = ModelFile::load(&dir).expect("the converted model loads");
    let rows = osu_rows(&osu);
    assert_eq!(rows[0], (0, 140));
    assert_eq!(file.model.ssend.points(), &rows[..]);
    assert_eq!(file.model.bsend, Model::default_machine().bsend);
    assert_eq!(file.model.ack_latency_ns, 140);
}

#[test]
fn calibrate_from_osu_names_the_line_of_a_malformed_row() {
    let dir = scratch("osu-bad");
    let good = fs::read_to_string(sample("osu_latency-v5.8.txt")).expect("the sample reads");
    // Line 5 of the sample is the row for 2 B.
    let cases = [
        (
            "2                       fast",
            "5: latency `fast` is not a number of microseconds",
        ),
        (
            "2",
            "5: expected an osu_latency row `SIZE LATENCY_US`, found `2`",
        ),
        (
            "1                       0.15",
            "5: sizes must increase: 1 comes after 1 (line 4)",
        ),
        (
            "2K                      0.15",
            "5: size `2K` is not a whole number of bytes",
        ),
        (
            "18446744073709551616    0.15",
            "5: size `18446744073709551616` is too large (at most 18446744073709551615 bytes)",
        ),
        (
            "2                       -0.22",
            "5: latency `-0.22` us is negative",
        ),
        (
            "2                       1e300",
            "5: latency `1e300` us is too large: at most 18446744073709551.615 us",
        ),
    ];
    for (i, (row, want)) in cases.into_iter().enumerate() {
        let mut lines: Vec<&str> = good.lines().collect();
        assert!(lines[4].starts_with("2 "), "{}", lines[4]);
        lines[4] = row;
        let file = dir.join(format!("bad-{i}.txt"));
        fs::write(&file, lines.join("\n")).expect("the bad sample is written");
        let out = from_osu(&file, &dir.join("model"), &[]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{row}: {stderr}");
        assert_eq!(
            stderr,
            format!("mpsim: {}:{want}\n", file.display()),
            "{row}"
        );
        assert!(!dir.join("model").exists(), "{row}: nothing is written");
    }
}

#[test]
fn calibrate_from_osu_missing_file_is_a_clear_error() {
    let dir = scratch("osu-missing");
    let missing = dir.join("no-such-file.txt");
    let out = from_osu(&missing, &dir.join("model"), &[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(&format!("mpsim: {}: cannot read: ", missing.display())),
        "{stderr}"
    );
}

#[test]
fn calibrate_from_osu_skips_a_byte_order_mark() {
    let dir = scratch("osu-bom");
    let file = dir.join("bom.txt");
    let good = fs::read(sample("osu_latency-v7.1.txt")).expect("the sample reads");
    fs::write(&file, [&b"\xef\xbb\xbf"[..], &good].concat()).expect("written");
    let out = from_osu(&file, &dir.join("model"), &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let model = Model::load(dir.join("model")).expect("the model loads");
    let rows = osu_rows(&sample("osu_latency-v7.1.txt"));
    assert_eq!(model.ssend.points(), &rows[..]);
}

#[cfg(target_os = "linux")]
#[test]
fn calibrate_from_osu_dev_zero_is_refused_at_once() {
    let dir = scratch("osu-zero");
    let out = from_osu(Path::new("/dev/zero"), &dir.join("model"), &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "mpsim: /dev/zero: binary data (a NUL byte on line 1), not osu_latency output\n"
    );
}

#[test]
fn calibrate_out_that_cannot_be_a_directory_fails_before_measuring() {
    let dir = scratch("out-file");
    let file = dir.join("existing");
    fs::write(&file, "not a directory").expect("written");
    let under_file = file.join("model");
    for (out, what) in [
        (&file, "exists and is not a directory"),
        (
            &under_file,
            &*format!("cannot be created: {} is not a directory", file.display()),
        ),
    ] {
        let out_arg = out.to_str().expect("UTF-8");
        // The default sweep takes seconds: failing after it would show in the time, and in
        // the "calibrating ..." line printed before measuring.
        let run = mpsim(&["calibrate", "--backend", "threads", "--out", out_arg]);
        let stderr = text(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.starts_with(&format!(
                "mpsim: --out {out_arg}: {what}; --out names a directory"
            )),
            "{stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "nothing was measured: {stderr}");
        let run = from_osu(&sample("osu_latency-v5.8.txt"), out, &[]);
        assert!(text(&run.stderr).contains(what), "{}", text(&run.stderr));
    }
    assert_eq!(
        fs::read_to_string(&file).expect("still there"),
        "not a directory"
    );
}

/// An `--out` that cannot be written into fails at once with the directory that refused, before
/// a second of measuring (the default sweep takes seconds, and a failure after it used to lose
/// them): a read-only directory (where the user is not root, who may write anywhere) and
/// `/proc`, where no one may make a file.
#[test]
fn calibrate_out_that_cannot_be_written_fails_before_measuring() {
    let dir = scratch("out-unwritable");
    let mut cases: Vec<(PathBuf, PathBuf)> = Vec::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let locked = dir.join("locked");
        fs::create_dir(&locked).expect("created");
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o555)).expect("chmod");
        if fs::write(locked.join("probe"), "").is_err() {
            cases.push((locked.clone(), locked.clone()));
            cases.push((locked.join("model"), locked.clone()));
        }
    }
    if Path::new("/proc/self").exists() {
        cases.push(("/proc/mpsim-model".into(), "/proc".into()));
    }
    for (out, refused) in &cases {
        let out_arg = out.to_str().expect("UTF-8");
        let run = mpsim(&["calibrate", "--backend", "threads", "--out", out_arg]);
        let stderr = text(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.starts_with(&format!(
                "mpsim: --out {out_arg}: cannot write into {}: ",
                refused.display()
            )),
            "{stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "nothing was measured: {stderr}");
        assert!(!out.join(mpsim_sim::MODEL_TOML).exists());
    }
    eprintln!("{} unwritable --out checked", cases.len());
}

/// A model written over an existing one replaces its three files, keeps the directory's other
/// files, and leaves no temporary file beside them (each is written under a temporary name and
/// renamed once all are on disk: `mpsim_sim::output::write_files_in`).
#[test]
fn calibrate_over_an_existing_model_replaces_its_files_only() {
    let dir = scratch("out-replace");
    let model = dir.join("model");
    let run = from_osu(&sample("osu_latency-v5.8.txt"), &model, &[]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    fs::write(model.join("notes.txt"), "mine").expect("written");
    let run = from_osu(&sample("osu_latency-v7.1.txt"), &model, &[]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let loaded = ModelFile::load(&model).expect("loads");
    assert!(
        loaded.description.as_deref().unwrap_or("").contains("v7"),
        "{:?}",
        loaded.description
    );
    let mut names: Vec<_> = fs::read_dir(&model)
        .expect("listed")
        .map(|e| e.expect("entry").file_name().into_string().expect("UTF-8"))
        .collect();
    names.sort();
    assert_eq!(names, ["bsend.csv", "model.toml", "notes.txt", "ssend.csv"]);
    let beside: Vec<_> = fs::read_dir(&dir).expect("listed").collect();
    assert_eq!(beside.len(), 1, "only the model directory: {beside:?}");
}
