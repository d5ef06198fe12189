//! Output files written whole or not at all: each is written beside its target under a
//! temporary name and renamed over it once complete and on disk, so that a run stopped part
//! way (Ctrl-C, an error, a full disk) leaves the file that was there before, or none, and
//! never a truncated one under the target's name.
//!
//! Why here: [`crate::input`] reads the files mpsim takes in, this writes the files it gives
//! out, for every crate above the simulator: machine models ([`crate::ModelFile::write_to`],
//! so `mpsim calibrate --out`), the launcher's `--trace` and `mpsim plot -o`.
//!
//! - [`OutputFile`]: one file, made at once beside its target (so a path that cannot be
//!   written fails before the work that fills it), renamed over it by [`OutputFile::commit`];
//!   dropped without a commit, it is removed.
//! - [`write_whole`]: a file written at once.
//! - [`write_files_in`]: the files of a directory (a model: `model.toml` and its tables).
//! - [`check_writable_dir`]: whether a directory can be written into, asked before minutes of
//!   work.
//!
//! What it does not do: a target that exists and is not a regular file (a device such as
//! `/dev/null` or `/dev/stdout`, a named pipe) is written in place, as nothing can be renamed
//! over it and nothing partial is left under a file's name. A process killed outright
//! (`SIGKILL`, a second Ctrl-C) before the rename leaves its temporary file,
//! `.NAME.XXXXXX.tmp`, beside the target, and the target as it was. A target that is a
//! symbolic link to a file is replaced where the link points; the link stays.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

/// A file being written to `path`: under a temporary name beside it until
/// [`OutputFile::commit`].
///
/// ```
/// use std::io::Write;
/// use mpsim_sim::output::OutputFile;
///
/// # fn main() -> std::io::Result<()> {
/// let dir = std::env::temp_dir().join(format!("mpsim-doc-output-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let path = dir.join("result.txt");
/// let mut out = OutputFile::create(&path)?; // a bad path fails here, before the work
/// writeln!(out, "half")?;
/// assert!(!path.exists(), "nothing under the target's name until the commit");
/// writeln!(out, "and the rest")?;
/// out.commit()?;
/// assert_eq!(std::fs::read_to_string(&path)?, "half\nand the rest\n");
/// # std::fs::remove_dir_all(&dir)
/// # }
/// ```
#[derive(Debug)]
pub struct OutputFile {
    target: Target,
    path: PathBuf,
}

#[derive(Debug)]
enum Target {
    /// A regular file (or none yet): written under a temporary name, renamed at the commit.
    Beside(NamedTempFile),
    /// A device or a pipe: written in place.
    InPlace(File),
}

impl OutputFile {
    /// Starts writing `path`: makes the temporary file beside it now, with the permissions a
    /// new file gets (those of the file it replaces, if there is one). Fails if `path` names a
    /// directory, or its directory cannot be written.
    pub fn create(path: impl AsRef<Path>) -> io::Result<Self> {
        let path = path.as_ref();
        // Through a link to a file, the file is replaced, not the link.
        let real = match fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => {
                fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
            }
            _ => path.to_path_buf(),
        };
        let existing = match fs::metadata(&real) {
            Ok(m) => Some(m),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        if let Some(m) = &existing {
            if m.is_dir() {
                return Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    "it is a directory",
                ));
            }
            if !m.is_file() {
                let file = fs::OpenOptions::new()
                    .write(true)
                    .truncate(true)
                    .open(&real)?;
                return Ok(OutputFile {
                    target: Target::InPlace(file),
                    path: real,
                });
            }
        }
        let name = real.file_name().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "it names no file (it ends in `..` or `/`)",
            )
        })?;
        let mut builder = tempfile::Builder::new();
        let prefix = format!(".{}.", name.to_string_lossy());
        builder.prefix(&prefix).suffix(".tmp");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // A new file's mode before the umask, as `File::create` gives it.
            let mode = existing.as_ref().map_or(0o666, |m| m.permissions().mode());
            builder.permissions(fs::Permissions::from_mode(mode));
        }
        let temp = builder.tempfile_in(parent(&real)).map_err(plain)?;
        Ok(OutputFile {
            target: Target::Beside(temp),
            path: real,
        })
    }

    /// The file this writes in the end.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Puts what was written on disk and renames it over the target: until now, the target
    /// was as it was before. A failure removes what was written.
    pub fn commit(self) -> io::Result<()> {
        match self.target {
            Target::InPlace(mut file) => file.flush(),
            Target::Beside(temp) => {
                // A full disk may say so only here (space is allotted when the data is
                // written out, on some file systems).
                temp.as_file().sync_all()?;
                temp.persist(&self.path).map_err(|e| e.error)?;
                sync_dir(parent(&self.path));
                Ok(())
            }
        }
    }

    fn file(&mut self) -> &mut File {
        match &mut self.target {
            Target::Beside(temp) => temp.as_file_mut(),
            Target::InPlace(file) => file,
        }
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file().write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.file().write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file().flush()
    }
}

