//! The kernel command line a run boots with (`--kernel`), the options named as the kernel names
//! them:
//!
//! - RCU's (`kernel::rcu`): `rcu_nocbs=CPUS` (RCU_NOCB_CPU, v3.7), `rcu_fast_no_hz`
//!   (CONFIG_RCU_FAST_NO_HZ, a build option, given here as a word) and `rcuo_affinity=CPUS`
//!   (where the rcuo kthreads are pinned: the kernel leaves that to user space, "it is up to
//!   userspace to pin the rcuo kthreads", Documentation/timers/NO_HZ.txt).
//! - `irqaffinity=CPUS`: the default affinity of device interrupts (kernel/irq/irqdesc.c
//!   `irq_affinity_setup`, present in the 3.10 LSK trees); a GIC delivers each interrupt to
//!   the first online CPU of its affinity (`kernel::irq::irq_cpu`). The broadcast timer's
//!   interrupt follows it too (`setup_affinity`: not IRQF_NOBALANCING).
//! - `nohz_full=CPUS` (v3.10): those CPUs are not housekeeping CPUs. What the model moves off
//!   them is what later kernels move (v4.x `housekeeping_*`, named in `kernel::kthreads`): the
//!   hrtimers and timers they arm (`get_nohz_timer_target`), the RCU grace-period kthread
//!   and the unbound kworkers (`housekeeping_affine`). Not modelled: the tick stopped on a
//!   nohz_full CPU that runs one task.
//! - `workqueue.unbound_cpus=CPUS` (v6.5's boot name for v4.0's
//!   /sys/devices/virtual/workqueue/cpumask): where unbound kworkers run.

use super::cpulist;
use super::rcu::RcuOptions;

/// A run's kernel command line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BootOptions {
    pub rcu: RcuOptions,
    /// `irqaffinity=`: the default affinity of device interrupts; `None`: every CPU.
    pub irqaffinity: Option<Vec<usize>>,
    /// `nohz_full=`: CPUs that are not housekeeping CPUs.
    pub nohz_full: Vec<usize>,
    /// `workqueue.unbound_cpus=`: where unbound kworkers run; `None`: every CPU.
    pub wq_unbound_cpus: Option<Vec<usize>>,
}

/// Each option with a CPU list, in `NAMES` order.
const CPULIST_OPTIONS: [&str; 5] = ["rcu_nocbs", "rcuo_affinity", "irqaffinity", "nohz_full", "workqueue.unbound_cpus"];

impl BootOptions {
    pub const NAMES: [&'static str; 6] = [
        "rcu_nocbs=CPUS",
        "rcu_fast_no_hz",
        "rcuo_affinity=CPUS",
        "irqaffinity=CPUS",
        "nohz_full=CPUS",
        "workqueue.unbound_cpus=CPUS",
    ];

    /// Parses `rcu_nocbs=0-1,rcu_fast_no_hz,irqaffinity=2-4` for a platform of `ncpus` CPUs.
    /// A CPU list is the kernel's cpulist (`0-1`, `0,2`, `0-1,3`); it goes on until the next
    /// option name.
    pub fn parse(spec: &str, ncpus: usize) -> Result<BootOptions, String> {
        let mut options = BootOptions::default();
        if spec.trim().is_empty() {
            return Ok(options);
        }
        for (name, values) in split_options(spec)? {
            if name == "rcu_fast_no_hz" {
                if !values.is_empty() {
                    return Err("--kernel: rcu_fast_no_hz takes no value".into());
                }
                options.rcu.fast_no_hz = true;
                continue;
            }
            if !CPULIST_OPTIONS.contains(&name) {
                return Err(format!("--kernel: unknown option '{name}'; known: {}", Self::NAMES.join(", ")));
            }
            if values.is_empty() || values.iter().any(|v| v.is_empty()) {
                return Err(format!("--kernel: {name} needs a CPU list, e.g. {name}=0-1"));
            }
            let cpus = parse_cpulist(name, &values, ncpus)?;
            match name {
                "rcu_nocbs" => options.rcu.nocbs = cpus,
                "rcuo_affinity" => options.rcu.rcuo_affinity = Some(cpus),
                "irqaffinity" => options.irqaffinity = Some(cpus),
                "nohz_full" if cpus.len() == ncpus => {
                    return Err(format!(
                        "--kernel: nohz_full={} leaves no housekeeping CPU; keep at least one out of it",
                        cpulist(&cpus)
                    ))
                }
                "nohz_full" => options.nohz_full = cpus,
                _ => options.wq_unbound_cpus = Some(cpus),
            }
        }
        Ok(options)
    }

