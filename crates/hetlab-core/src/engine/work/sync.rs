//! Threads synchronising on named objects, as rt-app's events do: conditions (`suspend`,
//! `resume`, `signal`, the wait of `wait`/`sync`), mutexes, semaphores, barriers and timers;
//! with `fork`, `yield` and `runtime`, the phases that are neither work nor a plain sleep.
//!
//! Every object is a wait queue served longest waiter first. A released mutex goes to its
//! longest waiter (a fair hand-off: glibc's default mutex lets a running thread take it before
//! the woken one runs, which is not modelled). A woken thread goes on to its next phase at
//! once, on the CPU the scheduler picks for it (`flow`).

use std::collections::{BTreeMap, VecDeque};

use crate::workload::{PhaseKind, SyncOp, Task};

/// The kinds of named objects; each kind has its own names (as rt-app's resources have a name
/// and a type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Object {
    /// What `suspend`, `resume`, `signal` and `broad` name.
    Condition,
    Mutex,
    Semaphore,
    Barrier,
    Timer,
}

const KINDS: usize = 5;

/// The objects a run's phases name and their state.
pub struct SyncObjects {
    /// Ids by kind and name, numbered in the order they first appear.
    ids: [BTreeMap<String, usize>; KINDS],
    /// Per object: the threads waiting on it, longest first.
    waiters: Vec<VecDeque<usize>>,
    /// Per mutex: its owner.
    owner: Vec<Option<usize>>,
    /// Per semaphore: its count.
    count: Vec<u64>,
    /// Per shared timer, and per (thread, timer) for per-thread ones: its last expiry, µs.
    expiry_us: Vec<Option<f64>>,
    thread_expiry_us: BTreeMap<(usize, usize), f64>,
    /// Forked tasks by name, and per forked task the next of its threads to start and the end
    /// of its range.
    fork_ids: BTreeMap<String, usize>,
    forks: Vec<(usize, usize)>,
}

impl SyncObjects {
    /// Every object the tasks' phases name; `threads[i]` threads of task i, numbered task by
    /// task.
    pub fn new(tasks: &[Task], threads: &[u32]) -> SyncObjects {
        let mut objects = SyncObjects {
            ids: Default::default(),
            waiters: Vec::new(),
            owner: Vec::new(),
            count: Vec::new(),
            expiry_us: Vec::new(),
            thread_expiry_us: BTreeMap::new(),
            fork_ids: BTreeMap::new(),
            forks: Vec::new(),
        };
        for phase in tasks.iter().flat_map(|t| &t.phases) {
            let named = match &phase.kind {
                PhaseKind::Suspend { event } | PhaseKind::Resume { event } => Some((Object::Condition, event)),
                PhaseKind::Sync { op, object } => Some((object_of(*op), object)),
                PhaseKind::Timer { timer, .. } => Some((Object::Timer, timer)),
                _ => None,
            };
            if let Some((kind, name)) = named {
                let next = objects.waiters.len();
                if *objects.ids[kind as usize].entry(name.clone()).or_insert(next) == next {
                    objects.waiters.push(VecDeque::new());
                    objects.owner.push(None);
                    objects.count.push(0);
                    objects.expiry_us.push(None);
                }
            }
        }
        let mut first_thread = 0;
        for (task, &n) in tasks.iter().zip(threads) {
            let end = first_thread + n as usize;
            if task.forked {
                objects.fork_ids.insert(task.name.clone(), objects.forks.len());
                objects.forks.push((first_thread, end));
            }
            first_thread = end;
        }
        objects
    }

    /// The id of the object `name` of `kind` (every name in a phase has one).
    pub fn id(&self, kind: Object, name: &str) -> usize {
        self.ids[kind as usize][name]
    }

    /// The forked task named `task`, if there is one.
    pub fn fork_target(&self, task: &str) -> Option<usize> {
        self.fork_ids.get(task).copied()
    }

    /// What thread `t` waits on, its kind and name, if it is in an object's queue.
    pub fn waited_on(&self, t: usize) -> Option<(Object, &str)> {
        const KIND: [Object; KINDS] =
            [Object::Condition, Object::Mutex, Object::Semaphore, Object::Barrier, Object::Timer];
        self.ids.iter().zip(KIND).find_map(|(ids, kind)| {
            ids.iter().find(|(_, &id)| self.waiters[id].contains(&t)).map(|(name, _)| (kind, name.as_str()))
        })
    }

