//! A native pointer-chasing microbenchmark with ccbench "caches" semantics (platforms.md §6,
//! reimplemented from that description; no ccbench code).
//!
//! * Elements are 4-byte `u32` indices; the array is page-aligned (4 KB).
//! * `sequential`: every element in order (stride 1 word). `stride-K`: every K-th element in
//!   ascending order (K words, e.g. `stride-16` = one access per 64-byte line). The element
//!   count is rounded up to a multiple of the stride so every lap visits `N / K` elements and
//!   wraps to 0. (ccbench leaves `a[N-1]` unwritten in stride 1 and relies on zeroed memory;
//!   here the last element points back to 0 explicitly.)
//! * `random` (ccbench RunType 0): one element per 256-byte block, visited in random order
//!   *within each 4 KB page*, pages in ascending order ("two-level randomisation"). ccbench
//!   walks the 16 slots of a page with a maximal-length LFSR starting at slot 0, the same order
//!   in every page; this implementation starts each page at slot 0 too but orders the other
//!   slots by a seeded Fisher–Yates shuffle drawn afresh for every page (xorshift64*, seed
//!   `--seed`), so no two pages repeat the order and no stride pattern spans pages. Each page's
//!   last slot points to the next page's first slot; the last page wraps to element 0. N is
//!   rounded up to whole 256-byte blocks.
//! * Timing: one untimed lap to warm caches and TLBs, then chunks of `iterations` dependent
//!   loads (`i = a[i]`) until at least `min_time_s` of CLOCK_MONOTONIC time has passed; the
//!   clock is read only between chunks. The final index goes through `black_box` so the loop
//!   cannot be removed. The result is ns per access, and cycles per access given the CPU's
//!   frequency.
//! * The measurement runs in its own thread pinned to the chosen CPU (sched_setaffinity), so
//!   the caller's affinity is untouched.

use std::alloc::{self, Layout};
use std::time::Instant;

use serde_json::json;

use crate::cpus::pin_current_thread;

pub const PAGE_BYTES: usize = 4096;
pub const PAGE_ELEMENTS: usize = PAGE_BYTES / 4;
/// ccbench's random-mode block ("CACHELINE_IN_BYTES_SZ = 256"): one access per 256 bytes.
pub const RANDOM_BLOCK_ELEMENTS: usize = 256 / 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    Random,
    Sequential,
    /// Stride in 4-byte words (> 1).
    Stride(usize),
}

impl Pattern {
    /// `random` (or ccbench's `0`), `sequential` (`1`), `stride-K` (or `K`).
    pub fn parse(s: &str) -> Result<Pattern, String> {
        let bad = || format!("unknown pattern '{s}'; use random, sequential or stride-K (K words, e.g. stride-16)");
        match s {
            "random" | "0" => Ok(Pattern::Random),
            "sequential" | "1" | "stride-1" => Ok(Pattern::Sequential),
            _ => {
                let k: usize = s.strip_prefix("stride-").unwrap_or(s).parse().map_err(|_| bad())?;
                match k {
                    // ccbench's mode 0 is random; a stride of 0 words steps nowhere
                    0 if s.starts_with("stride-") => Err(bad()),
                    0 => Ok(Pattern::Random),
                    1 => Ok(Pattern::Sequential),
                    k if k <= 1 << 20 => Ok(Pattern::Stride(k)),
                    _ => Err(bad()),
                }
            }
        }
    }

    pub fn name(&self) -> String {
        match self {
            Pattern::Random => "random".into(),
            Pattern::Sequential => "sequential".into(),
            Pattern::Stride(k) => format!("stride-{k}"),
        }
    }

    /// Distance between visited elements, in elements.
    pub fn step(&self) -> usize {
        match self {
            Pattern::Random => RANDOM_BLOCK_ELEMENTS,
            Pattern::Sequential => 1,
            Pattern::Stride(k) => *k,
        }
    }

