//! The performance a CPU asks of its clock as Linux 6.8+ computes it ("sched/cpufreq: Rework
//! schedutil governor performance estimation", Vincent Guittot, v6.8; kernel/sched/fair.c
//! `effective_cpu_util` L8200 and kernel/sched/cpufreq_schedutil.c `sugov_effective_cpu_perf`
//! L181, `sugov_get_util` L197, of 6.12.19), beside 5.10's rule in [`cpu_util`](super::cpu_util).
//!
//! 5.10 clamped the utilisation within uclamp, added the DL bandwidth, and multiplied the lot
//! by 1.25 in `get_next_freq`. 6.8+ separates three numbers:
//! - the *actual* utilisation: CFS + RT + the DL running time's PELT signal (`cpu_util_dl`);
//! - a floor `min`: the larger of the DL bandwidth (`cpu_bw_dl`) and the run queue's util_min
//!   (the top while an RT task is runnable and uclamp is not in use);
//! - a ceiling `max`: the capacity within the run queue's util_max.
//!
//! The request is `max(min, min(1.25 · actual, max))`: the 1.25 DVFS headroom applies to the
//! actual utilisation only, so a util_min or a DL reservation is asked for as it is (no margin on
//! top), and util_max caps the request after the headroom. `get_next_freq` then maps the request
//! to a frequency without a margin (`cpuinfo.max_freq · perf / capacity`). EAS's
//! `eenv_pd_max_util` asks the same, with the waking task's clamps added where it would run.
//!
//! Not modelled: IRQ time (`cpu_util_irq` is zero in the model), the iowait boost (the model has
//! no I/O waits: a `sleep` phase is not an iowait).

use super::cpu_util::CpuSignals;
use super::uclamp::Clamp;
use super::{deadline, rt};

/// `map_util_perf`: the 25 % DVFS headroom (`util + util >> 2`).
pub fn map_util_perf(util: u64) -> u64 {
    util + (util >> 2)
}

/// `effective_cpu_util`'s answer: the actual utilisation and its floor and ceiling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EffectiveUtil {
    pub actual: u64,
    pub min: u64,
    pub max: u64,
}

/// `effective_cpu_util` (6.8+) of a CPU of capacity `scale` whose CFS utilisation is `util_cfs`
/// (the caller's `cpu_util`, boosted or not).
pub fn effective_cpu_util(cpu: &CpuSignals, util_cfs: u64, scale: u64) -> EffectiveUtil {
    let rq = cpu.rq;
    let clamps = rq.uclamp.value();
    // the run queue's clamps are kept only while uclamp is in use (else 0 and 1024, as init)
    let (util_min, util_max) = if cpu.uclamp_used { (u64::from(clamps.min), u64::from(clamps.max)) } else { (0, 1024) };
    let mut min = deadline::bw_util(rq).max(util_min);
    if !cpu.uclamp_used && rq.rt.is_runnable() {
        min = min.max(scale);
    }
    let max = scale.min(util_max);
    let actual = (util_cfs + rt::util_now(rq, cpu.now_ns) + deadline::util_now(rq, cpu.now_ns)).min(scale);
    EffectiveUtil { actual, min, max }
}

/// `sugov_effective_cpu_perf`: the headroom on the actual utilisation, at most `max`, at least
/// `min`.
pub fn effective_cpu_perf(e: EffectiveUtil) -> u64 {
    e.min.max(map_util_perf(e.actual).min(e.max))
}

