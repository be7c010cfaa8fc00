//! Counter-overflow sampling on chosen CPUs, as `perf record -a -e instructions -C <cpus> -c <N>`
//! does it. Seed 003 uses it to slow two of the vexpress's four Cortex-A9s down ("big.LITTLE
//! emulation"): the PMU counts every instruction a sampled CPU executes and raises an interrupt
//! when the count reaches N; the handler re-arms the counter and writes a sample into perf's
//! ring buffer. That handler is the whole slowdown; nothing here sets a speed.
//!
//! The model is that mechanism: per CPU, the instructions counted since the counter was last
//! re-armed (whoever ran them: the count is per CPU, not per thread); each overflow costs cycles
//! of that CPU (so its time follows the CPU's clock), charged like OS jitter as stolen time of
//! the thread running there; and the handler's own instructions that the counter sees after the
//! re-arm (`perf_sample.counted_instructions`: the Cortex-A9 PMU cannot exclude kernel mode)
//! start the next period. A thread that stops before the count reaches N is not interrupted at
//! all, so very short tasks escape, as the seed notes.
//!
//! What an overflow costs depends on the thread it interrupts (`model::pollution`): the handler's
//! own run with its lines in L1 (`perf_sample.handler_cycles`), plus the pollution between the
//! two. Between two samples the thread fills `M` lines into its L1 of `L` lines (its misses,
//! `model::cache`); a random replacement leaves each of the handler's `F` lines there with
//! probability `exp(-M/L)`, so the handler refetches `F (1 - exp(-M/L))` lines from the L2,
//! each evicting a line of the thread's, which the thread refetches in turn when that line was
//! one it reuses (its share of the L1 that it re-references, `h`). Likewise the handler's TLB
//! entries against the thread's page walks, on a core whose TLB is modelled. A thread whose
//! working set stays in L1 leaves the handler warm and loses nothing to it; one that streams
//! pays twice per line.
//!
//! Cost follows events: overflows are counted where the engine integrates instructions between
//! two events, and their time is added to the running thread's stolen time, which the next
//! completion event already includes; there is no event per overflow.
//!
//! Not modelled: the perf tool's own reads of the ring buffer (a few syscalls per wake-up,
//! on whichever CPU it runs), the instructions of other kernel work (OS jitter bursts are
//! charged in µs, not counted), and the kernel's sample-rate throttle (3.x: at most
//! perf_event_max_sample_rate / HZ = 1000 samples per tick at HZ 100, far above what a
//! 10,000-instruction period reaches at 400 MHz).

use crate::platform::{PerfSampleCost, Platform};

/// What `perf record` was asked: the CPUs it samples (`-C`, logical CPU numbers) and the
/// period in instructions (`-c`).
#[derive(Debug, Clone, PartialEq)]
pub struct PerfSampling {
    pub cpus: Vec<usize>,
    pub period_instructions: u64,
}

/// The per-CPU counters of a run.
#[derive(Debug, Clone)]
pub struct PerfCounters {
    /// Per logical CPU: instructions counted since the last re-arm; `None` if not sampled.
    counted: Vec<Option<f64>>,
    /// Samples taken per logical CPU.
    samples: Vec<u64>,
    period: f64,
    /// Instructions each overflow advances the count by beyond the handler's own:
    /// period − counted handler instructions.
    per_overflow: f64,
    handler_instructions: f64,
}

impl PerfCounters {
    /// Counters for `sampling` on `platform` (with `ncpus` logical CPUs); every error names
    /// the setting and the fix.
    pub fn new(sampling: &PerfSampling, platform: &Platform, ncpus: usize) -> Result<PerfCounters, String> {
        if sampling.cpus.is_empty() {
            return Err("perf sampling: no CPU given (perf record -C); name at least one".into());
        }
        let mut counted = vec![None; ncpus];
        for &cpu in &sampling.cpus {
            if cpu >= ncpus {
                return Err(format!(
                    "perf sampling: cpu{cpu} does not exist; {} has cpu0-{}",
                    platform.name,
                    ncpus - 1
                ));
            }
            counted[cpu] = Some(0.0);
        }
        // the CPUs first: a CPU the platform lacks is the user's mistake to name, whatever the platform
        let cost: &PerfSampleCost = platform.perf_sample.as_ref().ok_or_else(|| {
            format!(
                "perf sampling: platform {} gives no [perf_sample] cost (cycles, counted_instructions); add it to \
                 the platform file",
                platform.name
            )
        })?;
        let period = sampling.period_instructions as f64;
        if period <= cost.counted_instructions {
            return Err(format!(
                "perf sampling: a period of {} instructions does not exceed the {} the overflow handler itself \
                 counts on {} (perf_sample.counted_instructions): every sample would trigger the next; give a \
                 longer period",
                sampling.period_instructions, cost.counted_instructions, platform.name
            ));
        }
        Ok(PerfCounters {
            counted,
            samples: vec![0; ncpus],
            period,
            per_overflow: period - cost.counted_instructions,
            handler_instructions: cost.counted_instructions,
        })
    }

