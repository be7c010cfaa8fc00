//! A thread that wakes a higher-priority thread with `resume` on its own CPU is preempted by
//! it (CFS's wake-up preemption) and goes on with its next phases only when it runs again:
//! its `suspend` or `sleep` after the `resume` must still happen (rt-app: the waker returns
//! from `pthread_cond_broadcast`, is preempted, and calls `pthread_cond_wait` when it runs).

use hetlab_core::engine::{simulate, SimConfig};
use hetlab_core::platform::Platform;
use hetlab_core::sched::SchedPolicy;
use hetlab_core::workload::Workload;

/// `waker` (nice 0) and `urgent` (nice -8) both on CPU 0 of the vexpress: per round, waker
/// computes, resumes "go" (urgent preempts it), waits for "done", then sleeps 100 ms.
const CHAIN: &str = r#"
name = "chain"
[[tasks]]
name = "waker"
affinity = [0]
repeat = 3
[[tasks.phases]]
instructions = 4e6
[[tasks.phases]]
resume = "go"
[[tasks.phases]]
suspend = "done"
[[tasks.phases]]
mark = "sleep"
sleep_us = 100000

[[tasks]]
name = "urgent"
nice = -8
affinity = [0]
repeat = 3
[[tasks.phases]]
suspend = "go"
[[tasks.phases]]
instructions = 4e6
[[tasks.phases]]
mark = "done"
resume = "done"
"#;

#[test]
fn a_waker_preempted_by_the_thread_it_woke_still_suspends_and_sleeps() {
    let p = Platform::builtin("vexpress-a9").unwrap();
    let w = Workload::from_toml("chain.toml", CHAIN).unwrap();
    for scheduler in [SchedPolicy::Smp, SchedPolicy::Pinned] {
        let mut c = SimConfig::new(SimConfig::governor_plan(&p, "performance", &[], None, &[]).unwrap());
        c.scheduler = scheduler;
        c.series = false;
        c.time_limit_s = 5.0;
        let r = simulate(&p, &w, c).unwrap();
        assert!(r.completed, "{scheduler:?}: the chain hung");
        let at = |name: &str| r.marks.iter().filter(|m| m.name == name).map(|m| m.time_s).collect::<Vec<_>>();
        let (done, slept) = (at("done"), at("sleep"));
        assert_eq!((done.len(), slept.len()), (3, 3), "{scheduler:?}: {:?}", r.marks);
        // each round: urgent's work (10 ms on the A9 at 400 MHz), then the waker's sleep of 100 ms
        for i in 0..3 {
            assert!(slept[i] >= done[i], "{scheduler:?}: {:?}", r.marks);
            if i > 0 {
                assert!(done[i] - slept[i - 1] > 0.1, "{scheduler:?}: the sleep was skipped: {:?}", r.marks);
            }
        }
    }
}
