//! What every backend of [`crate::Launcher::run`] writes: the report and the trace, each
//! whole or not at all, and the warnings about flags a run ignores.
//!
//! A run's output files are started before the run ([`Outputs::open`]: a temporary file beside
//! each target, so that a path that cannot be written is an error then, not after hours of
//! simulation) and renamed over their targets once complete, so that a target holds a whole
//! report or trace, or what it held before.

use std::io::Write;
use std::path::{Path, PathBuf};

use mpsim_proto::error::{Error, Result};
use mpsim_proto::interrupt::Interrupt;
use mpsim_sim::output::OutputFile;
use mpsim_sim::{Report, Trace};

use super::config::{Backend, ReportFormat, RunConfig};
use crate::output::write_stdout;

/// The format of a trace file, chosen by its name ([`TraceFormat::for_path`]).
///
/// ```
/// use mpsim::TraceFormat;
/// assert_eq!(TraceFormat::for_path("ring.pftrace".as_ref()), TraceFormat::Perfetto);
/// assert_eq!(TraceFormat::for_path("ring.json".as_ref()), TraceFormat::ChromeJson);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    /// Chrome trace-event JSON: Perfetto, chrome://tracing and `mpsim plot` read it.
    ChromeJson,
    /// Perfetto's protobuf trace format: about 40% of the JSON's size; Perfetto reads it.
    Perfetto,
}

impl TraceFormat {
    /// [`TraceFormat::Perfetto`] for a name ending in `.pftrace` or `.perfetto-trace` (in any
    /// case), else [`TraceFormat::ChromeJson`].
    pub fn for_path(path: &Path) -> Self {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if ext.eq_ignore_ascii_case("pftrace") || ext.eq_ignore_ascii_case("perfetto-trace") {
            TraceFormat::Perfetto
        } else {
            TraceFormat::ChromeJson
        }
    }
}

/// A run's outputs, started before it: the trace's file, if a trace is asked for, and the
/// report's format and file, if the run makes a report.
pub(super) struct Outputs {
    trace: Option<TraceFile>,
    /// The report's format, if the backend makes one.
    pub(super) report: Option<ReportFormat>,
    report_file: Option<ReportFile>,
}

impl Outputs {
    /// Starts the outputs `config` asks for under its backend: the trace's file first, then
    /// the report's.
    pub(super) fn open(config: &RunConfig) -> Result<Self> {
        let trace = match &config.trace {
            Some(path) => Some(TraceFile::create(path)?),
            None => None,
        };
        let report = report_target(config);
        let report_file = match report {
            Some((_, Some(path))) => Some(ReportFile::create(path)?),
            _ => None,
        };
        Ok(Outputs {
            trace,
            report: report.map(|(format, _)| format),
            report_file,
        })
    }

    /// Writes `report` in `format` to the report's file if there is one (complete, or not at
    /// all), else to standard output.
    pub(super) fn write_report(&mut self, report: &Report, format: ReportFormat) -> Result<()> {
        let text = match format {
            ReportFormat::Text => report.to_string(),
            ReportFormat::Json => format!("{}\n", report.to_json()),
        };
        match self.report_file.take() {
            Some(file) => file.write(&text),
            None => write_stdout(|out| out.write_all(text.as_bytes())),
        }
    }

    /// Writes `trace` to the trace's file, if both are there: see [`write_trace`].
    pub(super) fn write_trace(
        self,
        trace: Option<&Trace>,
        interrupt: Option<&Interrupt>,
    ) -> Result<()> {
        write_trace(self.trace, trace, interrupt)
    }
}

/// The report's format and destination, if a run of `config` makes one: under `sim` always
/// (text unless said, or JSON for a `report_out` ending in `.json`), under `threads` when
/// `report` or `report_out` asks.
fn report_target(config: &RunConfig) -> Option<(ReportFormat, Option<&Path>)> {
    let out = config.report_out.as_deref();
    let format = config.report.or_else(|| {
        out.map(|path| {
            if path.extension().is_some_and(|e| e == "json") {
                ReportFormat::Json
            } else {
                ReportFormat::Text
            }
        })
    });
    match config.backend {
        Backend::Sim => Some((format.unwrap_or(ReportFormat::Text), out)),
        Backend::Threads | Backend::Mpi => format.map(|f| (f, out)),
    }
}

/// The `--report-out` file: started before the run ([`OutputFile`]: a temporary file beside
/// its target, so that a path that cannot be written is an error then, not after it) and
/// renamed over the target once the report is in it, so that the target holds a whole report
/// or what it held before. A target that is not a regular file (`/dev/stdout`, a pipe) is
/// written in place.
struct ReportFile {
    file: OutputFile,
    path: PathBuf,
}

impl ReportFile {
    fn create(path: &Path) -> Result<Self> {
        let file = OutputFile::create(path).map_err(|e| report_error(path, &e))?;
        Ok(ReportFile {
            file,
            path: path.to_path_buf(),
        })
    }

    /// Writes `text` as the whole report and puts it under its name.
    fn write(self, text: &str) -> Result<()> {
        let ReportFile { mut file, path } = self;
        file.write_all(text.as_bytes())
            .and_then(|()| file.commit())
            .map_err(|e| report_error(&path, &e))
    }
}

/// The error of a report that cannot be written to `path`.
fn report_error(path: &Path, e: &std::io::Error) -> Error {
    Error::Io {
        what: format!("cannot write the report to {}: {e}", path.display()),
    }
}

/// The `--trace` file, started before the run; nothing is under its name until it is complete.
struct TraceFile {
    path: PathBuf,
    file: OutputFile,
}

