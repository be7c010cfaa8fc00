//! A CPU's utilisation as Linux 5.10 sums it for schedutil's frequency request and for EAS's
//! energy estimate: one rule, `schedutil_cpu_util` (kernel/sched/cpufreq_schedutil.c), told by
//! its `enum schedutil_type` which of the two it serves ([`UtilType`]).
//!
//! - The CFS and RT running-time signals add up (they share PELT's windows); while uclamp is
//!   not in use, a CPU with a runnable RT task asks for its top frequency (`rt_rq_is_runnable`).
//!   With uclamp in use, the RT task's own util_min does that instead (5.9+'s
//!   `sysctl_sched_uclamp_util_min_rt_default`, 1024, unless it has its own), read through the
//!   run queue's clamps (`uclamp_rq_util_with`, [`uclamp::util_with`]).
//! - FREQUENCY_UTIL clamps the CFS + RT sum within the run queue's clamps (and the waking
//!   task's, where EAS places one), then adds the DL tasks' active bandwidth (`cpu_bw_dl`: the
//!   minimum their deadlines need).
//! - ENERGY_UTIL adds the DL running time's PELT signal instead (`cpu_util_dl`: the busy time
//!   the energy model prices), unclamped.
//! - Either saturates at the CPU's capacity once CFS + RT + the DL signal reach it (no idle time
//!   left: the top frequency), and never exceeds it.
//!
//! Not modelled: IRQ and steal time (`cpu_util_irq`, `scale_irq_capacity`): the model has no
//! interrupt time, so the kernel's IRQ terms are zero here.

use super::cfs::RunQueue;
use super::uclamp::{self, Clamp};
use super::{deadline, rt};

/// What a CPU's utilisation is for (`enum schedutil_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UtilType {
    /// FREQUENCY_UTIL: the frequency to ask for (schedutil; EAS's OPP prediction).
    Frequency,
    /// ENERGY_UTIL: the busy time EAS's energy estimate prices.
    Energy,
}

/// What `schedutil_cpu_util` reads of a CPU besides its CFS utilisation: its run queue (RT and
/// DL signals, DL bandwidth, clamp buckets), the time (signals decay to it), and whether clamps
/// are in use (`uclamp_is_used`).
#[derive(Debug, Clone, Copy)]
pub struct CpuSignals<'a> {
    pub rq: &'a RunQueue,
    pub now_ns: u64,
    pub uclamp_used: bool,
}

/// `schedutil_cpu_util`'s first test: without uclamp, a runnable RT task asks for the top
/// frequency whatever the signals say (the engine skips bringing the CFS signal up to date
/// then, as it did before the rule was shared).
pub fn rt_asks_for_the_top(cpu: &CpuSignals, kind: UtilType) -> bool {
    !cpu.uclamp_used && kind == UtilType::Frequency && cpu.rq.rt.is_runnable()
}

