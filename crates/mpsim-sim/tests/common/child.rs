//! A test's body run in a child process of its test binary under an address-space limit
//! (`ulimit -v`): how tests see what mpsim does when memory is refused (an error, not the
//! allocator's abort), without limiting every other test of the process. Shared by the
//! simulator's tests and, through `#[path]`, the public API's (`crates/mpsim/tests`).
#![allow(dead_code)]

use std::process::Command;

/// Set in the child's environment: the test binary is then the child.
const CHILD: &str = "MPSIM_TEST_ADDRESS_SPACE_CHILD";

/// Runs `body` in a child process of this test binary under an address space of `limit_kib`
/// KiB, the child running only the test `name` (which must be the caller: it calls this
/// again in the child, where `body` runs); checks that `body` returned there.
pub fn under_address_space_limit(name: &str, limit_kib: u64, body: impl FnOnce()) {
    if std::env::var_os(CHILD).is_some() {
        body();
        println!("child: done");
        return;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {limit_kib} && exec \"$0\" --exact {name} --nocapture --test-threads 1"
        ))
        .arg(&exe)
        .env(CHILD, "1")
        .output()
        .expect("run the child");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success(),
        "the child failed ({:?}):\n{stdout}\n{stderr}",
        out.status
    );
    assert!(stdout.contains("child: done"), "{stdout}\n{stderr}");
}
