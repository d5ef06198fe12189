//! A [`Timeline`] as an SVG document: a header (title, legend, notes), one lane per rank or
//! band of ranks, message arrows or counts, and the time axis.
//!
//! Two ways to draw the lanes, chosen by size so that the file stays one a browser opens:
//! - up to [`MAX_LANES`] ranks and [`MAX_RECTS`] spans in the window: one lane per rank, one
//!   rectangle per span (with a tooltip), one arrow per message (at most [`MAX_ARROWS`], every
//!   k-th in file order beyond that);
//! - otherwise: at most [`MAX_LANES`] bands of consecutive ranks (one rank each if there are
//!   few ranks but many spans), each showing per pixel column the fraction of its ranks' time
//!   in each category ([`super::density`]), and messages as a strip of sends per column (at
//!   that density arrows would only hide the lanes).
//!
//! The output depends only on the timeline and the options: elements are written in file
//! order, coordinates with fixed decimals, and notes say what was left out.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::axis;
use super::density::{Buckets, Busy, bars_path};
use super::parse::{Message, Timeline};
use crate::model::time;

/// Ranks drawn one lane each; beyond this many, ranks are grouped into at most this many bands.
pub const MAX_LANES: u32 = 64;
/// Spans in the window drawn as rectangles at most; beyond this, lanes show density.
pub const MAX_RECTS: usize = 20_000;
/// Message arrows drawn at most; beyond this, every k-th message is drawn.
pub const MAX_ARROWS: usize = 2_000;

/// Font size, px, and the width of one character of it, roughly, for laying out labels.
const FONT: u32 = 11;
const CHAR_W: f64 = 6.2;
/// Space right of the plot, px.
const RIGHT: f64 = 16.0;
/// Height of the strip of message counts, px.
const STRIP_H: u32 = 36;

/// What a span's time was spent on, as far as the plot tells apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    /// `compute`: the rank's own work.
    Compute,
    /// Any other name: blocked in a call (`recv`, `wait_all`, `ssend`, ...).
    Blocked,
    /// `poll`: a test or probe that found nothing.
    Poll,
}

/// What to draw.
#[derive(Clone, Debug)]
pub struct Options {
    /// The trace file, for the title.
    pub source: String,
    /// Width of the image, px.
    pub width: u32,
    /// The window shown, ns (`from < to`).
    pub from: u64,
    /// End of the window, ns.
    pub to: u64,
}

/// What was drawn, for the command's summary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Drawn {
    /// Lanes (ranks or bands).
    pub lanes: u32,
    /// Ranks per lane.
    pub band_size: u32,
    /// Whether spans are rectangles (else density).
    pub rects: bool,
    /// Spans in the window.
    pub spans: usize,
    /// Messages in the window.
    pub messages: usize,
    /// Arrows drawn.
    pub arrows: usize,
}

/// The image's geometry.
struct Frame {
    from: u64,
    span: u64,
    left: f64,
    plot_w: f64,
    lanes_top: u32,
    lane_h: u32,
}

impl Category {
    /// The three, bottom to top in density stacks.
    pub const ALL: [Category; 3] = [Category::Compute, Category::Blocked, Category::Poll];

    /// The category of a span named `name`.
    pub fn of(name: &str) -> Self {
        match name {
            "compute" => Self::Compute,
            "poll" => Self::Poll,
            _ => Self::Blocked,
        }
    }

    /// Its CSS class (and colour, through the style sheet).
    pub fn class(self) -> &'static str {
        match self {
            Self::Compute => "compute",
            Self::Blocked => "blocked",
            Self::Poll => "poll",
        }
    }
}

impl Frame {
    /// The x coordinate of instant `t`, clamped to the window.
    fn x(&self, t: u64) -> f64 {
        let dt = t.clamp(self.from, self.from + self.span) - self.from;
        self.left + dt as f64 * self.plot_w / self.span as f64
    }

