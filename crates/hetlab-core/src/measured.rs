//! Workload profiles measured from real programs: which caches a cache simulator should model
//! for a platform ([`plan`]), and the workload TOML fitted to what it counted ([`workload_toml`]).
//!
//! The simulator (valgrind's callgrind with `--cache-sim=yes`, run by `hetlab profile`) counts
//! one L1I/L1D/LL hierarchy per run, so a miss-ratio curve takes one run per LL size; each run
//! dumps its counters every so many basic blocks ("parts"), which this module groups into
//! phases. A phase's access components are fitted so that the model's own miss ratios
//! (`model::cache::miss_ratios`) match the measured ones at every simulated size.

use crate::model::cache::miss_ratios;
use crate::platform::{CacheSharing, CoreType, Platform};
use crate::workload::{Access, MemProfile, Order, Pattern, MAX_ACCESSES};

/// The caches of one simulator run: (bytes, ways, line bytes) of L1I, L1D and LL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunGeometry {
    pub l1i: [u64; 3],
    pub l1d: [u64; 3],
    pub ll: [u64; 3],
}

/// Counters of one part of one run, as callgrind names its events.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counts {
    pub ir: f64,
    pub dr: f64,
    pub dw: f64,
    pub i1mr: f64,
    pub d1mr: f64,
    pub d1mw: f64,
    pub ilmr: f64,
    pub dlmr: f64,
    pub dlmw: f64,
}

impl Counts {
    fn add(&mut self, o: &Counts) {
        self.ir += o.ir;
        self.dr += o.dr;
        self.dw += o.dw;
        self.i1mr += o.i1mr;
        self.d1mr += o.d1mr;
        self.d1mw += o.d1mw;
        self.ilmr += o.ilmr;
        self.dlmr += o.dlmr;
        self.dlmw += o.dlmw;
    }
    fn refs(&self) -> f64 {
        self.dr + self.dw
    }
    /// L1 misses, instruction side folded in, per data reference.
    fn l1_miss_per_ref(&self) -> f64 {
        (self.i1mr + self.d1mr + self.d1mw) / self.refs().max(1.0)
    }
    /// LL misses, instruction side folded in, per data reference.
    fn ll_miss_per_ref(&self) -> f64 {
        (self.ilmr + self.dlmr + self.dlmw) / self.refs().max(1.0)
    }
    fn mpki(misses: f64, ir: f64) -> f64 {
        1000.0 * misses / ir.max(1.0)
    }
}

/// One simulator run: its LL size and its parts in program order.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub ll_bytes: u64,
    pub parts: Vec<Counts>,
}

/// How the run is cut into phases.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Slicing {
    /// This many phases of about equal instruction counts.
    Count(usize),
    /// Phases of about this many instructions each (the last one takes the rest).
    Instructions(f64),
}

/// Sizes beyond the platform's own L2 sizes that the curve is measured at: half the smallest
/// L2, the sizes between (doubling), and four times the largest (where a program's heap
/// still misses, or not).
pub fn plan(platform: &Platform) -> Result<Vec<RunGeometry>, String> {
    let mut described = Vec::new();
    for (i, cluster) in platform.clusters.iter().enumerate() {
        let core = platform.core_type_of(i);
        let (Some(g), Some(l2_ways)) = (core.caches, cluster.l2_ways) else {
            return Err(format!(
                "platform '{}' does not describe cluster '{}''s cache geometry for profiling; give its core type \
                 'caches = {{ l1i_bytes, l1i_ways, l1i_line_bytes, l1d_ways }}' and the cluster 'l2_ways' \
                 (as data/platforms/exynos5422.toml does)",
                platform.name, cluster.name
            ));
        };
        described.push((cluster.l2_bytes, l2_ways as u64, core, g));
    }
    described.sort_by_key(|d| d.0);
    described.dedup_by_key(|d| d.0);
    let smallest = described[0].0;
    let largest = described[described.len() - 1].0;
    let mut sizes = vec![smallest / 2];
    let mut s = smallest;
    while s <= largest * 4 {
        sizes.push(s);
        s *= 2;
    }
    // Each size uses the geometry of the core type whose L2 is nearest (in doublings).
    Ok(sizes
        .into_iter()
        .map(|size| {
            let (_, ways, core, g) = described
                .iter()
                .min_by(|a, b| {
                    let d = |x: u64| ((x as f64) / (size as f64)).log2().abs();
                    d(a.0).total_cmp(&d(b.0))
                })
                .expect("at least one cluster");
            RunGeometry {
                l1i: [g.l1i_bytes, g.l1i_ways as u64, g.l1i_line_bytes],
                l1d: [core.l1d_bytes, g.l1d_ways as u64, core.line_bytes],
                ll: [size, *ways, core.line_bytes],
            }
        })
        .collect())
}

