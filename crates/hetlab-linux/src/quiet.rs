//! Which per-thread perf groups need a read(2) this sample. The paper's governor "reads CPU PMCs
//! for each thread that has been active over the last period" (§4.3): a thread that has not run
//! since its group was last read has the same counts, so the read can be skipped — if "has not
//! run" can be told without a syscall. It can, from the group leader's mmap'ed user page
//! ([`crate::perf::UserPage`]), but not from the page's `time_running` alone.
//!
//! What the kernel does (read in Linux 6.x, kernel/events/core.c and drivers/perf/arm_pmu.c):
//! * The page is written only by `perf_event_update_userpage()`, which bumps `lock` by 2 and
//!   stores `index`, `offset`, `time_enabled`, `time_running` as of that moment. Nothing writes it
//!   while the event simply counts or simply sits scheduled out.
//! * The core calls it when the page is mapped (`perf_mmap_rb`), on PERF_EVENT_IOC_RESET
//!   (`_perf_event_reset`), and for a group that could not go on a PMU at sched-in
//!   (`merge_sched_in` → `group_update_userpage`, since Linux 5.16). `event_sched_in()` and
//!   `event_sched_out()` do not; the PMU driver's `add()`/`del()` may:
//!   - the ARM core PMUs: `armpmu_add()` and `armpmu_del()` both call it (every sched-in and
//!     sched-out of the event);
//!   - the software events: `task_clock_event_add()` (the stand-in's leader), `cpu_clock_event_add()`
//!     and `perf_swevent_add()` (page faults, context switches, ...) call it, their `del()`s do
//!     not (sched-in only).
//! * So for a per-thread event (pid = tid, cpu = -1) whose PMU updates the page in `add()`:
//!   `lock` moves every time the thread is scheduled in. A thread blocked for the whole period
//!   leaves the page untouched: same `lock`, same `time_running`. But a thread that stays on a CPU
//!   across the sample also leaves it untouched (no sched-in, no sched-out), so "the page's
//!   `time_running` did not move" does not mean "did not run": measured here, a spinning thread's
//!   page kept its `lock` and `time_running` for 30 ms while read(2) showed 30 ms more running.
//!   (With the ARM PMU's update at sched-out, `time_running` also stays put across a sched-in
//!   after a sched-out, as nothing ran in between.)
//!
//! The rule, therefore, per group: after two read(2)s that show the same `time_running` with the
//! page's `lock` unchanged from before the first to before the second, the thread was off the CPU
//! (had it been on it, it would have been on it since before the first read — no sched-in
//! moved `lock` — and its running time would have grown between the reads, which are a sampling
//! period apart). It then stays off while `lock` keeps that value, and its counts are the last
//! read's. Any other `lock` (or an odd one, mid-update) means read again. A thread that runs is
//! read at every sample; one that wakes is read twice (the wake-up, then the confirmation), then
//! skipped until it is scheduled in again.
//!
//! Whether the PMU updates the page in `add()` is a property of its driver and kernel version,
//! so the backend checks it at start-up on its own thread ([`crate::backend`]) and reads every
//! group when it does not hold, or when the page cannot be mapped. Races only delay counts,
//! never lose them: the values are cumulative, so a count that a skip leaves behind (e.g. a
//! store to `lock` not yet visible to the reading CPU) is in the next read. Under counter
//! multiplexing on kernels before 5.16 a thread whose group never got on the PMU keeps its raw
//! counts but not its scaled estimate (time_enabled grows); the skip keeps the last estimate.

/// What one group's reads have shown. Pure bookkeeping; the backend feeds it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QuietTracker {
    /// The page's update count seen just before the last read(2), and that read's time running.
    last_read: Option<(u32, u64)>,
    /// The update count at which the thread was found off the CPU; `None`: not found so.
    quiet_at: Option<u32>,
}

impl QuietTracker {
    /// Whether the group can be left unread, the page's update count being `updates` now.
    pub fn can_skip(&self, updates: u32) -> bool {
        updates.is_multiple_of(2) && self.quiet_at == Some(updates)
    }

    /// Records a read(2) made after seeing `updates`, which returned `time_running_ns`.
    pub fn after_read(&mut self, updates: u32, time_running_ns: u64) {
        self.quiet_at = match self.last_read {
            Some((u, r)) if u == updates && r == time_running_ns && updates.is_multiple_of(2) => Some(updates),
            _ => None,
        };
        self.last_read = Some((updates, time_running_ns));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_is_skipped_only_after_two_equal_reads_with_the_page_unchanged() {
        let mut q = QuietTracker::default();
        assert!(!q.can_skip(0), "never read: read it");
        q.after_read(4, 1_000);
        assert!(!q.can_skip(4), "one read cannot tell a running thread from a blocked one");
        q.after_read(4, 1_000);
        assert!(q.can_skip(4), "same time running, no sched-in: off the CPU");
        assert!(!q.can_skip(6), "scheduled in since: read");
        assert!(!q.can_skip(5), "mid-update: read");
    }

    #[test]
    fn a_thread_that_ran_between_the_reads_or_was_scheduled_in_is_not_quiet() {
        let mut q = QuietTracker::default();
        q.after_read(4, 1_000);
        q.after_read(4, 2_000); // on the CPU across both reads: no sched-in, running time grew
        assert!(!q.can_skip(4));
        q.after_read(4, 2_000);
        assert!(q.can_skip(4), "then it stopped: two equal reads");
        q.after_read(6, 2_000); // read after a sched-in with no running time yet
        assert!(!q.can_skip(6), "the update count moved between the reads");
        q.after_read(6, 2_500);
        assert!(!q.can_skip(6));
        q.after_read(7, 2_500);
        assert!(!q.can_skip(7), "an odd count is never a settled one");
        q.after_read(7, 2_500);
        assert!(!q.can_skip(7));
    }
}