    /// Top of lane `i`.
    fn lane_y(&self, i: u32) -> u32 {
        self.lanes_top + i * self.lane_h
    }

    /// Vertical middle of lane `i`.
    fn lane_mid(&self, i: u32) -> f64 {
        f64::from(self.lane_y(i)) + f64::from(self.lane_h) / 2.0
    }
}

/// The timeline `t` as an SVG document, and what it shows.
pub fn render(t: &Timeline, o: &Options) -> (String, Drawn) {
    let (from, to) = (o.from, o.to.max(o.from + 1));
    let in_window = |a: u64, b: u64| {
        let (a, b) = (a.min(b), a.max(b));
        if a == b {
            from <= a && a <= to
        } else {
            a < to && b > from
        }
    };
    let cats: Vec<Category> = t.names.iter().map(|n| Category::of(n)).collect();
    let spans = t.spans.iter().filter(|s| in_window(s.start, s.end));
    let messages: Vec<&Message> = t
        .messages
        .iter()
        .filter(|m| in_window(m.sent, m.arrival))
        .collect();
    let band_size = if t.ranks > MAX_LANES {
        t.ranks.div_ceil(MAX_LANES)
    } else {
        1
    };
    let lanes = t.ranks.div_ceil(band_size);
    let span_count = spans.clone().count();
    let rects = band_size == 1 && span_count <= MAX_RECTS;
    let stride = messages.len().div_ceil(MAX_ARROWS).max(1);
    let arrows = if rects {
        messages.len().div_ceil(stride)
    } else {
        0
    };
    let drawn = Drawn {
        lanes,
        band_size,
        rects,
        spans: span_count,
        messages: messages.len(),
        arrows,
    };

    let mut notes = Vec::new();
    if band_size > 1 {
        notes.push(format!(
            "{} ranks in {lanes} bands of {band_size}: each band shows the share of its ranks' \
             time in each state per pixel column; messages are counted per column, not drawn.",
            t.ranks
        ));
    } else if !rects {
        notes.push(format!(
            "{span_count} spans: each lane shows the share of time in each state per pixel \
             column; messages are counted per column, not drawn."
        ));
    }
    if rects && stride > 1 {
        notes.push(format!(
            "{arrows} of {} messages drawn (one in {stride}, in file order); --from and --to \
             zoom in.",
            messages.len()
        ));
    }
    if t.unfinished > 0 {
        notes.push(format!(
            "{} messages still in flight at the end of the trace are not drawn.",
            t.unfinished
        ));
    }
    if t.ranks == 0 {
        notes.push("The trace has no spans or messages.".into());
    }

    let label = |lane: u32| {
        let first = lane * band_size;
        let last = (first + band_size - 1).min(t.ranks - 1);
        if first == last {
            format!("rank {first}")
        } else {
            format!("ranks {first}-{last}")
        }
    };
    let label_chars = (0..lanes)
        .last()
        .map_or(6, |l| label(l).len().max(label(0).len()));
    let left = (12.0 + CHAR_W * label_chars as f64).max(60.0).round();
    let width = f64::from(o.width);
    let note_lines: Vec<String> = notes
        .iter()
        .flat_map(|n| wrap(n, ((width - 16.0) / CHAR_W) as usize))
        .collect();
    let lanes_top = 48 + 14 * note_lines.len() as u32;
    let lane_h = (640 / lanes.max(1)).clamp(12, 28);
    let f = Frame {
        from,
        span: to - from,
        left,
        plot_w: (width - left - RIGHT).max(10.0),
        lanes_top,
        lane_h,
    };
    let strip = !rects && !messages.is_empty();
    let lanes_bottom = f.lane_y(lanes) + if strip { STRIP_H } else { 0 };
    let axis_y = lanes_bottom + 4;
    let height = axis_y + 30;

    let mut s = String::with_capacity(64 * 1024);
    let title = format!(
        "{}: {} ranks, {} spans, {} messages, {} to {}",
        o.source,
        t.ranks,
        t.spans.len(),
        t.messages.len(),
        time(from),
        time(to)
    );
    // Writing to a String cannot fail: results of write! below are ignored.
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" \
         viewBox=\"0 0 {} {height}\">\n<title>{}</title>\n",
        o.width,
        o.width,
        escape(
            &std::iter::once(title.clone() + ".")
                .chain(notes.iter().cloned())
                .collect::<Vec<_>>()
                .join(" ")
        )
    );
    let _ = write!(
        s,
        "<style>text{{font-family:sans-serif;font-size:{FONT}px;fill:#222}}\
         .compute{{fill:#2e9d4f}}.blocked{{fill:#e0553b}}.poll{{fill:#9e9e9e}}\
         .stripe{{fill:#f2f2f2}}line.grid{{stroke:#dddddd}}line.axis{{stroke:#444444}}\
         line.msg{{stroke:#1d4f91;stroke-opacity:0.75}}path.sends{{fill:#1d4f91}}\
         .label{{text-anchor:end}}.tick{{text-anchor:middle}}.note{{fill:#666666}}</style>\n\
         <defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" \
         markerWidth=\"6\" markerHeight=\"6\" orient=\"auto\">\
         <path d=\"M0 0L10 5L0 10Z\" fill=\"#1d4f91\"/></marker></defs>\n\
         <rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
    );
    let _ = writeln!(s, "<text x=\"8\" y=\"16\">{}</text>", escape(&title));
    legend(&mut s, t, &cats, 8.0, 34);
    for (i, n) in note_lines.iter().enumerate() {
        let _ = writeln!(
            s,
            "<text class=\"note\" x=\"8\" y=\"{}\">{}</text>",
            52 + 14 * i,
            escape(n)
        );
    }

    // Lanes: stripes, labels, grid.
    s.push_str("<g class=\"lanes\">\n");
    for lane in 0..lanes {
        let y = f.lane_y(lane);
        if lane % 2 == 0 {
            let _ = writeln!(
                s,
                "<rect class=\"stripe\" x=\"{left}\" y=\"{y}\" width=\"{:.2}\" height=\"{lane_h}\"/>",
                f.plot_w
            );
        }
        let _ = writeln!(
            s,
            "<text class=\"label\" x=\"{}\" y=\"{:.1}\">{}</text>",
            left - 6.0,
            f.lane_mid(lane) + f64::from(FONT) / 2.0 - 1.0,
            label(lane)
        );
    }
    s.push_str("</g>\n");
    let ticks = axis::ticks(from, to, (f.plot_w / 90.0).max(1.0) as u64);
    s.push_str("<g class=\"grid\">\n");
    for tick in &ticks {
        let x = f.x(tick.at);
        let _ = writeln!(
            s,
            "<line class=\"grid\" x1=\"{x:.2}\" y1=\"{lanes_top}\" x2=\"{x:.2}\" y2=\"{axis_y}\"/>"
        );
    }
    s.push_str("</g>\n");

    if rects {
        s.push_str("<g class=\"spans\">\n");
        for sp in spans {
            let cat = cats[sp.name as usize];
            let (x0, x1) = (f.x(sp.start), f.x(sp.end));
            let _ = writeln!(
                s,
                "<rect class=\"{}\" x=\"{x0:.2}\" y=\"{}\" width=\"{:.2}\" height=\"{}\">\
                 <title>rank {}: {} at {} for {}</title></rect>",
                cat.class(),
                f.lane_y(sp.rank) + 2,
                (x1 - x0).max(0.5),
                lane_h - 4,
                sp.rank,
                escape(&t.names[sp.name as usize]),
                time(sp.start),
                time(sp.end - sp.start)
            );
        }
        s.push_str("</g>\n");
    } else {
        density_lanes(&mut s, t, &cats, spans, &f, lanes, band_size);
    }

    if rects {
        s.push_str("<g class=\"messages\">\n");
        for m in messages.iter().step_by(stride) {
            arrow(&mut s, m, &f);
        }
        s.push_str("</g>\n");
    } else if strip {
        sends_strip(&mut s, &messages, &f, f.lane_y(lanes));
    }

    // Axis.
    let _ = writeln!(
        s,
        "<g class=\"axis\">\n<line class=\"axis\" x1=\"{left}\" y1=\"{axis_y}\" x2=\"{:.2}\" \
         y2=\"{axis_y}\"/>",
        left + f.plot_w
    );
    for tick in &ticks {
        let x = f.x(tick.at);
        let _ = writeln!(
            s,
            "<line class=\"axis\" x1=\"{x:.2}\" y1=\"{axis_y}\" x2=\"{x:.2}\" y2=\"{}\"/>\
             <text class=\"tick\" x=\"{x:.2}\" y=\"{}\">{}</text>",
            axis_y + 5,
            axis_y + 17,
            tick.label
        );
    }
    s.push_str("</g>\n</svg>\n");
    (s, drawn)
}

