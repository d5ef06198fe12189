//! Detailed drawing, for traces small enough: a rectangle per span and an arrow per message,
//! each with a tooltip giving its exact times.

use std::fmt::Write as _;

use super::parse::{Message, Timeline};
use super::plan::Window;
use super::render::{Category, Frame, escape};
use crate::model::time;

/// The spans in `w`, one rectangle each in its rank's lane, coloured by category.
pub fn spans(s: &mut String, t: &Timeline, cats: &[Category], w: Window, f: &Frame) {
    s.push_str("<g class=\"spans\">\n");
    for sp in t.spans.iter().filter(|sp| w.shows(sp.start, sp.end)) {
        let (x0, x1) = (f.x(sp.start), f.x(sp.end));
        // Writing to a String cannot fail.
        let _ = writeln!(
            s,
            "<rect class=\"{}\" x=\"{x0:.2}\" y=\"{}\" width=\"{:.2}\" height=\"{}\">\
             <title>rank {}: {} at {} for {}</title></rect>",
            cats[sp.name as usize].class(),
            f.lane_y(sp.rank) + 2,
            // Even the shortest span stays visible.
            (x1 - x0).max(0.5),
            f.lane_h - 4,
            sp.rank,
            escape(&t.names[sp.name as usize]),
            time(sp.start),
            time(sp.end - sp.start)
        );
    }
    s.push_str("</g>\n");
}

/// One in `stride` of the messages in `w` (in file order), as arrows.
pub fn arrows(s: &mut String, t: &Timeline, w: Window, stride: usize, f: &Frame) {
    s.push_str("<g class=\"messages\">\n");
    let shown = t.messages.iter().filter(|m| w.shows(m.sent, m.arrival));
    for m in shown.step_by(stride) {
        arrow(s, m, f);
    }
    s.push_str("</g>\n");
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
