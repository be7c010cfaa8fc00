//! Scheduling domains: which CPUs balance load with which (`struct sched_domain`), in the two
//! layouts of seed 003's backup slide, and the balancing parameters of the kernel whose load
//! balancing `balance` follows.
//!
//! One level is modelled, MC, whose groups are single CPUs (seed 003: "groups: 0 1 2 3"):
//! - vanilla: one MC domain over all CPUs ("domain 0: span 0-3 level MC");
//! - per cluster (big.LITTLE MP, `CONFIG_DISABLE_CPU_SCHED_DOMAIN_BALANCE`): one MC domain per
//!   cluster; the CPU level above spans every CPU but "does not load-balance".
//!
//! Only online CPUs are in a domain (the kernel rebuilds its domains at hotplug); the layout is
//! built from the CPU → cluster map the placement sees.

use super::{CpuMask, SchedView};

/// The balancing parameters of a domain (`struct sched_domain`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DomainParams {
    /// `balance_interval` starts at, and returns to after an imbalance, this (ms); it doubles
    /// while the domain is found balanced, up to `max_interval_ms`.
    pub min_interval_ms: u32,
    pub max_interval_ms: u32,
    /// The interval is this many times longer when the balancing CPU is busy.
    pub busy_factor: u32,
    /// A busy CPU pulls only if the busiest is this % more loaded; half the excess over 100
    /// is the margin of wake-affine and fork decisions.
    pub imbalance_pct: u32,
    /// Failed balance attempts before cache-hot tasks may be moved anyway.
    pub cache_nice_tries: u32,
}

/// Linux 3.10 `SD_MC_INIT` (include/linux/topology.h, as in the ODROID-XU3 tree the HMP
/// kernels are built on): interval 1 ms (up to 4), 64 times longer when busy, 125 %, one
/// cache-nice try. (Since 3.16 `sd_init` derives them from the span instead: interval
/// `sd_weight` ms, busy factor 32; 5.10 lowered those to 117 % and 16.)
pub const SD_MC_INIT: DomainParams =
    DomainParams { min_interval_ms: 1, max_interval_ms: 4, busy_factor: 64, imbalance_pct: 125, cache_nice_tries: 1 };

/// How CPUs are grouped into balancing domains.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One MC domain over every CPU.
    Vanilla,
    /// One MC domain per cluster; nothing balances between clusters.
    PerCluster,
}

/// The domains of a run: per CPU, the span of the one domain it balances in.
#[derive(Debug, Clone)]
pub struct Domains {
    layout: Layout,
    online: CpuMask,
    span: Vec<CpuMask>,
}

impl Domains {
    /// The `layout` of the CPUs `view` shows (online ones, by their current cluster).
    pub fn build(layout: Layout, view: &SchedView) -> Domains {
        let n = view.ncpus();
        let online = CpuMask::of((0..n).filter(|&c| view.rqs[c].online));
        let span = (0..n)
            .map(|cpu| match (layout, online.contains(cpu)) {
                (_, false) => CpuMask::EMPTY,
                (Layout::Vanilla, true) => online,
                (Layout::PerCluster, true) => {
                    online.and(CpuMask::of((0..n).filter(|&c| view.cluster_of[c] == view.cluster_of[cpu])))
                }
            })
            .collect();
        Domains { layout, online, span }
    }

    /// Per-cluster domains over an explicit partition of the CPUs (`parts`, e.g. HMP's fast
    /// and slow CPU masks) instead of the clusters: the layout of seed 003's emulated
    /// big.LITTLE, where CPUs of one physical cluster were split in two.
    pub fn build_partition(view: &SchedView, parts: &[CpuMask]) -> Domains {
        let n = view.ncpus();
        let online = CpuMask::of((0..n).filter(|&c| view.rqs[c].online));
        let span = (0..n)
            .map(|cpu| parts.iter().find(|p| p.contains(cpu)).map_or(CpuMask::EMPTY, |p| p.and(online)))
            .collect();
        Domains { layout: Layout::PerCluster, online, span }
    }

    pub fn layout(&self) -> Layout {
        self.layout
    }

    pub fn online(&self) -> CpuMask {
        self.online
    }

    /// The CPUs `cpu` balances with, itself included (empty for an offline CPU).
    pub fn span(&self, cpu: usize) -> CpuMask {
        self.span[cpu]
    }

