//! The run queues across classes, as `core.c` drives them: a waiting task queued and unqueued
//! in its class (DL by deadline, RT by priority, CFS by vruntime), a task started and stopped on
//! a CPU, the preemption and pick order (DL, then RT, then CFS), a task's entity moving between
//! CPUs, a change of class, and a task leaving for good. Each returns what the engine's flows
//! need to go on (the thread to switch to, the class that left).

use super::{Scheduler, ThreadState};
use crate::engine::outputs::Outputs;
use crate::sched::{rt, ClassKind};
use crate::trace::PrevState;

impl Scheduler<'_> {
    /// `t` waits on its CPU's run queue.
    pub fn is_queued(&self, t: usize) -> bool {
        let se = &self.entities[t];
        let rq = &self.rqs[se.cpu];
        match se.class.rt_priority() {
            Some(priority) => rq.rt.contains(t, priority, se.rt_arrival),
            None if se.is_dl() => rq.dl.contains(t, se.dl.deadline_ns),
            None => rq.queue.contains(t, se.vruntime),
        }
    }

    /// Waiting `t` leaves its CPU's run queue (and, CFS, its weight the queue's load).
    pub fn dequeue_waiting(&mut self, t: usize, now_us: f64) {
        let (cpu, fair) = (self.entities[t].cpu, self.entities[t].is_fair());
        if fair && self.eevdf.is_some() {
            self.eevdf_dequeue(cpu, t, false); // its lag, while it still counts there
        }
        self.unqueue(t);
        self.uclamp_dequeue(t);
        self.util_est_dequeue(t);
        if fair {
            self.cfs_leave(cpu, t, false, now_us);
        }
    }

    /// Waiting `t` leaves its class's queue on its CPU, to run there or to leave the CPU.
    pub fn unqueue(&mut self, t: usize) {
        let se = &self.entities[t];
        let rq = &mut self.rqs[se.cpu];
        let was_waiting = match se.class.rt_priority() {
            Some(priority) => rq.rt.remove(t, priority, se.rt_arrival),
            None if se.is_dl() => rq.dl.remove(t, se.dl.deadline_ns),
            None => self.groups.remove_task(se.cpu, t, rq, &self.entities),
        };
        debug_assert!(was_waiting, "thread {t} was not waiting on CPU {}", se.cpu);
    }

    /// Running `t` stops running on `cpu` (it stays runnable or leaves; the caller says): an
    /// RT task's class state is brought up to date (what is left of a SCHED_RR slice).
    pub fn stop_running(&mut self, cpu: usize, t: usize, now_us: f64) {
        self.account_rt(cpu, now_us);
        if self.entities[t].is_fair() {
            self.put_prev(cpu, t, now_us);
        }
        if self.rqs[cpu].dl.running.is_some() {
            // the callers have throttled a server found out of runtime
            self.account_dl(cpu, now_us);
            self.update_dl_avg(cpu, now_us);
            self.rqs[cpu].dl.running = None;
        }
        let rq = &mut self.rqs[cpu];
        rq.curr = None;
        self.busy = self.busy.without(cpu);
        self.loads_stale = self.loads_stale.with(cpu);
        if rq.rt.running.take().is_some() {
            let started_us = rq.slice_start_us;
            let ticks_run = self.ticks_since(started_us, now_us);
            let se = &mut self.entities[t];
            se.rr_slice_left_ticks = rt::rr_slice_left(ticks_run, se.rr_slice_left_ticks, self.sysctls.rr_slice_ticks);
        }
    }

    /// `t` starts running on `cpu` at `now_us`: the run queue's signals and its own are brought
    /// up to date (the time it waited), then it is the CPU's current task in its class.
    pub fn start_running(&mut self, cpu: usize, t: usize, now_us: f64, out: &mut Outputs) {
        self.update_rt_avg(cpu, now_us);
        self.update_dl_avg(cpu, now_us);
        self.update_rq_avg(cpu, now_us, out);
        self.update_entity_avg(t, now_us, out);
        let rq = &mut self.rqs[cpu];
        rq.curr = Some(t);
        self.busy = self.busy.with(cpu);
        self.loads_stale = self.loads_stale.with(cpu);
        rq.rt.running = self.entities[t].class.rt_priority();
        rq.rt.accounted_us = now_us;
        rq.slice_start_us = now_us;
        rq.exec_start_us = now_us;
        let se = &mut self.entities[t];
        if se.is_dl() {
            rq.dl.running = Some(se.dl.deadline_ns);
            se.dl.exec_start_ns = super::pelt::ns(now_us);
        }
        self.threads[t].state = ThreadState::Running;
        se.cpu = cpu;
        se.exec_start_us = now_us;
        if !se.is_fair() {
            self.groups.forget_prev(cpu);
        } else {
            let now = self.group_now(cpu, now_us);
            self.groups.set_next(cpu, t, &now);
        }
        self.resched[cpu] = false;
        if self.eevdf.is_some() && self.entities[t].is_fair() {
            self.eevdf_set_next(cpu, t);
        }
    }

    /// `t`, running on `cpu`, goes back to its class's queue (an RT task keeps its place in its
    /// list) for the waiting `next`, taken off its queue to run.
    pub fn put_back(&mut self, cpu: usize, t: usize, next: usize, now_us: f64) {
        // both stay on the run queue: its load does not change
        self.unqueue(next);
        let se = &self.entities[t];
        match se.class.rt_priority() {
            Some(priority) => {
                let arrival = se.rt_arrival;
                self.rt_wait(cpu, t, priority, arrival)
            }
            None if se.is_dl() => self.rqs[cpu].dl.insert(t, se.dl.deadline_ns),
            None => self.groups.insert_task(cpu, t, &mut self.rqs[cpu], &self.entities),
        }
        self.stop_running(cpu, t, now_us);
        self.threads[t].state = ThreadState::Runnable;
    }

    /// The running thread of `cpu` stops to `state` (asleep, suspended or done) and leaves the
    /// run queue; the thread and the class that left (the CPU runs the next or idles).
    pub fn switch_out(&mut self, cpu: usize, state: ThreadState, now_us: f64, out: &mut Outputs) -> (usize, ClassKind) {
        self.update_curr(cpu, now_us);
        self.update_util(cpu, now_us, out);
        let t = self.rqs[cpu].curr.expect("a thread was running");
        self.uclamp_dequeue(t);
        self.util_est_dequeue(t);
        if matches!(state, ThreadState::Sleeping { .. } | ThreadState::Suspended) {
            self.util_est_sleep(t, cpu); // DEQUEUE_SLEEP: its signals were brought up to now above
        }
        let prev_class = self.entities[t].class_kind();
        if prev_class == ClassKind::Fair {
            self.cfs_leave(cpu, t, true, now_us);
        }
        // `dequeue_task_dl`: a server out of runtime as it blocks is throttled, off its queue
        let exhausted = self.account_dl(cpu, now_us);
        self.stop_running(cpu, t, now_us);
        self.threads[t].state = state;
        if prev_class == ClassKind::Deadline {
            if exhausted {
                self.dl_throttle(t, now_us);
            }
            self.dl_non_contending(cpu, t, now_us);
        }
        (t, prev_class)
    }

    /// The thread (tid) that left `cpu` and how, for its `sched_switch`.
    pub fn prev(&self, t: usize, state: PrevState) -> (u32, PrevState) {
        (self.threads[t].tid, state)
    }

    /// Which waiting thread of `cpu` ranks before its running one, if any: an earlier
    /// deadline, any DL task before an RT or CFS one, a higher RT priority, any RT task before
    /// a CFS one, or the smallest vruntime among CFS tasks (when that is the running one, it
    /// starts a new turn and nothing switches). The (running, next) pair to switch.
    pub fn preempt_choice(&mut self, cpu: usize, now_us: f64) -> Option<(usize, usize)> {
        let rq = &self.rqs[cpu];
        let t = rq.curr.expect("running");
        let e = &self.entities;
        if let Some(d) = rq.dl.first_deadline() {
            if rq.dl.running.is_none_or(|running| d < running) {
                return Some((t, rq.dl.first().expect("a DL task waits")));
            }
        }
        if e[t].is_dl() {
            return None;
        }
        if !rq.rt.throttled && rq.rt.highest_waiting() > e[t].class.rt_priority() {
            return Some((t, rq.rt.first().expect("an RT task waits")));
        }
        if e[t].is_rt() {
            return None;
        }
        match self.pick_cfs(cpu, Some(t), false) {
            Some(next) if next != t => Some((t, next)),
            _ => {
                self.new_turn(cpu, t, now_us);
                None
            }
        }
    }

    /// The earliest deadline waiting on `cpu`, else its highest RT priority unless throttled:
    /// taken off its queue to run.
    pub fn take_first_dl_or_rt(&mut self, cpu: usize) -> Option<usize> {
        let rq = &self.rqs[cpu];
        let t = rq.dl.first().or_else(|| rq.rt.first().filter(|_| !rq.rt.throttled))?;
        self.unqueue(t);
        Some(t)
    }

    /// After a task of `prev_class` left `cpu`, RT tasks may be pulled from elsewhere
    /// (`pull_rt_task` after an RT or DL task, while the CPU's RT queue is not throttled).
    pub fn may_pull_rt(&self, cpu: usize, prev_class: ClassKind) -> bool {
        prev_class != ClassKind::Fair && !self.rqs[cpu].rt.throttled
    }

    /// The CFS task with the smallest vruntime waiting on `cpu`, taken off its queue to run.
    pub fn take_first_cfs(&mut self, cpu: usize) -> Option<usize> {
        let t = self.pick_cfs(cpu, None, false)?;
        self.unqueue(t);
        Some(t)
    }

    /// `t`, waiting elsewhere and moved here, joins idle `cpu`'s CFS loads to run.
    pub fn join_to_run(&mut self, cpu: usize, t: usize, now_us: f64, out: &mut Outputs) {
        self.update_rq_avg(cpu, now_us, out);
        self.cfs_join(cpu, t, now_us);
    }

    /// `cpu` has nothing to run: it goes idle.
    pub fn cpu_goes_idle(&mut self, cpu: usize) {
        self.groups.forget_prev(cpu);
    }

    /// Running `t` leaves `from` for another CPU (active migration): its runtime and signals
    /// are accounted, it stops there and is runnable elsewhere; the class that left.
    pub fn stop_for_migration(&mut self, t: usize, from: usize, now_us: f64, out: &mut Outputs) -> ClassKind {
        self.update_curr(from, now_us);
        self.update_util(from, now_us, out);
        let class = self.entities[t].class_kind();
        debug_assert!(class != ClassKind::Deadline, "a DL task spans its root domain: never moved by affinity");
        if class == ClassKind::Fair {
            self.cfs_leave(from, t, false, now_us);
        }
        self.stop_running(from, t, now_us);
        self.uclamp_dequeue(t);
        self.util_est_dequeue(t);
        self.threads[t].state = ThreadState::Runnable;
        class
    }

    /// Waiting `t` leaves `from`'s queue for another CPU, its signals accounted first.
    pub fn dequeue_for_migration(&mut self, t: usize, from: usize, now_us: f64, out: &mut Outputs) {
        self.update_rq_avg(from, now_us, out);
        self.update_entity_avg(t, now_us, out);
        self.dequeue_waiting(t, now_us);
    }

    /// `t`'s entity moves from `from`'s run queue to `to`'s: its DL bandwidth follows it, its
    /// vruntime is renormalised to the new queue's minimum, and its utilisation leaves one
    /// queue's signal and joins the other's (`migrate_task_rq_fair`).
    pub fn move_entity(&mut self, t: usize, from: usize, to: usize, now_us: f64, out: &mut Outputs) {
        self.dl_move_bw(t, from, to);
        let now = self.group_now(from, now_us);
        if self.eevdf.is_none() {
            // under EEVDF it is placed by the lag it kept
            self.groups.renormalise(t, from, to, &self.rqs, &mut self.entities);
        }
        self.groups.detach(from, t, &mut self.rqs[from], &self.entities, &now);
        self.entities[t].cpu = to;
        if self.track_util {
            let mut avg = self.entities[t].avg;
            self.rqs[from].avg.detach(&avg);
            self.update_rq_avg(to, now_us, out);
            self.rqs[to].avg.attach(&mut avg);
            self.entities[t].avg = avg;
            self.trace_pelt_cfs(from, now_us, out);
            self.trace_pelt_cfs(to, now_us, out);
        }
    }

    /// `t` changes class (`__sched_setscheduler`), the caller having taken it off its queue
    /// (`waiting`) or its CPU (`running`, its CFS load left): its CFS signal and load leave
    /// the run queue's if it was CFS (`switched_from_fair`), its weight, RR slice and (joining
    /// CFS) vruntime are those of the new class, and its clamps its class's defaults.
    pub fn change_class(&mut self, t: usize, class: rt::SchedClass, on_queue: bool, now_us: f64) {
        let cpu = self.entities[t].cpu;
        if self.entities[t].is_fair() && on_queue {
            self.detach_avg(cpu, t);
            let now = self.group_now(cpu, now_us);
            self.groups.detach(cpu, t, &mut self.rqs[cpu], &self.entities, &now);
        }
        let se = &mut self.entities[t];
        se.class = class;
        se.weight = crate::sched::cfs::weight_for(class, se.nice); // off every CFS queue here
        se.rr_slice_left_ticks = self.sysctls.rr_slice_ticks;
        if class.rt_priority().is_none() && self.eevdf.is_none() {
            // joins CFS at its run queue's minimum (`attach_task_cfs_rq`; EEVDF places it
            // by its lag as it is queued)
            let min = self.groups.min_vruntime(cpu, self.groups.of(t), &self.rqs[cpu]);
            self.entities[t].vruntime = min;
        }
        // `__setscheduler_uclamp`: the new class's default util_min where it asked none
        self.uclamp_update(t);
    }

    /// SCHED_OTHER <-> SCHED_IDLE (or BATCH): the same class, a new weight (`set_load_weight`).
    pub fn change_fair_policy(&mut self, t: usize, class: rt::SchedClass, now_us: f64) {
        self.update_curr(self.entities[t].cpu, now_us);
        self.entities[t].class = class;
        self.set_weight(t, now_us);
    }

    /// The class of `cpu`'s running task changed to a `lower` priority: true if the CPU is
    /// going through that task's zero-work phases (a lower priority is noted for their end).
    pub fn defer_if_lower(&mut self, cpu: usize, lower: bool) -> bool {
        match &mut self.deferred_preempt {
            Some((deferred, woken)) if *deferred == cpu => {
                *woken |= lower;
                true
            }
            _ => false,
        }
    }

    /// `t`, running on `cpu` when its class changed, runs on in its new class: the run queue's
    /// current task again, its CFS load and signal joining, or RT work arriving.
    pub fn resume_in_class(&mut self, cpu: usize, t: usize, now_us: f64, out: &mut Outputs) {
        let class = self.entities[t].class;
        let rq = &mut self.rqs[cpu];
        rq.curr = Some(t);
        self.busy = self.busy.with(cpu);
        self.loads_stale = self.loads_stale.with(cpu);
        rq.rt.running = class.rt_priority();
        rq.slice_start_us = now_us;
        rq.exec_start_us = now_us;
        if class.rt_priority().is_none() {
            self.cfs_join(cpu, t, now_us);
            if self.eevdf.is_some() {
                self.eevdf_place(cpu, t, super::Arrival::Migration);
            }
            self.attach_avg(cpu, t, now_us, out);
            let now = self.group_now(cpu, now_us);
            self.groups.set_next(cpu, t, &now);
        } else {
            self.groups.forget_prev(cpu);
            self.start_rt_bandwidth(now_us);
        }
    }

    /// `t` exits on `cpu` (off its CPU and queues already): its clamps leave their buckets, a
    /// CFS task takes its utilisation with it (`detach_entity_load_avg`), its groups let it go.
    pub fn exit(&mut self, t: usize, now_us: f64, out: &mut Outputs) {
        let cpu = self.entities[t].cpu;
        self.uclamp_dequeue(t);
        self.util_est_dequeue(t);
        if self.track_util && self.entities[t].is_fair() {
            self.detach_avg(cpu, t);
            self.trace_pelt_cfs(cpu, now_us, out);
        }
        let now = self.group_now(cpu, now_us);
        self.groups.detach(cpu, t, &mut self.rqs[cpu], &self.entities, &now);
    }

    /// `t`'s allowed CPUs become `cpus` (`None`: every CPU the workload may use), within the
    /// workload's CPUs; its clamp request becomes `util` where given; its nice value, if given,
    /// its weight (`reweight_entity`, 5.10: its vruntime unchanged).
    pub fn set_attributes(
        &mut self,
        t: usize,
        cpus: Option<&[usize]>,
        util: (Option<u32>, Option<u32>),
        nice: Option<i32>,
        now_us: f64,
    ) {
        let user_cpus = self.user_cpus;
        let se = &mut self.entities[t];
        se.allowed = match cpus {
            Some(cpus) => crate::sched::CpuMask::of(cpus.iter().copied()).and(user_cpus),
            None => user_cpus,
        };
        se.uclamp_req = se.uclamp_req.then(util.0, util.1);
        if let Some(nice) = nice {
            self.entities[t].nice = nice;
            self.set_weight(t, now_us);
        }
    }

    /// `t`'s kernel priority now (for a trace).
    pub fn kernel_prio(&self, t: usize) -> (u32, i32) {
        (self.threads[t].tid, self.entities[t].kernel_prio())
    }
}