    /// The element count actually used for a request of `n` (rounded up to whole steps).
    pub fn adjusted_elements(&self, n: usize) -> usize {
        let s = self.step();
        n.max(1).div_ceil(s) * s
    }
}

/// A page-aligned, zeroed `u32` array.
pub struct ChaseArray {
    ptr: *mut u32,
    len: usize,
    layout: Layout,
}

// SAFETY: ChaseArray owns its allocation exclusively, like a Box<[u32]>.
unsafe impl Send for ChaseArray {}

impl ChaseArray {
    fn zeroed(len: usize) -> Result<ChaseArray, String> {
        let bytes = len.checked_mul(4).filter(|&b| b > 0).ok_or("array size overflows")?;
        let layout =
            Layout::from_size_align(bytes.div_ceil(PAGE_BYTES) * PAGE_BYTES, PAGE_BYTES).map_err(|e| e.to_string())?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc::alloc_zeroed(layout) } as *mut u32;
        if ptr.is_null() {
            return Err(format!("cannot allocate {bytes} bytes for the chase"));
        }
        Ok(ChaseArray { ptr, len, layout })
    }

    pub fn as_slice(&self) -> &[u32] {
        // SAFETY: ptr is valid for len initialised (zeroed) u32s while self lives.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    fn as_mut_slice(&mut self) -> &mut [u32] {
        // SAFETY: as above, and &mut self gives exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the address is page-aligned (it always is).
    pub fn page_aligned(&self) -> bool {
        (self.ptr as usize).is_multiple_of(PAGE_BYTES)
    }
}

impl Drop for ChaseArray {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in `zeroed`.
        unsafe { alloc::dealloc(self.ptr as *mut u8, self.layout) }
    }
}

/// xorshift64* (Vigna): small, fast, seedable; plenty for shuffling 16 slots.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (((self.next() >> 32) * n as u64) >> 32) as usize
    }
}

/// Builds the chain for `pattern` over `adjusted_elements(n)` elements. The chain starts at
/// element 0 and visits every `step()`-th element exactly once per lap.
pub fn build(n: usize, pattern: Pattern, seed: u64) -> Result<ChaseArray, String> {
    let n = pattern.adjusted_elements(n);
    if n > u32::MAX as usize {
        return Err(format!("{n} elements do not fit 32-bit indices (max {} = 16 GB)", u32::MAX));
    }
    let mut arr = ChaseArray::zeroed(n)?;
    let a = arr.as_mut_slice();
    match pattern {
        Pattern::Sequential | Pattern::Stride(_) => {
            let s = pattern.step();
            let mut i = 0;
            while i < n {
                let next = i + s;
                a[i] = if next >= n { 0 } else { next as u32 };
                i = next;
            }
        }
        Pattern::Random => {
            let mut rng = Rng::new(seed);
            let mut order: Vec<usize> = Vec::with_capacity(PAGE_ELEMENTS / RANDOM_BLOCK_ELEMENTS);
            let mut prev: Option<usize> = None;
            let mut page = 0;
            while page < n {
                let end = (page + PAGE_ELEMENTS).min(n);
                order.clear();
                order.extend((page..end).step_by(RANDOM_BLOCK_ELEMENTS));
                // slot 0 first, the rest shuffled
                for k in (2..order.len()).rev() {
                    let j = 1 + rng.below(k);
                    order.swap(k, j);
                }
                for &e in &order {
                    if let Some(p) = prev {
                        a[p] = e as u32;
                    }
                    prev = Some(e);
                }
                page = end;
            }
            if let Some(p) = prev {
                a[p] = 0;
            }
        }
    }
    Ok(arr)
}

/// Elements visited per lap.
pub fn lap_len(n_adjusted: usize, pattern: Pattern) -> usize {
    n_adjusted / pattern.step()
}

