//! Files hetlabd creates, safe when it runs as root in a directory others can write.
//!
//! - [`AtomicFile`]: a new file with a random name in the target's directory, opened with
//!   O_CREAT|O_EXCL|O_NOFOLLOW and mode 0644, renamed over the target when complete (rename
//!   replaces a planted link, it never follows one) and removed if dropped before that.
//! - [`open_lock`]: the lock file, opened without following a link, mode 0644, and refused
//!   unless it is a regular file with one link owned by us.
//! - [`Output`]: what `--out PATH` names: `-` (standard output), a regular file or new name
//!   (an [`AtomicFile`]), a character device or FIFO (written in place), never a directory,
//!   block device or socket, and never a symbolic link when running as root, in any component
//!   of its path ([`no_link_in`]); a file it replaces keeps its mode, and as root its owner.
//!
//! The Python package's `hetlab._files` holds the same rules for the files it writes.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
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

/// As root: `dir` opened component by component with openat and O_NOFOLLOW from / or the
/// working directory, so a symbolic link anywhere in it is refused, never followed (a link in a
/// parent directory planted in a shared tree would redirect a root write). Others: nothing.
pub fn no_link_in(dir: &Path, shown: &Path) -> Result<(), String> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    if crate::euid() != 0 {
        return Ok(());
    }
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC;
    let start = CString::new(if dir.is_absolute() { "/" } else { "." }).expect("no NUL");
    // SAFETY: open with a valid C string; the descriptor is closed below.
    let mut fd = unsafe { libc::open(start.as_ptr(), flags) };
    for part in dir.components() {
        let std::path::Component::Normal(name) = part else {
            if part == std::path::Component::ParentDir {
                let up = CString::new("..").expect("no NUL");
                // SAFETY: openat on a descriptor we own, a valid C string.
                let next = unsafe { libc::openat(fd, up.as_ptr(), flags) };
                // SAFETY: fd is ours and open.
                unsafe { libc::close(fd) };
                fd = next;
            }
            continue;
        };
        if fd < 0 {
            break;
        }
        let c =
            CString::new(name.as_bytes()).map_err(|_| format!("cannot write {}: a NUL in the path", display(shown)))?;
        // SAFETY: openat on a descriptor we own, a valid C string.
        let next = unsafe { libc::openat(fd, c.as_ptr(), flags | libc::O_NOFOLLOW) };
        let err = std::io::Error::last_os_error();
        // SAFETY: fd is ours and open.
        unsafe { libc::close(fd) };
        if next < 0 {
            return Err(match err.raw_os_error() {
                Some(libc::ELOOP) | Some(libc::ENOTDIR) => format!(
                    "cannot write {}: '{}' in its path is a symbolic link (or not a directory), which hetlabd does \
                     not follow when run as root; give the real path",
                    display(shown),
                    name.to_string_lossy()
                ),
                _ => format!("cannot write {}: {err}", display(shown)),
            });
        }
        fd = next;
    }
    if fd >= 0 {
        // SAFETY: fd is ours and open.
        unsafe { libc::close(fd) };
    }
    Ok(())
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
        no_link_in(&dir, target)?;
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
        let result = keep_owner_and_mode(&file, path)
            .and_then(|()| file.sync_all())
            .and_then(|()| fs::rename(&self.tmp, path))
            .map_err(|e| format!("cannot write {}: {e}", display(path)));
        if result.is_err() {
            let _ = fs::remove_file(&self.tmp);
        }
        result
    }
}

/// A file replacing `path` takes its mode, and as root its owner and group (a 0600 file stays
/// 0600); nothing for a new name.
fn keep_owner_and_mode(file: &File, path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let Ok(old) = fs::symlink_metadata(path) else { return Ok(()) };
    if !old.file_type().is_file() {
        return Ok(());
    }
    if crate::euid() == 0 {
        std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid()))?;
    }
    file.set_permissions(fs::Permissions::from_mode(old.mode() & 0o7777))
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

/// Where a command's output goes, by what `--out` names (the rules of the Python package's
/// `hetlab._files.write_output`, so both programs treat a path alike).
pub enum Output {
    /// `-`.
    Stdout(std::io::Stdout),
    /// A character device or a FIFO: renaming over it would replace the node, so it is opened
    /// and written where it is.
    InPlace { file: File, path: PathBuf },
    /// A regular file or a new name: written beside it and renamed over it when complete.
    Atomic(AtomicFile),
}

impl Output {
    pub fn open(target: &Path) -> Result<Output, String> {
        if target.as_os_str() == "-" {
            return Ok(Output::Stdout(std::io::stdout()));
        }
        let shown = display(target);
        let mut path = target.to_path_buf();
        let mut meta = fs::symlink_metadata(target).ok();
        if meta.as_ref().is_some_and(|m| m.file_type().is_symlink()) {
            // As root a link is refused: one planted in a shared directory would redirect a
            // root write (following it) or be silently replaced by a file (renaming over it).
            // Another user's run follows it, as a shell's `>` would.
            if crate::euid() == 0 {
                return Err(format!(
                    "cannot write {shown}: it is a symbolic link, which hetlabd does not follow when run as root; \
                     give the real path"
                ));
            }
            path = fs::canonicalize(target).map_err(|e| {
                format!("cannot write {shown}: it is a symbolic link that leads nowhere ({e}); give the real path")
            })?;
            meta = fs::metadata(&path).ok();
        }
        let Some(meta) = meta else { return AtomicFile::create(&path).map(Output::Atomic) };
        let kind = meta.file_type();
        if kind.is_file() {
            AtomicFile::create(&path).map(Output::Atomic)
        } else if kind.is_dir() {
            Err(format!("cannot write {shown}: it is a directory; give a file name"))
        } else if kind.is_char_device() || kind.is_fifo() {
            let file = OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(&path)
                .map_err(|e| format!("cannot write {shown}: {e}"))?;
            Ok(Output::InPlace { file, path })
        } else {
            Err(format!("cannot write {shown}: it is a block device or a socket; give a regular file, a FIFO or -"))
        }
    }

