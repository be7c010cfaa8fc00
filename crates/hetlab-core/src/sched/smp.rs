//! `smp`: capacity-blind balancing, as vanilla CFS treated big.LITTLE (one MC scheduling domain
//! over all CPUs, every CPU alike). A waking thread goes to its previous CPU if that is idle,
//! else to an idle allowed CPU, else to the least loaded one (lowest number on ties); a CPU
//! that goes idle pulls a waiting thread from the CPU with the longest queue.

use super::{Migration, Placement, SchedView, WakeKind};

pub struct Smp;

impl Placement for Smp {
    fn name(&self) -> &'static str {
        "smp"
    }

    fn select_cpu(&mut self, view: &SchedView, thread: usize, _kind: WakeKind) -> usize {
        let task = &view.tasks[thread];
        let prev = task.cpu;
        if task.allowed.contains(prev) && view.rqs[prev].nr_running() == 0 {
            return prev;
        }
        task.allowed.iter().min_by_key(|&c| (view.rqs[c].nr_running(), c)).unwrap_or(prev)
    }

    fn balance_newidle(&mut self, view: &SchedView, cpu: usize) -> Option<Migration> {
        // The busiest CPU: the first with the longest queue holding a thread allowed here.
        let mut busiest: Option<(usize, usize)> = None; // (cpu, thread)
        for (other, rq) in view.rqs.iter().enumerate() {
            if other == cpu || busiest.is_some_and(|(b, _)| view.rqs[b].queue.len() >= rq.queue.len()) {
                continue;
            }
            if let Some(&t) = rq.queue.iter().find(|&&t| view.tasks[t].allowed.contains(cpu)) {
                busiest = Some((other, t));
            }
        }
        busiest.map(|(_, thread)| Migration { thread, to_cpu: cpu })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::testutil::Fixture;

    #[test]
    fn prefers_idle_previous_then_idle_then_least_loaded() {
        let mut f = Fixture::new(3, &[&[0, 1, 2]]);
        let pick = |f: &Fixture| Smp.select_cpu(&f.view(), 0, WakeKind::Wakeup);
        f.tasks[0].cpu = 2;
        f.rqs[1].curr = Some(9);
        assert_eq!(pick(&f), 2);
        f.tasks[0].cpu = 1;
        assert_eq!(pick(&f), 0);
        for (cpu, n) in [(0, 2), (1, 3), (2, 2)] {
            f.rqs[cpu].curr = Some(9);
            f.rqs[cpu].queue.extend(std::iter::repeat_n(9, n - 1));
        }
        assert_eq!(pick(&f), 0);
    }

    #[test]
    fn newidle_pulls_an_allowed_thread_from_the_longest_queue() {
        let mut f = Fixture::new(3, &[&[1], &[0, 2], &[1, 2]]);
        f.rqs[0].queue.extend([0]);
        f.rqs[1].queue.extend([0, 1, 2]);
        // CPU 2 may take thread 1 or 2 from CPU 1 (the longest queue), the first allowed: 1
        assert_eq!(Smp.balance_newidle(&f.view(), 2), Some(Migration { thread: 1, to_cpu: 2 }));
        // CPU 0 can only take thread 1
        assert_eq!(Smp.balance_newidle(&f.view(), 0), Some(Migration { thread: 1, to_cpu: 0 }));
        f.rqs[1].queue.clear();
        assert_eq!(Smp.balance_newidle(&f.view(), 2), None);
    }
}