/// The miss ratio per data reference of each candidate component set, at each measured size:
/// the model's own `miss_ratios` with one component's fraction at 1 and the others at 0 (the
/// others still take their share of the capacity, as the stack-distance view wants).
fn columns(sizes_bytes: &[u64], core: &CoreType, set: &[(u64, Order)]) -> Vec<Vec<f64>> {
    let access = Access::new(set[0].0, Pattern::Random, 4, set[0].1);
    let mut mem = MemProfile::single(1.0, 1.0, access, false, 0.0);
    mem.n_accesses = set.len();
    for (slot, &(ws, order)) in mem.accesses.iter_mut().zip(set) {
        *slot = Access::new(ws, Pattern::Random, 4, order);
    }
    (0..set.len())
        .map(|i| {
            let mut m = mem;
            for (j, a) in m.accesses[..set.len()].iter_mut().enumerate() {
                a.fraction = if i == j { 1.0 } else { 0.0 };
            }
            // the first point is the L1, the others are LL sizes; cachegrind simulates the
            // program alone, so no share of the caches is the system's
            let mut col = vec![miss_ratios(&m, core, sizes_bytes[1] as f64, &CacheSharing::PROGRAM_ALONE).l1];
            col.extend(
                sizes_bytes[1..].iter().map(|&s| miss_ratios(&m, core, s as f64, &CacheSharing::PROGRAM_ALONE).l2),
            );
            col
        })
        .collect()
}

/// Fractions summing to 1 that minimise the weighted squared error `sum w_k (A f - b)_k^2`
/// (eliminating the last fraction, then the normal equations); `None` when singular.
fn constrained_least_squares(cols: &[Vec<f64>], target: &[f64], weight: &[f64]) -> Option<Vec<f64>> {
    let n = cols.len();
    if n == 1 {
        return Some(vec![1.0]);
    }
    // f_n = 1 - sum(f_i): A f - b = sum_i f_i (a_i - a_n) - (b - a_n)
    let last = &cols[n - 1];
    let basis: Vec<Vec<f64>> = cols[..n - 1].iter().map(|c| c.iter().zip(last).map(|(x, y)| x - y).collect()).collect();
    let rhs: Vec<f64> = target.iter().zip(last).map(|(b, y)| b - y).collect();
    let m = n - 1;
    let mut a = vec![vec![0.0; m + 1]; m];
    for i in 0..m {
        for j in 0..m {
            a[i][j] = (0..target.len()).map(|k| weight[k] * basis[i][k] * basis[j][k]).sum();
        }
        a[i][m] = (0..target.len()).map(|k| weight[k] * basis[i][k] * rhs[k]).sum();
    }
    // Gaussian elimination with partial pivoting on an m x m system (m <= 3).
    for c in 0..m {
        let p = (c..m).max_by(|&x, &y| a[x][c].abs().total_cmp(&a[y][c].abs()))?;
        if a[p][c].abs() < 1e-18 {
            return None;
        }
        a.swap(c, p);
        for r in 0..m {
            if r != c {
                let k = a[r][c] / a[c][c];
                let pivot = a[c].clone();
                for (x, y) in a[r][c..].iter_mut().zip(&pivot[c..]) {
                    *x -= k * y;
                }
            }
        }
    }
    let mut f: Vec<f64> = (0..m).map(|i| a[i][m] / a[i][i]).collect();
    f.push(1.0 - f.iter().sum::<f64>());
    Some(f)
}

