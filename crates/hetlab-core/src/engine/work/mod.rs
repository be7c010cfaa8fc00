//! The run's work: the tasks (the workload's, then kernel threads'), their threads and where
//! each is in its phases (`thread`), the fork-join pools (`parallel`), the named objects threads
//! wait on (`sync`), the sleep timers (`timers`) and rt-app's trace markers
//! (`rtapp_markers`). What a phase asks of the kernel — run, sleep, wait, wake others — is
//! carried out by the flows (`flow`); the scheduler decides where and when threads run.

mod parallel;
mod rtapp_markers;
mod sync;
mod thread;
mod timers;

pub use parallel::{Arrival, Pools};
pub use rtapp_markers::RtappOutputs;
use rtapp_markers::{Loops, Pen, RtappMarks};
pub use sync::{object_of, Object, SyncObjects, SyncOutcome};
pub use thread::Progress;

use super::hardware::Speed;
use super::outputs::Outputs;
use super::pmu::Pmu;
use crate::kernel::{FIRST_KERNEL_TID, FIRST_USER_TID};
use crate::model::{cache, cci};
use crate::platform::Platform;
use crate::result::ThreadReport;
use crate::workload::{MemProfile, Phase, RcuCalls, Task, Workload};
use thread::Thread;
use timers::Timers;

pub struct Work {
    /// The workload's tasks, then the kernel threads' tasks.
    tasks: Vec<Task>,
    /// Threads per task, resolved at the start (`threads = cpus` counted then).
    task_threads: Vec<u32>,
    threads: Vec<Thread>,
    /// Reference-work conversion for periodic phases, per task and phase: instructions per µs.
    reference_ips: Vec<Vec<f64>>,
    pools: Pools,
    sync: SyncObjects,
    timers: Timers,
    rtapp: RtappMarks,
    workload_name: String,
    /// The workload's own end (rt-app's `duration`), µs.
    duration_us: Option<f64>,
    /// Threads of the workload not yet done (kernel threads do not keep a run going).
    live_user_threads: usize,
    /// Threads left of the tasks that end the run (`Task::ends_run`), if it has such tasks.
    live_ending_threads: Option<usize>,
    /// A user thread blocked or ended during the current event: look for a deadlock after it
    /// (not inside it: a thread may block and wake another within one event).
    look_for_deadlock: bool,
    /// Some phase calls `call_rcu()` (else `run` does not look its thread's phase up for it).
    rcu_calls: bool,
    /// The threads whose progress was handed out to change, or whose phase moved, since
    /// `take_touched` (the model's loads read a running thread's phase).
    touched: Vec<usize>,
}

/// What a thread did while it ran between two events.
pub struct Retired {
    pub instructions: f64,
    /// `call_rcu()`s its phase makes for them: the rate and the reference seconds of work.
    pub rcu: Option<(RcuCalls, f64)>,
}

impl Work {
    /// The work of `workload` with `tasks` (its own, then the kernel threads', the first
    /// `user_tasks` of them the workload's), `task_threads[i]` threads each; periodic phases'
    /// reference work measured on cluster `reference` at its top OPP.
    pub fn new(
        platform: &Platform,
        workload: &Workload,
        tasks: Vec<Task>,
        task_threads: Vec<u32>,
        user_tasks: usize,
        reference: usize,
        rtapp: RtappOutputs,
    ) -> Work {
        let ncpus = platform.ncpus();
        let user_threads: usize = task_threads[..user_tasks].iter().map(|&n| n as usize).sum();
        let mut threads = Vec::new();
        for (ti, (task, &n)) in tasks.iter().zip(&task_threads).enumerate() {
            let kernel = ti >= user_tasks;
            for _ in 0..n {
                let index = threads.len();
                let tid = if kernel {
                    FIRST_KERNEL_TID + (index - user_threads) as u32
                } else {
                    FIRST_USER_TID + index as u32
                };
                threads.push(Thread::new(tid, ti, kernel, task.repeat, ncpus));
            }
        }
        let thread_task: Vec<usize> = threads.iter().map(|t| t.task).collect();
        Work {
            reference_ips: reference_ips(platform, &tasks, reference),
            pools: Pools::new(&tasks),
            sync: SyncObjects::new(&tasks, &task_threads),
            timers: Timers::new(ncpus),
            rtapp: RtappMarks::new(
                &tasks,
                &thread_task,
                rtapp,
                crate::rtapp::calibration::ns_per_loop(platform, reference),
            ),
            workload_name: workload.name.clone(),
            duration_us: workload.duration_us.map(|d| d as f64),
            live_user_threads: user_threads,
            live_ending_threads: tasks
                .iter()
                .enumerate()
                .any(|(ti, t)| t.ends_run && ti < user_tasks)
                .then(|| threads.iter().filter(|th| !th.kernel && tasks[th.task].ends_run).count()),
            look_for_deadlock: false,
            rcu_calls: tasks.iter().flat_map(|t| &t.phases).any(|p| p.rcu.per_s > 0.0),
            touched: Vec::new(),
            tasks,
            task_threads,
            threads,
        }
    }

