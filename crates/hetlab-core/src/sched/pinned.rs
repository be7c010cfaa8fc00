//! `pinned`: each thread stays on one CPU of its affinity mask, thread i of the run on the
//! (i mod n)-th allowed CPU (round-robin), as `taskset` on one CPU per thread would place them.

use super::{Placement, PlacementDescriptor, SchedPolicy, SchedView, WakeKind};
use crate::governor::tunables::Values;
use crate::platform::Platform;

pub struct Pinned;

/// `pinned` as the registry lists it.
pub const DESCRIPTOR: PlacementDescriptor = PlacementDescriptor {
    policy: SchedPolicy::Pinned,
    name: "pinned",
    summary: "each thread on one CPU of its affinity, round-robin (taskset)",
    tunables: Vec::new,
    build,
};

fn build(_: &Platform, _: &Values) -> Result<Box<dyn Placement>, String> {
    Ok(Box::new(Pinned))
}

impl Placement for Pinned {
    fn name(&self) -> &'static str {
        DESCRIPTOR.name
    }

    fn select_cpu(&mut self, view: &SchedView, thread: usize, _kind: WakeKind) -> usize {
        let allowed = view.tasks[thread].allowed;
        allowed.nth(thread % allowed.count()).expect("a thread has an allowed CPU")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::testutil::Fixture;

    #[test]
    fn threads_go_round_robin_over_their_allowed_cpus() {
        let f = Fixture::new(8, &[&[4, 5, 6, 7], &[4, 5, 6, 7], &[0, 1], &[0, 1], &[0, 1]]);
        let cpus: Vec<usize> = (0..5).map(|t| Pinned.select_cpu(&f.view(), t, WakeKind::Wakeup)).collect();
        assert_eq!(cpus, [4, 5, 0, 1, 0]);
    }
}
