//! `mpsim calibrate --backend mpi`: the [`Plan`] measured through the system MPI (Open MPI on
//! the project's machines), until mpsim has an MPI backend of its own.
//!
//! `peers/calibrate.c` (embedded) is written to a fresh temporary directory, built with
//! `mpicc -O2` and run by `mpirun -np 2`; its command line carries the plan (repetitions,
//! chunks, per size the warm-up and timed iterations), so it times exactly the batches the
//! threads backend times, and its output (`rtt0 NS`, `bsend SIZE NS`, `ssend SIZE NS`, one line
//! per batch) is recorded into [`Measured`] like theirs. Fitting and writing are shared.
//!
//! Open MPI refuses to run as root and to place 2 ranks on fewer slots unless told, so when
//! `mpirun --version` says Open MPI, `--allow-run-as-root --oversubscribe` and the matching
//! environment variables are added (`docs/peers.md`); another MPI gets a plain `-np 2`.
//!
//! Failures are errors, never panics or hangs: a missing `mpicc` or `mpirun` says how to
//! install Open MPI; a failed build or run shows the end of the tool's standard error; a tool
//! that does not finish in its time ([`QUICK_LIMIT`], [`RUN_LIMIT`]: a hung MPI launch waits
//! for ever) is killed and named.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use wait_timeout::ChildExt;

use super::{CHUNKS, Measured, Measurement, Ping, Plan, iterations};

/// The measuring program (C, MPI).
const SOURCE: &str = include_str!("../../peers/calibrate.c");
/// How to get `mpicc` and `mpirun` on the project's machines.
const INSTALL_HINT: &str = "run `bench/install-peers.sh` (or `apt-get install -y openmpi-bin \
                            libopenmpi-dev`) to install Open MPI";
/// Lines of a failed tool's standard error shown in the error.
const TAIL_LINES: usize = 20;
/// The longest `mpirun --version` or the build of the program may take.
const QUICK_LIMIT: Duration = Duration::from_secs(120);
/// The longest the measuring run may take (it takes seconds to a few minutes).
const RUN_LIMIT: Duration = Duration::from_secs(30 * 60);

/// Builds and runs the C program; returns rank 0's measurements.
pub(super) fn measure(plan: &Plan) -> Result<Measurement, String> {
    let version = run_tool(
        "mpirun",
        Command::new("mpirun").arg("--version"),
        QUICK_LIMIT,
    )?;
    let version = version
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("unknown MPI")
        .to_string();
    let open_mpi = version.contains("Open MPI");

    let dir = TempDir::new()?;
    let src = dir.0.join("calibrate.c");
    let exe = dir.0.join("calibrate");
    fs::write(&src, SOURCE).map_err(|e| format!("{}: cannot write: {e}", src.display()))?;
    run_tool(
        "mpicc",
        Command::new("mpicc")
            .arg("-O2")
            .arg(&src)
            .arg("-o")
            .arg(&exe),
        QUICK_LIMIT,
    )?;

    let flags: &[&str] = if open_mpi {
        &["--allow-run-as-root", "--oversubscribe"]
    } else {
        &[]
    };
    let mut mpirun = Command::new("mpirun");
    mpirun
        .args(flags)
        .args(["-np", "2"])
        .arg(&exe)
        .args(schedule(plan));
    if open_mpi {
        mpirun
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    }
    let out = run_tool("mpirun", &mut mpirun, RUN_LIMIT)?;
    let measured = parse_output(&out, plan)?;
    let mut launch = String::from("mpirun");
    for f in flags.iter().chain(&["-np", "2"]) {
        launch.push(' ');
        launch.push_str(f);
    }
    Ok(Measurement {
        measured,
        how: format!(
            "2 processes of the system MPI, `{version}` (first line of `mpirun --version`), \
             running mpsim's peers/calibrate.c built with `mpicc -O2` under `{launch}` over the \
             library's default transport; pings by MPI_Bsend (from an attached buffer) and \
             MPI_Ssend, answers by 0-byte MPI_Send"
        ),
    })
}

