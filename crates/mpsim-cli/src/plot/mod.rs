//! `mpsim plot TRACE.json -o timeline.svg [--width PX] [--from T] [--to T]`: a trace as a
//! timeline picture, one lane per rank, that any browser opens.
//!
//! Perfetto shows a trace interactively; this gives a file to look at, diff and attach to a
//! report. The trace is Chrome trace-event JSON as `--trace` writes it (`mpsim_sim::Trace`):
//! spans of `compute`, `poll` and blocking calls per rank, and a flow pair per message.
//!
//! - [`parse`]: the JSON to a timeline in exact integer nanoseconds ([`decimal`]), or a
//!   one-line error naming the file and line;
//! - [`plan`]: how to draw it, from its size (lanes or bands, rectangles or density, arrows);
//! - [`render`]: the timeline to SVG, written by hand and deterministic: header, lanes and axis
//!   ([`axis`]: round ticks), and either [`detail`] (a rectangle per span, an arrow per
//!   message, capped and sampled) or, for big traces, [`density`] (bands of ranks, busy shares
//!   per pixel column, messages counted).
//!
//! It draws, it does not analyse: no critical path, no statistics beyond counts.

mod axis;
mod decimal;
mod density;
mod detail;
mod parse;
mod plan;
mod render;

use std::fs;
use std::path::PathBuf;

use clap::Args;

use crate::model::time;
use decimal::{DecimalError, decimal_scaled};
use parse::Timeline;
use plan::Drawn;
use render::Options;

/// `mpsim plot ...`.
#[derive(Args)]
pub struct PlotArgs {
    /// A Chrome trace-event JSON file, as a simulated run's `--trace` writes it.
    trace: PathBuf,
    /// The SVG file to write.
    #[arg(short, long)]
    out: PathBuf,
    /// Width of the image in pixels.
    #[arg(long, default_value_t = 1200, value_parser = clap::value_parser!(u32).range(300..=20_000))]
    width: u32,
    /// Start of the window shown, in ns or with a unit (`2.5us`, `1ms`, `0.1s`); default: the
    /// trace's first event.
    #[arg(long, value_parser = parse_time)]
    from: Option<u64>,
    /// End of the window shown, like `--from`; default: the trace's last event.
    #[arg(long, value_parser = parse_time)]
    to: Option<u64>,
}

/// Reads the trace, writes the SVG; returns the one-line summary to print.
pub fn run(args: PlotArgs) -> Result<String, String> {
    let path = args.trace.display();
    let text = fs::read_to_string(&args.trace).map_err(|e| match e.kind() {
        std::io::ErrorKind::InvalidData => format!("{path}: not valid JSON (not UTF-8 text)"),
        _ => format!("cannot read {path}: {e}"),
    })?;
    let t = Timeline::parse(&args.trace, &text).map_err(|e| e.to_string())?;
    let (first, last) = t.extent().unwrap_or((0, 0));
    let from = args.from.unwrap_or(first);
    let mut to = args.to.unwrap_or(last);
    if to <= from {
        if args.from.is_some() || args.to.is_some() {
            return Err(format!(
                "nothing to show: the window starts at {} and ends at {}",
                time(from),
                time(to)
            ));
        }
        to = from
            .checked_add(1)
            .ok_or("nothing to show: the trace starts at the end of time")?;
    }
    let options = Options {
        source: args.trace.display().to_string(),
        width: args.width,
        from,
        to,
    };
    let (svg, drawn) = render::render(&t, &options);
    fs::write(&args.out, svg).map_err(|e| format!("cannot write {}: {e}", args.out.display()))?;
    Ok(summary(
        &t,
        &drawn,
        &options,
        &args.out.display().to_string(),
    ))
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

/// A time for `--from` / `--to`: nanoseconds, or a decimal with `ns`, `us`, `ms` or `s`.
fn parse_time(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let (number, scale) = [("ns", 0), ("us", 3), ("ms", 6), ("s", 9)]
        .iter()
        .find_map(|&(unit, scale)| text.strip_suffix(unit).map(|n| (n.trim_end(), scale)))
        .unwrap_or((text, 0));
    decimal_scaled(number, scale).map_err(|e| match e {
        DecimalError::TooLarge => format!("`{text}` is too large"),
        _ => format!("`{text}` is not a time (ns, or a number with ns, us, ms or s)"),
    })
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
}
