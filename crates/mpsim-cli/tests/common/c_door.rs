//! Building C test programs (`tests/c/`) for the C door's tests: the MPI library, a `cdylib`
//! that `cargo test` does not build, is built once per test binary into a target directory of
//! its own (`cargo build -p mpsim-c`), and `mpsim cc` is pointed at it with `MPSIM_LIB_DIR`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const MPSIM: &str = env!("CARGO_BIN_EXE_mpsim");

/// The directory holding `libmpsim_mpi.so`, built once.
pub fn lib_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let target = Path::new(MPSIM)
            .ancestors()
            .nth(2)
            .expect("target/<profile>/mpsim")
            .join("c-door");
        let status = Command::new(env!("CARGO"))
            .args(["build", "-p", "mpsim-c", "--locked", "--quiet"])
            .env("CARGO_TARGET_DIR", &target)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building mpsim-c failed");
        target.join("debug")
    })
}

/// `tests/c/<name>.c` built by `mpsim cc -O1` into `exe` (with `-lm`).
pub fn build(name: &str, exe: &Path) {
    build_with(name, exe, &[]);
}

/// [`build`], with the compiler flags `flags` too.
pub fn build_with(name: &str, exe: &Path, flags: &[&str]) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/c/{name}.c"));
    let out = Command::new(MPSIM)
        .args(["cc", "-O1"])
        .args(flags)
        .arg("-o")
        .arg(exe)
        .arg(&src)
        .arg("-lm")
        .env("MPSIM_LIB_DIR", lib_dir())
        .output()
        .expect("mpsim cc runs");
    assert!(
        out.status.success(),
        "mpsim cc failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
