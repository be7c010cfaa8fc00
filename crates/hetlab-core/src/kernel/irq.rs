//! Interrupts where the kernel puts them (Linux 3.x on a GIC, the seed-002 era):
//!
//! - A shared peripheral interrupt goes to one CPU: the first online CPU of its affinity
//!   (irq-gic.c `gic_set_affinity`: `cpumask_any_and(mask, cpu_online_mask)`; `gic_dist_init`
//!   targets every SPI at the boot CPU, and `setup_affinity` applies `irq_default_affinity`,
//!   every CPU unless `irqaffinity=` says otherwise). On a TC2 that is CPU 0, an A15.
//! - Its handler runs there, and the softirq it raises (NET_RX, BLOCK, ...) runs on the same
//!   CPU at the interrupt's exit (`raise_softirq` marks the local CPU); a wake-up it does is a
//!   wake-up from that CPU (`try_to_wake_up` with that CPU as the waker).
//! - A CPU in a power-down state that stops its local timer (the DT's `local-timer-stop`) is
//!   woken for its timers by the broadcast timer: its interrupt goes to the broadcast device's
//!   CPU (its affinity, as any SPI: SP804 has no CLOCK_EVT_FEAT_DYNIRQ, so
//!   `tick_broadcast_set_affinity` leaves it there), whose `tick_handle_oneshot_broadcast` runs
//!   its own expired timer and sends IPI_TIMER to the other CPUs whose timers expired
//!   (`tick_do_broadcast`).
//!
//! This module is the routing rule, the workload's interrupt streams (`[[irqs]]`: a device's
//! interrupts at its clock's period, or at random) and the account of where interrupt work
//! ran; the engine charges the time (`engine::flow::kernel`).

use crate::random::{exp_sample, Rng};
use crate::workload::{IrqArrivals, IrqStream};
use serde::Serialize;

/// The CPU a GIC delivers an interrupt with `affinity` (`None`: every CPU) to: the first online
/// CPU of it, or of every CPU if none of it is online (`irq_do_set_affinity`'s fallback).
pub fn irq_cpu(affinity: Option<&[usize]>, online: &[bool]) -> usize {
    let first = |mut cpus: Box<dyn Iterator<Item = usize> + '_>| cpus.find(|&c| online.get(c) == Some(&true));
    affinity.and_then(|a| first(Box::new(a.iter().copied()))).or_else(|| first(Box::new(0..online.len()))).unwrap_or(0)
}

/// The next interrupt of each of a workload's streams.
#[derive(Debug, Clone)]
pub struct Streams {
    next_us: Vec<f64>,
    fired: Vec<u64>,
}

impl Streams {
    /// The first interrupt of each stream (random streams drawn from `rng` in stream order).
    pub fn new(streams: &[IrqStream], rng: &mut Rng) -> Streams {
        let next_us = streams.iter().map(|s| s.start_us + first_gap_us(s, rng)).collect();
        Streams { next_us, fired: vec![0; streams.len()] }
    }

    /// Stream `i`'s next interrupt, µs (infinite once it fired its count).
    pub fn next_us(&self, i: usize) -> f64 {
        self.next_us[i]
    }

    pub fn len(&self) -> usize {
        self.next_us.len()
    }

    pub fn is_empty(&self) -> bool {
        self.next_us.is_empty()
    }

    /// The earliest interrupt of any stream, µs.
    pub fn earliest_us(&self) -> f64 {
        self.next_us.iter().copied().fold(f64::INFINITY, f64::min)
    }

    /// Stream `i` (`stream`) fires now: returns how many it has fired, this one included, and
    /// schedules the next. A periodic stream keeps its grid (a device's clock does not drift
    /// with the CPU).
    pub fn fire(&mut self, i: usize, stream: &IrqStream, rng: &mut Rng) -> u64 {
        self.fired[i] += 1;
        let n = self.fired[i];
        self.next_us[i] = if stream.count.is_some_and(|c| n >= c) {
            f64::INFINITY
        } else {
            match stream.arrivals {
                IrqArrivals::Periodic { period_us } => stream.start_us + n as f64 * period_us,
                IrqArrivals::Poisson { mean_interval_us } => self.next_us[i] + exp_sample(rng, mean_interval_us),
            }
        };
        n
    }
}

fn first_gap_us(stream: &IrqStream, rng: &mut Rng) -> f64 {
    match stream.arrivals {
        IrqArrivals::Periodic { .. } => 0.0,
        IrqArrivals::Poisson { mean_interval_us } => exp_sample(rng, mean_interval_us),
    }
}