    /// The options as `parse` reads them back; "" for none.
    pub fn spec(&self) -> String {
        let mut parts = Vec::new();
        let rcu = self.rcu.spec();
        if !rcu.is_empty() {
            parts.push(rcu);
        }
        if let Some(cpus) = &self.irqaffinity {
            parts.push(format!("irqaffinity={}", cpulist(cpus)));
        }
        if !self.nohz_full.is_empty() {
            parts.push(format!("nohz_full={}", cpulist(&self.nohz_full)));
        }
        if let Some(cpus) = &self.wq_unbound_cpus {
            parts.push(format!("workqueue.unbound_cpus={}", cpulist(cpus)));
        }
        parts.join(",")
    }

    /// `cpu` is a housekeeping CPU (not in `nohz_full=`).
    pub fn housekeeping(&self, cpu: usize) -> bool {
        !self.nohz_full.contains(&cpu)
    }
}

/// `spec` split into (option, cpulist items): an item starting with a digit continues the
/// option before it.
fn split_options(spec: &str) -> Result<Vec<(&str, Vec<&str>)>, String> {
    let mut current: Option<(&str, Vec<&str>)> = None;
    let mut items = Vec::new();
    for token in spec.split(',').map(str::trim) {
        if token.is_empty() {
            return Err(format!("--kernel '{spec}': empty item; give options separated by commas"));
        }
        let continues = token.chars().next().is_some_and(|c| c.is_ascii_digit());
        match (&mut current, continues) {
            (Some((_, cpus)), true) => cpus.push(token),
            (_, true) => return Err(format!("--kernel '{spec}': '{token}' is not an option")),
            (_, false) => {
                items.extend(current.take());
                let (name, value) = token.split_once('=').map_or((token, None), |(n, v)| (n, Some(v)));
                current = Some((name, value.into_iter().collect()));
            }
        }
    }
    items.extend(current);
    Ok(items)
}

fn parse_cpulist(name: &str, items: &[&str], ncpus: usize) -> Result<Vec<usize>, String> {
    let mut cpus = Vec::new();
    for item in items {
        let bad = || format!("--kernel: {name}: '{item}' is not a CPU or a range (e.g. 0-1)");
        let (lo, hi) = match item.split_once('-') {
            Some((a, b)) => (a.parse::<usize>().map_err(|_| bad())?, b.parse::<usize>().map_err(|_| bad())?),
            None => {
                let c = item.parse::<usize>().map_err(|_| bad())?;
                (c, c)
            }
        };
        if lo > hi {
            return Err(bad());
        }
        if hi >= ncpus {
            return Err(format!("--kernel: {name} names cpu{hi}; the platform has cpu0-{}", ncpus - 1));
        }
        cpus.extend(lo..=hi);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<BootOptions, String> {
        BootOptions::parse(s, 5)
    }

    #[test]
    fn options_parse_as_the_kernel_names_them_and_refuse_the_rest() {
        let o = parse("rcu_nocbs=0-1,rcu_fast_no_hz").unwrap();
        assert_eq!((o.rcu.nocbs.clone(), o.rcu.fast_no_hz), (vec![0, 1], true));
        assert_eq!(o.spec(), "rcu_nocbs=0,1,rcu_fast_no_hz");
        assert_eq!(parse("rcu_nocbs=0,2-3").unwrap().rcu.nocbs, vec![0, 2, 3]);
        assert_eq!(parse(&o.spec()).unwrap(), o);
        assert!(parse("rcu_nocbs=0-7").unwrap_err().contains("names cpu7; the platform has cpu0-4"));
        assert!(parse("rcu_nocb=1").unwrap_err().contains("unknown option 'rcu_nocb'; known: rcu_nocbs=CPUS"));
        assert!(parse("rcu_nocbs=").unwrap_err().contains("needs a CPU list"));
        assert!(parse("rcu_nocbs=a").unwrap_err().contains("'a' is not a CPU or a range"));
        assert!(parse("rcu_fast_no_hz=1").unwrap_err().contains("takes no value"));
        assert!(parse("1,rcu_fast_no_hz").unwrap_err().contains("'1' is not an option"));
    }

    #[test]
    fn housekeeping_options_read_back_and_keep_a_housekeeping_cpu() {
        let o =
            parse("rcu_nocbs=0-1,nohz_full=0-1,irqaffinity=2-4,workqueue.unbound_cpus=2-4,rcuo_affinity=2-4").unwrap();
        assert_eq!(o.irqaffinity, Some(vec![2, 3, 4]));
        assert_eq!(o.wq_unbound_cpus, Some(vec![2, 3, 4]));
        assert!(!o.housekeeping(1) && o.housekeeping(2));
        assert_eq!(parse(&o.spec()).unwrap(), o);
        assert!(parse("nohz_full=0-4").unwrap_err().contains("leaves no housekeeping CPU"));
    }
}
