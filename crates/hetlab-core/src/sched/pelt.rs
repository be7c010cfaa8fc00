//! Per-entity load tracking as the kernel computes it, in integer arithmetic
//! (kernel/sched/pelt.c: `decay_load`, `__accumulate_pelt_segments`, `accumulate_sum`,
//! `___update_load_sum`, `___update_load_avg`; constants in shared/reference/linux-governors.md
//! §5 and sched-rcu-platforms.md §1).
//!
//! Time is counted in units of 1024 ns (`delta >>= 10`) and periods of 1024 units; a sum
//! decays by y per period with y^32 = 1/2. One accumulator keeps the signals both kernel eras
//! read:
//! - the big.LITTLE MP (3.x) signals: `runnable_sum` (time running *or waiting*), `usage_sum`
//!   (running) and `period_sum` (wall time), giving `load_avg_ratio = runnable·1024/(period+1)`,
//!   the HMP metric (LSK-MP 0002); with frequency invariance (LSK-MP 0019) the chunks added to
//!   the runnable and usage sums are scaled by the CPU's `cur/max` frequency;
//! - today's `util_avg`: running time scaled by frequency and CPU capacity (the 4.x placement
//!   of invariance inside `accumulate_sum`: `contrib·freq >> 10`, then `·capacity`), divided by
//!   the PELT divider.
//!
//! An accumulator is brought up to date where the kernel updates it (enqueue, dequeue, the
//! tick, migration), each time with the state and scale in force at that moment.

/// Half-life of the series in periods (`LOAD_AVG_PERIOD`).
pub const LOAD_AVG_PERIOD: u64 = 32;
/// The sum of an always-running entity (`LOAD_AVG_MAX`): the fixed point of the truncating
/// recurrence `max = 1024 + max·y`.
pub const LOAD_AVG_MAX: u64 = 47742;
/// `SCHED_CAPACITY_SCALE` / `NICE_0_LOAD`.
pub const SCALE: u64 = 1024;

/// y^n · 2^32 for n = 0..31 (`runnable_avg_yN_inv`).
const RUNNABLE_AVG_YN_INV: [u32; 32] = [
    0xffffffff, 0xfa83b2da, 0xf5257d14, 0xefe4b99a, 0xeac0c6e6, 0xe5b906e6, 0xe0ccdeeb, 0xdbfbb796, 0xd744fcc9,
    0xd2a81d91, 0xce248c14, 0xc9b9bd85, 0xc5672a10, 0xc12c4cc9, 0xbd08a39e, 0xb8fbaf46, 0xb504f333, 0xb123f581,
    0xad583ee9, 0xa9a15ab4, 0xa5fed6a9, 0xa2704302, 0x9ef5325f, 0x9b8d39b9, 0x9837f050, 0x94f4efa8, 0x91c3d373,
    0x8ea4398a, 0x8b95c1e3, 0x88980e80, 0x85aac367, 0x82cd8698,
];

/// `decay_load`: `val` after `n` periods.
pub fn decay_load(val: u64, n: u64) -> u64 {
    if n > LOAD_AVG_PERIOD * 63 {
        return 0;
    }
    let val = val >> (n / LOAD_AVG_PERIOD);
    ((val as u128 * RUNNABLE_AVG_YN_INV[(n % LOAD_AVG_PERIOD) as usize] as u128) >> 32) as u64
}

/// `__accumulate_pelt_segments`: what a contiguous stretch contributes when it ends `periods`
/// periods after the one it started in: `d1` units finishing that period (decayed), the full
/// periods in between, and `d3` units of the current one.
fn accumulate_segments(periods: u64, d1: u64, d3: u64) -> u64 {
    let c1 = decay_load(d1, periods);
    let c2 = LOAD_AVG_MAX - decay_load(LOAD_AVG_MAX, periods) - 1024;
    c1 + c2 + d3
}

