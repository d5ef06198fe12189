//! What to draw, decided from the trace's size before drawing anything: the window, lanes of
//! one rank or bands of several, spans as rectangles or density, how many arrows, and the notes
//! that tell the reader what was left out.
//!
//! The limits keep the SVG one a browser opens (a few MB at most) whatever the trace: at most
//! [`MAX_LANES`] lanes, [`MAX_RECTS`] rectangles and [`MAX_ARROWS`] arrows.

use super::parse::Timeline;

/// Ranks drawn one lane each; beyond this many, ranks are grouped into at most this many bands.
pub const MAX_LANES: u32 = 64;
/// Spans in the window drawn as rectangles at most; beyond this, lanes show density.
pub const MAX_RECTS: usize = 20_000;
/// Message arrows drawn at most; beyond this, every k-th message is drawn.
pub const MAX_ARROWS: usize = 2_000;

/// What was drawn, for the command's summary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Drawn {
    /// Lanes (ranks or bands).
    pub lanes: u32,
    /// Ranks per lane.
    pub band_size: u32,
    /// Whether spans are rectangles and messages arrows (else density and counts).
    pub rects: bool,
    /// Spans in the window.
    pub spans: usize,
    /// Messages in the window.
    pub messages: usize,
    /// Arrows drawn.
    pub arrows: usize,
}

/// The time window shown, ns; what touches it is drawn, clipped.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    /// Start.
    pub from: u64,
    /// End, after `from`.
    pub to: u64,
}

/// How the timeline will be drawn, decided from its size before drawing anything.
pub struct Plan {
    /// The window shown.
    pub window: Window,
    /// Ranks per lane: 1, or enough that there are at most [`MAX_LANES`] lanes.
    pub band_size: u32,
    /// Lanes drawn.
    pub lanes: u32,
    /// Spans as rectangles and messages as arrows, or both as densities.
    pub rects: bool,
    /// Spans in the window.
    pub spans: usize,
    /// Messages in the window.
    pub messages: usize,
    /// One message in `stride` is an arrow.
    pub stride: usize,
    /// What the reader should know about what is (not) drawn, as sentences.
    pub notes: Vec<String>,
}

impl Window {
    /// Whether something from `a` to `b` (either order) shows: it overlaps the window, or is
    /// an instant inside it.
    pub fn shows(&self, a: u64, b: u64) -> bool {
        let (a, b) = (a.min(b), a.max(b));
        if a == b {
            self.from <= a && a <= self.to
        } else {
            a < self.to && b > self.from
        }
    }
}

impl Plan {
    /// The plan for drawing the window `from..to` (at least 1 ns) of `t`.
    pub fn new(t: &Timeline, from: u64, to: u64) -> Self {
        let window = Window {
            from,
            to: to.max(from.saturating_add(1)),
        };
        let spans = t
            .spans
            .iter()
            .filter(|s| window.shows(s.start, s.end))
            .count();
        let messages = t
            .messages
            .iter()
            .filter(|m| window.shows(m.sent, m.arrival))
            .count();
        let band_size = t.ranks.div_ceil(MAX_LANES).max(1);
        let lanes = t.ranks.div_ceil(band_size);
        let rects = band_size == 1 && spans <= MAX_RECTS;
        let stride = messages.div_ceil(MAX_ARROWS).max(1);
        let mut plan = Self {
            window,
            band_size,
            lanes,
            rects,
            spans,
            messages,
            stride,
            notes: Vec::new(),
        };
        let arrows = plan.arrows();
        let notes = &mut plan.notes;
        if band_size > 1 {
            notes.push(format!(
                "{} ranks in {lanes} bands of {band_size}: each band shows the share of its \
                 ranks' time in each state per pixel column; messages are counted per column, \
                 not drawn.",
                t.ranks
            ));
        } else if !rects {
            notes.push(format!(
                "{spans} spans: each lane shows the share of time in each state per pixel \
                 column; messages are counted per column, not drawn."
            ));
        }
        if rects && stride > 1 {
            notes.push(format!(
                "{} of {messages} messages drawn (one in {stride}, in file order); --from and \
                 --to zoom in.",
                arrows
            ));
        }
        if t.unfinished > 0 {
            notes.push(format!(
                "{} messages still in flight at the end of the trace are not drawn.",
                t.unfinished
            ));
        }
        if t.unclosed > 0 {
            notes.push(format!(
                "{} spans begun (`B`) and never ended (`E`) by the end of the trace are not \
                 drawn.",
                t.unclosed
            ));
        }
        if t.ranks == 0 {
            notes.push("The trace has no spans or messages.".into());
        }
        plan
    }

