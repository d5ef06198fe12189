//! `scripts/validate --report DIR`: the table of measured vs predicted time is reduced from the
//! kept records as the script documents it (per round the minimum of each side, the row's
//! error the median over the rounds of each round's error, the verdict by 10%), checked on
//! made-up records; records with no row of both sides fail rather than report "0/0 PASS".
//! Arguments the script cannot take end it with a usage line and status 2 before it builds
//! anything. The measuring part of the script needs a quiet machine and minutes, and is run by
//! hand.

use std::path::{Path, PathBuf};
use std::process::Command;

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/validate")
}

/// The table `--report` prints for `runs` (the records' text) on a host of `cores` cores.
fn report(name: &str, runs: &str, cores: u32) -> String {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("runs"), runs).unwrap();
    std::fs::write(dir.join("cores"), format!("{cores}\n")).unwrap();
    let out = Command::new("bash")
        .arg(script())
        .arg("--report")
        .arg(&dir)
        .output()
        .expect("bash runs the script");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The row of `case` with `ranks`, split into words.
fn row<'a>(table: &'a str, case: &str, ranks: &str) -> Vec<&'a str> {
    table
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|w| w.len() > 1 && w[0] == case && w[1] == ranks)
        .unwrap_or_else(|| panic!("no row {case} {ranks} in\n{table}"))
}

#[test]
fn validate_report_pairs_each_round_with_itself() {
    let runs = "\
ring 2 threads 1 110
ring 2 threads 1 100
ring 2 sim 1 105
ring 2 threads 2 200
ring 2 sim 2 180
ring 2 threads 3 100
ring 2 sim 3 130
pingpong-8B 2 threads 1 80
pingpong-8B 2 sim 1 100
pingpong-8B 2 threads 2 80
pingpong-8B 2 sim 2 100
ring 3 threads 1 1000
ring 3 sim 1 950
stencil2d-n64 2 threads 1 5000
";
    let table = report("validate-report", runs, 2);
    // Round errors +5%, -10% and +30%: the median is +5% (the medians of the two sides, 100
    // and 130 ns, would say +30%).
    let ring = row(&table, "ring", "2");
    assert_eq!(ring[2..4], ["100", "ns"], "{table}");
    assert_eq!(ring[4..6], ["[+0%,", "+100%]"], "{table}");
    assert_eq!(ring[6..8], ["130", "ns"], "{table}");
    assert_eq!(ring[10..], ["+5.0%", "PASS"], "{table}");
    assert_eq!(
        row(&table, "pingpong-8B", "2")[10..],
        ["+25.0%", "MISS"],
        "{table}"
    );
    assert_eq!(
        row(&table, "ring", "3")[10..],
        [
            "-5.0%",
            "PASS",
            "(oversubscribed:",
            "3",
            "ranks",
            "on",
            "2",
            "cores)"
        ],
        "{table}"
    );
    assert_eq!(
        row(&table, "stencil2d-n64", "2")[2..],
        ["(missing", "runs)"]
    );
    assert!(
        table.contains("summary: 2/3 PASS within 10%; 1/2 PASS among rows with ranks <= 2 cores"),
        "{table}"
    );
}

#[test]
fn validate_report_without_records_is_an_error() {
    let out = Command::new("bash")
        .arg(script())
        .arg("--report")
        .arg(Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-records-here"))
        .output()
        .expect("bash runs the script");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no records"));
}

/// Records in which no case has both a measured and a predicted time validate nothing: status
/// 1 and a line saying so, not a table ending in "0/0 PASS".
#[test]
fn validate_report_with_no_complete_row_is_a_failure() {
    for (name, runs) in [
        ("validate-empty", ""),
        ("validate-one-side", "ring 2 threads 1 100\n"),
    ] {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("runs"), runs).unwrap();
        let out = Command::new("bash")
            .arg(script())
            .arg("--report")
            .arg(&dir)
            .output()
            .expect("bash runs the script");
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert_eq!(out.status.code(), Some(1), "{name}: {stdout}{stderr}");
        assert!(!stdout.contains("0/0 PASS"), "{name}: {stdout}");
        assert!(
            stderr.contains("no case has both a measured and a predicted time"),
            "{name}: {stderr}"
        );
    }
}

/// Arguments the script cannot take (a flag without its value, zero rounds, a rank count that
/// is not a number, a model directory that holds no model, an unknown flag) end it at once
/// with what is wrong, a usage line and status 2: never an unbound-variable error, nor a run
/// of nothing that reports "0/0 PASS" with status 0. Nothing is built first, so this is quick.
#[test]
fn validate_bad_arguments_are_a_usage_error() {
    let cases: [(&[&str], &str); 12] = [
        (&["--rounds"], "--rounds needs a value"),
        (
            &["--rounds", "0"],
            "--rounds takes a whole number of at least 1, not '0'",
        ),
        (
            &["--rounds", "x"],
            "--rounds takes a whole number of at least 1, not 'x'",
        ),
        (
            &["--reps", "0"],
            "--reps takes a whole number of at least 1, not '0'",
        ),
        (
            &["--reps", "-1"],
            "--reps takes a whole number of at least 1, not '-1'",
        ),
        (&["--ranks", ""], "--ranks takes a list of rank counts"),
        (
            &["--ranks", "2 x"],
            "--ranks takes a whole number of at least 1, not 'x'",
        ),
        (
            &["--ranks", "0"],
            "--ranks takes a whole number of at least 1, not '0'",
        ),
        (
            &["--idle-wait", "soon"],
            "--idle-wait takes a whole number of at least 0",
        ),
        (
            &["--model", "/nonexistent"],
            "--model takes a directory holding a model.toml",
        ),
        (&["--quick", "--keep"], "--keep needs a value"),
        (&["--roundz", "3"], "unknown argument '--roundz'"),
    ];
    for (args, what) in cases {
        let out = Command::new("bash")
            .arg(script())
            .args(args)
            .output()
            .expect("bash runs the script");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.starts_with(&format!("validate: {what}")),
            "{args:?}: {stderr}"
        );
        assert!(
            stderr.contains("\nusage: scripts/validate "),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("unbound variable"), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing runs");
    }
}
