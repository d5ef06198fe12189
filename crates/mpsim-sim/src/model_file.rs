//! Machine models as files: a TOML file of constants plus one CSV delay table per send mode
//! (`docs/models.md`; `docs/timing.md` §4 and §7).
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
//! timing = "p2p"                # BSP programs: "p2p" (default) or "cost" (w + h*g + l)
//!
//! [cpu]                         # optional: extensions X1-X3 (docs/extensions.md)
//! send_overhead = "300ns"       # X1: per nonblocking send request; default 0
//! recv_overhead = "200ns"       # X1: per nonblocking receive request; default 0
//! cores = 2                     # X2: cores the ranks share, > 0, or "unlimited" (default)
//! wake_latency = "3us"          # X2: a blocked rank's wake-up when ranks > cores; default 0
//! handover = "400ns"            # X2: per core mate, a resumed rank's wait for its core
//!                               #     (measured compute, ranks > cores); default 0
//! measure_overhead = "700ns"    # X3: taken off each measured-compute stretch; default 0
//! concurrent_slowdown = 0.09    # X2: measured compute when ranks compute at once; default 0
//!
//! [collectives]                 # optional: algorithms by name (docs/collectives.md §4)
//! reproducible = true           # reductions run their `reproducible` algorithm; default false
//! allreduce = "ring"            # COLLECTIVE = "ALGORITHM"; a collective not named runs the
//!                               # cheapest by this model's costs
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
//! millionth. A number in a string may take an exponent (`"1e3ns"`, `"2.5e-1us"`), read as
//! exactly as its digits. Numbers never take a sign: negative values are errors.
//!
//! Loading checks everything and names the file and line of the first problem: TOML syntax,
//! unknown keys (a misspelt key is an error, not a silently ignored one), types, units and
//! ranges in `model.toml` (with the key, the value as written, and the limit it breaks:
//! [`crate::model_value`]); missing or unreadable tables (with the key that names them); and in
//! each table, the row that is malformed, not increasing, or has a zero delay. Files are read
//! through [`crate::input`]: one that is not a model file or a table at all (over 64 MiB, or
//! binary data such as `/dev/zero`) is refused as it is read, not read forever. No input makes
//! it panic.
//!
//! The embedded default model ([`ModelFile::embedded_default`], equal to
//! [`Model::default_machine`]) is compiled in from `models/default/` in this crate, where its
//! `model.toml` says how it was measured.

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::{Spanned, Value};

use mpsim_proto::collective::{AlgorithmChoices, Collective};

use crate::input::{self, InputError};
use crate::model::{ComputeMode, CpuModel, DelayTable, Model};
use crate::model_value::{
    BSP_G, CORES, FACTOR, FLOPS, Kind, MAX_FACTOR_PPM, SIZE, Scalar, TIME, overflow_message,
    quantity, shorten, zero_message,
};
use crate::units::{BINARY_SIZES, exact_decimal, in_largest_unit};

const DEFAULT_TOML: &str = include_str!("../models/default/model.toml");
const DEFAULT_SSEND: &str = include_str!("../models/default/ssend.csv");
const DEFAULT_BSEND: &str = include_str!("../models/default/bsend.csv");

/// The name the embedded default model goes by in messages (and in `--model default`).
pub const DEFAULT_MODEL_NAME: &str = "default";

/// The name of a model's TOML file inside a model directory.
pub const MODEL_TOML: &str = "model.toml";

/// Why a model file could not be loaded or written. Every message names the file, and where a
/// line applies, the line (`file:line: ...`), on one line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelFileError {
    /// A model file could not be read, or is not one: larger than any model file
    /// ([`input::MODEL_FILE`]) or binary data.
    #[error("{}: {error}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        error: InputError,
    },
    /// A delay table named in `model.toml` could not be read (missing, unreadable), or is not
    /// one: larger than any delay table ([`input::DELAY_TABLE`]) or binary data.
    #[error(
        "{}:{line}: `{key}`: {}",
        file.display(),
        table_problem(table, error)
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
        error: InputError,
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

