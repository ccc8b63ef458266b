//! Run ids and the ways a user names a run: a whole id, a unique prefix of one, `last`
//! (the newest) or `last~N` (the N-th before it). Pure, beside its tests.

use crate::CatalogError;

/// How a user named a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdSpec {
    /// `last` (0) or `last~N`: the newest run, or the N-th before it.
    Last(u32),
    /// A whole id or a prefix of one (at least 4 characters of 0-9a-f).
    Prefix(String),
}

impl IdSpec {
    /// Parses what the user typed.
    pub fn parse(s: &str) -> Result<IdSpec, CatalogError> {
        let s = s.trim();
        if s == "last" {
            return Ok(IdSpec::Last(0));
        }
        if let Some(n) = s.strip_prefix("last~") {
            return n.parse::<u32>().map(IdSpec::Last).map_err(|_| {
                CatalogError::BadId(s.into(), "last~N takes a whole number, e.g. last~1".into())
            });
        }
        let hex = s.len() >= 4 && s.len() <= ID_LEN && s.bytes().all(|b| b.is_ascii_hexdigit());
        if !hex {
            return Err(CatalogError::BadId(
                s.into(),
                format!(
                    "a run is named by its id (4 to {ID_LEN} of 0-9a-f, a unique prefix will do), last or last~N"
                ),
            ));
        }
        Ok(IdSpec::Prefix(s.to_ascii_lowercase()))
    }
}

/// An id's length: 8 hex digits of the start's seconds, 6 more of chance.
pub const ID_LEN: usize = 14;

/// A new id for a run that started at `started_ms`: ordered by start (to the second), then
/// by `noise` (random bits from the caller).
pub fn new_id(started_ms: i64, noise: u32) -> String {
    let secs = (started_ms.max(0) / 1000) as u64 & 0xffff_ffff;
    format!("{secs:08x}{:06x}", noise & 0xff_ffff)
}

/// Random bits without a crate: the clock's nanoseconds and the process id, mixed.
pub fn noise() -> u32 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() ^ (d.as_secs() as u32).rotate_left(7))
        .unwrap_or(0);
    let mut x = u64::from(nanos) ^ (u64::from(std::process::id()) << 24);
    // splitmix64's finaliser: nearby inputs give unrelated outputs.
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (x ^ (x >> 31)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_runs_parse_or_say_what_is_expected() {
        assert_eq!(IdSpec::parse("last").unwrap(), IdSpec::Last(0));
        assert_eq!(IdSpec::parse("last~3").unwrap(), IdSpec::Last(3));
        assert_eq!(
            IdSpec::parse("65A1b2").unwrap(),
            IdSpec::Prefix("65a1b2".into())
        );
        for bad in ["last~", "last~x", "abc", "zzzzzz", "0123456789abcdef0", ""] {
            let e = IdSpec::parse(bad).unwrap_err().to_string();
            assert!(e.contains(bad) && e.contains("last"), "{bad}: {e}");
        }
    }

    #[test]
    fn ids_sort_by_their_start_and_have_a_fixed_length() {
        let a = new_id(1_700_000_000_000, 0xffff_ffff);
        let b = new_id(1_700_000_001_000, 0);
        assert_eq!((a.len(), b.len()), (ID_LEN, ID_LEN));
        assert!(a < b, "{a} {b}");
        assert!(IdSpec::parse(&a).is_ok());
        assert_ne!(noise(), noise() ^ 1);
    }
}
