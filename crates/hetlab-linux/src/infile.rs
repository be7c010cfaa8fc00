//! Files hetlabd reads: regular files only, of a bounded size, opened without blocking.
//!
//! The trees it reads (`--sysfs-root`, `--procfs-root`, the run directory) may be writable by
//! others, so a file there may have been replaced by a FIFO (an open for reading would wait
//! for a writer forever), a device such as /dev/zero (endless), or a huge file (memory). Every
//! read here opens with O_NONBLOCK (a FIFO opens at once), refuses anything but a regular file
//! (fstat after the open, so nothing is checked on one file and read on another), and reads at
//! most a stated number of bytes; more is an error naming the file and the bound.

use std::fs::OpenOptions;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::display;

/// A sysfs attribute holds at most one page (`PAGE_SIZE`, 4096 bytes on the boards; sysfs
/// `show` callbacks are given one page).
pub const SYSFS_ATTR_MAX_BYTES: u64 = 4096;

/// The largest input file read whole (a platform, workload or rt-app file, a trained model, a
/// reproduction's report): they are kilobytes; 64 MiB bounds any, and a FIFO, `/dev/zero` or a
/// sparse file of gigabytes given in their place is refused instead of read into memory.
pub const INPUT_MAX_BYTES: u64 = 64 << 20;

/// How a bounded read fails: the I/O error (its kind kept for hints), or the file is not one
/// hetlabd reads (`why`).
#[derive(Debug)]
pub enum ReadError {
    Io(std::io::Error),
    Refused(String),
}

impl ReadError {
    /// The reason, for a message that names the file.
    pub fn reason(&self) -> String {
        match self {
            ReadError::Io(e) if e.raw_os_error() == Some(libc::ELOOP) => "it is a symbolic link".into(),
            ReadError::Io(e) => e.to_string(),
            ReadError::Refused(why) => why.clone(),
        }
    }
}

/// Reads the regular file `path` whole, at most `max_bytes`; `follow` says whether a symbolic
/// link as the last component is followed (sysfs has them; a run directory's state file must
/// not be one).
pub fn read_bounded(path: &Path, max_bytes: u64, follow: bool) -> Result<String, ReadError> {
    let mut text = String::new();
    read_into(path, max_bytes, follow, &mut text)?;
    Ok(text)
}

/// [`read_bounded`] into a buffer the caller reuses (appended to).
pub fn read_into(path: &Path, max_bytes: u64, follow: bool, text: &mut String) -> Result<(), ReadError> {
    let nofollow = if follow { 0 } else { libc::O_NOFOLLOW };
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC | nofollow)
        .open(path)
        .map_err(ReadError::Io)?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if !meta.file_type().is_file() {
        return Err(ReadError::Refused("not a regular file (a FIFO, device or socket)".into()));
    }
    let start = text.len();
    // one byte past the bound tells "exactly the bound" from "more"
    file.take(max_bytes + 1).read_to_string(text).map_err(|e| {
        if e.kind() == std::io::ErrorKind::InvalidData {
            ReadError::Refused("it is not text (invalid UTF-8)".into())
        } else {
            ReadError::Io(e)
        }
    })?;
    if (text.len() - start) as u64 > max_bytes {
        text.truncate(start);
        return Err(ReadError::Refused(format!("it holds more than {max_bytes} bytes, more than such a file can")));
    }
    Ok(())
}

/// [`read_bounded`] with the error as one line naming the file.
pub fn read_text(path: &Path, max_bytes: u64, follow: bool) -> Result<String, String> {
    read_bounded(path, max_bytes, follow).map_err(|e| format!("cannot read {}: {}", display(path), e.reason()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn fifos_devices_links_and_oversized_files_are_refused_at_once() {
        let d = std::env::temp_dir().join(format!("hetlab-infile-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        fs::write(d.join("ok"), "1400000\n").unwrap();
        assert_eq!(read_text(&d.join("ok"), 4096, false).unwrap(), "1400000\n");
        fs::write(d.join("big"), vec![b'1'; 4097]).unwrap();
        let e = read_text(&d.join("big"), 4096, true).unwrap_err();
        assert!(e.contains("more than 4096 bytes") && e.contains("big"), "{e}");
        fs::write(d.join("page"), vec![b'1'; 4096]).unwrap();
        assert_eq!(read_text(&d.join("page"), 4096, true).unwrap().len(), 4096);
        // a FIFO with no writer: refused, not waited on
        let fifo = std::ffi::CString::new(d.join("fifo").as_os_str().as_bytes()).unwrap();
        // SAFETY: mkfifo on a NUL-terminated path we own.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        assert!(read_text(&d.join("fifo"), 4096, true).unwrap_err().contains("not a regular file"));
        // an endless device
        assert!(read_text(Path::new("/dev/zero"), 4096, true).unwrap_err().contains("not a regular file"));
        std::os::unix::fs::symlink(d.join("ok"), d.join("link")).unwrap();
        assert!(read_text(&d.join("link"), 4096, false).unwrap_err().contains("symbolic link"));
        assert!(read_text(&d.join("link"), 4096, true).is_ok());
        let _ = fs::remove_dir_all(&d);
    }
}
