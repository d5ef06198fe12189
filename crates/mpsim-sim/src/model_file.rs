//! Machine models as files: a TOML file of constants plus one CSV delay table per send mode
//! (`DESIGN.md`, "Machine models"; `spec/timing.md` §4 and §7).
//!
//! A model is a directory (or any place) holding `model.toml` and the two tables it names:
//!
//! ```toml
//! [meta]
//! description = "2-core reference machine, Open MPI 4.1.4 over shared memory"
//!
//! [network]
//! ssend_table = "ssend.csv"     # relative to this file
//! bsend_table = "bsend.csv"
//! ack_latency = "150ns"         # > 0
//! eager_threshold = "64KiB"     # default 64KiB
//! bsend_overhead = "64B"        # default: the library's BSEND_OVERHEAD
//! system_buffer = "unbounded"   # or a size such as "1MiB"; default unbounded
//! poll_cost = "100ns"           # > 0; default 100ns
//!
//! [compute]
//! mode = "modeled"              # "modeled" (default), "measured" or "ignored"
//! flops_per_s = 1e10            # integer or float, stored as an integer; default 1e10
//! host_to_target = 1.0          # measured compute: target time per host time; default 1.0
//!
//! [bsp]                         # optional: BSP g and l when they were measured
//! g = "0.125ns/byte"
//! l = "2us"
//!
//! [cpu]                         # optional: extensions X1-X3 (crates/mpsim-sim/EXTENSIONS.md)
//! send_overhead = "300ns"       # X1: per nonblocking send request; default 0
//! recv_overhead = "200ns"       # X1: per nonblocking receive request; default 0
//! cores = 2                     # X2: cores the ranks share, > 0, or "unlimited" (default)
//! wake_latency = "3us"          # X2: a blocked rank's wake-up when ranks > cores; default 0
//! measure_overhead = "700ns"    # X3: taken off each measured-compute stretch; default 0
//! concurrent_slowdown = 0.09    # X2: measured compute when ranks compute at once; default 0
//! ```
//!
//! and each table (`size_bytes,delay_ns`, strictly increasing sizes, delays `> 0`; the header
//! line is optional, blank lines and `#` comment lines are skipped):
//!
//! ```text
//! size_bytes,delay_ns
//! 1,497
//! 65536,12990
//! ```
//!
//! Units: times take `ns`, `us` (or `µs`), `ms`, `s` and must come out a whole number of
//! nanoseconds (`"1.5us"` is fine, `"0.5ns"` is not); sizes take `B`, `KiB`, `MiB`, `GiB`,
//! `TiB` and must be whole bytes. A plain TOML integer is nanoseconds or bytes. `g` takes
//! `ns/byte` or `ps/byte` (`/B` works too; a plain number is ns/byte) and is kept to the nearest
//! picosecond per byte; `flops_per_s` to the nearest integer, `host_to_target` to the nearest
//! millionth. Numbers never take a sign: negative values are errors.
//!
//! Loading checks everything and names the file and line of the first problem: TOML syntax,
//! unknown keys (a misspelt key is an error, not a silently ignored one), types, units and
//! ranges in `model.toml`; missing or unreadable tables (with the key that names them); and in
//! each table, the row that is malformed, not increasing, or has a zero delay. No input makes
//! it panic.
//!
//! The embedded default model ([`ModelFile::embedded_default`], equal to
//! [`Model::default_machine`]) is compiled in from `models/default/` in this crate, where its
//! `model.toml` says how it was measured.

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::{Spanned, Value};

use crate::model::{ComputeMode, CpuModel, DelayTable, Model};
use crate::units::{BINARY_SIZES, exact_decimal, in_largest_unit};

const DEFAULT_TOML: &str = include_str!("../models/default/model.toml");
const DEFAULT_SSEND: &str = include_str!("../models/default/ssend.csv");
const DEFAULT_BSEND: &str = include_str!("../models/default/bsend.csv");

/// The name the embedded default model goes by in messages (and in `--model default`).
pub const DEFAULT_MODEL_NAME: &str = "default";

/// The name of a model's TOML file inside a model directory.
pub const MODEL_TOML: &str = "model.toml";

/// The largest `host_to_target` a file may hold (so that it round-trips exactly through TOML's
/// floating-point numbers).
const MAX_HOST_TO_TARGET_PPM: u64 = 1_000_000_000_000;

