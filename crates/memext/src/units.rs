//! Human units in the config and the CLI: byte sizes (`512MiB`, `4G`) and
//! percentages. Parsers are pure and shared by config and output.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error("{text:?} is not a size: expected a number with an optional unit (K, M, G, T, KiB, MiB, GiB, TiB, or bytes)")]
    Size { text: String },
    #[error("{text:?} is too large a size")]
    SizeOverflow { text: String },
    #[error("{text:?} is not a percentage: expected 0% to 100%")]
    Percent { text: String },
}

/// A number of bytes, written in config files as `512MiB`, `4G` or `1048576`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(try_from = "SizeRepr", into = "String")]
pub struct ByteSize(pub u64);

#[derive(serde::Deserialize)]
#[serde(untagged)]
enum SizeRepr {
    Number(u64),
    Text(String),
}

impl TryFrom<SizeRepr> for ByteSize {
    type Error = UnitError;
    fn try_from(r: SizeRepr) -> Result<Self, UnitError> {
        match r {
            SizeRepr::Number(n) => Ok(ByteSize(n)),
            SizeRepr::Text(t) => t.parse(),
        }
    }
}

impl From<ByteSize> for String {
    fn from(b: ByteSize) -> String {
        b.to_string()
    }
}

impl std::str::FromStr for ByteSize {
    type Err = UnitError;
    fn from_str(s: &str) -> Result<Self, UnitError> {
        let t = s.trim();
        let split = t
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let bad = || UnitError::Size { text: s.to_owned() };
        if num.is_empty() || num.starts_with('.') || num.ends_with('.') {
            return Err(bad());
        }
        let shift = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 0,
            "k" | "kb" | "kib" => 10,
            "m" | "mb" | "mib" => 20,
            "g" | "gb" | "gib" => 30,
            "t" | "tb" | "tib" => 40,
            _ => return Err(bad()),
        };
        let value: f64 = num.parse().map_err(|_| bad())?;
        let bytes = value * (1u64 << shift) as f64;
        if !bytes.is_finite() || bytes >= u64::MAX as f64 {
            return Err(UnitError::SizeOverflow { text: s.to_owned() });
        }
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        // checked finite, ≥ 0, < 2^64
        Ok(ByteSize(bytes.round() as u64))
    }
}

impl fmt::Display for ByteSize {
    /// Shortest exact binary unit: `512MiB`, `1536KiB`, `1000`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
            if self.0 != 0 && self.0.is_multiple_of(1u64 << shift) {
                return write!(f, "{}{unit}", self.0 >> shift);
            }
        }
        write!(f, "{}", self.0)
    }
}

/// A byte count for tables: three significant digits, binary units.
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{b}B")
    } else if v >= 100.0 {
        format!("{v:.0}{}", UNITS[i])
    } else {
        format!("{v:.1}{}", UNITS[i])
    }
}

/// A percentage 0..=100, written as `10%`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Percent(pub u8);

impl TryFrom<String> for Percent {
    type Error = UnitError;
    fn try_from(s: String) -> Result<Self, UnitError> {
        let bad = || UnitError::Percent { text: s.clone() };
        let n: u8 = s
            .trim()
            .strip_suffix('%')
            .ok_or_else(bad)?
            .trim()
            .parse()
            .map_err(|_| bad())?;
        if n > 100 {
            return Err(bad());
        }
        Ok(Percent(n))
    }
}

impl From<Percent> for String {
    fn from(p: Percent) -> String {
        format!("{}%", p.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sizes() {
        let s = |t: &str| t.parse::<ByteSize>().map(|b| b.0);
        assert_eq!(s("512MiB"), Ok(512 << 20));
        assert_eq!(s("4G"), Ok(4 << 30));
        assert_eq!(s("1.5g"), Ok(3 << 29));
        assert_eq!(s("1048576"), Ok(1 << 20));
        assert_eq!(s(" 64 KiB "), Ok(64 << 10));
        for bad in ["", "M", "12X", "-1G", ".5G", "1.G", "1e3", "ten"] {
            assert!(s(bad).is_err(), "{bad} should be rejected");
        }
        assert!(matches!(
            s("99999999T"),
            Err(UnitError::SizeOverflow { .. })
        ));
    }

    #[test]
    fn displays_sizes_exactly() {
        assert_eq!(ByteSize(512 << 20).to_string(), "512MiB");
        assert_eq!(ByteSize(1536 << 10).to_string(), "1536KiB");
        assert_eq!(ByteSize(1000).to_string(), "1000");
        assert_eq!(human_bytes(1536 << 10), "1.5MiB");
        assert_eq!(human_bytes(300 << 20), "300MiB");
        assert_eq!(human_bytes(12), "12B");
    }

    #[test]
    fn parses_percent() {
        assert_eq!(Percent::try_from("10%".to_string()), Ok(Percent(10)));
        assert!(Percent::try_from("101%".to_string()).is_err());
        assert!(Percent::try_from("10".to_string()).is_err());
    }
}