    /// `cpus_share_cache`: both in one MC domain (the last-level cache's, `sd_llc`).
    pub fn share_cache(&self, a: usize, b: usize) -> bool {
        self.span[a].contains(b)
    }

    /// The layout as the kernel logs it at boot (`sched_domain_debug`), as on seed 003's
    /// backup slide.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        for cpu in self.online.iter() {
            let span = self.span[cpu];
            let groups: Vec<String> = span.iter_from(cpu).map(|c| c.to_string()).collect();
            out += &format!("CPU{cpu} attaching sched-domain:\n domain 0: span {} level MC\n", cpulist(span));
            out += &format!("  groups: {}\n", groups.join(" "));
            if span != self.online {
                out += " domain 1: does not load-balance\n";
            }
        }
        out
    }
}

/// A CPU set as the kernel prints it (`cpulist_scnprintf`): ranges and singles, `0-3`, `0,2`.
fn cpulist(mask: CpuMask) -> String {
    let cpus: Vec<usize> = mask.iter().collect();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if j > i { format!("{}-{}", cpus[i], cpus[j]) } else { cpus[i].to_string() });
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::testutil::Fixture;

    /// The lines of a boot log, without the timestamps and indentation.
    fn lines(log: &str) -> Vec<String> {
        log.lines()
            .map(|l| l.split_once("] ").map_or(l, |(_, rest)| rest).trim().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    }

    #[test]
    fn the_layouts_are_seed_003s_backup_slide() {
        // seed 003, "sched_domain configurations", verbatim
        let vanilla = "[ 0.372939] CPU0 attaching sched-domain:
[ 0.373014] domain 0: span 0-3 level MC
[ 0.373044] groups: 0 1 2 3
[ 0.373172] CPU1 attaching sched-domain:
[ 0.373196] domain 0: span 0-3 level MC
[ 0.373222] groups: 1 2 3 0
[ 0.373293] CPU2 attaching sched-domain:
[ 0.373313] domain 0: span 0-3 level MC
[ 0.373337] groups: 2 3 0 1
[ 0.373404] CPU3 attaching sched-domain:
[ 0.373423] domain 0: span 0-3 level MC
[ 0.373446] groups: 3 0 1 2";
        let big_little = "[ 0.364272] CPU0 attaching sched-domain:
[ 0.364306] domain 0: span 0,2 level MC
[ 0.364336] groups: 0 2
[ 0.364380] domain 1: does not load-balance
[ 0.364474] CPU1 attaching sched-domain:
[ 0.364500] domain 0: span 1,3 level MC
[ 0.364526] groups: 1 3
[ 0.364567] domain 1: does not load-balance
[ 0.364611] CPU2 attaching sched-domain:
[ 0.364633] domain 0: span 0,2 level MC
[ 0.364658] groups: 2 0
[ 0.364700] domain 1: does not load-balance
[ 0.364742] CPU3 attaching sched-domain:
[ 0.364764] domain 0: span 1,3 level MC
[ 0.364788] groups: 3 1
[ 0.364829] domain 1: does not load-balance";
        // the vexpress-A9 with CPUs 0 and 2 in one "cluster", 1 and 3 in the other
        let mut f = Fixture::new(4, &[]);
        f.cluster_of = vec![0, 1, 0, 1];
        assert_eq!(lines(&Domains::build(Layout::Vanilla, &f.view()).describe()), lines(vanilla));
        let per_cluster = Domains::build(Layout::PerCluster, &f.view());
        assert_eq!(lines(&per_cluster.describe()), lines(big_little));
        assert!(per_cluster.share_cache(0, 2) && !per_cluster.share_cache(0, 1));
    }

    #[test]
    fn offline_cpus_are_in_no_domain() {
        let mut f = Fixture::new(8, &[]);
        f.cluster_of = vec![0, 0, 0, 0, 1, 1, 1, 1];
        for rq in &mut f.rqs[4..] {
            rq.online = false;
        }
        let d = Domains::build(Layout::Vanilla, &f.view());
        assert_eq!((d.span(0), d.span(5), d.online()), (CpuMask::of(0..4), CpuMask::EMPTY, CpuMask::of(0..4)));
        // one cluster online: nothing above it to not balance
        assert!(!Domains::build(Layout::PerCluster, &f.view()).describe().contains("domain 1"));
        assert_eq!(cpulist(CpuMask::of([0, 1, 2, 4, 6, 7])), "0-2,4,6-7");
    }
}
