//! Which cgroups a policy selects, and with which class: selectors by cgroup
//! glob, runtime, name glob, id prefix, label.

use globset::{GlobBuilder, GlobMatcher};
use memext_cgroup::CgroupPath;
use serde::Deserialize;

use crate::identity::{Identity, Runtime};

/// How memext treats a memory context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    /// Protected: gets its working set plus headroom first, never pushed out.
    Critical,
    /// Managed: its DRAM share follows its activity.
    Extend,
    /// Left alone: never written.
    Ignore,
}

impl std::fmt::Display for Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Class::Critical => "critical",
            Class::Extend => "extend",
            Class::Ignore => "ignore",
        })
    }
}

/// A glob over cgroup paths; `*` stays within one component, `**` crosses them.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "String")]
pub struct CgroupGlob {
    pub text: String,
    matcher: GlobMatcher,
}

impl TryFrom<String> for CgroupGlob {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        if !text.starts_with('/') {
            return Err(format!(
                "cgroup pattern {text:?} can never match: cgroup paths start with /"
            ));
        }
        if text.split('/').any(|c| c == "..") {
            return Err(format!(
                "cgroup pattern {text:?} can never match: cgroup paths have no `..`"
            ));
        }
        let glob = GlobBuilder::new(&text)
            .literal_separator(true)
            .build()
            .map_err(|e| format!("cgroup pattern {text:?} is not a valid glob: {}", e.kind()))?;
        Ok(Self {
            matcher: glob.compile_matcher(),
            text,
        })
    }
}

/// A glob over container or unit names.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "String")]
pub struct NameGlob {
    pub text: String,
    matcher: GlobMatcher,
}

impl TryFrom<String> for NameGlob {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        if text.is_empty() || text.contains('/') {
            return Err(format!(
                "name pattern {text:?} can never match: names are non-empty and have no /"
            ));
        }
        let glob = GlobBuilder::new(&text)
            .build()
            .map_err(|e| format!("name pattern {text:?} is not a valid glob: {}", e.kind()))?;
        Ok(Self {
            matcher: glob.compile_matcher(),
            text,
        })
    }
}

/// A container id or a prefix of one (lowercase hex, 1 to 64 digits).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct IdPrefix(pub String);

impl TryFrom<String> for IdPrefix {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        if s.is_empty()
            || s.len() > 64
            || !s
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return Err(format!(
                "id {s:?} can never match: container ids are 1 to 64 lowercase hex digits"
            ));
        }
        Ok(IdPrefix(s))
    }
}

/// One `[[select]]` entry; every field given must match. First match wins.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Selector {
    pub cgroup: Option<CgroupGlob>,
    pub runtime: Option<Runtime>,
    pub name: Option<NameGlob>,
    pub id: Option<IdPrefix>,
    pub class: Class,
}

/// What a selector is matched against.
#[derive(Debug, Clone, Copy)]
pub struct ContextFacts<'a> {
    pub path: &'a CgroupPath,
    pub identity: &'a Identity,
    pub name: Option<&'a str>,
}

impl Selector {
    pub fn matches(&self, c: &ContextFacts<'_>) -> bool {
        self.cgroup
            .as_ref()
            .is_none_or(|g| g.matcher.is_match(c.path.as_str()))
            && self.runtime.is_none_or(|r| r == c.identity.runtime)
            && self
                .name
                .as_ref()
                .is_none_or(|g| c.name.is_some_and(|n| g.matcher.is_match(n)))
            && self.id.as_ref().is_none_or(|p| {
                c.identity.runtime.is_container() && c.identity.id.starts_with(&p.0)
            })
    }

    /// The selector as one line, e.g. `cgroup=/docker/* name=redis* → critical`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(g) = &self.cgroup {
            parts.push(format!("cgroup={}", g.text));
        }
        if let Some(r) = self.runtime {
            parts.push(format!("runtime={r}"));
        }
        if let Some(g) = &self.name {
            parts.push(format!("name={}", g.text));
        }
        if let Some(i) = &self.id {
            parts.push(format!("id={}", i.0));
        }
        format!("{} -> {}", parts.join(" "), self.class)
    }

    /// Why this selector can never match anything, if so.
    pub(crate) fn never_matches(&self) -> Option<String> {
        if self.cgroup.is_none()
            && self.runtime.is_none()
            && self.name.is_none()
            && self.id.is_none()
        {
            return Some("a selector needs at least one of cgroup, runtime, name, id (cgroup = \"/**\" selects every cgroup)".into());
        }
        match self.runtime {
            Some(r) if !r.is_container() && self.id.is_some() => Some(format!(
                "selector can never match: {r} cgroups have no container id"
            )),
            Some(Runtime::Plain) if self.name.is_some() => Some(
                "selector can never match: plain cgroups have no name; select them by cgroup"
                    .into(),
            ),
            _ => None,
        }
    }
}
