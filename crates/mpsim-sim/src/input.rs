//! Input files read whole, with a cap: every file mpsim's tools take as input (model files and
//! delay tables here; `osu_latency` output and traces in the `mpsim` command) is read by
//! [`read_capped`], so that a path to something endless or huge (`/dev/zero`, a FIFO, a disk
//! image named by mistake) ends at once in an error naming the file, not in a hang that eats
//! the host's memory.
//!
//! Two checks, both while reading:
//!
//! - size: each kind of input has a cap ([`InputKind::max_bytes`]) far above any real file of
//!   that kind; a read stops one byte past it and fails;
//! - text: every input mpsim reads is text, so a NUL byte in the first [`SNIFF_BYTES`] means a
//!   binary file or a device, and the read stops there (as `git` and `grep` tell binary files
//!   apart). This is what makes `/dev/zero` and `/dev/urandom` fail at once even for kinds
//!   whose cap is large (traces). Only the start is checked: later NUL bytes are left to the
//!   parsers, which name their line.
//!
//! A named pipe (FIFO) is opened without waiting for a writer: `open` of a pipe nobody writes
//! to would otherwise wait for ever. One with a writer (`--model <(gen-model)`) is read as it
//! comes; one without reads as nothing, which is refused ([`InputError::EmptyPipe`]).
//!
//! It lives in `mpsim-sim` because the model loader needs it and the `mpsim` command depends on
//! this crate (`mpsim-proto`, the only crate below, does no I/O).

use std::fs::File;
use std::io::{self, Read};
#[cfg(unix)]
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use crate::units::{BINARY_SIZES, in_largest_unit};

/// How many bytes at the start of an input are checked for NUL (binary data).
pub const SNIFF_BYTES: usize = 8 << 10;

/// A kind of input file: what it is called in messages and how large it may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputKind {
    /// What the file should be, with its article, for messages: "a delay table".
    pub what: &'static str,
    /// The most bytes a file of this kind may hold.
    pub max_bytes: u64,
    /// What a file over the cap is, after "more than 64 MiB, ": "not a delay table".
    pub too_large: &'static str,
}

/// `model.toml`: a few dozen lines; 64 MiB is far beyond any real one.
pub const MODEL_FILE: InputKind = InputKind {
    what: "a model file",
    max_bytes: 64 << 20,
    too_large: "not a model file",
};

/// A delay table (`size_bytes,delay_ns` rows): one row per measured size, so at most a few
/// hundred lines; 64 MiB is far beyond any real one.
pub const DELAY_TABLE: InputKind = InputKind {
    what: "a delay table",
    max_bytes: 64 << 20,
    too_large: "not a delay table",
};

/// Why an input file could not be read. The message does not name the file: the caller's
/// message does (`FILE: more than 64 MiB, not a delay table`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// Opening or reading failed.
    #[error("cannot read: {0}")]
    Io(#[source] io::Error),
    /// The file holds more than its kind's cap.
    #[error("more than {}, {too_large}", in_largest_unit(*max_bytes, &BINARY_SIZES, "B", " "))]
    TooLarge {
        /// The cap that was passed.
        max_bytes: u64,
        /// What the kind says of a file over it ([`InputKind::too_large`]).
        too_large: &'static str,
    },
    /// A named pipe gave nothing: no program had it open for writing, or it wrote nothing.
    #[error("a named pipe that gave no data (nothing had it open for writing), not {what}")]
    EmptyPipe {
        /// What the file should have been ([`InputKind::what`]).
        what: &'static str,
    },
    /// The file starts with binary data (a NUL byte), so it is not text.
    #[error("binary data (a NUL byte on line {line}), not {what}")]
    Binary {
        /// The 1-based line of the first NUL byte.
        line: usize,
        /// What the file should have been ([`InputKind::what`]).
        what: &'static str,
    },
}

impl InputError {
    /// The I/O error, when opening or reading failed (not for a file that was refused).
    pub fn io(&self) -> Option<&io::Error> {
        match self {
            Self::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// Reads the whole file at `path`, refusing it as soon as it is over `kind`'s cap or starts
/// with binary data (module doc).
pub fn read_capped(path: &Path, kind: &InputKind) -> Result<Vec<u8>, InputError> {
    #[cfg(unix)]
    if std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo()) {
        return read_pipe(path, kind);
    }
    let file = File::open(path).map_err(InputError::Io)?;
    // A regular file says its size; devices and pipes say 0 and grow the buffer as they go.
    let hint = file.metadata().map_or(0, |m| m.len()).min(kind.max_bytes);
    read_capped_from(file, usize::try_from(hint).unwrap_or(0), kind)
}

/// [`read_capped`] of a named pipe (module doc): opened without blocking, so that the open
/// does not wait for a writer; its reads wait for data while a writer has it open.
#[cfg(unix)]
fn read_pipe(path: &Path, kind: &InputKind) -> Result<Vec<u8>, InputError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(InputError::Io)?;
    let bytes = read_capped_from(Patient(file), 0, kind)?;
    if bytes.is_empty() {
        return Err(InputError::EmptyPipe { what: kind.what });
    }
    Ok(bytes)
}

/// A non-blocking pipe read as a blocking one: a read that would block (a writer has it open
/// but has not written yet) is tried again a millisecond later; end of file is the writer's
/// close, or no writer at all.
#[cfg(unix)]
struct Patient(File);

#[cfg(unix)]
impl Read for Patient {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.0.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                r => return r,
            }
        }
    }
}

