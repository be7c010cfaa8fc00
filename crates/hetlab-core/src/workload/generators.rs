//! Workloads named by a spec, `name:key=value,...` (`Workload::from_spec`): the generators
//! (`ccbench`, `periodic`, `cpu-bound`), and the built-in TOML workloads (data/workloads/) with
//! the parameters of those that have parallel phases.

use super::{
    check_mem, within, Access, Allocation, MemProfile, Order, Pattern, Phase, PhaseKind, Task, ThreadCount, Workload,
    BUILTIN_WORKLOADS, CCBENCH_MAX_ELEMENTS, MAX_INSTRUCTIONS, MAX_PHASE_US, MAX_WORKING_SET_BYTES,
};

impl Workload {
    /// A built-in TOML workload or a generator spec (`ccbench:size=...`).
    pub fn from_spec(spec: &str) -> Result<Workload, String> {
        let (name, args) = spec.split_once(':').unwrap_or((spec, ""));
        let mut kv = Vec::new();
        for item in args.split(',').filter(|s| !s.is_empty()) {
            let (k, v) =
                item.split_once('=').ok_or_else(|| format!("workload '{name}': expected key=value, got '{item}'"))?;
            kv.push((k.trim().to_string(), v.trim().to_string()));
        }
        let generated = match name {
            "ccbench" => ccbench(&kv),
            "periodic" => periodic(&kv),
            "cpu-bound" => cpu_bound(&kv),
            _ => return Self::from_builtin(name, &kv),
        }?;
        generated.check_threads(name)?;
        Ok(generated)
    }

    fn from_builtin(name: &str, kv: &[(String, String)]) -> Result<Workload, String> {
        let workload = match BUILTIN_WORKLOADS.iter().find(|(n, _)| *n == name) {
            Some((n, text)) => Workload::from_toml(&format!("{n}.toml (built-in)"), text)?.with_parallel(kv)?,
            None => {
                return Err(format!(
                    "unknown workload '{name}'; generators: ccbench, periodic, cpu-bound; built-in: {} (or give a path to a .toml file)",
                    BUILTIN_WORKLOADS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
                ))
            }
        };
        workload.check_threads(name)?;
        Ok(workload)
    }

    /// A built-in workload's parameters (`name:threads=4,allocation=static`), for workloads
    /// with parallel phases: `threads` sets the thread count of every task that has one, `cpus`
    /// one thread per CPU the task may use when the run starts (a fork-join program that starts
    /// as many workers as it sees CPUs, as Sandra does), `allocation` switches their
    /// dynamic pools to a static split (`static`) or keeps them (`dynamic`).
    pub fn with_parallel(mut self, kv: &[(String, String)]) -> Result<Workload, String> {
        if kv.is_empty() {
            return Ok(self);
        }
        let name = self.name.clone();
        let parallel = |t: &Task| t.phases.iter().any(|p| matches!(p.kind, PhaseKind::Parallel { .. }));
        if !self.tasks.iter().any(parallel) {
            return Err(format!("workload '{name}' takes no parameters (it has no parallel phase)"));
        }
        let p = Params::new("parallel workload", &["threads", "allocation"], kv)?;
        if let Some(v) = p.raw("threads") {
            // cpus: one per CPU the task may use, resolved when a run starts (engine set-up).
            let parsed = match v {
                "cpus" => Some(ThreadCount::PerAllowedCpu),
                _ => v
                    .parse::<u32>()
                    .ok()
                    .filter(|n| (1..=crate::platform::MAX_CPUS as u32).contains(n))
                    .map(ThreadCount::Fixed),
            };
            let threads = parsed.ok_or_else(|| {
                format!("workload '{name}': threads must be 1 to {} or cpus, got '{v}'", crate::platform::MAX_CPUS)
            })?;
            for t in self.tasks.iter_mut().filter(|t| parallel(t)) {
                t.threads = threads;
            }
        }
        match p.raw("allocation") {
            None | Some("dynamic") => {
                let static_only = self
                    .tasks
                    .iter()
                    .flat_map(|t| &t.phases)
                    .any(|ph| matches!(ph.kind, PhaseKind::Parallel { allocation: Allocation::Static, .. }));
                if p.raw("allocation").is_some() && static_only {
                    return Err(format!(
                        "workload '{name}': allocation=dynamic needs its parallel phases to give chunk_instructions"
                    ));
                }
            }
            Some("static") => {
                for ph in self.tasks.iter_mut().flat_map(|t| t.phases.iter_mut()) {
                    if let PhaseKind::Parallel { allocation, .. } = &mut ph.kind {
                        *allocation = Allocation::Static;
                    }
                }
            }
            Some(other) => {
                return Err(format!("workload '{name}': allocation must be static or dynamic, got '{other}'"))
            }
        }
        Ok(self)
    }
}

