//! Standard output of a program: results and reports written with writes that can fail, and
//! the exit status of a run whose output could not be delivered.
//!
//! `println!` panics when standard output cannot be written (a full disk, or a reader that has
//! gone, as in `prog | head -1`); under `threads` the panic also takes the rank down. mpsim's
//! reports and the examples' result lines go through [`write_stdout`] instead, which returns
//! an [`Error::Io`] naming standard output, and [`exit_code`] turns a run's result into the
//! process's status: 1 with the error on one line of standard error (a run a rank stopped with
//! `Comm::abort` exits with the code it gave), or 1 without a word when
//! the reader closed the pipe (a reader that stopped early has all it wanted, and Unix tools
//! do not complain then; the status stays non-zero, as a C tool's killed by `SIGPIPE` would,
//! because the output was not all delivered).

use std::io::{self, StdoutLock, Write};
use std::process::ExitCode;

use mpsim_proto::error::{Error, Result};

/// What [`Error::Io`] says when the reader of standard output has closed it (`EPIPE`): a
/// fixed text, so that [`exit_code`] knows this error, and only this one, needs no message.
const READER_GONE: &str = "cannot write standard output: its reader closed it (broken pipe)";

/// The error of a failed write to standard output: [`Error::Io`] saying so and why.
///
/// ```
/// use std::io::{self, Write};
///
/// fn result_line(time_ns: u64) -> mpsim::Result<()> {
///     writeln!(io::stdout().lock(), "result time_ns={time_ns}").map_err(mpsim::stdout_error)
/// }
/// # result_line(1).unwrap();
/// ```
pub fn stdout_error(e: io::Error) -> Error {
    let what = if e.kind() == io::ErrorKind::BrokenPipe {
        READER_GONE.to_owned()
    } else {
        format!("cannot write standard output: {e}")
    };
    Error::Io { what }
}

/// Writes to standard output through `write` (standard output locked, then flushed, so that a
/// write that fails fails here rather than unnoticed at exit); a failure is the error of
/// [`stdout_error`]. What rank 0 prints at the end of a program goes through this, and the
/// `?` on it ends the run with the error.
///
/// ```
/// use std::io::Write;
///
/// # fn main() -> mpsim::Result<()> {
/// let (ranks, time_ns) = (2, 820);
/// mpsim::write_stdout(|out| writeln!(out, "result ranks={ranks} time_ns={time_ns}"))?;
/// # Ok(())
/// # }
/// ```
pub fn write_stdout(write: impl FnOnce(&mut StdoutLock<'static>) -> io::Result<()>) -> Result<()> {
    let mut out = io::stdout().lock();
    write(&mut out)
        .and_then(|()| out.flush())
        .map_err(stdout_error)
}

/// The exit status of a program whose run ended with `result`: success, or failure with the
/// error printed on one line to standard error (`mpsim: ...`), except that a run stopped by
/// the reader of its standard output closing it fails quietly (see the module doc), and a run
/// a rank stopped with [`Comm::abort`](crate::Comm::abort) exits with the code it gave
/// ([`Error::Abort`]: `0..=255` as given, any other code 255), its error printed as any other.
/// A run stopped by a signal ([`Error::Interrupted`]) exits with 128 plus the signal's number (130
/// for `SIGINT`, 143 for `SIGTERM`), the status a shell gives a process the signal ended, so
/// that a script sees it was interrupted.
///
/// ```
/// use std::process::ExitCode;
/// use mpsim::{Error, exit_code};
///
/// assert_eq!(exit_code(Ok(())), ExitCode::SUCCESS);
/// let aborted = |code| Err(Error::Abort { rank: 1, code, time_ns: None });
/// assert_eq!(exit_code(aborted(3)), ExitCode::from(3));
/// assert_eq!(exit_code(aborted(-1)), ExitCode::from(255));
/// ```
pub fn exit_code(result: Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Error::Io { what }) if what == READER_GONE => ExitCode::FAILURE,
        Err(e @ Error::Interrupted { signal, .. }) => {
            eprintln!("mpsim: {e}");
            ExitCode::from(128 + signal.number() as u8)
        }
        Err(e) => {
            eprintln!("mpsim: {e}");
            match e {
                Error::Abort { code, .. } => ExitCode::from(abort_status(code)),
                _ => ExitCode::FAILURE,
            }
        }
    }
}

/// The exit status of a run aborted with `code`: the code if an exit status can hold it
/// (`0..=255`), else 255 (the system would keep its low 8 bits: `256` would read as success).
fn abort_status(code: i32) -> u8 {
    u8::try_from(code).unwrap_or(u8::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run stopped by `abort(code)` exits with the code, or 255 beyond what a status holds.
    #[test]
    fn an_abort_exits_with_its_code() {
        for (code, status) in [
            (0, 0),
            (3, 3),
            (255, 255),
            (256, 255),
            (-1, 255),
            (i32::MIN, 255),
        ] {
            assert_eq!(abort_status(code), status, "abort({code})");
        }
    }

    #[test]
    fn a_broken_pipe_is_the_one_quiet_error() {
        let gone = stdout_error(io::ErrorKind::BrokenPipe.into());
        assert_eq!(gone.to_string(), format!("I/O error: {READER_GONE}"));
        let full = stdout_error(io::Error::other("no space left"));
        match &full {
            Error::Io { what } => assert_eq!(what, "cannot write standard output: no space left"),
            other => panic!("not an I/O error: {other}"),
        }
    }
}
