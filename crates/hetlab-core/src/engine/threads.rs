//! Threads and scheduling: phases, wake-ups, context switches, time slices, OS jitter and
//! cpuidle cluster power-down.

use super::*;

impl<'a> Engine<'a> {
    /// Sets the thread up for its current phase (or finishes it).
    pub(super) fn enter_phase(&mut self, t: usize) {
        loop {
            let th = &self.threads[t];
            let task = &self.workload.tasks[th.task];
            if th.phase >= task.phases.len() {
                let th = &mut self.threads[t];
                th.repeats_left = th.repeats_left.saturating_sub(1);
                if th.repeats_left == 0 {
                    self.exit_thread(t);
                    return;
                }
                th.phase = 0;
                continue;
            }
            let kind = task.phases[th.phase].kind.clone();
            let ips = self.reference_ips[th.task][th.phase];
            match kind {
                PhaseKind::Compute { instructions } => {
                    self.threads[t].work_left = instructions;
                    self.make_runnable(t);
                }
                PhaseKind::Sleep { duration_us } => {
                    self.sleep_until(t, self.now_us + duration_us as f64);
                }
                PhaseKind::Periodic { run_us, count, period_us } => {
                    // Periodic threads start at a random phase within their period, as
                    // independent tasks on a real system do.
                    let offset_us = if period_us > 0 { self.rng.gen_range(0.0..period_us as f64) } else { 0.0 };
                    let th = &mut self.threads[t];
                    th.jobs_left = count;
                    th.next_release_us = self.now_us + offset_us;
                    th.work_left = run_us * ips;
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
        let phase = &self.workload.tasks[th.task].phases[th.phase];
        if let PhaseKind::Periodic { run_us, period_us, .. } = phase.kind {
            let ips = self.reference_ips[th.task][th.phase];
            let th = &mut self.threads[t];
            th.jobs_left -= 1;
            if th.jobs_left > 0 {
                th.next_release_us += period_us as f64;
                th.work_left = run_us * ips;
                if th.next_release_us > self.now_us {
                    let wake = th.next_release_us;
                    self.sleep_until(t, wake);
                }
                // else: overrun, the next job starts at once on this CPU
                return;
            }
        }
        self.threads[t].phase += 1;
        self.enter_phase(t);
    }

    pub(super) fn make_runnable(&mut self, t: usize) {
        match self.threads[t].state {
            ThreadState::Running => {} // continues on its CPU
            _ => self.wake(t, None),
        }
    }

    pub(super) fn sleep_until(&mut self, t: usize, wake_us: f64) {
        if self.threads[t].state == ThreadState::Running {
            let cpu = self.threads[t].cpu;
            self.threads[t].state = ThreadState::Sleeping { wake_us };
            self.switch_out(cpu, PrevState::Sleeping);
        } else {
            self.threads[t].state = ThreadState::Sleeping { wake_us };
        }
    }

    pub(super) fn exit_thread(&mut self, t: usize) {
        self.threads[t].finish_us = self.now_us;
        if self.threads[t].state == ThreadState::Running {
            let cpu = self.threads[t].cpu;
            self.threads[t].state = ThreadState::Done;
            self.switch_out(cpu, PrevState::Dead);
        } else {
            self.threads[t].state = ThreadState::Done;
        }
    }

    pub(super) fn wake(&mut self, t: usize, waker_cpu: Option<usize>) {
        let target = match self.config.scheduler {
            SchedPolicy::Pinned => self.threads[t].home_cpu,
            SchedPolicy::Smp => {
                let loads: Vec<(usize, usize)> = self.threads[t]
                    .allowed
                    .iter()
                    .map(|&c| (c, self.cpus[c].queue.len() + self.cpus[c].current.is_some() as usize))
                    .collect();
                sched::select_cpu_smp(self.threads[t].cpu, &loads)
            }
        };
        if target != self.threads[t].cpu && self.threads[t].cpu_time_us > 0.0 {
            self.threads[t].migrations += 1;
        }
        self.threads[t].cpu = target;
        self.threads[t].state = ThreadState::Runnable;
        if self.config.trace {
            let tid = self.threads[t].tid;
            self.trace.push(TraceEvent::SchedWaking {
                time_us: self.now_us,
                waker_cpu: waker_cpu.unwrap_or(target),
                tid,
                target_cpu: target,
            });
        }
        if self.cpus[target].current.is_none() {
            self.switch_in(target, t, None);
        } else {
            self.cpus[target].queue.push_back(t);
        }
    }

    pub(super) fn slice_us(&self, cpu: usize) -> f64 {
        let nr = 1 + self.cpus[cpu].queue.len();
        let factor = 1.0 + (self.cpus.len().min(8) as f64).log2().floor();
        (SCHED_LATENCY_US * factor / nr as f64).max(SCHED_MIN_GRANULARITY_US * factor)
    }

    /// Puts `t` on `cpu`, which must have nothing running; `prev` says who left.
    pub(super) fn switch_in(&mut self, cpu: usize, t: usize, prev: Option<(u32, PrevState)>) {
        if prev.is_none() {
            let exit_us = self.power_up(self.cpus[cpu].cluster);
            self.threads[t].stolen_us += exit_us;
            self.wake_policy(self.cpus[cpu].cluster);
        }
        if self.config.trace {
            if prev.is_none() {
                self.trace_idle(cpu, CPU_IDLE_EXIT);
            }
            let (prev_tid, prev_state) = prev.unwrap_or((0, PrevState::Runnable));
            self.trace.push(TraceEvent::SchedSwitch {
                time_us: self.now_us,
                cpu,
                prev_tid,
                prev_state,
                next_tid: self.threads[t].tid,
            });
        }
        self.dirty = true;
        self.cpus[cpu].current = Some(t);
        self.threads[t].state = ThreadState::Running;
        self.threads[t].cpu = cpu;
        self.cpus[cpu].slice_end_us = self.now_us + self.slice_us(cpu);
    }

    /// The current thread of `cpu` leaves it (already marked sleeping/done); run the next one.
    pub(super) fn switch_out(&mut self, cpu: usize, state: PrevState) {
        self.dirty = true;
        let t = self.cpus[cpu].current.take().expect("a thread was running");
        let prev = (self.threads[t].tid, state);
        if let Some(next) = self.next_for(cpu) {
            self.switch_in(cpu, next, Some(prev));
        } else {
            if self.config.trace {
                self.trace.push(TraceEvent::SchedSwitch {
                    time_us: self.now_us,
                    cpu,
                    prev_tid: prev.0,
                    prev_state: prev.1,
                    next_tid: 0,
                });
                self.trace_idle(cpu, 0);
            }
            self.maybe_power_down(self.cpus[cpu].cluster, self.now_us);
        }
    }

    /// Next thread for a CPU: its own queue, else (smp) pull from the busiest CPU.
    pub(super) fn next_for(&mut self, cpu: usize) -> Option<usize> {
        if let Some(t) = self.cpus[cpu].queue.pop_front() {
            return Some(t);
        }
        if self.config.scheduler != SchedPolicy::Smp {
            return None;
        }
        // New-idle balance: pull a waiting thread allowed here from the CPU with the most waiting.
        let allowed_here = |engine: &Self, t: usize| engine.threads[t].allowed.contains(&cpu);
        let mut best: Option<(usize, usize)> = None; // (cpu, position in its queue)
        for (other, o) in self.cpus.iter().enumerate() {
            if other == cpu || best.is_some_and(|(b, _)| self.cpus[b].queue.len() >= o.queue.len()) {
                continue;
            }
            if let Some(pos) = o.queue.iter().position(|&t| allowed_here(self, t)) {
                best = Some((other, pos));
            }
        }
        let (from, pos) = best?;
        let t = self.cpus[from].queue.remove(pos)?;
        self.threads[t].migrations += 1;
        Some(t)
    }

    pub(super) fn preempt(&mut self, cpu: usize) {
        let t = self.cpus[cpu].current.take().expect("running");
        self.threads[t].state = ThreadState::Runnable;
        self.cpus[cpu].queue.push_back(t);
        let next = self.cpus[cpu].queue.pop_front().expect("queue not empty");
        let prev = (self.threads[t].tid, PrevState::Runnable);
        self.switch_in(cpu, next, Some(prev));
    }

    /// OS jitter: a short burst of kernel work (timers, RCU, vmstat) on `cpu`. Bursts are tens
    /// of µs against 10 ms samples, so they are charged as stolen time at once rather than
    /// simulated as two events: the running thread needs that much longer; an idle CPU is
    /// busy for the burst (load, PELT, cycles, energy).
    pub(super) fn kernel_jitter(&mut self, cpu: usize) {
        let exit_us = self.power_up(self.cpus[cpu].cluster);
        self.wake_policy(self.cpus[cpu].cluster);
        let noise = &self.platform.noise;
        let busy_us = exp_sample(&mut self.rng, noise.kernel_wakeup_mean_busy_us as f64) + exit_us;
        let gap_us = exp_sample(&mut self.rng, noise.kernel_wakeup_mean_interval_us as f64);
        self.cpus[cpu].next_kernel_wakeup_us = self.now_us + busy_us + gap_us;
        self.charge_kernel_time(cpu, busy_us);
    }

    /// `busy_us` of kernel work on `cpu` starting now, charged at once as stolen time (see
    /// `kernel_jitter`): the running thread needs that much longer; an idle CPU is busy for it
    /// (load, PELT, cycles, energy).
    pub(super) fn charge_kernel_time(&mut self, cpu: usize, busy_us: f64) {
        let now = self.now_us;
        let c = self.cpus[cpu].cluster;
        let khz = self.clusters[c].cur_khz;
        let st = &mut self.cpus[cpu];
        st.pmu.cycles += busy_us * khz as f64 / 1000.0;
        match st.current {
            Some(t) => {
                self.threads[t].stolen_us += busy_us;
                st.slice_end_us += busy_us;
            }
            None => {
                st.busy_us += busy_us;
                st.idle_since_sample_us -= busy_us;
                let cluster = &self.platform.clusters[c];
                let scale = khz as f64 / cluster.max_khz() as f64 * self.capacity[c] as f64 / 1024.0;
                st.util_avg += (1024.0 * scale - st.util_avg) * (1.0 - (-busy_us / PELT_TAU_US).exp());
                let mw = power::core_dynamic_mw(self.platform.core_type_of(c), cluster.voltage_v(khz), khz, 1.0);
                self.clusters[c].dynamic_mj += mw * busy_us * 1e-6;
                if self.config.trace {
                    self.trace.push(TraceEvent::CpuIdle { time_us: now, cpu, state: CPU_IDLE_EXIT });
                    self.trace.push(TraceEvent::CpuIdle { time_us: now + busy_us, cpu, state: 0 });
                }
                self.maybe_power_down(c, now + busy_us);
            }
        }
    }

    /// Cluster power-down (`CpuIdle::ClusterOff`): when every CPU of `c` is idle from
    /// `idle_from_us` on and the next known wake-up (kernel timers, sleeping threads' timers)
    /// is further than the target residency, cpuidle powers the cluster down.
    pub(super) fn maybe_power_down(&mut self, c: usize, idle_from_us: f64) {
        if self.config.cpuidle != CpuIdle::ClusterOff || !self.clusters[c].powered {
            return;
        }
        let cluster = &self.platform.clusters[c];
        if cluster.cpus.iter().any(|&cpu| self.cpus[cpu].current.is_some()) {
            return;
        }
        let mut next_wake =
            cluster.cpus.iter().map(|&cpu| self.cpus[cpu].next_kernel_wakeup_us).fold(f64::INFINITY, f64::min);
        for th in &self.threads {
            if let ThreadState::Sleeping { wake_us } = th.state {
                if cluster.cpus.contains(&th.cpu) {
                    next_wake = next_wake.min(wake_us);
                }
            }
        }
        if next_wake - idle_from_us >= cluster.cluster_off_target_residency_us as f64 {
            self.flush();
            self.clusters[c].powered = false;
            self.dirty = true;
            if self.config.trace {
                for &cpu in &cluster.cpus {
                    self.trace.push(TraceEvent::CpuIdle { time_us: idle_from_us, cpu, state: 1 });
                }
            }
        }
    }

    /// Powers cluster `c` up if cpuidle had powered it down; returns the exit latency the
    /// waking CPU pays, µs.
    pub(super) fn power_up(&mut self, c: usize) -> f64 {
        if self.clusters[c].powered || !self.clusters[c].online {
            return 0.0;
        }
        self.flush();
        self.clusters[c].powered = true;
        self.clusters[c].power_downs += 1;
        self.dirty = true;
        self.platform.clusters[c].cluster_off_exit_latency_us as f64
    }

    pub(super) fn trace_idle(&mut self, cpu: usize, state: u32) {
        if self.config.trace {
            self.trace.push(TraceEvent::CpuIdle { time_us: self.now_us, cpu, state });
        }
    }
}
