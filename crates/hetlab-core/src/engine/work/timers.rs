//! Sleep timers: a sleeping thread's wake-up is queued on the CPU it last ran on (as an
//! hrtimer is), so finding the next wake-up and the wake-ups due costs per CPU, not per thread.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A wake-up time as an ordered key: non-negative finite floats order like their bits.
fn key(wake_us: f64) -> u64 {
    debug_assert!(wake_us >= 0.0 && wake_us.is_finite());
    wake_us.to_bits()
}

/// One CPU's armed timers: (wake time, thread, the thread's timer sequence number).
type Queue = BinaryHeap<Reverse<(u64, usize, u32)>>;

pub struct Timers {
    queues: Vec<Queue>,
    /// Each CPU's earliest armed wake-up (its queue's head; infinity if none), µs: the search
    /// for due timers and for the earliest reads these side by side, not the heaps.
    heads_us: Vec<f64>,
    /// The earliest armed wake-up on any CPU, µs (asked at every event).
    earliest_us: f64,
}

impl Timers {
    pub fn new(ncpus: usize) -> Timers {
        Timers {
            queues: (0..ncpus).map(|_| Queue::new()).collect(),
            heads_us: vec![f64::INFINITY; ncpus],
            earliest_us: f64::INFINITY,
        }
    }

    /// Arms `thread`'s timer (sequence `seq`) on `cpu` for `wake_us`.
    pub fn arm(&mut self, cpu: usize, wake_us: f64, thread: usize, seq: u32) {
        self.queues[cpu].push(Reverse((key(wake_us), thread, seq)));
        self.heads_us[cpu] = self.heads_us[cpu].min(wake_us);
        self.earliest_us = self.earliest_us.min(wake_us);
        self.debug_check_heads();
    }

    /// The earliest armed wake-up on `cpu`, µs.
    pub fn next_us(&self, cpu: usize) -> f64 {
        self.heads_us[cpu]
    }

    /// `cpu`'s queue's head, µs (what `heads_us` keeps).
    fn head_us(queue: &Queue) -> f64 {
        queue.peek().map_or(f64::INFINITY, |Reverse((k, _, _))| f64::from_bits(*k))
    }

    /// Debug builds: the heads kept are the queues' heads, and the earliest is theirs.
    fn debug_check_heads(&self) {
        if cfg!(debug_assertions) {
            for (q, head) in self.queues.iter().zip(&self.heads_us) {
                debug_assert_eq!(head.to_bits(), Self::head_us(q).to_bits());
            }
            let earliest = self.heads_us.iter().copied().fold(f64::INFINITY, f64::min);
            debug_assert_eq!(earliest.to_bits(), self.earliest_us.to_bits());
        }
    }

    /// The earliest armed wake-up on any CPU, µs.
    pub fn next_any_us(&self) -> f64 {
        self.earliest_us
    }

    /// Removes every timer due by `until_us` and appends `(thread, seq)` to `due`.
    #[inline]
    pub fn pop_due(&mut self, until_us: f64, due: &mut Vec<(usize, u32)>) {
        if self.earliest_us > until_us {
            return;
        }
        for (q, head_us) in self.queues.iter_mut().zip(&mut self.heads_us) {
            if *head_us > until_us {
                continue;
            }
            while let Some(&Reverse((k, thread, seq))) = q.peek() {
                if f64::from_bits(k) > until_us {
                    break;
                }
                q.pop();
                due.push((thread, seq));
            }
            *head_us = Self::head_us(q);
        }
        self.earliest_us = self.heads_us.iter().copied().fold(f64::INFINITY, f64::min);
        self.debug_check_heads();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_timers_come_out_of_every_cpu() {
        let mut t = Timers::new(2);
        t.arm(0, 50.0, 3, 1);
        t.arm(1, 20.0, 4, 1);
        t.arm(1, 90.0, 5, 2);
        assert_eq!((t.next_us(1), t.next_any_us()), (20.0, 20.0));
        let mut due = vec![];
        t.pop_due(50.0, &mut due);
        due.sort();
        assert_eq!(due, [(3, 1), (4, 1)]);
        assert_eq!(t.next_any_us(), 90.0);
        assert_eq!(t.next_us(0), f64::INFINITY);
    }
}
