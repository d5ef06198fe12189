//! `mpsim calibrate --from-osu FILE [--mode ssend|bsend|both]`: a model from the saved output of
//! OSU micro-benchmarks' `osu_latency`, for machines where mpsim cannot run but OSU has.
//!
//! `osu_latency` prints, on rank 0 (v5.x starts at 0 B; v7.x skips 0 B and adds a datatype line):
//!
//! ```text
//! # OSU MPI Latency Test v7.1
//! # Size          Latency (us)
//! # Datatype: MPI_CHAR.
//! 1                       0.15
//! ...
//! 4194304               380.24
//! ```
//!
//! Each row's figure is a one-way latency: half the mean round trip of a blocking ping-pong in
//! which both ranks `MPI_Send` `SIZE` bytes. It becomes the delay at `SIZE`, `us x 1000` ns,
//! exactly (decimal arithmetic; digits past the nanosecond round half up). No fit is needed:
//! unlike `--backend`, whose pings are answered by 0-byte messages, every row already is one
//! message's one-way time.
//!
//! Rules: a UTF-8 byte order mark is skipped (as the model loader skips one); `#` lines and
//! blank lines are skipped, except that an `# OSU ...` title without `Latency` (`osu_bw`, say)
//! is refused, since its figures are not times; a row is `SIZE LATENCY_US` with further columns
//! ignored (`-F` statistics, `--validation`'s verdict); sizes strictly increase; a latency must
//! come to at least 1 ns (a negative one, or one beyond `u64` nanoseconds, is said to be so).
//! Anything else is an error naming `FILE:LINE`. The file is read through `mpsim_sim::input`,
//! capped at 64 MiB ([`OSU_OUTPUT`]).
//!
//! What osu_latency cannot tell: it times standard sends only, so by default (`--mode both`)
//! the same table is `ssend` and `bsend`, without the synchronous handshake of an ssend or the
//! copy of a bsend; `--mode ssend|bsend` fills one and keeps the default model's other. The
//! ack latency is the 0-byte row's (a 0-byte one-way time, as for `--backend`), or without one
//! the smallest size's, the nearest thing measured. Everything else is the default model's.

use std::path::Path;

use clap::ValueEnum;
use mpsim::sim::{DelayTable, Model};
use mpsim_sim::input::{self, InputKind};

use super::{OsuMode, report, utc_now, write_model};
use mpsim_sim::decimal::{DecimalError, json_rounded};

/// osu_latency output: a line per size, a few dozen lines; 64 MiB is far beyond any real one.
const OSU_OUTPUT: InputKind = InputKind {
    what: "osu_latency output",
    max_bytes: 64 << 20,
    too_large: "not osu_latency output",
};

/// A parsed `osu_latency` output.
#[derive(Clone, Debug, PartialEq, Eq)]
struct OsuLatency {
    /// The `# OSU ...` title line without its `#`, if the file has one.
    title: Option<String>,
    /// `(size_bytes, delay_ns)`, sizes strictly increasing, delays `> 0`.
    points: Vec<(u64, u64)>,
}

/// Converts `file` and writes the model into `out`; returns what to print.
pub(super) fn run(file: &Path, mode: OsuMode, out: &Path) -> Result<String, String> {
    let bytes =
        input::read_capped(file, &OSU_OUTPUT).map_err(|e| format!("{}: {e}", file.display()))?;
    // Invalid UTF-8 shows up as a malformed row with its line number, not as a read error.
    let osu = parse(&String::from_utf8_lossy(&bytes), file)?;
    let table = |name: &str| {
        DelayTable::new(name, osu.points.clone()).map_err(|e| format!("{}: {e}", file.display()))
    };
    // `parse` never returns an empty table.
    let (ack_size, ack_latency_ns) = osu.points[0];
    let mut model = Model {
        ack_latency_ns,
        ..Model::default_machine()
    };
    if mode != OsuMode::Bsend {
        model.ssend = table("ssend")?;
    }
    if mode != OsuMode::Ssend {
        model.bsend = table("bsend")?;
    }

    let mode_name = mode
        .to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_string());
    let tables = match mode {
        OsuMode::Both => "the same table is the ssend and the bsend table",
        OsuMode::Ssend => "it is the ssend table, and the bsend table is the default machine's",
        OsuMode::Bsend => "it is the bsend table, and the ssend table is the default machine's",
    };
    let ack = if ack_size == 0 {
        "the 0-byte row".to_string()
    } else {
        format!("the smallest size's row ({ack_size} B; the file has no 0-byte row)")
    };
    let (first, last) = (osu.points[0].0, osu.points[osu.points.len() - 1].0);
    let description = format!(
        "Converted by `mpsim calibrate --from-osu {} --mode {mode_name}` (mpsim {}) at {} from \
         osu_latency output `{}` ({} sizes, {first} B to {last} B): each row's one-way latency \
         (half the mean round trip of a blocking ping-pong of standard MPI_Send, both ways \
         SIZE bytes) x 1000 = delay in ns. osu_latency times standard sends only, so {tables}; \
         neither the synchronous handshake of an ssend nor the copy of a bsend is measured \
         apart. ack_latency = {ack}. Other parameters (eager threshold, bsend overhead, \
         compute, BSP) are the default machine's.",
        file.display(),
        env!("CARGO_PKG_VERSION"),
        utc_now(),
        osu.title.as_deref().unwrap_or("without an OSU title line"),
        osu.points.len(),
    );
    let written = write_model(model, description, out)?;
    Ok(report(
        &written,
        &format!(
            "osu_latency {} ({} sizes) as {mode_name}; ack_latency = {ack_latency_ns} ns from {ack}",
            file.display(),
            osu.points.len()
        ),
        out,
    ))
}