/// Walks one lap from 0 and checks it visits every `step()`-th element exactly once.
pub fn verify(arr: &ChaseArray, pattern: Pattern) -> Result<(), String> {
    let a = arr.as_slice();
    let s = pattern.step();
    let lap = lap_len(a.len(), pattern);
    let mut seen = vec![false; lap];
    let mut i = 0usize;
    for k in 0..lap {
        if !i.is_multiple_of(s) || i >= a.len() {
            return Err(format!("step {k}: index {i} is not a multiple of {s} within {}", a.len()));
        }
        if std::mem::replace(&mut seen[i / s], true) {
            return Err(format!("step {k}: index {i} visited twice"));
        }
        i = a[i] as usize;
    }
    if i != 0 {
        return Err(format!("after one lap the chain is at {i}, not back at 0"));
    }
    Ok(())
}

/// `n` dependent loads from `start`; returns the last index. Takes a [`ChaseArray`], not any
/// slice: only [`build`] fills one, and it writes only in-bounds indices, so the unchecked
/// loads below are sound for every caller (a slice of arbitrary values would not be).
#[inline(never)]
pub fn walk(arr: &ChaseArray, start: u32, n: u64) -> u32 {
    let a = arr.as_slice();
    let mut i = start as usize;
    assert!(i < a.len());
    let p = a.as_ptr();
    let mut left = n;
    // SAFETY: every element holds an index < a.len() (zeroed() writes 0, build() writes only
    // such indices, and nothing else can write a ChaseArray), and the start index was checked;
    // so every load is in bounds.
    unsafe {
        while left >= 8 {
            i = *p.add(i) as usize;
            i = *p.add(i) as usize;
            i = *p.add(i) as usize;
            i = *p.add(i) as usize;
            i = *p.add(i) as usize;
            i = *p.add(i) as usize;
            i = *p.add(i) as usize;
            i = *p.add(i) as usize;
            left -= 8;
        }
        while left > 0 {
            i = *p.add(i) as usize;
            left -= 1;
        }
    }
    i as u32
}

/// The sizes `hetlabd chase` measures unless told otherwise (bytes, [`parse_sizes`] syntax).
pub const DEFAULT_SIZES: &str = "4K..64M";
/// The patterns it measures unless told otherwise.
pub const DEFAULT_PATTERNS: &str = "random";

#[derive(Debug, Clone)]
pub struct ChaseOptions {
    /// CPU to pin to; `None` leaves the affinity alone.
    pub cpu: Option<usize>,
    /// Minimum measured time per point, s (ccbench: 1.0).
    pub min_time_s: f64,
    /// Dependent loads per timed chunk.
    pub iterations: u64,
    /// The CPU's frequency, for cycles per access.
    pub freq_khz: Option<u32>,
    pub seed: u64,
}

impl Default for ChaseOptions {
    fn default() -> Self {
        ChaseOptions { cpu: None, min_time_s: 0.2, iterations: 1 << 20, freq_khz: None, seed: 1 }
    }
}

/// One measured point.
#[derive(Debug, Clone, PartialEq)]
pub struct ChasePoint {
    pub pattern: String,
    /// Elements in the array (after rounding), ccbench's AppSize.
    pub size_elements: usize,
    pub size_bytes: usize,
    /// Distinct elements visited per lap.
    pub footprint_elements: usize,
    /// Timed dependent loads.
    pub accesses: u64,
    pub time_s: f64,
    pub ns_per_access: f64,
    pub cycles_per_access: Option<f64>,
    pub cpu: Option<usize>,
}

impl ChasePoint {
    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "pattern": self.pattern,
            "size_elements": self.size_elements,
            "size_bytes": self.size_bytes,
            "footprint_elements": self.footprint_elements,
            "accesses": self.accesses,
            "time_s": self.time_s,
            "ns_per_access": self.ns_per_access,
            "cycles_per_access": self.cycles_per_access,
            "cpu": self.cpu,
        })
    }
}

/// The JSON document of a sweep (what `hetlabd chase --json` prints).
pub fn report(opts: &ChaseOptions, points: &[ChasePoint]) -> serde_json::Value {
    json!({
        "benchmark": "chase",
        "cpu": opts.cpu,
        "min_time_s": opts.min_time_s,
        "iterations_per_chunk": opts.iterations,
        "freq_khz": opts.freq_khz,
        "seed": opts.seed,
        "points": points.iter().map(ChasePoint::to_json).collect::<Vec<_>>(),
    })
}

