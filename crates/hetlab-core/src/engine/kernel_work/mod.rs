//! The kernel's own work on the simulated CPUs, as the engine keeps it: OS jitter's next bursts
//! (`kernel::jitter`), `perf record`'s counter overflows (`kernel::perf_sampling`), Tree RCU's
//! state machine with the rcuo kthreads of `rcu_nocbs=` CPUs (`kernel::rcu`), the board's
//! interrupts, kernel threads and timers when its platform describes its kernel
//! (`interrupts`), and the kernel work charged in advance on idle CPUs that a thread switched
//! in may take over. The flows that charge this work to CPUs and threads are in `flow`.

mod interrupts;

pub use interrupts::Interrupts;

use crate::kernel::boot::BootOptions;
use crate::kernel::irq::InterruptReport;
use crate::kernel::jitter::Jitter;
use crate::kernel::kthreads::Kthread;
use crate::kernel::perf_sampling::PerfCounters;
use crate::kernel::rcu::{self, Batch, GpPass, Rcu, RcuReport};
use crate::model::pollution::sample_cycles;
use crate::platform::Platform;
use crate::random::Rng;
use crate::workload::{IrqStream, RcuCalls};
use std::collections::HashMap;

/// The thread a perf overflow interrupts: its cluster, (task, phase) and memory profile (what
/// the handler's pollution costs depends on them, `kernel::perf_sampling::sample_cycles`).
pub struct PerfTarget<'m> {
    pub cluster: usize,
    pub task_phase: (usize, usize),
    pub mem: &'m crate::workload::MemProfile,
}

/// How a run finds its kernel threads and semaphores (`Work`'s lookups, by name): the rcuo
/// kthread of a CPU, a kernel thread and its event, a semaphore.
pub struct Lookups<R, K, S> {
    pub rcuo: R,
    pub kthread: K,
    pub semaphore: S,
}

/// Kernel work charged in advance on an idle CPU: when it ends, and what each µs of it was
/// charged, so a thread switched in before the end can take the rest back.
#[derive(Debug, Clone, Copy)]
pub struct KernelBurst {
    pub until_us: f64,
    pub khz: u32,
    pub mw: f64,
}

pub struct KernelWork<'a> {
    platform: &'a Platform,
    jitter: Jitter,
    /// Counter-overflow sampling on chosen CPUs, if configured, and the cycles of one sample
    /// per (task, phase, cluster) it interrupted (`model::pollution`, computed once each).
    perf: Option<PerfCounters>,
    sample_cycles: HashMap<(usize, usize, usize), f64>,
    rcu: Rcu,
    /// Per CPU: the rcuo kthread of its offloaded callbacks, and the event it sleeps on.
    rcuo: Vec<Option<(usize, usize)>>,
    /// rcuo kthreads to wake at the next event (their list became non-empty, or their grace
    /// period ended), with the CPU that wakes them.
    rcuo_to_wake: Vec<(usize, Option<usize>)>,
    /// The board's kernel, if the platform describes it.
    interrupts: Option<Interrupts<'a>>,
    /// RCU ever had work in this run (the report is given then, or with options set).
    rcu_used: bool,
    /// Per CPU: kernel work charged at once on it while idle, not over yet.
    bursts: Vec<Option<KernelBurst>>,
}

impl<'a> KernelWork<'a> {
    /// The kernel's work on `platform` with the `online` CPUs booted with `boot`: jitter's
    /// first bursts drawn from `rng` in CPU order, `perf`'s counters, RCU, the board's kernel
    /// with the workload's interrupt `streams` (its first random interrupts drawn next), the
    /// kernel threads and semaphores found through `lookups`.
    pub fn new<R, K, S>(
        platform: &'a Platform,
        online: &[bool],
        rng: &mut Rng,
        perf: Option<PerfCounters>,
        boot: &BootOptions,
        streams: &[IrqStream],
        lookups: Lookups<R, K, S>,
    ) -> KernelWork<'a>
    where
        R: Fn(usize) -> Option<(usize, usize)>,
        K: Fn(&str, &str) -> Option<(usize, usize)>,
        S: Fn(&str) -> Option<usize>,
    {
        let ncpus = platform.ncpus();
        let options = boot.rcu.clone();
        let rcu_used = options != rcu::RcuOptions::default();
        let rcuo =
            (0..ncpus).map(|cpu| if options.nocbs.contains(&cpu) { (lookups.rcuo)(cpu) } else { None }).collect();
        let jitter = Jitter::new(&platform.noise, online, rng);
        let interrupts = Interrupts::new(platform, streams, online, boot, rng, lookups.kthread, lookups.semaphore);
        KernelWork {
            platform,
            jitter,
            perf,
            sample_cycles: HashMap::new(),
            rcu: Rcu::new(options, ncpus, platform.hz),
            rcuo,
            rcuo_to_wake: Vec::new(),
            interrupts,
            rcu_used,
            bursts: vec![None; ncpus],
        }
    }

