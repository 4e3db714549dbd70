//! What the end of `osmosis eval run` writes for one record of its results log, from the raw log line:
//! the ATIF document's bytes, the `index.jsonl` line, and the two files the document is written to.
//! Each gives `None` where Python must do it (`osmosis_ai.eval.run_dir` / `run_files` then parse the line
//! themselves), so the files stay byte for byte what the Python writers make.

use super::build::{conversation, eval_run_document};
use super::json_text::{compact, spaced_ascii};
use super::json_tree::{Json, Obj};
use crate::secrets::SecretMasker;
use std::borrow::Cow;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The fields of an index row, in its order (Python's writer reads them as `_core.EVAL_RUN_INDEX_KEYS`).
pub const INDEX_KEYS: [&str; 11] = [
    "row_index",
    "run_index",
    "source_row_index",
    "rollout_id",
    "trajectory_filename",
    "status",
    "reward",
    "tokens",
    "duration_ms",
    "error_type",
    "resumed",
];

/// One results log record of a run, borrowing its line's text.
pub struct RunRecord<'a> {
    pub record: Obj<'a>,
    /// Whether it has a conversation (so a trajectory file named `trajectory.json`).
    pub conversation: bool,
}

impl<'a> RunRecord<'a> {
    /// The record of a line, or None when the line is not one JSON object.
    pub fn parse(line: &'a [u8]) -> Option<RunRecord<'a>> {
        let text = simdutf8::basic::from_utf8(line).ok()?;
        match Json::parse(text)? {
            Json::Object(record) => {
                let conversation = conversation(&record).is_some();
                Some(RunRecord {
                    record,
                    conversation,
                })
            }
            _ => None,
        }
    }

    /// The record's `rollout_id` when it is text.
    pub fn rollout_id(&self) -> Option<&str> {
        self.record.get("rollout_id").and_then(Json::as_str)
    }

    /// `row_<row>_run_<run>` (Python's f-string of the indices) when both are integers.
    pub fn item_name(&self) -> Option<String> {
        let index = |key: &str| match self.record.get(key)? {
            Json::Int(n) => Some(n.to_string()),
            Json::UInt(n) => Some(n.to_string()),
            _ => None,
        };
        Some(format!(
            "row_{}_run_{}",
            index("row_index")?,
            index("run_index")?
        ))
    }

    /// The `index.jsonl` line (`json.dumps(row)` and a newline), `resumed` marking a carried result.
    pub fn index_line(&self, resumed: bool) -> Option<Vec<u8>> {
        static TRAJECTORY_FILE: Json<'static> = Json::Str(Cow::Borrowed("trajectory.json"));
        static TRUE: Json<'static> = Json::Bool(true);
        let mut out = Vec::with_capacity(256);
        out.push(b'{');
        // Written member by member, without a row object: the keys are plain ASCII, each once.
        for key in INDEX_KEYS {
            let value = match key {
                "trajectory_filename" if self.conversation => &TRAJECTORY_FILE,
                "resumed" if resumed => &TRUE,
                _ => match self.record.get(key) {
                    Some(value) if !value.is_null() => value,
                    _ => continue,
                },
            };
            if out.len() > 1 {
                out.extend_from_slice(b", ");
            }
            out.push(b'"');
            out.extend_from_slice(key.as_bytes());
            out.extend_from_slice(b"\": ");
            spaced_ascii(value, &mut out).then_some(())?;
        }
        out.extend_from_slice(b"}\n");
        Some(out)
    }

    /// The ATIF document's JSON text (`trajectory_json(trajectory_document(record))`).
    pub fn document(&self, model_name: Option<&'a str>, version: &'a str) -> Option<Vec<u8>> {
        if !self.conversation {
            return None;
        }
        let document = eval_run_document(&self.record, model_name, version)?;
        let mut out = Vec::with_capacity(4096);
        compact(&document, &mut out).then_some(out)
    }
}

/// Writes `data` to `<trials>/<rollout id>/trajectory.json` (making the folder) and links
/// `target` to it (replacing an earlier attempt's file; a copy where hard links fail). A failure comes
/// with the path of the step that failed (the folder, the trial file, or `target`).
pub fn write_trajectory(
    trial_dir: &Path,
    target: &Path,
    data: &[u8],
) -> Result<(), (PathBuf, io::Error)> {
    let at = |path: &Path| {
        let path = path.to_path_buf();
        move |e: io::Error| (path, e)
    };
    match fs::create_dir(trial_dir) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err((trial_dir.into(), e)),
        _ => {}
    }
    let trial = trial_dir.join("trajectory.json");
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&trial)
        .map_err(at(&trial))?;
    file.write_all(data).map_err(at(&trial))?;
    drop(file);
    match fs::hard_link(&trial, target) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            fs::remove_file(target).map_err(at(target))?;
            fs::hard_link(&trial, target)
                .or_else(|_| fs::copy(&trial, target).map(|_| ()))
                .map_err(at(target))
        }
        Err(_) => fs::copy(&trial, target).map(|_| ()).map_err(at(target)),
    }
}

