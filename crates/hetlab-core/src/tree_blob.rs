//! The anti-snoop model as the kernel module reads it (`kmod/`, `hetlab export-model --kernel`):
//! a small little-endian blob whose every threshold is an integer test, so that the module's C
//! decides exactly as [`DecisionTree::predict_counts`] does — in fixed point for trained trees,
//! and, for floating-point trees (the paper's Figure 4), exactly as Rust's
//! `num as f64 / den as f64 <= threshold` without a floating-point unit.
//!
//! A split sends the counts `(num, den)` left when `num · 2^k < C · den`, or when the two are
//! equal and `eq_left` is set; `den == 0` reads as the ratio 0 (num 0, den 1). In a float-mode
//! tree num and den are first rounded to doubles (ties to even). The layout is parsed by
//! `kmod/anti_snoop_core.c` (`as_model_parse`); docs/kernel-module.md explains the encoding.

use crate::counters::{FEATURE_CCI_CONGESTION, FEATURE_MEMORY_ACCESS};
use crate::tree::{fixed_threshold, AntiSnoopModel, DecisionTree, INCREASE};

pub const MAGIC: &[u8; 4] = b"HLAS";
pub const VERSION: u16 = 1;
/// The C core's limits (`AS_MAX_*` in anti_snoop_core.h).
pub const MAX_TREES: usize = 4;
pub const MAX_NODES: usize = 255;
pub const MAX_INPUTS: usize = 4;
pub const CLUSTER_NAME_LEN: usize = 16;
pub const MODEL_NAME_LEN: usize = 32;

/// One split's integer test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntegerTest {
    /// k: the power of two num is scaled by, 0..=127.
    pub shift: u8,
    /// C, below 2^127.
    pub c: u128,
    /// Equality goes left.
    pub eq_left: bool,
}

/// `floor(num · 2^S / den) <= fixed_threshold(t, S)` (fixed point, S <= 32) as an integer test:
/// q <= T  ⇔  num · 2^S < (T + 1) · den. q never reaches 2^96, so a larger T always goes left.
pub fn fixed_point_test(threshold: f64, shift: u32) -> IntegerTest {
    let t = fixed_threshold(threshold, shift);
    let c = if t >= 1u128 << 96 { 1u128 << 97 } else { t + 1 };
    IntegerTest { shift: shift as u8, c, eq_left: false }
}

/// `fl(a / b) <= t` for doubles a, b >= 0 (b > 0) and finite t, as an integer test on a and b:
/// the quotient rounds to at most t exactly when a / b lies below the midpoint between t and
/// the next double, or on it when rounding to even picks t.
pub fn float_test(t: f64) -> IntegerTest {
    // a / b is 0 or at least 2^-64 and at most 2^64
    const NEVER_LEFT: IntegerTest = IntegerTest { shift: 0, c: 0, eq_left: false };
    const ONLY_ZERO: IntegerTest = IntegerTest { shift: 64, c: 1, eq_left: false };
    const ALWAYS_LEFT: IntegerTest = IntegerTest { shift: 0, c: 1u128 << 66, eq_left: false };
    if t == 0.0 {
        return ONLY_ZERO; // 0 <= ±0 holds, any positive quotient does not
    }
    if t < 0.0 {
        return NEVER_LEFT;
    }
    let bits = t.to_bits();
    let exp_field = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    // t = m · 2^e exactly; the next double is (m + 1) · 2^e
    let (m, e) = if exp_field == 0 { (frac, -1074) } else { (frac | (1u64 << 52), exp_field - 1075) };
    let mid = u128::from(2 * m + 1); // the midpoint is (2m + 1) · 2^(e - 1)
    let x = e - 1;
    let eq_left = m % 2 == 0;
    if x >= 0 {
        if x > 64 {
            return ALWAYS_LEFT; // the midpoint is above 2^65
        }
        IntegerTest { shift: 0, c: mid << x, eq_left }
    } else if -x > 127 {
        ONLY_ZERO // the midpoint is below 2^-64
    } else {
        IntegerTest { shift: (-x) as u8, c: mid, eq_left }
    }
}

fn feature_code(name: &str) -> Option<u8> {
    match name {
        FEATURE_CCI_CONGESTION => Some(0),
        FEATURE_MEMORY_ACCESS => Some(1),
        _ => None,
    }
}

/// The class of a leaf as `predict_counts` reads it: the largest count, ties to the first.
fn leaf_increases(tree: &DecisionTree, leaf: usize) -> bool {
    let v = &tree.nodes[leaf].value;
    let mut best = 0;
    for (k, x) in v.iter().enumerate() {
        if *x > v[best] {
            best = k;
        }
    }
    tree.classes[best] == INCREASE
}

