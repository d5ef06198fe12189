//! A [`Timeline`] as an SVG document: a header (title, legend, notes), one lane per rank or
//! band of ranks, message arrows or counts, and the time axis.
//!
//! Two ways to draw the lanes, chosen by size ([`Plan`]) so that the file stays one a browser
//! opens:
//! - up to 64 ranks and 20,000 spans in the window: one lane per rank, one rectangle per span
//!   and one arrow per message, with tooltips ([`super::detail`]); at most 2,000 arrows, every
//!   k-th in file order beyond that;
//! - otherwise: at most 64 bands of consecutive ranks (one rank each if there are few ranks
//!   but many spans), each showing per pixel column the share of its ranks' time in each
//!   category, and messages as a strip of sends per column ([`super::density`]; at that
//!   density arrows would only hide the lanes).
//!
//! The output depends only on the timeline and the options: elements are written in file
//! order, coordinates with fixed decimals, and notes say what was left out.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::parse::Timeline;
use super::plan::{Drawn, Plan, Window};
use super::{axis, density, detail};
use crate::model::time;

/// Font size, px.
const FONT: u32 = 11;
/// The width of one character of the font, roughly, px: for laying out labels.
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

/// The image's geometry: where times and lanes go.
pub struct Frame {
    /// The window's start, ns.
    pub from: u64,
    /// The window's length, ns (at least 1).
    pub span: u64,
    /// Left edge of the plot, px.
    pub left: f64,
    /// Width of the plot, px.
    pub plot_w: f64,
    /// Top of the first lane, px.
    pub lanes_top: u32,
    /// Height of a lane, px.
    pub lane_h: u32,
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
    pub fn x(&self, t: u64) -> f64 {
        let dt = t.clamp(self.from, self.from + self.span) - self.from;
        self.left + dt as f64 * self.plot_w / self.span as f64
    }

    /// Top of lane `i`.
    pub fn lane_y(&self, i: u32) -> u32 {
        self.lanes_top + i * self.lane_h
    }

    /// Vertical middle of lane `i`.
    pub fn lane_mid(&self, i: u32) -> f64 {
        f64::from(self.lane_y(i)) + f64::from(self.lane_h) / 2.0
    }
}