/// Candidate working sets: 1 KiB to 1 GiB in half-octave steps (rounded to 64 B lines).
fn candidate_working_sets() -> Vec<u64> {
    (0..=40).map(|i| ((1024.0 * 2f64.powf(i as f64 / 2.0) / 64.0).round() as u64) * 64).collect()
}

/// A fitted phase: components (fraction, working set, order) and the fit's predictions.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    pub components: Vec<(f64, u64, Order)>,
    pub predicted: Vec<f64>,
}

/// A candidate fit: its weighted error, components and predictions.
type Scored = (f64, Vec<(f64, u64, Order)>, Vec<f64>);

/// Uniform-random sets kept from the exhaustive search for trying cyclic orders on.
const ORDER_TRIALS: usize = 20;

/// Fits up to [`MAX_ACCESSES`] random components to miss ratios per reference measured at
/// `sizes_bytes` (first the L1, `core`'s L1D size, then LL sizes): every combination of
/// candidate working sets with uniform reuse, fractions by least squares with relative weights;
/// then the best [`ORDER_TRIALS`] sets again with every choice of cyclic laps (a sweep over a set
/// larger than the cache, which LRU misses on every lap). The smallest error wins (fewer
/// components on a tie). Exhaustive and deterministic. The L1 and the sizes in
/// `platform_l2_bytes` weigh ten times the others: the model evaluates a phase there.
pub fn fit_components(sizes_bytes: &[u64], measured: &[f64], core: &CoreType, platform_l2_bytes: &[u64]) -> Fit {
    // relative error, with a floor so that a size with almost no misses does not dominate
    let weight: Vec<f64> = measured
        .iter()
        .zip(sizes_bytes)
        .enumerate()
        .map(|(k, (m, s))| {
            let emphasis = if k == 0 || platform_l2_bytes.contains(s) { 10.0 } else { 1.0 };
            emphasis / m.max(1e-5).powi(2)
        })
        .collect();
    let target: Vec<f64> = measured.iter().map(|m| m.clamp(0.0, 1.0)).collect();
    let evaluate = |set: &[(u64, Order)]| -> Option<(f64, Vec<f64>, Vec<f64>)> {
        let cols = columns(sizes_bytes, core, set);
        let f = constrained_least_squares(&cols, &target, &weight)?;
        if f.iter().any(|&x| !(x > 1e-6 && x <= 1.0)) {
            return None;
        }
        let pred: Vec<f64> = (0..target.len()).map(|k| cols.iter().zip(&f).map(|(c, fi)| c[k] * fi).sum()).collect();
        let err: f64 = (0..target.len()).map(|k| weight[k] * (pred[k] - target[k]).powi(2)).sum();
        Some((err, f, pred))
    };
    let better = |err: f64, n: usize, best: &Option<Scored>| match best {
        None => true,
        Some((e, comps, _)) => err < e * (1.0 - 1e-9) || (err <= *e && n < comps.len()),
    };
    let cands = candidate_working_sets();
    let mut best: Option<Scored> = None;
    let mut kept: Vec<(f64, Vec<u64>)> = Vec::new();
    fn walk(start: usize, chosen: &mut Vec<u64>, cands: &[u64], eval: &mut dyn FnMut(&[u64])) {
        if !chosen.is_empty() {
            eval(chosen);
        }
        if chosen.len() == MAX_ACCESSES {
            return;
        }
        for i in start..cands.len() {
            chosen.push(cands[i]);
            walk(i + 1, chosen, cands, eval);
            chosen.pop();
        }
    }
    let consider = |set: &[(u64, Order)], best: &mut Option<Scored>| {
        let (err, f, pred) = evaluate(set)?;
        if better(err, set.len(), best) {
            *best = Some((err, f.iter().zip(set).map(|(&fi, &(ws, o))| (fi, ws, o)).collect(), pred));
        }
        Some(err)
    };
    walk(0, &mut Vec::with_capacity(MAX_ACCESSES), &cands, &mut |ws: &[u64]| {
        let set: Vec<(u64, Order)> = ws.iter().map(|&w| (w, Order::Uniform)).collect();
        if let Some(err) = consider(&set, &mut best) {
            kept.push((err, ws.to_vec()));
            if kept.len() > 4 * ORDER_TRIALS {
                kept.sort_by(|a, b| a.0.total_cmp(&b.0));
                kept.truncate(ORDER_TRIALS);
            }
        }
    });
    kept.sort_by(|a, b| a.0.total_cmp(&b.0));
    kept.truncate(ORDER_TRIALS);
    for (_, ws) in &kept {
        for mask in 1u32..(1 << ws.len()) {
            let set: Vec<(u64, Order)> = ws
                .iter()
                .enumerate()
                .map(|(i, &w)| (w, if mask & (1 << i) != 0 { Order::Cyclic } else { Order::Uniform }))
                .collect();
            consider(&set, &mut best);
        }
    }
    let (_, mut components, predicted) = best.expect("a single component always fits");
    // fractions rounded for the file, the largest absorbing the rounding so they sum to 1
    for c in components.iter_mut() {
        c.0 = (c.0 * 1e6).round() / 1e6;
    }
    let rest: f64 = 1.0 - components.iter().map(|c| c.0).sum::<f64>();
    if let Some(big) = components.iter_mut().max_by(|a, b| a.0.total_cmp(&b.0)) {
        big.0 = ((big.0 + rest) * 1e6).round() / 1e6;
    }
    Fit { components, predicted }
}