/// Measures one point in the calling thread (no pinning).
pub fn measure(arr: &ChaseArray, pattern: Pattern, opts: &ChaseOptions) -> ChasePoint {
    let a = arr.as_slice();
    let lap = lap_len(a.len(), pattern) as u64;
    let mut idx = walk(arr, 0, lap.max(1)); // warm-up lap
    let chunk = opts.iterations.max(1);
    let mut accesses = 0u64;
    let t0 = Instant::now();
    let elapsed = loop {
        idx = walk(arr, idx, chunk);
        accesses += chunk;
        let e = t0.elapsed().as_secs_f64();
        if e >= opts.min_time_s {
            break e;
        }
    };
    std::hint::black_box(idx);
    let ns = elapsed * 1e9 / accesses as f64;
    ChasePoint {
        pattern: pattern.name(),
        size_elements: a.len(),
        size_bytes: a.len() * 4,
        footprint_elements: lap as usize,
        accesses,
        time_s: elapsed,
        ns_per_access: ns,
        cycles_per_access: opts.freq_khz.map(|f| ns * f64::from(f) * 1e-6),
        cpu: opts.cpu,
    }
}

/// Runs every (pattern, size) point in a thread pinned to `opts.cpu`. `sizes` are in elements.
pub fn sweep(sizes: &[usize], patterns: &[Pattern], opts: &ChaseOptions) -> Result<Vec<ChasePoint>, String> {
    if sizes.is_empty() || patterns.is_empty() {
        return Err("give at least one size and one pattern".into());
    }
    if !(opts.min_time_s.is_finite() && opts.min_time_s >= 0.0) {
        return Err(format!("--min-time must be a non-negative number of seconds, got {}", opts.min_time_s));
    }
    if !(1..=crate::flags::MAX_CHASE_ITERATIONS).contains(&opts.iterations) {
        return Err(format!("--iterations must be from 1 to {}", crate::flags::MAX_CHASE_ITERATIONS));
    }
    let sizes = sizes.to_vec();
    let patterns = patterns.to_vec();
    let opts = opts.clone();
    std::thread::Builder::new()
        .name("hetlab-chase".into())
        .spawn(move || -> Result<Vec<ChasePoint>, String> {
            if let Some(cpu) = opts.cpu {
                pin_current_thread(cpu)?;
            }
            let mut out = Vec::new();
            for &p in &patterns {
                for &n in &sizes {
                    let arr = build(n, p, opts.seed)?;
                    out.push(measure(&arr, p, &opts));
                }
            }
            Ok(out)
        })
        .map_err(|e| format!("cannot start the chase thread: {e}"))?
        .join()
        .map_err(|_| "the chase thread panicked".to_string())?
}

/// The largest chase: u32 indices reach 2^32 elements of 4 bytes.
pub const MAX_SIZE_BYTES: usize = 1 << 34;

