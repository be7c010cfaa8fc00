//! Threads through their phases, and what the scheduler does with them: wake-ups placed by the
//! placement policy, context switches, time-slice preemption, new-idle pulls and the migration
//! of waiting or running threads.

use super::state::{count, ThreadState};
use super::Engine;
use crate::model::idle::STATE_WFI;
use crate::random::uniform;
use crate::trace::TraceEvent;
use crate::trace::{PrevState, CPU_IDLE_EXIT};
use crate::workload::PhaseKind;

impl Engine<'_> {
    /// PELT contribution of a CPU running something now: running time scaled by f/f_max and
    /// capacity/1024 (frequency- and capacity-invariant).
    pub(super) fn running_contribution(&self, cpu: usize) -> f64 {
        let c = self.sched.cluster_of[cpu];
        let freq_scale = self.hw.clusters[c].cur_khz as f64 / self.platform.clusters[c].max_khz() as f64;
        freq_scale * self.sched.capacity[cpu] as f64
    }

    /// Brings the PELT signals of `cpu` and of the thread running on it up to now (before what
    /// they contribute changes).
    pub(super) fn update_util(&mut self, cpu: usize) {
        if !self.sched.track_util {
            return;
        }
        let (now, busy) = (self.now_us, self.running_contribution(cpu));
        match self.sched.rqs[cpu].curr {
            Some(t) => {
                self.cpus[cpu].util.update(now, busy);
                self.sched.entities[t].util.update(now, busy);
            }
            None => self.cpus[cpu].util.update(now, 0.0),
        }
    }

    /// Sets the thread up for its current phase (or finishes it).
    pub(super) fn enter_phase(&mut self, t: usize) {
        loop {
            let th = &self.threads[t];
            let task = &self.tasks[th.task];
            if th.progress.phase >= task.phases.len() {
                let p = &mut self.threads[t].progress;
                p.repeats_left = p.repeats_left.saturating_sub(1);
                if p.repeats_left == 0 {
                    self.exit_thread(t);
                    return;
                }
                p.phase = 0;
                continue;
            }
            let phase = th.progress.phase;
            let ips = self.reference_ips[th.task][phase];
            match task.phases[phase].kind {
                PhaseKind::Compute { instructions } => {
                    self.threads[t].progress.work_left = instructions;
                    self.make_runnable(t);
                }
                PhaseKind::Sleep { duration_us } => {
                    self.sleep_until(t, self.now_us + duration_us as f64);
                }
                PhaseKind::Periodic { run_us, count, period_us } => {
                    // Periodic threads start at a random phase within their period, as
                    // independent tasks on a real system do.
                    let offset_us = if period_us > 0 { uniform(&mut self.rng, period_us as f64) } else { 0.0 };
                    let p = &mut self.threads[t].progress;
                    p.jobs_left = count;
                    p.next_release_us = self.now_us + offset_us;
                    p.work_left = run_us * ips;
                    if offset_us > 0.0 {
                        self.sleep_until(t, self.now_us + offset_us);
                    } else {
                        self.make_runnable(t);
                    }
                }
            }
            return;
        }
    }

    pub(super) fn job_done(&mut self, t: usize) {
        let th = &self.threads[t];
        let phase = th.progress.phase;
        if let PhaseKind::Periodic { run_us, period_us, .. } = self.tasks[th.task].phases[phase].kind {
            let ips = self.reference_ips[th.task][phase];
            let p = &mut self.threads[t].progress;
            p.jobs_left -= 1;
            if p.jobs_left > 0 {
                p.next_release_us += period_us as f64;
                p.work_left = run_us * ips;
                if p.next_release_us > self.now_us {
                    let wake = p.next_release_us;
                    self.sleep_until(t, wake);
                }
                // else: overrun, the next job starts at once on this CPU
                return;
            }
        }
        self.threads[t].progress.phase += 1;
        self.enter_phase(t);
    }

    fn make_runnable(&mut self, t: usize) {
        if self.threads[t].state != ThreadState::Running {
            self.wake(t, None);
        } // else it continues on its CPU
    }

    fn sleep_until(&mut self, t: usize, wake_us: f64) {
        let th = &mut self.threads[t];
        let was_running = th.state == ThreadState::Running;
        th.state = ThreadState::Sleeping { wake_us };
        th.timer_seq = th.timer_seq.wrapping_add(1);
        let cpu = self.sched.entities[t].cpu;
        self.timers.arm(cpu, wake_us, t, th.timer_seq);
        if was_running {
            self.switch_out(cpu, PrevState::Sleeping);
        }
    }

    fn exit_thread(&mut self, t: usize) {
        let th = &mut self.threads[t];
        th.finish_us = self.now_us;
        let was_running = th.state == ThreadState::Running;
        th.state = ThreadState::Done;
        if !th.kernel {
            self.live_user_threads -= 1;
        }
        if was_running {
            self.switch_out(self.sched.entities[t].cpu, PrevState::Dead);
        }
    }

    /// Makes `t` runnable on the CPU the placement policy picks; `waker_cpu` is the CPU that
    /// woke it (for the trace), if any.
    pub(super) fn wake(&mut self, t: usize, waker_cpu: Option<usize>) {
        let kind = self.wake_kind(t);
        let target = self.sched.ask(self.now_us, |placement, view| placement.select_cpu(view, t, kind));
        debug_assert!(self.sched.entities[t].allowed.contains(target), "placement chose a CPU not allowed");
        if target != self.sched.entities[t].cpu && self.threads[t].cpu_time_us > 0.0 {
            self.threads[t].migrations += 1;
        }
        self.sched.entities[t].cpu = target;
        self.threads[t].state = ThreadState::Runnable;
        let tid = self.threads[t].tid;
        let time_us = self.now_us;
        self.out.trace(TraceEvent::SchedWaking {
            time_us,
            waker_cpu: waker_cpu.unwrap_or(target),
            tid,
            target_cpu: target,
        });
        self.enqueue(target, t);
    }

    /// Puts runnable `t` on `cpu`: runs it at once if the CPU is idle, else queues it.
    fn enqueue(&mut self, cpu: usize, t: usize) {
        if self.sched.rqs[cpu].curr.is_none() {
            self.switch_in(cpu, t, None);
        } else {
            self.sched.rqs[cpu].queue.push_back(t);
        }
    }

    /// Puts `t` on `cpu`, which must have nothing running; `prev` says who left (`None`: the
    /// CPU was idle).
    fn switch_in(&mut self, cpu: usize, t: usize, prev: Option<(u32, PrevState)>) {
        let p = self.policy_of(cpu);
        if prev.is_none() {
            let exit_us = self.power_up(self.sched.cluster_of[cpu]);
            self.threads[t].progress.stolen_us += exit_us;
            self.wake_policy(p);
            if self.sched.track_util {
                self.cpus[cpu].util.update(self.now_us, 0.0);
            }
            self.trace_idle(cpu, CPU_IDLE_EXIT);
        }
        let (prev_tid, prev_state) = prev.unwrap_or((0, PrevState::Runnable));
        let (time_us, next_tid) = (self.now_us, self.threads[t].tid);
        self.out.trace(TraceEvent::SchedSwitch { time_us, cpu, prev_tid, prev_state, next_tid });
        self.dirty = true;
        if self.sched.track_util {
            self.sched.entities[t].util.update(self.now_us, 0.0);
        }
        let pmu = self.threads[t].pmu;
        for policy in &mut self.policies {
            policy.ran.note(t, || pmu.to_counts());
        }
        if prev.is_none() {
            self.policies[p].busy_cpus += 1;
        }
        let ncpus = self.cpus.len();
        let rq = &mut self.sched.rqs[cpu];
        rq.curr = Some(t);
        rq.slice_end_us = self.now_us + rq.slice_us(ncpus);
        self.threads[t].state = ThreadState::Running;
        self.sched.entities[t].cpu = cpu;
    }

    /// The current thread of `cpu` leaves it (already marked sleeping, done or runnable).
    fn switch_out(&mut self, cpu: usize, state: PrevState) {
        self.update_util(cpu);
        let t = self.sched.rqs[cpu].curr.take().expect("a thread was running");
        self.reschedule(cpu, (self.threads[t].tid, state));
    }

    /// `cpu` has nothing running (`prev` just left): run the next thread, or go idle.
    fn reschedule(&mut self, cpu: usize, prev: (u32, PrevState)) {
        self.dirty = true;
        if let Some(next) = self.next_for(cpu) {
            self.switch_in(cpu, next, Some(prev));
        } else {
            let p = self.policy_of(cpu);
            self.policies[p].busy_cpus -= 1;
            let time_us = self.now_us;
            self.out.trace(TraceEvent::SchedSwitch { time_us, cpu, prev_tid: prev.0, prev_state: prev.1, next_tid: 0 });
            self.trace_idle(cpu, STATE_WFI);
            self.maybe_power_down(self.sched.cluster_of[cpu], self.now_us);
        }
    }

    /// Next thread for a CPU: its own queue, else what the placement's new-idle balance pulls.
    fn next_for(&mut self, cpu: usize) -> Option<usize> {
        if let Some(t) = self.sched.rqs[cpu].queue.pop_front() {
            return Some(t);
        }
        let pull = self.sched.ask(self.now_us, |placement, view| placement.balance_newidle(view, cpu))?;
        let from = self.sched.entities[pull.thread].cpu;
        let removed = self.sched.rqs[from].remove(pull.thread);
        debug_assert!(removed && pull.to_cpu == cpu, "new-idle balance pulls a waiting thread to the idle CPU");
        self.threads[pull.thread].migrations += 1;
        Some(pull.thread)
    }

    /// The running thread of `cpu` used up its slice while others wait: the next one runs.
    pub(super) fn preempt(&mut self, cpu: usize) {
        self.update_util(cpu);
        let rq = &mut self.sched.rqs[cpu];
        let t = rq.curr.take().expect("running");
        rq.queue.push_back(t);
        let next = rq.queue.pop_front().expect("queue not empty");
        self.threads[t].state = ThreadState::Runnable;
        let prev = (self.threads[t].tid, PrevState::Runnable);
        self.switch_in(cpu, next, Some(prev));
    }

    /// Moves `t` to `to_cpu`: a waiting thread leaves its queue; a running one is stopped
    /// (its CPU runs the next thread) and starts over there — the kernel's active migration.
    pub(super) fn migrate(&mut self, t: usize, to_cpu: usize) {
        let from = self.sched.entities[t].cpu;
        if from == to_cpu || !self.sched.entities[t].allowed.contains(to_cpu) {
            return;
        }
        match self.threads[t].state {
            ThreadState::Running => {
                self.update_util(from);
                self.sched.rqs[from].curr = None;
                self.threads[t].state = ThreadState::Runnable;
                self.reschedule(from, (self.threads[t].tid, PrevState::Runnable));
            }
            ThreadState::Runnable => {
                self.sched.rqs[from].remove(t);
            }
            ThreadState::Sleeping { .. } | ThreadState::Done => return,
        }
        self.threads[t].migrations += 1;
        self.sched.entities[t].cpu = to_cpu;
        self.enqueue(to_cpu, t);
    }

    /// `busy_us` of kernel work on `cpu` starting now, charged at once as stolen time (see
    /// `kernel::jitter`): the running thread needs that much longer; an idle CPU is busy for
    /// it (load, PELT, cycles, energy).
    pub(super) fn charge_kernel_time(&mut self, cpu: usize, busy_us: f64) {
        let now = self.now_us;
        let c = self.sched.cluster_of[cpu];
        let khz = self.hw.clusters[c].cur_khz;
        self.cpus[cpu].pmu.cycles += busy_us * khz as f64 / 1000.0;
        match self.sched.rqs[cpu].curr {
            Some(t) => {
                self.threads[t].progress.stolen_us += busy_us;
                self.sched.rqs[cpu].slice_end_us += busy_us;
            }
            None => {
                let contribution = self.running_contribution(cpu);
                let st = &mut self.cpus[cpu];
                st.busy_us += busy_us;
                st.idle_since_sample_us -= busy_us;
                if self.sched.track_util {
                    st.util.add_burst(now, busy_us, contribution);
                }
                let mw = crate::model::power::core_dynamic_mw(self.platform.core_type_of(c), self.volts(c), khz, 1.0);
                self.hw.energy.add_dynamic_mj(c, mw * busy_us * 1e-6);
                self.out.trace(TraceEvent::CpuIdle { time_us: now, cpu, state: CPU_IDLE_EXIT });
                self.out.trace(TraceEvent::CpuIdle { time_us: now + busy_us, cpu, state: STATE_WFI });
                self.maybe_power_down(c, now + busy_us);
            }
        }
    }

    /// OS jitter: the burst due on `cpu` now (`kernel::jitter`).
    pub(super) fn kernel_jitter(&mut self, cpu: usize) {
        let exit_us = self.power_up(self.sched.cluster_of[cpu]);
        self.wake_policy(self.policy_of(cpu));
        let busy_us = self.jitter.burst(cpu, self.now_us, exit_us, &self.platform.noise, &mut self.rng);
        self.charge_kernel_time(cpu, busy_us);
    }

    pub(super) fn trace_idle(&mut self, cpu: usize, state: u32) {
        let time_us = self.now_us;
        self.out.trace(TraceEvent::CpuIdle { time_us, cpu, state });
    }

    /// The CPU's PELT utilisation now, rounded as the kernel's integer signal reads.
    pub(super) fn cpu_util(&self, cpu: usize) -> u32 {
        let contribution = if self.sched.rqs[cpu].curr.is_some() { self.running_contribution(cpu) } else { 0.0 };
        count(self.cpus[cpu].util.at(self.now_us, contribution)) as u32
    }
}