    /// The thread holding mutex `id`, if one does.
    pub fn owner(&self, id: usize) -> Option<usize> {
        self.owner[id]
    }

    /// The id of `name` of `kind`, if a phase names it.
    pub fn find(&self, kind: Object, name: &str) -> Option<usize> {
        self.ids[kind as usize].get(name).copied()
    }

    /// Thread `t` does `op` on object `id`.
    pub fn op(&mut self, t: usize, op: SyncOp, id: usize) -> SyncOutcome {
        match op {
            SyncOp::Lock if self.owner[id].is_none() => {
                self.owner[id] = Some(t);
                SyncOutcome::GoOn(None)
            }
            SyncOp::Unlock => {
                self.owner[id] = self.waiters[id].pop_front();
                SyncOutcome::GoOn(self.owner[id])
            }
            SyncOp::Signal => SyncOutcome::GoOn(self.waiters[id].pop_front()),
            SyncOp::SemPost => {
                let woken = self.waiters[id].pop_front();
                if woken.is_none() {
                    self.count[id] += 1;
                }
                SyncOutcome::GoOn(woken)
            }
            SyncOp::SemWait if self.count[id] > 0 => {
                self.count[id] -= 1;
                SyncOutcome::GoOn(None)
            }
            SyncOp::Barrier { parties } if self.waiters[id].len() + 1 >= parties as usize => SyncOutcome::ReleaseAll,
            SyncOp::Lock | SyncOp::SemWait | SyncOp::Barrier { .. } => SyncOutcome::Wait,
        }
    }

    /// `t` waits on object `id`.
    pub fn wait(&mut self, t: usize, id: usize) {
        self.waiters[id].push_back(t);
    }

    /// Whether `t` waits on object `id`.
    pub fn waits(&self, t: usize, id: usize) -> bool {
        self.waiters[id].contains(&t)
    }

    /// `t` no longer waits on object `id` (woken by other means).
    pub fn stop_waiting(&mut self, t: usize, id: usize) {
        self.waiters[id].retain(|&w| w != t);
    }

    /// Every thread waiting on object `id`, in arrival order; give the queue back with
    /// [`give_back`](Self::give_back) once they went on.
    pub fn take_waiters(&mut self, id: usize) -> VecDeque<usize> {
        std::mem::take(&mut self.waiters[id])
    }

    /// The emptied queue of `id` back (its allocation kept) unless threads wait there again.
    pub fn give_back(&mut self, id: usize, mut emptied: VecDeque<usize>) {
        emptied.clear();
        if self.waiters[id].is_empty() {
            self.waiters[id] = emptied;
        }
    }

    /// `t` waits for timer `id`'s next expiry (rt-app `timer`, `period_us` after the last one;
    /// the first after `origin_us`, per thread or shared): that expiry, and whether it lies
    /// ahead of `now_us` (an overrun does not sleep, and a relative timer restarts from now).
    pub fn timer_expiry(
        &mut self,
        t: usize,
        id: usize,
        (period_us, relative, per_thread, origin_us): (u64, bool, bool, u64),
        now_us: f64,
    ) -> (f64, bool) {
        let last = if per_thread {
            self.thread_expiry_us.entry((t, id)).or_insert(origin_us as f64)
        } else {
            self.expiry_us[id].get_or_insert(origin_us as f64)
        };
        *last += period_us as f64;
        let (expiry_us, sleeps) = (*last, *last > now_us);
        if !sleeps && relative {
            *last = now_us;
        }
        (expiry_us, sleeps)
    }

    /// The next thread of forked task `forked` to start (rt-app `fork`); the translation counts
    /// every fork, so there is always one left.
    pub fn next_forked(&mut self, forked: Option<usize>) -> Option<usize> {
        let (next, end) = forked.map(|f| &mut self.forks[f])?;
        (*next < *end).then(|| {
            *next += 1;
            *next - 1
        })
    }
}

/// What a thread's operation on a named object leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncOutcome {
    /// It goes on to its next phase, having let this waiting thread go on first.
    GoOn(Option<usize>),
    /// It waits on the object.
    Wait,
    /// The last party at a barrier: every waiting thread goes on, then it does.
    ReleaseAll,
}

