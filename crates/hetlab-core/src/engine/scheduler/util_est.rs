//! util_est applied (`sched::util_est` holds the rules): each queued CFS task's estimate counted
//! in its run queue's sum where the kernel's `enqueue_task_fair` / `dequeue_task_fair` call
//! `util_est_enqueue` / `util_est_dequeue` (beside uclamp's buckets: a wake-up, a migration's
//! arrival and departure, sleeping or exiting), and the estimate updated as the task goes to
//! sleep. Kept by Linux 6.6+ runs (EEVDF) with the `UTIL_EST` feature on (its default): elsewhere
//! every estimate and sum stays zero.

use super::Scheduler;

impl Scheduler<'_> {
    fn util_est_kept(&self, t: usize) -> bool {
        self.eevdf.is_some_and(|e| e.features.util_est) && self.track_util && self.entities[t].is_fair()
    }

    /// `t` is queued on `cpu` from now on (`util_est_enqueue`).
    pub fn util_est_enqueue(&mut self, t: usize, cpu: usize) {
        if !self.util_est_kept(t) || self.entities[t].util_est_counted.is_some_and(|(c, _)| c == cpu) {
            return;
        }
        self.util_est_dequeue(t);
        let estimate = self.entities[t].util_est.ewma;
        self.rqs[cpu].util_est += estimate;
        self.entities[t].util_est_counted = Some((cpu, estimate));
    }

    /// `t` is no longer queued where it was counted (`util_est_dequeue`).
    pub fn util_est_dequeue(&mut self, t: usize) {
        if let Some((cpu, estimate)) = self.entities[t].util_est_counted.take() {
            let sum = &mut self.rqs[cpu].util_est;
            *sum -= estimate.min(*sum);
        }
    }

    /// `t`, its signals just updated, goes to sleep on `cpu` (`util_est_update` with
    /// `task_sleep`).
    pub fn util_est_sleep(&mut self, t: usize, cpu: usize) {
        if !self.util_est_kept(t) {
            return;
        }
        let capacity = u64::from(self.capacity[cpu]);
        let se = &mut self.entities[t];
        se.util_est.at_sleep(se.avg.util_avg, se.avg.runnable_util_avg(), capacity);
    }
}
