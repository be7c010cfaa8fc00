//! `smp`: vanilla CFS as Linux 3.10 runs it on a big.LITTLE SoC that tells it nothing about
//! capacities (seed 003's "b.L vanilla": one MC domain over all CPUs, every CPU alike). A waking
//! or new task goes where `select_task_rq_fair` puts it (`select`), and the CPUs balance load
//! within the domain: when going idle, periodically at their tick, and through the idle load
//! balancer for the CPUs that do not tick (`balance`). Nothing looks at a task's tracked load
//! or a CPU's speed: which cluster a task lands on follows from where CPUs happen to be idle.

use super::balance::{Balancer, IdleBalance};
use super::domains::{Domains, Layout, SD_MC_INIT};
use super::select::select_task_rq_fair;
use super::{eevdf, Kernel, Migration, Placement, PlacementDescriptor, SchedPolicy, SchedView, WakeKind};
use crate::governor::tunables::Values;
use crate::platform::Platform;

pub struct Smp {
    domains: Option<Domains>,
    balancer: Balancer,
    /// The fair class's rules: 3.10's CFS, or (`eevdf`) 6.12's EEVDF with these features.
    eevdf: Option<eevdf::Features>,
}

/// `smp` as the registry lists it.
pub const DESCRIPTOR: PlacementDescriptor = PlacementDescriptor {
    policy: SchedPolicy::Smp,
    name: "smp",
    summary: "vanilla CFS (Linux 3.10), capacity-blind: one MC domain over all CPUs",
    tunables: Vec::new,
    build,
};

fn build(platform: &Platform, _: &Values) -> Result<Box<dyn Placement>, String> {
    Ok(Box::new(Smp::new(platform)))
}

/// `eevdf` as the registry lists it: `smp`'s placement over Linux 6.12's fair class.
pub const EEVDF_DESCRIPTOR: PlacementDescriptor = PlacementDescriptor {
    policy: SchedPolicy::Eevdf,
    name: "eevdf",
    summary: "EEVDF, the fair class of Linux 6.6-6.12 (6.12's rules), under smp's capacity-blind placement",
    tunables: eevdf_tunables,
    build: build_eevdf,
};

/// EEVDF's features, then uclamp's knobs (6.12 has uclamp).
pub fn eevdf_tunables() -> Vec<crate::governor::tunables::TunableInfo> {
    let mut all = eevdf::tunables();
    all.extend(super::uclamp::tunables());
    all
}

fn build_eevdf(platform: &Platform, values: &Values) -> Result<Box<dyn Placement>, String> {
    Ok(Box::new(Smp::with_eevdf(platform, eevdf::Features::from_values(values))))
}

impl Smp {
    pub fn new(platform: &Platform) -> Smp {
        Smp { domains: None, balancer: Balancer::new(SD_MC_INIT, platform.tick_us() as f64), eevdf: None }
    }

    /// `smp`'s placement over EEVDF with `features` (Linux 6.12's fair class).
    pub fn with_eevdf(platform: &Platform, features: eevdf::Features) -> Smp {
        Smp { eevdf: Some(features), ..Smp::new(platform) }
    }

    /// A task was woken onto `cpu` by a policy that placed it itself (EAS's energy-aware
    /// wake-up): the balancer learns the CPU's idle time all the same (`ttwu_do_wakeup`).
    pub fn note_wakeup(&mut self, view: &SchedView, cpu: usize) {
        self.balancer.note_wakeup(view.ncpus(), cpu, view.now_us);
    }

    /// The domain layout, built from the first view (the CPUs online in this run).
    fn domains(&mut self, view: &SchedView) -> &Domains {
        self.domains.get_or_insert_with(|| Domains::build(Layout::Vanilla, view))
    }
}

impl Placement for Smp {
    fn name(&self) -> &'static str {
        if self.eevdf.is_some() {
            EEVDF_DESCRIPTOR.name
        } else {
            DESCRIPTOR.name
        }
    }

    fn select_cpu(&mut self, view: &SchedView, thread: usize, kind: WakeKind) -> usize {
        let cpu = select_task_rq_fair(view, self.domains(view), &SD_MC_INIT, thread, kind);
        if kind == WakeKind::Wakeup {
            self.balancer.note_wakeup(view.ncpus(), cpu, view.now_us);
        }
        cpu
    }

    fn balance_newidle(&mut self, view: &SchedView, cpu: usize) -> Option<Migration> {
        self.domains(view);
        let domains = self.domains.as_ref().expect("built");
        match self.balancer.idle_balance(view, domains, cpu) {
            IdleBalance::Pulled(m) => Some(m),
            IdleBalance::Skipped | IdleBalance::Nothing => None,
        }
    }

    fn tick(&mut self, view: &SchedView, cpu: usize, out: &mut Vec<Migration>) {
        self.domains(view);
        let domains = self.domains.as_ref().expect("built");
        self.balancer.tick(view, domains, cpu, true, out);
    }

    fn uses_tick(&self) -> bool {
        true
    }

    fn kernel(&self) -> Kernel {
        if self.eevdf.is_some() {
            Kernel::V6_12
        } else {
            Kernel::V3_10
        }
    }

    fn eevdf_features(&self) -> Option<eevdf::Features> {
        self.eevdf
    }

    /// 6.12, like 5.10, has no RT_RUNTIME_SHARE.
    fn rt_runtime_share(&self) -> bool {
        self.eevdf.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::testutil::Fixture;

    fn smp() -> Smp {
        Smp::new(&Platform::builtin("exynos5422").unwrap())
    }

    #[test]
    fn a_wakeup_stays_on_an_idle_previous_cpu_else_takes_an_idle_one() {
        let mut f = Fixture::new(3, &[&[0, 1, 2]]);
        f.tasks[0].cpu = 2;
        f.this_cpu = 2;
        f.busy(1, 1);
        let mut s = smp();
        assert_eq!(s.select_cpu(&f.view(), 0, WakeKind::Wakeup), 2);
        f.busy(2, 1);
        assert_eq!(s.select_cpu(&f.view(), 0, WakeKind::Wakeup), 0);
    }

    #[test]
    fn a_cpu_going_idle_pulls_from_the_longest_queue() {
        let mut f = Fixture::new(3, &[&[0, 1, 2], &[0, 1, 2], &[0, 1, 2], &[0, 1, 2]]);
        f.now_us = 1e6;
        for (t, cpu) in [(0, 0), (1, 1), (2, 1), (3, 1)] {
            f.put(t, cpu);
        }
        let mut s = smp();
        assert_eq!(s.balance_newidle(&f.view(), 2), Some(Migration { thread: 3, to_cpu: 2 }));
    }
}