    // ---- threads and tasks -------------------------------------------------------------------

    pub fn nthreads(&self) -> usize {
        self.threads.len()
    }

    pub fn tasks(&self) -> &[Task] {
        &self.tasks
    }

    /// Thread `t`'s task.
    pub fn task(&self, t: usize) -> &Task {
        &self.tasks[self.threads[t].task]
    }

    /// Thread `t`'s task's index.
    pub fn task_of(&self, t: usize) -> usize {
        self.threads[t].task
    }

    /// The threads task `task` runs.
    pub fn task_threads(&self, task: usize) -> u32 {
        self.task_threads[task]
    }

    pub fn tid(&self, t: usize) -> u32 {
        self.threads[t].tid
    }

    pub fn is_kernel(&self, t: usize) -> bool {
        self.threads[t].kernel
    }

    pub fn progress(&self, t: usize) -> &Progress {
        &self.threads[t].progress
    }

    pub fn progress_mut(&mut self, t: usize) -> &mut Progress {
        self.touched.push(t);
        &mut self.threads[t].progress
    }

    /// The kernel takes `us` of `t`'s time (it runs that much longer).
    pub fn steal(&mut self, t: usize, us: f64) {
        self.threads[t].progress.stolen_us += us;
    }

    /// The phase `t` is in (its last one once it has gone through them all).
    pub fn phase(&self, t: usize) -> &Phase {
        &self.tasks[self.threads[t].task].phases[self.phase_index(t)]
    }

    /// The index of the phase `t` is in, as `phase` gives it: a thread done with its last phase
    /// and not yet gone on (to its next loop, or exit) still runs as that phase did.
    pub fn phase_index(&self, t: usize) -> usize {
        let th = &self.threads[t];
        th.progress.phase.min(self.tasks[th.task].phases.len() - 1)
    }

    /// The memory profile of phase `phase` of task `task`.
    pub fn mem_of(&self, task: usize, phase: usize) -> &MemProfile {
        &self.tasks[task].phases[phase].mem
    }

    /// Instructions per µs of reference work in `t`'s current phase.
    /// `t` is done with its phase: on to the next, back to its loop's first while the loop has
    /// loops left (`Task::loops`).
    pub fn next_phase(&mut self, t: usize) {
        self.touched.push(t);
        let th = &mut self.threads[t];
        let done = th.progress.phase;
        let task = &self.tasks[th.task];
        if let Some(l) = task.loops.iter().find(|l| l.end == done + 1) {
            th.progress.phase_loop += 1;
            if th.progress.phase_loop < l.count {
                th.progress.phase = l.start;
                return;
            }
            th.progress.phase_loop = 0;
        }
        th.progress.phase = done + 1;
    }

    pub fn reference_ips(&self, t: usize) -> f64 {
        let th = &self.threads[t];
        self.reference_ips[th.task][self.phase_index(t)]
    }

    pub fn pmu(&self, t: usize) -> &Pmu {
        &self.threads[t].pmu
    }

    pub fn cpu_time_us(&self, t: usize) -> f64 {
        self.threads[t].cpu_time_us
    }

