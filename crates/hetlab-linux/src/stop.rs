//! How a long-running loop learns it should stop, and sleeps until then.
//!
//! [`SignalStop`] blocks SIGINT, SIGTERM, SIGHUP and SIGQUIT and receives them through a
//! signalfd: the daemon's sleep (ppoll on that fd) ends the moment one arrives, nothing runs in
//! signal-handler context, and the loop then restores the policies and exits normally. Create
//! it before starting any thread, so every thread inherits the blocked mask. Dropping it gives
//! the thread its previous mask back (a host process such as Python gets its signals again);
//! it cannot leave the thread that made it. hetlabd itself uses [`SignalStop::until_exit`],
//! which keeps them blocked: a signal during shutdown must not cut the restore's report.
//!
//! [`PollStop`] asks a closure every 50 ms instead: for hosts that own signal handling (the
//! Python binding checks `PyErr_CheckSignals` there).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

pub trait Stop {
    /// Sleeps up to `timeout`; returns why to stop (e.g. "SIGTERM"), or `None` on timeout.
    fn wait(&mut self, timeout: Duration) -> Option<String>;
}

const SIGNALS: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

pub struct SignalStop {
    fd: OwnedFd,
    /// The thread's signal mask before, restored when dropped.
    old_mask: libc::sigset_t,
    /// Whether Drop gives the mask back (see [`SignalStop::until_exit`]).
    unblock_on_drop: bool,
    /// Not Send: the mask belongs to this thread.
    _thread: std::marker::PhantomData<*const ()>,
}

fn signal_name(sig: u32) -> String {
    match sig as libc::c_int {
        libc::SIGINT => "SIGINT".into(),
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGHUP => "SIGHUP".into(),
        libc::SIGQUIT => "SIGQUIT".into(),
        n => format!("signal {n}"),
    }
}

impl SignalStop {
    pub fn new() -> Result<SignalStop, String> {
        // SAFETY: sigset manipulation on a local set; pthread_sigmask and signalfd only read it.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for s in SIGNALS {
                libc::sigaddset(&mut set, s);
            }
            let mut old_mask: libc::sigset_t = std::mem::zeroed();
            if libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old_mask) != 0 {
                return Err(format!("cannot block signals: {}", std::io::Error::last_os_error()));
            }
            let fd = libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
            if fd < 0 {
                let e = std::io::Error::last_os_error();
                libc::pthread_sigmask(libc::SIG_SETMASK, &old_mask, std::ptr::null_mut());
                return Err(format!("signalfd: {e}"));
            }
            Ok(SignalStop {
                fd: OwnedFd::from_raw_fd(fd),
                old_mask,
                unblock_on_drop: true,
                _thread: std::marker::PhantomData,
            })
        }
    }
}

impl SignalStop {
    /// For a program that exits when the loop ends (hetlabd): the signals stay blocked after
    /// this is dropped. A second SIGTERM sent while the settings are being restored then stays
    /// pending until exit, where it is discarded: giving the old mask back would deliver it
    /// and kill the process before it printed the restore's outcome and chose its exit code.
    pub fn until_exit() -> Result<SignalStop, String> {
        let mut s = SignalStop::new()?;
        s.unblock_on_drop = false;
        Ok(s)
    }
}

impl Stop for SignalStop {
    fn wait(&mut self, timeout: Duration) -> Option<String> {
        let ts = libc::timespec {
            tv_sec: timeout.as_secs() as libc::time_t,
            tv_nsec: timeout.subsec_nanos() as libc::c_long,
        };
        let mut pfd = libc::pollfd { fd: self.fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd; a null sigmask keeps the current (blocking) mask.
        let n = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
        if n <= 0 {
            return None; // timeout, or EINTR from an unrelated signal: the caller re-checks its clock
        }
        // SAFETY: signalfd_siginfo is plain data, read whole from the fd.
        let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<libc::signalfd_siginfo>();
        let got = unsafe { libc::read(self.fd.as_raw_fd(), &mut info as *mut _ as *mut libc::c_void, size) };
        if got as usize == size {
            Some(signal_name(info.ssi_signo))
        } else {
            None
        }
    }
}

impl Drop for SignalStop {
    fn drop(&mut self) {
        if self.unblock_on_drop {
            // SAFETY: the mask saved in `new`, restored on the same thread (SignalStop is not Send).
            unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.old_mask, std::ptr::null_mut()) };
        }
    }
}

/// Stops when `f` returns a reason; sleeps in slices of at most 50 ms between calls.
pub struct PollStop<F: FnMut() -> Option<String>> {
    pub f: F,
}

impl<F: FnMut() -> Option<String>> Stop for PollStop<F> {
    fn wait(&mut self, timeout: Duration) -> Option<String> {
        let end = std::time::Instant::now() + timeout;
        loop {
            if let Some(r) = (self.f)() {
                return Some(r);
            }
            let now = std::time::Instant::now();
            if now >= end {
                return None;
            }
            std::thread::sleep((end - now).min(Duration::from_millis(50)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_stop_sleeps_until_told() {
        let mut n = 0;
        let mut s = PollStop {
            f: || {
                n += 1;
                (n > 2).then(|| "told".to_string())
            },
        };
        assert_eq!(s.wait(Duration::from_millis(1)), None);
        assert_eq!(s.wait(Duration::from_secs(5)), Some("told".into()));
    }
}
