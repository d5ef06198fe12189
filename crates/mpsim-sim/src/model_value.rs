//! Values of `model.toml` as written, read into whole base units: `"1.5us"` to 1,500 ns,
//! `0.5` (a factor) to 500,000 millionths. The rules are in `model_file`'s module doc; this file
//! holds the grammar of a quantity (a number, an exponent, a unit), and the messages that say
//! why a value is refused in the file's terms (the value as written, short, and the limit it
//! broke). The arithmetic is [`crate::decimal`]'s.
//!
//! Values are [`Scalar`]s rather than `toml::Value`s: TOML integers are 64-bit, and
//! `toml::Value` refuses a bigger one with a message that names neither the key nor the limit
//! ("u64 value was too large"), so integers are kept here at any size the TOML parser passes
//! on (up to 128 bits) and judged with their key. The arithmetic is exact on the decimal
//! digits, whatever their number: a fraction is scaled digit by digit ([`Decimal::times`]), so
//! `1e-300` is known to round to 0 rather than to have "too many digits".

use std::fmt;

use serde::Deserialize;

use crate::decimal::Decimal;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A `model.toml` value where a number or a string is expected.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Scalar {
    /// An integer's decimal digits, `-` first if negative.
    Integer(String),
    /// A float.
    Float(f64),
    /// A string.
    String(String),
    /// Any other TOML type, by its name with an article: "a boolean", "an array".
    Other(&'static str),
}

/// How a kind of quantity is written: its units, what a bare number means, whether it is
/// rounded to its base unit or must be whole, and its largest value.
pub(crate) struct Kind {
    /// What the quantity is, for messages ("a time").
    pub what: &'static str,
    /// `(suffix, base units per suffix unit)`.
    pub units: &'static [(&'static str, u128)],
    /// Base units per bare number (no unit).
    pub bare: u128,
    /// Round to the nearest base unit (else a fraction of one is an error).
    pub nearest: bool,
    /// The base unit's name, for messages.
    pub base: &'static str,
    /// The largest value, in base units.
    pub max: u64,
    /// [`Kind::max`] as a file would write it, for messages.
    pub max_text: &'static str,
}

pub(crate) const TIME: Kind = Kind {
    what: "a time",
    units: &[
        ("ns", 1),
        ("us", 1_000),
        ("µs", 1_000),
        ("ms", 1_000_000),
        ("s", 1_000_000_000),
    ],
    bare: 1,
    nearest: false,
    base: "ns",
    max: u64::MAX,
    max_text: "18446744073709551615ns",
};

pub(crate) const SIZE: Kind = Kind {
    what: "a size",
    units: &[
        ("B", 1),
        ("KiB", 1 << 10),
        ("MiB", 1 << 20),
        ("GiB", 1 << 30),
        ("TiB", 1 << 40),
    ],
    bare: 1,
    nearest: false,
    base: "bytes",
    max: u64::MAX,
    max_text: "18446744073709551615B",
};

pub(crate) const FLOPS: Kind = Kind {
    what: "a rate in flop/s",
    units: &[],
    bare: 1,
    nearest: true,
    base: "flop/s",
    max: u64::MAX,
    max_text: "18446744073709551615",
};

/// `[cpu] cores`: the model keeps it as a `u32`.
pub(crate) const CORES: Kind = Kind {
    what: "a number of cores",
    units: &[],
    bare: 1,
    nearest: false,
    base: "cores",
    max: u32::MAX as u64,
    max_text: "4294967295",
};

/// The largest factor a file may hold, in millionths: 1,000,000, so that it round-trips exactly
/// through TOML's floating-point numbers.
pub(crate) const MAX_FACTOR_PPM: u64 = 1_000_000_000_000;

/// A factor (`host_to_target`, `concurrent_slowdown`), kept in millionths.
pub(crate) const FACTOR: Kind = Kind {
    what: "a factor",
    units: &[],
    bare: 1_000_000,
    nearest: true,
    base: "millionths",
    max: MAX_FACTOR_PPM,
    max_text: "1000000",
};

