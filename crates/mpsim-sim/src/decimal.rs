//! Exact decimals: a number as written (`12.345`, `1.5e-3`, `0.5`) times a whole scale, as an
//! integer, computed on its digits without going through `f64` (which cannot hold 0.1 and loses
//! nanoseconds past 2^53), whatever the number of digits or the size of the exponent.
//!
//! The one parser of exact numbers in mpsim: `model.toml` quantities (`"1.5us"`, `"0.5KiB"`, a
//! factor in millionths; their grammar and messages are the model file's, in `model_value`) and
//! the `mpsim` command's trace timestamps (JSON microseconds with nanosecond digits), `--from
//! 2.5us`, and `calibrate --from-osu`'s microseconds ([`json_rounded`], [`json_exact`]).
//!
//! What it does not do: units, signs other than JSON's leading `-`, or messages; callers name
//! the value and its limit in their own terms from a [`DecimalError`] or a `None`.

/// Why a decimal is not a non-negative number of units the size of `u64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecimalError {
    /// Not a number.
    NotANumber,
    /// Below zero.
    Negative,
    /// Over `u64::MAX` after scaling.
    TooLarge,
}

/// A non-negative decimal as written: its whole digits, its fraction digits, and a power of ten
/// (`1.5e-3` is `1`, `5`, `-3`).
///
/// ```
/// use mpsim_sim::decimal::Decimal;
/// // 0.5 KiB in bytes, exactly.
/// let half = Decimal::new("0", "5", 0).unwrap();
/// assert_eq!(half.times(1024).map(|s| (s.whole, s.exact)), Some((512, true)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decimal<'a> {
    /// The whole part's digits (may be empty: `.5`).
    int: &'a [u8],
    /// The fraction's digits (may be empty).
    frac: &'a [u8],
    /// The power of ten the digits are multiplied by.
    exp: i64,
}

/// A decimal times a scale, split at the point: the whole part, and what the rest says for
/// rounding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scaled {
    /// The whole part.
    pub whole: u128,
    /// Nothing was left over: the value is whole.
    pub exact: bool,
    /// What was left over is at least a half (rounding half up adds 1).
    pub half_or_more: bool,
}

impl Scaled {
    /// The value rounded to the nearest whole number, halves up; `None` past `u128::MAX`.
    pub fn nearest(self) -> Option<u128> {
        self.whole.checked_add(u128::from(self.half_or_more))
    }
}

impl<'a> Decimal<'a> {
    /// `int.frac x 10^exp`; `None` unless `int` and `frac` are ASCII digits and not both empty.
    pub fn new(int: &'a str, frac: &'a str, exp: i64) -> Option<Self> {
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        (digits(int) && digits(frac) && !(int.is_empty() && frac.is_empty())).then_some(Self {
            int: int.as_bytes(),
            frac: frac.as_bytes(),
            exp,
        })
    }