/// The legend: a swatch per category (naming the blocking calls seen) and the message arrow.
fn legend(s: &mut String, t: &Timeline, cats: &[Category], mut x: f64, y: u32) {
    let blocked: BTreeSet<&str> = t
        .names
        .iter()
        .zip(cats)
        .filter(|(_, c)| **c == Category::Blocked)
        .map(|(n, _)| n.as_str())
        .collect();
    let mut waits: Vec<&str> = blocked.iter().copied().take(5).collect();
    if blocked.len() > 5 {
        waits.push("...");
    }
    let blocked_label = if waits.is_empty() {
        "blocked".to_owned()
    } else {
        format!("blocked ({})", waits.join(", "))
    };
    s.push_str("<g class=\"legend\">\n");
    for (cat, text) in [
        (Category::Compute, "compute"),
        (Category::Blocked, blocked_label.as_str()),
        (Category::Poll, "poll"),
    ] {
        let _ = writeln!(
            s,
            "<rect class=\"{}\" x=\"{x}\" y=\"{}\" width=\"10\" height=\"10\"/>\
             <text x=\"{}\" y=\"{y}\">{}</text>",
            cat.class(),
            y - 9,
            x + 14.0,
            escape(text)
        );
        x += 14.0 + CHAR_W * text.len() as f64 + 16.0;
        x = x.round();
    }
    let _ = writeln!(
        s,
        "<line class=\"msg\" x1=\"{x}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" marker-end=\"url(#arrow)\"/>\
         <text x=\"{}\" y=\"{y}\">message</text>\n</g>",
        y - 4,
        x + 20.0,
        y - 4,
        x + 26.0
    );
}