pub(crate) const BSP_G: Kind = Kind {
    what: "a time per byte",
    units: &[
        ("ps/byte", 1),
        ("ps/B", 1),
        ("ns/byte", 1_000),
        ("ns/B", 1_000),
        ("us/byte", 1_000_000),
        ("us/B", 1_000_000),
    ],
    bare: 1_000,
    nearest: true,
    base: "ps/byte",
    max: u64::MAX,
    max_text: "18446744073709551615ps/byte",
};

/// The kind of the value of `key` (`section.key`), for the messages of values the TOML parser
/// itself refuses (numbers beyond 128 bits); `None` for keys that are not quantities.
pub(crate) fn kind_of(key: &str) -> Option<&'static Kind> {
    Some(match key {
        "network.ack_latency"
        | "network.poll_cost"
        | "bsp.l"
        | "cpu.send_overhead"
        | "cpu.recv_overhead"
        | "cpu.wake_latency"
        | "cpu.handover"
        | "cpu.measure_overhead" => &TIME,
        "network.eager_threshold" | "network.bsend_overhead" | "network.system_buffer" => &SIZE,
        "compute.flops_per_s" => &FLOPS,
        "compute.host_to_target" | "cpu.concurrent_slowdown" => &FACTOR,
        "bsp.g" => &BSP_G,
        "cpu.cores" => &CORES,
        _ => return None,
    })
}

impl Scalar {
    /// The string, if the value is one, trimmed (`"unbounded"`, `"unlimited"`).
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(s) => Some(s.trim()),
            _ => None,
        }
    }

    /// The value short, as a message echoes it: `1e300`, not 301 digits.
    pub fn shown(&self) -> String {
        match self {
            Self::Integer(digits) => digits.clone(),
            Self::Float(f) => short_float(*f),
            Self::String(s) => shorten(s.trim()),
            Self::Other(t) => (*t).to_owned(),
        }
    }

    /// The exact decimal text of a number or string, or why it is not one.
    fn number_text(&self) -> Result<String, String> {
        let shown = self.shown();
        match self {
            Self::Integer(digits) if digits.starts_with('-') => {
                Err(format!("`{shown}` is negative"))
            }
            Self::Integer(digits) => Ok(digits.clone()),
            Self::Float(f) if !f.is_finite() => Err(format!("`{shown}` is not a finite number")),
            Self::Float(f) if *f < 0.0 => Err(format!("`{shown}` is negative")),
            // Rust prints a float as the shortest decimal that reads back as the same float,
            // and never in exponent form: the number the file meant.
            Self::Float(f) if *f == 0.0 => Ok("0".into()),
            Self::Float(f) => Ok(f.to_string()),
            Self::String(s) => Ok(s.trim().to_string()),
            Self::Other(t) => Err(format!("expected a number or a string, found {t}")),
        }
    }

    /// Whether the value is a number (or a string starting with one) that is not zero: a
    /// quantity that comes out 0 from it was rounded there.
    fn nonzero(&self) -> bool {
        self.number_text().is_ok_and(|t| {
            t.bytes()
                .take_while(|c| c.is_ascii_digit() || *c == b'.')
                .any(|c| (b'1'..=b'9').contains(&c))
        })
    }
}