/// Reads `osu_latency` output (module doc, "Rules"); errors name `file:line`.
fn parse(text: &str, file: &Path) -> Result<OsuLatency, String> {
    let at = |n: usize, message: String| format!("{}:{n}: {message}", file.display());
    let mut title = None;
    let mut points: Vec<(u64, u64)> = Vec::new();
    let mut prev: Option<(u64, usize)> = None; // (size, line)
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            let comment = comment.trim();
            if comment.starts_with("OSU ") && title.is_none() {
                if !comment.contains("Latency") {
                    return Err(at(
                        n,
                        format!(
                            "`{}` is not osu_latency output: its figures are not latencies",
                            shown(line)
                        ),
                    ));
                }
                title = Some(comment.to_string());
            }
            continue;
        }
        let mut fields = line.split_whitespace();
        let (Some(size), Some(latency)) = (fields.next(), fields.next()) else {
            return Err(at(
                n,
                format!(
                    "expected an osu_latency row `SIZE LATENCY_US`, found `{}`",
                    shown(line)
                ),
            ));
        };
        let size =
            whole_number(size).map_err(|why| at(n, format!("size `{}` {why}", shown(size))))?;
        let delay = latency_ns(latency).map_err(|m| at(n, m))?;
        if delay == 0 {
            return Err(at(
                n,
                format!("latency {latency} us at {size} B is 0 ns; delays must be > 0"),
            ));
        }
        if let Some((p, pline)) = prev
            && size <= p
        {
            return Err(at(
                n,
                format!("sizes must increase: {size} comes after {p} (line {pline})"),
            ));
        }
        prev = Some((size, n));
        points.push((size, delay));
    }
    if points.is_empty() {
        return Err(format!(
            "{}: no `SIZE LATENCY_US` rows: is this the output of osu_latency?",
            file.display()
        ));
    }
    Ok(OsuLatency { title, points })
}

/// `text` as a `u64` if it is only ASCII digits (no sign, no unit).
fn whole_number(text: &str) -> Result<u64, &'static str> {
    if text.is_empty() || !text.bytes().all(|c| c.is_ascii_digit()) {
        return Err("is not a whole number of bytes");
    }
    text.parse()
        .map_err(|_| "is too large (at most 18446744073709551615 bytes)")
}

/// Microseconds as printed (`0.18`, `320.50`, `12`, and in exponent form `1.5e2`) to whole
/// nanoseconds, exactly; digits past the nanosecond round half up.
fn latency_ns(text: &str) -> Result<u64, String> {
    // `12.` is how some printf formats end a whole number; JSON's grammar, which
    // `json_rounded` follows, wants a digit after the point.
    let number = text
        .strip_suffix('.')
        .filter(|n| !n.contains('.'))
        .unwrap_or(text);
    json_rounded(number, 3).map_err(|e| {
        let text = shown(text);
        match e {
            DecimalError::Negative => format!("latency `{text}` us is negative"),
            DecimalError::TooLarge => format!(
                "latency `{text}` us is too large: at most {} us",
                mpsim_sim::units::exact_decimal(u64::MAX, 3)
            ),
            DecimalError::NotANumber => {
                format!("latency `{text}` is not a number of microseconds")
            }
        }
    })
}

