//! Small binary decision trees (scikit-learn layout) and the anti-snoop model built from them.
//!
//! A tree is evaluated on named features; an internal node sends a sample left when
//! `feature <= threshold` (scikit-learn's convention), right otherwise.

use serde::{Deserialize, Serialize};

use crate::counters::{FEATURE_CCI_CONGESTION, FEATURE_MEMORY_ACCESS};

/// The two classes of the seed paper's trees.
pub const DECREASE: &str = "decrease_frequency";
pub const INCREASE: &str = "increase_frequency";
/// Every tree's classes, in this order (class index 0, 1). `hetlab.train` reads it from here.
pub const CLASSES: [&str; 2] = [DECREASE, INCREASE];

/// The features the governor measures (`crate::counters`), in the order the trees `hetlab train`
/// makes and the built-in model list them. `hetlab.train` reads it from here.
pub const FEATURES: [&str; 2] = [FEATURE_CCI_CONGESTION, FEATURE_MEMORY_ACCESS];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TreeNode {
    /// Index into `DecisionTree::features`; `None` for a leaf.
    #[serde(default)]
    pub feature: Option<usize>,
    #[serde(default)]
    pub threshold: f64,
    /// Child indices (internal nodes only).
    #[serde(default)]
    pub left: Option<usize>,
    #[serde(default)]
    pub right: Option<usize>,
    /// Training samples per class reaching this node (`value` in the paper's Figure 4).
    #[serde(default)]
    pub value: Vec<f64>,
    #[serde(default)]
    pub entropy: f64,
    #[serde(default)]
    pub samples: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecisionTree {
    pub features: Vec<String>,
    pub classes: Vec<String>,
    /// Node 0 is the root.
    pub nodes: Vec<TreeNode>,
    /// Trained trees compare in fixed point (see [`DecisionTree::predict_counts`]) so that
    /// the exported C (for a kernel: no floating point), Rust and Python agree exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_point_shift: Option<u32>,
}

/// The largest fixed-point shift: q = num << S must fit the u128 (and the exported C's u64)
/// arithmetic for any 32-bit counter ratio. `hetlab.train` reads it from here.
pub const MAX_FIXED_POINT_SHIFT: u32 = 32;

/// The fixed-point shift `hetlab train` gives its trees unless told another: ratios compare as
/// floor(num · 2^24 / den) (docs/training.md). `hetlab.train` reads it from here.
pub const DEFAULT_FIXED_POINT_SHIFT: u32 = 24;

/// The deepest tree a model may hold (trained trees are a few levels deep).
pub const MAX_TREE_DEPTH: usize = 64;

impl DecisionTree {
    /// Checks the shape: valid child indices, features and classes; no cycles (children
    /// always have larger indices than their parent, as scikit-learn writes them).
    pub fn validate(&self) -> Result<(), String> {
        if self.nodes.is_empty() {
            return Err("tree has no nodes".into());
        }
        if self.classes.is_empty() {
            return Err("tree has no classes".into());
        }
        if let Some(shift) = self.fixed_point_shift.filter(|s| *s > MAX_FIXED_POINT_SHIFT) {
            return Err(format!(
                "fixed_point_shift {shift} is above {MAX_FIXED_POINT_SHIFT}; retrain with hetlab train"
            ));
        }
        for (i, node) in self.nodes.iter().enumerate() {
            match (node.feature, node.left, node.right) {
                (None, None, None) => {
                    if node.value.len() != self.classes.len() {
                        return Err(format!(
                            "leaf {i} has {} class counts, expected {}",
                            node.value.len(),
                            self.classes.len()
                        ));
                    }
                }
                (Some(f), Some(l), Some(r)) => {
                    if f >= self.features.len() {
                        return Err(format!("node {i} uses feature {f}, tree has {}", self.features.len()));
                    }
                    if l <= i || r <= i || l >= self.nodes.len() || r >= self.nodes.len() {
                        return Err(format!("node {i} has invalid children {l}, {r}"));
                    }
                    if !node.threshold.is_finite() {
                        return Err(format!("node {i} has a non-finite threshold"));
                    }
                    if self.fixed_point_shift.is_some() && node.threshold < 0.0 {
                        return Err(format!("node {i}: a fixed-point tree needs thresholds >= 0"));
                    }
                }
                _ => return Err(format!("node {i} is neither a leaf nor a full split")),
            }
        }
        // Children have larger indices than their parent, so one pass in index order gives
        // every depth (no recursion: an untrusted file may hold a very deep tree).
        let mut depth = vec![0usize; self.nodes.len()];
        for (i, node) in self.nodes.iter().enumerate() {
            for child in [node.left, node.right].into_iter().flatten() {
                depth[child] = depth[i] + 1;
                if depth[child] > MAX_TREE_DEPTH {
                    return Err(format!("tree is deeper than {MAX_TREE_DEPTH} levels (node {child})"));
                }
            }
        }
        Ok(())
    }

    /// Index of the leaf reached by `features` (values in `self.features` order).
    pub fn leaf(&self, features: &[f64]) -> usize {
        let mut i = 0;
        while let (Some(f), Some(l), Some(r)) = (self.nodes[i].feature, self.nodes[i].left, self.nodes[i].right) {
            i = if features[f] <= self.nodes[i].threshold { l } else { r };
        }
        i
    }

    /// Class name predicted for `features` (majority class of the leaf; ties go to the first).
    pub fn predict(&self, features: &[f64]) -> &str {
        self.class_of(self.leaf(features))
    }

    /// Class predicted for features given as counter ratios `(numerator, denominator)`
    /// (a zero denominator reads as 0). With `fixed_point_shift = S` a node compares
    /// `floor(num · 2^S / den) <= floor(threshold · 2^S)` in integers; otherwise the ratio in
    /// floating point against the threshold.
    pub fn predict_counts(&self, counts: &[(u64, u64)]) -> &str {
        let mut i = 0;
        while let (Some(f), Some(l), Some(r)) = (self.nodes[i].feature, self.nodes[i].left, self.nodes[i].right) {
            let (num, den) = counts[f];
            let left = match self.fixed_point_shift {
                Some(shift) => {
                    let q: u128 = if den == 0 { 0 } else { ((num as u128) << shift) / den as u128 };
                    q <= fixed_threshold(self.nodes[i].threshold, shift)
                }
                None => (if den == 0 { 0.0 } else { num as f64 / den as f64 }) <= self.nodes[i].threshold,
            };
            i = if left { l } else { r };
        }
        self.class_of(i)
    }

    fn class_of(&self, leaf: usize) -> &str {
        let leaf = &self.nodes[leaf];
        let mut best = 0;
        for (k, v) in leaf.value.iter().enumerate() {
            if *v > leaf.value[best] {
                best = k;
            }
        }
        &self.classes[best]
    }
}

/// floor(threshold · 2^shift) as an unsigned integer; negative thresholds never pass (0 is
/// the smallest feature), handled by the caller's validation. Multiplying by a power of two
/// is exact in IEEE doubles, so every language computes the same integer.
pub fn fixed_threshold(threshold: f64, shift: u32) -> u128 {
    let scaled = (threshold * (2f64).powi(shift as i32)).floor();
    if scaled < 0.0 {
        0
    } else {
        scaled as u128
    }
}

/// The anti-snoop model: one tree per cluster, keyed by the cluster's name in the platform.
/// The tree of cluster X reads the features of the *other* cluster (its CCI port's
/// congestion and the memory access of the processes running on it), as in the seed paper §3.2.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AntiSnoopModel {
    pub name: String,
    pub trees: Vec<(String, DecisionTree)>,
}