/// What is wrong with a table named in `model.toml`: `cannot read PATH: why` when it could not
/// be read, else `PATH: why` (`ssend.csv: more than 64 MiB, not a delay table`).
fn table_problem(table: &Path, error: &InputError) -> String {
    let table = one_line(&table.display().to_string());
    match error.io() {
        Some(e) => format!("cannot read {table}: {e}"),
        None => format!("{table}: {error}"),
    }
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
        let bytes = input::read_capped(&file, &input::MODEL_FILE).map_err(|error| {
            ModelFileError::Read {
                path: file.clone(),
                error,
            }
        })?;
        parse(&bytes, &file, &mut tables_beside(&file))
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
                _ => Err(InputError::Io(io::ErrorKind::NotFound.into())),
            };
            (table, text)
        })
    }

    /// Parses `model.toml` text; `file` names it in messages, and its directory is where the
    /// tables are read from.
    pub fn parse(text: &str, file: &Path) -> Result<Self, ModelFileError> {
        parse(text.as_bytes(), file, &mut tables_beside(file))
    }

    /// The TOML text of this model, naming its tables `ssend.csv` and `bsend.csv`.
    pub fn to_toml(&self) -> Result<String, ModelFileError> {
        to_toml(&self.model, self.description.as_deref())
    }

    /// Writes `model.toml`, `ssend.csv` and `bsend.csv` into `dir` (created if missing), so that
    /// [`ModelFile::load`]`(dir)` reads the same model and description back. Written whole
    /// ([`crate::output::write_files_in`]): a new directory appears with its three files, and a
    /// write that fails (a full disk, say) leaves the model that was in `dir` as it was.
    pub fn write_to(&self, dir: impl AsRef<Path>) -> Result<(), ModelFileError> {
        let toml = self.to_toml()?;
        let (ssend, bsend) = (table_csv(&self.model.ssend), table_csv(&self.model.bsend));
        // model.toml last: once it is in place, so are the tables it was written with.
        let files: [(&str, &[u8]); 3] = [
            ("ssend.csv", ssend.as_bytes()),
            ("bsend.csv", bsend.as_bytes()),
            (MODEL_TOML, toml.as_bytes()),
        ];
        crate::output::write_files_in(dir.as_ref(), &files)
            .map_err(|(path, error)| ModelFileError::Write { path, error })
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
    collectives: Option<std::collections::BTreeMap<String, Spanned<Value>>>,
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
    ack_latency: Spanned<Scalar>,
    eager_threshold: Option<Spanned<Scalar>>,
    bsend_overhead: Option<Spanned<Scalar>>,
    system_buffer: Option<Spanned<Scalar>>,
    poll_cost: Option<Spanned<Scalar>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCompute {
    mode: Option<Spanned<String>>,
    flops_per_s: Option<Spanned<Scalar>>,
    host_to_target: Option<Spanned<Scalar>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBsp {
    g: Option<Spanned<Scalar>>,
    l: Option<Spanned<Scalar>>,
    timing: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCpu {
    send_overhead: Option<Spanned<Scalar>>,
    recv_overhead: Option<Spanned<Scalar>>,
    cores: Option<Spanned<Scalar>>,
    wake_latency: Option<Spanned<Scalar>>,
    handover: Option<Spanned<Scalar>>,
    measure_overhead: Option<Spanned<Scalar>>,
    concurrent_slowdown: Option<Spanned<Scalar>>,
}

/// Finds a table's bytes from the string `model.toml` gives: the path tried, and its contents.
type Resolve<'a> = dyn FnMut(&str) -> (PathBuf, Result<Vec<u8>, InputError>) + 'a;

/// Reads tables from files relative to the directory of `file` (a `model.toml`), capped as
/// delay tables.
fn tables_beside(file: &Path) -> impl FnMut(&str) -> (PathBuf, Result<Vec<u8>, InputError>) {
    let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
    move |rel| {
        let table = dir.join(rel);
        let bytes = input::read_capped(&table, &input::DELAY_TABLE);
        (table, bytes)
    }
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &[u8], offset: usize) -> usize {
    let end = offset.min(text.len());
    1 + text[..end].iter().filter(|&&b| b == b'\n').count()
}

/// A TOML error as a model file error. An error at a value (a wrong type, a number beyond what
/// the TOML parser holds: `1e400`, an integer beyond 128 bits) is reported before the loader
/// sees the key, so the key is found from the error's place, and the message names it like any
/// other value's; numbers it quotes are echoed as written (serde spells `1e300` out in 301
/// digits).
fn toml_error(file: &Path, text: &str, e: &toml::de::Error) -> ModelFileError {
    let message = e.message().trim().replace('\n', "; ");
    let span = e.span().unwrap_or(0..0);
    let written = text.get(span.clone()).unwrap_or_default().trim();
    let line = line_of(text.as_bytes(), span.start);
    let file = file.to_path_buf();
    let overflow = matches!(
        message.as_str(),
        "integer number overflowed" | "floating-point number overflowed"
    );
    match e.span().and_then(|s| key_at(text, s.start)) {
        Some(key) if overflow => ModelFileError::Value {
            file,
            line,
            message: overflow_message(&key, written),
            key,
        },
        Some(key) => ModelFileError::Value {
            file,
            line,
            message: short_quotes(&message, written),
            key,
        },
        None => ModelFileError::Toml {
            file,
            line,
            message: with_line_text(&short_quotes(&message, written), text, line),
        },
    }
}

/// `message` about line `line` of `text`, followed by that line as written (cut if long), so
/// that an error the TOML parser does not tie to a key ("duplicate key", a table written as an
/// array of tables) still shows what it is about; the array of tables gets a hint.
fn with_line_text(message: &str, text: &str, line: usize) -> String {
    let Some(written) = text.lines().nth(line - 1).map(str::trim) else {
        return message.to_owned();
    };
    if written.is_empty() {
        return message.to_owned();
    }
    let shown = if written.chars().count() > 60 {
        format!("{}...", written.chars().take(60).collect::<String>())
    } else {
        written.to_owned()
    };
    let mut out = format!("{message}: `{shown}`");
    if let Some(name) = written
        .strip_prefix("[[")
        .and_then(|r| r.split("]]").next())
        .map(str::trim)
    {
        out.push_str(&format!(
            " (an array of tables: write `[{name}]`, with single brackets)"
        ));
    }
    out
}

/// `message` with what it quotes (between backticks) kept short: a long number as `written`,
/// the value's text in the file, when that is a number too; anything else long, cut.
fn short_quotes(message: &str, written: &str) -> String {
    let numeric = |t: &str| {
        !t.is_empty()
            && t.bytes()
                .all(|c| c.is_ascii_digit() || b"+-._eE".contains(&c))
    };
    message
        .split('`')
        .enumerate()
        .map(|(i, part)| {
            let quoted = i % 2 == 1;
            if !quoted || part.chars().count() <= 40 {
                part.to_owned()
            } else if numeric(part) && numeric(written) {
                shorten(written)
            } else {
                shorten(part)
            }
        })
        .collect::<Vec<_>>()
        .join("`")
}

/// The key (`section.key`) whose value starts at byte `offset` of `text`, when it is written
/// plainly, `key = value` under a `[section]` header.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let before = text.get(..offset)?;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let key = before[line_start..].trim_end().strip_suffix('=')?.trim();
    let bare = |k: &str| {
        !k.is_empty()
            && k.bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
    };
    if !bare(key) {
        return None;
    }
    let section = before[..line_start]
        .lines()
        .rev()
        .map(str::trim)
        .find_map(|l| l.strip_prefix('[')?.split(']').next())
        .map(str::trim)
        .filter(|s| bare(s))?;
    Some(format!("{section}.{key}"))
}

/// `e` with `alternative` named as the other thing the key takes: `... (or "unlimited")`.
fn or_else(e: ModelFileError, alternative: &str) -> ModelFileError {
    match e {
        ModelFileError::Value {
            file,
            line,
            key,
            message,
        } => ModelFileError::Value {
            file,
            line,
            key,
            message: format!("{message} (or {alternative})"),
        },
        e => e,
    }
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
    let raw: RawFile = toml::from_str(text).map_err(|e| toml_error(file, text, &e))?;
    let cx = Cx { file, bytes };
    let net = &raw.network;

    let ack_latency_ns = cx.positive(&net.ack_latency, "network.ack_latency", &TIME)?;
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
        Some(v) if v.get_ref().as_str() == Some("unbounded") => None,
        Some(v) => Some(
            cx.size(v, "network.system_buffer")
                .map_err(|e| or_else(e, "\"unbounded\""))?,
        ),
        None => None,
    };
    let poll_cost_ns = match &net.poll_cost {
        Some(v) => cx.positive(v, "network.poll_cost", &TIME)?,
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
            flops_per_s = cx.positive(v, "compute.flops_per_s", &FLOPS)?;
        }
        if let Some(v) = &c.host_to_target {
            host_to_target_ppm = cx.positive(v, "compute.host_to_target", &FACTOR)?;
        }
    }

    let (mut bsp_g_ps_per_byte, mut bsp_l_ns) = (None, None);
    let mut bsp_timing = crate::BspTiming::P2p;
    if let Some(b) = &raw.bsp {
        if let Some(v) = &b.g {
            bsp_g_ps_per_byte = Some(cx.quantity(v, "bsp.g", &BSP_G)?);
        }
        if let Some(v) = &b.l {
            bsp_l_ns = Some(cx.time(v, "bsp.l")?);
        }
        if let Some(t) = &b.timing {
            bsp_timing = match t.get_ref().as_str() {
                "cost" => crate::BspTiming::Cost,
                "p2p" => crate::BspTiming::P2p,
                other => {
                    return Err(cx.value_err(
                        t.span().start,
                        "bsp.timing",
                        format!("`{other}` is not a BSP timing: use \"cost\" or \"p2p\""),
                    ));
                }
            };
        }
    }

    let cpu = match &raw.cpu {
        Some(c) => cx.cpu(c)?,
        None => CpuModel::default(),
    };
    let collectives = match &raw.collectives {
        Some(c) => cx.collectives(c)?,
        None => AlgorithmChoices::default(),
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
        bsp_timing,
        cpu,
        collectives,
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

    fn quantity(&self, v: &Spanned<Scalar>, key: &str, kind: &Kind) -> Result<u64, ModelFileError> {
        quantity(v.get_ref(), kind).map_err(|m| self.value_err(v.span().start, key, m))
    }

    fn time(&self, v: &Spanned<Scalar>, key: &str) -> Result<u64, ModelFileError> {
        self.quantity(v, key, &TIME)
    }

    fn size(&self, v: &Spanned<Scalar>, key: &str) -> Result<usize, ModelFileError> {
        let n = self.quantity(v, key, &SIZE)?;
        usize::try_from(n).map_err(|_| {
            self.value_err(
                v.span().start,
                key,
                format!("`{}` is too large for this machine", v.get_ref().shown()),
            )
        })
    }

    /// A quantity that must be `> 0`; a value that rounds to 0 says so.
    fn positive(&self, v: &Spanned<Scalar>, key: &str, kind: &Kind) -> Result<u64, ModelFileError> {
        match self.quantity(v, key, kind)? {
            0 => Err(self.value_err(v.span().start, key, zero_message(v.get_ref(), kind))),
            n => Ok(n),
        }
    }

    /// The `[collectives]` section: `COLLECTIVE = "ALGORITHM"` per collective, and
    /// `reproducible = true|false` (`docs/collectives.md` §4). Errors name the key's line, and
    /// the names it could have been.
    fn collectives(
        &self,
        raw: &std::collections::BTreeMap<String, Spanned<Value>>,
    ) -> Result<AlgorithmChoices, ModelFileError> {
        let mut choices = AlgorithmChoices::default();
        // In the file's order, so that the first problem is the first one reported.
        let mut keys: Vec<(&String, &Spanned<Value>)> = raw.iter().collect();
        keys.sort_by_key(|(_, v)| v.span().start);
        for (key, value) in keys {
            let at = value.span().start;
            let name = format!("collectives.{key}");
            if key == "reproducible" {
                match value.get_ref() {
                    Value::Boolean(on) => choices.reproducible = *on,
                    _ => {
                        return Err(self.value_err(
                            at,
                            &name,
                            "expected true or false".to_string(),
                        ));
                    }
                }
                continue;
            }
            let coll = Collective::from_name(key)
                .map_err(|e| self.value_err(at, &name, format!("{e}, or reproducible")))?;
            let Value::String(algo) = value.get_ref() else {
                return Err(self.value_err(
                    at,
                    &name,
                    "expected an algorithm's name as a string (`\"binomial\"`)".to_string(),
                ));
            };
            let algo = coll
                .algorithm(algo)
                .map_err(|e| self.value_err(at, &name, e))?;
            choices
                .set(coll, Some(algo))
                .map_err(|e| self.value_err(at, &name, e))?;
        }
        Ok(choices)
    }

    /// The `[cpu]` section (extensions X1–X3).
    fn cpu(&self, c: &RawCpu) -> Result<CpuModel, ModelFileError> {
        let time = |v: &Option<Spanned<Scalar>>, key: &str| {
            v.as_ref().map_or(Ok(0), |v| self.time(v, key))
        };
        let cores = match &c.cores {
            None => None,
            Some(v) if v.get_ref().as_str() == Some("unlimited") => None,
            Some(v) => {
                let n = self
                    .positive(v, "cpu.cores", &CORES)
                    .map_err(|e| or_else(e, "\"unlimited\""))?;
                // `CORES.max` is `u32::MAX`, so this cannot fail; the error keeps it a message.
                Some(u32::try_from(n).map_err(|_| {
                    self.value_err(v.span().start, "cpu.cores", "too many cores".into())
                })?)
            }
        };
        Ok(CpuModel {
            send_overhead_ns: time(&c.send_overhead, "cpu.send_overhead")?,
            recv_overhead_ns: time(&c.recv_overhead, "cpu.recv_overhead")?,
            cores,
            wake_latency_ns: time(&c.wake_latency, "cpu.wake_latency")?,
            handover_ns: time(&c.handover, "cpu.handover")?,
            measure_overhead_ns: time(&c.measure_overhead, "cpu.measure_overhead")?,
            concurrent_slowdown_ppm: match &c.concurrent_slowdown {
                Some(v) => self.quantity(v, "cpu.concurrent_slowdown", &FACTOR)?,
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

/// One integer field of a table row.
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

/// A time with the largest unit that keeps it whole.
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
    if m.host_to_target_ppm == 0 || m.host_to_target_ppm > MAX_FACTOR_PPM {
        return unrepresentable(format!(
            "host_to_target_ppm {} is outside 1..={MAX_FACTOR_PPM}",
            m.host_to_target_ppm
        ));
    }
    let mut t = String::new();
    // `write!` to a String cannot fail.
    let _ = writeln!(
        t,
        "# mpsim machine model (docs/timing.md §4, §7). Times: ns, us, ms, s; sizes: B, KiB, MiB,\n\
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
    let cost = m.bsp_timing == crate::BspTiming::Cost;
    if m.bsp_g_ps_per_byte.is_some() || m.bsp_l_ns.is_some() || cost {
        let _ = writeln!(t, "\n[bsp]");
        if cost {
            let _ = writeln!(t, "timing = \"cost\"");
        }
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
        let _ = writeln!(t, "handover = \"{}\"", fmt_time(c.handover_ns));
        let _ = writeln!(
            t,
            "measure_overhead = \"{}\"",
            fmt_time(c.measure_overhead_ns)
        );
        if c.concurrent_slowdown_ppm > MAX_FACTOR_PPM {
            return unrepresentable(format!(
                "concurrent_slowdown_ppm {} is above {MAX_FACTOR_PPM}",
                c.concurrent_slowdown_ppm
            ));
        }
        let _ = writeln!(
            t,
            "concurrent_slowdown = {}",
            exact_decimal(c.concurrent_slowdown_ppm, 6)
        );
    }
    if !m.collectives.is_empty() {
        let _ = writeln!(t, "\n[collectives]");
        if m.collectives.reproducible {
            let _ = writeln!(t, "reproducible = true");
        }
        for (coll, algo) in m.collectives.named() {
            let _ = writeln!(t, "{coll} = \"{algo}\"");
        }
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

    fn q(v: Scalar, kind: &Kind) -> Result<u64, String> {
        quantity(&v, kind)
    }

    fn s(text: &str) -> Scalar {
        Scalar::String(text.into())
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