/// Groups parts into phases: index ranges into `parts`.
fn phase_ranges(parts: &[Counts], slicing: Slicing) -> Result<Vec<std::ops::Range<usize>>, String> {
    let total: f64 = parts.iter().map(|p| p.ir).sum();
    if parts.is_empty() || total <= 0.0 {
        return Err("the simulator counted no instructions".into());
    }
    let per_phase = match slicing {
        Slicing::Count(0) => return Err("give at least one slice".into()),
        Slicing::Count(n) => total / n as f64,
        Slicing::Instructions(n) if !(n > 0.0 && n.is_finite()) => {
            return Err(format!("slice instructions must be a positive number, got {n}"))
        }
        Slicing::Instructions(n) => n,
    };
    let mut ranges = Vec::new();
    let (mut start, mut done) = (0, 0.0);
    for (i, p) in parts.iter().enumerate() {
        done += p.ir;
        // cut where the cumulative count reaches the next boundary (to a part's granularity)
        let room = match slicing {
            Slicing::Count(n) => ranges.len() + 1 < n,
            Slicing::Instructions(_) => true,
        };
        if room && done >= per_phase * (ranges.len() + 1) as f64 - 0.5 * p.ir && i + 1 < parts.len() {
            ranges.push(start..i + 1);
            start = i + 1;
        }
    }
    ranges.push(start..parts.len());
    Ok(ranges)
}

/// The counts of `run` over the instructions `[from, to)` of the reference run: the parts whose
/// middle lies there (runs at other sizes cut their parts at the same basic blocks, so this is
/// the same parts when the program is deterministic, and the nearest ones when it is not).
fn counts_between(run: &Run, from: f64, to: f64) -> Counts {
    let mut sum = Counts::default();
    let mut at = 0.0;
    for p in &run.parts {
        let mid = at + p.ir / 2.0;
        if mid >= from && mid < to {
            sum.add(p);
        }
        at += p.ir;
    }
    sum
}