/// Why a model file could not be loaded or written. Every message names the file, and where a
/// line applies, the line (`file:line: ...`), on one line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelFileError {
    /// A model file could not be read.
    #[error("{}: cannot read: {error}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        error: io::Error,
    },
    /// A delay table named in `model.toml` could not be read.
    #[error(
        "{}:{line}: `{key}`: cannot read {}: {error}",
        file.display(),
        one_line(&table.display().to_string())
    )]
    MissingTable {
        /// The TOML file that names the table.
        file: PathBuf,
        /// The line of the key.
        line: usize,
        /// `ssend_table` or `bsend_table`.
        key: &'static str,
        /// The path tried.
        table: PathBuf,
        /// Why it could not be read.
        error: io::Error,
    },
    /// `model.toml` is not valid TOML, or not the expected shape: a syntax error, an unknown or
    /// missing key, a value of the wrong type.
    #[error("{}:{line}: {}", file.display(), one_line(message))]
    Toml {
        /// The TOML file.
        file: PathBuf,
        /// The line (1-based).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A value in `model.toml` has a bad unit or is out of range.
    #[error("{}:{line}: `{}`: {}", file.display(), one_line(key), one_line(message))]
    Value {
        /// The TOML file.
        file: PathBuf,
        /// The line of the value (1-based).
        line: usize,
        /// The key, with its section (`network.ack_latency`).
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A row of a delay table is malformed or breaks a rule (sizes strictly increasing, delays
    /// `> 0`), or the table is empty.
    #[error("{}:{line}: {}", file.display(), one_line(message))]
    Table {
        /// The CSV file.
        file: PathBuf,
        /// The line of the row (1-based).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// Writing a model file failed.
    #[error("{}: cannot write: {error}", path.display())]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        error: io::Error,
    },
    /// The model holds a value the file format cannot (it would not load back).
    #[error("cannot write the model: {what}")]
    Unrepresentable {
        /// Which value, and why.
        what: String,
    },
}

impl ModelFileError {
    /// The file the error is about, if any.
    pub fn file(&self) -> Option<&Path> {
        match self {
            Self::Read { path, .. } | Self::Write { path, .. } => Some(path),
            Self::MissingTable { file, .. }
            | Self::Toml { file, .. }
            | Self::Value { file, .. }
            | Self::Table { file, .. } => Some(file),
            Self::Unrepresentable { .. } => None,
        }
    }

    /// The line (1-based) the error is about, if any.
    pub fn line(&self) -> Option<usize> {
        match self {
            Self::MissingTable { line, .. }
            | Self::Toml { line, .. }
            | Self::Value { line, .. }
            | Self::Table { line, .. } => Some(*line),
            _ => None,
        }
    }
}

/// A model as read from its files: the [`Model`] plus what the files say about it.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelFile {
    /// The model.
    pub model: Model,
    /// `[meta] description`: free text, typically how the model was measured.
    pub description: Option<String>,
    /// The TOML file it was read from.
    pub path: PathBuf,
    /// The `ssend` table's file.
    pub ssend_table: PathBuf,
    /// The `bsend` table's file.
    pub bsend_table: PathBuf,
}

impl ModelFile {
    /// Reads a model: `path` is its TOML file, or a directory holding `model.toml`. Table paths
    /// are relative to the TOML file's directory.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, ModelFileError> {
        let path = path.as_ref();
        let file = if path.is_dir() {
            path.join(MODEL_TOML)
        } else {
            path.to_path_buf()
        };
        let bytes = fs::read(&file).map_err(|error| ModelFileError::Read {
            path: file.clone(),
            error,
        })?;
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        parse(&bytes, &file, &mut |rel| {
            let table = dir.join(rel);
            let bytes = fs::read(&table);
            (table, bytes)
        })
    }

    /// [`ModelFile::load`], except that the name `default` is the embedded default model (write
    /// `./default` for a file of that name). This is what `--model` and `mpsim model` take.
    pub fn open(spec: impl AsRef<Path>) -> Result<Self, ModelFileError> {
        let spec = spec.as_ref();
        if spec == Path::new(DEFAULT_MODEL_NAME) {
            Self::embedded_default()
        } else {
            Self::load(spec)
        }
    }

    /// The embedded default model, [`Model::default_machine`], with its description (how it was
    /// measured). Its files are compiled in, so this reads nothing from disk.
    pub fn embedded_default() -> Result<Self, ModelFileError> {
        let dir = Path::new("<embedded>").join(DEFAULT_MODEL_NAME);
        parse(DEFAULT_TOML.as_bytes(), &dir.join(MODEL_TOML), &mut |rel| {
            let table = dir.join(rel);
            let text = match rel {
                "ssend.csv" => Ok(DEFAULT_SSEND.as_bytes().to_vec()),
                "bsend.csv" => Ok(DEFAULT_BSEND.as_bytes().to_vec()),
                _ => Err(io::Error::from(io::ErrorKind::NotFound)),
            };
            (table, text)
        })
    }

    /// Parses `model.toml` text; `file` names it in messages, and its directory is where the
    /// tables are read from.
    pub fn parse(text: &str, file: &Path) -> Result<Self, ModelFileError> {
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        parse(text.as_bytes(), file, &mut |rel| {
            let table = dir.join(rel);
            let bytes = fs::read(&table);
            (table, bytes)
        })
    }

    /// The TOML text of this model, naming its tables `ssend.csv` and `bsend.csv`.
    pub fn to_toml(&self) -> Result<String, ModelFileError> {
        to_toml(&self.model, self.description.as_deref())
    }

    /// Writes `model.toml`, `ssend.csv` and `bsend.csv` into `dir` (created if missing), so that
    /// [`ModelFile::load`]`(dir)` reads the same model and description back.
    pub fn write_to(&self, dir: impl AsRef<Path>) -> Result<(), ModelFileError> {
        let dir = dir.as_ref();
        let toml = self.to_toml()?;
        fs::create_dir_all(dir).map_err(|error| ModelFileError::Write {
            path: dir.to_path_buf(),
            error,
        })?;
        for (name, text) in [
            (MODEL_TOML, toml),
            ("ssend.csv", table_csv(&self.model.ssend)),
            ("bsend.csv", table_csv(&self.model.bsend)),
        ] {
            let path = dir.join(name);
            fs::write(&path, text).map_err(|error| ModelFileError::Write { path, error })?;
        }
        Ok(())
    }
}