/// The two folders a run's documents go to: `rollout_trials/` and `trajectories/`. On Unix both are
/// held open and each item's files are made relative to them (`mkdirat` / `openat` / `linkat`): a walk
/// of the whole path from `/` in each of the four lookups cost ~2 us an item. Where a folder cannot be
/// opened (or off Unix) the files are made by path, as [`write_trajectory`] does.
pub struct TrajectoryFolders {
    trials: String,
    folder: String,
    #[cfg(unix)]
    open: Option<(rustix::fd::OwnedFd, rustix::fd::OwnedFd)>,
}

#[cfg(unix)]
fn open_dir(path: &str) -> Option<rustix::fd::OwnedFd> {
    use rustix::fs::{openat, Mode, OFlags, CWD};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    openat(CWD, path, flags, Mode::empty()).ok()
}

impl TrajectoryFolders {
    /// `trials` (`rollout_trials/`) and `folder` (`trajectories/`), both already made.
    pub fn new(trials: String, folder: String) -> Self {
        #[cfg(unix)]
        let open = open_dir(&trials).zip(open_dir(&folder));
        TrajectoryFolders {
            trials,
            folder,
            #[cfg(unix)]
            open,
        }
    }

    /// `<trials>/<rollout id>/trajectory.json` holding `data`, and `<folder>/<name>.json` linked to it, as
    /// [`write_trajectory`] makes them.
    pub fn write(
        &self,
        rollout_id: &str,
        name: &str,
        data: &[u8],
    ) -> Result<(), (PathBuf, io::Error)> {
        #[cfg(unix)]
        if let Some((trials, folder)) = &self.open {
            // An absolute or empty id names another place relative to a folder than after `<trials>/`;
            // one with a NUL byte fails by path with std's own message.
            if !rollout_id.is_empty() && !rollout_id.starts_with('/') && !rollout_id.contains('\0')
            {
                return self.write_at((trials, folder), rollout_id, name, data);
            }
        }
        let trial_dir = PathBuf::from(format!("{}/{rollout_id}", self.trials));
        let target = PathBuf::from(format!("{}/{name}.json", self.folder));
        write_trajectory(&trial_dir, &target, data)
    }