/// One message as an arrow from (sender lane, send time) to (receiver lane, arrival time),
/// clipped to the window.
fn arrow(s: &mut String, m: &Message, f: &Frame) {
    let (y0, y1) = (f.lane_mid(m.from), f.lane_mid(m.to));
    let (t0, t1) = (m.sent as f64, m.arrival as f64);
    let (lo, hi) = (f.from as f64, (f.from + f.span) as f64);
    // The height at time `t` of the line through the two ends.
    let y_at = |t: f64| {
        if t1 == t0 {
            y0
        } else {
            y0 + (y1 - y0) * (t - t0) / (t1 - t0)
        }
    };
    let (a, b) = (t0.clamp(lo, hi), t1.clamp(lo, hi));
    let bytes = m.bytes.map(|b| format!(", {b} B")).unwrap_or_default();
    // No head where the arrival is outside the window: the arrow does not end there.
    let head = if b == t1 {
        " marker-end=\"url(#arrow)\""
    } else {
        ""
    };
    let _ = writeln!(
        s,
        "<line class=\"msg\" x1=\"{:.2}\" y1=\"{:.1}\" x2=\"{:.2}\" y2=\"{:.1}\"{head}>\
         <title>rank {} to rank {}{bytes}: sent at {}, arrived at {}</title></line>",
        f.x(m.sent),
        y_at(a),
        f.x(m.arrival),
        y_at(b),
        m.from,
        m.to,
        time(m.sent),
        time(m.arrival)
    );
}