    /// `instructions` executed on `cpu`: the overflows they cause there.
    #[inline]
    pub fn count(&mut self, cpu: usize, instructions: f64) -> u64 {
        let Some(counted) = &mut self.counted[cpu] else {
            return 0;
        };
        *counted += instructions;
        if *counted < self.period {
            return 0;
        }
        // Each overflow re-arms the counter, which then counts the handler's own instructions:
        // after k overflows the count has dropped by k × (period − handler instructions).
        let overflows = ((*counted - self.period) / self.per_overflow).floor() as u64 + 1;
        *counted -= overflows as f64 * self.per_overflow;
        self.samples[cpu] += overflows;
        overflows
    }

    /// CPU time of `samples` samples of `cycles` each (`model::pollution::sample_cycles`, for
    /// the thread they interrupt) on a CPU clocked at `khz`, µs.
    #[inline]
    pub fn cost_us(&self, samples: u64, khz: f64, cycles: f64) -> f64 {
        samples as f64 * cycles * 1000.0 / khz
    }

    /// Samples taken on `cpu` so far.
    pub fn samples(&self, cpu: usize) -> u64 {
        self.samples[cpu]
    }

    /// Instructions counted on `cpu` since its counter was last re-armed (0 if not sampled).
    pub fn counted(&self, cpu: usize) -> f64 {
        self.counted[cpu].unwrap_or(0.0)
    }

    /// Instructions of work between two samples on a CPU that runs nothing else.
    pub fn work_per_sample(&self) -> f64 {
        self.per_overflow
    }

    /// The handler's instructions the counter counts after each re-arm.
    pub fn handler_instructions(&self) -> f64 {
        self.handler_instructions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vexpress() -> Platform {
        Platform::builtin("vexpress-a9").unwrap()
    }

    fn counters(cpus: &[usize], period: u64) -> PerfCounters {
        let sampling = PerfSampling { cpus: cpus.to_vec(), period_instructions: period };
        PerfCounters::new(&sampling, &vexpress(), 4).unwrap()
    }

    #[test]
    fn the_count_is_per_cpu_and_only_on_sampled_cpus() {
        let mut c = counters(&[1, 3], 10_000);
        let h = c.handler_instructions();
        assert!(h > 0.0 && h < 10_000.0);
        // cpu0 is not sampled: nothing counts, nothing fires
        assert_eq!(c.count(0, 1e9), 0);
        assert_eq!((c.samples(0), c.counted(0)), (0, 0.0));
        // below the period: no sample
        assert_eq!(c.count(1, 9_999.0), 0);
        // the 10,000th instruction overflows; the handler's instructions start the next period
        assert_eq!(c.count(1, 1.0), 1);
        assert!((c.counted(1) - h).abs() < 1e-9);
        // the count carries over between calls (and threads): one more period of work fires once
        assert_eq!(c.count(1, 10_000.0 - h - 1.0), 0);
        assert_eq!(c.count(1, 1.0), 1);
        // a long stretch: one sample per (period - handler instructions) of work
        let before = c.samples(1);
        let n = c.count(1, 1000.0 * (10_000.0 - h));
        assert_eq!(n, 1000);
        assert_eq!(c.samples(1), before + 1000);
        assert_eq!(c.samples(3), 0);
    }

    #[test]
    fn a_sample_costs_cycles_of_the_interrupted_cpu() {
        let c = counters(&[1], 10_000);
        // at 400 MHz a cycle is 2.5 ns; at 800 MHz half that
        assert!((c.cost_us(4, 400_000.0, 2000.0) - 4.0 * 2000.0 / 400.0).abs() < 1e-9);
        assert!((c.cost_us(1, 800_000.0, 2000.0) * 2.0 - c.cost_us(1, 400_000.0, 2000.0)).abs() < 1e-9);
    }

    #[test]
    fn bad_settings_are_errors_that_name_the_fix() {
        let p = vexpress();
        let e = PerfCounters::new(&PerfSampling { cpus: vec![4], period_instructions: 10_000 }, &p, 4).unwrap_err();
        assert!(e.contains("cpu4 does not exist") && e.contains("cpu0-3"), "{e}");
        let e = PerfCounters::new(&PerfSampling { cpus: vec![], period_instructions: 10_000 }, &p, 4).unwrap_err();
        assert!(e.contains("no CPU given"), "{e}");
        let e = PerfCounters::new(&PerfSampling { cpus: vec![1], period_instructions: 10 }, &p, 4).unwrap_err();
        assert!(e.contains("longer period"), "{e}");
        let exynos = Platform::builtin("exynos5422").unwrap();
        let e =
            PerfCounters::new(&PerfSampling { cpus: vec![1], period_instructions: 10_000 }, &exynos, 8).unwrap_err();
        assert!(e.contains("[perf_sample]") && e.contains("exynos5422"), "{e}");
        // a CPU out of range is named before the missing cost
        let e =
            PerfCounters::new(&PerfSampling { cpus: vec![99], period_instructions: 10_000 }, &exynos, 8).unwrap_err();
        assert!(e.contains("cpu99 does not exist") && e.contains("cpu0-7"), "{e}");
    }
}
