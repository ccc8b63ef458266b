//! Where result files go: `--json`, `--csv`, `--html` and `--hlog` (and `report FILE --html`).
//!
//! - Every path is checked before anything runs ([`check_all`]): its directory exists and can
//!   be written, so a typo costs a second instead of a whole run. Refusals are one line and
//!   exit code 2.
//! - A regular file, or a path where nothing is yet, is replaced atomically: the document is
//!   written to a temporary file beside it and renamed over it, so a reader never sees half
//!   a file.
//! - Anything else is written through, never replaced: a symbolic link is followed and its
//!   target written (the link stays), a FIFO or a character device (`/dev/null`, a terminal)
//!   is opened and written in place. Block devices, sockets and directories are refused.
//! - `-` is standard output; the text report then goes to stderr (report::stdout).
//!
//! docs/output-files.md describes this for users.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use crate::cli::RawArgs;
use crate::error::UsageError;
use crate::report::stdout;

/// How a path is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `-`: standard output.
    Stdout,
    /// A regular file or nothing yet: a temporary file renamed over it.
    Replace,
    /// A symbolic link, a FIFO or a character device: opened and written in place.
    Through,
}

/// Whether `path` means standard output.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str().as_bytes() == b"-"
}

/// How `path` is to be written, from what is there now; an error for what is never
/// written (a directory, a block device, a socket).
pub fn mode(path: &Path) -> io::Result<Mode> {
    if is_stdout(path) {
        return Ok(Mode::Stdout);
    }
    let meta = match std::fs::symlink_metadata(path) {
        // Nothing there (or a file where a directory should be, which check() reports).
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(Mode::Replace);
        }
        other => other?,
    };
    let t = meta.file_type();
    if t.is_file() {
        Ok(Mode::Replace)
    } else if t.is_symlink() {
        // What the link points at decides, once more by the same rules.
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => Err(refusal("is a link to a directory")),
            Ok(m) if m.file_type().is_block_device() => Err(refusal("is a link to a block device")),
            Ok(m) if m.file_type().is_socket() => Err(refusal("is a link to a socket")),
            _ => Ok(Mode::Through),
        }
    } else if t.is_fifo() || t.is_char_device() {
        Ok(Mode::Through)
    } else if t.is_dir() {
        Err(refusal("is a directory"))
    } else if t.is_block_device() {
        Err(refusal(
            "is a block device, which fleetbench never writes a report to",
        ))
    } else {
        Err(refusal("is a socket"))
    }
}

fn refusal(why: &str) -> io::Error {
    io::Error::other(why.to_string())
}

/// Checks every output path of the command line before anything runs, and prepares
/// standard output for them: at most one of them may be `-`, and when one is, the text
/// report goes to stderr.
pub fn check_all(raw: &RawArgs) -> Result<(), UsageError> {
    let outputs = [
        ("--json", &raw.json),
        ("--csv", &raw.csv),
        ("--html", &raw.html),
        ("--hlog", &raw.hlog),
    ];
    let given: Vec<(&str, &PathBuf)> = outputs
        .iter()
        .filter_map(|(flag, p)| p.as_ref().map(|p| (*flag, p)))
        .collect();
    let on_stdout: Vec<&str> = given
        .iter()
        .filter(|(_, p)| is_stdout(p))
        .map(|(f, _)| *f)
        .collect();
    if on_stdout.len() > 1 {
        return Err(UsageError(format!(
            "{} all ask for standard output ('-'): give '-' to one of them only",
            on_stdout.join(" and ")
        )));
    }
    for (flag, path) in &given {
        check(path).map_err(|why| UsageError(format!("{flag} {}: {why}", path.display())))?;
    }
    same_file(&given)?;
    if !on_stdout.is_empty() {
        stdout::divert_text();
    }
    if given.len() > on_stdout.len() {
        stdout::files_pending();
    }
    Ok(())
}