/// Generator parameters: checks every key is known and parses values.
struct Params<'a> {
    generator: &'static str,
    known: &'static [&'static str],
    kv: &'a [(String, String)],
}

impl<'a> Params<'a> {
    fn new(
        generator: &'static str,
        known: &'static [&'static str],
        kv: &'a [(String, String)],
    ) -> Result<Self, String> {
        for (k, _) in kv {
            if !known.contains(&k.as_str()) {
                return Err(format!("unknown workload key '{k}' for {generator}; known keys: {}", known.join(", ")));
            }
        }
        Ok(Params { generator, known, kv })
    }
    fn raw(&self, key: &str) -> Option<&str> {
        debug_assert!(self.known.contains(&key));
        self.kv.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
    /// [`Params::num`] at most `max` (and above 0 unless `zero_ok`), as [`within`] says.
    fn bounded(&self, key: &str, default: f64, zero_ok: bool, max: f64) -> Result<f64, String> {
        within(&format!("{}: {key}", self.generator), self.num(key, default)?, zero_ok, max)
    }

    fn num(&self, key: &str, default: f64) -> Result<f64, String> {
        match self.raw(key) {
            None => Ok(default),
            Some(v) => v
                .replace('_', "")
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| format!("{}: {key} must be a non-negative number, got '{v}'", self.generator)),
        }
    }
}

/// ccbench `caches` (shared/reference/platforms.md §6): a single dependent-load pointer chase
/// over `size` 4-byte elements. `pattern`: 0/random = one word per 256 B block, randomised
/// within each 4 KB page, pages in order; 1/sequential = word by word; 16/stride-16 = one word
/// per 64 B line; any other k = stride of k words. `iterations` = number of dependent loads.
fn ccbench(kv: &[(String, String)]) -> Result<Workload, String> {
    let p = Params::new("ccbench", &["size", "pattern", "iterations", "threads"], kv)?;
    let size = p.num("size", 1048576.0)?;
    if !(4.0..=CCBENCH_MAX_ELEMENTS as f64).contains(&size) {
        return Err(format!("ccbench: size must be 4..={CCBENCH_MAX_ELEMENTS} elements (4-byte), got {size}"));
    }
    let size = size as u64;
    let iterations = p.bounded("iterations", 10_000_000.0, false, MAX_INSTRUCTIONS)?;
    if iterations < 1.0 {
        return Err("ccbench: iterations must be at least 1".into());
    }
    let pattern_arg = p.raw("pattern").unwrap_or("random");
    // Stride in 32-bit words; ccbench's random mode steps by CACHELINE_IN_BYTES_SZ = 256 B.
    let (pattern, stride_words, label) = match pattern_arg {
        "0" | "random" => (Pattern::Random, 64u64, "random".to_string()),
        "1" | "sequential" => (Pattern::Sequential, 1, "sequential".to_string()),
        other => {
            let k = other.strip_prefix("stride-").unwrap_or(other);
            // A stride beyond the array is what ccbench runs too: N rounds up to 2 x stride
            // (the seed paper's 4-element runs use all three patterns).
            let k: u64 = k.parse().ok().filter(|k| (1..=CCBENCH_MAX_ELEMENTS).contains(k)).ok_or_else(|| {
                format!(
                    "ccbench: pattern must be random|0, sequential|1, stride-K or K with 1 <= K <= \
                     {CCBENCH_MAX_ELEMENTS}, got '{other}'"
                )
            })?;
            (if k == 1 { Pattern::Sequential } else { Pattern::Strided }, k, format!("stride-{k}"))
        }
    };
    // ccbench rounds N up to a multiple of 2 x stride.
    let n = size.div_ceil(2 * stride_words) * 2 * stride_words;
    let threads = p.num("threads", 1.0)? as u32;
    // The loop's index arithmetic and branch issue in the shadow of the load: the load-to-use
    // latency of each level is the whole cost of an iteration (cpi 0, one reference each).
    let access = Access::new(n * 4, pattern, stride_words * 4, Order::Cyclic);
    // random mode randomises within each page and takes the pages in order
    let access = if pattern == Pattern::Random { access.in_page_runs() } else { access };
    let mem = MemProfile::single(0.0, 1.0, access, true, 0.0);
    let phase = Phase { mem, ..Phase::new(PhaseKind::Compute { instructions: iterations }) };
    let task = Task { threads: ThreadCount::Fixed(threads.max(1)), ..Task::new("ccbench", vec![phase]) };
    Ok(one_task(format!("ccbench-{n}-{label}"), task))
}