impl AntiSnoopModel {
    /// Checks the model fits `platform`: one valid tree per cluster, known features only.
    pub fn check_for(&self, platform: &crate::platform::Platform) -> Result<(), String> {
        for (cluster, tree) in &self.trees {
            if platform.cluster_index(cluster).is_none() {
                return Err(format!(
                    "model {} has a tree for cluster '{cluster}', which platform {} does not have; train a model on this platform",
                    self.name, platform.name
                ));
            }
            tree.validate().map_err(|e| format!("model {}: tree for {cluster}: {e}", self.name))?;
            for f in &tree.features {
                if f != FEATURE_CCI_CONGESTION && f != FEATURE_MEMORY_ACCESS {
                    return Err(format!("model {}: tree for {cluster} uses unknown feature '{f}'; known: {FEATURE_CCI_CONGESTION}, {FEATURE_MEMORY_ACCESS}", self.name));
                }
            }
            if tree.classes != CLASSES {
                return Err(format!(
                    "model {}: tree for {cluster} must have classes [{DECREASE}, {INCREASE}]",
                    self.name
                ));
            }
        }
        for c in &platform.clusters {
            if self.tree_for(&c.name).is_none() {
                return Err(format!(
                    "model {} has no tree for cluster '{}' of platform {}",
                    self.name, c.name, platform.name
                ));
            }
        }
        Ok(())
    }

    /// A model from its JSON text (a `model.json` of `hetlab train`); the error reads after
    /// "FILE is ".
    pub fn from_json(json: &str) -> Result<Self, String> {
        serde_json::from_str(json).map_err(|e| format!("not a hetlab model ({e}); train one with `hetlab train`"))
    }

    pub fn tree_for(&self, cluster: &str) -> Option<&DecisionTree> {
        self.trees.iter().find(|(c, _)| c == cluster).map(|(_, t)| t)
    }

