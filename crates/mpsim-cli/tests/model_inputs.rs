//! `mpsim model check` on inputs that are not model files (endless, binary) and on values
//! beyond what a model holds: one line naming the file, the line and the key, at once.

mod common;

use common::{mpsim, text};

use std::fs;
use std::path::{Path, PathBuf};

/// [`common::model_copy`] in this file's scratch directories.
fn model_copy(name: &str, edit: impl Fn(String) -> String) -> PathBuf {
    common::model_copy("model-inputs", name, edit)
}

/// `mpsim model check PATH`, which must fail: its one line of standard error.
fn check_fails(path: &Path) -> String {
    let out = mpsim(&["model", "check", path.to_str().expect("UTF-8 path")]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(out.stdout.is_empty());
    assert_eq!(err.lines().count(), 1, "{err}");
    err
}

/// The 1-based line of the first line of `dir`'s model.toml that starts with `prefix`.
fn line_of(dir: &Path, prefix: &str) -> usize {
    let text = fs::read_to_string(dir.join("model.toml")).expect("read");
    1 + text
        .lines()
        .position(|l| l.starts_with(prefix))
        .expect("the line exists")
}

#[cfg(target_os = "linux")]
#[test]
fn check_dev_zero_is_refused_at_once() {
    assert_eq!(
        check_fails(Path::new("/dev/zero")),
        "mpsim: /dev/zero: binary data (a NUL byte on line 1), not a model file\n"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn check_a_model_whose_table_is_dev_zero_names_the_key() {
    let dir = model_copy("dev-zero-table", |t| {
        t.replace("ssend_table = \"ssend.csv\"", "ssend_table = \"/dev/zero\"")
    });
    let line = line_of(&dir, "ssend_table");
    assert_eq!(
        check_fails(&dir),
        format!(
            "mpsim: {}:{line}: `ssend_table`: /dev/zero: binary data (a NUL byte on line 1), \
             not a delay table\n",
            dir.join("model.toml").display()
        )
    );
}

#[test]
fn check_cores_beyond_32_bits_names_the_key_and_the_limit() {
    for cores in ["4294967296", "18446744073709551615", "18446744073709551616"] {
        let dir = model_copy(&format!("cores-{cores}"), |t| {
            format!("{t}\n[cpu]\ncores = {cores}\n")
        });
        let line = line_of(&dir, "cores");
        assert_eq!(
            check_fails(&dir),
            format!(
                "mpsim: {}:{line}: `cpu.cores`: `{cores}` is too large: at most 4294967295 \
                 (or \"unlimited\")\n",
                dir.join("model.toml").display()
            )
        );
    }
}

#[test]
fn check_host_to_target_echoes_extreme_values_short() {
    for (value, what) in [
        (
            "1e-300",
            "`1e-300` rounds to 0 (it is kept in whole millionths); must be > 0",
        ),
        ("1e300", "`1e300` is too large: at most 1000000"),
    ] {
        let dir = model_copy(&format!("h2t-{value}"), |t| {
            t.replace("host_to_target = 1.0", &format!("host_to_target = {value}"))
        });
        let line = line_of(&dir, "host_to_target");
        assert_eq!(
            check_fails(&dir),
            format!(
                "mpsim: {}:{line}: `compute.host_to_target`: {what}\n",
                dir.join("model.toml").display()
            )
        );
    }
}
