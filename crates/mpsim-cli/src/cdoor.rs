//! `mpsim cc` and `mpsim run`: the door for C MPI programs (`docs/c.md`).
//!
//! `mpsim cc` is the system C compiler with mpsim's `mpi.h` and MPI library added; `mpsim run`
//! starts the program's ranks (`mpsim_proxy`) and runs them on a backend like any mpsim
//! program, with the same flags and the same report.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use clap::Args;
use mpsim::{LaunchArgs, RunConfig};
use mpsim_sim::ComputeMode;

/// The header, written next to the library on first use.
const MPI_H: &str = include_str!("../../mpsim-c/include/mpi.h");
/// The library's file name.
const LIBRARY: &str = "libmpsim_mpi.so";

/// `mpsim run`'s arguments.
#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    launch: LaunchArgs,
    /// The C program (built with `mpsim cc`) and its arguments. `-np N` is taken as
    /// `--ranks N`, as `mpirun` writes it.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "PROGRAM [ARGS]..."
    )]
    program: Vec<OsString>,
}

/// `mpsim cc`'s arguments: everything goes to the C compiler.
#[derive(Args)]
pub struct CcArgs {
    /// Arguments for the C compiler (`$CC`, else `cc`), e.g. `-O2 -o ring ring.c`. `-g` is
    /// added before them unless they hold a `-g` flag (`-g0` turns it off): reports name the
    /// source line of each call they point at.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CC ARGS"
    )]
    args: Vec<OsString>,
}

/// Replaces `mpirun`'s `-np N` by `--ranks N` in the command line of `mpsim run`, before the
/// program's own arguments.
pub fn rewrite_np(args: Vec<OsString>) -> Vec<OsString> {
    let Some(run_at) = args.iter().position(|a| a == "run") else {
        return args;
    };
    let mut out: Vec<OsString> = args[..=run_at].to_vec();
    let mut rest = args[run_at + 1..].iter();
    while let Some(a) = rest.next() {
        if a == "-np" {
            out.push("--ranks".into());
            continue;
        }
        let is_flag = a.to_str().is_some_and(|s| s.starts_with('-'));
        out.push(a.clone());
        if !is_flag
            && out.len() > run_at + 1
            && !out[out.len() - 2]
                .to_str()
                .is_some_and(|p| p.starts_with("--") && !p.contains('='))
        {
            // The program: everything after it is its own.
            out.extend(rest.cloned());
            break;
        }
    }
    out
}

/// Where the library is: `$MPSIM_LIB_DIR` if set, else beside this executable
/// (`target/<profile>/`).
fn library_dir() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("MPSIM_LIB_DIR") {
        let dir = PathBuf::from(dir);
        if dir.join(LIBRARY).is_file() {
            // Absolute: the program's run path must find the library from any directory.
            return std::fs::canonicalize(&dir)
                .map_err(|e| format!("MPSIM_LIB_DIR={}: {e}", dir.display()));
        }
        return Err(format!(
            "MPSIM_LIB_DIR={} holds no {LIBRARY}",
            dir.display()
        ));
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find mpsim's own path: {e}"))?;
    let dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    // `cargo run`/`cargo test` put the binary in target/<profile>/ (or deps/ beneath it).
    for d in [
        dir.clone(),
        dir.parent().map(Path::to_path_buf).unwrap_or_default(),
    ] {
        if d.join(LIBRARY).is_file() {
            return Ok(d);
        }
    }
    Err(format!(
        "mpsim's MPI library ({LIBRARY}) is not next to {}: build it with `cargo build -p \
         mpsim-c` (add --release for a release mpsim)",
        exe.display()
    ))
}

/// Writes the header into `<dir>/mpsim-include/mpi.h` unless it is there already.
fn include_dir(dir: &Path) -> Result<PathBuf, String> {
    let inc = dir.join("mpsim-include");
    let file = inc.join("mpi.h");
    if std::fs::read_to_string(&file).ok().as_deref() != Some(MPI_H) {
        std::fs::create_dir_all(&inc)
            .map_err(|e| format!("cannot create {}: {e}", inc.display()))?;
        let tmp = inc.join(format!(".mpi.h.{}", std::process::id()));
        std::fs::write(&tmp, MPI_H).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
        std::fs::rename(&tmp, &file)
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    }
    Ok(inc)
}

/// `mpsim cc`.
pub fn cc(args: CcArgs) -> Result<String, String> {
    let dir = library_dir()?;
    let inc = include_dir(&dir)?;
    let compiler = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let links = !args
        .args
        .iter()
        .any(|a| a == "-c" || a == "-E" || a == "-S" || a == "-M");
    let mut cmd = Command::new(&compiler);
    cmd.arg(format!("-I{}", inc.display()));
    // Debug information, so reports name the source line of a call (`mpsim_proxy`'s sites):
    // before the user's flags, and only when they give no `-g` flag of their own (`-g0` wins).
    if !args
        .args
        .iter()
        .any(|a| a.to_str().is_some_and(|a| a.starts_with("-g")))
    {
        cmd.arg("-g");
    }
    cmd.args(&args.args);
    if links {
        cmd.arg(format!("-L{}", dir.display()))
            .arg(format!("-Wl,-rpath,{}", dir.display()))
            .arg("-lmpsim_mpi");
    }
    let status = cmd.status().map_err(|e| {
        format!(
            "cannot run the C compiler {}: {e}",
            compiler.to_string_lossy()
        )
    })?;
    if status.success() {
        Ok(String::new())
    } else {
        Err(format!("the C compiler failed ({status})"))
    }
}

/// `mpsim run`.
pub fn run(args: RunArgs) -> ExitCode {
    let compute_given = args.launch.compute.is_some();
    let mut config = match RunConfig::try_from(args.launch) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("mpsim: {e}");
            return ExitCode::FAILURE;
        }
    };
    // A C program's compute is its CPU time between MPI calls unless said otherwise.
    if !compute_given {
        config.model.compute = ComputeMode::Measured;
    }
    let charge = config.model.compute == ComputeMode::Measured;
    let mut program = args.program.into_iter();
    let path = PathBuf::from(program.next().unwrap_or_default());
    let path = if path.components().count() == 1 && !path.exists() {
        path
    } else if path.is_relative() && path.components().count() == 1 {
        PathBuf::from(".").join(path)
    } else {
        path
    };
    let c = mpsim_proxy::CProgram {
        path,
        args: program.collect(),
    };
    let ended = mpsim_proxy::run(config, charge, &c);
    let run_class = ended.error.as_ref().map(mpsim_proxy::classify);
    let code = match ended.error {
        Some(e) => mpsim::exit_code(Err(e)),
        None if ended.findings.iter().any(|f| f.error) => ExitCode::FAILURE,
        None => ExitCode::from(ended.status.clamp(0, 255) as u8),
    };
    // The checks' findings, after the run's own error line (both on standard error).
    eprint!(
        "{}",
        mpsim_proxy::write_findings(&ended.findings, run_class)
    );
    code
}