    /// The seed paper's Figure 4 trees (text in seed 001), transcribed node by node. They were
    /// trained on the authors' Odroid-XU3 with their PMC scaling, so their thresholds are in the
    /// paper's units, which the simulator reproduces only approximately; a model trained on the
    /// platform at hand (`hetlab train`) replaces them.
    pub fn lctes2020_fig4() -> Self {
        fn split(feature: usize, threshold: f64, left: usize, right: usize, value: [f64; 2], entropy: f64) -> TreeNode {
            TreeNode {
                feature: Some(feature),
                threshold,
                left: Some(left),
                right: Some(right),
                samples: (value[0] + value[1]) as u64,
                value: value.to_vec(),
                entropy,
            }
        }
        fn leaf(value: [f64; 2], entropy: f64) -> TreeNode {
            TreeNode {
                feature: None,
                threshold: 0.0,
                left: None,
                right: None,
                samples: (value[0] + value[1]) as u64,
                value: value.to_vec(),
                entropy,
            }
        }
        let features: Vec<String> = FEATURES.iter().map(|f| f.to_string()).collect();
        let classes: Vec<String> = CLASSES.iter().map(|c| c.to_string()).collect();
        // Figure 4a: the tree managing the big cluster.
        let big = DecisionTree {
            fixed_point_shift: None,
            features: features.clone(),
            classes: classes.clone(),
            nodes: vec![
                split(0, 0.01074, 1, 4, [1365.0, 630.0], 0.89974),
                split(1, 4e-05, 2, 3, [1249.0, 181.0], 0.54797),
                leaf([174.0, 2.0], 0.0897),
                leaf([1075.0, 179.0], 0.59138),
                split(1, 0.00822, 5, 6, [116.0, 449.0], 0.73242),
                leaf([100.0, 83.0], 0.99377),
                leaf([16.0, 366.0], 0.25087),
            ],
        };
        // Figure 4b: the tree managing the LITTLE cluster.
        let little = DecisionTree {
            fixed_point_shift: None,
            features,
            classes,
            nodes: vec![
                split(0, 0.00023, 1, 4, [1080.0, 285.0], 0.73917),
                split(1, 0.05568, 2, 3, [859.0, 75.0], 0.40323),
                leaf([770.0, 75.0], 0.43231),
                leaf([89.0, 0.0], 0.0),
                split(1, 0.00468, 5, 6, [221.0, 210.0], 0.99953),
                leaf([204.0, 60.0], 0.77323),
                leaf([17.0, 150.0], 0.47466),
            ],
        };
        AntiSnoopModel { name: "lctes2020-fig4".into(), trees: vec![("big".into(), big), ("little".into(), little)] }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fig4_trees_are_well_formed_and_match_the_paper_counts() {
        let m = AntiSnoopModel::lctes2020_fig4();
        for (_, t) in &m.trees {
            t.validate().unwrap();
            // every internal node's samples equal the sum of its children's
            for n in &t.nodes {
                if let (Some(l), Some(r)) = (n.left, n.right) {
                    assert_eq!(n.samples, t.nodes[l].samples + t.nodes[r].samples);
                }
            }
        }
        assert_eq!(m.tree_for("big").unwrap().nodes[0].samples, 1995);
        assert_eq!(m.tree_for("little").unwrap().nodes[0].samples, 1365);
    }

    #[test]
    fn fig4_increases_only_with_congestion_and_memory_traffic() {
        let m = AntiSnoopModel::lctes2020_fig4();
        let big = m.tree_for("big").unwrap();
        assert_eq!(big.predict(&[0.02, 0.01]), INCREASE);
        assert_eq!(big.predict(&[0.02, 0.005]), DECREASE);
        assert_eq!(big.predict(&[0.005, 0.5]), DECREASE);
        let little = m.tree_for("little").unwrap();
        assert_eq!(little.predict(&[0.001, 0.01]), INCREASE);
        assert_eq!(little.predict(&[0.001, 0.001]), DECREASE);
        // threshold equality goes left, as in scikit-learn
        assert_eq!(little.predict(&[0.00023, 1.0]), DECREASE);
    }

    #[test]
    fn fixed_point_comparison_is_exact_integer_arithmetic() {
        let mut t = AntiSnoopModel::lctes2020_fig4().trees[0].1.clone();
        t.fixed_point_shift = Some(24);
        // cci threshold 0.01074 -> floor(0.01074 * 2^24 = 180187.4) = 180187
        assert_eq!(fixed_threshold(0.01074, 24), 180187);
        // 180187 / 2^24 exactly: stays left (<=); one more stall per 2^24 reads goes right
        let den = 1u64 << 24;
        assert_eq!(t.predict_counts(&[(180187, den), (1, 1)]), DECREASE);
        assert_eq!(t.predict_counts(&[(180188, den), (1, 1)]), INCREASE);
        // zero denominators read as 0
        assert_eq!(t.predict_counts(&[(5, 0), (5, 0)]), DECREASE);
        // floating-point trees take the plain ratio
        t.fixed_point_shift = None;
        assert_eq!(t.predict_counts(&[(2, 100), (1, 100)]), INCREASE);
    }

    #[test]
    fn malformed_trees_are_rejected() {
        let mut t = AntiSnoopModel::lctes2020_fig4().trees[0].1.clone();
        t.nodes[0].left = Some(0);
        assert!(t.validate().is_err());
        let mut t2 = AntiSnoopModel::lctes2020_fig4().trees[0].1.clone();
        t2.nodes[2].value.pop();
        assert!(t2.validate().is_err());
    }
}
