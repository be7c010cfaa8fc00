//! The characterization sweep (seed paper §3.1) as data, for both backends: the simulated one
//! ([`simulated`]) and the real board (hetlab-linux's `characterize`).
//!
//! ccbench's pointer chase runs on one cluster (the *active* one), the other idle, with every
//! cluster's frequency fixed. The sweep is split into [`Chunk`]s — one per active cluster,
//! pattern and array size, in that order — and a chunk runs every frequency pair `reps` times.
//! Run ids are dense over the whole plan (chunk after chunk), so a sweep that runs some chunks
//! only, or resumes, still numbers each run as the full sweep would; run `i` uses seed
//! `seed + i`. Rows are written by [`dataset`].

pub mod dataset;
pub mod simulated;

use crate::platform::Platform;

/// The access patterns of the sweep, ccbench's names.
pub const PATTERNS: [&str; 3] = ["random", "sequential", "stride-16"];

/// The two clusters whose frequencies the dataset records, in column order (`big_khz`,
/// `little_khz`) and in the order a chunk sweeps them (the first is the outer loop). The sweep
/// needs a platform with exactly these two clusters: [`Plan::new`] checks it, nothing else does.
pub const FREQ_CLUSTERS: [&str; 2] = ["big", "little"];

/// Dependent loads of the run that measures a chunk's time per load (simulated backend).
pub const PROBE_LOADS: u64 = 20_000;

/// The fewest dependent loads a run makes, however fast the probe.
pub const MIN_ITERATIONS: u64 = 1000;

/// Which frequencies the active cluster runs at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActiveOpp {
    /// Every pair of cluster OPPs.
    All,
    /// The active cluster at its top OPP, only the idle cluster swept: the layout the seed
    /// paper's Figure 4 sample counts imply (1,995 = 19 big OPPs x 105 and 1,365 = 13 LITTLE
    /// OPPs x 105, one sample per idle OPP; docs/training.md), with 13-19x fewer runs.
    Top,
}

impl ActiveOpp {
    pub const NAMES: [&'static str; 2] = ["all", "top"];

    pub fn parse(name: &str) -> Result<ActiveOpp, String> {
        match name {
            "all" => Ok(ActiveOpp::All),
            "top" => Ok(ActiveOpp::Top),
            other => Err(format!("unknown --active-opp '{other}'; use one of {}", Self::NAMES.join(", "))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ActiveOpp::All => "all",
            ActiveOpp::Top => "top",
        }
    }
}

/// What a sweep is asked for. `Default` holds the defaults of `hetlab characterize`, `hetlabd
/// characterize` and the Python API alike.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepOptions {
    /// Names from [`PATTERNS`].
    pub patterns: Vec<String>,
    /// Array sizes, 4-byte elements; empty = [`default_sizes`], or [`PAPER_SIZES`] in the
    /// paper's layout (`ActiveOpp::Top`).
    pub sizes: Vec<usize>,
    /// Repetitions per configuration (the t-test needs 2 or more).
    pub reps: u32,
    /// Target run length with both clusters at their top OPP, s (slower configurations run
    /// longer and get more sampling periods).
    pub run_s: f64,
    /// Run `i` uses seed `seed + i`.
    pub seed: u64,
    pub active_opp: ActiveOpp,
}

impl Default for SweepOptions {
    fn default() -> Self {
        SweepOptions {
            patterns: PATTERNS.iter().map(|p| p.to_string()).collect(),
            sizes: Vec::new(),
            reps: 5,
            run_s: 0.08,
            seed: 1,
            active_opp: ActiveOpp::All,
        }
    }
}

impl SweepOptions {
    /// Refuses what cannot make a training set; each message names the option and the fix.
    pub fn validate(&self) -> Result<(), String> {
        if self.reps < 2 {
            return Err(format!("--reps must be at least 2 (the t-test needs repetitions), got {}", self.reps));
        }
        if !(self.run_s.is_finite() && self.run_s > 0.0) {
            return Err(format!("--run-s must be a positive number of seconds, got {}", self.run_s));
        }
        let unknown: Vec<&str> = self.patterns.iter().map(String::as_str).filter(|p| !PATTERNS.contains(p)).collect();
        if !unknown.is_empty() {
            return Err(format!("unknown pattern(s) {}; known: {}", unknown.join(", "), PATTERNS.join(", ")));
        }
        if self.patterns.is_empty() {
            return Err(format!("no pattern given; use some of {}", PATTERNS.join(", ")));
        }
        if let Some(s) = self.sizes.iter().find(|&&s| s == 0) {
            return Err(format!("--sizes: array sizes are counts of 4-byte elements, at least 1; got {s}"));
        }
        Ok(())
    }
}

/// The seed paper's ccbench array sizes, 4-byte elements: the labels of its Figure 5 (seed 001),
/// 7 sizes; with 3 patterns and 5 repetitions they make the 105 samples per idle-cluster OPP of
/// its Figure 4 (1,995 = 19 x 105, 1,365 = 13 x 105). The sweep's paper layout uses them.
pub const PAPER_SIZES: [usize; 7] = [4, 65536, 131072, 160100, 1048576, 33554432, 67108864];

/// Array sizes (4-byte elements) half and twice every cache size of every cluster (L1D of its
/// core type, its L2): each size fits, or does not fit, each L1 and L2 (the paper's choice).
pub fn default_sizes(p: &Platform) -> Vec<usize> {
    let mut sizes = std::collections::BTreeSet::new();
    for (i, c) in p.clusters.iter().enumerate() {
        for bytes in [p.core_type_of(i).l1d_bytes, c.l2_bytes] {
            let elements = (bytes / 4) as usize;
            sizes.insert(elements / 2);
            sizes.insert(elements * 2);
        }
    }
    sizes.into_iter().collect()
}

/// Dependent loads per run so that a run lasts about `run_s` at the measured `s_per_load`
/// (time per load with both clusters at their top OPP), at least [`MIN_ITERATIONS`].
pub fn iterations(run_s: f64, s_per_load: f64) -> u64 {
    // a picosecond per load is out of reach of any memory system: it only guards a 0 reading
    ((run_s / s_per_load.max(1e-12)) as u64).max(MIN_ITERATIONS)
}

/// One chunk: the runs with one active cluster, pattern and size.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    /// Cluster index of the active cluster (platform order).
    pub active: usize,
    pub pattern: String,
    pub size_elements: usize,
    /// Run id of the chunk's first run.
    pub first_run: u64,
    /// Frequencies per run, kHz, in [`FREQ_CLUSTERS`] order, in sweep order.
    pub pairs: Vec<[u32; 2]>,
}

