//! Reading the files a user names (tokens, certificates, keys, scenario files, result
//! documents) with a size cap, so that a wrong path such as `/dev/zero` or a multi-gigabyte
//! log is refused with one line naming the file and the cap, instead of growing the process
//! until it dies. The agent and the coordinator both read through [`read`] and
//! [`read_to_string`].
//!
//! A regular file longer than the cap is refused from its size alone; anything else (a
//! device, a pipe) is read through `Read::take(cap + 1)`, so at most one byte more than the
//! cap is ever held.

use std::io::Read;
use std::path::{Path, PathBuf};

/// Tokens, certificates and private keys: 1 MiB (a PEM chain of a dozen certificates is
/// under 30 KiB).
pub const SECRET_CAP: u64 = 1 << 20;
/// Scenario files: 16 MiB.
pub const SCENARIO_CAP: u64 = 16 << 20;
/// Result documents read back by `compare` and `report`: 256 MiB (a day of one-second
/// intervals over a dozen agents is well under it).
pub const RESULT_CAP: u64 = 256 << 20;

/// Why a file was not read. The message is one line naming the file.
#[derive(Debug, thiserror::Error)]
pub enum CappedError {
    #[error("cannot read {}: {error}", named(what, path))]
    Io {
        what: &'static str,
        path: PathBuf,
        error: std::io::Error,
    },
    #[error(
        "{} is larger than {}, the most fleetbench reads for it: refused",
        named(what, path),
        size(*cap)
    )]
    TooLarge {
        what: &'static str,
        path: PathBuf,
        cap: u64,
    },
    #[error("{} is not UTF-8 text", named(what, path))]
    NotText { what: &'static str, path: PathBuf },
}

/// The bytes of `path` (described to the user as `what`, e.g. "the token file", or as its
/// path alone when `what` is empty), or an
/// error when it cannot be read or holds more than `cap` bytes.
pub fn read(path: &Path, what: &'static str, cap: u64) -> Result<Vec<u8>, CappedError> {
    let io = |error| CappedError::Io {
        what,
        path: path.to_path_buf(),
        error,
    };
    let too_large = || CappedError::TooLarge {
        what,
        path: path.to_path_buf(),
        cap,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if meta.is_file() && meta.len() > cap {
        return Err(too_large());
    }
    let mut buf = Vec::with_capacity(if meta.is_file() {
        meta.len() as usize
    } else {
        0
    });
    file.take(cap.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(io)?;
    if buf.len() as u64 > cap {
        return Err(too_large());
    }
    Ok(buf)
}

/// Like [`read`], for a text file.
pub fn read_to_string(path: &Path, what: &'static str, cap: u64) -> Result<String, CappedError> {
    String::from_utf8(read(path, what, cap)?).map_err(|_| CappedError::NotText {
        what,
        path: path.to_path_buf(),
    })
}

/// "the token file /path", or the path alone when `what` is empty.
fn named(what: &str, path: &Path) -> String {
    if what.is_empty() {
        path.display().to_string()
    } else {
        format!("{what} {}", path.display())
    }
}

/// A cap as people write it: "1 MiB", "16 MiB", else bytes.
fn size(cap: u64) -> String {
    match cap {
        c if c >= 1 << 20 && c.is_multiple_of(1 << 20) => format!("{} MiB", c >> 20),
        c if c >= 1 << 10 && c.is_multiple_of(1 << 10) => format!("{} KiB", c >> 10),
        c => format!("{c} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fleetbench-capped-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d.join(name)
    }

    #[test]
    fn a_file_up_to_the_cap_is_read_whole() {
        let p = scratch("exact");
        std::fs::write(&p, b"0123456789").unwrap();
        assert_eq!(read(&p, "the test file", 10).unwrap(), b"0123456789");
        assert_eq!(
            read_to_string(&p, "the test file", 64).unwrap(),
            "0123456789"
        );
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn a_regular_file_over_the_cap_is_refused_naming_file_and_cap() {
        let p = scratch("over");
        std::fs::write(&p, vec![b'x'; 2048]).unwrap();
        let e = read(&p, "the token file", 1024).unwrap_err().to_string();
        assert!(e.contains(&p.display().to_string()), "{e}");
        assert!(e.contains("the token file"), "{e}");
        assert!(e.contains("1 KiB"), "{e}");
        assert!(!e.contains('\n'), "{e}");
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn an_endless_device_is_refused_after_cap_plus_one_bytes() {
        let started = std::time::Instant::now();
        let e = read(Path::new("/dev/zero"), "the CA file", SECRET_CAP).unwrap_err();
        assert!(matches!(e, CappedError::TooLarge { .. }), "{e}");
        assert!(e.to_string().contains("1 MiB"), "{e}");
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn a_missing_file_and_binary_text_say_so() {
        let e = read(Path::new("/nonexistent/x"), "the scenario file", 10).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("cannot read the scenario file /nonexistent/x: "),
            "{e}"
        );
        let p = scratch("binary");
        std::fs::write(&p, [0xff, 0xfe]).unwrap();
        let e = read_to_string(&p, "the token file", 10).unwrap_err();
        assert!(matches!(e, CappedError::NotText { .. }), "{e}");
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn caps_are_written_in_binary_units() {
        assert_eq!(size(SECRET_CAP), "1 MiB");
        assert_eq!(size(SCENARIO_CAP), "16 MiB");
        assert_eq!(size(1000), "1000 bytes");
    }
}