    /// `t` ran on `cpu` for `dt` µs at `speed`, its core clocked at `khz`: the kernel's time
    /// taken from it is paid back first, then it retires instructions (counted on the thread;
    /// the CPU's counters are the hardware's).
    #[inline]
    pub fn run(&mut self, t: usize, cpu: usize, dt: f64, speed: &Speed, khz: f64) -> Retired {
        let th = &mut self.threads[t];
        let stolen = smaller(th.progress.stolen_us, dt);
        th.progress.stolen_us -= stolen;
        let run_us = dt - stolen;
        let instr = smaller(speed.instr_per_us * run_us, th.progress.work_left);
        // call_rcu() at the phase's rate per second of reference work (`kernel::rcu`)
        let rcu = if !self.rcu_calls {
            None
        } else {
            self.tasks[th.task].phases.get(th.progress.phase).filter(|p| p.rcu.per_s > 0.0).map(|phase| {
                let reference_s = instr / (self.reference_ips[th.task][th.progress.phase] * 1e6);
                (phase.rcu, reference_s)
            })
        };
        th.progress.work_left -= instr;
        th.cpu_time_us += run_us;
        th.cpu_time_on_us[cpu] += run_us;
        let cycles = run_us * khz / 1000.0;
        th.pmu.cycles += cycles;
        th.peer_lines += instr * speed.peer_lines_per_instr;
        th.pmu.add_instructions(
            instr,
            instr * speed.refills_per_instr,
            instr * speed.bus_per_instr,
            instr * speed.refs_per_instr,
        );
        Retired { instructions: instr, rcu }
    }

    /// `t` ends its last phase at `now_us`; true if it was a user thread (one fewer is live;
    /// the others may wait on what it never gave: look for a deadlock).
    pub fn exit(&mut self, t: usize, now_us: f64) -> bool {
        self.threads[t].finish_us = now_us;
        if self.threads[t].kernel {
            return false;
        }
        self.live_user_threads -= 1;
        if self.tasks[self.threads[t].task].ends_run {
            self.live_ending_threads = self.live_ending_threads.map(|n| n - 1);
        }
        self.look_for_deadlock = true;
        true
    }

    /// The workload is over: no user thread left, or none of the tasks that end the run.
    pub fn run_over(&self) -> bool {
        self.live_user_threads == 0 || self.live_ending_threads == Some(0)
    }

    /// The workload's duration ended at `end_us` before thread `t` did.
    pub fn stop_at(&mut self, t: usize, end_us: f64) {
        self.threads[t].finish_us = end_us;
    }

    pub fn live_user_threads(&self) -> usize {
        self.live_user_threads
    }

    /// The user threads' end: the latest finish.
    pub fn user_finish_us(&self) -> f64 {
        self.threads.iter().filter(|t| !t.kernel).map(|t| t.finish_us).fold(0.0, f64::max)
    }

    /// A user thread blocked: look for a deadlock after the event.
    pub fn note_block(&mut self, t: usize) {
        self.look_for_deadlock |= !self.threads[t].kernel;
    }

    /// Whether to look for a deadlock now (once per note).
    pub fn take_look_for_deadlock(&mut self) -> bool {
        std::mem::take(&mut self.look_for_deadlock)
    }

    pub fn workload_name(&self) -> &str {
        &self.workload_name
    }

    pub fn duration_us(&self) -> Option<f64> {
        self.duration_us
    }

    /// The name a thread's comm shows: the workload's threads `task-N`, kernel threads their
    /// task's name.
    pub fn thread_name(&self, t: usize) -> String {
        let th = &self.threads[t];
        let task = &self.tasks[th.task].name;
        if th.kernel {
            task.clone()
        } else {
            format!("{task}-{}", th.tid - FIRST_USER_TID)
        }
    }

    /// Thread `t`'s report, with what the scheduler knows of it.
    pub fn thread_report(&self, t: usize, migrations: u64, taskgroup: Option<String>) -> ThreadReport {
        let th = &self.threads[t];
        ThreadReport {
            tid: th.tid,
            name: self.thread_name(t),
            cpu_time_s: th.cpu_time_us * 1e-6,
            cpu_time_on_s: th.cpu_time_on_us.iter().map(|us| us * 1e-6).collect(),
            finish_s: th.finish_us * 1e-6,
            migrations,
            pmu: th.pmu.to_counts(),
            peer_lines_in: super::pmu::count(th.peer_lines),
            taskgroup,
        }
    }

