//! rt-app's `fork` event: the threads it starts, as tasks of their own.

use super::task::Translated;
use crate::workload::{PhaseKind, Task, ThreadCount, MAX_THREADS};

/// The threads `fork` starts: per forked task a copy with one thread per fork, marked
/// `forked`; a task of 0 instances only exists through its forks. A forked thread may fork in
/// turn: a task's forks are counted from all its threads, its own instances and its forked
/// ones (forks that come back to a task they started from would never end: an error).
pub(super) fn add_forked_tasks(origin: &str, translated: Vec<Translated>) -> Result<Vec<Task>, String> {
    // forks[i]: (target index, forks per thread of task i: its repeats times its phase's loops)
    let mut forks: Vec<Vec<(usize, u64)>> = vec![Vec::new(); translated.len()];
    for (i, (task, _)) in translated.iter().enumerate() {
        for (index, phase) in task.phases.iter().enumerate() {
            let PhaseKind::Fork { task: target } = &phase.kind else { continue };
            let Some(j) = translated.iter().position(|(t, _)| &t.name == target) else {
                return Err(format!("{origin}: tasks.{}: fork names '{target}', which is not a task", task.name));
            };
            let loops = task.loops.iter().find(|l| (l.start..l.end).contains(&index)).map_or(1, |l| l.count);
            if task.repeat == u32::MAX || loops == u32::MAX {
                return Err(format!(
                    "{origin}: tasks.{}: a fork in a task or phase that loops forever is not supported; give it a loop \
                     count",
                    task.name
                ));
            }
            forks[i].push((j, u64::from(task.repeat) * u64::from(loops)));
        }
    }
    // Threads forked per task, in an order where every forking task comes before its targets.
    let mut forked = vec![0u64; translated.len()];
    for i in fork_order(origin, &translated, &forks)? {
        let threads = translated[i].1 as u64 + forked[i];
        for &(j, per_thread) in &forks[i] {
            forked[j] = forked[j].saturating_add(threads.saturating_mul(per_thread));
        }
    }
    let mut tasks = Vec::new();
    for ((task, instances), n) in translated.into_iter().zip(forked) {
        if n > 0 {
            let threads = u32::try_from(n).ok().filter(|&n| n as u64 <= MAX_THREADS);
            let threads =
                threads.ok_or_else(|| format!("{origin}: tasks.{}: forked {n} times, too many", task.name))?;
            tasks.push(Task { threads: ThreadCount::Fixed(threads), forked: true, ..task.clone() });
        }
        if instances > 0 {
            tasks.push(task);
        }
    }
    if tasks.iter().all(|t| t.forked) {
        return Err(format!("{origin}: tasks: every task has 0 instances; give one at least 1"));
    }
    Ok(tasks)
}

/// The tasks in an order where a task comes after every task that forks it (Kahn's); a cycle
/// of forks is an error naming a task on it.
fn fork_order(origin: &str, translated: &[Translated], forks: &[Vec<(usize, u64)>]) -> Result<Vec<usize>, String> {
    let mut forked_by = vec![0usize; translated.len()];
    for &(j, _) in forks.iter().flatten() {
        forked_by[j] += 1;
    }
    let mut ready: Vec<usize> = (0..translated.len()).filter(|&i| forked_by[i] == 0).collect();
    let mut order = Vec::with_capacity(translated.len());
    while let Some(i) = ready.pop() {
        order.push(i);
        for &(j, _) in &forks[i] {
            forked_by[j] -= 1;
            if forked_by[j] == 0 {
                ready.push(j);
            }
        }
    }
    match (0..translated.len()).find(|&i| forked_by[i] > 0) {
        Some(i) => Err(format!(
            "{origin}: tasks.{}: its forks lead back to it, so forking would never end",
            translated[i].0.name
        )),
        None => Ok(order),
    }
}