/// What an entity is doing over the stretch being accounted, and at what scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct State {
    /// On a run queue (running or waiting).
    pub runnable: bool,
    pub running: bool,
    /// `cur_freq·1024/max_freq` of the CPU (`arch_scale_freq_capacity`), for `util_avg`.
    pub freq_scale: u64,
    /// The CPU's capacity, 0..=1024 (`arch_scale_cpu_capacity`).
    pub cpu_scale: u64,
    /// The 3.x frequency scale of the runnable and usage sums (LSK-MP 0019's `curr_scale`:
    /// current over the policy's thermally capped maximum, 1024 when disabled or under a
    /// single-frequency governor).
    pub load_freq_scale: u64,
    /// The weight the load sum accumulates (5.10's `cfs_rq->load.weight` in
    /// `___update_load_sum`): a task group's run queue's load; 0 where no load sum is kept.
    pub load: u64,
    /// How many entities the runnable sum counts while runnable (Linux 6.x's `runnable`
    /// argument of `___update_load_sum`: a run queue's `h_nr_running`, so its `runnable_avg`
    /// passes `util_avg` under contention); 0 or 1 count one (a task).
    pub nr_runnable: u64,
}

impl State {
    pub const IDLE: State = State {
        runnable: false,
        running: false,
        freq_scale: SCALE,
        cpu_scale: SCALE,
        load_freq_scale: SCALE,
        load: 0,
        nr_runnable: 0,
    };
}

/// `struct sched_avg` with the 3.x and today's sums.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SchedAvg {
    /// ns, a multiple of 1024 units behind the last update (`last_update_time`).
    pub last_update_ns: u64,
    /// Units of the current period already accounted (`period_contrib`), 0..1024.
    pub period_contrib: u64,
    pub runnable_sum: u64,
    pub usage_sum: u64,
    pub period_sum: u64,
    /// Running time × frequency scale × capacity (`util_sum`).
    pub util_sum: u64,
    pub util_avg: u64,
    /// Runnable time × the run queue's load weight, unscaled (5.10's `cfs_rq->avg.load_sum`),
    /// and its average (`load_avg`); kept for task groups' run queues only (`State::load`).
    pub load_sum: u64,
    pub load_avg: u64,
    /// Runnable time scaled as `util_sum` is, times the entities runnable (its average is
    /// today's `runnable_avg`: of a task, util_est's test that it got the time it wanted; of a
    /// run queue, 6.4+'s runnable boost).
    pub runnable_util_sum: u64,
}

impl SchedAvg {
    /// A new task's signals as the 3.x big.LITTLE MP kernels initialise them on fork (LSK-MP
    /// 0027): everything at LOAD_AVG_MAX, i.e. a ratio of 1023, so new tasks start "fully
    /// loaded"; `util` as 5.x's `post_init_entity_util_avg` would leave a first task (half the
    /// spare capacity is not modelled: 0).
    pub fn new_task(now_ns: u64) -> SchedAvg {
        SchedAvg {
            last_update_ns: now_ns,
            runnable_sum: LOAD_AVG_MAX,
            usage_sum: LOAD_AVG_MAX,
            period_sum: LOAD_AVG_MAX,
            ..Default::default()
        }
    }

    /// `___update_load_sum` then `___update_load_avg`: accounts the time from the last update
    /// to `now_ns` as spent in `state`. Returns whether a period boundary was crossed.
    pub fn update(&mut self, now_ns: u64, state: State) -> bool {
        let Some(delta_ns) = now_ns.checked_sub(self.last_update_ns) else {
            self.last_update_ns = now_ns;
            return false;
        };
        let delta = delta_ns >> 10;
        if delta == 0 {
            return false;
        }
        self.last_update_ns += delta << 10;
        let crossed = self.accumulate(delta, state);
        self.util_avg = self.util_sum / self.divider();
        if self.load_sum | self.load_avg != 0 {
            self.load_avg = self.load_sum / self.divider();
        }
        crossed
    }

