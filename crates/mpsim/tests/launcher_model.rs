//! `--model PATH` on the launcher: a model file replaces the embedded default, `--compute`
//! overrides its mode and `--eager-threshold` its eager threshold only when given, and a bad
//! file is an error naming file and line.

use std::fs;
use std::path::{Path, PathBuf};

use clap::Parser;
use mpsim::sim::{ComputeMode, Model, ModelFileError};
use mpsim::{Comm, LaunchArgs, Launcher};

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    launch: LaunchArgs,
}

fn args(flags: &[&str]) -> LaunchArgs {
    let argv = std::iter::once("prog").chain(flags.iter().copied());
    Cli::try_parse_from(argv).expect("flags parse").launch
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("launcher-model-{}", std::process::id()))
        .join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Rank 0 computes 5 us, then sends 8 bytes synchronously to rank 1.
async fn program(world: Comm) -> mpsim::Result<()> {
    if world.rank() == 0 {
        world.compute(std::time::Duration::from_nanos(5_000)).await;
        world.ssend(&[1u64], 1, 0).await?;
    } else {
        world.recv(&mut [0u64], 0, 0).await?;
    }
    Ok(())
}

/// The worked-examples model, compute ignored, as files.
fn ignored_worked_examples(name: &str) -> PathBuf {
    let dir = scratch(name);
    let model = Model {
        compute: ComputeMode::Ignored,
        ..Model::worked_examples()
    };
    model.write_to(&dir).expect("writes");
    dir
}

#[test]
fn model_flag_selects_the_model_file() {
    let dir = ignored_worked_examples("case1");
    let flags = ["-n", "2", "--model", dir.to_str().expect("UTF-8 path")];
    let launcher = Launcher::try_from_args(args(&flags)).expect("loads");
    let from_file = launcher.simulate(program);
    let model = Model {
        compute: ComputeMode::Ignored,
        ..Model::worked_examples()
    };
    let in_code = Launcher::new(2).model(model).simulate(program);
    assert!(from_file.error.is_none(), "{:?}", from_file.error);
    assert_eq!(from_file.report.to_string(), in_code.report.to_string());
    // Compute ignored, ssend 1000 ns + ack 200 ns.
    assert_eq!(from_file.report.predicted_ns(), 1_200);
}

#[test]
fn compute_flag_overrides_the_files_mode_only_when_given() {
    let dir = ignored_worked_examples("case2");
    let path = dir.to_str().expect("UTF-8 path");
    let file_mode = Launcher::try_from_args(args(&["-n", "2", "--model", path]))
        .expect("loads")
        .simulate(program);
    assert_eq!(file_mode.report.compute, Some(ComputeMode::Ignored));
    let flag_mode =
        Launcher::try_from_args(args(&["-n", "2", "--model", path, "--compute", "modeled"]))
            .expect("loads")
            .simulate(program);
    assert_eq!(flag_mode.report.compute, Some(ComputeMode::Modeled));
    assert_eq!(flag_mode.report.predicted_ns(), 6_200);
}

/// Rank 0 sends 8 bytes by standard send to rank 1.
async fn standard_send_8_bytes(world: Comm) -> mpsim::Result<()> {
    if world.rank() == 0 {
        world.send(&[1u64], 1, 0).await?;
    } else {
        world.recv(&mut [0u64], 0, 0).await?;
    }
    Ok(())
}

/// Messages sent by protocol (`PROTOCOLS`: eager, buffered, rendezvous, ready) when `launcher`
/// simulates [`standard_send_8_bytes`].
fn protocols(launcher: &Launcher) -> [u64; 4] {
    let outcome = launcher.simulate(standard_send_8_bytes);
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    outcome.report.total_sent().messages
}

#[test]
fn eager_threshold_flag_overrides_the_models_only_when_given() {
    const EAGER: [u64; 4] = [1, 0, 0, 0];
    const RENDEZVOUS: [u64; 4] = [0, 0, 1, 0];
    let from = |flags: &[&str]| Launcher::try_from_args(args(flags)).expect("loads");
    // The embedded model's threshold (64 KiB) sends 8 bytes eagerly; a flag below 8 does not.
    assert_eq!(protocols(&from(&["-n", "2"])), EAGER);
    assert_eq!(
        protocols(&from(&["-n", "2", "--eager-threshold", "4"])),
        RENDEZVOUS
    );
    // A model file's threshold of 4 bytes is used without the flag, and overridden by it.
    let dir = scratch("eager");
    let small = Model {
        eager_threshold: 4,
        ..Model::default()
    };
    small.write_to(&dir).expect("writes");
    let path = dir.to_str().expect("UTF-8 path");
    assert_eq!(protocols(&from(&["-n", "2", "--model", path])), RENDEZVOUS);
    let flags = ["-n", "2", "--model", path, "--eager-threshold", "8"];
    assert_eq!(protocols(&from(&flags)), EAGER);
    // In code, the launcher's threshold wins whether set before or after the model.
    let set_first = Launcher::new(2).eager_threshold(8).model(small.clone());
    let set_after = Launcher::new(2).model(small).eager_threshold(8);
    assert_eq!(protocols(&set_first), EAGER);
    assert_eq!(protocols(&set_after), EAGER);
}

#[test]
fn model_default_is_the_embedded_model() {
    let a = Launcher::try_from_args(args(&["-n", "2", "--model", "default"]))
        .expect("loads")
        .simulate(program);
    let b = Launcher::new(2).simulate(program);
    assert_eq!(a.report.to_string(), b.report.to_string());
}

#[test]
fn a_bad_model_file_is_an_error_not_a_panic() {
    let dir = ignored_worked_examples("case3");
    let toml = dir.join("model.toml");
    let text = fs::read_to_string(&toml).expect("read");
    let line = 1 + text
        .lines()
        .position(|l| l.starts_with("poll_cost"))
        .expect("poll_cost");
    fs::write(
        &toml,
        text.replace("poll_cost = \"100ns\"", "poll_cost = \"0ns\""),
    )
    .expect("write");
    let e = Launcher::try_from_args(args(&["--model", toml.to_str().expect("UTF-8 path")]))
        .expect_err("poll_cost 0");
    assert!(matches!(e, ModelFileError::Value { .. }));
    assert_eq!(
        e.to_string(),
        format!(
            "{}:{line}: `network.poll_cost`: must be > 0",
            toml.display()
        )
    );
    let e = Launcher::try_from_args(args(&["--model", "/nonexistent"])).expect_err("missing");
    assert!(e.to_string().contains("/nonexistent"), "{e}");
}
