//! `mpsim plot TRACE.json -o timeline.svg [--width PX] [--from T] [--to T]`: a trace as a
//! timeline picture, one lane per rank, that any browser opens.
//!
//! Perfetto shows a trace interactively; this gives a file to look at, diff and attach to a
//! report. The trace is Chrome trace-event JSON as `--trace` writes it (`mpsim_sim::Trace`):
//! spans of `compute`, `poll` and blocking calls per rank, and a flow pair per message (spans
//! written as `B`/`E` pairs, as other tools write them, are drawn too). It is read whole,
//! through `mpsim_sim::input` with a cap ([`TRACE`]).
//!
//! - [`parse`]: the JSON to a timeline in exact integer nanoseconds ([`mpsim_sim::decimal`]), or a
//!   one-line error naming the file and line;
//! - [`plan`]: how to draw it, from its size (lanes or bands, rectangles or density, arrows);
//! - [`render`]: the timeline to SVG, written by hand and deterministic: header, lanes and axis
//!   ([`axis`]: round ticks), and either [`detail`] (a rectangle per span, an arrow per
//!   message, capped and sampled) or, for big traces, [`density`] (bands of ranks, busy shares
//!   per pixel column, messages counted).
//!
//! It draws, it does not analyse: no critical path, no statistics beyond counts.

mod axis;
mod density;
mod detail;
mod parse;
mod plan;
mod render;

use std::fs;
use std::path::PathBuf;

use clap::Args;
use mpsim_sim::decimal::{DecimalError, json_exact};
use mpsim_sim::input::{self, InputKind};

use crate::model::time;
use parse::Timeline;
use plan::Drawn;
use render::Options;

/// A trace is read whole (events are parsed borrowing from its text), so it is capped far above
/// what a run's `--trace` writes for a picture worth drawing, and below what would exhaust an
/// ordinary host's memory (the text plus about a fifth of it for the events).
const TRACE: InputKind = InputKind {
    what: "a trace",
    max_bytes: mpsim_sim::Trace::PLOT_MAX_BYTES,
    too_large: "too large for mpsim plot, which reads a trace whole",
};

/// `mpsim plot ...`.
#[derive(Args)]
pub struct PlotArgs {
    /// A Chrome trace-event JSON file, as a run's `--trace` writes it (not a `.pftrace`).
    trace: PathBuf,
    /// The SVG file to write (`-`: standard output, the summary line going to standard error).
    #[arg(short, long)]
    out: PathBuf,
    /// Width of the image in pixels.
    #[arg(long, default_value_t = 1200, value_parser = clap::value_parser!(u32).range(300..=20_000))]
    width: u32,
    /// Start of the window shown, in whole ns or with a unit (`2.5us`, `1ms`, `0.1s`);
    /// default: the trace's first event.
    #[arg(long, value_parser = parse_time)]
    from: Option<u64>,
    /// End of the window shown, like `--from`; default: the trace's last event.
    #[arg(long, value_parser = parse_time)]
    to: Option<u64>,
}