/// What `workload_toml` is given besides the platform.
pub struct Request<'a> {
    pub name: &'a str,
    pub description: &'a str,
    /// Provenance lines for the header (command, tools, host, date), without the `# `.
    pub provenance: &'a [String],
    pub runs: &'a [Run],
    pub slicing: Slicing,
}

fn kib(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MB", bytes >> 20)
    } else {
        format!("{} KB", bytes >> 10)
    }
}

/// The workload TOML of a profiled program: one task, one thread, one phase per slice, each
/// with its measured figures and the fit's in comments.
pub fn workload_toml(platform: &Platform, req: &Request) -> Result<String, String> {
    if req.runs.is_empty() {
        return Err("no simulator runs to fit".into());
    }
    let mut runs: Vec<&Run> = req.runs.iter().collect();
    runs.sort_by_key(|r| r.ll_bytes);
    // the reference core type for the fit: the one with the largest L2 (the reference core of
    // cpi_factor), whose L1D size is the first point of the curve
    let big = (0..platform.clusters.len()).max_by_key(|&i| platform.clusters[i].l2_bytes).expect("a cluster");
    let core = platform.core_type_of(big);
    let mut l2_sizes: Vec<u64> = platform.clusters.iter().map(|c| c.l2_bytes).collect();
    l2_sizes.sort_unstable();
    l2_sizes.dedup();
    for s in &l2_sizes {
        if !runs.iter().any(|r| r.ll_bytes == *s) {
            return Err(format!("no simulator run at the platform's L2 size {}", kib(*s)));
        }
    }
    let reference = runs.iter().find(|r| r.ll_bytes == l2_sizes[l2_sizes.len() - 1]).expect("checked");
    let ranges = phase_ranges(&reference.parts, req.slicing)?;
    let mut sizes = vec![core.l1d_bytes];
    sizes.extend(runs.iter().map(|r| r.ll_bytes));
    let curve = Curve { runs: &runs, sizes: &sizes, l2_sizes: &l2_sizes, core };

    let mut out = String::new();
    write_header(&mut out, req, &curve, reference.ll_bytes);
    let mut from = 0.0;
    for (n, range) in ranges.iter().enumerate() {
        let mut phase = Counts::default();
        reference.parts[range.clone()].iter().for_each(|p| phase.add(p));
        let to = from + phase.ir;
        write_phase(&mut out, &curve, (n + 1, ranges.len()), (from, to), &phase);
        from = to;
    }
    Ok(out)
}

/// What a profile's phases are fitted against: the simulator runs (by LL size), the sizes of
/// the curve (the reference core's L1D, then each run's LL), the platform's L2 sizes (ascending)
/// and the reference core type.
struct Curve<'a> {
    runs: &'a [&'a Run],
    sizes: &'a [u64],
    l2_sizes: &'a [u64],
    core: &'a CoreType,
}

/// `text` as a TOML basic string, quotes included: every quote, backslash and control character
/// escaped (a newline in `--description` or the command wrote a file hetlab could not read).
fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// `text` for a TOML comment: control characters (TOML allows only a tab there; a newline would
/// end the comment) shown escaped.
fn comment_text(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() && c != '\t' { c.escape_default().to_string() } else { c.to_string() })
        .collect()
}

fn line(out: &mut String, s: &str) {
    out.push_str(s);
    out.push('\n');
}