/// Reads a quantity of `kind` in its base unit, at most [`Kind::max`].
pub(crate) fn quantity(v: &Scalar, kind: &Kind) -> Result<u64, String> {
    let text = v.number_text()?;
    let shown = v.shown();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (num, rest) = text.split_at(split);
    // Exponent form in a string (`"1e3ns"`, `"2.5E-1us"`): the number's digits with the
    // decimal point moved, so that it is read as exactly as any other.
    let (exp, unit) = match exponent(rest) {
        Some((exp, after)) if !num.is_empty() => (exp, after.trim()),
        _ => (0, rest.trim()),
    };
    if exp.unsigned_abs() > MAX_EXPONENT {
        return Err(format!("`{shown}`: its exponent is out of range"));
    }
    let units_hint = || {
        if kind.units.is_empty() {
            format!("{} is a plain number", kind.what)
        } else {
            let names: Vec<&str> = kind.units.iter().map(|u| u.0).collect();
            format!("{} takes {}", kind.what, names.join(", "))
        }
    };
    if num.is_empty() {
        let signed_number = text
            .strip_prefix('-')
            .is_some_and(|t| t.starts_with(|c: char| c.is_ascii_digit() || c == '.'));
        return Err(if signed_number {
            format!("`{shown}` is negative")
        } else {
            format!("`{shown}` is not {}; {}", kind.what, units_hint())
        });
    }
    let scale = if unit.is_empty() {
        kind.bare
    } else {
        kind.units
            .iter()
            .find(|u| u.0 == unit)
            .map(|u| u.1)
            .ok_or_else(|| {
                format!(
                    "unknown unit `{}` in `{shown}`; {}",
                    shorten(unit),
                    units_hint()
                )
            })?
    };
    let not_a_number = || format!("`{}` is not a number", shorten(num));
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) if !f.contains('.') && i.len() + f.len() > 0 => (i, f),
        Some(_) => return Err(not_a_number()),
        None => (num, ""),
    };
    let too_large = || format!("`{shown}` is too large: at most {}", kind.max_text);
    let s = Decimal::new(int, frac, exp)
        .ok_or_else(not_a_number)?
        .times(scale)
        .ok_or_else(too_large)?;
    let value = if kind.nearest {
        s.nearest().ok_or_else(too_large)?
    } else if s.exact {
        s.whole
    } else {
        return Err(format!("`{shown}` is not a whole number of {}", kind.base));
    };
    u64::try_from(value)
        .ok()
        .filter(|&n| n <= kind.max)
        .ok_or_else(too_large)
}

/// Why a quantity of `kind` that must be `> 0` is not, given that it came out 0 from `v`.
pub(crate) fn zero_message(v: &Scalar, kind: &Kind) -> String {
    if v.nonzero() {
        format!(
            "`{}` rounds to 0 (it is kept in whole {}); must be > 0",
            v.shown(),
            kind.base
        )
    } else {
        "must be > 0".into()
    }
}

/// The message for a number the TOML parser refused as out of its range (`1e400`, an integer
/// beyond 128 bits), written `written`, as the value of `key`.
pub(crate) fn overflow_message(key: &str, written: &str) -> String {
    let shown = shorten(written);
    if written.starts_with('-') {
        return format!("`{shown}` is negative");
    }
    match kind_of(key) {
        Some(kind) => format!("`{shown}` is too large: at most {}", kind.max_text),
        None => format!("`{shown}` is too large for a TOML number"),
    }
}

/// The largest exponent a string may write (`1e1000ns`), either way: no quantity needs one.
const MAX_EXPONENT: u64 = 1000;

/// The exponent that starts `rest` (`e3`, `E-12`, `e+4`: an `e` or `E`, a sign or none, and
/// digits) and what follows it; `None` if `rest` does not start with one (an `e` before a
/// letter does not).
fn exponent(rest: &str) -> Option<(i64, &str)> {
    let after_e = rest.strip_prefix(['e', 'E'])?;
    let digits_at = usize::from(after_e.starts_with(['+', '-']));
    let end = after_e[digits_at..]
        .find(|c: char| !c.is_ascii_digit())
        .map_or(after_e.len(), |i| i + digits_at);
    if end == digits_at {
        return None;
    }
    // One too long for `i64` stands as `i64::MAX`, which `quantity` refuses as any beyond
    // [`MAX_EXPONENT`].
    let exp: i64 = after_e[..end].parse().unwrap_or(i64::MAX);
    Some((exp, &after_e[end..]))
}

/// A float as a message shows it: as Rust prints it when that is short, else in exponent form
/// (`1e300`, `1e-300`).
fn short_float(f: f64) -> String {
    let plain = f.to_string();
    if plain.len() <= 20 {
        plain
    } else {
        format!("{f:e}")
    }
}

/// Text echoed in a message, cut to 40 characters.
pub(crate) fn shorten(text: &str) -> String {
    const MAX: usize = 40;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ScalarVisitor)
    }
}

/// Builds a [`Scalar`] from whatever TOML value comes, so that the type check (and its message)
/// is the loader's, with the key.
struct ScalarVisitor;

