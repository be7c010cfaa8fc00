//! Per-CPU busy and idle time from `/proc/stat` (Documentation/filesystems/proc.rst).
//!
//! Each `cpuN` line holds cumulative times in USER_HZ ticks: user nice system idle iowait irq
//! softirq steal guest guest_nice. Guest time is already included in user/nice, so the total is
//! the first eight fields. Idle is `idle + iowait`: ondemand with `io_is_busy = 0` (the ARM
//! default, linux-governors.md §0) counts iowait as idle.
//!
//! The governors want µs over a sampling window whose wall time the host measures with
//! CLOCK_MONOTONIC. /proc/stat's ticks are coarse (10 ms at USER_HZ = 100), so the *fractions*
//! are taken from the tick deltas (what top and friends do) and applied to the monotonic window:
//! `idle_us = wall_us × Δidle / Δtotal`, `nice_us = wall_us × Δnice / Δtotal`. A window in which
//! a CPU's counters did not move (shorter than a tick) keeps that CPU's previous fractions. An
//! offline CPU (no line) counts as idle, as the simulator treats it.

use std::path::PathBuf;

use crate::{display, Roots};

/// Cumulative ticks of one CPU.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

impl CpuTimes {
    /// All time except guest (already inside user/nice).
    pub fn total(&self) -> u64 {
        self.user + self.nice + self.system + self.idle + self.iowait + self.irq + self.softirq + self.steal
    }
    /// Idle as ondemand counts it with io_is_busy = 0: idle + iowait.
    pub fn idle_all(&self) -> u64 {
        self.idle + self.iowait
    }
}

/// Parses the per-CPU lines of /proc/stat; index = CPU number, `None` for CPUs without a line
/// (offline).
pub fn parse(text: &str) -> Result<Vec<Option<CpuTimes>>, String> {
    let mut out: Vec<Option<CpuTimes>> = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("cpu") else { continue };
        if !rest.starts_with(|c: char| c.is_ascii_digit()) {
            continue; // the aggregate "cpu  ..." line
        }
        let mut fields = rest.split_ascii_whitespace();
        let Some(id) = fields.next() else { continue };
        let Ok(cpu) = id.parse::<usize>() else { continue };
        let mut v = [0u64; 8];
        let mut n = 0;
        for (slot, f) in v.iter_mut().zip(fields) {
            *slot = f.parse().map_err(|_| format!("line '{line}': '{f}' is not a tick count"))?;
            n += 1;
        }
        if n < 4 {
            return Err(format!("line '{line}' has {n} time fields; expected at least user nice system idle"));
        }
        if cpu >= 4096 {
            return Err(format!("line '{line}': CPU number {cpu} is implausible"));
        }
        if out.len() <= cpu {
            out.resize(cpu + 1, None);
        }
        out[cpu] = Some(CpuTimes {
            user: v[0],
            nice: v[1],
            system: v[2],
            idle: v[3],
            iowait: v[4],
            irq: v[5],
            softirq: v[6],
            steal: v[7],
        });
    }
    if out.iter().all(Option::is_none) {
        return Err("no cpuN lines".into());
    }
    Ok(out)
}

/// A reader of `<procfs>/stat` that reuses its buffer. The file is opened for every read: a
/// kept descriptor would miss a file replaced by rename (as tests do), and the cost is in
/// generating the text, not in the open.
/// /proc/stat's size bound: a line per CPU (8192 at most, ~100 bytes each) and an `intr` line
/// with a count per interrupt; 4 MiB holds any real one.
pub const PROC_STAT_MAX_BYTES: u64 = 4 << 20;

pub struct ProcStat {
    path: PathBuf,
    buf: String,
}

impl ProcStat {
    pub fn new(roots: &Roots) -> ProcStat {
        ProcStat { path: roots.proc("stat"), buf: String::with_capacity(8192) }
    }