/// The profile's header (provenance, the whole run's figures, how the phases are made) and its
/// task, up to its first phase; `reference_ll` is the LL size of the run the phases are cut from.
fn write_header(out: &mut String, req: &Request, curve: &Curve, reference_ll: u64) {
    let (core, l2_sizes) = (curve.core, curve.l2_sizes);
    line(out, &format!("# MEASURED profile of a real program ({}), written by `hetlab profile`.", req.name));
    line(out, "#");
    for p in req.provenance {
        line(out, &format!("# {}", comment_text(p)));
    }
    line(out, "#");
    let total = curve.runs.iter().map(|r| {
        let mut c = Counts::default();
        r.parts.iter().for_each(|p| c.add(p));
        (r.ll_bytes, c)
    });
    let totals: Vec<(u64, Counts)> = total.collect();
    let whole = &totals.iter().find(|t| t.0 == reference_ll).expect("reference run").1;
    line(
        out,
        &format!(
            "# Whole run: {:.4e} instructions, {:.3} data references per instruction, L1D MPKI {:.2}, L1I MPKI {:.2}.",
            whole.ir,
            whole.refs() / whole.ir.max(1.0),
            Counts::mpki(whole.d1mr + whole.d1mw, whole.ir),
            Counts::mpki(whole.i1mr, whole.ir),
        ),
    );
    for (ll, c) in &totals {
        let mark = if l2_sizes.contains(ll) { "  <- a platform L2 size" } else { "" };
        line(
            out,
            &format!(
                "# MEASURED LL MPKI at {:>6}: {:.3} (data {:.3} + instruction {:.3}){mark}",
                kib(*ll),
                Counts::mpki(c.ilmr + c.dlmr + c.dlmw, c.ir),
                Counts::mpki(c.dlmr + c.dlmw, c.ir),
                Counts::mpki(c.ilmr, c.ir),
            ),
        );
    }
    line(out, "#");
    line(out, "# How the phases are made (crates/hetlab-core/src/measured.rs):");
    line(out, "# - refs_per_instr = (Dr + Dw) / Ir; write_fraction = LL write misses / LL data misses at the");
    line(out, "#   largest platform L2 size (write-allocated lines are dirty; read-missed lines written later");
    line(out, "#   are not counted, so it is a lower bound).");
    line(out, "# - Instruction-fetch misses are folded into the data side (the model has one reference stream):");
    line(out, "#   the measured miss ratio per data reference is (I + D misses) / (Dr + Dw), at the L1 and LL.");
    line(
        out,
        &format!(
            "# - components: up to {MAX_ACCESSES} random working sets (uniform reuse or cyclic laps) fitted so that hetlab's own miss ratios \
             (model::cache::miss_ratios on the {} core type) match the measured ones at {} (L1D) and the LL sizes above, \
             relative error weighted (x10 at the L1 and the platform's L2 sizes).",
            core.name,
            kib(core.l1d_bytes)
        ),
    );
    line(out, "# - cpi and the instruction mix are NOT measured (the simulator counts no cycles or instruction");
    line(out, "#   classes of the target ISA): the grammar's default cpi = 1.0 applies, times each core's cpi_factor.");
    line(out, &format!("name = {}", toml_string(req.name)));
    line(out, &format!("description = {}", toml_string(req.description)));
    line(out, "");
    line(out, "[[tasks]]");
    line(out, &format!("name = {}", toml_string(req.name)));
    line(out, "threads = 1");
}

