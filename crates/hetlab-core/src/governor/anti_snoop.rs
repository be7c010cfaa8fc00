//! `anti-snoop`: the seed paper's ondemand-anti-snoop governor (LCTES'20, Algorithm 2).
//!
//! A cluster clocked low serves the other cluster's snoops slowly. So, below up_threshold,
//! this cluster's decision tree looks at the *other* cluster — the congestion of its CCI port
//! and the memory traffic of the threads running there — and says whether snoops are hurting.
//! If they are, the frequency climbs one OPP above the current one per sample; if not, the
//! floor drops one OPP per sample. The result never goes below ondemand's load-based choice:
//!
//! ```text
//! if load > up_threshold: max                               (ondemand, incl. rate_mult)
//! else: stall = cur ± one OPP (tree says increase / decrease)
//!       freq  = clamp(max(ondemand_load_freq, stall))       (limits incl. the thermal cap)
//! ```
//!
//! Without CCI counters (empty `cci_ports`) or without a port of another cluster it is
//! ondemand.

use std::fmt;

use super::freq_table::{resolve_in, step_opp, Relation};
use super::ondemand::{self, OdPath, Ondemand, OndemandTunables};
use super::tunables::Values;
use super::{Decision, Governor, GovernorContext, GovernorDescriptor, PolicyView};
use crate::counters::{ClusterCounters, FEATURE_CCI_CONGESTION, FEATURE_MEMORY_ACCESS};
use crate::tree::{AntiSnoopModel, DecisionTree, INCREASE};

/// What the tree was given and said for one other cluster.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SnoopFeatures {
    /// Policy index of the cluster whose counters were read.
    pub other_cluster: usize,
    /// si_rrq_stall_tt_full / si_rrq_hs_any on its CCI port(s).
    pub cci_congestion: f64,
    /// Σ bus_access / Σ cpu_cycles over the threads that ran there (0 if none).
    pub memory_access: f64,
    /// The tree predicted "increase_frequency".
    pub increase: bool,
}

/// Most features one tree may read (the paper's two, each at most twice).
const MAX_INPUTS: usize = 4;

/// One full sample of the governor, for logging.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AntiSnoopRecord {
    pub now_us: u64,
    /// dbs load, %.
    pub load: u32,
    /// ondemand's choice for that load (max above up_threshold), kHz.
    pub load_khz: u32,
    /// The features and prediction; `None` when the tree was not consulted (load above
    /// up_threshold, or no CCI counters of another cluster).
    pub features: Option<SnoopFeatures>,
    /// One OPP above/below the current frequency, kHz, when the tree was consulted.
    pub stall_khz: Option<u32>,
    /// The frequency chosen, kHz.
    pub target_khz: u32,
}

/// anti-snoop as registered: ondemand's tunables, and the decision tree of the policy's cluster
/// from the context's model (default: the paper's Figure 4).
pub const DESCRIPTOR: GovernorDescriptor = GovernorDescriptor {
    name: "anti-snoop",
    summary: "LCTES'20 ondemand-anti-snoop: ondemand, plus one OPP up per sample while the decision tree sees the other cluster stalled on snoops (one down otherwise), never below the load-based choice.",
    tunables: ondemand::tunables,
    build,
};

fn build(v: &Values, ctx: &GovernorContext) -> Result<Box<dyn Governor>, String> {
    let tunables = OndemandTunables::from_values(v);
    let g = match ctx.model {
        Some(m) => AntiSnoop::new(ctx.cluster_name, tunables, m)?,
        None => AntiSnoop::new(ctx.cluster_name, tunables, &AntiSnoopModel::lctes2020_fig4())?,
    };
    Ok(Box::new(g))
}

/// Which input each of the tree's features is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Feature {
    CciCongestion,
    MemoryAccess,
}

pub struct AntiSnoop {
    od: Ondemand,
    cluster_name: String,
    tree: DecisionTree,
    inputs: Vec<Feature>,
    /// stall frequency of the last full sample: also the floor of a powersave_bias sub-sample.
    stall_khz: Option<u32>,
    last: Option<AntiSnoopRecord>,
}

