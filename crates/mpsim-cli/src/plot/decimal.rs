//! Exact decimals: a JSON number's text times a power of ten, as an integer, without going
//! through `f64` (which cannot hold 0.1 and loses nanoseconds past 2^53).
//!
//! Trace timestamps are microseconds with nanosecond digits (`12.345`), `--from 2.5us` is a
//! decimal with a unit, and `calibrate --from-osu` reads osu_latency's microseconds (`0.15`):
//! all become integer nanoseconds here.

/// A decimal that is not a non-negative number of units the size of `u64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecimalError {
    /// Not a JSON number.
    NotANumber,
    /// Below zero.
    Negative,
    /// Over `u64::MAX` after scaling.
    TooLarge,
}

/// What is left of a decimal past its whole part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rest {
    /// Nothing: the value is whole.
    Nothing,
    /// Less than a half.
    BelowHalf,
    /// A half or more.
    HalfOrMore,
}

/// The JSON number `text` times `10^scale`, as an integer rounded to the nearest (halves up),
/// computed on the digits: `decimal_scaled("12.345", 3) == Ok(12_345)`. Accepts what JSON
/// accepts (sign, fraction, exponent); `-0` is 0.
pub fn decimal_scaled(text: &str, scale: u32) -> Result<u64, DecimalError> {
    let (whole, rest) = split_scaled(text, scale)?;
    whole
        .checked_add(u64::from(rest == Rest::HalfOrMore))
        .ok_or(DecimalError::TooLarge)
}

/// Like [`decimal_scaled`], but `None` when the value is not a whole number after scaling
/// (`decimal_exact("1.5", 0) == Ok(None)`), for values that must not be rounded.
pub fn decimal_exact(text: &str, scale: u32) -> Result<Option<u64>, DecimalError> {
    let (whole, rest) = split_scaled(text, scale)?;
    Ok((rest == Rest::Nothing).then_some(whole))
}

/// The whole part of `text x 10^scale` and what is left past it.
fn split_scaled(text: &str, scale: u32) -> Result<(u64, Rest), DecimalError> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exp) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, "0"),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let exp_digits = exp.strip_prefix(['+', '-']).unwrap_or(exp);
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(int) || (mantissa.contains('.') && !all_digits(frac)) || !all_digits(exp_digits)
    {
        return Err(DecimalError::NotANumber);
    }
    // Exponents this large only matter for zero; clamping keeps the arithmetic in range.
    let exp_abs = exp_digits.parse::<i64>().unwrap_or(i64::MAX).min(1_000_000);
    let exp = if exp.starts_with('-') {
        -exp_abs
    } else {
        exp_abs
    };
    // value = digits * 10^shift, where digits has no leading or trailing zeros.
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    let trimmed = digits.trim_end_matches('0');
    let shift = exp - frac.len() as i64 + i64::from(scale) + (digits.len() - trimmed.len()) as i64;
    let digits = trimmed;
    if digits.is_empty() {
        return Ok((0, Rest::Nothing));
    }
    if negative {
        return Err(DecimalError::Negative);
    }
    if shift >= 0 {
        // 20 digits is the most a u64 has.
        if digits.len() as i64 + shift > 20 {
            return Err(DecimalError::TooLarge);
        }
        let n: u128 = digits.parse().map_err(|_| DecimalError::TooLarge)?;
        let n = n * 10u128.pow(shift as u32);
        let whole = u64::try_from(n).map_err(|_| DecimalError::TooLarge)?;
        Ok((whole, Rest::Nothing))
    } else {
        // `digits` has no trailing zeros, so whatever is cut off is not 0.
        let cut = digits.len() as i64 + shift;
        if cut < 0 {
            return Ok((0, Rest::BelowHalf));
        }
        let (whole, dropped) = digits.split_at(cut as usize);
        let whole: u64 = if whole.is_empty() {
            0
        } else {
            whole.parse().map_err(|_| DecimalError::TooLarge)?
        };
        let rest = if dropped.as_bytes().first().is_some_and(|&d| d >= b'5') {
            Rest::HalfOrMore
        } else {
            Rest::BelowHalf
        };
        Ok((whole, rest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_convert_exactly() {
        let ns = |s: &str| decimal_scaled(s, 3);
        assert_eq!(ns("12.345"), Ok(12_345));
        assert_eq!(ns("0.000"), Ok(0));
        assert_eq!(ns("0.7"), Ok(700));
        assert_eq!(ns("3"), Ok(3_000));
        assert_eq!(ns("-0"), Ok(0));
        assert_eq!(ns("1e3"), Ok(1_000_000));
        assert_eq!(ns("1.5E-3"), Ok(2), "1.5 ns rounds half up");
        assert_eq!(ns("0.0004"), Ok(0));
        assert_eq!(ns("0.0005"), Ok(1));
        assert_eq!(ns("18446744073709551.615"), Ok(u64::MAX));
        assert_eq!(ns("18446744073709551.616"), Err(DecimalError::TooLarge));
        assert_eq!(ns("1.000000000000000000000000000000"), Ok(1_000));
        assert_eq!(ns("1e-999999999999"), Ok(0));
        assert_eq!(ns("1e999999999999"), Err(DecimalError::TooLarge));
        assert_eq!(ns("0e999999999999"), Ok(0));
        assert_eq!(ns("-1.5"), Err(DecimalError::Negative));
        for bad in [
            "", "-", "1.", ".5", "1e", "\"1\"", "1.2.3", "0x10", "null", "1e+",
        ] {
            assert_eq!(ns(bad), Err(DecimalError::NotANumber), "{bad}");
        }
        // Every value the simulator writes comes back as it was.
        for v in [0, 1, 999, 1_000, 123_456_789, u64::MAX / 7] {
            assert_eq!(ns(&format!("{}.{:03}", v / 1000, v % 1000)), Ok(v));
        }
        assert_eq!(decimal_scaled("2.5", 6), Ok(2_500_000));
        assert_eq!(decimal_scaled("42", 0), Ok(42));
    }

    #[test]
    fn exact_values_refuse_fractions_after_scaling() {
        assert_eq!(decimal_exact("1.5", 0), Ok(None));
        assert_eq!(decimal_exact("0.0001", 0), Ok(None));
        assert_eq!(decimal_exact("1.5", 3), Ok(Some(1_500)));
        assert_eq!(decimal_exact("1.000", 0), Ok(Some(1)));
        assert_eq!(decimal_exact("0", 0), Ok(Some(0)));
        assert_eq!(decimal_exact("1e-1", 1), Ok(Some(1)));
        assert_eq!(decimal_exact("-1", 0), Err(DecimalError::Negative));
        assert_eq!(
            decimal_exact("18446744073709551616", 0),
            Err(DecimalError::TooLarge)
        );
    }
}