fn padded(out: &mut Vec<u8>, name: &str, len: usize) {
    let mut bytes = name.as_bytes().to_vec();
    bytes.resize(len, 0);
    out.extend_from_slice(&bytes);
}

fn tree_bytes(cluster: &str, tree: &DecisionTree, out: &mut Vec<u8>) -> Result<(), String> {
    tree.validate()?;
    if cluster.is_empty() || cluster.len() > CLUSTER_NAME_LEN || cluster.contains('\0') {
        return Err(format!("the cluster name must be 1 to {CLUSTER_NAME_LEN} bytes"));
    }
    if tree.features.len() > MAX_INPUTS {
        return Err(format!("it reads {} features; the kernel module takes at most {MAX_INPUTS}", tree.features.len()));
    }
    if tree.nodes.len() > MAX_NODES {
        return Err(format!("it has {} nodes; the kernel module takes at most {MAX_NODES}", tree.nodes.len()));
    }
    let mut codes = [0u8; MAX_INPUTS];
    for (i, f) in tree.features.iter().enumerate() {
        codes[i] = feature_code(f).ok_or_else(|| {
            format!("it reads '{f}'; the kernel module measures {FEATURE_CCI_CONGESTION} and {FEATURE_MEMORY_ACCESS}")
        })?;
    }
    padded(out, cluster, CLUSTER_NAME_LEN);
    out.push(tree.features.len() as u8);
    out.extend_from_slice(&codes);
    out.push(u8::from(tree.fixed_point_shift.is_none()));
    out.extend_from_slice(&(tree.nodes.len() as u16).to_le_bytes());
    for (i, n) in tree.nodes.iter().enumerate() {
        let (leaf, feature, test, left, right) = match (n.feature, n.left, n.right) {
            (Some(f), Some(l), Some(r)) => {
                let test = match tree.fixed_point_shift {
                    Some(s) => fixed_point_test(n.threshold, s),
                    None => float_test(n.threshold),
                };
                (false, f as u8, test, l as u16, r as u16)
            }
            _ => (true, 0, IntegerTest { shift: 0, c: 0, eq_left: false }, 0, 0),
        };
        out.extend_from_slice(&[
            u8::from(leaf),
            feature,
            test.shift,
            u8::from(test.eq_left),
            u8::from(leaf && leaf_increases(tree, i)),
        ]);
        out.extend_from_slice(&left.to_le_bytes());
        out.extend_from_slice(&right.to_le_bytes());
        out.extend_from_slice(&(test.c as u64).to_le_bytes());
        out.extend_from_slice(&((test.c >> 64) as u64).to_le_bytes());
    }
    Ok(())
}