/// Phase `n_of.0` of `n_of.1`, the instructions `[span.0, span.1)` of the reference run
/// (`phase` its counts there): its measured and fitted MPKI in comments, then its figures and
/// fitted components.
fn write_phase(out: &mut String, curve: &Curve, n_of: (usize, usize), span: (f64, f64), phase: &Counts) {
    let (runs, sizes, l2_sizes) = (curve.runs, curve.sizes, curve.l2_sizes);
    let (from, to) = span;
    let at: Vec<Counts> = runs.iter().map(|r| counts_between(r, from, to)).collect();
    let mut measured = vec![phase.l1_miss_per_ref()];
    measured.extend(at.iter().map(Counts::ll_miss_per_ref));
    let fit = fit_components(sizes, &measured, curve.core, l2_sizes);
    let mpki = |miss_per_ref: f64| 1000.0 * miss_per_ref * phase.refs() / phase.ir.max(1.0);
    line(out, "");
    line(out, "[[tasks.phases]]");
    line(out, &format!("# Phase {} of {}: instructions {:.4e} to {:.4e} of the run.", n_of.0, n_of.1, from, to));
    line(out, "# size        measured MPKI   fitted MPKI (hetlab's model)   (I+D misses; L1 then LL)");
    for (k, s) in sizes.iter().enumerate() {
        let what = if k == 0 { "L1D" } else { "LL " };
        line(out, &format!("# {what} {:>7}   {:>10.3}   {:>10.3}", kib(*s), mpki(measured[k]), mpki(fit.predicted[k])));
    }
    for s in l2_sizes {
        let k = sizes.iter().skip(1).position(|x| x == s).expect("checked") + 1;
        line(
            out,
            &format!(
                "# MEASURED MPKI at {}: {:.3} (the fitted profile gives {:.3})",
                kib(*s),
                mpki(measured[k]),
                mpki(fit.predicted[k])
            ),
        );
    }
    let largest_l2 = l2_sizes[l2_sizes.len() - 1];
    let wf_run = &at[runs.iter().position(|r| r.ll_bytes == largest_l2).expect("checked")];
    let ll_data = wf_run.dlmr + wf_run.dlmw;
    let write_fraction = if ll_data > 0.0 { wf_run.dlmw / ll_data } else { 0.0 };
    line(out, &format!("instructions = {:.6e}", phase.ir));
    line(out, &format!("refs_per_instr = {:.6}", phase.refs() / phase.ir.max(1.0)));
    line(out, &format!("write_fraction = {:.6}", write_fraction));
    line(out, "components = [");
    for (f, ws, order) in &fit.components {
        let order = match order {
            Order::Uniform => "uniform",
            Order::Cyclic => "cyclic",
        };
        line(
            out,
            &format!("  {{ fraction = {f}, working_set_bytes = {ws}, pattern = \"random\", order = \"{order}\" }},"),
        );
    }
    line(out, "]");
}

#[cfg(test)]
mod tests {
    /// Issue 34, class 8: a newline, quote, backslash or control character in the description,
    /// the name or the command gave a TOML hetlab could not read.
    #[test]
    fn strings_and_comments_survive_any_character() {
        for text in ["a\nb", "q\"uote", "back\\slash", "cr\r\x01\x7f", "'''\"\"\"", "tab\tend", "é ü"] {
            let doc = format!("# {}\nx = {}\n", super::comment_text(text), super::toml_string(text));
            let v: toml::Value = toml::from_str(&doc).unwrap_or_else(|e| panic!("{doc:?}: {e}"));
            assert_eq!(v["x"].as_str(), Some(text), "{doc:?}");
        }
    }

    use super::*;
    use crate::workload::Workload;

    fn exynos() -> Platform {
        Platform::builtin("exynos5422").unwrap()
    }

    #[test]
    fn plan_covers_both_l2_sizes_with_their_geometry() {
        let plan = plan(&exynos()).unwrap();
        let sizes: Vec<u64> = plan.iter().map(|g| g.ll[0]).collect();
        assert_eq!(sizes, vec![256 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20, 8 << 20]);
        let at = |s: u64| plan.iter().find(|g| g.ll[0] == s).unwrap();
        assert_eq!(at(512 << 10).ll, [512 << 10, 8, 64]);
        assert_eq!(at(512 << 10).l1i, [32768, 2, 32]);
        assert_eq!(at(512 << 10).l1d, [32768, 4, 64]);
        assert_eq!(at(2 << 20).ll, [2 << 20, 16, 64]);
        assert_eq!(at(2 << 20).l1d, [32768, 2, 64]);
        let tc2 = Platform::builtin("tc2").unwrap();
        let e = super::plan(&tc2).unwrap_err();
        assert!(e.contains("l2_ways") && e.contains("tc2"), "{e}");
    }