    /// The board's kernel, if the platform describes it.
    pub fn interrupts(&self) -> Option<&Interrupts<'a>> {
        self.interrupts.as_ref()
    }

    pub fn interrupts_mut(&mut self) -> Option<&mut Interrupts<'a>> {
        self.interrupts.as_mut()
    }

    /// Where the board's interrupt work ran, if the platform describes its kernel.
    pub fn interrupt_report(&self) -> Option<InterruptReport> {
        self.interrupts.as_ref().map(Interrupts::report)
    }

    // ---- OS jitter ---------------------------------------------------------------------------

    pub fn next_burst_us(&self, cpu: usize) -> f64 {
        self.jitter.next_burst_us(cpu)
    }

    /// The first CPU at or after `cpu` whose jitter burst is due by `by_us`.
    #[inline]
    pub fn burst_due_from(&self, cpu: usize, by_us: f64) -> Option<usize> {
        self.jitter.first_due_from(cpu, by_us)
    }

    /// The earliest next jitter burst of any CPU (offline CPUs have none), µs.
    pub fn earliest_burst_us(&self) -> f64 {
        self.jitter.earliest_burst_us()
    }

    /// The jitter burst due on `cpu` at `now_us`, µs, with `exit_us` of idle exit first.
    pub fn jitter_burst(&mut self, cpu: usize, now_us: f64, exit_us: f64, rng: &mut Rng) -> f64 {
        self.jitter.burst(cpu, now_us, exit_us, &self.platform.noise, rng)
    }

    // ---- perf ------------------------------------------------------------------------------

    /// perf samples the run (its overflows steal time from the threads).
    #[inline]
    pub fn perf_sampling(&self) -> bool {
        self.perf.is_some()
    }

    /// `instr` instructions ran on `cpu` clocked at `khz`, by the thread `on` says: the time the
    /// overflows they caused take from it, µs (0 without perf sampling there).
    #[inline]
    pub fn perf_overflows_us(&mut self, cpu: usize, instr: f64, khz: f64, on: PerfTarget) -> f64 {
        let Some(perf) = &mut self.perf else { return 0.0 };
        let samples = perf.count(cpu, instr);
        if samples == 0 {
            return 0.0;
        }
        let platform = self.platform;
        let work = perf.work_per_sample();
        let key = (on.task_phase.0, on.task_phase.1, on.cluster);
        let cycles = *self.sample_cycles.entry(key).or_insert_with(|| {
            let cost = platform.perf_sample.as_ref().expect("perf sampling needs [perf_sample]");
            let (core, l2) = (platform.core_type_of(on.cluster), platform.clusters[on.cluster].l2_bytes as f64);
            sample_cycles(cost, on.mem, core, l2, &platform.caches, work)
        });
        perf.cost_us(samples, khz, cycles)
    }

    // ---- kernel work charged ahead ---------------------------------------------------------------

    /// Kernel work runs on idle `cpu` until `burst.until_us`.
    pub fn start_burst(&mut self, cpu: usize, burst: KernelBurst) {
        self.bursts[cpu] = Some(burst);
    }

    /// When the kernel work charged ahead on `cpu` ends (or ended), µs.
    pub fn burst_end_us(&self, cpu: usize) -> Option<f64> {
        self.bursts[cpu].map(|b| b.until_us)
    }

    /// `cpu` runs kernel work charged ahead at `now_us`.
    pub fn in_burst(&self, cpu: usize, now_us: f64) -> bool {
        self.bursts[cpu].is_some_and(|b| b.until_us > now_us)
    }

    /// The burst charged on `cpu`, which a thread takes over.
    pub fn take_burst(&mut self, cpu: usize) -> Option<KernelBurst> {
        self.bursts[cpu].take()
    }

    /// CPU time, µs, of `reference_us` of kernel work on a CPU of cluster `c` at `khz` (the
    /// reference core at its top OPP does it in `reference_us`).
    pub fn work_us(&self, c: usize, khz: u32, reference_us: f64) -> f64 {
        let platform = self.platform;
        let reference = (0..platform.clusters.len()).max_by_key(|&c| platform.cpu_capacity(c)).unwrap_or(0);
        let ref_khz = platform.clusters[reference].max_khz() as f64;
        reference_us * ref_khz / khz as f64 * platform.core_type_of(c).cpi_factor
    }

    // ---- RCU -------------------------------------------------------------------------------

    /// RCU has callbacks or a grace period under way, or rcuo kthreads to wake: the tick runs.
    pub fn rcu_needs_tick(&self) -> bool {
        // nothing was ever queued (the only way in is `call_rcu`): no need to scan the lists
        debug_assert!(self.rcu_used || !self.rcu.active());
        (self.rcu_used && self.rcu.active()) || !self.rcuo_to_wake.is_empty()
    }

    /// `call_rcu()` on `cpu` at the phase's rate for `reference_s` seconds of reference work.
    pub fn call_rcu(&mut self, cpu: usize, calls: RcuCalls, reference_s: f64) {
        self.rcu_used = true;
        if let Some(w) = self.rcu.call_rcu(cpu, reference_s * calls.per_s, calls.callback_us, calls.lazy) {
            self.rcuo_to_wake.push((w, Some(cpu)));
        }
    }

    /// The tick's RCU work on `cpu` (busy, or idle and kept ticking by RCU): the callbacks that
    /// run in its softirq.
    pub fn rcu_tick(&mut self, cpu: usize, idle: bool) -> Batch {
        if idle {
            self.rcu.report.idle_ticks[cpu] += 1;
        }
        self.rcu.tick(cpu, idle)
    }

    /// Idle `cpu` needs its tick at `jiffy` (it holds callbacks, or fast-no-hz's timer is due).
    pub fn rcu_idle_needs_tick(&self, cpu: usize, jiffy: u64) -> bool {
        self.rcu.idle_needs_tick(cpu, jiffy)
    }

    /// `cpu` goes idle at `jiffy` (RCU_FAST_NO_HZ): the callbacks it runs first, if it holds
    /// any.
    pub fn rcu_enter_idle(&mut self, cpu: usize, jiffy: u64) -> Option<Batch> {
        self.rcu.has_callbacks(cpu).then(|| self.rcu.enter_idle(cpu, jiffy))
    }

    /// Idle `cpu` going back to idle after its tick at `jiffy`: rcu_prepare_for_idle re-arms the
    /// fast-no-hz timer.
    pub fn rcu_back_to_idle(&mut self, cpu: usize, jiffy: u64) {
        self.rcu.enter_idle(cpu, jiffy);
    }

    /// The end of `jiffy`, at which the CPUs in `dyntick_idle` had no tick: grace periods
    /// advance; the grace-period kthread's pass is queued (with the board's kernel) and the
    /// rcuo kthreads whose grace period ended are to be woken, by the grace-period kthread
    /// (its CPU: `gp_cpu`).
    pub fn rcu_end_jiffy(&mut self, jiffy: u64, dyntick_idle: &[bool], gp_cpu: Option<usize>) {
        let wakes = self.rcu.end_jiffy(jiffy, dyntick_idle);
        self.rcuo_to_wake.extend(wakes.rcuo.into_iter().map(|cpu| (cpu, gp_cpu)));
        if let (Some(pass), Some(k)) = (wakes.gp, self.interrupts.as_mut()) {
            let GpPass { fqs, cleanup, init, waker } = pass;
            let s = k.setup();
            let work_us = [(fqs, s.rcu_gp_fqs_us), (cleanup, s.rcu_gp_cleanup_us), (init, s.rcu_gp_init_us)]
                .iter()
                .filter(|(on, _)| *on)
                .map(|(_, us)| us)
                .sum();
            k.queue(Kthread::RcuGp, work_us, waker);
        }
    }

    /// RCU_SOFTIRQ ran callbacks on `cpu` for `s` seconds.
    pub fn note_softirq(&mut self, cpu: usize, s: f64) {
        self.rcu.report.softirq_s[cpu] += s;
    }

    /// When idle `cpu` next wakes for RCU after `jiffy`, as a jiffy.
    pub fn rcu_idle_wakeup_jiffy(&self, cpu: usize, jiffy: u64) -> Option<u64> {
        self.rcu.idle_wakeup_jiffy(cpu, jiffy)
    }

    /// Some rcuo kthread is to be woken.
    pub fn rcuo_to_wake(&self) -> bool {
        !self.rcuo_to_wake.is_empty()
    }

    /// The offloaded CPUs whose rcuo kthread is to be woken, in CPU order, each once, with
    /// the CPU that wakes it.
    pub fn take_rcuo_wakes(&mut self, into: &mut Vec<(usize, Option<usize>)>) {
        into.clear();
        into.append(&mut self.rcuo_to_wake);
        into.sort_unstable_by_key(|&(cpu, _)| cpu);
        into.dedup_by_key(|&mut (cpu, _)| cpu);
    }

    /// The rcuo kthread of `cpu` and the event it sleeps on.
    pub fn rcuo_of(&self, cpu: usize) -> Option<(usize, usize)> {
        self.rcuo[cpu]
    }

    /// If `t` is an rcuo kthread, its offloaded CPU.
    pub fn rcuo_cpu(&self, t: usize) -> Option<usize> {
        self.rcuo.iter().position(|r| r.is_some_and(|(thread, _)| thread == t))
    }

    /// `t` is a kernel thread with work waiting (it does not sleep): an rcuo kthread or one
    /// of the board's kernel's.
    pub fn kthread_has_work(&self, t: usize) -> bool {
        self.rcuo_cpu(t).is_some_and(|cpu| self.rcu.rcuo_has_work(cpu))
            || self.interrupts.as_ref().is_some_and(|k| k.has_work(t))
    }

    /// Kernel thread `t` goes to sleep with no work waiting (`kthread_has_work` was false).
    pub fn kthread_sleeps(&mut self, t: usize) {
        if let Some(cpu) = self.rcuo_cpu(t) {
            self.rcu.rcuo_sleeps(cpu);
        }
    }

    /// The reference work of kernel thread `t`'s pass now, µs (`None`: `t` is not one).
    pub fn kthread_pass_us(&mut self, t: usize) -> Option<f64> {
        if let Some(cpu) = self.rcuo_cpu(t) {
            return Some(self.rcu.rcuo_run(cpu).cost_us + rcu::RCUO_PASS_US);
        }
        self.interrupts.as_mut()?.pass_us(t)
    }

    /// RCU's report, if RCU was used or configured.
    pub fn rcu_report(&self) -> Option<RcuReport> {
        self.rcu_used.then(|| self.rcu.report.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::perf_sampling::PerfSampling;
    use crate::random::SeedableRng;

    #[test]
    fn kernel_work_charged_ahead_is_under_way_until_its_end() {
        let p = Platform::builtin("exynos5422").unwrap();
        let mut rng = Rng::seed_from_u64(1);
        let lookups = Lookups { rcuo: |_| None, kthread: |_: &str, _: &str| None, semaphore: |_: &str| None };
        let mut k = KernelWork::new(&p, &[true; 8], &mut rng, None, &BootOptions::default(), &[], lookups);
        assert!((0..8).all(|cpu| k.next_burst_us(cpu).is_finite()), "every online CPU has jitter");
        assert_eq!(k.earliest_burst_us(), (0..8).map(|cpu| k.next_burst_us(cpu)).fold(f64::INFINITY, f64::min));
        k.start_burst(3, KernelBurst { until_us: 50.0, khz: 1_000_000, mw: 10.0 });
        assert!(k.in_burst(3, 49.0) && !k.in_burst(3, 50.0) && !k.in_burst(2, 10.0));
        assert_eq!(k.take_burst(3).map(|b| b.until_us), Some(50.0));
        assert!(k.take_burst(3).is_none());
        let mem = crate::workload::Phase::new(crate::workload::PhaseKind::Yield).mem;
        let on = || PerfTarget { cluster: 0, task_phase: (0, 0), mem: &mem };
        assert_eq!(k.perf_overflows_us(0, 1e9, 1e6, on()), 0.0, "no perf sampling configured");
        assert!(k.rcu_report().is_none() && !k.rcu_needs_tick());
    }

    #[test]
    fn perf_overflows_take_their_handlers_time_and_rcuo_kthreads_are_found_by_cpu() {
        let p = Platform::builtin("vexpress-a9").unwrap();
        let mut rng = Rng::seed_from_u64(1);
        let perf = PerfCounters::new(&PerfSampling { cpus: vec![1], period_instructions: 1_000_000 }, &p, 4).unwrap();
        let boot = BootOptions::parse("rcu_nocbs=1", 4).unwrap();
        let rcuo = |cpu| (cpu == 1).then_some((7, 2));
        let lookups = Lookups { rcuo, kthread: |_: &str, _: &str| None, semaphore: |_: &str| None };
        let mut k = KernelWork::new(&p, &[true; 4], &mut rng, Some(perf), &boot, &[], lookups);
        let mem = crate::workload::Phase::new(crate::workload::PhaseKind::Yield).mem;
        let on = || PerfTarget { cluster: 0, task_phase: (0, 0), mem: &mem };
        assert_eq!(k.perf_overflows_us(0, 5e6, 1e6, on()), 0.0, "cpu0 is not sampled");
        assert!(k.perf_overflows_us(1, 5e6, 1e6, on()) > 0.0);
        assert_eq!((k.rcuo_of(1), k.rcuo_cpu(7), k.rcuo_cpu(3)), (Some((7, 2)), Some(1), None));
        assert!(k.rcu_report().is_some(), "RCU options are reported");
    }
}