/// One run of the plan.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Run {
    pub run_id: u64,
    /// Index of the frequency pair in its chunk.
    pub pair: usize,
    pub freqs_khz: [u32; 2],
    pub rep: u32,
    /// The run's own seed (`seed + run_id`): the simulation's, or the chase's random chain.
    pub seed: u64,
}

/// The whole sweep: chunks, their frequency pairs and run ids.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub platform: String,
    pub platform_sha256: String,
    /// Cluster names, platform order (the order of the per-cluster columns).
    pub clusters: Vec<String>,
    /// Cluster index of each [`FREQ_CLUSTERS`] entry.
    pub freq_clusters: [usize; 2],
    /// Frequencies swept per cluster, kHz (platform order).
    pub freqs_khz: Vec<Vec<u32>>,
    /// The options, with the default sizes filled in.
    pub options: SweepOptions,
    pub chunks: Vec<Chunk>,
}

impl Plan {
    /// The plan for `platform` (its description hashes to `platform_sha256`), sweeping
    /// `freqs_khz` per cluster (platform order; the simulator passes every OPP, a board the
    /// policies' frequencies it was asked to sweep).
    pub fn new(
        platform: &Platform,
        platform_sha256: &str,
        mut options: SweepOptions,
        freqs_khz: Vec<Vec<u32>>,
    ) -> Result<Plan, String> {
        options.validate()?;
        let clusters: Vec<String> = platform.clusters.iter().map(|c| c.name.clone()).collect();
        let index = |name: &str| clusters.iter().position(|c| c == name);
        let (Some(first), Some(second)) = (index(FREQ_CLUSTERS[0]), index(FREQ_CLUSTERS[1])) else {
            return Err(format!(
                "the sweep needs a platform with two clusters named {} (the dataset's {} columns); {} has {}",
                FREQ_CLUSTERS.join(" and "),
                FREQ_CLUSTERS.map(|c| format!("{c}_khz")).join(" and "),
                platform.name,
                clusters.join(", ")
            ));
        };
        if clusters.len() != 2 {
            return Err(format!(
                "the sweep needs a platform with two clusters; {} has {}: {}",
                platform.name,
                clusters.len(),
                clusters.join(", ")
            ));
        }
        if freqs_khz.len() != clusters.len() || freqs_khz.iter().any(Vec::is_empty) {
            return Err(format!("the sweep needs at least one frequency for each of {}", clusters.join(", ")));
        }
        if options.sizes.is_empty() {
            options.sizes = match options.active_opp {
                ActiveOpp::All => default_sizes(platform),
                ActiveOpp::Top => PAPER_SIZES.to_vec(),
            };
        }
        let freq_clusters = [first, second];
        let mut chunks = Vec::new();
        let mut first_run = 0;
        for active in 0..clusters.len() {
            // the (first, second) frequency pairs of a chunk whose `active` cluster runs the chase
            let swept = |c: usize| match options.active_opp {
                ActiveOpp::Top if c == active => vec![top(&freqs_khz[c])],
                _ => freqs_khz[c].clone(),
            };
            let (outer, inner) = (swept(first), swept(second));
            let pairs: Vec<[u32; 2]> = outer.iter().flat_map(|&a| inner.iter().map(move |&b| [a, b])).collect();
            for pattern in &options.patterns {
                for &size_elements in &options.sizes {
                    let chunk =
                        Chunk { active, pattern: pattern.clone(), size_elements, first_run, pairs: pairs.clone() };
                    first_run += chunk.pairs.len() as u64 * u64::from(options.reps);
                    chunks.push(chunk);
                }
            }
        }
        Ok(Plan {
            platform: platform.name.clone(),
            platform_sha256: platform_sha256.to_string(),
            clusters,
            freq_clusters,
            freqs_khz,
            options,
            chunks,
        })
    }