/// Refuses two outputs that name one file, by whatever path or link: one result would
/// overwrite the other. A character device (`/dev/null`) may take several.
fn same_file(given: &[(&str, &PathBuf)]) -> Result<(), UsageError> {
    let files: Vec<(&str, &PathBuf, PathBuf)> = given
        .iter()
        .filter(|(_, p)| !is_stdout(p))
        .filter(|(_, p)| !std::fs::metadata(p).is_ok_and(|m| m.file_type().is_char_device()))
        .filter_map(|(flag, p)| Some((*flag, *p, resolved(p)?)))
        .collect();
    for (i, (flag, path, at)) in files.iter().enumerate() {
        if let Some((other, other_path, _)) = files[..i].iter().find(|(_, _, a)| a == at) {
            let shown = if other_path == path {
                path.display().to_string()
            } else {
                format!("{} and {}", other_path.display(), path.display())
            };
            return Err(UsageError(format!(
                "{other} and {flag} both name {shown} ({}): give each output a file of its own",
                at.display()
            )));
        }
    }
    Ok(())
}

/// The file `path` names once links are followed, whether or not it exists yet (a link to
/// a file not yet there names that file); None where the directory cannot be resolved.
fn resolved(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = std::fs::canonicalize(path) {
        return Some(p);
    }
    let target = match std::fs::read_link(path) {
        Ok(t) => dir_of(path).join(t),
        Err(_) => path.to_path_buf(),
    };
    let name = target.file_name()?;
    Some(std::fs::canonicalize(dir_of(&target)).ok()?.join(name))
}

/// Whether `path` can be written: the reason when not, as the end of one line.
pub fn check(path: &Path) -> Result<(), String> {
    match mode(path).map_err(|e| e.to_string())? {
        Mode::Stdout => Ok(()),
        Mode::Replace => writable_dir(&dir_of(path)),
        Mode::Through => match std::fs::metadata(path) {
            // A link whose target does not exist yet: the target is created in its directory.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let target = std::fs::read_link(path).map_err(|e| e.to_string())?;
                let target = dir_of(path).join(target);
                writable_dir(&dir_of(&target))
            }
            Err(e) => Err(e.to_string()),
            Ok(_) => {
                access(path, libc::W_OK).map_err(|e| format!("cannot be opened for writing: {e}"))
            }
        },
    }
}

/// The directory a file at `path` is created in.
fn dir_of(path: &Path) -> PathBuf {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

fn writable_dir(dir: &Path) -> Result<(), String> {
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            Err(format!("the directory {} does not exist", dir.display()))
        }
        Err(e) => Err(format!("cannot use the directory {}: {e}", dir.display())),
        Ok(m) if !m.is_dir() => Err(format!("{} is not a directory", dir.display())),
        Ok(_) => access(dir, libc::W_OK | libc::X_OK)
            .map_err(|e| format!("cannot write in the directory {}: {e}", dir.display())),
    }
}

