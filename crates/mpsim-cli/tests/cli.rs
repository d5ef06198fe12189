//! The `mpsim` binary end to end: `model check` on good and bad files (exit codes, messages that
//! name file:line), `model show default`, and standard output that cannot be written (an
//! error, or quiet for a reader that has gone; never a panic).

mod common;

use common::{mpsim, text};

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// [`common::model_copy`] in this file's scratch directories.
fn model_copy(name: &str, edit: impl Fn(String) -> String) -> PathBuf {
    common::model_copy("cli", name, edit)
}

/// The 1-based line of the first line of `text` that starts with `prefix`.
fn line_of(text: &str, prefix: &str) -> usize {
    1 + text
        .lines()
        .position(|l| l.starts_with(prefix))
        .expect("the line exists")
}

#[test]
fn check_a_good_model() {
    let dir = model_copy("good", |t| t);
    let arg = dir.to_str().expect("UTF-8 path");
    let out = mpsim(&["model", "check", arg]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), format!("ok: {arg}\n"));
    let out = mpsim(&["model", "check", "default"]);
    assert!(out.status.success());
    assert_eq!(text(&out.stdout), "ok: default\n");
}

#[test]
fn check_a_bad_model_names_file_and_line() {
    let dir = model_copy("bad-unit", |t| {
        t.replace("poll_cost = \"100ns\"", "poll_cost = \"100 ps\"")
    });
    let toml = dir.join("model.toml");
    let line = line_of(&fs::read_to_string(&toml).expect("read"), "poll_cost");
    let out = mpsim(&["model", "check", toml.to_str().expect("UTF-8 path")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = text(&out.stderr);
    assert!(
        err.starts_with(&format!(
            "mpsim: {}:{line}: `network.poll_cost`: unknown unit `ps`",
            toml.display()
        )),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn check_a_bad_table_names_the_csv_and_its_row() {
    let dir = model_copy("bad-table", |t| t);
    let csv = dir.join("bsend.csv");
    let table = fs::read_to_string(&csv)
        .expect("read")
        .replace("64,219", "64,0");
    fs::write(&csv, &table).expect("write");
    let line = line_of(&table, "64,0");
    let out = mpsim(&["model", "check", dir.to_str().expect("UTF-8 path")]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.starts_with(&format!(
            "mpsim: {}:{line}: delay at 64 bytes is 0",
            csv.display()
        )),
        "{err}"
    );
}

#[test]
fn check_a_missing_model() {
    let out = mpsim(&["model", "check", "/nonexistent/model.toml"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("/nonexistent/model.toml: cannot read"));
}

#[test]
fn show_default_prints_every_parameter_and_both_tables() {
    let out = mpsim(&["model", "show", "default"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    for word in [
        "description: Open MPI 4.1.4",
        "ack_latency         150 ns",
        "eager_threshold     64 KiB",
        "bsend_overhead      64 B",
        "system_buffer       unbounded",
        "poll_cost           100 ns",
        "mode                modeled",
        "flops_per_s         10,000,000,000 flop/s",
        "host_to_target      1.0",
        "g                   not measured",
        "cores               unlimited",
        "send_overhead       0 ns",
        "ssend table:",
        "bsend table:",
        "4 MiB      517.632 us",
        "4 MiB      517.332 us",
    ] {
        assert!(s.contains(word), "missing `{word}` in\n{s}");
    }
}

#[test]
fn show_a_bad_model_fails() {
    let dir = model_copy("show-bad", |t| {
        t.replace("[compute]", "[compute]\nspeed = 1")
    });
    let out = mpsim(&["model", "show", dir.to_str().expect("UTF-8 path")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("unknown field `speed`"));
}

/// `mpsim` with `args` and standard output `stdout`.
fn mpsim_to(args: &[&str], stdout: impl Into<Stdio>) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mpsim"))
        .args(args)
        .stdout(stdout)
        .output()
        .expect("the mpsim binary runs")
}

#[test]
fn output_to_a_full_disk_is_an_error_not_a_panic() {
    if !Path::new("/dev/full").exists() {
        eprintln!("skipped: no /dev/full");
        return;
    }
    for args in [["model", "show", "default"], ["model", "check", "default"]] {
        let full = fs::File::options()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let out = mpsim_to(&args, full);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(
            text(&out.stderr),
            "mpsim: I/O error: cannot write standard output: No space left on device (os error \
             28)\n",
            "{args:?}"
        );
    }
}

#[test]
fn output_to_a_closed_pipe_ends_quietly() {
    // `mpsim model show default | head -1` once `head` has its line and has gone.
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let out = mpsim_to(&["model", "show", "default"], writer);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stderr), "");
}