impl AntiSnoop {
    /// Takes the tree of `cluster_name` from `model`; fails if there is none or it is malformed
    /// or uses a feature this governor cannot measure.
    pub fn new(cluster_name: &str, tunables: OndemandTunables, model: &AntiSnoopModel) -> Result<Self, String> {
        let Some(tree) = model.tree_for(cluster_name) else {
            let have: Vec<&str> = model.trees.iter().map(|(c, _)| c.as_str()).collect();
            return Err(format!(
                "anti-snoop: model '{}' has no tree for cluster '{cluster_name}'; it has trees for: {}",
                model.name,
                have.join(", ")
            ));
        };
        tree.validate()
            .map_err(|e| format!("anti-snoop: tree for cluster '{cluster_name}' in model '{}': {e}", model.name))?;
        let inputs = tree
            .features
            .iter()
            .map(|f| match f.as_str() {
                FEATURE_CCI_CONGESTION => Ok(Feature::CciCongestion),
                FEATURE_MEMORY_ACCESS => Ok(Feature::MemoryAccess),
                other => Err(format!(
                    "anti-snoop: tree for cluster '{cluster_name}' uses feature '{other}'; \
                     the governor measures only {FEATURE_CCI_CONGESTION} and {FEATURE_MEMORY_ACCESS}"
                )),
            })
            .collect::<Result<Vec<_>, _>>()?;
        if inputs.len() > MAX_INPUTS {
            return Err(format!(
                "anti-snoop: tree for cluster '{cluster_name}' lists {} features; at most {MAX_INPUTS}",
                inputs.len()
            ));
        }
        Ok(AntiSnoop {
            od: Ondemand::new(tunables),
            cluster_name: cluster_name.to_string(),
            tree: tree.clone(),
            inputs,
            stall_khz: None,
            last: None,
        })
    }

    pub fn cluster_name(&self) -> &str {
        &self.cluster_name
    }

    pub fn tunables(&self) -> &OndemandTunables {
        &self.od.tunables
    }

    /// The last full sample (not updated by powersave_bias sub-samples).
    pub fn last(&self) -> Option<&AntiSnoopRecord> {
        self.last.as_ref()
    }

    /// Ask the tree about every other cluster with a CCI port (one on big.LITTLE); any
    /// "increase" wins, since snoops from any of them are served at this cluster's clock.
    fn consult(&self, view: &PolicyView) -> Option<SnoopFeatures> {
        // One CCI port per cluster, so each other cluster appears once. No allocation: this
        // runs every sample, on a real board too.
        let mut first = None;
        for other in view.cci_ports.iter().map(|p| p.cluster).filter(|&c| c != view.policy) {
            let counters = ClusterCounters::of(other, &view.cci_ports, &view.threads);
            let mut x = [(0u64, 0u64); MAX_INPUTS];
            for (slot, f) in x.iter_mut().zip(&self.inputs) {
                *slot = match f {
                    Feature::CciCongestion => counters.cci_congestion_counts(),
                    Feature::MemoryAccess => counters.memory_access_counts(),
                };
            }
            let increase = self.tree.predict_counts(&x[..self.inputs.len()]) == INCREASE;
            let f = SnoopFeatures {
                other_cluster: other,
                cci_congestion: counters.cci_congestion(),
                memory_access: counters.memory_access(),
                increase,
            };
            if increase {
                return Some(f);
            }
            first.get_or_insert(f);
        }
        first
    }
}

impl Governor for AntiSnoop {
    fn reads_pmcs(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        DESCRIPTOR.name
    }

    fn start(&mut self, view: &PolicyView) -> Decision {
        self.stall_khz = None;
        self.last = None;
        self.od.start(view)
    }

    fn sample(&mut self, view: &PolicyView) -> Decision {
        let (mut d, path) = self.od.step(view);
        let load_khz = d.target_khz;
        let mut features = None;
        match path {
            OdPath::SubSample => {
                if let Some(stall) = self.stall_khz {
                    d.target_khz = resolve_in(view, d.target_khz.max(stall), Relation::C);
                }
                return d;
            }
            OdPath::AboveThreshold => self.stall_khz = None,
            OdPath::Proportional { .. } => {
                features = self.consult(view);
                self.stall_khz = features.map(|f| step_opp(view, view.cur_khz, if f.increase { 1 } else { -1 }));
                if let Some(stall) = self.stall_khz {
                    d.target_khz = resolve_in(view, d.target_khz.max(stall), Relation::C);
                }
            }
        }
        self.last = Some(AntiSnoopRecord {
            now_us: view.now_us,
            load: self.od.last_load(),
            load_khz,
            features,
            stall_khz: self.stall_khz,
            target_khz: d.target_khz,
        });
        d
    }