/// access(2): whether this process may use `path` so (a read-only file system included).
fn access(path: &Path, how: libc::c_int) -> io::Result<()> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "the path holds a NUL byte"))?;
    // SAFETY: `c` is a valid NUL-terminated string that outlives the call.
    if unsafe { libc::access(c.as_ptr(), how) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Writes a document to `path` through `body`, by the rules of this module: standard
/// output, a temporary file renamed over a regular one, or in place through a link, FIFO or
/// device. The writer `body` gets is buffered; errors are returned, never panics.
pub fn write(path: &Path, body: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    match mode(path)? {
        Mode::Stdout => stdout::write_document(body),
        Mode::Replace => replace(path, body),
        Mode::Through => {
            let file = open_through(path)?;
            let mut w = BufWriter::new(file);
            body(&mut w)?;
            w.flush()
        }
    }
}

/// Opens `path` to be written as it goes (the HdrHistogram log): standard output for `-`,
/// else the file, created or truncated, through any link, FIFO or device. Also whether the
/// path is a regular file this command may remove again (never a link, FIFO, device or
/// standard output).
pub fn open_progressive(path: &Path) -> io::Result<(File, bool)> {
    match mode(path)? {
        Mode::Stdout => {
            use std::os::fd::AsFd;
            let fd = io::stdout().as_fd().try_clone_to_owned()?;
            Ok((File::from(fd), false))
        }
        Mode::Replace => Ok((File::create(path)?, true)),
        Mode::Through => Ok((open_through(path)?, false)),
    }
}

/// Opens a link's target, a FIFO (waiting for its reader) or a device for writing, in place.
fn open_through(path: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
}

/// Writes to a temporary file in the same directory, then renames it over `path`.
fn replace(path: &Path, body: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir_of(path).join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut w = BufWriter::new(File::create(&tmp)?);
        body(&mut w)?;
        let f = w.into_inner().map_err(|e| e.into_error())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    struct Dir(PathBuf);
    impl Dir {
        fn new(label: &str) -> Dir {
            let d = std::env::temp_dir()
                .join(format!("fleetbench-output-{}-{label}", std::process::id()));
            let _ = std::fs::remove_dir_all(&d);
            std::fs::create_dir_all(&d).unwrap();
            Dir(d)
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn text(s: &'static str) -> impl FnOnce(&mut dyn Write) -> io::Result<()> {
        move |w| w.write_all(s.as_bytes())
    }

    #[test]
    fn a_regular_file_is_replaced_and_no_temporary_file_is_left() {
        let d = Dir::new("replace");
        let p = d.0.join("r.json");
        std::fs::write(&p, "old and longer").unwrap();
        write(&p, text("new")).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        let names: Vec<_> = std::fs::read_dir(&d.0).unwrap().collect();
        assert_eq!(names.len(), 1);
        assert_eq!(mode(&p).unwrap(), Mode::Replace);
        assert_eq!(mode(&d.0.join("missing")).unwrap(), Mode::Replace);
    }

    #[test]
    fn a_symlink_is_kept_and_its_target_written() {
        let d = Dir::new("link");
        let target = d.0.join("target.json");
        std::fs::write(&target, "old and longer").unwrap();
        let link = d.0.join("link.json");
        symlink(&target, &link).unwrap();
        assert_eq!(mode(&link).unwrap(), Mode::Through);
        write(&link, text("new")).unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        // A dangling link: its target is created.
        let dangling = d.0.join("dangling.json");
        symlink("made.json", &dangling).unwrap();
        check(&dangling).unwrap();
        write(&dangling, text("made")).unwrap();
        assert_eq!(
            std::fs::read_to_string(d.0.join("made.json")).unwrap(),
            "made"
        );
    }

    #[test]
    fn a_missing_directory_and_a_directory_are_refused_before_writing() {
        let d = Dir::new("refuse");
        let e = check(&d.0.join("nope/r.json")).unwrap_err();
        assert!(e.contains("does not exist"), "{e}");
        let e = check(&d.0).unwrap_err();
        assert!(e.contains("is a directory"), "{e}");
        assert!(check(Path::new("-")).is_ok());
        assert!(check(Path::new("r.json")).is_ok());
        assert_eq!(mode(Path::new("-")).unwrap(), Mode::Stdout);
        let file = d.0.join("plain");
        std::fs::write(&file, "").unwrap();
        let e = check(&file.join("r.json")).unwrap_err();
        assert!(e.contains("is not a directory"), "{e}");
    }

    #[test]
    fn character_devices_are_written_through() {
        // Looked at, never written: the end-to-end tests write a private copy (mknod).
        assert_eq!(mode(Path::new("/dev/null")).unwrap(), Mode::Through);
        let e = write(Path::new("/dev/full"), text("x")).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{e}");
    }

    #[test]
    fn a_failing_body_leaves_the_old_file_and_no_temporary() {
        let d = Dir::new("fail");
        let p = d.0.join("r.json");
        std::fs::write(&p, "old").unwrap();
        let e = write(&p, |_| Err(io::Error::other("boom"))).unwrap_err();
        assert_eq!(e.to_string(), "boom");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
        assert_eq!(std::fs::read_dir(&d.0).unwrap().count(), 1);
    }
}