/// Writes `bytes` to `path` whole ([`OutputFile`]): the file that was there stays until the new
/// one is complete.
pub fn write_whole(path: impl AsRef<Path>, bytes: &[u8]) -> io::Result<()> {
    let mut out = OutputFile::create(path)?;
    out.write_all(bytes)?;
    out.commit()
}

/// Writes `files` (name, contents) into the directory `dir`, creating it if missing. A new
/// directory is filled under a temporary name beside it and renamed at the end, so it appears
/// with every file in it. Into an existing one, every file is written beside its target and
/// put on disk first, then each renamed over its target (a failure before leaves the files
/// that were there, all of them; the renames, one per file, are the only moment a reader could
/// see some files new and others old). Other files in `dir` are left alone. An error names the
/// path that failed.
pub fn write_files_in(dir: &Path, files: &[(&str, &[u8])]) -> Result<(), (PathBuf, io::Error)> {
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => {
            let mut written = Vec::with_capacity(files.len());
            for (name, bytes) in files {
                let path = dir.join(name);
                let fail = |e| (path.clone(), e);
                let mut out = OutputFile::create(&path).map_err(fail)?;
                out.write_all(bytes).map_err(fail)?;
                if let Target::Beside(temp) = &out.target {
                    temp.as_file().sync_all().map_err(fail)?;
                }
                written.push(out);
            }
            for out in written {
                let path = out.path.clone();
                out.commit().map_err(|e| (path, e))?;
            }
            Ok(())
        }
        Ok(_) => Err((
            dir.to_path_buf(),
            io::Error::new(io::ErrorKind::NotADirectory, "it is not a directory"),
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => new_dir(dir, files),
        Err(e) => Err((dir.to_path_buf(), e)),
    }
}

/// [`write_files_in`] for a directory that does not exist yet.
fn new_dir(dir: &Path, files: &[(&str, &[u8])]) -> Result<(), (PathBuf, io::Error)> {
    let name = dir.file_name().ok_or_else(|| {
        (
            dir.to_path_buf(),
            io::Error::new(io::ErrorKind::InvalidInput, "it names no directory"),
        )
    })?;
    let parent = parent(dir);
    fs::create_dir_all(parent).map_err(|e| (parent.to_path_buf(), e))?;
    let prefix = format!(".{}.", name.to_string_lossy());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // A new directory's mode before the umask, as `create_dir` gives it.
        builder.permissions(fs::Permissions::from_mode(0o777));
    }
    // Removed with what it holds if anything fails before the rename.
    let temp = builder
        .tempdir_in(parent)
        .map_err(|e| (parent.to_path_buf(), plain(e)))?;
    for (name, bytes) in files {
        let path = temp.path().join(name);
        let fail = |e| (dir.join(name), e);
        let mut file = File::create(&path).map_err(fail)?;
        file.write_all(bytes).map_err(fail)?;
        file.sync_all().map_err(fail)?;
    }
    sync_dir(temp.path());
    fs::rename(temp.path(), dir).map_err(|e| (dir.to_path_buf(), e))?;
    // Renamed: nothing is left under the temporary name to remove.
    let _ = temp.keep();
    sync_dir(parent);
    Ok(())
}

/// Checks that files can be made in `dir`, or, if it does not exist, in the nearest of its
/// ancestors that does (where it would be created), by making one and removing it: only
/// writing tells (permissions, a read-only file system, access control lists). For a tool that
/// works for minutes before it writes.
pub fn check_writable_dir(dir: &Path) -> Result<(), (PathBuf, io::Error)> {
    let existing = dir
        .ancestors()
        .map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        })
        .find(|p| fs::symlink_metadata(p).is_ok())
        .unwrap_or(Path::new("."));
    tempfile::Builder::new()
        .prefix(".mpsim-check.")
        .tempfile_in(existing)
        .map(drop)
        .map_err(|e| (existing.to_path_buf(), plain(e)))
}