/// The key under which `toml` hands a datetime to `visit_map` (`toml_datetime`'s private field
/// name, which it documents as the way to tell a datetime from a table).
const TOML_DATETIME_FIELD: &str = "$__toml_private_datetime";

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number or a string")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Scalar, E> {
        Ok(Scalar::Other("a boolean"))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Scalar, E> {
        Ok(Scalar::Integer(v.to_string()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Scalar, E> {
        Ok(Scalar::Integer(v.to_string()))
    }

    fn visit_i128<E>(self, v: i128) -> Result<Scalar, E> {
        Ok(Scalar::Integer(v.to_string()))
    }

    fn visit_u128<E>(self, v: u128) -> Result<Scalar, E> {
        Ok(Scalar::Integer(v.to_string()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Scalar, E> {
        Ok(Scalar::Float(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Scalar, E> {
        Ok(Scalar::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Scalar, E> {
        Ok(Scalar::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Scalar::Other("an array"))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
        let mut kind = "a table";
        while let Some(key) = map.next_key::<String>()? {
            if key == TOML_DATETIME_FIELD {
                kind = "a datetime";
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(Scalar::Other(kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Scalar {
        Scalar::String(text.into())
    }

    fn int(n: i128) -> Scalar {
        Scalar::Integer(n.to_string())
    }

    #[test]
    fn units_convert_exactly() {
        assert_eq!(quantity(&s("150ns"), &TIME), Ok(150));
        assert_eq!(quantity(&s("1.5 us"), &TIME), Ok(1500));
        assert_eq!(quantity(&s("2ms"), &TIME), Ok(2_000_000));
        assert_eq!(quantity(&s("1s"), &TIME), Ok(1_000_000_000));
        assert_eq!(quantity(&int(42), &TIME), Ok(42));
        assert_eq!(quantity(&s("64KiB"), &SIZE), Ok(65_536));
        assert_eq!(quantity(&s("0.5KiB"), &SIZE), Ok(512));
        assert_eq!(quantity(&Scalar::Float(1e10), &FLOPS), Ok(10_000_000_000));
        assert_eq!(quantity(&Scalar::Float(2.5), &FLOPS), Ok(3));
        assert_eq!(quantity(&Scalar::Float(1.0), &FACTOR), Ok(1_000_000));
        assert_eq!(quantity(&Scalar::Float(0.1234565), &FACTOR), Ok(123_457));
        assert_eq!(quantity(&s("0.125ns/byte"), &BSP_G), Ok(125));
        assert_eq!(quantity(&Scalar::Float(0.125), &BSP_G), Ok(125));
    }

    #[test]
    fn long_fractions_are_exact_whatever_their_length() {
        // 1 B as a fraction of a TiB: 40 decimals, whole.
        let one_byte = "0.0000000000009094947017729282379150390625TiB";
        assert_eq!(quantity(&s(one_byte), &SIZE), Ok(1));
        assert_eq!(quantity(&Scalar::Float(1e-300), &FACTOR), Ok(0));
        assert_eq!(
            quantity(&s("0.000000000000000000000000000000001s"), &TIME),
            Err("`0.000000000000000000000000000000001s` is not a whole number of ns".into())
        );
        assert_eq!(
            quantity(&s("0.4999999999999999999999999999999999"), &FLOPS),
            Ok(0)
        );
        assert_eq!(
            quantity(&s("0.5000000000000000000000000000000000"), &FLOPS),
            Ok(1)
        );
    }

    #[test]
    fn exponent_form_in_a_string_is_read_exactly() {
        assert_eq!(quantity(&s("1e3ns"), &TIME), Ok(1000));
        assert_eq!(quantity(&s("2.5E-1us"), &TIME), Ok(250));
        assert_eq!(quantity(&s("1e+1 ms"), &TIME), Ok(10_000_000));
        assert_eq!(quantity(&s("1.5e3"), &TIME), Ok(1500));
        assert_eq!(quantity(&s("125e-3ns/byte"), &BSP_G), Ok(125));
        let e = |v: Scalar, k| quantity(&v, k).unwrap_err();
        assert_eq!(
            e(s("1e30ns"), &TIME),
            "`1e30ns` is too large: at most 18446744073709551615ns"
        );
        assert!(e(s("1e-3ns"), &TIME).contains("whole number of ns"));
        assert!(e(s("1e99999999999999999999ns"), &TIME).contains("exponent is out of range"));
        assert!(e(s("1eons"), &TIME).contains("unknown unit `eons`"));
    }

    #[test]
    fn bad_quantities_say_why() {
        let e = |v: Scalar, k| quantity(&v, k).unwrap_err();
        assert!(e(s("0.5ns"), &TIME).contains("whole number of ns"));
        assert!(e(s("5 parsecs"), &TIME).contains("unknown unit `parsecs`"));
        assert!(e(s("-5ns"), &TIME).contains("negative"));
        assert!(e(int(-5), &TIME).contains("negative"));
        assert!(e(s("1.2.3ns"), &TIME).contains("not a number"));
        assert!(e(s("."), &TIME).contains("not a number"));
        assert!(e(s("99999999999999999999999999999999999999999ns"), &TIME).contains("too large"));
        assert!(e(s("18446744073709551616"), &TIME).contains("too large"));
        assert!(e(Scalar::Float(f64::NAN), &FLOPS).contains("finite"));
        assert!(e(Scalar::Other("a boolean"), &TIME).contains("found a boolean"));
        assert!(e(Scalar::Other("an array"), &TIME).contains("found an array"));
        assert!(e(s("ns"), &TIME).contains("is not a time"));
        // A flag where a value belongs (`--livelock-after --ranks 4`) is not a negative number.
        assert!(e(s("--ranks"), &TIME).contains("is not a time"));
    }

    #[test]
    fn a_point_without_digits_is_not_a_number_even_with_an_exponent() {
        // Before the parsers were merged, `.e3` was read as 0.
        let e = |v: Scalar| quantity(&v, &TIME).unwrap_err();
        assert_eq!(e(s(".e3ns")), "`.` is not a number");
        assert_eq!(e(s(".E-3")), "`.` is not a number");
        assert_eq!(quantity(&s(".5e1ns"), &TIME), Ok(5));
        assert_eq!(quantity(&s("1.e3ns"), &TIME), Ok(1000));
    }

    #[test]
    fn too_large_names_the_limit_of_the_kind() {
        let e = |v: Scalar, k| quantity(&v, k).unwrap_err();
        assert_eq!(
            e(int(4_294_967_296), &CORES),
            "`4294967296` is too large: at most 4294967295"
        );
        assert_eq!(quantity(&int(4_294_967_295), &CORES), Ok(4_294_967_295));
        assert_eq!(
            e(int(i128::from(u64::MAX) + 1), &TIME),
            "`18446744073709551616` is too large: at most 18446744073709551615ns"
        );
        assert_eq!(
            e(Scalar::Float(1e300), &FACTOR),
            "`1e300` is too large: at most 1000000"
        );
        assert_eq!(
            e(Scalar::Float(1_000_000.5), &FACTOR),
            "`1000000.5` is too large: at most 1000000"
        );
    }

    #[test]
    fn values_are_echoed_short() {
        assert_eq!(Scalar::Float(1e300).shown(), "1e300");
        assert_eq!(Scalar::Float(1e-300).shown(), "1e-300");
        assert_eq!(Scalar::Float(0.125).shown(), "0.125");
        assert_eq!(s(&"9".repeat(50)).shown(), format!("{}…", "9".repeat(40)));
    }

    #[test]
    fn a_nonzero_value_rounded_to_zero_says_so() {
        assert_eq!(
            zero_message(&Scalar::Float(1e-300), &FACTOR),
            "`1e-300` rounds to 0 (it is kept in whole millionths); must be > 0"
        );
        assert_eq!(zero_message(&Scalar::Float(0.0), &FACTOR), "must be > 0");
        assert_eq!(zero_message(&s("0.000ns"), &TIME), "must be > 0");
        assert_eq!(zero_message(&int(0), &CORES), "must be > 0");
    }

    #[test]
    fn overflowed_numbers_name_their_limit() {
        let big = "9".repeat(41);
        assert_eq!(
            overflow_message("cpu.cores", &big),
            format!("`{}…` is too large: at most 4294967295", "9".repeat(40))
        );
        assert_eq!(
            overflow_message("compute.host_to_target", "1e400"),
            "`1e400` is too large: at most 1000000"
        );
        assert_eq!(
            overflow_message("cpu.cores", "-1e400"),
            "`-1e400` is negative"
        );
        assert_eq!(
            overflow_message("meta.other", "1e400"),
            "`1e400` is too large for a TOML number"
        );
    }
}