    /// [`write_trajectory`]'s steps relative to the open folders, each failure with the step's full path.
    #[cfg(unix)]
    fn write_at(
        &self,
        (trials, folder): (&rustix::fd::OwnedFd, &rustix::fd::OwnedFd),
        rollout_id: &str,
        name: &str,
        data: &[u8],
    ) -> Result<(), (PathBuf, io::Error)> {
        use rustix::fs::{linkat, mkdirat, openat, unlinkat, AtFlags, Mode, OFlags};
        use rustix::io::Errno;
        let trial_dir = || PathBuf::from(format!("{}/{rollout_id}", self.trials));
        let trial_path = || trial_dir().join("trajectory.json");
        let target_path = || PathBuf::from(format!("{}/{name}.json", self.folder));
        match mkdirat(trials, rollout_id, Mode::from_raw_mode(0o777)) {
            Err(e) if e != Errno::EXIST => return Err((trial_dir(), e.into())),
            _ => {}
        }
        let trial = format!("{rollout_id}/trajectory.json");
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::CLOEXEC;
        let fd = openat(trials, trial.as_str(), flags, Mode::from_raw_mode(0o666))
            .map_err(|e| (trial_path(), e.into()))?;
        let mut file = fs::File::from(fd);
        file.write_all(data).map_err(|e| (trial_path(), e))?;
        drop(file);
        let target = format!("{name}.json");
        let link = || {
            linkat(
                trials,
                trial.as_str(),
                folder,
                target.as_str(),
                AtFlags::empty(),
            )
        };
        let copy = || {
            fs::copy(trial_path(), target_path())
                .map(|_| ())
                .map_err(|e| (target_path(), e))
        };
        match link() {
            Ok(()) => Ok(()),
            Err(Errno::EXIST) => {
                unlinkat(folder, target.as_str(), AtFlags::empty())
                    .map_err(|e| (target_path(), e.into()))?;
                link().or_else(|_| copy())
            }
            Err(_) => copy(),
        }
    }
}

/// What became of a document the core was asked to write.
pub enum Written {
    /// Both files are written.
    Done,
    /// Left to Python: its redaction hides a URL's user info, or the record's names are not plain.
    Python(Vec<u8>),
    /// A step failed, at this path.
    Failed(PathBuf, io::Error),
}

/// Writes a record's `document`, masked, to `<trials>/<rollout id>/trajectory.json` and
/// `<folder>/row_<r>_run_<k>.json` ([`TrajectoryFolders::write`]), as `run_files.project_items` does with
/// `redact_bytes`; what only Python writes byte for byte comes back.
pub fn write_document(
    record: &RunRecord<'_>,
    document: Vec<u8>,
    folders: &TrajectoryFolders,
    masker: Option<&SecretMasker>,
) -> Written {
    let (Some(rollout_id), Some(name)) = (record.rollout_id(), record.item_name()) else {
        return Written::Python(document);
    };
    let masked = masker.and_then(|m| m.mask(&document));
    let data = masked.as_deref().unwrap_or(&document);
    // redact_bytes also rewrites the user info of URLs (`scheme://user:pass@host`).
    if memchr::memchr(b'@', data).is_some() && memchr::memmem::find(data, b"://").is_some() {
        return Written::Python(document);
    }
    match folders.write(rollout_id, &name, data) {
        Ok(()) => Written::Done,
        Err((path, err)) => Written::Failed(path, err),
    }
}

#[cfg(test)]
mod tests {
    use super::{write_trajectory, TrajectoryFolders};
    use std::fs;
    use std::path::{Path, PathBuf};