/// `schedutil_cpu_util` (5.10): the CPU's utilisation for `kind`, from its CFS utilisation
/// `util_cfs` and capacity `max`, with `task`'s clamps added as if it ran there (EAS's
/// candidate for FREQUENCY_UTIL); at most `max`.
pub fn schedutil_cpu_util(cpu: &CpuSignals, util_cfs: u64, max: u64, kind: UtilType, task: Option<Clamp>) -> u64 {
    let rq = cpu.rq;
    if rt_asks_for_the_top(cpu, kind) {
        return max;
    }
    let mut util = util_cfs + rt::util_now(rq, cpu.now_ns);
    // uclamp_rq_util_with returns util untouched while uclamp is not in use
    if kind == UtilType::Frequency && cpu.uclamp_used {
        util = uclamp::util_with(util, rq.uclamp.value(), task);
    }
    let dl_util = deadline::util_now(rq, cpu.now_ns);
    // no idle time left: the top, whatever the DL bandwidth asks
    if util + dl_util >= max {
        return max;
    }
    util += match kind {
        UtilType::Energy => dl_util,
        UtilType::Frequency => deadline::bw_util(rq),
    };
    util.min(max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::deadline::to_ratio;
    use crate::sched::testutil::Fixture;
    use crate::workload::SchedClass;

    const MS: u64 = 1_000_000;

    /// CPU 0 of capacity 377 with an RT signal of `rt`, a DL signal of `dl` and the active DL
    /// bandwidth of a server of 1 ms every 10 ms (0.1 << 20 = 104857: 102 in capacity units).
    fn little(rt: u64, dl: u64) -> Fixture {
        let mut f = Fixture::new(1, &[&[0]]);
        f.capacity = vec![377];
        let rq = &mut f.rqs[0];
        rq.avg_rt.util_avg = rt;
        rq.avg_dl.util_avg = dl;
        // a running class's signal is read as of its last update (no decay to now)
        rq.rt.running = Some(10);
        rq.dl.running = Some(10 * MS);
        rq.dl.running_bw = to_ratio(10 * MS, MS);
        f
    }

    fn util(f: &Fixture, util_cfs: u64, kind: UtilType, uclamp_used: bool) -> u64 {
        let cpu = CpuSignals { rq: &f.rqs[0], now_ns: 0, uclamp_used };
        schedutil_cpu_util(&cpu, util_cfs, 377, kind, None)
    }

    #[test]
    fn frequency_adds_the_dl_bandwidth_and_energy_the_dl_running_time() {
        // no RT task runnable (its signal stays): CFS 100 + RT 20, DL signal 150, bandwidth 102
        let mut f = little(20, 150);
        f.rqs[0].rt.running = None;
        assert_eq!(util(&f, 100, UtilType::Frequency, false), 100 + 20 + 102);
        assert_eq!(util(&f, 100, UtilType::Energy, false), 100 + 20 + 150);
        // CFS + RT + DL signal 120 + 257 reaches 377: no idle time, the top for both
        f.rqs[0].avg_dl.util_avg = 257;
        assert_eq!(util(&f, 99, UtilType::Frequency, false), 99 + 20 + 102);
        assert_eq!(util(&f, 99, UtilType::Energy, false), 376);
        assert_eq!(util(&f, 100, UtilType::Frequency, false), 377);
        assert_eq!(util(&f, 100, UtilType::Energy, false), 377);
        // a bandwidth that would pass the capacity is capped there: 120 + 0.3 x 1024 = 427
        f.rqs[0].avg_dl.util_avg = 0;
        f.rqs[0].dl.running_bw = to_ratio(10 * MS, 3 * MS);
        assert_eq!(util(&f, 100, UtilType::Frequency, false), 377);
        assert_eq!(util(&f, 100, UtilType::Energy, false), 120);
    }

    #[test]
    fn a_runnable_rt_task_asks_for_the_top_only_without_uclamp() {
        // RT task 1 runs on CPU 0: without uclamp the top frequency; the energy estimate sees
        // only the signals (100 + 20 + 150)
        let mut f = little(20, 150);
        f.tasks.push(f.tasks[0].clone());
        f.tasks[1].class = SchedClass::Fifo(10);
        f.rqs[0].curr = Some(1);
        assert_eq!(util(&f, 100, UtilType::Frequency, false), 377);
        assert_eq!(util(&f, 100, UtilType::Energy, false), 270);
        // with uclamp in use the RT task's clamps decide: its own util_min of 200 lifts CFS + RT
        // (120) to 200, then the bandwidth: 302; ENERGY_UTIL ignores clamps
        f.tasks[1].uclamp.min = 200;
        f.rqs[0].uclamp.inc(f.tasks[1].uclamp);
        assert_eq!(util(&f, 100, UtilType::Frequency, true), 200 + 102);
        assert_eq!(util(&f, 100, UtilType::Energy, true), 270);
        // and util_max of 50 caps them: 50 + 102
        f.rqs[0].uclamp.dec(f.tasks[1].uclamp);
        f.tasks[1].uclamp = Clamp { min: 0, max: 50 };
        f.rqs[0].uclamp.inc(f.tasks[1].uclamp);
        assert_eq!(util(&f, 100, UtilType::Frequency, true), 50 + 102);
        // EAS's candidate task adds its clamps: a util_min of 300 (+ 102 bandwidth) passes 377
        let cpu = CpuSignals { rq: &f.rqs[0], now_ns: 0, uclamp_used: true };
        let boosted = Some(Clamp { min: 300, max: 1024 });
        assert_eq!(schedutil_cpu_util(&cpu, 100, 377, UtilType::Frequency, boosted), 377);
    }

    #[test]
    fn with_uclamp_a_runnable_rt_task_without_clamps_of_its_own_asks_for_the_top() {
        // 5.10: the shortcut is off once uclamp is in use, and the RT task's default util_min of
        // 1024 lifts CFS + RT to 1024: past 377, the top
        let mut f = little(20, 0);
        f.rqs[0].dl.running_bw = 0;
        f.tasks.push(f.tasks[0].clone());
        f.tasks[1].class = SchedClass::Fifo(10);
        f.tasks[1].uclamp = uclamp::effective(Default::default(), true, None, &Default::default());
        f.rqs[0].uclamp.inc(f.tasks[1].uclamp);
        f.rqs[0].curr = Some(1);
        assert_eq!(util(&f, 100, UtilType::Frequency, true), 377);
    }
}
