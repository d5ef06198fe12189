//! The time axis: round tick instants (1, 2 or 5 times a power of ten nanoseconds) and exact
//! labels in one unit (ns, us, ms or s) chosen from the span shown.
//!
//! Integer arithmetic throughout, so labels are exact and the same on every machine.

/// Time units, largest first: name and nanoseconds per unit.
const UNITS: [(&str, u64); 4] = [
    ("s", 1_000_000_000),
    ("ms", 1_000_000),
    ("us", 1_000),
    ("ns", 1),
];

/// A tick on the time axis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tick {
    /// Its instant, ns.
    pub at: u64,
    /// Its label, e.g. `1.5 us`.
    pub label: String,
}

/// Ticks for the window `[from, to]`: the step is the smallest 1, 2 or 5 times 10^k ns that
/// cuts the window into at most `max_intervals` steps; ticks are the multiples of the step in
/// the window. Labels are in the largest unit not longer than the window, with as many decimals
/// as the step needs (all labels alike: `0.0 us`, `0.5 us`, ...).
pub fn ticks(from: u64, to: u64, max_intervals: u64) -> Vec<Tick> {
    let span = u128::from(to.saturating_sub(from).max(1));
    let max_intervals = u128::from(max_intervals.max(1));
    // step = m * 10^k; 10^20 ns exceeds any u64 span, so the search ends.
    let (step, k) = (0..=20u32)
        .flat_map(|k| [1, 2, 5].map(|m| (m * 10u128.pow(k), k)))
        .find(|&(step, _)| step * max_intervals >= span)
        .unwrap_or((10u128.pow(20), 20));
    let (unit_name, unit) = UNITS
        .iter()
        .copied()
        .find(|&(_, ns)| u128::from(ns) <= span)
        .unwrap_or(("ns", 1));
    let unit_digits = unit.ilog10();
    let decimals = unit_digits.saturating_sub(k);
    let label = |at: u64| {
        let whole = at / unit;
        if decimals == 0 {
            format!("{whole} {unit_name}")
        } else {
            let frac = (at % unit) / 10u64.pow(unit_digits - decimals);
            format!("{whole}.{frac:0w$} {unit_name}", w = decimals as usize)
        }
    };
    let first = u128::from(from).div_ceil(step) * step;
    std::iter::successors(Some(first), |&t| Some(t + step))
        .take_while(|&t| t <= u128::from(to))
        // `t <= to`, a u64.
        .map(|t| t as u64)
        .map(|at| Tick {
            at,
            label: label(at),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(from: u64, to: u64, max: u64) -> Vec<String> {
        ticks(from, to, max).into_iter().map(|t| t.label).collect()
    }

    #[test]
    fn steps_are_round_and_labels_exact() {
        assert_eq!(
            labels(0, 3_500, 8),
            [
                "0.0 us", "0.5 us", "1.0 us", "1.5 us", "2.0 us", "2.5 us", "3.0 us", "3.5 us"
            ]
        );
        assert_eq!(
            labels(0, 12_345, 10),
            ["0 us", "2 us", "4 us", "6 us", "8 us", "10 us", "12 us"]
        );
        assert_eq!(
            labels(0, 999, 5),
            ["0 ns", "200 ns", "400 ns", "600 ns", "800 ns"]
        );
        assert_eq!(
            labels(0, 2_500_000_000, 5),
            ["0.0 s", "0.5 s", "1.0 s", "1.5 s", "2.0 s", "2.5 s"]
        );
        assert_eq!(labels(0, 1_000_000, 4), ["0.0 ms", "0.5 ms", "1.0 ms"]);
        assert_eq!(
            labels(0, 1_000_000, 5),
            ["0.0 ms", "0.2 ms", "0.4 ms", "0.6 ms", "0.8 ms", "1.0 ms"]
        );
        // A window that does not start at 0 starts at the first multiple of the step.
        let t = ticks(1_234_567, 1_234_987, 4);
        assert_eq!(
            t.iter().map(|t| t.at).collect::<Vec<_>>(),
            [1_234_600, 1_234_800]
        );
        assert_eq!(t[0].label, "1234600 ns");
        assert_eq!(labels(1_100, 9_100, 4), ["2 us", "4 us", "6 us", "8 us"]);
    }

    #[test]
    fn degenerate_windows_do_not_break() {
        assert_eq!(labels(0, 0, 10), ["0 ns"]);
        assert_eq!(labels(7, 7, 0), ["7 ns"]);
        let t = ticks(0, u64::MAX, 10);
        assert!(t.len() <= 11 && t.len() >= 2, "{t:?}");
        assert_eq!(t[1].label, "2000000000 s");
    }
}