    /// "standard output", or the file being written.
    pub fn describe(&self) -> String {
        match self {
            Output::Stdout(_) => "standard output".into(),
            Output::InPlace { path, .. } => display(path),
            Output::Atomic(a) => display(a.temporary_path()),
        }
    }

    /// Flushes, and moves an [`AtomicFile`] over its target.
    pub fn commit(mut self) -> Result<(), String> {
        let what = self.describe();
        self.flush().map_err(|e| format!("cannot write {what}: {e}"))?;
        match self {
            Output::Atomic(a) => a.commit(),
            _ => Ok(()),
        }
    }

    /// For an interrupted run: an [`AtomicFile`] is kept as `partial` (returned), the other
    /// outputs already hold what was written.
    pub fn keep_partial(mut self, partial: &Path) -> Result<Option<PathBuf>, String> {
        let what = self.describe();
        self.flush().map_err(|e| format!("cannot write {what}: {e}"))?;
        match self {
            Output::Atomic(a) => a.move_to(partial).map(|()| Some(partial.to_path_buf())),
            _ => Ok(None),
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Output::Stdout(s) => s.write(buf),
            Output::InPlace { file, .. } => file.write(buf),
            Output::Atomic(a) => a.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Output::Stdout(s) => s.flush(),
            Output::InPlace { file, .. } => file.flush(),
            Output::Atomic(a) => a.flush(),
        }
    }
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
            format!("cannot open {}: {why}; remove it", display(path))
        })?;
    let meta = file.metadata().map_err(|e| format!("cannot stat {}: {e}", display(path)))?;
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    if !meta.file_type().is_file() || meta.nlink() != 1 || meta.uid() != uid {
        return Err(format!(
            "{} is not a regular file of ours (a planted node, link or another user's file); remove it",
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

    /// Issue 34, class 4: as root a link in a parent directory is refused too; a replaced file
    /// keeps its mode (and, as root, its owner).
    #[test]
    fn a_link_in_a_parent_is_refused_as_root_and_a_replaced_file_keeps_owner_and_mode() {
        use std::os::unix::fs::PermissionsExt;
        let d = dir("parents");
        fs::create_dir(d.join("real")).unwrap();
        std::os::unix::fs::symlink(d.join("real"), d.join("link")).unwrap();
        let through = Output::open(&d.join("link").join("out.txt"));
        if crate::euid() == 0 {
            let e = through.err().expect("refused as root");
            assert!(e.contains("'link' in its path is a symbolic link"), "{e}");
            assert_eq!(fs::read_dir(d.join("real")).unwrap().count(), 0);
        }
        let kept = d.join("kept");
        fs::write(&kept, "old").unwrap();
        fs::set_permissions(&kept, fs::Permissions::from_mode(0o600)).unwrap();
        if crate::euid() == 0 {
            std::os::unix::fs::chown(&kept, Some(1234), Some(4321)).unwrap();
        }
        write_whole(&kept, b"new").unwrap();
        let meta = fs::metadata(&kept).unwrap();
        assert_eq!((fs::read_to_string(&kept).unwrap().as_str(), meta.mode() & 0o7777), ("new", 0o600));
        if crate::euid() == 0 {
            assert_eq!((meta.uid(), meta.gid()), (1234, 4321));
        }
        let _ = fs::remove_dir_all(&d);
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
    fn an_output_keeps_devices_and_fifos_in_place_and_refuses_links_as_root() {
        use std::os::unix::ffi::OsStrExt;
        let d = dir("output");
        assert!(matches!(Output::open(Path::new("-")).unwrap(), Output::Stdout(_)));
        let fifo = d.join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: mkfifo on a NUL-terminated path we own.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let reader = std::thread::spawn({
            let fifo = fifo.clone();
            move || fs::read_to_string(fifo).unwrap()
        });
        let mut o = Output::open(&fifo).unwrap();
        assert!(matches!(o, Output::InPlace { .. }));
        o.write_all(b"rows\n").unwrap();
        o.commit().unwrap();
        assert_eq!(reader.join().unwrap(), "rows\n");
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO is still a FIFO");
        assert!(Output::open(&d).err().unwrap().contains("is a directory"));
        let victim = d.join("victim");
        fs::write(&victim, "keep").unwrap();
        std::os::unix::fs::symlink(&victim, d.join("link")).unwrap();
        match Output::open(&d.join("link")) {
            Err(e) => assert!(crate::euid() == 0 && e.contains("symbolic link") && e.contains("root"), "{e}"),
            Ok(o) => assert!(crate::euid() != 0 && matches!(o, Output::Atomic(_))),
        }
        assert_eq!(fs::read_to_string(&victim).unwrap(), "keep");
        let mut o = Output::open(&d.join("new.csv")).unwrap();
        o.write_all(b"x").unwrap();
        assert_eq!(o.keep_partial(&d.join("new.csv.partial")).unwrap(), Some(d.join("new.csv.partial")));
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
