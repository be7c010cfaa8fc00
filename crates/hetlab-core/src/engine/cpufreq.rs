//! cpufreq: the policies (a governor choosing one frequency for its logical CPUs), their
//! sampling times and pending DVFS requests, what each governor's view is filled from at its
//! next sample (the counters at the previous one, the threads that ran since), and the
//! big.LITTLE switcher. A **policy is not a cluster**: a policy sets the clock of the cluster its
//! CPUs run on now; under a switcher its table is the virtual one, and a cluster's clock is the
//! highest request of the policies on it (`cluster_clock_khz`).

use crate::counters::CorePmu;
use crate::governor::{registry, Decision, Governor, GovernorContext, PolicyView};
use crate::model::cci::cycles_at;
use crate::platform::Platform;
use crate::sched::switching::Switcher;

use super::config::{GovernorSetting, SimConfig};

/// Threads that ran since a policy's previous sample, with their counters at that sample:
/// the per-task PMC reads cost what ran, not how many threads exist.
#[derive(Debug, Clone, Default)]
struct RanSince {
    member: Vec<bool>,
    threads: Vec<usize>,
    pmu_at_sample: Vec<CorePmu>,
}

/// A cpufreq policy: a governor choosing one frequency for its CPUs.
struct Policy {
    /// The hardware cluster its CPUs run on now (the clock it sets; a switcher changes it).
    cluster: usize,
    /// Its logical CPUs (`related_cpus`).
    cpus: Vec<usize>,
    /// How many of them run something now.
    busy_cpus: u32,
    governor: Box<dyn Governor>,
    governor_name: String,
    /// What its governor reads beyond load and frequency (fixed for a governor; kept here so a
    /// sample does not ask it through the trait object each time).
    reads_pmcs: bool,
    reads_util: bool,
    /// The OPP table its governor sees: its cluster's, or the switcher's virtual table.
    opps_khz: Vec<u32>,
    /// The frequency last set, in `opps_khz` terms (`policy->cur`).
    request_khz: u32,
    /// A requested frequency and when the transition completes.
    pending: Option<(f64, u32)>,
    next_sample_us: f64,
    last_sample_us: f64,
    ran: RanSince,
    /// Every CCI port's counts at the previous sample (the CCI cycle counter then is a function
    /// of `last_sample_us`, worked out only for a view that reads it).
    ports_at_sample: Vec<(u64, u64)>,
    /// The view its governor read last, reused at the next sample (boxed: it moves out to be
    /// filled and back at every sample; `None` while it is out).
    view: Option<Box<PolicyView>>,
    /// The cluster whose constants (table, limits, latency, capacity) the view holds: they are
    /// written again only when the policy moves (a switcher) or at the first sample.
    view_cluster: Option<usize>,
}

pub struct Cpufreq<'a> {
    platform: &'a Platform,
    policies: Vec<Policy>,
    /// Per logical CPU: its cpufreq policy.
    policy_of_cpu: Vec<usize>,
    /// Per logical CPU: its counters at its policy's previous sample.
    pmu_at_sample: Vec<CorePmu>,
    /// The big.LITTLE switcher, under IKS or cluster switching.
    switcher: Option<Switcher>,
    /// The platform's tick, µs (a division: every view carries it).
    tick_us: u64,
    /// The earliest sample of a busy policy or transition end, µs: worked out again wherever
    /// one of them is armed or a policy's CPUs go busy or all idle (the engine asks each event).
    next_event_us: f64,
}

impl RanSince {
    fn new(nthreads: usize) -> RanSince {
        RanSince {
            member: vec![false; nthreads],
            threads: Vec::new(),
            pmu_at_sample: vec![CorePmu::default(); nthreads],
        }
    }

    /// `thread` starts running with counters `pmu` (unchanged since the sample if it had not
    /// run; read only when it joins the set).
    fn note(&mut self, thread: usize, pmu: impl FnOnce() -> CorePmu) {
        if !self.member[thread] {
            self.member[thread] = true;
            self.threads.push(thread);
            self.pmu_at_sample[thread] = pmu();
        }
    }
}