    /// Number of arrows drawn.
    pub fn arrows(&self) -> usize {
        if self.rects {
            self.messages.div_ceil(self.stride)
        } else {
            0
        }
    }

    /// The label of lane `lane`: `rank 3` or `ranks 0-15`.
    pub fn label(&self, t: &Timeline, lane: u32) -> String {
        let first = lane * self.band_size;
        let last = (first + self.band_size - 1).min(t.ranks.saturating_sub(1));
        if first == last {
            format!("rank {first}")
        } else {
            format!("ranks {first}-{last}")
        }
    }

    /// What was drawn, for the summary.
    pub fn drawn(&self) -> Drawn {
        Drawn {
            lanes: self.lanes,
            band_size: self.band_size,
            rects: self.rects,
            spans: self.spans,
            messages: self.messages,
            arrows: self.arrows(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::parse::{Message, Span};

    /// `ranks` ranks, `spans` 1 ns spans on rank 0 and `messages` messages from 0 to 1.
    fn timeline(ranks: u32, spans: u64, messages: u64) -> Timeline {
        Timeline {
            ranks,
            names: vec!["recv".into()],
            spans: (0..spans)
                .map(|i| Span {
                    rank: 0,
                    name: 0,
                    start: i,
                    end: i + 1,
                })
                .collect(),
            messages: (0..messages)
                .map(|i| Message {
                    from: 0,
                    to: 1,
                    sent: i,
                    arrival: i + 1,
                    bytes: None,
                })
                .collect(),
            ..Timeline::default()
        }
    }

    #[test]
    fn many_ranks_become_at_most_64_bands() {
        for (ranks, band_size, lanes) in [
            (2, 1, 2),
            (64, 1, 64),
            (65, 2, 33),
            (200, 4, 50),
            (10_000_000, 156_250, 64),
        ] {
            let p = Plan::new(&timeline(ranks, 10, 10), 0, 100);
            assert_eq!((p.band_size, p.lanes), (band_size, lanes), "{ranks} ranks");
            assert_eq!(p.rects, band_size == 1);
            assert_eq!(p.notes.len(), usize::from(band_size > 1));
        }
        assert_eq!(
            Plan::new(&timeline(200, 0, 0), 0, 1).label(&timeline(200, 0, 0), 49),
            "ranks 196-199"
        );
        assert_eq!(
            Plan::new(&timeline(201, 0, 0), 0, 1).label(&timeline(201, 0, 0), 50),
            "rank 200"
        );
    }

    #[test]
    fn big_traces_are_drawn_as_density_and_arrows_sampled() {
        let p = Plan::new(&timeline(2, MAX_RECTS as u64 + 1, 0), 0, 1 << 20);
        assert!(!p.rects, "too many spans for rectangles");
        let p = Plan::new(&timeline(2, MAX_RECTS as u64 + 1, 0), 0, 100);
        assert!(p.rects, "only the spans in the window count");
        assert_eq!(p.spans, 100);
        let p = Plan::new(&timeline(2, 0, 4_001), 0, 1 << 20);
        assert_eq!((p.stride, p.arrows()), (3, 1_334));
        assert!(p.notes[0].starts_with("1334 of 4001 messages drawn (one in 3"));
    }
}
