//! Exact text for quantities: model files and the `mpsim` command line print times and sizes
//! with the same rules (whole units where they divide, exact decimals, no float rounding).

/// A time written as in model files (`"500ms"`, `"1.5s"`, `"0"`) in nanoseconds, or why it is
/// not one.
///
/// ```
/// use mpsim_sim::units::time_ns;
/// assert_eq!(time_ns("1.5us"), Ok(1500));
/// assert_eq!(time_ns("2s"), Ok(2_000_000_000));
/// assert!(time_ns("soon").is_err());
/// ```
pub fn time_ns(text: &str) -> Result<u64, String> {
    use crate::model_value::{Scalar, TIME, quantity};
    quantity(&Scalar::String(text.to_string()), &TIME)
}

/// A size written as in model files (`"64KiB"`, `"1.5MiB"`, `"4096"`, a bare number being
/// bytes) in bytes, or why it is not one.
///
/// ```
/// use mpsim_sim::units::size_bytes;
/// assert_eq!(size_bytes("64KiB"), Ok(65_536));
/// assert_eq!(size_bytes("4096"), Ok(4096));
/// assert!(size_bytes("-1").is_err());
/// ```
pub fn size_bytes(text: &str) -> Result<u64, String> {
    use crate::model_value::{SIZE, Scalar, quantity};
    quantity(&Scalar::String(text.to_string()), &SIZE)
}

/// [`size_bytes`] as a `usize` (a command-line flag's value).
pub fn size_bytes_usize(text: &str) -> Result<usize, String> {
    let n = size_bytes(text)?;
    usize::try_from(n).map_err(|_| format!("`{text}` is more bytes than this host can address"))
}

/// Binary size units, largest first.
pub const BINARY_SIZES: [(&str, u64); 4] = [
    ("TiB", 1 << 40),
    ("GiB", 1 << 30),
    ("MiB", 1 << 20),
    ("KiB", 1 << 10),
];

/// `n` in the largest of `units` (largest first) that divides it, else in `base`; `sep` goes
/// between number and unit.
///
/// ```
/// use mpsim_sim::units::{BINARY_SIZES, in_largest_unit};
/// assert_eq!(in_largest_unit(65_536, &BINARY_SIZES, "B", ""), "64KiB");
/// assert_eq!(in_largest_unit(100, &BINARY_SIZES, "B", " "), "100 B");
/// ```
pub fn in_largest_unit(n: u64, units: &[(&str, u64)], base: &str, sep: &str) -> String {
    units
        .iter()
        .find(|(_, k)| n != 0 && n.is_multiple_of(*k))
        .map_or_else(
            || format!("{n}{sep}{base}"),
            |(u, k)| format!("{}{sep}{u}", n / k),
        )
}

/// `n / 10^digits` as an exact decimal with at least one fractional digit.
///
/// ```
/// assert_eq!(mpsim_sim::units::exact_decimal(1_250, 3), "1.25");
/// assert_eq!(mpsim_sim::units::exact_decimal(2_000, 3), "2.0");
/// ```
pub fn exact_decimal(n: u64, digits: u32) -> String {
    let den = 10u64.pow(digits);
    let frac = format!("{:0width$}", n % den, width = digits as usize);
    let frac = frac.trim_end_matches('0');
    format!("{}.{}", n / den, if frac.is_empty() { "0" } else { frac })
}