impl Model {
    /// Reads a model from its files (see [`ModelFile::load`]): `path` is a `model.toml` or a
    /// directory holding one.
    pub fn load(path: impl AsRef<Path>) -> Result<Model, ModelFileError> {
        ModelFile::load(path).map(|f| f.model)
    }

    /// Parses `model.toml` text whose tables lie in `base_dir`. Messages call the text
    /// `<base_dir>/<model text>`.
    pub fn from_toml_str(text: &str, base_dir: impl AsRef<Path>) -> Result<Model, ModelFileError> {
        ModelFile::parse(text, &base_dir.as_ref().join("<model text>")).map(|f| f.model)
    }

    /// Writes the model as `model.toml`, `ssend.csv` and `bsend.csv` into `dir` (created if
    /// missing); [`Model::load`]`(dir)` gives it back.
    pub fn write_to(&self, dir: impl AsRef<Path>) -> Result<(), ModelFileError> {
        let file = ModelFile {
            model: self.clone(),
            description: None,
            path: dir.as_ref().join(MODEL_TOML),
            ssend_table: dir.as_ref().join("ssend.csv"),
            bsend_table: dir.as_ref().join("bsend.csv"),
        };
        file.write_to(dir)
    }
}

// ----------------------------------------------------------------------------------------------
// Reading

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    meta: Option<RawMeta>,
    network: RawNetwork,
    compute: Option<RawCompute>,
    bsp: Option<RawBsp>,
    cpu: Option<RawCpu>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMeta {
    description: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNetwork {
    ssend_table: Spanned<String>,
    bsend_table: Spanned<String>,
    ack_latency: Spanned<Value>,
    eager_threshold: Option<Spanned<Value>>,
    bsend_overhead: Option<Spanned<Value>>,
    system_buffer: Option<Spanned<Value>>,
    poll_cost: Option<Spanned<Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCompute {
    mode: Option<Spanned<String>>,
    flops_per_s: Option<Spanned<Value>>,
    host_to_target: Option<Spanned<Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBsp {
    g: Option<Spanned<Value>>,
    l: Option<Spanned<Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCpu {
    send_overhead: Option<Spanned<Value>>,
    recv_overhead: Option<Spanned<Value>>,
    cores: Option<Spanned<Value>>,
    wake_latency: Option<Spanned<Value>>,
    measure_overhead: Option<Spanned<Value>>,
    concurrent_slowdown: Option<Spanned<Value>>,
}

/// Finds a table's bytes from the string `model.toml` gives: the path tried, and its contents.
type Resolve<'a> = dyn FnMut(&str) -> (PathBuf, io::Result<Vec<u8>>) + 'a;

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &[u8], offset: usize) -> usize {
    let end = offset.min(text.len());
    1 + text[..end].iter().filter(|&&b| b == b'\n').count()
}

fn parse(
    bytes: &[u8],
    file: &Path,
    resolve: &mut Resolve<'_>,
) -> Result<ModelFile, ModelFileError> {
    let text = std::str::from_utf8(bytes).map_err(|e| ModelFileError::Toml {
        file: file.to_path_buf(),
        line: line_of(bytes, e.valid_up_to()),
        message: "not UTF-8 text".into(),
    })?;
    let raw: RawFile = toml::from_str(text).map_err(|e| ModelFileError::Toml {
        file: file.to_path_buf(),
        line: e.span().map_or(1, |s| line_of(bytes, s.start)),
        message: e.message().trim().replace('\n', "; "),
    })?;
    let cx = Cx { file, bytes };
    let net = &raw.network;

    let ack_latency_ns = cx.time(&net.ack_latency, "network.ack_latency")?;
    cx.positive(&net.ack_latency, "network.ack_latency", ack_latency_ns)?;
    let defaults = Model::default_machine();
    let eager_threshold = match &net.eager_threshold {
        Some(v) => cx.size(v, "network.eager_threshold")?,
        None => defaults.eager_threshold,
    };
    let bsend_overhead = match &net.bsend_overhead {
        Some(v) => cx.size(v, "network.bsend_overhead")?,
        None => defaults.bsend_overhead,
    };
    let system_buffer = match &net.system_buffer {
        Some(v) if matches!(v.get_ref(), Value::String(s) if s.trim() == "unbounded") => None,
        Some(v) => Some(cx.size(v, "network.system_buffer").map_err(|e| match e {
            ModelFileError::Value {
                file,
                line,
                key,
                message,
            } => ModelFileError::Value {
                file,
                line,
                key,
                message: format!("{message} (or \"unbounded\")"),
            },
            e => e,
        })?),
        None => None,
    };
    let poll_cost_ns = match &net.poll_cost {
        Some(v) => {
            let ns = cx.time(v, "network.poll_cost")?;
            cx.positive(v, "network.poll_cost", ns)?
        }
        None => defaults.poll_cost_ns,
    };

    let (mut compute, mut flops_per_s, mut host_to_target_ppm) = (
        defaults.compute,
        defaults.flops_per_s,
        defaults.host_to_target_ppm,
    );
    if let Some(c) = &raw.compute {
        if let Some(mode) = &c.mode {
            compute = match mode.get_ref().as_str() {
                "modeled" => ComputeMode::Modeled,
                "measured" => ComputeMode::Measured,
                "ignored" => ComputeMode::Ignored,
                other => {
                    return Err(cx.value_err(
                        mode.span().start,
                        "compute.mode",
                        format!(
                            "`{other}` is not a mode: use \"modeled\", \"measured\" or \"ignored\""
                        ),
                    ));
                }
            };
        }
        if let Some(v) = &c.flops_per_s {
            let f = cx.quantity(v, "compute.flops_per_s", &FLOPS)?;
            flops_per_s = cx.positive(v, "compute.flops_per_s", f)?;
        }
        if let Some(v) = &c.host_to_target {
            let ppm = cx.quantity(v, "compute.host_to_target", &FACTOR)?;
            host_to_target_ppm = cx.positive(v, "compute.host_to_target", ppm)?;
            if host_to_target_ppm > MAX_HOST_TO_TARGET_PPM {
                return Err(cx.value_err(
                    v.span().start,
                    "compute.host_to_target",
                    "must be at most 1000000".into(),
                ));
            }
        }
    }

    let (mut bsp_g_ps_per_byte, mut bsp_l_ns) = (None, None);
    if let Some(b) = &raw.bsp {
        if let Some(v) = &b.g {
            bsp_g_ps_per_byte = Some(cx.quantity(v, "bsp.g", &BSP_G)?);
        }
        if let Some(v) = &b.l {
            bsp_l_ns = Some(cx.time(v, "bsp.l")?);
        }
    }

    let cpu = match &raw.cpu {
        Some(c) => cx.cpu(c)?,
        None => CpuModel::default(),
    };

    let (ssend, ssend_table) = cx.table(&net.ssend_table, "ssend_table", "ssend", resolve)?;
    let (bsend, bsend_table) = cx.table(&net.bsend_table, "bsend_table", "bsend", resolve)?;

    let model = Model {
        ssend,
        bsend,
        ack_latency_ns,
        bsend_overhead,
        eager_threshold,
        system_buffer,
        poll_cost_ns,
        flops_per_s,
        compute,
        host_to_target_ppm,
        bsp_g_ps_per_byte,
        bsp_l_ns,
        cpu,
    };
    // Everything `validate` checks was checked above with a line; this keeps the two in step.
    model.validate().map_err(|e| ModelFileError::Toml {
        file: file.to_path_buf(),
        line: 1,
        message: e.to_string(),
    })?;
    Ok(ModelFile {
        model,
        description: raw.meta.and_then(|m| m.description),
        path: file.to_path_buf(),
        ssend_table,
        bsend_table,
    })
}

/// How a kind of quantity is written: its units, what a bare number means, and whether it is
/// rounded to its base unit or must be whole.
struct Kind {
    /// What the quantity is, for messages ("a time").
    what: &'static str,
    /// `(suffix, base units per suffix unit)`.
    units: &'static [(&'static str, u128)],
    /// Base units per bare number (no unit).
    bare: u128,
    /// Round to the nearest base unit (else a fraction of one is an error).
    nearest: bool,
    /// The base unit's name, for messages.
    base: &'static str,
}

const TIME: Kind = Kind {
    what: "a time",
    units: &[
        ("ns", 1),
        ("us", 1_000),
        ("µs", 1_000),
        ("ms", 1_000_000),
        ("s", 1_000_000_000),
    ],
    bare: 1,
    nearest: false,
    base: "ns",
};

const SIZE: Kind = Kind {
    what: "a size",
    units: &[
        ("B", 1),
        ("KiB", 1 << 10),
        ("MiB", 1 << 20),
        ("GiB", 1 << 30),
        ("TiB", 1 << 40),
    ],
    bare: 1,
    nearest: false,
    base: "bytes",
};

const FLOPS: Kind = Kind {
    what: "a rate in flop/s",
    units: &[],
    bare: 1,
    nearest: true,
    base: "flop/s",
};

const COUNT: Kind = Kind {
    what: "a count",
    units: &[],
    bare: 1,
    nearest: false,
    base: "units",
};

const FACTOR: Kind = Kind {
    what: "a factor",
    units: &[],
    bare: 1_000_000,
    nearest: true,
    base: "millionths",
};

const BSP_G: Kind = Kind {
    what: "a time per byte",
    units: &[
        ("ps/byte", 1),
        ("ps/B", 1),
        ("ns/byte", 1_000),
        ("ns/B", 1_000),
        ("us/byte", 1_000_000),
        ("us/B", 1_000_000),
    ],
    bare: 1_000,
    nearest: true,
    base: "ps/byte",
};

/// The file being read, for messages.
struct Cx<'a> {
    file: &'a Path,
    bytes: &'a [u8],
}