/// Lanes as stacked bars of the share of each category per pixel column.
fn density_lanes<'a>(
    s: &mut String,
    t: &Timeline,
    cats: &[Category],
    spans: impl Iterator<Item = &'a super::parse::Span>,
    f: &Frame,
    lanes: u32,
    band_size: u32,
) {
    let b = Buckets::new(f.from, f.from + f.span, f.plot_w as usize);
    let mut busy = Busy::new(lanes as usize, Category::ALL.len(), &b);
    for sp in spans {
        let cat = Category::ALL
            .iter()
            .position(|&c| c == cats[sp.name as usize])
            .unwrap_or(0);
        busy.add(&b, (sp.rank / band_size) as usize, cat, sp.start, sp.end);
    }
    let xs = columns(&b, f);
    let inner = f64::from(f.lane_h - 2) * 10.0;
    for lane in 0..lanes {
        let ranks = band_size.min(t.ranks - lane * band_size);
        let bottom = f.lane_y(lane) + f.lane_h - 1;
        let _ = writeln!(s, "<g class=\"band\">");
        let mut lo = vec![0u32; b.len()];
        let mut acc = vec![0f64; b.len()];
        for (c, cat) in Category::ALL.iter().enumerate() {
            let share = busy.fractions(&b, lane as usize, c, ranks);
            let hi: Vec<u32> = acc
                .iter_mut()
                .zip(&share)
                .map(|(a, x)| {
                    *a = (*a + x).min(1.0);
                    (*a * inner).round() as u32
                })
                .collect();
            let d = bars_path(&xs, &lo, &hi, bottom);
            if !d.is_empty() {
                let _ = writeln!(s, "<path class=\"{}\" d=\"{d}\"/>", cat.class());
            }
            lo = hi;
        }
        s.push_str("</g>\n");
    }
}

/// The strip of messages sent per pixel column (for bands of several ranks).
fn sends_strip(s: &mut String, messages: &[&Message], f: &Frame, top: u32) {
    let b = Buckets::new(f.from, f.from + f.span, f.plot_w as usize);
    let mut counts = vec![0u64; b.len()];
    for m in messages {
        if (f.from..f.from + f.span).contains(&m.sent) {
            counts[b.of(m.sent)] += 1;
        }
    }
    let max = counts.iter().copied().max().unwrap_or(0).max(1);
    let inner = f64::from(STRIP_H - 8) * 10.0;
    let hi: Vec<u32> = counts
        .iter()
        .map(|&c| (c as f64 / max as f64 * inner).round() as u32)
        .collect();
    let _ = writeln!(
        s,
        "<g class=\"sends\"><title>messages sent per pixel column (most: {max})</title>\n\
         <text class=\"label\" x=\"{}\" y=\"{}\">sends</text>\n<path class=\"sends\" d=\"{}\"/>\n</g>",
        f.left - 6.0,
        top + STRIP_H / 2 + 4,
        bars_path(&columns(&b, f), &vec![0; b.len()], &hi, top + STRIP_H - 2)
    );
}

/// The x coordinates of the bucket edges.
fn columns(b: &Buckets, f: &Frame) -> Vec<f64> {
    (0..=b.len()).map(|i| f.x(b.bound(i))).collect()
}

/// `text` cut at spaces into lines of at most `max` characters (longer words stay whole).
fn wrap(text: &str, max: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if line.len() + 1 + word.len() <= max => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_owned()),
        }
    }
    lines
}

/// `text` with XML's special characters escaped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            // XML 1.0 allows no other control characters, even escaped.
            c if c.is_control() && !matches!(c, '\t' | '\n' | '\r') => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}