/// What schedutil asks for the CPU (`sugov_get_util`), or what EAS predicts for it with `task`'s
/// clamps added as if it ran there (`eenv_pd_max_util`: util_min the larger, util_max the
/// task's own on a run queue with no clamped task, else the larger).
pub fn cpu_perf(cpu: &CpuSignals, util_cfs: u64, scale: u64, task: Option<Clamp>) -> u64 {
    let mut e = effective_cpu_util(cpu, util_cfs, scale);
    if let Some(t) = task.filter(|_| cpu.uclamp_used) {
        e.min = e.min.max(u64::from(t.min));
        e.max = if cpu.rq.uclamp.is_idle() { u64::from(t.max) } else { e.max.max(u64::from(t.max)) };
    }
    effective_cpu_perf(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::deadline::to_ratio;
    use crate::sched::testutil::Fixture;
    use crate::workload::SchedClass;

    const MS: u64 = 1_000_000;

    /// CPU 0 of capacity 160 (gs101's A55) with an RT signal of `rt`, a DL signal of `dl` and
    /// the active DL bandwidth of a server of 1 ms every 10 ms (0.1 << 20: 102 of 1024).
    fn little(rt: u64, dl: u64) -> Fixture {
        let mut f = Fixture::new(1, &[&[0]]);
        f.capacity = vec![160];
        let rq = &mut f.rqs[0];
        rq.avg_rt.util_avg = rt;
        rq.avg_dl.util_avg = dl;
        rq.rt.running = None;
        rq.dl.running = Some(10 * MS);
        rq.dl.running_bw = to_ratio(10 * MS, MS);
        f
    }

    fn perf(f: &Fixture, util_cfs: u64, uclamp_used: bool, task: Option<Clamp>) -> u64 {
        cpu_perf(&CpuSignals { rq: &f.rqs[0], now_ns: 0, uclamp_used }, util_cfs, 160, task)
    }

    #[test]
    fn headroom_on_the_actual_utilisation_and_the_dl_bandwidth_a_floor() {
        // CFS 60 + RT 10 + DL signal 10 = 80; 80 + 80 >> 2 = 100; the floor is the bandwidth 102
        let f = little(10, 10);
        assert_eq!(perf(&f, 60, false, None), 102);
        // CFS 80: actual 100, perf 125 (5.10 would ask (80 + 10 + 102) x 1.25 = 240 -> the top)
        assert_eq!(perf(&f, 80, false, None), 125);
        // actual 140 -> 175, capped at the capacity 160
        assert_eq!(perf(&f, 120, false, None), 160);
        // no DL: CFS 40 alone: 50
        let mut f = little(0, 0);
        f.rqs[0].dl.running_bw = 0;
        assert_eq!(perf(&f, 40, false, None), 50);
    }

    #[test]
    fn a_runnable_rt_task_asks_for_the_top_only_without_uclamp() {
        let mut f = little(0, 0);
        f.rqs[0].dl.running_bw = 0;
        f.tasks.push(f.tasks[0].clone());
        f.tasks[1].class = SchedClass::Fifo(10);
        f.rqs[0].curr = Some(1);
        f.rqs[0].rt.running = Some(10);
        assert_eq!(perf(&f, 40, false, None), 160);
        // uclamp in use, the RT task counted with util_min 0: its clamps decide (40 -> 50)
        f.rqs[0].uclamp.inc(Clamp { min: 0, max: 1024 });
        assert_eq!(perf(&f, 40, true, None), 50);
    }

    #[test]
    fn util_min_is_a_floor_without_headroom_and_util_max_caps_after_it() {
        let mut f = little(0, 0);
        f.rqs[0].dl.running_bw = 0;
        // a task of util_min 120 counted: CFS 40 -> max(120, 50) = 120 (5.10: 120 x 1.25 = 150)
        f.rqs[0].uclamp.inc(Clamp { min: 120, max: 1024 });
        assert_eq!(perf(&f, 40, true, None), 120);
        // CFS 100: 125 passes the floor
        assert_eq!(perf(&f, 100, true, None), 125);
        // util_max 100 caps 125 at 100 (5.10: 100 x 1.25 = 125)
        f.rqs[0].uclamp.dec(Clamp { min: 120, max: 1024 });
        f.rqs[0].uclamp.inc(Clamp { min: 0, max: 100 });
        assert_eq!(perf(&f, 100, true, None), 100);
    }

    #[test]
    fn eas_adds_the_wakees_clamps() {
        let mut f = little(0, 0);
        f.rqs[0].dl.running_bw = 0;
        // an idle run queue (no clamped task counted): the wakee's util_max is taken as it is
        let wakee = Some(Clamp { min: 90, max: 60 });
        assert_eq!(perf(&f, 40, true, wakee), 90); // min 90 wins over min(50, 60)
        let wakee = Some(Clamp { min: 0, max: 60 });
        assert_eq!(perf(&f, 100, true, wakee), 60);
        // a counted task of util_max 30: the larger util_max, 60, caps 125
        f.rqs[0].uclamp.inc(Clamp { min: 0, max: 30 });
        assert_eq!(perf(&f, 100, true, wakee), 60);
        // clamps ignored while uclamp is not in use
        assert_eq!(perf(&f, 100, false, wakee), 125);
    }
}
