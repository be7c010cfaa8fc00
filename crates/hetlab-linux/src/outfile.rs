//! Files hetlabd creates, safe when it runs as root in a directory others can write.
//!
//! - [`AtomicFile`]: a new file with a random name in the target's directory, opened with
//!   O_CREAT|O_EXCL|O_NOFOLLOW and mode 0644, renamed over the target when complete (rename
//!   replaces a planted link, it never follows one) and removed if dropped before that.
//! - [`open_lock`]: the lock file, opened without following a link, mode 0644, and refused
//!   unless it is a regular file with one link owned by us.
//!
//! The Python package's `hetlab._files` holds the same rules for the files it writes.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::display;

/// Mode of every file hetlabd creates (the umask may only remove bits).
pub const FILE_MODE: u32 = 0o644;

fn random_suffix() -> u64 {
    let mut x = 0u64;
    // SAFETY: getrandom fills the 8 bytes of a local; a short read leaves the rest as is.
    let n = unsafe { libc::getrandom((&mut x as *mut u64).cast(), 8, 0) };
    if n != 8 {
        // no entropy yet: still unique enough with O_EXCL retries
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        x ^= (t as u64) ^ (u64::from(std::process::id()) << 32);
    }
    x
}

fn create_new(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

fn directory_of(target: &Path) -> PathBuf {
    target.parent().filter(|p| !p.as_os_str().is_empty()).map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// A file being written whole: created beside its target under a random name, moved over the
/// target by [`AtomicFile::commit`], removed when dropped uncommitted.
pub struct AtomicFile {
    file: Option<File>,
    tmp: PathBuf,
    target: PathBuf,
}

impl AtomicFile {
    pub fn create(target: &Path) -> Result<AtomicFile, String> {
        let dir = directory_of(target);
        if !dir.is_dir() {
            return Err(format!(
                "cannot write {}: directory {} does not exist; create it first",
                display(target),
                display(&dir)
            ));
        }
        if fs::symlink_metadata(target).is_ok_and(|m| m.is_dir()) {
            return Err(format!("cannot write {}: it is a directory; give a file name", display(target)));
        }
        let name = target.file_name().map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
        let mut last = None;
        for _ in 0..16 {
            let tmp = dir.join(format!(".{name}.{:016x}.tmp", random_suffix()));
            match create_new(&tmp) {
                Ok(file) => return Ok(AtomicFile { file: Some(file), tmp, target: target.to_path_buf() }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(format!("cannot write {}: {e}; choose a writable directory", display(target))),
            }
        }
        Err(format!(
            "cannot create a temporary file beside {}: {}",
            display(target),
            last.map_or(String::new(), |e| e.to_string())
        ))
    }

    pub fn file(&mut self) -> &mut File {
        self.file.as_mut().expect("an AtomicFile is open until committed")
    }

    /// Where the data is being written (a random name beside the target).
    pub fn temporary_path(&self) -> &Path {
        &self.tmp
    }

    /// Flushes and moves the file over the target.
    pub fn commit(self) -> Result<(), String> {
        let target = self.target.clone();
        self.move_to(&target)
    }

    /// Flushes and moves the file to `path` (in the same directory) instead of the target: an
    /// interrupted run keeps what it wrote under a name that says so.
    pub fn move_to(mut self, path: &Path) -> Result<(), String> {
        let file = self.file.take().expect("an AtomicFile is open until committed");
        let result = file
            .sync_all()
            .and_then(|()| fs::rename(&self.tmp, path))
            .map_err(|e| format!("cannot write {}: {e}", display(path)));
        if result.is_err() {
            let _ = fs::remove_file(&self.tmp);
        }
        result
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file().write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file().flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// Writes `data` whole to `target` (see [`AtomicFile`]).
pub fn write_whole(target: &Path, data: &[u8]) -> Result<(), String> {
    let mut f = AtomicFile::create(target)?;
    f.write_all(data).map_err(|e| format!("cannot write {}: {e}", display(target)))?;
    f.commit()
}

/// Opens (creating it if needed) a lock file for reading and writing without following a
/// link; refuses anything but a regular file with a single link owned by this user, so a
/// planted link or node cannot make a root daemon write elsewhere.
pub fn open_lock(path: &Path) -> Result<File, String> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            let why =
                if e.raw_os_error() == Some(libc::ELOOP) { "it is a symbolic link".to_string() } else { e.to_string() };
            format!("cannot open {}: {why}; remove it or pass another --run-dir", display(path))
        })?;
    let meta = file.metadata().map_err(|e| format!("cannot stat {}: {e}", display(path)))?;
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    if !meta.file_type().is_file() || meta.nlink() != 1 || meta.uid() != uid {
        return Err(format!(
            "{} is not a regular file of ours (a planted node, link or another user's file); remove it or pass \
             another --run-dir",
            display(path)
        ));
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("hetlab-outfile-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_file_appears_whole_with_mode_0644_and_replaces_a_planted_link_without_following_it() {
        let d = dir("link");
        let victim = d.join("victim");
        fs::write(&victim, "keep").unwrap();
        let target = d.join("out.csv");
        std::os::unix::fs::symlink(&victim, &target).unwrap();
        write_whole(&target, b"data\n").unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "keep");
        assert_eq!(fs::read_to_string(&target).unwrap(), "data\n");
        let meta = fs::symlink_metadata(&target).unwrap();
        assert!(meta.file_type().is_file());
        assert_eq!(meta.mode() & 0o022, 0, "never group- or world-writable");
        assert_eq!(fs::read_dir(&d).unwrap().count(), 2, "no temporary file left");
    }

    #[test]
    fn an_uncommitted_file_leaves_nothing_and_errors_are_one_line() {
        let d = dir("drop");
        {
            let mut f = AtomicFile::create(&d.join("x")).unwrap();
            f.write_all(b"partial").unwrap();
        }
        assert_eq!(fs::read_dir(&d).unwrap().count(), 0);
        let e = write_whole(&d.join("missing/x"), b"").unwrap_err();
        assert!(e.contains("does not exist") && !e.contains('\n'), "{e}");
        let e = write_whole(&d, b"").unwrap_err();
        assert!(e.contains("is a directory"), "{e}");
    }

    #[test]
    fn a_lock_file_that_is_a_link_or_has_two_names_is_refused() {
        let d = dir("lock");
        let victim = d.join("victim");
        fs::write(&victim, "keep").unwrap();
        std::os::unix::fs::symlink(&victim, d.join("l1")).unwrap();
        let e = open_lock(&d.join("l1")).unwrap_err();
        assert!(e.contains("symbolic link"), "{e}");
        fs::hard_link(&victim, d.join("l2")).unwrap();
        let e = open_lock(&d.join("l2")).unwrap_err();
        assert!(e.contains("not a regular file of ours"), "{e}");
        assert_eq!(fs::read_to_string(&victim).unwrap(), "keep");
        let f = open_lock(&d.join("ok")).unwrap();
        assert_eq!(f.metadata().unwrap().mode() & 0o777 & !0o644, 0);
    }
}
