//! A script and the modules it can load: read on the coordinator from the script's
//! directory and shipped to the agents in the Start message, so that an agent never reads
//! a script from its own disk. `require("x")`, `dofile(".../x.lua")` and `loadfile` look a
//! file up here by its name.

use std::path::{Path, PathBuf};

/// At most this many bytes of Lua over all files: a run's Start message carries them, and
/// an agent decodes messages of at most 4 MiB (gRPC's default), the rest of the Start
/// included.
pub const MAX_TOTAL_BYTES: usize = 2 << 20;
// Room for the rest of the Start under gRPC's 4 MiB, checked when this compiles.
const _: () = assert!(MAX_TOTAL_BYTES <= 3 << 20);
/// At most this many bytes of command line in `sysbench.cmdline.argv`: every Lua state of a
/// run holds a copy.
pub const MAX_ARGV_BYTES: usize = 64 << 10;
/// At most this many files beside the script.
pub const MAX_FILES: usize = 256;

/// A script and its modules, by file name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Files {
    /// The script as the user named it (shown in reports and errors).
    pub path: String,
    /// The script's file name: the key of its text in `files`.
    pub main: String,
    /// Every file by its name (`oltp_common.lua`), the script's own included.
    pub files: Vec<(String, String)>,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum FilesError {
    #[error("cannot read the script {path}: {why}")]
    Read { path: String, why: String },
    #[error(
        "the script {path} and the .lua files beside it come to more than {cap} bytes; move the script into a directory of its own"
    )]
    TooBig { path: String, cap: usize },
}

impl Files {
    /// The text of file `name` (a module's name with `.lua`, or a path whose last part
    /// is such a name).
    pub fn get(&self, name: &str) -> Option<&str> {
        let base = name.rsplit('/').next().unwrap_or(name);
        self.files
            .iter()
            .find(|(n, _)| n == base)
            .map(|(_, t)| t.as_str())
    }

    /// The script's own text.
    pub fn main_text(&self) -> &str {
        self.get(&self.main).unwrap_or_default()
    }

    /// The script's name without directory and `.lua` (`oltp_read_write`): the test's name.
    pub fn stem(&self) -> &str {
        self.main.strip_suffix(".lua").unwrap_or(&self.main)
    }

    /// Reads the script at `path` and every other `.lua` file in its directory (modules it
    /// may `require`), up to [`MAX_FILES`] and [`MAX_TOTAL_BYTES`] in all; files that are
    /// not valid UTF-8 are left out.
    pub fn read(path: &Path) -> Result<Files, FilesError> {
        let shown = path.display().to_string();
        let read_err = |e: std::io::Error| FilesError::Read {
            path: shown.clone(),
            why: e.to_string(),
        };
        let text = std::fs::read_to_string(path).map_err(read_err)?;
        let main = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| shown.clone());
        let mut total = text.len();
        let too_big = || FilesError::TooBig {
            path: shown.clone(),
            cap: MAX_TOTAL_BYTES,
        };
        if total > MAX_TOTAL_BYTES {
            return Err(too_big());
        }
        let mut files = vec![(main.clone(), text)];
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut beside: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|rd| {
                rd.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "lua") && p.is_file())
                    .collect()
            })
            .unwrap_or_default();
        beside.sort();
        for p in beside.into_iter().take(MAX_FILES) {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if name == main {
                continue;
            }
            let Ok(t) = std::fs::read_to_string(&p) else {
                continue;
            };
            total += t.len();
            if total > MAX_TOTAL_BYTES {
                return Err(too_big());
            }
            files.push((name, t));
        }
        // By name, as the wire's map gives them back.
        files.sort();
        Ok(Files {
            path: shown,
            main,
            files,
        })
    }
}

/// What a script argument names: `path` when it is a file, else `NAME.lua` in the current
/// directory (sysbench's lookup), else None (a built-in test, or nothing).
pub fn resolve(arg: &str) -> Option<PathBuf> {
    let p = Path::new(arg);
    if arg.ends_with(".lua") || arg.contains('/') {
        return p.is_file().then(|| p.to_path_buf());
    }
    let with = PathBuf::from(format!("{arg}.lua"));
    with.is_file().then_some(with)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_script_and_the_modules_beside_it() {
        let dir = std::env::temp_dir().join(format!("fb-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.lua"), "require('common')").unwrap();
        std::fs::write(dir.join("common.lua"), "x = 1").unwrap();
        std::fs::write(dir.join("notes.txt"), "not lua").unwrap();
        let f = Files::read(&dir.join("a.lua")).unwrap();
        assert_eq!(f.main, "a.lua");
        assert_eq!(f.stem(), "a");
        assert_eq!(f.main_text(), "require('common')");
        assert_eq!(f.get("common.lua"), Some("x = 1"));
        assert_eq!(f.get("/somewhere/else/common.lua"), Some("x = 1"));
        assert_eq!(f.get("notes.txt"), None);
        assert_eq!(f.files.len(), 2);
        let missing = Files::read(&dir.join("nope.lua")).unwrap_err();
        assert!(missing.to_string().contains("nope.lua"), "{missing}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn resolve_finds_paths_and_names_in_the_current_directory_only() {
        assert_eq!(resolve("oltp_read_write"), None);
        assert_eq!(resolve("/no/such/x.lua"), None);
        assert_eq!(resolve("Cargo.toml"), None);
    }
}
