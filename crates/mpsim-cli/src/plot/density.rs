//! Density drawing for traces too big to draw span by span: per band of ranks and per pixel
//! column, the fraction of the band's time spent in each category, as stacked bars; and a strip
//! of the number of messages sent per column.
//!
//! A span adds its overlap with each column it covers: the partial columns at its two ends
//! directly, the whole columns between through a difference array, so a span costs O(1)
//! whatever its length and a run of any number of ranks costs O(spans + bands x columns).
//! Column edges are exact integer nanoseconds (`from + span * i / n`).

use std::fmt::Write as _;

use super::parse::Timeline;
use super::plan::Window;
use super::render::{Category, Frame};

/// The window cut into `n` columns of (nearly) equal length.
#[derive(Clone, Copy, Debug)]
pub struct Buckets {
    from: u64,
    span: u64,
    n: usize,
}

/// Where a band's rank-time went: for each category and column, busy nanoseconds summed over
/// the band's ranks.
pub struct Busy {
    /// Categories per band.
    cats: usize,
    /// Time in columns a span only partly covers, ns, by `(band, cat, column)`.
    partial: Vec<u128>,
    /// Difference array of the number of spans covering whole columns, by `(band, cat,
    /// column)` with `n + 1` columns per row.
    whole: Vec<i64>,
}

impl Buckets {
    /// `[from, to]` cut into at most `columns` buckets, each at least 1 ns long (`to > from`).
    pub fn new(from: u64, to: u64, columns: usize) -> Self {
        let span = to.saturating_sub(from).max(1);
        let n = columns.clamp(1, usize::try_from(span).unwrap_or(usize::MAX));
        Self { from, span, n }
    }

    /// Number of buckets.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Start of bucket `i` (`i == len()` gives the window's end).
    pub fn bound(&self, i: usize) -> u64 {
        // span * i / n <= span, a u64.
        self.from + (u128::from(self.span) * i as u128 / self.n as u128) as u64
    }

    /// The bucket holding `t` (`from <= t <= to`); `len()` for the window's end.
    pub fn of(&self, t: u64) -> usize {
        let guess = u128::from(t - self.from) * self.n as u128 / u128::from(self.span);
        let mut i = usize::try_from(guess).unwrap_or(self.n).min(self.n);
        while i < self.n && self.bound(i + 1) <= t {
            i += 1;
        }
        while i > 0 && self.bound(i) > t {
            i -= 1;
        }
        i
    }
}

impl Busy {
    /// Nothing busy yet, for `bands` bands of `cats` categories.
    pub fn new(bands: usize, cats: usize, b: &Buckets) -> Self {
        Self {
            cats,
            partial: vec![0; bands * cats * b.n],
            whole: vec![0; bands * cats * (b.n + 1)],
        }
    }

    /// Adds a span `[start, end)` of category `cat` on a rank of `band`; the span is clipped to
    /// the window.
    pub fn add(&mut self, b: &Buckets, band: usize, cat: usize, start: u64, end: u64) {
        let (s, e) = (start.max(b.from), end.min(b.from + b.span));
        if e <= s {
            return;
        }
        let row = band * self.cats + cat;
        let (b0, b1) = (b.of(s), b.of(e));
        if b0 == b1 {
            self.partial[row * b.n + b0] += u128::from(e - s);
            return;
        }
        self.partial[row * b.n + b0] += u128::from(b.bound(b0 + 1) - s);
        if b1 < b.n {
            self.partial[row * b.n + b1] += u128::from(e - b.bound(b1));
        }
        self.whole[row * (b.n + 1) + b0 + 1] += 1;
        self.whole[row * (b.n + 1) + b1] -= 1;
    }

    /// Busy fraction of `band` in `cat` per bucket, for a band of `ranks` ranks (not clamped:
    /// overlapping spans on one rank can add up past 1).
    pub fn fractions(&self, b: &Buckets, band: usize, cat: usize, ranks: u32) -> Vec<f64> {
        let row = band * self.cats + cat;
        let mut covering = 0i64;
        (0..b.n)
            .map(|i| {
                covering += self.whole[row * (b.n + 1) + i];
                let width = b.bound(i + 1) - b.bound(i);
                let busy = self.partial[row * b.n + i]
                    + u128::from(covering.unsigned_abs()) * u128::from(width);
                busy as f64 / (f64::from(ranks.max(1)) * width as f64)
            })
            .collect()
    }
}

