//! Running the `mpsim` binary from the CLI's tests.

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
