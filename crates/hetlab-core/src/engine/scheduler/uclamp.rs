//! Utilisation clamps applied (`sched::uclamp` holds the rules): a thread's effective clamps kept up to
//! date, and the run queues' buckets counting the runnable fair and RT threads, where the
//! kernel's `enqueue_task` / `dequeue_task` call `uclamp_rq_inc` / `uclamp_rq_dec`: a wake-up,
//! a migration's arrival and departure, sleeping or exiting, and a change of clamps, class or
//! group (`__sched_setscheduler` and `sched_move_task` dequeue and enqueue a runnable task).

use super::Scheduler;
#[cfg(debug_assertions)]
use super::ThreadState;
use crate::sched::uclamp;

impl Scheduler<'_> {
    /// `t` is runnable on `cpu` from now on (`uclamp_rq_inc`); a DL thread is not counted
    /// (its class has no `uclamp_enabled`), nor anything while no clamp is used.
    pub fn uclamp_enqueue(&mut self, t: usize, cpu: usize) {
        let se = &self.entities[t];
        if !self.uclamp_used || se.is_dl() || se.uclamp_counted.is_some_and(|(c, _)| c == cpu) {
            return;
        }
        self.uclamp_dequeue(t);
        let se = &mut self.entities[t];
        self.rqs[cpu].uclamp.inc(se.uclamp);
        se.uclamp_counted = Some((cpu, se.uclamp));
    }

    /// `t` is no longer runnable where it was counted (`uclamp_rq_dec`).
    pub fn uclamp_dequeue(&mut self, t: usize) {
        if let Some((cpu, clamp)) = self.entities[t].uclamp_counted.take() {
            self.rqs[cpu].uclamp.dec(clamp);
        }
    }

    /// `t`'s request, class or group changed: its effective clamps anew (`uclamp_eff_get`), and
    /// if it is counted somewhere, out of its buckets and back in with them.
    pub fn uclamp_update(&mut self, t: usize) {
        let se = &mut self.entities[t];
        se.uclamp = uclamp::effective(se.uclamp_req, se.is_rt(), self.groups.uclamp_of(t), &self.sysctls.uclamp);
        if let Some((cpu, _)) = se.uclamp_counted {
            self.uclamp_dequeue(t);
            self.uclamp_enqueue(t, cpu);
        }
    }

    /// Debug builds: the buckets count exactly the runnable fair and RT threads, each where it
    /// runs or waits, with its effective clamps.
    #[cfg(debug_assertions)]
    pub fn check_uclamp_counts(&self) {
        if !self.uclamp_used {
            return;
        }
        let mut counted = vec![0u32; self.rqs.len()];
        for (t, se) in self.entities.iter().enumerate() {
            let runnable = match self.threads[t].state {
                ThreadState::Running => true,
                ThreadState::Runnable => self.is_queued(t),
                _ => false,
            };
            let want = (runnable && !se.is_dl()).then_some((se.cpu, se.uclamp));
            assert_eq!(
                se.uclamp_counted, want,
                "thread {t} ({:?}) counted in the wrong uclamp buckets",
                self.threads[t].state
            );
            if let Some((cpu, _)) = want {
                counted[cpu] += 1;
            }
        }
        for (cpu, rq) in self.rqs.iter().enumerate() {
            assert_eq!(rq.uclamp.nr_tasks(), counted[cpu], "CPU {cpu}'s uclamp buckets");
        }
    }
}