impl Object {
    /// The kind as a deadlock report names it.
    pub fn label(self) -> &'static str {
        match self {
            Object::Condition => "condition",
            Object::Mutex => "mutex",
            Object::Semaphore => "semaphore",
            Object::Barrier => "barrier",
            Object::Timer => "timer",
        }
    }

    /// Whether `phase` can end a wait on the object `name` of this kind: a resume or signal of a
    /// condition, a post of a semaphore, an unlock of a mutex, another arrival at a barrier.
    pub fn woken_by(self, name: &str, phase: &PhaseKind) -> bool {
        match phase {
            PhaseKind::Resume { event } => self == Object::Condition && event == name,
            PhaseKind::Sync { op, object } => {
                object == name
                    && object_of(*op) == self
                    && matches!(op, SyncOp::Signal | SyncOp::SemPost | SyncOp::Unlock | SyncOp::Barrier { .. })
            }
            _ => false,
        }
    }
}

pub fn object_of(op: SyncOp) -> Object {
    match op {
        SyncOp::Lock | SyncOp::Unlock => Object::Mutex,
        SyncOp::Signal => Object::Condition,
        SyncOp::SemPost | SyncOp::SemWait => Object::Semaphore,
        SyncOp::Barrier { .. } => Object::Barrier,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Phase, Workload};

    fn objects() -> SyncObjects {
        let mut w = Workload::from_spec("cpu-bound:threads=3,instructions=1e6").unwrap();
        let phase = |kind| Phase { kind, ..w.tasks[0].phases[0].clone() };
        w.tasks[0].phases = vec![
            phase(PhaseKind::Sync { op: SyncOp::Lock, object: "m".into() }),
            phase(PhaseKind::Sync { op: SyncOp::Barrier { parties: 3 }, object: "b".into() }),
            phase(PhaseKind::Sync { op: SyncOp::SemWait, object: "s".into() }),
        ];
        SyncObjects::new(&w.tasks, &[3])
    }

    #[test]
    fn a_mutex_goes_to_its_longest_waiter() {
        let mut s = objects();
        let m = s.id(Object::Mutex, "m");
        assert_eq!(s.op(0, SyncOp::Lock, m), SyncOutcome::GoOn(None));
        for t in [2, 1] {
            assert_eq!(s.op(t, SyncOp::Lock, m), SyncOutcome::Wait);
            s.wait(t, m);
        }
        assert_eq!(s.waited_on(1), Some((Object::Mutex, "m")));
        assert_eq!(s.op(0, SyncOp::Unlock, m), SyncOutcome::GoOn(Some(2)));
        assert_eq!(s.op(2, SyncOp::Unlock, m), SyncOutcome::GoOn(Some(1)));
    }

    #[test]
    fn the_last_party_releases_a_barrier_and_a_post_waits_for_no_one() {
        let mut s = objects();
        let (b, sem) = (s.id(Object::Barrier, "b"), s.id(Object::Semaphore, "s"));
        let barrier = SyncOp::Barrier { parties: 3 };
        for t in 0..2 {
            assert_eq!(s.op(t, barrier, b), SyncOutcome::Wait);
            s.wait(t, b);
        }
        assert_eq!(s.op(2, barrier, b), SyncOutcome::ReleaseAll);
        let waiting = s.take_waiters(b);
        assert_eq!(waiting.iter().copied().collect::<Vec<_>>(), [0, 1]);
        s.give_back(b, waiting);
        assert_eq!(s.op(0, SyncOp::SemPost, sem), SyncOutcome::GoOn(None));
        assert_eq!(s.op(1, SyncOp::SemWait, sem), SyncOutcome::GoOn(None));
        assert_eq!(s.op(1, SyncOp::SemWait, sem), SyncOutcome::Wait);
    }

    #[test]
    fn a_periodic_timer_sleeps_to_its_next_expiry_and_a_relative_one_restarts_after_an_overrun() {
        let mut s = objects();
        assert_eq!(s.timer_expiry(0, 0, (100, false, true, 0), 50.0), (100.0, true));
        assert_eq!(s.timer_expiry(0, 0, (100, false, true, 0), 350.0), (200.0, false));
        // relative: the overrun restarts the period from now
        assert_eq!(s.timer_expiry(1, 0, (100, true, true, 0), 150.0), (100.0, false));
        assert_eq!(s.timer_expiry(1, 0, (100, true, true, 0), 160.0), (250.0, true));
    }
}
