//! The broker protocol, shared by libscm (the client) and `memext pmem-broker`.
//! One request line, one reply line; an `OK` reply carries the region file's
//! descriptor as SCM_RIGHTS. Pure: parsing and formatting only.
//!
//! ```text
//! -> OPEN <name> <size> <create:0|1>\n
//! <- OK <size> <backing>\n          (+ the fd)
//! <- ERR <reason>\n
//! ```

/// Longest request or reply line accepted.
pub const MAX_LINE: usize = 256;
pub const MAX_NAME: usize = 64;

/// The socket libscm asks when `SCM_BROKER_SOCKET` is not set.
pub const DEFAULT_SOCKET: &str = "/run/memext/pmem/pmem.sock";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenRequest {
    pub name: String,
    /// Bytes wanted; 0 opens an existing region at its size.
    pub size: u64,
    pub create: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    Ok { size: u64, backing: String },
    Err { reason: String },
}

/// A region name: 1–64 of `[A-Za-z0-9_.-]`, not starting with a dot, so it can
/// never name a parent directory, a hidden file or a path.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

impl OpenRequest {
    pub fn to_line(&self) -> String {
        format!(
            "OPEN {} {} {}\n",
            self.name,
            self.size,
            u8::from(self.create)
        )
    }

    /// Parses a request line; the error says what is wrong with it.
    pub fn parse(line: &str) -> Result<Self, String> {
        let line = line
            .strip_suffix('\n')
            .ok_or("request line not terminated")?;
        if line.len() > MAX_LINE {
            return Err("request line too long".into());
        }
        let parts: Vec<&str> = line.split(' ').collect();
        let [verb, name, size, create] = parts.as_slice() else {
            return Err(format!(
                "expected 'OPEN name size create', got {} fields",
                parts.len()
            ));
        };
        if *verb != "OPEN" {
            return Err("unknown verb".into());
        }
        if !valid_name(name) {
            return Err("invalid region name".into());
        }
        let size = size
            .parse::<u64>()
            .map_err(|_| "size is not a number".to_string())?;
        let create = match *create {
            "0" => false,
            "1" => true,
            _ => return Err("create must be 0 or 1".into()),
        };
        Ok(Self {
            name: (*name).to_string(),
            size,
            create,
        })
    }
}

impl Reply {
    pub fn to_line(&self) -> String {
        match self {
            Reply::Ok { size, backing } => format!("OK {size} {backing}\n"),
            Reply::Err { reason } => {
                let clean: String = reason
                    .chars()
                    .map(|c| if c.is_control() { ' ' } else { c })
                    .take(200)
                    .collect();
                format!("ERR {clean}\n")
            }
        }
    }

    pub fn parse(line: &str) -> Result<Self, String> {
        let line = line.strip_suffix('\n').ok_or("reply line not terminated")?;
        if let Some(reason) = line.strip_prefix("ERR ") {
            return Ok(Reply::Err {
                reason: reason.to_string(),
            });
        }
        let rest = line
            .strip_prefix("OK ")
            .ok_or("reply is neither OK nor ERR")?;
        let (size, backing) = rest.split_once(' ').ok_or("OK reply without backing")?;
        let size = size
            .parse::<u64>()
            .map_err(|_| "size is not a number".to_string())?;
        Ok(Reply::Ok {
            size,
            backing: backing.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_could_escape_the_root_are_invalid() {
        for bad in [
            "",
            "..",
            ".",
            "../x",
            "a/b",
            ".hidden",
            "x\0y",
            "a b",
            &"n".repeat(65),
            "é",
        ] {
            assert!(!valid_name(bad), "{bad:?} must be refused");
        }
        for good in ["data", "redis-heap.0", "A_1", &"n".repeat(64)] {
            assert!(valid_name(good), "{good:?} must be accepted");
        }
    }

    #[test]
    fn requests_round_trip_and_bad_ones_say_why() {
        let r = OpenRequest {
            name: "heap".into(),
            size: 1 << 30,
            create: true,
        };
        assert_eq!(OpenRequest::parse(&r.to_line()), Ok(r));
        assert!(OpenRequest::parse("OPEN ../etc 10 1\n")
            .expect_err("refused")
            .contains("name"));
        assert!(OpenRequest::parse("OPEN a -1 1\n")
            .expect_err("refused")
            .contains("size"));
        assert!(OpenRequest::parse("OPEN a 1 2\n")
            .expect_err("refused")
            .contains("create"));
        assert!(OpenRequest::parse("OPEN a 1 1")
            .expect_err("refused")
            .contains("terminated"));
        assert!(OpenRequest::parse("OPEN a 1 1 extra\n").is_err());
        assert!(OpenRequest::parse("DELETE a 1 1\n").is_err());
    }

    #[test]
    fn replies_round_trip_and_errors_cannot_inject_lines() {
        let ok = Reply::Ok {
            size: 4096,
            backing: "tmpfs".into(),
        };
        assert_eq!(Reply::parse(&ok.to_line()), Ok(ok));
        let line = Reply::Err {
            reason: "quota\nOK 1 x".into(),
        }
        .to_line();
        assert_eq!(line.matches('\n').count(), 1);
        assert_eq!(
            Reply::parse(&line),
            Ok(Reply::Err {
                reason: "quota OK 1 x".into()
            })
        );
        assert!(Reply::parse("HELLO\n").is_err());
    }
}
