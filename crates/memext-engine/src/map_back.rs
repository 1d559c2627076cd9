//! What a predicted periodic wake's bring-back maps into the context's page
//! tables once it has read the pages back.
//!
//! A read-back (MADV_WILLNEED) leaves each page in the swap cache, outside the
//! process's page tables: the call that comes next takes a minor fault for each
//! page it touches (1.4-1.7 µs a page, `memext-e2e kbench`; in bench/faas a
//! timer function's call that found its 63 MiB heap read back this way took
//! 16k minor faults and 25-31 ms against 3-5 ms mapped). Mapping ahead moves
//! that work from the call to the wait before it.

use std::fmt;

/// How much of a predicted wake's bring-back is mapped ahead of the wake.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MapBack {
    /// Nothing: the wake maps its pages itself, one minor fault a page.
    Off,
    /// The recorded working set's 2 MiB chunks, as huge pages (MADV_COLLAPSE):
    /// what the context held when it was last seen busy.
    #[default]
    WorkingSet,
    /// The working set's chunks as huge pages, then every other page read back
    /// (one byte of each read through process_vm_readv, which maps it in the
    /// process's page tables as its own touch would).
    All,
}

impl MapBack {
    pub fn is_off(self) -> bool {
        self == MapBack::Off
    }

    /// The name in the configuration file.
    pub fn as_str(self) -> &'static str {
        match self {
            MapBack::Off => "off",
            MapBack::WorkingSet => "working-set",
            MapBack::All => "all",
        }
    }
}

impl fmt::Display for MapBack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Read as `"off"`, `"working-set"` or `"all"`, or as the boolean it was
/// before `"all"` existed (`true`: the working set, `false`: off), so that
/// older configuration files and saved models still load.
impl<'de> serde::Deserialize<'de> for MapBack {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(MapBackVisitor)
    }
}

struct MapBackVisitor;

impl serde::de::Visitor<'_> for MapBackVisitor {
    type Value = MapBack;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(r#""off", "working-set", "all", true (working-set) or false (off)"#)
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<MapBack, E> {
        Ok(if v { MapBack::WorkingSet } else { MapBack::Off })
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<MapBack, E> {
        match v {
            "off" => Ok(MapBack::Off),
            "working-set" => Ok(MapBack::WorkingSet),
            "all" => Ok(MapBack::All),
            _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_its_names_and_the_booleans_it_was_before() {
        for (text, want) in [
            (r#""off""#, MapBack::Off),
            (r#""working-set""#, MapBack::WorkingSet),
            (r#""all""#, MapBack::All),
            ("true", MapBack::WorkingSet),
            ("false", MapBack::Off),
        ] {
            assert_eq!(
                serde_json::from_str::<MapBack>(text).unwrap(),
                want,
                "{text}"
            );
        }
    }

    #[test]
    fn an_unknown_name_is_refused_with_the_names_it_takes() {
        let e = serde_json::from_str::<MapBack>(r#""everything""#).unwrap_err();
        assert!(e.to_string().contains(r#""working-set", "all""#), "{e}");
        assert!(serde_json::from_str::<MapBack>("1").is_err());
    }

    #[test]
    fn written_as_it_is_read() {
        for m in [MapBack::Off, MapBack::WorkingSet, MapBack::All] {
            let text = serde_json::to_string(&m).unwrap();
            assert_eq!(text, format!("\"{m}\""));
            assert_eq!(serde_json::from_str::<MapBack>(&text).unwrap(), m);
        }
    }
}