impl Cx<'_> {
    fn value_err(&self, offset: usize, key: &str, message: String) -> ModelFileError {
        ModelFileError::Value {
            file: self.file.to_path_buf(),
            line: line_of(self.bytes, offset),
            key: key.into(),
            message,
        }
    }

    fn quantity(&self, v: &Spanned<Value>, key: &str, kind: &Kind) -> Result<u64, ModelFileError> {
        quantity(v.get_ref(), kind).map_err(|m| self.value_err(v.span().start, key, m))
    }

    fn time(&self, v: &Spanned<Value>, key: &str) -> Result<u64, ModelFileError> {
        self.quantity(v, key, &TIME)
    }

    fn size(&self, v: &Spanned<Value>, key: &str) -> Result<usize, ModelFileError> {
        let n = self.quantity(v, key, &SIZE)?;
        usize::try_from(n)
            .map_err(|_| self.value_err(v.span().start, key, "too large for this machine".into()))
    }

    fn positive(&self, v: &Spanned<Value>, key: &str, n: u64) -> Result<u64, ModelFileError> {
        if n == 0 {
            Err(self.value_err(v.span().start, key, "must be > 0".into()))
        } else {
            Ok(n)
        }
    }

    /// The `[cpu]` section (extensions X1–X3).
    fn cpu(&self, c: &RawCpu) -> Result<CpuModel, ModelFileError> {
        let time =
            |v: &Option<Spanned<Value>>, key: &str| v.as_ref().map_or(Ok(0), |v| self.time(v, key));
        let cores = match &c.cores {
            None => None,
            Some(v) if matches!(v.get_ref(), Value::String(s) if s.trim() == "unlimited") => None,
            Some(v) => {
                let hint = "must be a whole number of cores > 0, or \"unlimited\"";
                let n = quantity(v.get_ref(), &COUNT).map_err(|m| {
                    self.value_err(v.span().start, "cpu.cores", format!("{m}; {hint}"))
                })?;
                match u32::try_from(n) {
                    Ok(n) if n > 0 => Some(n),
                    _ => return Err(self.value_err(v.span().start, "cpu.cores", hint.into())),
                }
            }
        };
        Ok(CpuModel {
            send_overhead_ns: time(&c.send_overhead, "cpu.send_overhead")?,
            recv_overhead_ns: time(&c.recv_overhead, "cpu.recv_overhead")?,
            cores,
            wake_latency_ns: time(&c.wake_latency, "cpu.wake_latency")?,
            measure_overhead_ns: time(&c.measure_overhead, "cpu.measure_overhead")?,
            concurrent_slowdown_ppm: match &c.concurrent_slowdown {
                Some(v) => {
                    let ppm = self.quantity(v, "cpu.concurrent_slowdown", &FACTOR)?;
                    if ppm > MAX_HOST_TO_TARGET_PPM {
                        return Err(self.value_err(
                            v.span().start,
                            "cpu.concurrent_slowdown",
                            "must be at most 1000000".into(),
                        ));
                    }
                    ppm
                }
                None => 0,
            },
        })
    }

    fn table(
        &self,
        rel: &Spanned<String>,
        key: &'static str,
        name: &str,
        resolve: &mut Resolve<'_>,
    ) -> Result<(DelayTable, PathBuf), ModelFileError> {
        let line = line_of(self.bytes, rel.span().start);
        if rel.get_ref().trim().is_empty() {
            return Err(ModelFileError::Value {
                file: self.file.to_path_buf(),
                line,
                key: format!("network.{key}"),
                message: "empty path".into(),
            });
        }
        let (path, bytes) = resolve(rel.get_ref());
        let bytes = bytes.map_err(|error| ModelFileError::MissingTable {
            file: self.file.to_path_buf(),
            line,
            key,
            table: path.clone(),
            error,
        })?;
        let table = parse_table(name, &path, &bytes)?;
        Ok((table, path))
    }
}

