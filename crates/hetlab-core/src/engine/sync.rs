//! Threads synchronising on named objects, as rt-app's events do: conditions (`suspend`,
//! `resume`, `signal`, the wait of `wait`/`sync`), mutexes, semaphores, barriers and timers;
//! with `fork`, `yield` and `runtime`, the phases that are neither work nor a plain sleep.
//!
//! Every object is a wait queue served longest waiter first. A released mutex goes to its
//! longest waiter (a fair hand-off: glibc's default mutex lets a running thread take it before
//! the woken one runs, which is not modelled). A woken thread goes on to its next phase at
//! once, on the CPU the scheduler picks for it.

use std::collections::{BTreeMap, VecDeque};

use super::state::ThreadState;
use super::Engine;
use crate::workload::{PhaseKind, SyncOp, Task};

/// The kinds of named objects; each kind has its own names (as rt-app's resources have a name
/// and a type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Object {
    /// What `suspend`, `resume`, `signal` and `broad` name.
    Condition,
    Mutex,
    Semaphore,
    Barrier,
    Timer,
}

const KINDS: usize = 5;

/// The objects a run's phases name and their state.
pub(super) struct SyncObjects {
    /// Ids by kind and name, numbered in the order they first appear.
    ids: [BTreeMap<String, usize>; KINDS],
    /// Per object: the threads waiting on it, longest first.
    pub waiters: Vec<VecDeque<usize>>,
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
    /// Every object the tasks' phases name (the engine numbers threads task by task).
    pub fn new(tasks: &[Task]) -> SyncObjects {
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
        for task in tasks {
            let end = first_thread + task.resolved_threads() as usize;
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

    /// What thread `t` waits on, as "KIND 'NAME'", if it is in an object's queue.
    pub fn waited_on(&self, t: usize) -> Option<String> {
        const NAMES: [&str; KINDS] = ["condition", "mutex", "semaphore", "barrier", "timer"];
        self.ids.iter().zip(NAMES).find_map(|(ids, kind)| {
            ids.iter().find(|(_, &id)| self.waiters[id].contains(&t)).map(|(name, _)| format!("{kind} '{name}'"))
        })
    }

    /// The id of `name` of `kind`, if a phase names it.
    pub fn find(&self, kind: Object, name: &str) -> Option<usize> {
        self.ids[kind as usize].get(name).copied()
    }
}

pub(super) fn object_of(op: SyncOp) -> Object {
    match op {
        SyncOp::Lock | SyncOp::Unlock => Object::Mutex,
        SyncOp::Signal => Object::Condition,
        SyncOp::SemPost | SyncOp::SemWait => Object::Semaphore,
        SyncOp::Barrier { .. } => Object::Barrier,
    }
}

impl Engine<'_> {
    /// `t` does `op` on object `id`; true if it goes on to its next phase now, false if it waits.
    pub(super) fn sync_op(&mut self, t: usize, op: SyncOp, id: usize) -> bool {
        let cpu = self.sched.entities[t].cpu;
        match op {
            SyncOp::Lock if self.sync.owner[id].is_none() => {
                self.sync.owner[id] = Some(t);
                true
            }
            SyncOp::Unlock => {
                self.sync.owner[id] = self.sync.waiters[id].pop_front();
                if let Some(w) = self.sync.owner[id] {
                    self.go_on(w, cpu);
                }
                true
            }
            SyncOp::Signal => {
                if let Some(w) = self.sync.waiters[id].pop_front() {
                    self.go_on(w, cpu);
                }
                true
            }
            SyncOp::SemPost => {
                match self.sync.waiters[id].pop_front() {
                    Some(w) => self.go_on(w, cpu),
                    None => self.sync.count[id] += 1,
                }
                true
            }
            SyncOp::SemWait if self.sync.count[id] > 0 => {
                self.sync.count[id] -= 1;
                true
            }
            SyncOp::Barrier { parties } if self.sync.waiters[id].len() + 1 >= parties as usize => {
                self.wake_all(id, cpu);
                true
            }
            SyncOp::Lock | SyncOp::SemWait | SyncOp::Barrier { .. } => {
                self.wait_on(t, id);
                false
            }
        }
    }

    /// Records a deadlock if every user thread not done waits (`Suspended`): on an object,
    /// at a barrier or to be forked. Only user threads resume, signal, unlock, post or fork,
    /// so none of them will ever go on.
    pub(super) fn note_deadlock(&mut self) {
        let user = || self.threads.iter().enumerate().filter(|(_, th)| !th.kernel && th.state != ThreadState::Done);
        if self.out.deadlock.is_some() || self.live_user_threads == 0 {
            return;
        }
        // a user thread on a CPU is no deadlock: the usual answer, found without a scan of
        // every thread (a barrier of thousands of threads checks at each arrival)
        if self.sched.rqs.iter().any(|rq| rq.curr.is_some_and(|t| !self.threads[t].kernel)) {
            return;
        }
        if user().any(|(_, th)| th.state != ThreadState::Suspended) {
            return;
        }
        let waits = user()
            .map(|(t, _)| {
                let on = self.sync.waited_on(t).unwrap_or_else(|| "a barrier or a fork".into());
                format!("{} waits on {on}", self.thread_name(t))
            })
            .collect();
        self.out.deadlock = Some(crate::result::Deadlock { time_s: self.now_us * 1e-6, waits });
    }

    /// `t` waits on object `id` until another thread lets it go on.
    pub(super) fn wait_on(&mut self, t: usize, id: usize) {
        self.block(t);
        self.sync.waiters[id].push_back(t);
    }

    /// Every thread waiting on object `id` goes on, in arrival order; `cpu` woke them.
    pub(super) fn wake_all(&mut self, id: usize, cpu: usize) {
        let mut waiting = std::mem::take(&mut self.sync.waiters[id]);
        for w in waiting.drain(..) {
            self.go_on(w, cpu);
        }
        if self.sync.waiters[id].is_empty() {
            self.sync.waiters[id] = waiting; // keep the allocation
        }
    }

    /// A waiting thread goes on to its next phase; the thread on `waker_cpu` woke it.
    fn go_on(&mut self, w: usize, waker_cpu: usize) {
        debug_assert_eq!(self.threads[w].state, ThreadState::Suspended);
        self.threads[w].progress.phase += 1;
        self.enter_phase(w, Some(waker_cpu));
    }

    /// `t` sleeps to its timer's next expiry; true if that has passed already (an overrun: no
    /// sleep, and a relative timer restarts from now).
    pub(super) fn timer_wait(
        &mut self,
        t: usize,
        id: usize,
        period_us: u64,
        relative: bool,
        per_thread: bool,
        origin_us: u64,
    ) -> bool {
        let last = if per_thread {
            self.sync.thread_expiry_us.entry((t, id)).or_insert(origin_us as f64)
        } else {
            self.sync.expiry_us[id].get_or_insert(origin_us as f64)
        };
        *last += period_us as f64;
        let (expiry_us, sleeps) = (*last, *last > self.now_us);
        if !sleeps && relative {
            *last = self.now_us;
        }
        self.rtapp_timer(t, expiry_us, period_us, sleeps);
        if sleeps {
            self.sleep_until(t, expiry_us);
        }
        !sleeps
    }

    /// Starts the next thread of forked task `forked` (rt-app `fork`), from `cpu`.
    pub(super) fn fork(&mut self, forked: Option<usize>, cpu: usize) {
        let Some((next, end)) = forked.map(|f| &mut self.sync.forks[f]) else { return };
        if *next < *end {
            let child = *next;
            *next += 1;
            self.enter_phase(child, Some(cpu));
        } // the translation counts every fork: there is always a thread left
    }

    /// `t` busies its CPU until `duration_us` of wall-clock time has passed (rt-app
    /// `runtime`): endless work, ended by its own timer (`end_runtime`).
    pub(super) fn start_runtime(&mut self, t: usize, duration_us: u64, waker: Option<usize>) {
        let end_us = self.now_us + duration_us as f64;
        let cpu = self.sched.entities[t].cpu;
        let th = &mut self.threads[t];
        th.progress.work_left = f64::INFINITY;
        th.progress.runtime_end_us = Some(end_us);
        th.timer_seq = th.timer_seq.wrapping_add(1);
        self.timers.arm(cpu, end_us, t, th.timer_seq);
        self.make_runnable(t, waker);
    }

    /// `t`'s runtime is over: a running thread goes on at once, a waiting one when it next
    /// runs (rt-app looks at the clock only while it runs).
    pub(super) fn end_runtime(&mut self, t: usize) {
        let th = &mut self.threads[t];
        th.progress.runtime_end_us = None;
        th.progress.work_left = 0.0;
        if th.state == ThreadState::Running {
            self.job_done(t);
        }
    }
}
