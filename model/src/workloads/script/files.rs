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
    #[error(
        "{dir} holds {count} .lua files beside the script {path}, more than the {cap} shipped to the agents with it; move the script and the modules it needs into a directory of their own"
    )]
    TooMany {
        path: String,
        dir: String,
        count: usize,
        cap: usize,
    },
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
        // A device or a huge file is refused at the cap, not read whole.
        let capped = |p: &Path| {
            crate::capped::read(p, "", MAX_TOTAL_BYTES as u64).map_err(|e| match e {
                crate::capped::CappedError::Io { error, .. } => FilesError::Read {
                    path: p.display().to_string(),
                    why: error.to_string(),
                },
                _ => FilesError::TooBig {
                    path: shown.clone(),
                    cap: MAX_TOTAL_BYTES,
                },
            })
        };
        let text = String::from_utf8(capped(path)?).map_err(|_| FilesError::Read {
            path: shown.clone(),
            why: "it is not UTF-8 text".into(),
        })?;
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
        // No silent subset: a module left behind would fail only on the agents.
        let others = beside
            .iter()
            .filter(|p| p.file_name() != Some(main.as_ref()))
            .count();
        if others > MAX_FILES {
            return Err(FilesError::TooMany {
                path: shown.clone(),
                dir: dir.display().to_string(),
                count: others,
                cap: MAX_FILES,
            });
        }
        for p in beside {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if name == main {
                continue;
            }
            // Files that are not text are not Lua modules either.
            let Ok(t) = String::from_utf8(capped(&p)?) else {
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
    fn more_modules_than_are_shipped_are_refused_not_cut() {
        let dir = std::env::temp_dir().join(format!("fb-files-many-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("main.lua"), "function event() end").unwrap();
        for i in 0..MAX_FILES {
            std::fs::write(dir.join(format!("m{i:03}.lua")), "return {}").unwrap();
        }
        // Exactly the cap beside the script: all of them go.
        let f = Files::read(&dir.join("main.lua")).unwrap();
        assert_eq!(f.files.len(), MAX_FILES + 1);
        std::fs::write(dir.join("zzz.lua"), "return {}").unwrap();
        let e = Files::read(&dir.join("main.lua")).unwrap_err();
        assert!(
            matches!(e, FilesError::TooMany { count, .. } if count == MAX_FILES + 1),
            "{e}"
        );
        assert!(e.to_string().contains("257 .lua files"), "{e}");
        // A device is refused at the cap, not read whole.
        let e = Files::read(Path::new("/dev/zero")).unwrap_err();
        assert!(matches!(e, FilesError::TooBig { .. }), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

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