impl TraceFile {
    /// Its temporary file, made now beside it ([`OutputFile`]), so that a path it cannot be
    /// written to is an error before the run, not after hours of simulation.
    fn create(path: &Path) -> Result<Self> {
        let file = OutputFile::create(path).map_err(|e| trace_error(path, &e))?;
        Ok(TraceFile {
            path: path.to_path_buf(),
            file,
        })
    }
}

/// Writes `trace` to the `--trace` file, if both are there (a run that failed still writes its
/// trace: it shows what led to the error), in the format its name asks for, and puts it under
/// its name once complete. Without a trace (a run that could not start) the file is not made.
/// A signal raised while it is written (`interrupt`, not raised before) stops the writing: the
/// trace is then not written at all, and the error is [`Error::Interrupted`]. A JSON trace
/// larger than `mpsim plot` reads is warned of on standard error.
fn write_trace(
    file: Option<TraceFile>,
    trace: Option<&Trace>,
    interrupt: Option<&Interrupt>,
) -> Result<()> {
    let (Some(TraceFile { path, mut file }), Some(trace)) = (file, trace) else {
        return Ok(());
    };
    // A signal that stopped the run was for the run: the trace of what ran is still written.
    let interrupt = interrupt.filter(|i| i.raised().is_none());
    // Streamed: a trace of millions of events needs no text of its size in memory.
    let mut out = std::io::BufWriter::new(Interruptible {
        file: &mut file,
        interrupt,
    });
    let written = match TraceFormat::for_path(&path) {
        TraceFormat::ChromeJson => trace
            .write_chrome_json_sized(&mut out, Trace::PLOT_MAX_BYTES)
            .map(Some),
        TraceFormat::Perfetto => trace.write_perfetto(&mut out).map(|()| None),
    };
    let written = written.and_then(|size| out.flush().map(|()| size));
    drop(out);
    if let Some(signal) = interrupt.and_then(Interrupt::raised) {
        eprintln!(
            "mpsim: {signal} while writing the trace: {} was not written",
            path.display()
        );
        return Err(Error::Interrupted {
            signal,
            time_ns: None,
        });
    }
    let size = written
        .and_then(|size| file.commit().map(|()| size))
        .map_err(|e| trace_error(&path, &e))?;
    if let Some(size) = size.filter(|s| s.bytes > Trace::PLOT_MAX_BYTES) {
        eprintln!(
            "mpsim: warning: {}",
            too_big_for_plot(&path, size, trace.len())
        );
    }
    Ok(())
}

/// The warning for a JSON trace of `size` holding `events` events, larger than `mpsim plot`
/// reads.
fn too_big_for_plot(path: &Path, size: mpsim_proto::trace::JsonSize, events: usize) -> String {
    let gib = |bytes: u64| bytes as f64 / f64::from(1u32 << 30);
    format!(
        "the trace {} is {:.1} GiB, more than the {:.0} GiB mpsim plot reads ({} of its {events} \
         events are past that); trace less with --trace-from/--trace-to (a window of time) or \
         --trace-ranks (some ranks), or write Perfetto's smaller format (a .pftrace file)",
        path.display(),
        gib(size.bytes),
        gib(Trace::PLOT_MAX_BYTES),
        size.events_past_limit,
    )
}

/// A trace file's writer that fails once a signal is raised (looked at per buffer written,
/// 8 KiB, under the `BufWriter`).
struct Interruptible<'a> {
    file: &'a mut OutputFile,
    interrupt: Option<&'a Interrupt>,
}

impl std::io::Write for Interruptible<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.interrupt.is_some_and(|i| i.raised().is_some()) {
            return Err(std::io::Error::other("interrupted by a signal"));
        }
        self.file.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// The error of a trace that cannot be written to `path`.
fn trace_error(path: &std::path::Path, e: &std::io::Error) -> Error {
    Error::Io {
        what: format!("cannot write the trace to {}: {e}", path.display()),
    }
}

/// Says on standard error that the flags `ignored` (if any) only apply under `backend` and
/// are ignored under `running`.
pub(super) fn warn_ignored(ignored: &[&str], backend: &str, running: &str) {
    if !ignored.is_empty() {
        eprintln!(
            "mpsim: {} only {} under --backend {backend}: ignored under {running}",
            ignored.join(", "),
            applies(ignored.len())
        );
    }
}

/// Says on standard error that the trace flags `ignored` (if any) only apply with `--trace`.
pub(super) fn warn_trace_flags_ignored(ignored: &[&str]) {
    if !ignored.is_empty() {
        eprintln!(
            "mpsim: {} only {} with --trace: ignored",
            ignored.join(", "),
            applies(ignored.len())
        );
    }
}

/// The verb of `n` flags that apply.
fn applies(n: usize) -> &'static str {
    if n == 1 { "applies" } else { "apply" }
}

#[cfg(test)]
mod tests {
    /// The warning of a JSON trace too large for `mpsim plot` says by how much and what to do.
    #[test]
    fn a_trace_past_plots_limit_is_warned_of_with_the_flags_that_shrink_it() {
        let size = mpsim_proto::trace::JsonSize {
            bytes: 6_549_825_126,
            events_past_limit: 12_345,
        };
        let text = super::too_big_for_plot("ring.json".as_ref(), size, 40_000_000);
        assert_eq!(
            text,
            "the trace ring.json is 6.1 GiB, more than the 4 GiB mpsim plot reads (12345 of its \
             40000000 events are past that); trace less with --trace-from/--trace-to (a window \
             of time) or --trace-ranks (some ranks), or write Perfetto's smaller format (a \
             .pftrace file)"
        );
    }
}