impl<'a> Cpufreq<'a> {
    /// One policy per cluster (cpufreq-dt on big.LITTLE), its CPUs `related_cpus`; under a
    /// switcher, its policies over the virtual OPP table, each running the governor of its
    /// first cluster. Every cluster boots at its top OPP, as the bootloader leaves it.
    pub fn new(
        platform: &'a Platform,
        config: &SimConfig,
        switcher: Option<Switcher>,
        nthreads: usize,
    ) -> Result<Cpufreq<'a>, String> {
        let nclusters = platform.clusters.len();
        let policy = |cluster: usize, setting: &GovernorSetting, cpus: Vec<usize>, opps_khz: Vec<u32>| {
            let ctx = GovernorContext {
                cluster_name: &platform.clusters[cluster].name,
                tick_us: platform.tick_us(),
                model: config.model.as_ref(),
            };
            let governor = registry::build(&setting.name, &setting.tunables, &ctx)?;
            Ok::<_, String>(Policy {
                cluster,
                cpus,
                busy_cpus: 0,
                reads_pmcs: governor.reads_pmcs(),
                reads_util: governor.reads_util(),
                governor,
                governor_name: setting.name.clone(),
                request_khz: platform.clusters[cluster].max_khz(),
                opps_khz,
                pending: None,
                next_sample_us: 0.0,
                last_sample_us: 0.0,
                ran: RanSince::new(nthreads),
                ports_at_sample: vec![(0, 0); nclusters],
                view: Some(Box::default()),
                view_cluster: None,
            })
        };
        let mut policies = Vec::new();
        match &switcher {
            None => {
                for (c, cl) in platform.clusters.iter().enumerate() {
                    policies.push(policy(c, &config.governors[c], cl.cpus.clone(), cl.freqs_khz())?);
                }
            }
            Some(sw) => {
                for cpus in sw.policies() {
                    let mut p = policy(sw.first, &config.governors[sw.first], cpus, sw.virtual_khz.clone())?;
                    p.request_khz = sw.virtual_of(sw.first, p.request_khz);
                    policies.push(p);
                }
            }
        }
        let ncpus = platform.ncpus();
        // Every logical CPU has a policy: an offline one its partner's (or the first).
        let policy_of_cpu = (0..ncpus)
            .map(|cpu| {
                let partner = switcher.as_ref().and_then(|sw| sw.partner(cpu)).unwrap_or(cpu);
                policies.iter().position(|p| p.cpus.contains(&cpu) || p.cpus.contains(&partner)).unwrap_or(0)
            })
            .collect();
        let pmu_at_sample = vec![CorePmu::default(); ncpus];
        Ok(Cpufreq {
            platform,
            policies,
            policy_of_cpu,
            pmu_at_sample,
            switcher,
            tick_us: platform.tick_us(),
            // no policy is busy and none is moving yet
            next_event_us: f64::INFINITY,
        })
    }

    pub fn len(&self) -> usize {
        self.policies.len()
    }

    /// The policy of logical `cpu`.
    pub fn policy_of(&self, cpu: usize) -> usize {
        self.policy_of_cpu[cpu]
    }

    pub fn cluster(&self, p: usize) -> usize {
        self.policies[p].cluster
    }

    pub fn cpus(&self, p: usize) -> &[usize] {
        &self.policies[p].cpus
    }

    /// The frequency last set on policy `p`, in its table's terms (`policy->cur`).
    pub fn request_khz(&self, p: usize) -> u32 {
        self.policies[p].request_khz
    }

    /// The governor of the policy on cluster `c` (under a switcher a cluster may have no policy
    /// left on it: all run one governor).
    pub fn governor_of_cluster(&self, c: usize) -> String {
        self.policies.iter().find(|p| p.cluster == c).unwrap_or(&self.policies[0]).governor_name.clone()
    }

    pub fn switcher(&self) -> Option<&Switcher> {
        self.switcher.as_ref()
    }

    // ---- busy CPUs and samples ---------------------------------------------------------------

    /// A CPU of policy `p` starts running something.
    pub fn cpu_busy(&mut self, p: usize) {
        self.policies[p].busy_cpus += 1;
        if self.policies[p].busy_cpus == 1 {
            self.refresh_next_event();
        }
    }

    /// A CPU of policy `p` goes idle.
    pub fn cpu_idle(&mut self, p: usize) {
        self.policies[p].busy_cpus -= 1;
        if self.policies[p].busy_cpus == 0 {
            self.refresh_next_event();
        }
    }

    /// Whether a CPU of policy `p` is running something (its tick is on).
    pub fn busy(&self, p: usize) -> bool {
        self.policies[p].busy_cpus > 0
    }

    /// Policy `p`'s next sample is due by `by_us`.
    pub fn sample_due(&self, p: usize, by_us: f64) -> bool {
        self.policies[p].next_sample_us <= by_us
    }

    /// Thread `t` starts running with counters `pmu`: each policy counts it among those that ran
    /// since its sample.
    pub fn note_ran(&mut self, t: usize, pmu: impl Fn() -> CorePmu) {
        // read once for every policy that takes it in
        let mut read = None;
        for policy in &mut self.policies {
            policy.ran.note(t, || *read.get_or_insert_with(&pmu));
        }
    }

    /// The earliest sample of a busy policy or transition end, µs (an idle policy samples at its
    /// next wake-up instead).
    #[inline]
    pub fn next_event_us(&self) -> f64 {
        debug_assert_eq!(self.next_event_us.to_bits(), self.earliest_event_us().to_bits());
        self.next_event_us
    }

    /// `next_event_us` worked out again from the policies (after one of its inputs changed).
    fn refresh_next_event(&mut self) {
        self.next_event_us = self.earliest_event_us();
    }

    fn earliest_event_us(&self) -> f64 {
        let mut next = f64::INFINITY;
        for policy in &self.policies {
            if policy.busy_cpus > 0 {
                next = next.min(policy.next_sample_us);
            }
            if let Some((t, _)) = policy.pending {
                next = next.min(t);
            }
        }
        next
    }

    /// The frequency policy `p`'s transition reaches by `by_us`, if one ends then.
    pub fn transition_due(&self, p: usize, by_us: f64) -> Option<u32> {
        self.policies[p].pending.filter(|&(t, _)| t <= by_us).map(|(_, khz)| khz)
    }

    // ---- the governor ------------------------------------------------------------------------

    pub fn reads_pmcs(&self, p: usize) -> bool {
        self.policies[p].reads_pmcs
    }

    pub fn reads_util(&self, p: usize) -> bool {
        self.policies[p].reads_util
    }

    /// Policy `p`'s view, taken to be filled and read.
    pub fn take_view(&mut self, p: usize) -> Box<PolicyView> {
        self.policies[p].view.take().expect("a policy's view comes back after each sample")
    }

    /// The governor of `p` starts with `view` (kept for reuse); its first decision.
    pub fn start_governor(&mut self, p: usize, view: Box<PolicyView>) -> Decision {
        let policy = &mut self.policies[p];
        let decision = policy.governor.start(&view);
        policy.view = Some(view);
        decision
    }

    /// The governor of `p` samples `view`; its decision.
    pub fn sample_governor(&mut self, p: usize, view: &PolicyView) -> Decision {
        self.policies[p].governor.sample(view)
    }

    /// Policy `p`'s next sample is due at `next_us`.
    pub fn set_next_sample_us(&mut self, p: usize, next_us: f64) {
        self.policies[p].next_sample_us = next_us;
        self.refresh_next_event();
    }

    /// `view` goes back to policy `p` for reuse; its next sample is due at `next_us`.
    pub fn sampled(&mut self, p: usize, view: Box<PolicyView>, next_us: f64) {
        let policy = &mut self.policies[p];
        policy.next_sample_us = next_us;
        policy.view = Some(view);
        self.refresh_next_event();
    }

    /// What policy `p`'s view holds of the policy itself at `now_us`: its table, limits
    /// (`cap_khz` the thermal cap in its table's terms), current frequency and the platform's
    /// constants of its cluster (written when the view last held another cluster's), and,
    /// when `reads_cci_cycles`, the CCI cycles since its previous sample.
    pub fn fill_view_policy(
        &mut self,
        p: usize,
        view: &mut PolicyView,
        now_us: f64,
        cap_khz: u32,
        reads_cci_cycles: bool,
    ) {
        let policy = &mut self.policies[p];
        let c = policy.cluster;
        if policy.view_cluster != Some(c) {
            policy.view_cluster = Some(c);
            view.opps_khz.clone_from(&policy.opps_khz);
            view.policy = p;
            let (min_khz, max_khz) = (policy.opps_khz[0], *policy.opps_khz.last().expect("a policy has OPPs"));
            view.cpuinfo_min_khz = min_khz;
            view.cpuinfo_max_khz = max_khz;
            view.policy_min_khz = min_khz;
            view.policy_max_khz = max_khz;
            view.transition_latency_ns = self.platform.clusters[c].transition_latency_ns;
            view.tick_us = self.tick_us;
            view.cpu_capacity = self.platform.cpu_capacity(c);
        }
        // truncated as `as u64` does (the time is never negative, far below 2^63 µs)
        view.now_us = now_us as i64 as u64;
        view.thermal_cap_khz = cap_khz;
        view.cur_khz = policy.request_khz;
        if reads_cci_cycles {
            let cci = self.platform.cci.as_ref();
            view.cci_cycles = cycles_at(now_us, cci) - cycles_at(policy.last_sample_us, cci);
        }
    }

    /// When policy `p` last sampled, µs.
    pub fn last_sample_us(&self, p: usize) -> f64 {
        self.policies[p].last_sample_us
    }

    /// `cpu`'s counters at its policy's previous sample.
    pub fn pmu_at_sample(&self, cpu: usize) -> &CorePmu {
        &self.pmu_at_sample[cpu]
    }

    /// The threads that ran since policy `p`'s previous sample, in thread order, each with its
    /// counters then.
    pub fn ran_since_sample(&mut self, p: usize) -> impl Iterator<Item = (usize, &CorePmu)> {
        let ran = &mut self.policies[p].ran;
        ran.threads.sort_unstable();
        let ran = &*ran;
        ran.threads.iter().map(move |&t| (t, &ran.pmu_at_sample[t]))
    }

    /// Cluster `o`'s CCI port counts at policy `p`'s previous sample.
    pub fn ports_at_sample(&self, p: usize, o: usize) -> (u64, u64) {
        self.policies[p].ports_at_sample[o]
    }

    /// The counters' values at `now_us` become the base of policy `p`'s next period: its CPUs'
    /// (`cpu_pmu`, read only for a governor that reads them), the threads `running` now (the
    /// others leave the set and rejoin, with their counters, when they next run) and every CCI
    /// port's. `counters` reads a thread's and a port's counts, given only when the next sample
    /// reads them (a PMC governor, or the time series).
    pub fn snapshot<T: Fn(usize) -> CorePmu, O: Fn(usize) -> (u64, u64)>(
        &mut self,
        p: usize,
        now_us: f64,
        cpu_pmu: impl Fn(usize) -> CorePmu,
        running: impl Fn(usize) -> bool,
        counters: Option<(T, O)>,
    ) {
        let policy = &mut self.policies[p];
        if policy.reads_pmcs {
            for &cpu in &policy.cpus {
                self.pmu_at_sample[cpu] = cpu_pmu(cpu);
            }
        }
        let ran = &mut policy.ran;
        let mut kept = 0;
        for i in 0..ran.threads.len() {
            let t = ran.threads[i];
            if running(t) {
                if let Some((thread_pmu, _)) = &counters {
                    ran.pmu_at_sample[t] = thread_pmu(t);
                }
                ran.threads[kept] = t;
                kept += 1;
            } else {
                ran.member[t] = false;
            }
        }
        ran.threads.truncate(kept);
        if let Some((_, port_counts)) = &counters {
            for (o, at) in policy.ports_at_sample.iter_mut().enumerate() {
                *at = port_counts(o);
            }
        }
        policy.last_sample_us = now_us;
    }

    // ---- frequencies -------------------------------------------------------------------------

    /// The highest frequency policy `p` may ask for now, in its table's terms, given each
    /// cluster's thermal cap `cap_of(c)`. Under a switcher the cooling device caps the policy
    /// over the virtual table (`cpufreq_cooling` on the switcher's policy): the big cluster's
    /// cap while it allows one of its OPPs; a cap below them reaches into the LITTLE part of the
    /// table, the LITTLE cluster's cap in virtual kHz, so the CPU switches down (the LITTLE cap
    /// also bounds its clock in `cluster_clock_khz`).
    pub fn upper_limit_khz(&self, p: usize, cap_of: impl Fn(usize) -> u32) -> u32 {
        let Some(sw) = self.switcher.as_ref() else {
            return cap_of(self.policies[p].cluster);
        };
        let big_cap_khz = cap_of(sw.big);
        if big_cap_khz >= self.platform.clusters[sw.big].min_khz() {
            big_cap_khz
        } else {
            sw.virtual_of(sw.little, cap_of(sw.little))
        }
    }

    /// Policy `p` asks for `khz` at `now_us`: the cpufreq core resolves it to an OPP within
    /// the limits (RELATION_H below `cap_khz`); a change completes after the transition latency.
    #[inline]
    pub fn request(&mut self, p: usize, khz: u32, cap_khz: u32, now_us: f64) {
        let policy = &mut self.policies[p];
        // Asking again for the frequency set, within the cap, with nothing pending: it resolves
        // to itself (`request_khz` is an OPP of the table) and changes nothing.
        if policy.pending.is_none() && khz == policy.request_khz && khz <= cap_khz {
            debug_assert!(policy.opps_khz.contains(&khz), "policy->cur is an OPP");
            return;
        }
        let khz = policy.opps_khz.iter().rev().copied().find(|&f| f <= khz.min(cap_khz)).unwrap_or(policy.opps_khz[0]);
        match policy.pending {
            Some((_, pending)) if pending == khz => {}
            _ if policy.request_khz == khz => {
                policy.pending = None;
                self.refresh_next_event();
            }
            _ => {
                let latency_us = self.platform.clusters[policy.cluster].transition_latency_ns as f64 / 1000.0;
                policy.pending = Some((now_us + latency_us, khz));
                self.refresh_next_event();
            }
        }
    }

    /// The frequency policy `p` has set or is moving to.
    pub fn target_khz(&self, p: usize) -> u32 {
        let policy = &self.policies[p];
        policy.pending.map_or(policy.request_khz, |p| p.1)
    }

    /// Policy `p`'s transition to `khz` completes: whether its frequency changed, and the
    /// cluster it runs on now with the cluster its frequency belongs on (a switcher's choice).
    pub fn complete(&mut self, p: usize, khz: u32) -> (bool, usize, usize) {
        let policy = &mut self.policies[p];
        policy.pending = None;
        let changed = policy.request_khz != khz;
        policy.request_khz = khz;
        let from = policy.cluster;
        self.refresh_next_event();
        let to = self.switcher.as_ref().map_or(from, |sw| sw.cluster_for(from, khz));
        (changed, from, to)
    }

    /// The clock cluster `c` runs at for the requests of the policies on it, kHz: the highest,
    /// translated from the virtual table, rounded down to one of its OPPs within `cap_khz`;
    /// `None` when no policy is on it.
    pub fn cluster_clock_khz(&self, c: usize, cap_khz: u32) -> Option<u32> {
        let want = self
            .policies
            .iter()
            .filter(|p| p.cluster == c)
            .map(|p| self.switcher.as_ref().map_or(p.request_khz, |sw| sw.actual_khz(c, p.request_khz)))
            .max()?;
        let limit = want.min(cap_khz);
        let opps = &self.platform.clusters[c].opps;
        Some(opps.iter().rev().map(|o| o[0]).find(|&f| f <= limit).unwrap_or(opps[0][0]))
    }

    /// Policy `p` now runs on cluster `to` (its CPUs moved by the switcher); true if no policy
    /// is left on the cluster it left.
    pub fn move_policy(&mut self, p: usize, to: usize) -> bool {
        let from = self.policies[p].cluster;
        self.policies[p].cluster = to;
        !self.policies.iter().any(|q| q.cluster == from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpufreq<'p>(platform: &'p Platform, governor: &str) -> Cpufreq<'p> {
        let config = SimConfig::new(SimConfig::governor_plan(platform, governor, &[], None, &[]).unwrap());
        Cpufreq::new(platform, &config, None, 4).unwrap()
    }

    #[test]
    fn requests_resolve_to_an_opp_below_the_cap_after_the_latency() {
        let p = Platform::builtin("exynos5422").unwrap();
        let mut f = cpufreq(&p, "ondemand");
        let big = p.cluster_index("big").unwrap();
        assert_eq!((f.len(), f.cluster(big), f.policy_of(4)), (2, big, big));
        assert_eq!(f.request_khz(big), 2_000_000);
        f.request(big, 1_234_567, 1_800_000, 10.0);
        assert_eq!(f.target_khz(big), 1_200_000);
        let latency_us = p.clusters[big].transition_latency_ns as f64 / 1000.0;
        assert_eq!(f.transition_due(big, 10.0 + latency_us), Some(1_200_000));
        assert_eq!(f.complete(big, 1_200_000), (true, big, big));
        assert_eq!(f.cluster_clock_khz(big, 1_000_000), Some(1_000_000));
        // asking for what is set cancels nothing and starts nothing
        f.request(big, 1_200_000, 2_000_000, 20.0);
        assert_eq!(f.next_event_us(), f64::INFINITY);
        // ... but asking for it again while moving elsewhere cancels the move
        f.request(big, 1_000_000, 2_000_000, 30.0);
        assert_eq!(f.target_khz(big), 1_000_000);
        f.request(big, 1_200_000, 2_000_000, 31.0);
        assert_eq!((f.target_khz(big), f.next_event_us()), (1_200_000, f64::INFINITY));
        // and a cap below it moves it down even though it is what is set
        f.request(big, 1_200_000, 1_100_000, 32.0);
        assert_eq!(f.target_khz(big), 1_100_000);
    }

    #[test]
    fn the_threads_that_ran_are_read_once_each_in_thread_order() {
        let p = Platform::builtin("exynos5422").unwrap();
        let mut f = cpufreq(&p, "ondemand");
        let pmu = |n| CorePmu { inst_retired: n, ..Default::default() };
        f.note_ran(3, || pmu(30));
        f.note_ran(1, || pmu(10));
        f.note_ran(3, || pmu(99));
        let ran: Vec<(usize, u64)> = f.ran_since_sample(0).map(|(t, c)| (t, c.inst_retired)).collect();
        assert_eq!(ran, [(1, 10), (3, 30)]);
        // thread 3 still runs at the sample: it stays, with its counters then
        f.snapshot(0, 5.0, |_| CorePmu::default(), |t| t == 3, Some((|_| pmu(42), |_| (0, 0))));
        let ran: Vec<(usize, u64)> = f.ran_since_sample(0).map(|(t, c)| (t, c.inst_retired)).collect();
        assert_eq!(ran, [(3, 42)]);
        assert_eq!(f.last_sample_us(0), 5.0);
    }
}