/// The exact decimal text of a TOML number or string, or why it is not one.
fn number_text(v: &Value) -> Result<String, String> {
    match v {
        Value::Integer(i) if *i < 0 => Err(format!("{i} is negative")),
        Value::Integer(i) => Ok(i.to_string()),
        Value::Float(f) if !f.is_finite() => Err(format!("{f} is not a finite number")),
        Value::Float(f) if *f < 0.0 => Err(format!("{f} is negative")),
        // Rust prints a float as the shortest decimal that reads back as the same float, and
        // never in exponent form: the number the file meant.
        Value::Float(f) if *f == 0.0 => Ok("0".into()),
        Value::Float(f) => Ok(f.to_string()),
        Value::String(s) => Ok(s.trim().to_string()),
        other => {
            let t = other.type_str();
            let a = if t.starts_with(['a', 'e', 'i', 'o', 'u']) {
                "an"
            } else {
                "a"
            };
            Err(format!("expected a number or a string, found {a} {t}"))
        }
    }
}

/// Reads a quantity of `kind` in its base unit.
fn quantity(v: &Value, kind: &Kind) -> Result<u64, String> {
    let text = number_text(v)?;
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (num, unit) = (&text[..split], text[split..].trim());
    let units_hint = || {
        if kind.units.is_empty() {
            format!("{} is a plain number", kind.what)
        } else {
            let names: Vec<&str> = kind.units.iter().map(|u| u.0).collect();
            format!("{} takes {}", kind.what, names.join(", "))
        }
    };
    if num.is_empty() {
        return Err(if text.starts_with('-') {
            format!("`{text}` is negative")
        } else {
            format!("`{text}` is not {}; {}", kind.what, units_hint())
        });
    }
    let scale = if unit.is_empty() {
        kind.bare
    } else {
        kind.units
            .iter()
            .find(|u| u.0 == unit)
            .map(|u| u.1)
            .ok_or_else(|| format!("unknown unit `{unit}` in `{text}`; {}", units_hint()))?
    };
    let bad = || format!("`{num}` is not a number");
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) if !f.contains('.') && i.len() + f.len() > 0 => (i, f),
        Some(_) => return Err(bad()),
        None => (num, ""),
    };
    let frac = frac.trim_end_matches('0');
    let too_large = || format!("`{text}` is too large");
    if frac.len() > 30 {
        return Err(format!("`{text}` has too many decimal digits"));
    }
    let mut mant: u128 = 0;
    for d in int.bytes().chain(frac.bytes()) {
        mant = mant
            .checked_mul(10)
            .and_then(|m| m.checked_add(u128::from(d - b'0')))
            .ok_or_else(too_large)?;
    }
    let den = 10u128.pow(frac.len() as u32);
    let scaled = mant.checked_mul(scale).ok_or_else(too_large)?;
    let value = if kind.nearest {
        scaled / den + u128::from(2 * (scaled % den) >= den)
    } else if scaled % den == 0 {
        scaled / den
    } else {
        return Err(format!("`{text}` is not a whole number of {}", kind.base));
    };
    u64::try_from(value).map_err(|_| too_large())
}

