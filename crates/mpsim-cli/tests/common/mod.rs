//! Running the `mpsim` binary from the CLI's tests.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `mpsim` with `args` and returns what it did.
pub fn mpsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mpsim"))
        .args(args)
        .output()
        .expect("the mpsim binary runs")
}

/// Output bytes as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A copy of the default model's files in a fresh directory `name` of this test binary's
/// (`prefix`), `edit` applied to its TOML.
#[allow(dead_code)] // not every test file edits models
pub fn model_copy(prefix: &str, name: &str, edit: impl Fn(String) -> String) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mpsim-sim/models/default");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("{prefix}-{}", std::process::id()))
        .join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("scratch dir");
    for f in ["model.toml", "ssend.csv", "bsend.csv"] {
        fs::copy(src.join(f), dir.join(f)).expect("copy");
    }
    let toml = dir.join("model.toml");
    let edited = edit(fs::read_to_string(&toml).expect("read"));
    fs::write(&toml, edited).expect("write");
    dir
}