    /// The plan over every OPP of every cluster (the simulated sweep).
    pub fn every_opp(platform: &Platform, platform_sha256: &str, options: SweepOptions) -> Result<Plan, String> {
        let opps = platform.clusters.iter().map(|c| c.freqs_khz()).collect();
        Plan::new(platform, platform_sha256, options, opps)
    }

    /// Runs of chunk `c`, in run-id order.
    pub fn runs(&self, c: usize) -> impl Iterator<Item = Run> + '_ {
        let chunk = &self.chunks[c];
        let reps = self.options.reps;
        chunk.pairs.iter().enumerate().flat_map(move |(pair, &freqs_khz)| {
            (0..reps).map(move |rep| {
                let run_id = chunk.first_run + pair as u64 * u64::from(reps) + u64::from(rep);
                Run { run_id, pair, freqs_khz, rep, seed: self.options.seed.wrapping_add(run_id) }
            })
        })
    }

    /// Runs in chunk `c`.
    pub fn chunk_runs(&self, c: usize) -> u64 {
        self.chunks[c].pairs.len() as u64 * u64::from(self.options.reps)
    }

    pub fn total_runs(&self) -> u64 {
        (0..self.chunks.len()).map(|c| self.chunk_runs(c)).sum()
    }

    /// The cluster that idles while `active` runs the chase.
    pub fn idle(&self, active: usize) -> usize {
        1 - active
    }

    /// (cluster index, kHz) of both clusters in `run`.
    pub fn fixed_khz(&self, run: &Run) -> [(usize, u32); 2] {
        [(self.freq_clusters[0], run.freqs_khz[0]), (self.freq_clusters[1], run.freqs_khz[1])]
    }

    /// (cluster index, kHz) of both clusters at their top swept frequency: where a chunk's
    /// time per load is measured for [`iterations`].
    pub fn top_khz(&self) -> [(usize, u32); 2] {
        [0, 1].map(|c| (c, top(&self.freqs_khz[c])))
    }

    /// `{active}-{pattern}-{size}-{big_khz}-{little_khz}`: one configuration.
    pub fn config_id(&self, chunk: &Chunk, run: &Run) -> String {
        format!(
            "{}-{}-{}-{}-{}",
            self.clusters[chunk.active], chunk.pattern, chunk.size_elements, run.freqs_khz[0], run.freqs_khz[1]
        )
    }
}