    /// `accumulate_sum`.
    fn accumulate(&mut self, delta: u64, s: State) -> bool {
        let mut contrib = delta; // no period crossed: delta < 1024
        let total = delta + self.period_contrib;
        let periods = total / 1024;
        if periods > 0 {
            self.runnable_sum = decay_load(self.runnable_sum, periods);
            self.usage_sum = decay_load(self.usage_sum, periods);
            self.period_sum = decay_load(self.period_sum, periods);
            self.util_sum = decay_load(self.util_sum, periods);
            self.runnable_util_sum = decay_load(self.runnable_util_sum, periods);
            self.load_sum = decay_load(self.load_sum, periods);
            contrib = accumulate_segments(periods, 1024 - self.period_contrib, total % 1024);
        }
        self.period_contrib = total % 1024;
        // frequency invariance scales the chunk (cap_scale), CPU invariance the running sum;
        // the 3.x sums have their own frequency scale and none for the CPU
        let scaled = (contrib * s.freq_scale) >> 10;
        let load_scaled = (contrib * s.load_freq_scale) >> 10;
        self.period_sum += contrib;
        if s.runnable {
            self.runnable_sum += load_scaled;
            self.runnable_util_sum += scaled * s.cpu_scale * s.nr_runnable.max(1);
        }
        if s.running {
            self.usage_sum += load_scaled;
            self.util_sum += scaled * s.cpu_scale;
        }
        // 5.10: `if (load) sa->load_sum += load * contrib`, the load not scaled by frequency
        if s.runnable && s.load > 0 {
            self.load_sum += contrib * s.load;
        }
        periods > 0
    }

    /// Today's `runnable_avg`, computed where it is read (util_est at a sleep, the runnable
    /// boost), not at every update.
    pub fn runnable_util_avg(&self) -> u64 {
        self.runnable_util_sum / self.divider()
    }

    /// `get_pelt_divider`: `LOAD_AVG_MAX - 1024 + period_contrib`.
    pub fn divider(&self) -> u64 {
        LOAD_AVG_MAX - 1024 + self.period_contrib
    }

    /// The big.LITTLE MP metric, 0..=1023: `runnable·1024/(period+1)` (LSK-MP 0002).
    pub fn load_avg_ratio(&self) -> u64 {
        self.runnable_sum * SCALE / (self.period_sum + 1)
    }

    /// The 3.x entity load (`__update_task_entity_contrib`, `load_avg_contrib`):
    /// `runnable·weight/(period+1)`, what a run queue's `runnable_load_avg` sums.
    pub fn load_avg_contrib(&self, weight: u64) -> u64 {
        self.runnable_sum * weight / (self.period_sum + 1)
    }

    /// Share of the runnable time spent running, ·1024 (HMP's "starving" test, LSK-MP 0021).
    pub fn usage_ratio(&self) -> u64 {
        self.usage_sum * SCALE / (self.runnable_sum + 1)
    }

    /// `attach_entity_load_avg` (utilisation part): `se` joins this run queue's signal.
    pub fn attach(&mut self, se: &mut SchedAvg) {
        se.last_update_ns = self.last_update_ns;
        se.period_contrib = self.period_contrib;
        se.util_sum = se.util_avg * self.divider();
        self.util_avg += se.util_avg;
        self.util_sum += se.util_sum;
    }

    /// `detach_entity_load_avg` (utilisation part): `se` leaves this run queue's signal
    /// (`sub_positive`, and the sum kept consistent with the average).
    pub fn detach(&mut self, se: &SchedAvg) {
        self.util_avg = self.util_avg.saturating_sub(se.util_avg);
        self.util_sum = self.util_sum.saturating_sub(se.util_sum).max(self.util_avg * (LOAD_AVG_MAX - 1024));
    }

    /// `attach_entity_load_avg` (load part): an entity whose load is `load_avg` joins this run
    /// queue's load signal.
    pub fn attach_load(&mut self, load_avg: u64) {
        self.load_avg += load_avg;
        self.load_sum += load_avg * self.divider();
    }