/// Parses sizes in bytes: `16K`, `64M`, `1G` (binary units), plain bytes, or a range `A..B`
/// doubling from A to B. Returns bytes.
pub fn parse_sizes(text: &str) -> Result<Vec<usize>, String> {
    fn one(s: &str) -> Result<usize, String> {
        let lower = s.trim().to_ascii_lowercase();
        let t = lower.strip_suffix('b').unwrap_or(&lower);
        let t = t.strip_suffix('i').unwrap_or(t);
        let (num, mult) = match t.as_bytes().last() {
            Some(b'k') => (&t[..t.len() - 1], 1usize << 10),
            Some(b'm') => (&t[..t.len() - 1], 1 << 20),
            Some(b'g') => (&t[..t.len() - 1], 1 << 30),
            _ => (t, 1),
        };
        let v: usize = num.parse().map_err(|_| format!("'{}' is not a size like 16K, 64M or 4096", s.trim()))?;
        let b = v.checked_mul(mult).ok_or_else(|| format!("size '{}' is too large", s.trim()))?;
        if b < 4 {
            return Err(format!("size '{}' is below one 4-byte element", s.trim()));
        }
        if b > MAX_SIZE_BYTES {
            return Err(format!("size '{}' is above 16G, the most 32-bit indices reach", s.trim()));
        }
        Ok(b)
    }
    let mut out: Vec<usize> = Vec::new();
    for item in text.split(',') {
        if item.trim().is_empty() {
            return Err(format!("'{text}' has an empty item; separate sizes by single commas, e.g. 16K,64M"));
        }
        match item.split_once("..") {
            Some((a, b)) => {
                let (mut a, b) = (one(a)?, one(b)?);
                if b < a {
                    return Err(format!("range '{item}' goes down"));
                }
                while a <= b {
                    out.push(a);
                    a *= 2; // a <= 16G: no overflow
                }
            }
            None => out.push(one(item)?),
        }
    }
    if let Some(b) = out.iter().enumerate().find_map(|(i, b)| out[..i].contains(b).then_some(b)) {
        return Err(format!(
            "'{text}' gives {} twice; give each size once (a repeat would measure it twice)",
            human_bytes(*b)
        ));
    }
    Ok(out)
}

/// Sizes in bytes as element counts (4-byte elements, rounded up).
pub fn elements_of(sizes_bytes: &[usize]) -> Vec<usize> {
    sizes_bytes.iter().map(|b| b.div_ceil(4)).collect()
}

/// What `hetlabd chase` prints: a line with the options, then [`table`].
pub fn text_report(opts: &ChaseOptions, points: &[ChasePoint]) -> String {
    format!(
        "chase: cpu {}  min time {} s per point  {} loads per chunk{}\n{}",
        opts.cpu.map_or("any".to_string(), |c| c.to_string()),
        opts.min_time_s,
        opts.iterations,
        opts.freq_khz.map_or(String::new(), |f| format!("  at {f} kHz")),
        table(points)
    )
}

/// "16 KB", "64 MB", "1536 B".
pub fn human_bytes(b: usize) -> String {
    if b >= 1 << 30 && b.is_multiple_of(1 << 30) {
        format!("{} GB", b >> 30)
    } else if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{} MB", b >> 20)
    } else if b >= 1 << 10 && b.is_multiple_of(1 << 10) {
        format!("{} KB", b >> 10)
    } else {
        format!("{b} B")
    }
}