    /// A fresh `trials/` and `trajectories/` under the temp folder.
    fn folders(test: &str) -> (PathBuf, String, String) {
        let root =
            std::env::temp_dir().join(format!("osmosis-eval-run-{}-{test}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let (trials, folder) = (root.join("trials"), root.join("trajectories"));
        fs::create_dir_all(&trials).unwrap();
        fs::create_dir_all(&folder).unwrap();
        let text = |p: &Path| p.to_str().unwrap().to_string();
        (root.clone(), text(&trials), text(&folder))
    }

    #[cfg(unix)]
    fn same_file(a: &Path, b: &Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        let (a, b) = (fs::metadata(a).unwrap(), fs::metadata(b).unwrap());
        (a.dev(), a.ino()) == (b.dev(), b.ino())
    }

    #[cfg(not(unix))]
    fn same_file(_: &Path, _: &Path) -> bool {
        true
    }

    fn files(trials: &str, folder: &str, id: &str, name: &str) -> (Vec<u8>, Vec<u8>, bool) {
        let trial = Path::new(trials).join(id).join("trajectory.json");
        let target = Path::new(folder).join(format!("{name}.json"));
        let same = same_file(&trial, &target);
        (fs::read(trial).unwrap(), fs::read(target).unwrap(), same)
    }

    #[test]
    fn open_folders_write_what_paths_write_and_replace_earlier_attempts() {
        let (root, trials, folder) = folders("attempts");
        let (path_trials, path_folder) = (format!("{trials}-paths"), format!("{folder}-paths"));
        fs::create_dir_all(&path_trials).unwrap();
        fs::create_dir_all(&path_folder).unwrap();
        let open = TrajectoryFolders::new(trials.clone(), folder.clone());
        // A first attempt, a rerun of the same rollout (shorter text), then another rollout of the item.
        for (id, data) in [
            ("r1", &b"first attempt"[..]),
            ("r1", b"again"),
            ("r2", b"retried"),
        ] {
            open.write(id, "row_0_run_1", data).unwrap();
            let (trial_dir, target) = (
                PathBuf::from(format!("{path_trials}/{id}")),
                PathBuf::from(format!("{path_folder}/row_0_run_1.json")),
            );
            write_trajectory(&trial_dir, &target, data).unwrap();
            let written = files(&trials, &folder, id, "row_0_run_1");
            assert_eq!(written, (data.to_vec(), data.to_vec(), true));
            assert_eq!(
                written,
                files(&path_trials, &path_folder, id, "row_0_run_1")
            );
        }
        // The superseded rollout keeps its own file.
        assert_eq!(
            fs::read(format!("{trials}/r1/trajectory.json")).unwrap(),
            b"again"
        );
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_failed_step_names_its_path_with_open_folders_and_without() {
        let (root, trials, folder) = folders("failure");
        fs::create_dir(format!("{folder}/row_0_run_0.json")).unwrap(); // cannot be replaced
        let open = TrajectoryFolders::new(trials.clone(), folder.clone());
        let (path, _) = open.write("r0", "row_0_run_0", b"{}").unwrap_err();
        assert_eq!(path, PathBuf::from(format!("{folder}/row_0_run_0.json")));
        fs::write(
            format!("{trials}/r1"),
            b"a file where the rollout's folder goes",
        )
        .unwrap();
        let (path, _) = open.write("r1", "row_1_run_0", b"{}").unwrap_err();
        assert_eq!(path, PathBuf::from(format!("{trials}/r1/trajectory.json")));
        let target = PathBuf::from(format!("{folder}/row_1_run_0.json"));
        let by_path = write_trajectory(Path::new(&format!("{trials}/r1")), &target, b"{}");
        assert_eq!(by_path.unwrap_err().0, path);
        // A NUL byte in the id: std's own error, as by path.
        let (path, err) = open.write("r\0z", "row_3_run_0", b"{}").unwrap_err();
        assert_eq!(path, PathBuf::from(format!("{trials}/r\0z")));
        assert!(err.to_string().contains("NUL"), "{err}");
        // Folders that could not be opened: every file by its path, failures named the same way.
        let missing = TrajectoryFolders::new(format!("{trials}/none"), folder.clone());
        let (path, _) = missing.write("r2", "row_2_run_0", b"{}").unwrap_err();
        assert_eq!(path, PathBuf::from(format!("{trials}/none/r2")));
        fs::create_dir(format!("{trials}/none")).unwrap();
        missing.write("r2", "row_2_run_0", b"{}").unwrap();
        assert!(files(&format!("{trials}/none"), &folder, "r2", "row_2_run_0").2);
        fs::remove_dir_all(root).unwrap();
    }
}