/// Reads the trace, writes the SVG; returns the one-line summary to print.
pub fn run(args: PlotArgs) -> Result<String, String> {
    let path = args.trace.display();
    if same_file(&args.trace, &args.out) {
        return Err(format!(
            "{path} is both the trace and the output: the picture would overwrite the trace"
        ));
    }
    if mpsim::TraceFormat::for_path(&args.trace) == mpsim::TraceFormat::Perfetto {
        return Err(format!(
            "{path} is a Perfetto protobuf trace (by its name), which mpsim plot does not read: \
             open it in Perfetto (ui.perfetto.dev), or trace the run again to a .json file"
        ));
    }
    let bytes = input::read_capped(&args.trace, &TRACE).map_err(|e| match e.io() {
        Some(e) => format!("cannot read {path}: {e}"),
        None => format!("{path}: {e}"),
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        let line = 1 + bytes[..at].iter().filter(|&&b| b == b'\n').count();
        format!("{path}:{line}: not valid JSON (not UTF-8 text)")
    })?;
    let t = Timeline::parse(&args.trace, &text).map_err(|e| e.to_string())?;
    if t.extent().is_none() {
        return Err(format!(
            "{path}: nothing to show: the trace has no spans or messages"
        ));
    }
    let (from, to) = window(t.extent(), args.from, args.to)?;
    let options = Options {
        source: args.trace.display().to_string(),
        width: args.width,
        from,
        to,
    };
    let (svg, drawn) = render::render(&t, &options);
    if args.out.as_os_str() == "-" {
        eprint!("{}", summary(&t, &drawn, &options, "standard output"));
        return Ok(svg);
    }
    // Whole or not at all: a failed write leaves no half picture, and the file that was there.
    mpsim_sim::output::write_whole(&args.out, svg.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", args.out.display()))?;
    Ok(summary(
        &t,
        &drawn,
        &options,
        &args.out.display().to_string(),
    ))
}

/// Whether `a` and `b` name one existing file (through links or other spellings too).
fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    match (fs::canonicalize(a), fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The window to draw: `--from` and `--to` where given, else the trace's first and last
/// instants (`extent`); when it is empty, why, in the terms of the flags.
fn window(
    extent: Option<(u64, u64)>,
    from: Option<u64>,
    to: Option<u64>,
) -> Result<(u64, u64), String> {
    let (first, last) = extent.unwrap_or((0, 0));
    let trace = |edge: &str, at: u64| match extent {
        Some(_) => format!("the {edge} of the trace, {}", time(at)),
        None => format!("the {edge} of the trace (it has no spans or messages)"),
    };
    match (from, to) {
        (Some(f), Some(t)) if t <= f => Err(format!(
            "nothing to show: --to {} is not after --from {}",
            time(t),
            time(f)
        )),
        (Some(f), None) if last <= f => Err(format!(
            "nothing to show: --from {} is not before {}",
            time(f),
            trace("end", last)
        )),
        (None, Some(t)) if t <= first => Err(format!(
            "nothing to show: --to {} is not after {}",
            time(t),
            trace("start", first)
        )),
        (Some(f), Some(t)) if extent.is_some() && (last <= f || t <= first) => Err(format!(
            "nothing to show: --from {} --to {} is outside the trace, {} to {}",
            time(f),
            time(t),
            time(first),
            time(last)
        )),
        (Some(f), Some(t)) => Ok((f, t)),
        (Some(f), None) => Ok((f, last)),
        (None, Some(t)) => Ok((first, t)),
        // A trace of one instant (or none) gets a window of 1 ns.
        (None, None) if last <= first => first
            .checked_add(1)
            .map(|to| (first, to))
            .ok_or_else(|| "nothing to show: the trace starts at the end of time".to_owned()),
        (None, None) => Ok((first, last)),
    }
}

/// `wrote OUT: 3 ranks, 12 spans, 6 messages, 0 ns to 4.2 us` and how big traces were drawn.
fn summary(t: &Timeline, d: &Drawn, o: &Options, out: &str) -> String {
    let ranks = if d.band_size > 1 {
        format!("{} ranks in {} bands of {}", t.ranks, d.lanes, d.band_size)
    } else {
        format!("{} ranks", t.ranks)
    };
    let spans = if d.rects { "" } else { " (as density)" };
    let messages = if !d.rects {
        " (as counts)".to_owned()
    } else if d.arrows < d.messages {
        format!(" ({} drawn)", d.arrows)
    } else {
        String::new()
    };
    format!(
        "wrote {out}: {ranks}, {} spans{spans}, {} messages{messages}, {} to {}\n",
        d.spans,
        d.messages,
        time(o.from),
        time(o.to)
    )
}

/// A time for `--from` / `--to`: nanoseconds, or a decimal with `ns`, `us`, `ms` or `s`. It
/// must come to whole nanoseconds, the trace's resolution: rounding `1.5` and `1.6` would make
/// both 2 ns and the window empty for a reason the user never wrote.
fn parse_time(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let unit = [("ns", 0), ("us", 3), ("ms", 6), ("s", 9)]
        .iter()
        .find_map(|&(unit, scale)| text.strip_suffix(unit).map(|n| (n.trim_end(), scale)));
    let (number, scale) = unit.unwrap_or((text, 0));
    match json_exact(number, scale) {
        Ok(Some(ns)) => Ok(ns),
        Ok(None) if unit.is_none() => Err(format!(
            "`{text}` is not a whole number of nanoseconds (trace times are whole ns; for \
             microseconds write `{text}us`)"
        )),
        Ok(None) => Err(format!(
            "`{text}` is not a whole number of nanoseconds (trace times are whole ns)"
        )),
        Err(DecimalError::TooLarge) => Err(format!("`{text}` is too large")),
        Err(DecimalError::Negative) => Err(format!("`{text}` is negative")),
        Err(DecimalError::NotANumber) => Err(format!(
            "`{text}` is not a time (ns, or a number with ns, us, ms or s)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_times_take_units() {
        assert_eq!(parse_time("1500"), Ok(1_500));
        assert_eq!(parse_time("2.5us"), Ok(2_500));
        assert_eq!(parse_time("1 ms"), Ok(1_000_000));
        assert_eq!(parse_time("0.1s"), Ok(100_000_000));
        assert_eq!(parse_time("7ns"), Ok(7));
        assert!(parse_time("-1").is_err());
        assert!(parse_time("3 weeks").is_err());
        assert!(parse_time("").is_err());
    }

    #[test]
    fn window_times_are_whole_nanoseconds() {
        let e = parse_time("1.5").unwrap_err();
        assert!(
            e.starts_with("`1.5` is not a whole number of nanoseconds"),
            "{e}"
        );
        assert!(parse_time("1.5ns").is_err());
        assert!(parse_time("0.0015us").is_err());
        assert_eq!(parse_time("1.0"), Ok(1));
        assert_eq!(parse_time("-1"), Err("`-1` is negative".into()));
    }

    #[test]
    fn an_empty_window_says_which_flag_empties_it() {
        let trace = Some((1_000, 5_000));
        assert_eq!(window(trace, None, None), Ok((1_000, 5_000)));
        assert_eq!(window(trace, Some(2_000), None), Ok((2_000, 5_000)));
        assert_eq!(window(trace, None, Some(3_000)), Ok((1_000, 3_000)));
        assert_eq!(window(Some((7, 7)), None, None), Ok((7, 8)));
        assert_eq!(
            window(trace, Some(2), Some(2)),
            Err("nothing to show: --to 2 ns is not after --from 2 ns".into())
        );
        assert_eq!(
            window(trace, Some(6_000), None),
            Err("nothing to show: --from 6 us is not before the end of the trace, 5 us".into())
        );
        assert_eq!(
            window(trace, None, Some(1_000)),
            Err("nothing to show: --to 1 us is not after the start of the trace, 1 us".into())
        );
        assert_eq!(
            window(trace, Some(6_000), Some(9_000)),
            Err("nothing to show: --from 6 us --to 9 us is outside the trace, 1 us to 5 us".into())
        );
        assert_eq!(
            window(trace, Some(0), Some(1_000)),
            Err("nothing to show: --from 0 ns --to 1 us is outside the trace, 1 us to 5 us".into())
        );
        assert_eq!(
            window(trace, Some(0), Some(1_001)),
            Ok((0, 1_001)),
            "overlaps"
        );
        assert_eq!(
            window(None, Some(5), None),
            Err(
                "nothing to show: --from 5 ns is not before the end of the trace (it has no \
                 spans or messages)"
                    .into()
            )
        );
    }
}