    // ---- timers ------------------------------------------------------------------------------

    /// Arms `t`'s timer on `cpu` for `wake_us` (a new one: any earlier one no longer counts).
    pub fn arm_timer(&mut self, t: usize, cpu: usize, wake_us: f64) {
        let th = &mut self.threads[t];
        th.timer_seq = th.timer_seq.wrapping_add(1);
        th.timer_cpu = cpu;
        self.timers.arm(cpu, wake_us, t, th.timer_seq);
    }

    /// The CPU `t`'s latest timer was armed on.
    pub fn timer_cpu(&self, t: usize) -> usize {
        self.threads[t].timer_cpu
    }

    /// Takes the threads touched (their progress handed out to change, or their phase moved)
    /// since the last call, each at least once, to `each`.
    pub fn take_touched(&mut self, mut each: impl FnMut(usize)) {
        self.touched.drain(..).for_each(&mut each);
    }

    /// The earliest timer armed on `cpu`, µs.
    pub fn next_timer_us(&self, cpu: usize) -> f64 {
        self.timers.next_us(cpu)
    }

    /// The earliest timer armed on any CPU, µs.
    pub fn next_any_timer_us(&self) -> f64 {
        self.timers.next_any_us()
    }

    /// The timers due by `by_us`, as (thread, sequence) in thread order; each counts only if
    /// [`timer_current`](Self::timer_current) when its turn comes.
    pub fn pop_due_timers(&mut self, by_us: f64, due: &mut Vec<(usize, u32)>) {
        due.clear();
        self.timers.pop_due(by_us, due);
        due.sort_unstable();
    }

    /// Timer `seq` is the one `t` waits for.
    pub fn timer_current(&self, t: usize, seq: u32) -> bool {
        self.threads[t].timer_seq == seq
    }

    /// The rcuo kthread of offloaded `cpu` (`kernel::rcu::rcuo_kthreads`) and the event it
    /// sleeps on.
    pub fn rcuo_of(&self, cpu: usize) -> Option<(usize, usize)> {
        self.kthread_named(&format!("rcuop/{cpu}"), &crate::kernel::rcu::rcuo_event_name(cpu))
    }

    /// The kernel thread of the task named `name` and the condition `event` it sleeps on.
    pub fn kthread_named(&self, name: &str, event: &str) -> Option<(usize, usize)> {
        let thread = self.threads.iter().position(|th| th.kernel && self.tasks[th.task].name == name)?;
        let event = self.sync.find(Object::Condition, event)?;
        Some((thread, event))
    }

    /// The semaphore named `name`, if a phase uses it.
    pub fn semaphore(&self, name: &str) -> Option<usize> {
        self.sync.find(Object::Semaphore, name)
    }

    // ---- sub-parts -----------------------------------------------------------------------------

    pub fn sync(&self) -> &SyncObjects {
        &self.sync
    }

    pub fn sync_mut(&mut self) -> &mut SyncObjects {
        &mut self.sync
    }

    pub fn pools_mut(&mut self) -> &mut Pools {
        &mut self.pools
    }

    // ---- rt-app's markers (only in a trace, only for rt-app tasks) ---------------------------

    /// `t` enters phase `phase` on `cpu` at `now_us`: the markers of what ends and starts there,
    /// now if it is `running`, else when it is next switched in.
    pub fn rtapp_enter(&mut self, out: &mut Outputs, t: usize, phase: usize, now_us: f64, cpu: usize, running: bool) {
        let th = &self.threads[t];
        let pen = Pen { out, now_us, cpu, tid: th.tid };
        let task = &self.tasks[th.task];
        let loops = Loops { thread_loop: task.repeat - th.progress.repeats_left, phase_loop: th.progress.phase_loop };
        self.rtapp.enter(pen, t, task, phase, loops, running);
    }

    /// Whether rt-app's threads write markers or log rows in this run.
    pub fn rtapp_active(&self) -> bool {
        self.rtapp.active()
    }