/// The C program's arguments: `REPS CHUNKS WARMUP0:ITERS0 SIZE:WARMUP:ITERS...`.
fn schedule(plan: &Plan) -> Vec<String> {
    let (w0, i0) = iterations(0);
    let mut args = vec![
        plan.reps.to_string(),
        CHUNKS.to_string(),
        format!("{w0}:{i0}"),
    ];
    args.extend(plan.sizes.iter().map(|&s| {
        let (w, i) = iterations(s);
        format!("{s}:{w}:{i}")
    }));
    args
}

/// Rank 0's output read into [`Measured`]. Lines that are not the program's (an MPI library
/// may print notices on standard output) are passed over; every batch of the plan must be there.
fn parse_output(out: &str, plan: &Plan) -> Result<Measured, String> {
    let mut m = Measured::new(plan.sizes.len());
    let mut batches = 0;
    for (n, line) in out.lines().enumerate() {
        let mut fields = line.split_whitespace();
        let ping = match fields.next() {
            Some("rtt0") => Ping::Zero,
            Some("bsend") => Ping::Bsend,
            Some("ssend") => Ping::Ssend,
            _ => continue,
        };
        let bad = || {
            format!(
                "the MPI program's output line {} is malformed: `{}`",
                n + 1,
                line.trim()
            )
        };
        let i = if ping == Ping::Zero {
            0
        } else {
            let size: u64 = fields.next().and_then(|t| t.parse().ok()).ok_or_else(bad)?;
            plan.sizes
                .iter()
                .position(|&s| s == size)
                .ok_or_else(|| format!("{}: {size} B is not a size of the sweep", bad()))?
        };
        let ns = fields
            .next()
            .and_then(|t| t.parse::<f64>().ok())
            .filter(|ns| ns.is_finite() && *ns > 0.0)
            .ok_or_else(bad)?;
        if fields.next().is_some() {
            return Err(bad());
        }
        m.record(ping, i, ns);
        batches += 1;
    }
    let want = plan.reps as usize * (1 + 2 * plan.sizes.len());
    let all = std::iter::once(&m.rtt0).chain(&m.bsend).chain(&m.ssend);
    if batches != want || !all.into_iter().all(|v| v.is_finite()) {
        return Err(format!(
            "the MPI program reported {batches} of the {want} batches expected; its output:\n{}",
            tail(out)
        ));
    }
    Ok(m)
}

/// Runs `cmd` (whose program is `name`) to completion, for at most `limit`; returns its
/// standard output, or an error with the end of its standard error (or, past `limit`, saying
/// it was stopped).
fn run_tool(name: &str, cmd: &mut Command, limit: Duration) -> Result<String, String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            if e.kind() == io::ErrorKind::NotFound {
                format!(
                    "`{name}` not found on PATH: `calibrate --backend mpi` builds and runs a C \
                     program with the system MPI's mpicc and mpirun; {INSTALL_HINT}"
                )
            } else {
                format!("cannot run `{name}`: {e}")
            }
        })?;
    // Both pipes are drained while the tool runs, so that a chatty one never blocks on a
    // full pipe; a reader left behind by a killed tool (its children may hold the pipe) is
    // not waited for.
    fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    }
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let status = match child.wait_timeout(limit) {
        Ok(Some(status)) => status,
        Ok(None) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "`{name}` did not finish in {} s and was stopped (a hung MPI launch waits for \
                 ever: does `mpirun -np 2 hostname` return?)",
                limit.as_secs()
            ));
        }
        Err(e) => return Err(format!("cannot wait for `{name}`: {e}")),
    };
    let joined = |reader: std::thread::JoinHandle<Vec<u8>>| reader.join().unwrap_or_default();
    let (stdout, stderr) = (joined(stdout), joined(stderr));
    if !status.success() {
        return Err(format!(
            "`{name}` failed ({status}); the end of its standard error:\n{}",
            tail(&String::from_utf8_lossy(&stderr))
        ));
    }
    Ok(String::from_utf8_lossy(&stdout).into_owned())
}