/// The system's error in one of `tempfile`'s, without the ` at path "..."` it appends: the
/// temporary file's random name, which the user never gave (messages name the target).
fn plain(e: io::Error) -> io::Error {
    let text = e.to_string();
    match text.rfind(" at path \"") {
        Some(at) => io::Error::new(e.kind(), &text[..at]),
        None => e,
    }
}

/// The directory holding `path` (`.` for a bare name).
fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Puts a directory's entries on disk (a rename in it is durable once this returns), where
/// the system allows it; a failure changes nothing that was written, so it is not an error.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mpsim-output-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("scratch dir");
        dir
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .expect("read dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// A file dropped before its commit leaves the old contents and no temporary file.
    #[test]
    fn an_uncommitted_file_leaves_the_old_one_whole() {
        let dir = scratch("drop");
        let path = dir.join("trace.json");
        fs::write(&path, "old").expect("old");
        let mut out = OutputFile::create(&path).expect("create");
        out.write_all(b"new, but not fin").expect("write");
        drop(out);
        assert_eq!(fs::read_to_string(&path).expect("read"), "old");
        assert_eq!(entries(&dir), ["trace.json"]);
        write_whole(&path, b"new").expect("write whole");
        assert_eq!(fs::read_to_string(&path).expect("read"), "new");
        assert_eq!(entries(&dir), ["trace.json"]);
        fs::remove_dir_all(&dir).expect("clean up");
    }

    #[test]
    fn a_directory_or_a_missing_directory_fails_at_create() {
        let dir = scratch("bad");
        let e = OutputFile::create(&dir).expect_err("a directory");
        assert_eq!(e.kind(), io::ErrorKind::IsADirectory);
        let e = OutputFile::create(dir.join("no/such/dir/t.json")).expect_err("no dir");
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        fs::remove_dir_all(&dir).expect("clean up");
    }

    #[cfg(unix)]
    #[test]
    fn a_device_is_written_in_place() {
        let mut out = OutputFile::create("/dev/null").expect("/dev/null");
        out.write_all(b"anything").expect("write");
        out.commit().expect("commit");
        assert!(Path::new("/dev/null").exists());
    }

    #[cfg(unix)]
    #[test]
    fn a_replaced_file_keeps_its_permissions_and_a_link_stays_a_link() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("perm");
        let path = dir.join("model.toml");
        fs::write(&path, "old").expect("old");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).expect("chmod");
        let link = dir.join("link.toml");
        std::os::unix::fs::symlink(&path, &link).expect("symlink");
        write_whole(&link, b"new").expect("write");
        assert!(
            fs::symlink_metadata(&link)
                .expect("link")
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&path).expect("read"), "new");
        let mode = fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
        fs::remove_dir_all(&dir).expect("clean up");
    }

    #[test]
    fn a_new_directory_appears_with_all_its_files() {
        let dir = scratch("newdir");
        let model = dir.join("a/b/model");
        write_files_in(&model, &[("model.toml", b"t"), ("ssend.csv", b"s")]).expect("write");
        assert_eq!(entries(&model), ["model.toml", "ssend.csv"]);
        assert_eq!(entries(&dir.join("a/b")), ["model"], "no temporary left");
        // Into the existing one: the files are replaced, others kept.
        fs::write(model.join("notes.txt"), "mine").expect("notes");
        write_files_in(&model, &[("model.toml", b"t2"), ("ssend.csv", b"s2")]).expect("again");
        assert_eq!(entries(&model), ["model.toml", "notes.txt", "ssend.csv"]);
        assert_eq!(
            fs::read_to_string(model.join("model.toml")).expect("read"),
            "t2"
        );
        fs::remove_dir_all(&dir).expect("clean up");
    }

    #[test]
    fn a_writable_directory_passes_the_check_and_keeps_nothing() {
        let dir = scratch("check");
        check_writable_dir(&dir.join("not/yet")).expect("writable");
        assert!(entries(&dir).is_empty());
        fs::remove_dir_all(&dir).expect("clean up");
    }
}