/// [`read_capped`] from any reader; `hint` is the expected size, to allocate once.
pub fn read_capped_from(
    mut reader: impl Read,
    hint: usize,
    kind: &InputKind,
) -> Result<Vec<u8>, InputError> {
    let mut bytes = Vec::with_capacity(hint.saturating_add(1));
    let sniff = SNIFF_BYTES.min(usize::try_from(kind.max_bytes).unwrap_or(usize::MAX));
    (&mut reader)
        .take(sniff as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(InputError::Io)?;
    if let Some(at) = bytes.iter().take(sniff).position(|&b| b == 0) {
        return Err(InputError::Binary {
            line: 1 + bytes[..at].iter().filter(|&&b| b == b'\n').count(),
            what: kind.what,
        });
    }
    // One byte past the cap tells a file of exactly `max_bytes` from a bigger one.
    let rest = (kind.max_bytes + 1).saturating_sub(bytes.len() as u64);
    reader
        .take(rest)
        .read_to_end(&mut bytes)
        .map_err(InputError::Io)?;
    if bytes.len() as u64 > kind.max_bytes {
        return Err(InputError::TooLarge {
            max_bytes: kind.max_bytes,
            too_large: kind.too_large,
        });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TINY: InputKind = InputKind {
        what: "a tiny file",
        max_bytes: 10,
        too_large: "not a tiny file",
    };

    #[test]
    fn a_file_up_to_the_cap_is_read_whole() {
        let got = read_capped_from(&b"0123456789"[..], 0, &TINY).expect("10 bytes fit");
        assert_eq!(got, b"0123456789");
        assert_eq!(read_capped_from(&b""[..], 0, &TINY).expect("empty"), b"");
    }

    #[test]
    fn one_byte_over_the_cap_is_refused_naming_the_cap() {
        let e = read_capped_from(&b"0123456789A"[..], 0, &TINY).expect_err("11 bytes");
        assert_eq!(e.to_string(), "more than 10 B, not a tiny file");
        assert!(e.io().is_none());
    }

    #[test]
    fn an_endless_text_stream_stops_at_the_cap() {
        let e = read_capped_from(io::repeat(b'a'), 0, &DELAY_TABLE).expect_err("endless");
        assert_eq!(e.to_string(), "more than 64 MiB, not a delay table");
    }

    #[test]
    fn a_nul_byte_at_the_start_is_binary_data_with_its_line() {
        let e = read_capped_from(io::repeat(0), 0, &MODEL_FILE).expect_err("zeros");
        assert_eq!(
            e.to_string(),
            "binary data (a NUL byte on line 1), not a model file"
        );
        let e = read_capped_from(&b"a,b\n1,2\n\0"[..], 0, &MODEL_FILE).expect_err("NUL");
        assert!(e.to_string().contains("line 3"), "{e}");
    }

    #[test]
    fn a_nul_byte_past_the_sniffed_start_is_left_to_the_parser() {
        let mut text = vec![b'x'; SNIFF_BYTES];
        text.push(0);
        let got = read_capped_from(&text[..], 0, &MODEL_FILE).expect("only the start is sniffed");
        assert_eq!(got.len(), SNIFF_BYTES + 1);
    }

    #[test]
    fn a_missing_file_is_an_io_error() {
        let e = read_capped(Path::new("/nonexistent/mpsim/input"), &MODEL_FILE).expect_err("gone");
        assert_eq!(e.io().map(io::Error::kind), Some(io::ErrorKind::NotFound));
        assert!(e.to_string().starts_with("cannot read: "), "{e}");
    }

    /// A named pipe at `dir/name`, made with `mkfifo`.
    #[cfg(target_os = "linux")]
    fn fifo(dir: &Path, name: &str) -> std::path::PathBuf {
        let path = dir.join(name);
        let made = std::process::Command::new("mkfifo").arg(&path).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo {}", path.display());
        path
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_named_pipe_without_a_writer_is_refused_at_once() {
        let dir = std::env::temp_dir().join(format!("mpsim-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = fifo(&dir, "nobody-writes");
        let e = read_capped(&path, &MODEL_FILE).expect_err("no writer");
        assert_eq!(
            e.to_string(),
            "a named pipe that gave no data (nothing had it open for writing), not a model file"
        );
        // One with a writer that writes slowly is read whole, until the writer closes it. The
        // writer opens it for reading and writing: such an open does not wait for a reader.
        let path = fifo(&dir, "written");
        let mut w = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .expect("open the pipe's writing end");
        let writer = std::thread::spawn(move || {
            for part in [&b"[meta]\n"[..], b"x = 1\n"] {
                std::thread::sleep(std::time::Duration::from_millis(20));
                std::io::Write::write_all(&mut w, part).expect("write");
            }
        });
        let got = read_capped(&path, &MODEL_FILE).expect("written");
        writer.join().expect("writer");
        assert_eq!(got, b"[meta]\nx = 1\n");
        std::fs::remove_dir_all(&dir).expect("clean up");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn dev_zero_is_refused_at_once() {
        let e = read_capped(Path::new("/dev/zero"), &DELAY_TABLE).expect_err("/dev/zero");
        assert!(matches!(e, InputError::Binary { line: 1, .. }), "{e}");
    }
}
