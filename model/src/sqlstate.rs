//! PostgreSQL's SQLSTATEs among MySQL's numeric error codes: a run counts ignored errors
//! by code (`DbCounters::errors_by_code`, a `u32` on the wire), so a SQLSTATE travels as a
//! number of its own, its five characters in base 36 with the top bit set, which no
//! MySQL code reaches. Reports write it as PostgreSQL's manual does, `SQLSTATE 40001`:
//! the bare five characters could be a MySQL code (23505, 40001).

/// The top bit: this code is a SQLSTATE.
const FLAG: u32 = 0x8000_0000;

/// `40P01` as a code; None unless five characters of 0-9 and A-Z (lower case is raised).
pub fn encode(state: &str) -> Option<u32> {
    let b = state.as_bytes();
    if b.len() != 5 {
        return None;
    }
    let mut v: u32 = 0;
    for &c in b {
        let d = match c.to_ascii_uppercase() {
            c @ b'0'..=b'9' => c - b'0',
            c @ b'A'..=b'Z' => c - b'A' + 10,
            _ => return None,
        };
        v = v * 36 + u32::from(d);
    }
    Some(FLAG | v)
}

/// Whether `code` stands for a SQLSTATE.
#[inline]
pub fn is_sqlstate(code: u32) -> bool {
    code & FLAG != 0
}

/// The text reports write before a SQLSTATE.
const PREFIX: &str = "SQLSTATE ";

/// A code as reports write it: `SQLSTATE 40P01`, else the number.
pub fn name(code: u32) -> String {
    if !is_sqlstate(code) {
        return code.to_string();
    }
    format!("{PREFIX}{}", state(code))
}

/// A SQLSTATE code's five characters (as [`encode`] takes them).
pub fn state(code: u32) -> String {
    let mut v = code & !FLAG;
    let mut out = [b'0'; 5];
    for slot in out.iter_mut().rev() {
        let d = (v % 36) as u8;
        *slot = if d < 10 { b'0' + d } else { b'A' + d - 10 };
        v /= 36;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A code as a report wrote it ([`name`]) read back.
pub fn parse(text: &str) -> Option<u32> {
    match text.strip_prefix(PREFIX) {
        Some(state) => encode(state),
        None => text.parse::<u32>().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_round_trip_and_stay_apart_from_mysql_codes() {
        for s in ["40P01", "23505", "40001", "00000", "ZZZZZ", "57P01"] {
            let c = encode(s).unwrap();
            assert!(is_sqlstate(c), "{s}");
            assert_eq!(name(c), format!("SQLSTATE {s}"));
            assert_eq!(parse(&name(c)), Some(c));
        }
        assert_eq!(encode("40p01"), encode("40P01"));
        assert!(!is_sqlstate(1213));
        assert_eq!(name(1213), "1213");
        assert_eq!(parse("1213"), Some(1213));
        assert_eq!(parse("23505"), Some(23505), "a number stays a MySQL code");
        for bad in ["4001", "400011", "40-01", ""] {
            assert_eq!(encode(bad), None, "{bad}");
        }
    }
}