/// A periodic run/sleep task (rt-app style): `run_us` of reference work every `period_us`.
fn periodic(kv: &[(String, String)]) -> Result<Workload, String> {
    let p =
        Params::new("periodic", &["run_us", "period_us", "duration_us", "threads", "working_set_bytes", "nice"], kv)?;
    let run_us = p.bounded("run_us", 2000.0, false, MAX_PHASE_US)?;
    let period_us = p.bounded("period_us", 16000.0, false, MAX_PHASE_US)? as u64;
    let duration_us = p.bounded("duration_us", 2_000_000.0, true, MAX_PHASE_US)? as u64;
    if period_us == 0 {
        return Err("periodic: period_us must be at least 1".into());
    }
    let ws = p.bounded("working_set_bytes", 131072.0, false, MAX_WORKING_SET_BYTES as f64)? as u64;
    let mem = MemProfile::single(1.2, 0.3, Access::new(ws, Pattern::Random, 64, Order::Uniform), false, 0.1);
    check_mem("periodic", &mem)?;
    let kind = PhaseKind::Periodic { run_us, period_us, count: (duration_us / period_us).max(1) };
    let task = Task {
        threads: ThreadCount::Fixed((p.num("threads", 1.0)? as u32).max(1)),
        nice: p.num("nice", 0.0)? as i32,
        ..Task::new("periodic", vec![Phase { mem, ..Phase::new(kind) }])
    };
    Ok(one_task(format!("periodic-{run_us}us-{period_us}us"), task))
}

/// A multi-threaded CPU-bound task: `instructions` per thread, small working set.
fn cpu_bound(kv: &[(String, String)]) -> Result<Workload, String> {
    let p = Params::new("cpu-bound", &["threads", "instructions", "cpi", "working_set_bytes"], kv)?;
    let ws = p.bounded("working_set_bytes", 16384.0, false, MAX_WORKING_SET_BYTES as f64)? as u64;
    let mem = MemProfile::single(
        p.num("cpi", 0.9)?,
        0.25,
        Access::new(ws, Pattern::Sequential, 4, Order::Cyclic),
        false,
        0.1,
    );
    check_mem("cpu-bound", &mem)?;
    let instructions = p.bounded("instructions", 2e9, false, MAX_INSTRUCTIONS)?;
    let phase = Phase { mem, ..Phase::new(PhaseKind::Compute { instructions }) };
    let task = Task {
        threads: ThreadCount::Fixed((p.num("threads", 4.0)? as u32).max(1)),
        ..Task::new("cpu-bound", vec![phase])
    };
    Ok(one_task("cpu-bound".into(), task))
}

/// A generated workload of one task.
fn one_task(name: String, task: Task) -> Workload {
    Workload {
        name,
        tasks: vec![task],
        duration_us: None,
        reference_cpu: None,
        taskgroups: Vec::new(),
        irqs: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Pattern, PhaseKind};

    #[test]
    fn ccbench_semantics() {
        let w = Workload::from_spec("ccbench:size=1048576,pattern=random,iterations=1000").unwrap();
        let ph = &w.tasks[0].phases[0];
        assert_eq!(ph.mem.working_set_bytes(), 4 * 1048576);
        assert_eq!(ph.mem.accesses()[0].stride_bytes, 256);
        assert!(ph.mem.dependent_loads);
        assert_eq!(ph.kind, PhaseKind::Compute { instructions: 1000.0 });
        // size rounds up to a multiple of 2 x stride (stride 16 words -> 32)
        let w = Workload::from_spec("ccbench:size=1000,pattern=16").unwrap();
        assert_eq!(w.tasks[0].phases[0].mem.working_set_bytes(), 4 * 1024);
        assert_eq!(w.tasks[0].phases[0].mem.accesses()[0].stride_bytes, 64);
        let w = Workload::from_spec("ccbench:size=8192,pattern=1").unwrap();
        assert_eq!(w.tasks[0].phases[0].mem.accesses()[0].pattern, Pattern::Sequential);
    }

    #[test]
    fn unknown_keys_and_names_are_errors() {
        let e = Workload::from_spec("ccbench:sise=10").unwrap_err();
        assert!(e.contains("unknown workload key 'sise'") && e.contains("size"), "{e}");
        let e = Workload::from_spec("ccbench:pattern=zigzag").unwrap_err();
        assert!(e.contains("pattern"), "{e}");
        let e = Workload::from_spec("nosuch").unwrap_err();
        assert!(e.contains("unknown workload 'nosuch'"), "{e}");
    }
}