/// The points as a table.
pub fn table(points: &[ChasePoint]) -> String {
    let mut s = format!(
        "{:<11} {:>9} {:>11} {:>13} {:>11} {:>14}\n",
        "pattern", "size", "elements", "accesses", "ns/access", "cycles/access"
    );
    for p in points {
        s += &format!(
            "{:<11} {:>9} {:>11} {:>13} {:>11.3} {:>14}\n",
            p.pattern,
            human_bytes(p.size_bytes),
            p.size_elements,
            p.accesses,
            p.ns_per_access,
            p.cycles_per_access.map_or("-".to_string(), |c| format!("{c:.2}"))
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_builds_a_single_cycle_over_its_elements() {
        for (n, p) in [
            (4096, Pattern::Random),
            (4096 + 100, Pattern::Random), // partial last page
            (64, Pattern::Random),         // one block
            (1000, Pattern::Sequential),
            (1000, Pattern::Stride(16)),
            (100_000, Pattern::Random),
        ] {
            let a = build(n, p, 7).unwrap();
            assert!(a.page_aligned());
            assert_eq!(a.len() % p.step(), 0);
            assert!(a.len() >= n);
            verify(&a, p).unwrap_or_else(|e| panic!("{n} {p:?}: {e}"));
        }
    }

    #[test]
    fn random_order_is_random_within_pages_and_pages_ascend() {
        let n = 8 * PAGE_ELEMENTS;
        let a = build(n, Pattern::Random, 3).unwrap();
        let s = a.as_slice();
        let mut i = 0usize;
        let mut pages = Vec::new();
        let mut orders: Vec<Vec<usize>> = vec![Vec::new(); 8];
        for _ in 0..lap_len(n, Pattern::Random) {
            let page = i / PAGE_ELEMENTS;
            if pages.last() != Some(&page) {
                pages.push(page);
            }
            orders[page].push((i % PAGE_ELEMENTS) / RANDOM_BLOCK_ELEMENTS);
            i = s[i] as usize;
        }
        assert_eq!(pages, (0..8).collect::<Vec<_>>(), "pages in ascending order, each once");
        for o in &orders {
            assert_eq!(o.len(), 16);
            assert_eq!(o[0], 0, "each page starts at its first slot");
        }
        assert_ne!(orders[0], (0..16).collect::<Vec<_>>(), "not sequential");
        assert_ne!(orders[0], orders[1], "a fresh order per page");
        // seeded: same seed, same chain; other seed, other chain
        assert_eq!(build(n, Pattern::Random, 3).unwrap().as_slice(), s);
        assert_ne!(build(n, Pattern::Random, 4).unwrap().as_slice(), s);
    }

    #[test]
    fn patterns_and_sizes_parse() {
        assert_eq!(Pattern::parse("random").unwrap(), Pattern::Random);
        assert_eq!(Pattern::parse("0").unwrap(), Pattern::Random);
        assert!(Pattern::parse("stride-0").unwrap_err().contains("stride-K"), "a stride of no words is no pattern");
        assert_eq!(Pattern::parse("1").unwrap(), Pattern::Sequential);
        assert_eq!(Pattern::parse("stride-16").unwrap(), Pattern::Stride(16));
        assert_eq!(Pattern::Stride(16).name(), "stride-16");
        assert!(Pattern::parse("zigzag").is_err());
        assert_eq!(parse_sizes("16K,64M").unwrap(), vec![16 << 10, 64 << 20]);
        assert_eq!(parse_sizes("4K..32K").unwrap(), vec![4096, 8192, 16384, 32768]);
        assert_eq!(parse_sizes("4096,1KiB").unwrap(), vec![4096, 1024]);
        assert!(parse_sizes("x").is_err());
        assert!(parse_sizes(",,,").unwrap_err().contains("empty item"));
        assert!(parse_sizes("").unwrap_err().contains("empty item"));
        assert!(parse_sizes("4K,4096").unwrap_err().contains("4 KB twice"));
        assert!(parse_sizes("4K..16K,8K").unwrap_err().contains("8 KB twice"));
        assert!(parse_sizes("2").is_err());
        assert!(parse_sizes("4..18446744073709551615").unwrap_err().contains("above 16G"));
        assert_eq!(parse_sizes("8G..16G").unwrap(), vec![8 << 30, 16 << 30]);
        assert_eq!(human_bytes(64 << 20), "64 MB");
    }

    #[test]
    fn measure_reports_time_per_access_and_cycles_given_a_frequency() {
        let opts =
            ChaseOptions { min_time_s: 0.01, iterations: 1 << 14, freq_khz: Some(2_000_000), ..Default::default() };
        let pts = sweep(&[4096], &[Pattern::Random, Pattern::Sequential], &opts).unwrap();
        assert_eq!(pts.len(), 2);
        for p in &pts {
            assert!(p.time_s >= 0.01 && p.accesses % (1 << 14) == 0 && p.accesses > 0);
            assert!((p.ns_per_access - p.time_s * 1e9 / p.accesses as f64).abs() < 1e-9);
            assert!((p.cycles_per_access.unwrap() - 2.0 * p.ns_per_access).abs() < 1e-9);
        }
        assert_eq!(pts[0].footprint_elements, 64);
        assert_eq!(pts[1].footprint_elements, 4096);
        assert!(sweep(&[4096], &[Pattern::Random], &ChaseOptions { cpu: Some(100_000), ..opts }).is_err());
    }
}
