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
    /// The earliest armed wake-up on any CPU, µs (asked at every event).
    earliest_us: f64,
}

impl Timers {
    pub fn new(ncpus: usize) -> Timers {
        Timers { queues: (0..ncpus).map(|_| Queue::new()).collect(), earliest_us: f64::INFINITY }
    }

    /// Arms `thread`'s timer (sequence `seq`) on `cpu` for `wake_us`.
    pub fn arm(&mut self, cpu: usize, wake_us: f64, thread: usize, seq: u32) {
        self.queues[cpu].push(Reverse((key(wake_us), thread, seq)));
        self.earliest_us = self.earliest_us.min(wake_us);
    }

    /// The earliest armed wake-up on `cpu`, µs.
    pub fn next_us(&self, cpu: usize) -> f64 {
        self.queues[cpu].peek().map_or(f64::INFINITY, |Reverse((k, _, _))| f64::from_bits(*k))
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
        for q in &mut self.queues {
            while let Some(&Reverse((k, thread, seq))) = q.peek() {
                if f64::from_bits(k) > until_us {
                    break;
                }
                q.pop();
                due.push((thread, seq));
            }
        }
        self.earliest_us = (0..self.queues.len()).map(|c| self.next_us(c)).fold(f64::INFINITY, f64::min);
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