/// The last [`TAIL_LINES`] non-blank lines of `text`, indented, for an error message.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return "  | (nothing)".into();
    }
    let start = lines.len().saturating_sub(TAIL_LINES);
    let shown: Vec<String> = lines[start..].iter().map(|l| format!("  | {l}")).collect();
    shown.join("\n")
}

/// A directory of this process's own under the system's temporary directory, removed with
/// everything in it when dropped (the source and the binary are of no use afterwards).
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<Self, String> {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path =
            std::env::temp_dir().join(format!("mpsim-calibrate-{}-{nanos}", std::process::id()));
        fs::create_dir(&path).map_err(|e| format!("{}: cannot create: {e}", path.display()))?;
        Ok(Self(path))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        // Best effort: a leftover directory in the temporary directory harms nothing.
        let _ = fs::remove_dir_all(Path::new(&self.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tool that does not return in its time is stopped and named, not waited for (a
    /// fake `mpirun` that sleeps hung `calibrate --backend mpi`); one that does gives its
    /// output, and one that fails the end of its standard error.
    #[test]
    fn a_tool_past_its_time_is_stopped_and_named() {
        let started = std::time::Instant::now();
        let err = run_tool(
            "sleep",
            Command::new("sleep").arg("30"),
            Duration::from_millis(200),
        )
        .unwrap_err();
        assert!(err.starts_with("`sleep` did not finish in 0 s"), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "it did not wait for sleep"
        );
        let out = run_tool(
            "sh",
            Command::new("sh").args(["-c", "echo out; echo err >&2"]),
            QUICK_LIMIT,
        );
        assert_eq!(out.as_deref(), Ok("out\n"));
        let err = run_tool(
            "sh",
            Command::new("sh").args(["-c", "echo why >&2; exit 3"]),
            QUICK_LIMIT,
        )
        .unwrap_err();
        assert!(err.contains("failed") && err.contains("  | why"), "{err}");
    }

    #[test]
    fn the_schedule_is_the_plan() {
        let plan = Plan::new(8, 2);
        assert_eq!(
            schedule(&plan),
            vec![
                "2".to_string(),
                CHUNKS.to_string(),
                "500:5000".into(),
                "1:500:5000".into(),
                "8:500:5000".into()
            ]
        );
    }

    #[test]
    fn output_is_recorded_as_minima() {
        let plan = Plan::new(8, 2);
        let out = "rtt0 400.5\nbsend 1 900\nssend 1 1000\nbsend 8 950\nssend 8 1100\n\
                   a notice from the MPI library\n\
                   rtt0 380\nbsend 1 990\nssend 1 990\nbsend 8 940\nssend 8 1200\n";
        let m = parse_output(out, &plan).expect("complete output");
        assert_eq!(m.rtt0, 380.0);
        assert_eq!(m.bsend, vec![900.0, 940.0]);
        assert_eq!(m.ssend, vec![990.0, 1100.0]);
    }

    #[test]
    fn bad_or_missing_output_is_an_error() {
        let plan = Plan::new(8, 1);
        let e = parse_output("rtt0 400\nbsend 1 900\n", &plan).unwrap_err();
        assert!(e.contains("2 of the 5 batches"), "{e}");
        let e = parse_output("rtt0 abc\n", &plan).unwrap_err();
        assert!(e.contains("line 1 is malformed: `rtt0 abc`"), "{e}");
        let e = parse_output("bsend 4 900\n", &plan).unwrap_err();
        assert!(e.contains("4 B is not a size"), "{e}");
        let e = parse_output("ssend 1 -3\n", &plan).unwrap_err();
        assert!(e.contains("malformed"), "{e}");
    }

    #[test]
    fn tails_keep_the_last_lines() {
        let text: String = (1..=30).map(|i| format!("line {i}\n\n")).collect();
        let t = tail(&text);
        assert_eq!(t.lines().count(), TAIL_LINES);
        assert!(
            t.starts_with("  | line 11") && t.ends_with("  | line 30"),
            "{t}"
        );
        assert_eq!(tail(""), "  | (nothing)");
    }
}