/// Reads one delay table (`size_bytes,delay_ns` rows).
fn parse_table(name: &str, path: &Path, bytes: &[u8]) -> Result<DelayTable, ModelFileError> {
    let err = |line: usize, message: String| ModelFileError::Table {
        file: path.to_path_buf(),
        line,
        message,
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .from_reader(bytes);
    let mut record = csv::ByteRecord::new();
    let mut points: Vec<(u64, u64)> = Vec::new();
    let mut prev: Option<(u64, usize)> = None; // (size, line)
    let mut first_line = None;
    let mut seen_row = false;
    loop {
        match reader.read_byte_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                let line = e.position().map_or(1, |p| record_line(bytes, p.byte()));
                return Err(err(line, format!("not a valid CSV row: {e}")));
            }
        }
        let line = record
            .position()
            .map_or(1, |p| record_line(bytes, p.byte()));
        if record.iter().all(|f| f.is_empty()) {
            continue; // a blank (or whitespace-only) line
        }
        let is_first = !seen_row;
        seen_row = true;
        if record.len() != 2 {
            return Err(err(
                line,
                format!(
                    "expected 2 fields `size_bytes,delay_ns`, found {}",
                    record.len()
                ),
            ));
        }
        let (a, b) = (&record[0], &record[1]);
        if is_first && a == b"size_bytes" && b == b"delay_ns" {
            continue;
        }
        if is_first && a.first().is_some_and(|c| c.is_ascii_alphabetic()) {
            return Err(err(
                line,
                format!(
                    "the header must be `size_bytes,delay_ns`, found `{},{}`",
                    shown(a),
                    shown(b)
                ),
            ));
        }
        let size = table_field(a, "size_bytes").map_err(|m| err(line, m))?;
        let delay = table_field(b, "delay_ns").map_err(|m| err(line, m))?;
        if let Some((p, pline)) = prev
            && size <= p
        {
            return Err(err(
                line,
                format!("sizes must strictly increase: {size} comes after {p} (line {pline})"),
            ));
        }
        if delay == 0 {
            return Err(err(
                line,
                format!("delay at {size} bytes is 0; delays must be > 0"),
            ));
        }
        first_line.get_or_insert(line);
        prev = Some((size, line));
        points.push((size, delay));
    }
    if points.is_empty() {
        return Err(err(
            1,
            format!(
                "the `{name}` table has no rows; it needs at least one `size_bytes,delay_ns` row"
            ),
        ));
    }
    DelayTable::new(name, points).map_err(|e| err(first_line.unwrap_or(1), e.to_string()))
}