/// The blob of `model` (every tree, in the model's order); an error names the tree and what
/// the kernel module cannot take.
pub fn kernel_blob(model: &AntiSnoopModel) -> Result<Vec<u8>, String> {
    if model.trees.is_empty() || model.trees.len() > MAX_TREES {
        return Err(format!(
            "model {} has {} trees; the kernel module takes 1 to {MAX_TREES}",
            model.name,
            model.trees.len()
        ));
    }
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(model.trees.len() as u16).to_le_bytes());
    // the name is for messages only: cut to its first MODEL_NAME_LEN bytes on a char boundary
    let mut name = model.name.replace('\0', " ");
    while name.len() > MODEL_NAME_LEN {
        name.pop();
    }
    padded(&mut out, &name, MODEL_NAME_LEN);
    for (cluster, tree) in &model.trees {
        tree_bytes(cluster, tree, &mut out)
            .map_err(|e| format!("model {}: the tree for {cluster} cannot go to the kernel module: {e}", model.name))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test a split encodes, evaluated in wide integers (the C core's 192-bit arithmetic).
    fn goes_left(test: IntegerTest, float_mode: bool, num: u64, den: u64) -> bool {
        let (num, den) = if den == 0 { (0, 1) } else { (num, den) };
        // a double's value as (mantissa, exponent), as the C core rounds it
        let as_double = |x: u64| -> (u128, u32) {
            if !float_mode {
                return (u128::from(x), 0);
            }
            let d = x as f64;
            if d < 9_007_199_254_740_992.0 {
                (d as u128, 0)
            } else {
                let e = (d.to_bits() >> 52) as u32 - 1075;
                ((d.to_bits() & ((1 << 52) - 1) | (1 << 52)) as u128, e)
            }
        };
        let (ma, ea) = as_double(num);
        let (mb, eb) = as_double(den);
        // ma · 2^(ea + k) against C · mb · 2^eb, both below 2^203
        let lhs = num_bigint(ma, ea + u32::from(test.shift), 1);
        let rhs = num_bigint(mb, eb, test.c);
        lhs < rhs || (lhs == rhs && test.eq_left)
    }

    /// m · c · 2^s (below 2^320) as five u64 limbs, most significant first, so that arrays
    /// compare as the numbers do.
    fn num_bigint(m: u128, s: u32, c: u128) -> [u64; 5] {
        let mut limbs = [0u64; 5];
        // m · c, schoolbook on 64-bit halves
        let (m0, m1) = (m as u64, (m >> 64) as u64);
        let (c0, c1) = (c as u64, (c >> 64) as u64);
        let mut acc = [0u128; 5];
        for (i, a) in [m0, m1].iter().enumerate() {
            for (j, b) in [c0, c1].iter().enumerate() {
                let p = u128::from(*a) * u128::from(*b);
                acc[i + j] += p & u128::from(u64::MAX);
                acc[i + j + 1] += p >> 64;
            }
        }
        let mut carry = 0u128;
        for k in 0..5 {
            let v = acc[k] + carry;
            limbs[k] = v as u64;
            carry = v >> 64;
        }
        // << s
        let (w, b) = ((s / 64) as usize, s % 64);
        let mut out = [0u64; 5];
        for k in (0..5).rev() {
            if k >= w {
                out[k] = limbs[k - w] << b;
                if b > 0 && k > w {
                    out[k] |= limbs[k - w - 1] >> (64 - b);
                }
            }
        }
        out.reverse();
        out
    }

    #[test]
    fn float_tests_decide_as_f64_division() {
        let thresholds = [0.01074, 4e-05, 0.00822, 0.00023, 0.05568, 0.00468, 1.0, 0.5, 3.0, 1e-30, 1e30, 0.0, -1.0];
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for &t in &thresholds {
            let test = float_test(t);
            for i in 0..20_000u64 {
                let den = match i % 4 {
                    0 => next() % 1_000_000 + 1,
                    1 => next() >> (next() % 64),
                    2 => (next() >> 8) | (1 << 55),
                    _ => next(),
                };
                // numerators straddling t · den, and random ones
                let near = (t.max(0.0) * den as f64) as u64;
                let num = match i % 3 {
                    0 => near.wrapping_add(next() % 3).wrapping_sub(1),
                    1 => next() >> (next() % 64),
                    _ => near,
                };
                let want = (if den == 0 { 0.0 } else { num as f64 / den as f64 }) <= t;
                assert_eq!(goes_left(test, true, num, den), want, "t={t} num={num} den={den}");
            }
        }
    }

    #[test]
    fn fixed_point_tests_decide_as_the_integer_quotient() {
        for (t, s) in [(0.01074, 24u32), (0.3, 24), (0.0, 24), (1e12, 32), (2.5, 0)] {
            let test = fixed_point_test(t, s);
            let th = fixed_threshold(t, s);
            for (num, den) in [(180187u64, 1u64 << 24), (180188, 1 << 24), (5, 0), (u64::MAX, 1), (1, u64::MAX), (7, 3)]
            {
                let q = if den == 0 { 0 } else { (u128::from(num) << s) / u128::from(den) };
                assert_eq!(goes_left(test, false, num, den), q <= th, "t={t} s={s} num={num} den={den}");
            }
        }
    }

    #[test]
    fn blobs_have_the_documented_layout_and_refuse_what_the_module_cannot_take() {
        let m = AntiSnoopModel::lctes2020_fig4();
        let b = kernel_blob(&m).unwrap();
        let tree_bytes = |t: &DecisionTree| 16 + 1 + 4 + 1 + 2 + 25 * t.nodes.len();
        assert_eq!(&b[..4], b"HLAS");
        assert_eq!(b.len(), 4 + 2 + 2 + 32 + m.trees.iter().map(|(_, t)| tree_bytes(t)).sum::<usize>());
        assert_eq!(&b[40..43], b"big");
        let mut bad = m.clone();
        bad.trees[0].1.features[0] = "ipc".into();
        assert!(kernel_blob(&bad).unwrap_err().contains("reads 'ipc'"));
        let mut long = m;
        long.trees[0].0 = "a-cluster-name-longer-than-16".into();
        assert!(kernel_blob(&long).unwrap_err().contains("1 to 16 bytes"));
    }
}