/// Interrupt work of one source (a device, the local timer, the broadcast timer, an IPI kind,
/// a softirq) per CPU.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SourceReport {
    pub name: String,
    /// Per CPU: how many times it ran there ...
    pub count: Vec<u64>,
    /// ... and the CPU time it took there, s.
    pub cpu_s: Vec<f64>,
}

/// Where the kernel's interrupt work ran in a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct InterruptReport {
    /// The CPU device interrupts went to, and the broadcast timer's (if any).
    pub device_irq_cpu: usize,
    pub broadcast_cpu: Option<usize>,
    /// Every source that ran, in the order first seen.
    pub sources: Vec<SourceReport>,
}

/// The account the engine adds to as it charges interrupt work.
#[derive(Debug, Clone)]
pub struct Account {
    ncpus: usize,
    report: InterruptReport,
}

impl Account {
    pub fn new(ncpus: usize, device_irq_cpu: usize, broadcast_cpu: Option<usize>) -> Account {
        Account { ncpus, report: InterruptReport { device_irq_cpu, broadcast_cpu, sources: Vec::new() } }
    }

    /// `source` ran once on `cpu` for `s` seconds.
    pub fn add(&mut self, source: &str, cpu: usize, s: f64) {
        let i = match self.report.sources.iter().position(|r| r.name == source) {
            Some(i) => i,
            None => {
                self.report.sources.push(SourceReport {
                    name: source.to_string(),
                    count: vec![0; self.ncpus],
                    cpu_s: vec![0.0; self.ncpus],
                });
                self.report.sources.len() - 1
            }
        };
        let r = &mut self.report.sources[i];
        r.count[cpu] += 1;
        r.cpu_s[cpu] += s;
    }

    pub fn report(&self) -> &InterruptReport {
        &self.report
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::SeedableRng;

    #[test]
    fn an_interrupt_goes_to_the_first_online_cpu_of_its_affinity() {
        let online = [false, true, true, true, true];
        assert_eq!(irq_cpu(None, &[true; 5]), 0, "the default: every CPU, so CPU 0");
        assert_eq!(irq_cpu(Some(&[2, 3, 4]), &[true; 5]), 2, "irqaffinity=2-4");
        assert_eq!(irq_cpu(None, &online), 1);
        assert_eq!(irq_cpu(Some(&[0]), &online), 1, "no CPU of the mask online: any online one");
    }

    fn stream(arrivals: IrqArrivals, count: Option<u64>) -> IrqStream {
        IrqStream { device: "d".into(), arrivals, start_us: 100.0, count, posts: None, every: 1 }
    }

    #[test]
    fn a_periodic_stream_keeps_its_grid_and_stops_at_its_count() {
        let s = stream(IrqArrivals::Periodic { period_us: 250.0 }, Some(3));
        let mut rng = Rng::seed_from_u64(1);
        let mut st = Streams::new(std::slice::from_ref(&s), &mut rng);
        assert_eq!(st.next_us(0), 100.0);
        assert_eq!(st.fire(0, &s, &mut rng), 1);
        assert_eq!(st.next_us(0), 350.0);
        st.fire(0, &s, &mut rng);
        assert_eq!(st.next_us(0), 600.0);
        assert_eq!(st.fire(0, &s, &mut rng), 3);
        assert_eq!(st.earliest_us(), f64::INFINITY);
    }

    #[test]
    fn a_random_stream_arrives_at_its_mean_rate() {
        let s = stream(IrqArrivals::Poisson { mean_interval_us: 1000.0 }, None);
        let mut rng = Rng::seed_from_u64(3);
        let mut st = Streams::new(std::slice::from_ref(&s), &mut rng);
        for _ in 0..20_000 {
            st.fire(0, &s, &mut rng);
        }
        let mean = (st.next_us(0) - 100.0) / 20_001.0;
        assert!((mean / 1000.0 - 1.0).abs() < 0.03, "{mean}");
    }

    #[test]
    fn the_account_keeps_each_source_per_cpu() {
        let mut a = Account::new(3, 0, Some(0));
        a.add("aaci", 0, 1e-5);
        a.add("timer", 2, 2e-6);
        a.add("aaci", 0, 1e-5);
        let r = a.report();
        assert_eq!(r.sources[0].name, "aaci");
        assert_eq!((r.sources[0].count.clone(), r.sources[0].cpu_s[0]), (vec![2, 0, 0], 2e-5));
        assert_eq!(r.sources[1].count, vec![0, 0, 1]);
    }
}