/// Input echoed in a message: control characters escaped, long text cut.
fn shown(text: &str) -> String {
    const MAX: usize = 60;
    let escaped: String = text.escape_debug().collect();
    match escaped.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &escaped[..cut]),
        None => escaped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<OsuLatency, String> {
        parse(text, Path::new("lat.txt"))
    }

    #[test]
    fn microseconds_convert_exactly() {
        assert_eq!(latency_ns("0.18"), Ok(180));
        assert_eq!(latency_ns("320.50"), Ok(320_500));
        assert_eq!(latency_ns("12"), Ok(12_000));
        assert_eq!(latency_ns("12."), Ok(12_000));
        assert_eq!(latency_ns("0.5"), Ok(500));
        assert_eq!(latency_ns("0.0004"), Ok(0));
        assert_eq!(latency_ns("0.0015"), Ok(2));
        assert_eq!(latency_ns("1.2344"), Ok(1_234));
        assert_eq!(latency_ns("1e3"), Ok(1_000_000));
        assert!(latency_ns(".5").unwrap_err().contains("not a number"));
        assert!(latency_ns("1.2.3").unwrap_err().contains("not a number"));
        assert!(latency_ns("fast").unwrap_err().contains("not a number"));
    }

    #[test]
    fn negative_and_huge_latencies_say_so() {
        assert_eq!(
            latency_ns("-0.22"),
            Err("latency `-0.22` us is negative".into())
        );
        assert_eq!(
            latency_ns("1e300"),
            Err("latency `1e300` us is too large: at most 18446744073709551.615 us".into())
        );
        assert!(
            latency_ns("99999999999999999999")
                .unwrap_err()
                .contains("too large")
        );
        assert_eq!(
            parsed("1 0.15\n8 -0.22\n"),
            Err("lat.txt:2: latency `-0.22` us is negative".into())
        );
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let with_bom = "\u{feff}# OSU MPI Latency Test v7.1\n1 0.15\n";
        assert_eq!(
            parsed(with_bom),
            Ok(OsuLatency {
                title: Some("OSU MPI Latency Test v7.1".into()),
                points: vec![(1, 150)],
            })
        );
    }

    #[test]
    fn endless_or_binary_input_is_refused_with_its_kind() {
        let e = input::read_capped_from(std::io::repeat(b'1'), 0, &OSU_OUTPUT).unwrap_err();
        assert_eq!(e.to_string(), "more than 64 MiB, not osu_latency output");
    }

    #[test]
    fn both_osu_formats_parse() {
        let v5 = "# OSU MPI Latency Test v5.8\n# Size          Latency (us)\n\
                  0                       0.14\n1                       0.15\n";
        let v7 = "# OSU MPI Latency Test v7.5\n# Datatype: MPI_CHAR.\n\
                  # Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations\n\
                  1                       3.00              2.90              3.20       10000\n\
                  2                       2.99              2.89              3.10       10000\r\n";
        assert_eq!(
            parsed(v5),
            Ok(OsuLatency {
                title: Some("OSU MPI Latency Test v5.8".into()),
                points: vec![(0, 140), (1, 150)],
            })
        );
        assert_eq!(parsed(v7).map(|o| o.points), Ok(vec![(1, 3000), (2, 2990)]));
    }

    #[test]
    fn malformed_rows_name_the_line() {
        let cases = [
            (
                "# OSU MPI Latency Test v7.1\n1 0.15\n8\n",
                "lat.txt:3: expected",
            ),
            ("1 0.15\n\n8 fast\n", "lat.txt:3: latency `fast`"),
            ("1 0.15\n-8 0.2\n", "lat.txt:2: size `-8`"),
            (
                "8 0.15\n8 0.2\n",
                "lat.txt:2: sizes must increase: 8 comes after 8 (line 1)",
            ),
            ("8 0.000\n", "lat.txt:1: latency 0.000 us at 8 B is 0 ns"),
            (
                "# OSU MPI Bandwidth Test v7.1\n1 3.45\n",
                "lat.txt:1: `# OSU MPI Bandwidth",
            ),
            ("# nothing\n\n", "lat.txt: no `SIZE LATENCY_US` rows"),
        ];
        for (text, want) in cases {
            let e = parsed(text).unwrap_err();
            assert!(e.starts_with(want), "{text:?}: {e}");
        }
    }
}