    #[test]
    fn fit_recovers_a_curve_the_model_made() {
        let p = exynos();
        let core = p.core_type_of(1);
        let text = "name='x'\n[[tasks]]\nname='t'\n[[tasks.phases]]\ninstructions=10\ncomponents=[{fraction=0.9, working_set_bytes=16384}, {fraction=0.07, working_set_bytes=1048576}, {fraction=0.03, working_set_bytes=8388608}]\n";
        let mem = Workload::from_toml("t.toml", text).unwrap().tasks[0].phases[0].mem;
        let sizes = [32768u64, 262144, 524288, 1 << 20, 2 << 20, 4 << 20, 8 << 20];
        let mut measured = vec![miss_ratios(&mem, core, sizes[1] as f64, &CacheSharing::PROGRAM_ALONE).l1];
        measured.extend(sizes[1..].iter().map(|&s| miss_ratios(&mem, core, s as f64, &CacheSharing::PROGRAM_ALONE).l2));
        let fit = fit_components(&sizes, &measured, core, &[524288, 2 << 20]);
        for (m, f) in measured.iter().zip(&fit.predicted) {
            assert!((m - f).abs() <= 0.02 * m + 1e-6, "measured {measured:?} fitted {:?}", fit.predicted);
        }
        assert!((fit.components.iter().map(|c| c.0).sum::<f64>() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn phases_follow_the_slicing() {
        let part = Counts { ir: 100.0, dr: 30.0, dw: 10.0, ..Default::default() };
        let parts = vec![part; 10];
        assert_eq!(phase_ranges(&parts, Slicing::Count(2)).unwrap(), vec![0..5, 5..10]);
        assert_eq!(phase_ranges(&parts, Slicing::Instructions(300.0)).unwrap(), vec![0..3, 3..6, 6..9, 9..10]);
        assert_eq!(phase_ranges(&parts, Slicing::Count(1)).unwrap(), vec![0..10]);
        // never more phases than asked, however the parts fall
        let uneven = [parts[0], parts[0], Counts { ir: 45.0, ..parts[0] }];
        assert_eq!(phase_ranges(&uneven, Slicing::Count(2)).unwrap(), vec![0..1, 1..3]);
        assert!(phase_ranges(&parts, Slicing::Count(0)).is_err());
        assert!(phase_ranges(&[], Slicing::Count(1)).is_err());
    }

    #[test]
    fn written_profile_loads_and_states_its_mpki() {
        let p = exynos();
        let runs: Vec<Run> = plan(&p)
            .unwrap()
            .iter()
            .map(|g| {
                let misses = if g.ll[0] >= 2 << 20 { 10.0 } else { 200.0 };
                // beyond the largest platform L2 the write share differs: not the one written
                let writes = if g.ll[0] > 2 << 20 { misses } else { misses / 2.0 };
                let part =
                    Counts { ir: 1e6, dr: 3e5, dw: 1e5, d1mr: 2e4, dlmr: misses, dlmw: writes, ..Default::default() };
                Run { ll_bytes: g.ll[0], parts: vec![part; 8] }
            })
            .collect();
        let req = Request {
            name: "measured-x",
            description: "a test",
            provenance: &["command: x".to_string()],
            runs: &runs,
            slicing: Slicing::Count(2),
        };
        let text = workload_toml(&p, &req).unwrap();
        let w = Workload::from_toml("x.toml", &text).unwrap();
        assert_eq!(w.tasks[0].phases.len(), 2);
        assert!(text.contains("# MEASURED MPKI at 512 KB: 0.300"), "{text}");
        assert!(text.contains("# MEASURED MPKI at 2 MB: 0.015"), "{text}");
        assert!(text.contains("write_fraction = 0.333333"), "{text}");
    }
}