/// The 1-based line of the record the CSV reader says starts at byte `start`. The reader's
/// own line numbers miscount around blank and comment lines, and its byte offset points at the
/// first line it skipped, so the skipped lines are passed over here.
fn record_line(bytes: &[u8], start: u64) -> usize {
    let mut at = usize::try_from(start).map_or(bytes.len(), |s| s.min(bytes.len()));
    loop {
        let end = bytes[at..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(bytes.len(), |i| at + i);
        let line = &bytes[at..end];
        let skipped = line.iter().all(u8::is_ascii_whitespace) || line.first() == Some(&b'#');
        if skipped && end < bytes.len() {
            at = end + 1;
        } else {
            break;
        }
    }
    line_of(bytes, at)
}

/// One integer field of a table row.
/// Input echoed in an error message: control characters escaped (a quoted CSV field can span
/// lines, and every message must stay on one line) and long text shortened.
fn shown(raw: &[u8]) -> String {
    const MAX: usize = 40;
    let text: String = String::from_utf8_lossy(raw).escape_debug().collect();
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

fn table_field(raw: &[u8], column: &str) -> Result<u64, String> {
    let text = shown(raw);
    if raw.is_empty() {
        return Err(format!("`{column}` is empty"));
    }
    if raw[0] == b'-' {
        return Err(format!("`{column}` is negative: `{text}`"));
    }
    if !raw.iter().all(u8::is_ascii_digit) {
        return Err(format!(
            "`{column}` must be a whole number (no unit, no sign), found `{text}`"
        ));
    }
    // All ASCII digits here, so the bytes are the number's text.
    String::from_utf8_lossy(raw)
        .parse::<u64>()
        .map_err(|_| format!("`{column}` is too large: `{text}` (at most {})", u64::MAX))
}

// ----------------------------------------------------------------------------------------------
// Writing

/// A time with the largest unit that keeps it whole.
/// `text` for an error message that stays on one line: what an error echoes of a model's text
/// (a value, a key, a table's path) may hold any character; control characters are escaped
/// (`\n`).
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn fmt_time(ns: u64) -> String {
    in_largest_unit(
        ns,
        &[("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)],
        "ns",
        "",
    )
}

/// A size with the largest binary unit that keeps it whole.
fn fmt_size(bytes: u64) -> String {
    in_largest_unit(bytes, &BINARY_SIZES, "B", "")
}

/// BSP `g` as written in a file.
fn fmt_bsp_g(ps: u64) -> String {
    let s = exact_decimal(ps, 3);
    format!("{}ns/byte", s.strip_suffix(".0").unwrap_or(&s))
}

/// A TOML string literal.
fn toml_string(s: &str) -> String {
    Value::String(s.into()).to_string()
}

fn to_toml(m: &Model, description: Option<&str>) -> Result<String, ModelFileError> {
    let unrepresentable = |what: String| Err(ModelFileError::Unrepresentable { what });
    if let Err(e) = m.validate() {
        return unrepresentable(e.to_string());
    }
    if m.host_to_target_ppm == 0 || m.host_to_target_ppm > MAX_HOST_TO_TARGET_PPM {
        return unrepresentable(format!(
            "host_to_target_ppm {} is outside 1..={MAX_HOST_TO_TARGET_PPM}",
            m.host_to_target_ppm
        ));
    }
    let mut t = String::new();
    // `write!` to a String cannot fail.
    let _ = writeln!(
        t,
        "# mpsim machine model (spec/timing.md §4, §7). Times: ns, us, ms, s; sizes: B, KiB, MiB,\n\
         # GiB; tables: size_bytes,delay_ns.\n"
    );
    if let Some(d) = description {
        let _ = writeln!(t, "[meta]\ndescription = {}\n", toml_string(d));
    }
    let _ = writeln!(t, "[network]");
    let _ = writeln!(t, "ssend_table = \"ssend.csv\"");
    let _ = writeln!(t, "bsend_table = \"bsend.csv\"");
    let _ = writeln!(t, "ack_latency = \"{}\"", fmt_time(m.ack_latency_ns));
    let _ = writeln!(
        t,
        "eager_threshold = \"{}\"",
        fmt_size(m.eager_threshold as u64)
    );
    let _ = writeln!(
        t,
        "bsend_overhead = \"{}\"",
        fmt_size(m.bsend_overhead as u64)
    );
    let _ = writeln!(
        t,
        "system_buffer = \"{}\"",
        m.system_buffer
            .map_or_else(|| "unbounded".into(), |b| fmt_size(b as u64))
    );
    let _ = writeln!(t, "poll_cost = \"{}\"", fmt_time(m.poll_cost_ns));
    let _ = writeln!(t, "\n[compute]");
    let _ = writeln!(t, "mode = \"{}\"", m.compute.name());
    if i64::try_from(m.flops_per_s).is_ok() {
        let _ = writeln!(t, "flops_per_s = {}", m.flops_per_s);
    } else {
        let _ = writeln!(t, "flops_per_s = \"{}\"", m.flops_per_s);
    }
    let _ = writeln!(
        t,
        "host_to_target = {}",
        exact_decimal(m.host_to_target_ppm, 6)
    );
    if m.bsp_g_ps_per_byte.is_some() || m.bsp_l_ns.is_some() {
        let _ = writeln!(t, "\n[bsp]");
        if let Some(g) = m.bsp_g_ps_per_byte {
            let _ = writeln!(t, "g = \"{}\"", fmt_bsp_g(g));
        }
        if let Some(l) = m.bsp_l_ns {
            let _ = writeln!(t, "l = \"{}\"", fmt_time(l));
        }
    }
    if m.cpu != CpuModel::default() {
        let c = &m.cpu;
        let _ = writeln!(t, "\n[cpu]");
        let _ = writeln!(t, "send_overhead = \"{}\"", fmt_time(c.send_overhead_ns));
        let _ = writeln!(t, "recv_overhead = \"{}\"", fmt_time(c.recv_overhead_ns));
        match c.cores {
            Some(n) => {
                let _ = writeln!(t, "cores = {n}");
            }
            None => {
                let _ = writeln!(t, "cores = \"unlimited\"");
            }
        }
        let _ = writeln!(t, "wake_latency = \"{}\"", fmt_time(c.wake_latency_ns));
        let _ = writeln!(
            t,
            "measure_overhead = \"{}\"",
            fmt_time(c.measure_overhead_ns)
        );
        if c.concurrent_slowdown_ppm > MAX_HOST_TO_TARGET_PPM {
            return unrepresentable(format!(
                "concurrent_slowdown_ppm {} is above {MAX_HOST_TO_TARGET_PPM}",
                c.concurrent_slowdown_ppm
            ));
        }
        let _ = writeln!(
            t,
            "concurrent_slowdown = {}",
            exact_decimal(c.concurrent_slowdown_ppm, 6)
        );
    }
    Ok(t)
}

/// A table as CSV text with its header.
fn table_csv(table: &DelayTable) -> String {
    let mut s = String::from("size_bytes,delay_ns\n");
    for (size, delay) in table.points() {
        let _ = writeln!(s, "{size},{delay}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(v: Value, kind: &Kind) -> Result<u64, String> {
        quantity(&v, kind)
    }

    fn s(text: &str) -> Value {
        Value::String(text.into())
    }

    #[test]
    fn units_convert_exactly() {
        assert_eq!(q(s("150ns"), &TIME), Ok(150));
        assert_eq!(q(s("1.5 us"), &TIME), Ok(1500));
        assert_eq!(q(s("2ms"), &TIME), Ok(2_000_000));
        assert_eq!(q(s("1s"), &TIME), Ok(1_000_000_000));
        assert_eq!(q(Value::Integer(42), &TIME), Ok(42));
        assert_eq!(q(s("64KiB"), &SIZE), Ok(65_536));
        assert_eq!(q(s("0.5KiB"), &SIZE), Ok(512));
        assert_eq!(q(Value::Float(1e10), &FLOPS), Ok(10_000_000_000));
        assert_eq!(q(Value::Float(2.5), &FLOPS), Ok(3));
        assert_eq!(q(Value::Float(1.0), &FACTOR), Ok(1_000_000));
        assert_eq!(q(Value::Float(0.1234565), &FACTOR), Ok(123_457));
        assert_eq!(q(s("0.125ns/byte"), &BSP_G), Ok(125));
        assert_eq!(q(Value::Float(0.125), &BSP_G), Ok(125));
    }

    #[test]
    fn bad_quantities_say_why() {
        let e = |v, k| q(v, k).unwrap_err();
        assert!(e(s("0.5ns"), &TIME).contains("whole number of ns"));
        assert!(e(s("5 parsecs"), &TIME).contains("unknown unit `parsecs`"));
        assert!(e(s("-5ns"), &TIME).contains("negative"));
        assert!(e(Value::Integer(-5), &TIME).contains("negative"));
        assert!(e(s("1.2.3ns"), &TIME).contains("not a number"));
        assert!(e(s("."), &TIME).contains("not a number"));
        assert!(e(s("99999999999999999999999999999999999999999ns"), &TIME).contains("too large"));
        assert!(e(s("18446744073709551616"), &TIME).contains("too large"));
        assert!(e(Value::Float(f64::NAN), &FLOPS).contains("finite"));
        assert!(e(Value::Boolean(true), &TIME).contains("found a boolean"));
        assert!(e(Value::Array(vec![]), &TIME).contains("found an array"));
        assert!(e(s("ns"), &TIME).contains("is not a time"));
    }

    #[test]
    fn written_quantities_read_back() {
        for ns in [0, 1, 999, 1000, 1500, 2_000_000, 3_000_000_000, u64::MAX] {
            assert_eq!(q(s(&fmt_time(ns)), &TIME), Ok(ns), "{}", fmt_time(ns));
        }
        for b in [0, 1, 64, 1024, 65_536, 3 << 30, 5 << 40, u64::MAX] {
            assert_eq!(q(s(&fmt_size(b)), &SIZE), Ok(b), "{}", fmt_size(b));
        }
        for ps in [0, 1, 125, 1000, 1500, u64::MAX] {
            assert_eq!(q(s(&fmt_bsp_g(ps)), &BSP_G), Ok(ps), "{}", fmt_bsp_g(ps));
        }
        assert_eq!(fmt_size(65_536), "64KiB");
        assert_eq!(fmt_time(150), "150ns");
        assert_eq!(exact_decimal(1_000_000, 6), "1.0");
        assert_eq!(exact_decimal(123_457, 6), "0.123457");
    }
}