    /// The features the tree was given at the last full sample and what it said, or `tree=-`
    /// when it was not consulted.
    fn explain(&self, out: &mut dyn fmt::Write) -> fmt::Result {
        match self.last.and_then(|r| r.features) {
            Some(f) => write!(
                out,
                " cci_congestion={:.6} memory_access={:.6} tree={}",
                f.cci_congestion,
                f.memory_access,
                if f.increase { "increase" } else { "decrease" }
            ),
            None => write!(out, " tree=-"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::governor::testutil::{big_view, little_view, port, thread, with_load};

    /// LITTLE (policy 0) at `cur_khz` with `load`%, the big cluster's (policy 1) port and a
    /// thread on big. Fig. 4b (LITTLE's tree) says increase iff congestion > 0.00023 and
    /// memory_access > 0.00468.
    fn little(cur_khz: u32, load: u64, congestion_per_mille: u64, bus_per_1000_cycles: u64) -> PolicyView {
        let mut v = with_load(little_view(cur_khz), load);
        v.cci_ports = vec![port(0, 1_000, 999), port(1, 1_000, congestion_per_mille)];
        v.threads = vec![thread(1, 1_000_000, bus_per_1000_cycles * 1_000), thread(0, 1_000, 1_000)];
        v
    }

    fn governor(cluster: &str) -> AntiSnoop {
        AntiSnoop::new(cluster, OndemandTunables::default(), &AntiSnoopModel::lctes2020_fig4()).unwrap()
    }

    #[test]
    fn steps_up_one_opp_per_sample_while_the_tree_says_increase_then_decays() {
        let mut g = governor("little");
        let mut cur = 200_000;
        assert_eq!(g.start(&little(cur, 0, 10, 10)), Decision { target_khz: 200_000, next_sample_us: 10_000 });
        // idle LITTLE (load 0 -> ondemand 200000); big port congestion 10/1000 = 0.01 > 0.00023,
        // memory_access 10000/1000000 = 0.01 > 0.00468 -> increase: cur + one OPP each sample
        let mut seen = vec![];
        for _ in 0..14 {
            cur = g.sample(&little(cur, 0, 10, 10)).target_khz;
            seen.push(cur);
        }
        let want: Vec<u32> = (3..=14).map(|m| m * 100_000).chain([1_400_000, 1_400_000]).collect();
        assert_eq!(seen, want);
        let r = g.last().unwrap();
        assert_eq!(r.features.unwrap().other_cluster, 1);
        assert!(r.features.unwrap().increase);
        assert!((r.features.unwrap().cci_congestion - 0.01).abs() < 1e-12);
        assert!((r.features.unwrap().memory_access - 0.01).abs() < 1e-12);
        assert_eq!((r.load_khz, r.stall_khz, r.target_khz), (200_000, Some(1_400_000), 1_400_000));

        // no congestion any more -> decrease: one OPP down per sample, to ondemand's choice for
        // load 50 (200000 + 50*12000 = 800000) and no further
        let mut seen = vec![];
        for _ in 0..8 {
            cur = g.sample(&little(cur, 50, 0, 10)).target_khz;
            seen.push(cur);
        }
        assert_eq!(seen, [1_300_000, 1_200_000, 1_100_000, 1_000_000, 900_000, 800_000, 800_000, 800_000]);
        let r = g.last().unwrap();
        assert!(!r.features.unwrap().increase);
        assert_eq!((r.load_khz, r.stall_khz), (800_000, Some(700_000)));
    }

    #[test]
    fn load_above_threshold_goes_to_max_without_the_tree() {
        let mut g = governor("little");
        g.start(&little(400_000, 0, 0, 0));
        assert_eq!(g.sample(&little(400_000, 100, 0, 0)).target_khz, 1_400_000);
        let r = g.last().unwrap();
        assert_eq!((r.load, r.features, r.stall_khz), (100, None, None));
    }

    #[test]
    fn without_cci_counters_it_is_ondemand() {
        let mut g = governor("little");
        let mut v = little(1_000_000, 0, 10, 10);
        v.cci_ports.clear();
        g.start(&v);
        // load 0 -> 200000 at once, no gradual decay
        assert_eq!(g.sample(&v).target_khz, 200_000);
        assert_eq!(g.last().unwrap().features, None);
        // only this cluster's own port: no other cluster to read either
        let mut v = little(1_000_000, 0, 10, 10);
        v.cci_ports.retain(|p| p.cluster == 0);
        assert_eq!(g.sample(&v).target_khz, 200_000);
    }

    #[test]
    fn stall_step_respects_the_thermal_cap() {
        let mut g = governor("little");
        let mut v = little(900_000, 0, 10, 10);
        v.thermal_cap_khz = 900_000;
        g.start(&v);
        // one step up would be 1000000 > cap 900000 -> 900000
        assert_eq!(g.sample(&v).target_khz, 900_000);
    }

    #[test]
    fn big_tree_reads_the_little_cluster() {
        // Fig. 4a: increase iff congestion > 0.01074 and memory_access > 0.00822
        let mut g = governor("big");
        let mut v = with_load(big_view(600_000), 0);
        // LITTLE port (cluster 0): 20/1000 = 0.02; thread on LITTLE 0.01; the big thread's
        // own traffic (0.5) must not count
        v.cci_ports = vec![port(0, 1_000, 20), port(1, 1_000, 0)];
        v.threads = vec![thread(0, 1_000_000, 10_000), thread(1, 1_000, 500)];
        g.start(&v);
        assert_eq!(g.sample(&v).target_khz, 700_000);
        // memory_access 0.005 <= 0.00822 -> decrease: max(200000, 600000 - 1 OPP = 500000)
        v.threads = vec![thread(0, 1_000_000, 5_000), thread(1, 1_000, 500)];
        assert_eq!(g.sample(&v).target_khz, 500_000);
        let f = g.last().unwrap().features.unwrap();
        assert_eq!(f.other_cluster, 0);
        assert!((f.memory_access - 0.005).abs() < 1e-12);
    }

    #[test]
    fn every_other_cluster_is_asked_and_any_increase_wins() {
        // A three-cluster SoC: the middle policy (1) sees clusters 0 and 2 through their CCI
        // ports, whatever they are called. Only cluster 2 is congested: increase, found there.
        let mut g = governor("big");
        let mut v = with_load(big_view(600_000), 0);
        v.cci_ports = vec![port(0, 1_000, 0), port(1, 1_000, 999), port(2, 1_000, 20)];
        v.threads = vec![thread(0, 1_000_000, 10_000), thread(2, 1_000_000, 10_000)];
        g.start(&v);
        assert_eq!(g.sample(&v).target_khz, 700_000);
        let f = g.last().unwrap().features.unwrap();
        assert_eq!((f.other_cluster, f.increase), (2, true));
        // none congested: the first other cluster's features, decrease
        v.cci_ports[2] = port(2, 1_000, 0);
        assert_eq!(g.sample(&v).target_khz, 500_000);
        let f = g.last().unwrap().features.unwrap();
        assert_eq!((f.other_cluster, f.increase), (0, false));
    }

    #[test]
    fn powersave_bias_sub_sample_keeps_the_stall_floor() {
        let t = OndemandTunables { powersave_bias: 100, ..Default::default() };
        let mut g = AntiSnoop::new("little", t, &AntiSnoopModel::lctes2020_fig4()).unwrap();
        g.start(&little(900_000, 50, 0, 0));
        // load 50: ondemand hi 800000 for 2000 µs then lo 700000 (see ondemand's test); the
        // tree says decrease: stall = 900000 - 1 OPP = 800000, so both halves run 800000
        assert_eq!(g.sample(&little(900_000, 50, 0, 0)), Decision { target_khz: 800_000, next_sample_us: 2_000 });
        assert_eq!(g.sample(&little(800_000, 50, 0, 0)), Decision { target_khz: 800_000, next_sample_us: 8_000 });
    }

    #[test]
    fn model_errors_name_the_cluster_and_feature() {
        let m = AntiSnoopModel::lctes2020_fig4();
        let e = AntiSnoop::new("mid", OndemandTunables::default(), &m).err().unwrap();
        assert_eq!(
            e,
            "anti-snoop: model 'lctes2020-fig4' has no tree for cluster 'mid'; it has trees for: big, little"
        );
        let mut m2 = m.clone();
        m2.trees[0].1.features[1] = "ipc".into();
        let e = AntiSnoop::new("big", OndemandTunables::default(), &m2).err().unwrap();
        assert!(e.contains("feature 'ipc'"), "{e}");
        let mut m3 = m;
        m3.trees[1].1.nodes[0].left = Some(0);
        assert!(AntiSnoop::new("little", OndemandTunables::default(), &m3).is_err());
    }
}