    /// rt-app's log of thread `t`'s loops, if it is an rt-app thread and logs were asked for.
    pub fn rtapp_log(&mut self, t: usize) -> Option<crate::result::RtappLog> {
        let task = self.threads[t].task;
        self.tasks[task].rtapp.as_ref()?;
        let rows = self.rtapp.take_rows(t);
        Some(crate::result::RtappLog { thread: self.thread_name(t), index: t as u32, rows })
    }

    /// `t` was switched in on `cpu`: the markers of what it entered meanwhile.
    pub fn rtapp_switched_in(&mut self, out: &mut Outputs, t: usize, now_us: f64, cpu: usize) {
        let th = &self.threads[t];
        self.rtapp.switched_in(Pen { out, now_us, cpu, tid: th.tid }, t, &self.tasks[th.task]);
    }

    /// `t` reached a timer at `now_us`: it sleeps to `expiry_us` (or not, after an overrun).
    pub fn rtapp_timer(&mut self, t: usize, now_us: f64, expiry_us: f64, period_us: u64, sleeps: bool) {
        let task = &self.tasks[self.threads[t].task];
        self.rtapp.timer(t, task, now_us, expiry_us, period_us, sleeps);
    }

    /// `t` exits on `cpu`: its loop's end and its task's (and the main process's, after the
    /// last user thread).
    pub fn rtapp_exit(&mut self, out: &mut Outputs, t: usize, now_us: f64, cpu: usize) {
        let th = &self.threads[t];
        let pen = Pen { out, now_us, cpu, tid: th.tid };
        self.rtapp.exit(pen, t, &self.tasks[th.task], self.live_user_threads);
    }
}

/// Reference work for periodic phases: instructions per µs on cluster `reference` at its top
/// OPP, idle memory, no snoop penalty.
fn reference_ips(platform: &Platform, tasks: &[Task], reference: usize) -> Vec<Vec<f64>> {
    let ref_core = platform.core_type_of(reference);
    let ref_ghz = platform.clusters[reference].max_khz() as f64 / 1e6;
    let ref_l2 = platform.clusters[reference].l2_bytes as f64;
    let miss_ns = cci::unloaded_miss_ns(platform);
    tasks
        .iter()
        .map(|t| {
            t.phases
                .iter()
                .map(|p| {
                    let m = cache::miss_ratios(&p.mem, ref_core, ref_l2, &platform.caches);
                    1000.0 / cache::instr_time(&p.mem, ref_core, ref_ghz, &m, miss_ns).total_ns()
                })
                .collect()
        })
        .collect()
}

/// The smaller of two quantities, neither NaN nor -0 (a compare and a select: `f64::min` is
/// the same value on these, and several more instructions to order NaN).
#[inline]
fn smaller(a: f64, b: f64) -> f64 {
    let plain = |x: f64| !x.is_nan() && (x != 0.0 || x.is_sign_positive());
    debug_assert!(plain(a) && plain(b));
    if b < a {
        b
    } else {
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_pays_back_stolen_time_before_it_retires_instructions() {
        let p = Platform::builtin("exynos5422").unwrap();
        let w = Workload::from_spec("cpu-bound:threads=2,instructions=1000").unwrap();
        let mut work = Work::new(&p, &w, w.tasks.clone(), vec![2], 1, 1, RtappOutputs { trace: false, logs: false });
        assert_eq!((work.nthreads(), work.tid(1), work.thread_name(1)), (2, FIRST_USER_TID + 1, "cpu-bound-1".into()));
        work.progress_mut(0).work_left = 1000.0;
        work.steal(0, 4.0);
        let speed = Speed { instr_per_us: 100.0, ..Default::default() };
        let r = work.run(0, 3, 10.0, &speed, 1_000_000.0);
        assert_eq!((r.instructions, work.progress(0).stolen_us), (600.0, 0.0));
        assert_eq!((work.cpu_time_us(0), work.pmu(0).cycles), (6.0, 6000.0));
        let r = work.run(0, 3, 10.0, &speed, 1_000_000.0);
        assert_eq!(r.instructions, 400.0, "no more than the job has left");
        assert!(work.exit(0, 20.0));
        assert!(work.take_look_for_deadlock());
        assert_eq!(work.live_user_threads(), 1);
    }
}