    /// A JSON number's text (sign, fraction, exponent, as JSON writes them; leading zeros are
    /// accepted), refused if below zero; `-0` is 0.
    ///
    /// ```
    /// use mpsim_sim::decimal::{Decimal, DecimalError};
    /// assert!(Decimal::json("-0.0").unwrap().is_zero());
    /// assert_eq!(Decimal::json("1.5e-3"), Ok(Decimal::new("1", "5", -3).unwrap()));
    /// assert_eq!(Decimal::json("-1"), Err(DecimalError::Negative));
    /// assert_eq!(Decimal::json("1."), Err(DecimalError::NotANumber));
    /// ```
    pub fn json(text: &'a str) -> Result<Self, DecimalError> {
        let (negative, unsigned) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (mantissa, exp) = match unsigned.find(['e', 'E']) {
            Some(i) => (&unsigned[..i], Some(&unsigned[i + 1..])),
            None => (unsigned, None),
        };
        let (int, frac) = match mantissa.split_once('.') {
            Some((_, "")) => return Err(DecimalError::NotANumber),
            Some(split) => split,
            None => (mantissa, ""),
        };
        if int.is_empty() {
            return Err(DecimalError::NotANumber);
        }
        let exp = match exp {
            Some(exp) => {
                let digits = exp.strip_prefix(['+', '-']).unwrap_or(exp);
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(DecimalError::NotANumber);
                }
                // An exponent beyond `i64` acts as `i64::MAX`: it only matters for zero.
                let size = digits.parse::<i64>().unwrap_or(i64::MAX);
                if exp.starts_with('-') { -size } else { size }
            }
            None => 0,
        };
        let decimal = Self::new(int, frac, exp).ok_or(DecimalError::NotANumber)?;
        if negative && !decimal.is_zero() {
            return Err(DecimalError::Negative);
        }
        Ok(decimal)
    }

    /// The value times `10^n`.
    #[must_use]
    pub fn shifted(self, n: i64) -> Self {
        Self {
            exp: self.exp.saturating_add(n),
            ..self
        }
    }

    /// Whether the value is 0.
    pub fn is_zero(&self) -> bool {
        self.int.iter().chain(self.frac).all(|&d| d == b'0')
    }

    /// The value times `scale`, exactly, split into its whole part and what is left; `None` if
    /// the whole part is over `u128::MAX`. `scale` is at least 1 and at most `u128::MAX / 10`
    /// (units and powers of ten are).
    ///
    /// The whole digits are read as an integer; the fraction `0.d1 d2 ... dn` times `scale` is
    /// computed from its last digit up: `x_i = (d_i scale + x_{i+1}) / 10`. Keeping only
    /// `floor(x_{i+1})` gives the same floor (`floor((k + floor(y)) / 10) = floor((k + y) / 10)`
    /// for whole `k`), every remainder that is not 0 says the result is not whole, and the last
    /// step's remainder (of 10) says whether what is left is at least a half. The carried part
    /// stays below `scale`. Digits far past the point are not walked one by one: a value below
    /// `10^-39` times `scale` is below a tenth.
    pub fn times(&self, scale: u128) -> Option<Scaled> {
        debug_assert!((1..=u128::MAX / 10).contains(&scale));
        let len = (self.int.len() + self.frac.len()) as i64;
        // The digits of int then frac, indexed from the first; 0 outside them.
        let digit = |i: i64| -> u128 {
            let at = |d: u8| u128::from(d - b'0');
            match usize::try_from(i) {
                Ok(i) if i < self.int.len() => at(self.int[i]),
                Ok(i) if i < len as usize => at(self.frac[i - self.int.len()]),
                _ => 0,
            }
        };
        let Some(lead) = (0..len).find(|&i| digit(i) != 0) else {
            return Some(Scaled {
                whole: 0,
                exact: true,
                half_or_more: false,
            });
        };
        let last = (lead..len).rev().find(|&i| digit(i) != 0).unwrap_or(lead);
        // The digits before `point` are the whole part: lead..point, 0s past `len`.
        let point = (self.int.len() as i64).saturating_add(self.exp);
        // 40 whole digits with the first not 0 are over u128::MAX (39 digits).
        if point.saturating_sub(lead) > 39 {
            return None;
        }
        let mut whole: u128 = 0;
        for i in lead..point {
            whole = whole.checked_mul(10)?.checked_add(digit(i))?;
        }
        let whole = whole.checked_mul(scale)?;
        let (mut carry, mut exact, mut half_or_more) = (0u128, true, false);
        if point <= last {
            if lead.saturating_sub(point) > 38 {
                // Below 10^-39 x scale < 10^-39 x 10^38: not 0, below a half.
                exact = false;
            } else {
                for i in (point..=last).rev() {
                    let t = digit(i) * scale + carry;
                    carry = t / 10;
                    exact &= t.is_multiple_of(10);
                    half_or_more = t % 10 >= 5;
                }
            }
        }
        Some(Scaled {
            whole: whole.checked_add(carry)?,
            exact,
            half_or_more,
        })
    }

    /// The value times `10^shift` as a `u64`, split as [`Decimal::times`] does.
    fn in_u64(self, shift: u32) -> Result<(u64, Scaled), DecimalError> {
        let scaled = self
            .shifted(i64::from(shift))
            .times(1)
            .ok_or(DecimalError::TooLarge)?;
        let whole = u64::try_from(scaled.whole).map_err(|_| DecimalError::TooLarge)?;
        Ok((whole, scaled))
    }
}

/// The JSON number `text` times `10^shift`, as an integer rounded to the nearest (halves up),
/// computed on the digits.
///
/// ```
/// use mpsim_sim::decimal::{DecimalError, json_rounded};
/// assert_eq!(json_rounded("12.345", 3), Ok(12_345));
/// assert_eq!(json_rounded("1.5e-3", 3), Ok(2));
/// assert_eq!(json_rounded("-1", 3), Err(DecimalError::Negative));
/// ```
pub fn json_rounded(text: &str, shift: u32) -> Result<u64, DecimalError> {
    let (whole, scaled) = Decimal::json(text)?.in_u64(shift)?;
    whole
        .checked_add(u64::from(scaled.half_or_more))
        .ok_or(DecimalError::TooLarge)
}