/// The lanes as stacked bars (compute, blocked, poll from the bottom) of the share of each
/// category per pixel column; `lanes` gives each lane's label and number of ranks, lane `i`
/// holding ranks `i * band_size ..`.
pub fn lanes(
    s: &mut String,
    t: &Timeline,
    cats: &[Category],
    w: Window,
    f: &Frame,
    band_size: u32,
    lanes: impl ExactSizeIterator<Item = (String, u32)>,
) {
    let b = Buckets::new(w.from, w.to, f.plot_w as usize);
    let mut busy = Busy::new(lanes.len(), Category::ALL.len(), &b);
    for sp in t.spans.iter().filter(|sp| w.shows(sp.start, sp.end)) {
        let cat = cats[sp.name as usize];
        let c = Category::ALL.iter().position(|&k| k == cat).unwrap_or(0);
        busy.add(&b, (sp.rank / band_size) as usize, c, sp.start, sp.end);
    }
    let xs = columns(&b, f);
    let inner = f64::from(f.lane_h - 2) * 10.0;
    for (lane, (label, ranks)) in lanes.enumerate() {
        let bottom = f.lane_y(lane as u32) + f.lane_h - 1;
        // Writing to a String cannot fail.
        let _ = writeln!(s, "<g class=\"band\"><title>{label}</title>");
        let mut lo = vec![0u32; b.len()];
        let mut top = vec![0f64; b.len()];
        for (c, cat) in Category::ALL.iter().enumerate() {
            let share = busy.fractions(&b, lane, c, ranks);
            let hi: Vec<u32> = top
                .iter_mut()
                .zip(&share)
                .map(|(top, x)| {
                    *top = (*top + x).min(1.0);
                    (*top * inner).round() as u32
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

/// A strip `height` px high from `top`: messages sent in the window per pixel column, as bars
/// scaled to the busiest column.
pub fn sends(s: &mut String, t: &Timeline, w: Window, f: &Frame, top: u32, height: u32) {
    let b = Buckets::new(w.from, w.to, f.plot_w as usize);
    let mut counts = vec![0u64; b.len()];
    for m in &t.messages {
        if (w.from..w.to).contains(&m.sent) {
            counts[b.of(m.sent)] += 1;
        }
    }
    let most = counts.iter().copied().max().unwrap_or(0).max(1);
    let inner = f64::from(height - 8) * 10.0;
    let hi: Vec<u32> = counts
        .iter()
        .map(|&c| (c as f64 / most as f64 * inner).round() as u32)
        .collect();
    let _ = writeln!(
        s,
        "<g class=\"sends\"><title>messages sent per pixel column (most: {most})</title>\n\
         <text class=\"label\" x=\"{}\" y=\"{}\">sends</text>\n<path class=\"sends\" d=\"{}\"/>\n</g>",
        f.left - 6.0,
        top + height / 2 + 4,
        bars_path(&columns(&b, f), &vec![0; b.len()], &hi, top + height - 2)
    );
}

/// The x coordinates of the bucket edges.
fn columns(b: &Buckets, f: &Frame) -> Vec<f64> {
    (0..=b.len()).map(|i| f.x(b.bound(i))).collect()
}

/// An SVG path of bars, one per bucket: bucket `i` spans `xs[i]..xs[i + 1]` and rises from
/// `bottom - lo[i] / 10` to `bottom - hi[i] / 10` (heights in tenths of a pixel, so that equal
/// neighbours merge into one rectangle and the output stays small and deterministic).
pub fn bars_path(xs: &[f64], lo: &[u32], hi: &[u32], bottom: u32) -> String {
    let mut d = String::new();
    let y = |h: u32| f64::from(bottom) - f64::from(h) / 10.0;
    let mut i = 0;
    while i < lo.len() {
        let mut j = i + 1;
        while j < lo.len() && lo[j] == lo[i] && hi[j] == hi[i] {
            j += 1;
        }
        if hi[i] > lo[i] {
            // Writing to a String cannot fail.
            let _ = write!(
                d,
                "M{:.2} {:.1}H{:.2}V{:.1}H{:.2}Z",
                xs[i],
                y(hi[i]),
                xs[j],
                y(lo[i]),
                xs[i]
            );
        }
        i = j;
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_the_window_exactly() {
        for (from, to, cols) in [(0, 10, 3), (5, 1_005, 7), (0, 4, 100), (3, 3, 10)] {
            let b = Buckets::new(from, to, cols);
            assert_eq!(b.bound(0), from);
            assert_eq!(b.bound(b.len()), from + (to - from).max(1));
            for t in from..=to {
                let i = b.of(t);
                if i < b.len() {
                    assert!(b.bound(i) <= t && t < b.bound(i + 1), "{t} in {i}");
                } else {
                    assert_eq!(t, to);
                }
            }
        }
        assert_eq!(
            Buckets::new(0, 4, 100).len(),
            4,
            "no bucket shorter than 1 ns"
        );
    }

    #[test]
    fn busy_fractions_add_partial_and_whole_columns() {
        // 10 columns of 10 ns; a band of 2 ranks.
        let b = Buckets::new(0, 100, 10);
        let mut busy = Busy::new(1, 2, &b);
        busy.add(&b, 0, 0, 5, 35); // half of 0, all of 1 and 2, half of 3
        busy.add(&b, 0, 0, 10, 20); // all of 1
        busy.add(&b, 0, 1, 90, 500); // clipped to column 9
        let f = busy.fractions(&b, 0, 0, 2);
        assert_eq!(&f[..5], [0.25, 1.0, 0.5, 0.25, 0.0]);
        assert_eq!(busy.fractions(&b, 0, 1, 2)[9], 0.5);
    }

    #[test]
    fn bars_merge_equal_neighbours() {
        let xs = [0.0, 1.0, 2.0, 3.0, 4.0];
        let d = bars_path(&xs, &[0, 0, 0, 5], &[10, 10, 0, 20], 50);
        assert_eq!(d, "M0.00 49.0H2.00V50.0H0.00ZM3.00 48.0H4.00V49.5H3.00Z");
    }
}
