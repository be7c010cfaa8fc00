//! Sleep timers: a sleeping thread's wake-up is queued on the CPU it last ran on (as an
//! hrtimer is), so finding the next wake-up and the wake-ups due costs per CPU, not per thread.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A wake-up time as an ordered key: non-negative floats (+0 and infinity included) order like
/// their bits.
fn key(wake_us: f64) -> u64 {
    debug_assert!(wake_us >= 0.0 && wake_us.is_sign_positive() && wake_us.is_finite());
    wake_us.to_bits()
}

/// The key of no wake-up (infinity).
const NONE: u64 = 0x7ff0_0000_0000_0000;

/// One CPU's armed timers: (wake time, thread, the thread's timer sequence number).
type Queue = BinaryHeap<Reverse<(u64, usize, u32)>>;

pub struct Timers {
    queues: Vec<Queue>,
    /// Each CPU's earliest armed wake-up (its queue's head; `NONE` if none) as a key: the
    /// search for due timers and for the earliest reads these side by side, not the heaps.
    heads: Vec<u64>,
    /// The earliest armed wake-up on any CPU as a key (asked at every event).
    earliest: u64,
}

impl Timers {
    pub fn new(ncpus: usize) -> Timers {
        Timers { queues: (0..ncpus).map(|_| Queue::new()).collect(), heads: vec![NONE; ncpus], earliest: NONE }
    }

    /// Arms `thread`'s timer (sequence `seq`) on `cpu` for `wake_us`.
    pub fn arm(&mut self, cpu: usize, wake_us: f64, thread: usize, seq: u32) {
        let k = key(wake_us);
        self.queues[cpu].push(Reverse((k, thread, seq)));
        self.heads[cpu] = self.heads[cpu].min(k);
        self.earliest = self.earliest.min(k);
        self.debug_check_heads();
    }

    /// The earliest armed wake-up on `cpu`, µs.
    pub fn next_us(&self, cpu: usize) -> f64 {
        f64::from_bits(self.heads[cpu])
    }

    /// A queue's head's key (what `heads` keeps).
    fn head(queue: &Queue) -> u64 {
        queue.peek().map_or(NONE, |Reverse((k, _, _))| *k)
    }

    /// Debug builds: the heads kept are the queues' heads, and the earliest is theirs.
    fn debug_check_heads(&self) {
        if cfg!(debug_assertions) {
            for (q, &head) in self.queues.iter().zip(&self.heads) {
                debug_assert_eq!(head, Self::head(q));
            }
            debug_assert_eq!(self.heads.iter().copied().min().unwrap_or(NONE), self.earliest);
        }
    }

    /// The earliest armed wake-up on any CPU, µs.
    pub fn next_any_us(&self) -> f64 {
        f64::from_bits(self.earliest)
    }

    /// Removes every timer due by `until_us` and appends `(thread, seq)` to `due`.
    #[inline]
    pub fn pop_due(&mut self, until_us: f64, due: &mut Vec<(usize, u32)>) {
        if f64::from_bits(self.earliest) > until_us {
            return;
        }
        // the earliest is the least key (the float order of non-negative floats)
        let mut earliest = NONE;
        for (q, head) in self.queues.iter_mut().zip(&mut self.heads) {
            if f64::from_bits(*head) > until_us {
                earliest = earliest.min(*head);
                continue;
            }
            while let Some(&Reverse((k, thread, seq))) = q.peek() {
                if f64::from_bits(k) > until_us {
                    break;
                }
                q.pop();
                due.push((thread, seq));
            }
            *head = Self::head(q);
            earliest = earliest.min(*head);
        }
        self.earliest = earliest;
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