    pub fn read(&mut self) -> Result<Vec<Option<CpuTimes>>, String> {
        self.buf.clear();
        crate::infile::read_into(&self.path, PROC_STAT_MAX_BYTES, true, &mut self.buf).map_err(|e| {
            format!("cannot read {}: {}; is procfs mounted (or --procfs-root right)?", display(&self.path), e.reason())
        })?;
        parse(&self.buf).map_err(|e| format!("{}: {e}", display(&self.path)))
    }
}

/// Busy/idle fractions of one CPU carried between windows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fractions {
    pub idle: f64,
    pub nice: f64,
}

impl Default for Fractions {
    fn default() -> Self {
        Fractions { idle: 1.0, nice: 0.0 }
    }
}

/// Idle and nice µs of one CPU over a window of `wall_us`, from its ticks at the window's
/// start and end; updates `carry` (see the module doc).
pub fn window_us(prev: Option<&CpuTimes>, cur: Option<&CpuTimes>, wall_us: u64, carry: &mut Fractions) -> (u64, u64) {
    match (prev, cur) {
        (Some(p), Some(c)) => {
            let total = c.total().saturating_sub(p.total());
            if total > 0 {
                let idle = c.idle_all().saturating_sub(p.idle_all()).min(total);
                let nice = c.nice.saturating_sub(p.nice).min(total - idle);
                *carry = Fractions { idle: idle as f64 / total as f64, nice: nice as f64 / total as f64 };
            }
        }
        (_, None) => *carry = Fractions::default(),
        (None, Some(_)) => {} // came online: keep the previous fractions for this window
    }
    let idle_us = (wall_us as f64 * carry.idle).round() as u64;
    let nice_us = (wall_us as f64 * carry.nice).round() as u64;
    (idle_us.min(wall_us), nice_us.min(wall_us - idle_us.min(wall_us)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  10 0 5 100 1 0 0 0 0 0\n\
                        cpu0 100 2 50 1000 10 1 2 0 7 0\n\
                        cpu2 1 0 0 5 0 0 0 0\n\
                        intr 12 3\nctxt 55\nbtime 1\n";

    #[test]
    fn parses_per_cpu_lines_and_skips_the_aggregate() {
        let v = parse(STAT).unwrap();
        assert_eq!(v.len(), 3);
        let c0 = v[0].unwrap();
        assert_eq!((c0.user, c0.nice, c0.system, c0.idle, c0.iowait, c0.irq, c0.softirq), (100, 2, 50, 1000, 10, 1, 2));
        assert_eq!(c0.total(), 1165, "guest (7) is inside user and not added again");
        assert_eq!(c0.idle_all(), 1010);
        assert!(v[1].is_none(), "cpu1 is offline");
        assert!(parse("cpu0 1 2\n").unwrap_err().contains("at least"));
        assert!(parse("cpu0 1 x 3 4\n").unwrap_err().contains("'x'"));
        assert!(parse("intr 1\n").is_err());
    }

    #[test]
    fn window_fractions_scale_to_monotonic_wall_time() {
        let a = CpuTimes { user: 100, idle: 100, ..Default::default() };
        // 3 busy ticks (one of them nice), 1 idle + 0 iowait
        let b = CpuTimes { user: 102, nice: 1, idle: 101, ..Default::default() };
        let mut carry = Fractions::default();
        assert_eq!(window_us(Some(&a), Some(&b), 20_000, &mut carry), (5_000, 5_000));
        // no tick moved: the previous fractions carry over
        assert_eq!(window_us(Some(&b), Some(&b), 10_000, &mut carry), (2_500, 2_500));
        // iowait is idle
        let c = CpuTimes { iowait: 4, ..b };
        assert_eq!(window_us(Some(&b), Some(&c), 8_000, &mut carry), (8_000, 0));
        // offline: idle
        let mut carry = Fractions { idle: 0.0, nice: 0.0 };
        assert_eq!(window_us(Some(&b), None, 8_000, &mut carry), (8_000, 0));
    }
}