    /// `detach_entity_load_avg` (load part), kept consistent as `detach` keeps the utilisation.
    pub fn detach_load(&mut self, load_avg: u64) {
        self.load_avg = self.load_avg.saturating_sub(load_avg);
        self.load_sum =
            self.load_sum.saturating_sub(load_avg * self.divider()).max(self.load_avg * (LOAD_AVG_MAX - 1024));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUSY: State = State {
        runnable: true,
        running: true,
        freq_scale: SCALE,
        cpu_scale: SCALE,
        load_freq_scale: SCALE,
        load: 0,
        nr_runnable: 1,
    };
    /// One PELT period, ns.
    const PERIOD_NS: u64 = 1024 * 1024;

    #[test]
    fn decay_halves_every_32_periods() {
        // 1024 >> 1 = 512, then · 0xffffffff >> 32 truncates to 511, as in the kernel
        assert_eq!(decay_load(1024, 32), 511);
        assert_eq!(decay_load(1 << 20, 64), (1 << 18) - 1);
        // y = 0xfa83b2da / 2^32 = 0.978572: 1024 -> 1002
        assert_eq!(decay_load(1024, 1), 1002);
        assert_eq!(decay_load(u64::MAX, 32 * 63 + 1), 0);
    }

    #[test]
    fn load_avg_max_is_the_fixed_point_of_the_recurrence() {
        // max = 1024 + decay(max, 1), with truncation, iterated from 0 (the reference's [D])
        let mut max = 0;
        for _ in 0..400 {
            max = 1024 + decay_load(max, 1);
        }
        assert_eq!(max, LOAD_AVG_MAX);
        // a stretch of p whole periods contributes Σ_{k=1..p} 1024·y^k: for p beyond 63·32
        // that is LOAD_AVG_MAX - 1024
        assert_eq!(accumulate_segments(3000, 1024, 0), LOAD_AVG_MAX - 1024);
    }

    #[test]
    fn a_run_queue_runnable_avg_counts_each_queued_task() {
        // one period with two tasks queued, one running: util_sum gets 1002·1024 (the ramp
        // below), the runnable sum twice that; each averaged over 47742 - 1024 + 0: 21 and 43
        let mut rq = SchedAvg::default();
        rq.update(PERIOD_NS, State { nr_runnable: 2, ..BUSY });
        assert_eq!(rq.util_avg, 1002 * 1024 / (LOAD_AVG_MAX - 1024));
        assert_eq!(rq.runnable_util_avg(), 2 * 1002 * 1024 / (LOAD_AVG_MAX - 1024));
        assert_eq!((rq.util_avg, rq.runnable_util_avg()), (21, 43));
        // a task (nr_runnable 1, or 0 as State::IDLE's default) counts once
        let mut task = SchedAvg::default();
        task.update(PERIOD_NS, State { nr_runnable: 0, ..BUSY });
        assert_eq!(task.runnable_util_avg(), task.util_avg);
    }

    #[test]
    fn a_task_ramping_from_zero() {
        // one period busy from zero: contrib = decay(1024, 1) + (47742 - decay(47742, 1) - 1024)
        // = 1002 + (47742 - 46718 - 1024) = 1002; util = 1002·1024 / (47742 - 1024) = 21
        let mut a = SchedAvg::default();
        assert!(a.update(PERIOD_NS, BUSY));
        assert_eq!((a.util_sum, a.util_avg, a.period_contrib), (1002 * 1024, 21, 0));
        // 32 periods (33.55 ms): about half of LOAD_AVG_MAX
        let mut a = SchedAvg::default();
        a.update(32 * PERIOD_NS, BUSY);
        let expected = 1024 * (LOAD_AVG_MAX - decay_load(LOAD_AVG_MAX, 32) - 1024 + decay_load(1024, 32));
        assert_eq!(a.util_sum, expected);
        assert!((a.util_avg as i64 - 512).abs() <= 12, "{}", a.util_avg);
        // updating every millisecond or once gives the same signal up to truncation
        let mut b = SchedAvg::default();
        for k in 1..=32 {
            b.update(k * PERIOD_NS, BUSY);
        }
        assert!((b.util_avg as i64 - a.util_avg as i64).abs() <= 1);
    }

    #[test]
    fn a_task_decaying_while_asleep() {
        let mut a = SchedAvg::default();
        a.update(1000 * PERIOD_NS, BUSY);
        // saturated, at a period boundary: util_sum = (LOAD_AVG_MAX - 1024)·1024 and the divider
        // is LOAD_AVG_MAX - 1024: util = 1024 exactly
        assert_eq!((a.util_sum, a.util_avg), ((LOAD_AVG_MAX - 1024) * 1024, 1024));
        a.update(1032 * PERIOD_NS, State::IDLE);
        let decayed = decay_load((LOAD_AVG_MAX - 1024) * 1024, 32);
        assert_eq!((a.util_sum, a.util_avg), (decayed, decayed / (LOAD_AVG_MAX - 1024)));
        assert_eq!(a.util_avg, 511);
        // the 3.x ratio of a long-idle task: the runnable sum decays, the period sum does not
        assert_eq!(a.load_avg_ratio(), a.runnable_sum * 1024 / (a.period_sum + 1));
        assert!(a.load_avg_ratio() < 530 && a.load_avg_ratio() > 490);
    }

    #[test]
    fn a_periodic_task_at_25_percent() {
        // 1 period busy, 3 idle, for long: the ratio settles around 256 and wobbles with the
        // phase; averaged over a cycle it is 256 within the truncation
        let mut a = SchedAvg::default();
        let mut t = 0;
        let mut ratios = vec![];
        for cycle in 0..300 {
            t += PERIOD_NS;
            a.update(t, BUSY);
            if cycle >= 299 {
                ratios.push(a.load_avg_ratio());
            }
            t += 3 * PERIOD_NS;
            a.update(t, State::IDLE);
            if cycle >= 299 {
                ratios.push(a.load_avg_ratio());
            }
        }
        // after the busy period: 1024·(1 - y)/(1 - y^4)·... by the recurrence; bounds by hand:
        // peak ≈ 1024·0.2628 = 269, trough ≈ 269·y^3 = 252
        assert!((262..=275).contains(&ratios[0]), "{ratios:?}");
        assert!((246..=258).contains(&ratios[1]), "{ratios:?}");
    }

    #[test]
    fn invariance_scales_the_chunks() {
        // an A7 at 1.4 of 1.4 GHz (scale 1024) with capacity 377 saturates at 377
        let a7 = State { cpu_scale: 377, ..BUSY };
        let mut a = SchedAvg::default();
        a.update(1000 * PERIOD_NS, a7);
        assert_eq!(a.util_avg, 377);
        // half the frequency: half the running sums, but the period is unscaled
        let half = State { freq_scale: 512, load_freq_scale: 512, ..BUSY };
        let mut b = SchedAvg::default();
        b.update(1000 * PERIOD_NS, half);
        assert_eq!(b.load_avg_ratio(), 512 * b.period_sum / (b.period_sum + 1));
    }

    #[test]
    fn attach_and_detach_move_utilisation() {
        let mut rq = SchedAvg::default();
        let mut se = SchedAvg { util_avg: 300, ..Default::default() };
        rq.attach(&mut se);
        assert_eq!((rq.util_avg, se.util_sum), (300, 300 * (LOAD_AVG_MAX - 1024)));
        rq.detach(&se);
        assert_eq!(rq.util_avg, 0);
        let new = SchedAvg::new_task(5);
        assert_eq!((new.load_avg_ratio(), new.last_update_ns), (1023, 5));
        // load moves the same way, in load units
        rq.attach_load(1024);
        assert_eq!((rq.load_avg, rq.load_sum), (1024, 1024 * rq.divider()));
        rq.detach_load(2000);
        assert_eq!((rq.load_avg, rq.load_sum), (0, 0));
    }

    #[test]
    fn a_run_queue_load_follows_its_weight() {
        // a group run queue holding 2048 of weight for long: load_avg 2048; none of it while
        // the same time passes without the weight (blocked load decays like utilisation)
        let loaded = State { load: 2048, ..BUSY };
        let mut a = SchedAvg::default();
        a.update(1000 * PERIOD_NS, loaded);
        assert_eq!(a.load_avg, 2048);
        a.update(1032 * PERIOD_NS, State::IDLE);
        assert_eq!(a.load_avg, decay_load((LOAD_AVG_MAX - 1024) * 2048, 32) / (LOAD_AVG_MAX - 1024));
        // tasks and the CPU's own run queue keep none
        let mut b = SchedAvg::default();
        b.update(1000 * PERIOD_NS, BUSY);
        assert_eq!((b.load_sum, b.load_avg), (0, 0));
    }
}