/// The timeline `t` as an SVG document, and what it shows.
pub fn render(t: &Timeline, o: &Options) -> (String, Drawn) {
    let plan = Plan::new(t, o.from, o.to);
    let Window { from, to } = plan.window;
    let cats: Vec<Category> = t.names.iter().map(|n| Category::of(n)).collect();

    // Geometry: label column, header (title, legend, wrapped notes), lanes, strip, axis.
    let label_chars = match plan.lanes {
        0 => 6,
        n => plan.label(t, n - 1).len().max(plan.label(t, 0).len()),
    };
    let left = (12.0 + CHAR_W * label_chars as f64).max(60.0).round();
    let width = f64::from(o.width);
    let note_lines: Vec<String> = plan
        .notes
        .iter()
        .flat_map(|n| wrap(n, ((width - 16.0) / CHAR_W) as usize))
        .collect();
    let f = Frame {
        from,
        span: to - from,
        left,
        plot_w: (width - left - RIGHT).max(10.0),
        lanes_top: 48 + 14 * note_lines.len() as u32,
        lane_h: (640 / plan.lanes.max(1)).clamp(12, 28),
    };
    let strip = !plan.rects && plan.messages > 0;
    let axis_y = f.lane_y(plan.lanes) + if strip { STRIP_H } else { 0 } + 4;
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
    let long_title = std::iter::once(format!("{title}."))
        .chain(plan.notes.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    // Writing to a String cannot fail: the results of write! are ignored here and below.
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{height}\" \
         viewBox=\"0 0 {w} {height}\">\n<title>{}</title>\n\
         <style>text{{font-family:sans-serif;font-size:{FONT}px;fill:#222}}\
         .compute{{fill:#2e9d4f}}.blocked{{fill:#e0553b}}.poll{{fill:#9e9e9e}}\
         .stripe{{fill:#f2f2f2}}line.grid{{stroke:#dddddd}}line.axis{{stroke:#444444}}\
         line.msg{{stroke:#1d4f91;stroke-opacity:0.75}}path.sends{{fill:#1d4f91}}\
         .label{{text-anchor:end}}.tick{{text-anchor:middle}}.note{{fill:#666666}}</style>\n\
         <defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" \
         markerWidth=\"6\" markerHeight=\"6\" orient=\"auto\">\
         <path d=\"M0 0L10 5L0 10Z\" fill=\"#1d4f91\"/></marker></defs>\n\
         <rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n\
         <text x=\"8\" y=\"16\">{}</text>\n",
        escape(&long_title),
        escape(&title),
        w = o.width,
    );
    legend(&mut s, t, &cats, 8.0, 34);
    for (i, n) in note_lines.iter().enumerate() {
        let _ = writeln!(
            s,
            "<text class=\"note\" x=\"8\" y=\"{}\">{}</text>",
            52 + 14 * i,
            escape(n)
        );
    }

    // Lanes: stripes and labels; the grid under what is drawn on them.
    s.push_str("<g class=\"lanes\">\n");
    for lane in 0..plan.lanes {
        if lane % 2 == 0 {
            let _ = writeln!(
                s,
                "<rect class=\"stripe\" x=\"{left}\" y=\"{}\" width=\"{:.2}\" height=\"{}\"/>",
                f.lane_y(lane),
                f.plot_w,
                f.lane_h
            );
        }
        let _ = writeln!(
            s,
            "<text class=\"label\" x=\"{}\" y=\"{:.1}\">{}</text>",
            left - 6.0,
            f.lane_mid(lane) + f64::from(FONT) / 2.0 - 1.0,
            plan.label(t, lane)
        );
    }
    s.push_str("</g>\n<g class=\"grid\">\n");
    let ticks = axis::ticks(from, to, (f.plot_w / 90.0).max(1.0) as u64);
    for tick in &ticks {
        let x = f.x(tick.at);
        let _ = writeln!(
            s,
            "<line class=\"grid\" x1=\"{x:.2}\" y1=\"{}\" x2=\"{x:.2}\" y2=\"{axis_y}\"/>",
            f.lanes_top
        );
    }
    s.push_str("</g>\n");

    if plan.rects {
        detail::spans(&mut s, t, &cats, plan.window, &f);
        detail::arrows(&mut s, t, plan.window, plan.stride, &f);
    } else {
        let lanes = (0..plan.lanes).map(|l| {
            let ranks = plan.band_size.min(t.ranks - l * plan.band_size);
            (plan.label(t, l), ranks)
        });
        density::lanes(&mut s, t, &cats, plan.window, &f, plan.band_size, lanes);
        if strip {
            density::sends(&mut s, t, plan.window, &f, f.lane_y(plan.lanes), STRIP_H);
        }
    }

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
    (s, plan.drawn())
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
    let mut calls: Vec<&str> = blocked.iter().copied().take(5).collect();
    if blocked.len() > 5 {
        calls.push("...");
    }
    let blocked_label = if calls.is_empty() {
        "blocked".to_owned()
    } else {
        format!("blocked ({})", calls.join(", "))
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
        x = (x + 14.0 + CHAR_W * text.chars().count() as f64 + 16.0).round();
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
pub fn escape(text: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_wrapped() {
        assert_eq!(
            escape("a<b & \"c\"\u{1}"),
            "a&lt;b &amp; &quot;c&quot;\u{fffd}"
        );
        assert_eq!(wrap("one two three four", 9), ["one two", "three", "four"]);
        assert_eq!(wrap("unbreakable", 4), ["unbreakable"]);
    }
}