fn top(freqs_khz: &[u32]) -> u32 {
    freqs_khz.iter().copied().max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exynos() -> Platform {
        Platform::builtin("exynos5422").unwrap()
    }

    #[test]
    fn default_sizes_straddle_every_cache() {
        // L1D 32 KB both core types; L2 512 KB (A7) and 2 MB (A15): half and twice each
        assert_eq!(default_sizes(&exynos()), vec![4096, 16384, 65536, 262144, 1048576]);
    }

    #[test]
    fn run_ids_follow_the_full_plan_and_seeds_follow_run_ids() {
        let opts = SweepOptions { reps: 3, seed: 10, ..Default::default() };
        let plan = Plan::every_opp(&exynos(), "ab", opts).unwrap();
        assert_eq!(plan.clusters, ["little", "big"]);
        assert_eq!(plan.freq_clusters, [1, 0]);
        assert_eq!(plan.chunks.len(), 2 * 3 * 5);
        assert_eq!(plan.total_runs(), 19 * 13 * 3 * 5 * 2 * 3);
        let mut next = 0;
        for c in 0..plan.chunks.len() {
            assert_eq!(plan.chunks[c].first_run, next);
            for run in plan.runs(c) {
                assert_eq!((run.run_id, run.seed), (next, 10 + next));
                next += 1;
            }
        }
        assert_eq!(next, plan.total_runs());
        // big is the outer loop, repetitions the innermost
        let first: Vec<Run> = plan.runs(0).take(4).collect();
        assert_eq!(first[0].freqs_khz, [200_000, 200_000]);
        assert_eq!((first[2].rep, first[3].rep, first[3].freqs_khz), (2, 0, [200_000, 300_000]));
        assert_eq!(plan.config_id(&plan.chunks[0], &first[3]), "little-random-4096-200000-300000");
        assert_eq!(plan.fixed_khz(&first[3]), [(1, 200_000), (0, 300_000)]);
        assert_eq!(plan.top_khz(), [(0, 1_400_000), (1, 2_000_000)]);
    }

    #[test]
    fn top_keeps_the_active_cluster_at_its_top_opp() {
        let opts = SweepOptions { active_opp: ActiveOpp::Top, patterns: vec!["random".into()], ..Default::default() };
        let plan = Plan::every_opp(&exynos(), "ab", opts).unwrap();
        let little = &plan.chunks[0];
        assert_eq!(plan.clusters[little.active], "little");
        assert_eq!(little.pairs.len(), 19);
        assert!(little.pairs.iter().all(|p| p[1] == 1_400_000));
        let big = &plan.chunks[PAPER_SIZES.len()];
        assert_eq!(plan.clusters[big.active], "big");
        assert_eq!(big.pairs.len(), 13);
        assert!(big.pairs.iter().all(|p| p[0] == 2_000_000));
        assert_eq!(big.first_run as usize, PAPER_SIZES.len() * 19 * 5);
        // the paper's Figure 4 counts: 3 patterns x 7 sizes x 5 repetitions per idle-cluster OPP
        let opts = SweepOptions { active_opp: ActiveOpp::Top, ..Default::default() };
        let plan = Plan::every_opp(&exynos(), "ab", opts).unwrap();
        assert_eq!(plan.options.sizes, PAPER_SIZES);
        let runs_of = |active: &str| {
            plan.chunks.iter().filter(|c| plan.clusters[c.active] == active).map(|c| c.pairs.len() * 5).sum::<usize>()
        };
        assert_eq!((runs_of("little"), runs_of("big")), (1995, 1365));
    }

    #[test]
    fn a_board_sweep_takes_its_own_frequency_lists() {
        let plan = Plan::new(&exynos(), "ab", SweepOptions::default(), vec![vec![1_400_000], vec![200_000, 2_000_000]])
            .unwrap();
        assert_eq!(plan.chunks[0].pairs, [[200_000, 1_400_000], [2_000_000, 1_400_000]]);
        assert_eq!(plan.top_khz(), [(0, 1_400_000), (1, 2_000_000)]);
    }

    #[test]
    fn bad_options_name_the_option() {
        let bad = |o: SweepOptions| Plan::every_opp(&exynos(), "ab", o).unwrap_err();
        assert!(bad(SweepOptions { reps: 1, ..Default::default() }).contains("--reps must be at least 2"));
        assert!(bad(SweepOptions { run_s: 0.0, ..Default::default() }).contains("--run-s must be a positive"));
        let e = bad(SweepOptions { patterns: vec!["zigzag".into()], ..Default::default() });
        assert_eq!(e, "unknown pattern(s) zigzag; known: random, sequential, stride-16");
        assert!(bad(SweepOptions { patterns: vec![], ..Default::default() }).contains("no pattern"));
        assert!(bad(SweepOptions { sizes: vec![0], ..Default::default() }).contains("--sizes"));
        assert_eq!(ActiveOpp::parse("some").unwrap_err(), "unknown --active-opp 'some'; use one of all, top");
        assert!(iterations(0.08, 0.0) > 1 << 30, "a 0 probe does not divide by zero");
        assert_eq!(iterations(0.08, 1e-6), 80_000);
        assert_eq!(iterations(0.08, 1e-3), MIN_ITERATIONS);
    }

    #[test]
    fn the_big_little_check_is_one_clear_error() {
        let mut p = exynos();
        p.clusters[1].name = "prime".into();
        let e = Plan::every_opp(&p, "ab", SweepOptions::default()).unwrap_err();
        assert!(e.contains("two clusters named big and little") && e.contains("little, prime"), "{e}");
    }
}