/// Like [`json_rounded`], but `None` when the value is not a whole number after scaling, for
/// values that must not be rounded.
///
/// ```
/// use mpsim_sim::decimal::json_exact;
/// assert_eq!(json_exact("1.5", 0), Ok(None));
/// assert_eq!(json_exact("1.5", 3), Ok(Some(1_500)));
/// ```
pub fn json_exact(text: &str, shift: u32) -> Result<Option<u64>, DecimalError> {
    let (whole, scaled) = Decimal::json(text)?.in_u64(shift)?;
    Ok(scaled.exact.then_some(whole))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(int: &str, frac: &str, exp: i64, scale: u128) -> Option<Scaled> {
        Decimal::new(int, frac, exp).unwrap().times(scale)
    }

    #[test]
    fn timestamps_convert_exactly() {
        let ns = |s: &str| json_rounded(s, 3);
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
        assert_eq!(ns("18446744073709551.6155"), Err(DecimalError::TooLarge));
        assert_eq!(ns("1.000000000000000000000000000000"), Ok(1_000));
        assert_eq!(ns("1e-999999999999"), Ok(0));
        assert_eq!(ns("1e-99999999999999999999999"), Ok(0));
        assert_eq!(ns("1e999999999999"), Err(DecimalError::TooLarge));
        assert_eq!(ns("0e999999999999"), Ok(0));
        assert_eq!(ns("-1.5"), Err(DecimalError::Negative));
        assert_eq!(ns("-0.0001"), Err(DecimalError::Negative));
        for bad in [
            "", "-", "1.", ".5", "1e", "\"1\"", "1.2.3", "0x10", "null", "1e+", "+1", "1e3.0",
            "--1",
        ] {
            assert_eq!(ns(bad), Err(DecimalError::NotANumber), "{bad}");
        }
        // Every value the simulator writes comes back as it was.
        for v in [0, 1, 999, 1_000, 123_456_789, u64::MAX / 7] {
            assert_eq!(ns(&format!("{}.{:03}", v / 1000, v % 1000)), Ok(v));
        }
        assert_eq!(json_rounded("2.5", 6), Ok(2_500_000));
        assert_eq!(json_rounded("42", 0), Ok(42));
    }

    #[test]
    fn exact_values_refuse_fractions_after_scaling() {
        assert_eq!(json_exact("1.5", 0), Ok(None));
        assert_eq!(json_exact("0.0001", 0), Ok(None));
        assert_eq!(json_exact("1.5", 3), Ok(Some(1_500)));
        assert_eq!(json_exact("1.000", 0), Ok(Some(1)));
        assert_eq!(json_exact("0", 0), Ok(Some(0)));
        assert_eq!(json_exact("1e-1", 1), Ok(Some(1)));
        assert_eq!(json_exact("1e-999999", 0), Ok(None));
        assert_eq!(json_exact("-1", 0), Err(DecimalError::Negative));
        assert_eq!(
            json_exact("18446744073709551616", 0),
            Err(DecimalError::TooLarge)
        );
    }

    #[test]
    fn any_scale_is_exact_whatever_the_number_of_digits() {
        let whole = |s: Option<Scaled>| s.map(|s| (s.whole, s.exact, s.half_or_more));
        // 1 B as a fraction of a TiB: 40 decimals, whole.
        let one_byte = "0000000000009094947017729282379150390625";
        assert_eq!(
            whole(times("0", one_byte, 0, 1 << 40)),
            Some((1, true, false))
        );
        assert_eq!(whole(times("0", "5", 0, 1024)), Some((512, true, false)));
        assert_eq!(whole(times("", "5", 0, 1)), Some((0, false, true)));
        assert_eq!(whole(times("1", "", 0, 1)), Some((1, true, false)));
        let below_half = format!("4{}", "9".repeat(33));
        assert_eq!(
            whole(times("0", &below_half, 0, 1)),
            Some((0, false, false))
        );
        let half = format!("5{}", "0".repeat(33));
        assert_eq!(whole(times("0", &half, 0, 1)), Some((0, false, true)));
        // A time in seconds with a digit past the nanosecond.
        let tiny = format!("{}1", "0".repeat(32));
        assert_eq!(
            whole(times("0", &tiny, 0, 1_000_000_000)),
            Some((0, false, false))
        );
        // Exponents move the point, exactly, either way.
        assert_eq!(whole(times("2", "5", -1, 1_000)), Some((250, true, false)));
        assert_eq!(whole(times("125", "", -3, 1_000)), Some((125, true, false)));
        assert_eq!(whole(times("1", "5", 3, 1)), Some((1_500, true, false)));
        assert_eq!(
            whole(times("1", "", -300, 1_000_000)),
            Some((0, false, false))
        );
        assert_eq!(whole(times("1", "", i64::MIN, 1)), Some((0, false, false)));
        assert_eq!(whole(times("0", "0", i64::MAX, 1)), Some((0, true, false)));
        // The whole part up to u128::MAX, and no further.
        let max = u128::MAX.to_string();
        assert_eq!(whole(times(&max, "", 0, 1)), Some((u128::MAX, true, false)));
        assert_eq!(times(&max, "", 0, 2), None);
        assert_eq!(times("1", "", 39, 1), None);
        assert_eq!(times("1", "", i64::MAX, 1), None);
        assert_eq!(
            whole(times("1", "", 38, 1)),
            Some((10u128.pow(38), true, false))
        );
    }

    #[test]
    fn decimals_are_digits() {
        assert!(Decimal::new("", "", 0).is_none());
        assert!(Decimal::new("1a", "", 0).is_none());
        assert!(Decimal::new("1", "-5", 0).is_none());
        assert!(Decimal::new("", "5", 0).is_some());
        assert!(Decimal::new("00", "", 5).unwrap().is_zero());
        assert_eq!(
            Scaled {
                whole: u128::MAX,
                exact: false,
                half_or_more: true
            }
            .nearest(),
            None
        );
    }
}
