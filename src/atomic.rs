//! Writing a results file (or any record of dbsweep's) whole or not at all: a temporary file
//! created exclusively beside it, then renamed; and the checks that an output replaces only
//! what dbsweep owns and never a command's own input.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::Error;

/// A results file being written: the temporary file is created up front, so that an
/// unwritable path fails before the run, and renamed into place by [`ResultsFile::commit`].
/// Dropped without a commit, it removes the temporary file.
pub struct ResultsFile {
    path: PathBuf,
    tmp: PathBuf,
    file: Option<File>,
}

impl ResultsFile {
    pub fn create(path: &Path) -> Result<ResultsFile, Error> {
        let unwritable = |why: String| {
            Error::Usage(format!(
                "--output {}: cannot write there: {why}",
                path.display()
            ))
        };
        if path.is_dir() {
            return Err(unwritable("it is a directory".into()));
        }
        let name = path
            .file_name()
            .ok_or_else(|| unwritable("no file name".into()))?;
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        // A name no one can guess, created exclusively: a link planted at a predictable name
        // would make the write land wherever it points.
        let made = tempfile::Builder::new()
            .prefix(&format!(".{}.", name.to_string_lossy()))
            .suffix(".tmp")
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644))
            .tempfile_in(dir)
            .map_err(|e| unwritable(e.to_string()))?;
        let (file, tmp) = made.keep().map_err(|e| unwritable(e.error.to_string()))?;
        Ok(ResultsFile {
            path: path.to_path_buf(),
            tmp,
            file: Some(file),
        })
    }

    /// [`ResultsFile::create`] for a results file: refused where it would replace a file that
    /// is not a dbsweep results file (the SQLite database being measured, a script, a config
    /// file: anything the command may be reading) or a record of a sweep directory.
    pub fn create_results(path: &Path) -> Result<ResultsFile, Error> {
        check_replaceable(path)?;
        check_output_apart(path, &[])?;
        ResultsFile::create(path)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `results` (or any record of the same family), syncs, and renames the file into
    /// place.
    pub fn commit<T: Serialize>(self, results: &T) -> Result<(), Error> {
        let mut text = serde_json::to_vec_pretty(results).expect("results serialise");
        text.push(b'\n');
        self.commit_bytes(&text)
    }

    /// Writes `text`, syncs, and renames the file into place.
    /// On any failure (a full disk) the temporary file is removed and the error names the
    /// file and the system's cause.
    pub fn commit_bytes(mut self, text: &[u8]) -> Result<(), Error> {
        let mut file = self.file.take().expect("committed once");
        let written = file
            .write_all(text)
            .and_then(|()| file.sync_all())
            .and_then(|()| {
                drop(file);
                fs::rename(&self.tmp, &self.path)
            });
        written.map_err(|e| {
            let _ = fs::remove_file(&self.tmp);
            Error::Run(format!("writing {}: {e}", self.path.display()))
        })
    }
}

/// Refuses an `--output` that would overwrite what the command reads: one of `inputs` (by
/// file identity, so a link or another spelling of the path counts), a file inside an input
/// directory, or a file of any sweep directory (one holding `plan.toml` and `steps/`), whose
/// records `--resume` and `report` read back.
pub fn check_output_apart(output: &Path, inputs: &[&Path]) -> Result<(), Error> {
    use std::os::unix::fs::MetadataExt;
    let refuse = |why: String| {
        Error::Usage(format!(
            "--output {}: {why}; write the output elsewhere",
            output.display()
        ))
    };
    let parent = output
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // Where the output would land, with the links of its directory resolved.
    let landing = fs::canonicalize(parent)
        .ok()
        .map(|dir| dir.join(output.file_name().unwrap_or_default()));
    let same_file = |a: &fs::Metadata, b: &fs::Metadata| a.dev() == b.dev() && a.ino() == b.ino();
    let out_meta = fs::metadata(output).ok();
    for input in inputs {
        let Ok(meta) = fs::metadata(input) else {
            continue;
        };
        if out_meta.as_ref().is_some_and(|o| same_file(o, &meta)) {
            return Err(refuse(format!("is the input {}", input.display())));
        }
        if meta.is_dir()
            && let (Ok(dir), Some(at)) = (fs::canonicalize(input), &landing)
            && at.starts_with(&dir)
        {
            return Err(refuse(format!(
                "is inside the input directory {}",
                input.display()
            )));
        }
    }
    if let Some(at) = &landing
        && let Some(sweep) = at.ancestors().skip(1).find(|d| is_sweep_dir(d))
    {
        return Err(refuse(format!(
            "is inside the sweep directory {}",
            sweep.display()
        )));
    }
    Ok(())
}

/// Refuses an `--output` whose existing file is not one a run wrote: only a results file (its
/// JSON opens with the schema version), an empty file or no file at all may be replaced.
pub fn check_replaceable(output: &Path) -> Result<(), Error> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let refuse = |why: &str| {
        Error::Usage(format!(
            "--output {}: {why}; it would be replaced: remove it first or write elsewhere",
            output.display()
        ))
    };
    let meta = match fs::symlink_metadata(output) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(refuse(&format!("cannot be checked ({e})"))),
    };
    if meta.file_type().is_symlink() {
        return Err(refuse("is a symbolic link"));
    }
    if meta.is_dir() {
        // ResultsFile::create says so.
        return Ok(());
    }
    if !meta.is_file() {
        return Err(refuse("exists and is not a regular file"));
    }
    if meta.len() == 0 {
        return Ok(());
    }
    let mut head = Vec::with_capacity(256);
    fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(output)
        .and_then(|f| f.take(256).read_to_end(&mut head))
        .map_err(|e| refuse(&format!("cannot be checked ({e})")))?;
    let text = String::from_utf8_lossy(&head);
    let opens = text.trim_start().strip_prefix('{').map(str::trim_start);
    if opens.is_some_and(|t| t.starts_with("\"schema_version\"")) {
        Ok(())
    } else {
        Err(refuse("exists and is not a dbsweep results file"))
    }
}

/// Whether `dir` is a sweep directory: it holds the saved plan and the step records.
pub fn is_sweep_dir(dir: &Path) -> bool {
    dir.join("plan.toml").is_file() && dir.join("steps").is_dir()
}

/// Writes `value` as JSON at `path` atomically.
pub fn write_atomic<T: Serialize>(path: &Path, value: &T) -> Result<(), Error> {
    ResultsFile::create(path)?.commit(value)
}

impl Drop for ResultsFile {
    fn drop(&mut self) {
        if self.file.is_some() {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}
