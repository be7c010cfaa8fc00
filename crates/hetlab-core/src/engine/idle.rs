//! cpuidle's state per CPU: when its current idle period began and what the next known wake-up
//! was then, whether its core is powered down, its recent idle periods and the menu governor's
//! correction factors (`model::idle`, `kernel::menu`). An idle core may power down when the menu
//! governor expects it to stay idle longer than its power-down state's target residency, and a
//! cluster when every CPU of it expects that (`CpuIdle::ClusterOff`); a CPU that wakes pays the
//! exit latency and the governor learns from how long the idle lasted (`menu_update`). The
//! power states themselves are the hardware's (`hardware`); the flows that enter and leave them
//! are in `flow`.

use crate::kernel::menu::{deep_states_allowed, exit_latency_allowed, CorrectionFactors, MenuRules};
use crate::model::idle::{power_down_pays, CpuIdle, IdleHistory};
use crate::sched::{CpuMask, Kernel};

/// Tasks waiting on I/O on a CPU (`nr_iowait_cpu`): the model has no block I/O, so none; the
/// correction factors' I/O half and the performance multiplier's I/O term never apply.
const NR_IOWAITERS: u32 = 0;

/// One CPU's cpuidle state.
#[derive(Debug, Clone, Default)]
struct CpuIdleState {
    /// Since when cpuidle has held this CPU's core powered down (its own state, not the
    /// cluster's); `None`: the core is powered.
    core_off_since_us: Option<f64>,
    /// When this CPU's current idle period began, while cpuidle may power it down.
    idle_since_us: Option<f64>,
    /// The distance to the next known wake-up when the current idle period began, µs (the
    /// menu governor's `next_timer_us`, which picks the correction factor's bucket).
    idle_next_timer_us: f64,
    /// Its recent idle periods, for the menu governor's prediction.
    history: IdleHistory,
    /// The menu governor's correction factors of this CPU.
    menu: CorrectionFactors,
}

pub struct Idle {
    mode: CpuIdle,
    /// The PM QoS `cpu_dma_latency` request, µs.
    cpu_dma_latency_us: Option<u32>,
    /// The menu.c of the kernel the placement models.
    rules: MenuRules,
    cpus: Vec<CpuIdleState>,
    /// The CPUs whose core powered down or up since `take_core_moves` (the model's loads read
    /// whether a core is off).
    core_moves: CpuMask,
}

impl Idle {
    pub fn new(ncpus: usize, mode: CpuIdle, cpu_dma_latency_us: Option<u32>, kernel: Kernel) -> Idle {
        let rules = match kernel {
            Kernel::V3_10 => MenuRules::V3_10,
            // 6.12's menu is taken as 5.10's (not re-read)
            Kernel::V5_10 | Kernel::V6_12 => MenuRules::V5_10,
        };
        let idle = CpuIdleState { idle_next_timer_us: f64::INFINITY, ..Default::default() };
        Idle { mode, cpu_dma_latency_us, rules, cpus: vec![idle; ncpus], core_moves: CpuMask::EMPTY }
    }

    /// cpuidle may use power-down states at all (`CpuIdle::ClusterOff`).
    pub fn powers_down(&self) -> bool {
        self.mode == CpuIdle::ClusterOff
    }

    /// The PM QoS request lets cpuidle leave WFI.
    pub fn deep_states_allowed(&self) -> bool {
        deep_states_allowed(self.cpu_dma_latency_us)
    }

    /// Since when `cpu`'s core is powered down, if it is.
    pub fn core_off_since_us(&self, cpu: usize) -> Option<f64> {
        self.cpus[cpu].core_off_since_us
    }

    /// When `cpu`'s current idle period began, if cpuidle follows one.
    pub fn idle_since_us(&self, cpu: usize) -> Option<f64> {
        self.cpus[cpu].idle_since_us
    }

    /// `cpu` begins an idle period at `idle_from_us`, its next known wake-up at
    /// `next_wakeup_us`.
    pub fn begin(&mut self, cpu: usize, idle_from_us: f64, next_wakeup_us: f64) {
        let st = &mut self.cpus[cpu];
        st.idle_since_us = Some(idle_from_us);
        st.idle_next_timer_us = next_wakeup_us - idle_from_us;
    }

    /// The idle period `cpu` was to begin never happens (kernel work ran on into a thread).
    pub fn cancel(&mut self, cpu: usize) {
        self.cpus[cpu].idle_since_us = None;
    }

    /// How long the menu governor expects idle `cpu`, idle since `idle_from_us`, to stay idle,
    /// µs: the distance to the next known wake-up scaled by the correction factor of its bucket,
    /// or the typical recent idle period where the last ones agree (a wake-up from another CPU,
    /// which no timer announces). 5.10 takes the shorter of the two; 3.10 takes the typical
    /// period whenever there is one, even past the timer (its `get_typical_interval` overwrites
    /// `predicted_us`; later kernels compare it with the timer first).
    fn predicted_idle_us(&self, cpu: usize, idle_from_us: f64, next_wakeup_us: f64) -> f64 {
        let next_timer_us = next_wakeup_us - idle_from_us;
        let st = &self.cpus[cpu];
        let corrected_us = st.menu.corrected_us(self.rules, next_timer_us, NR_IOWAITERS);
        let typical_us = st.history.typical_us();
        match self.rules {
            MenuRules::V3_10 => typical_us.unwrap_or(corrected_us),
            MenuRules::V5_10 => typical_us.map_or(corrected_us, |avg| corrected_us.min(avg)),
        }
    }

    /// Whether a state with exit latency `exit_latency_us` and target residency
    /// `target_residency_us` may be entered at `now_us` by `cpu`, idle since `idle_from_us` with
    /// its next known wake-up at `next_wakeup_us`: the residency test on the rest of the
    /// predicted idle, and the exit latency within the PM QoS limit and the prediction
    /// (`model::menu::exit_latency_allowed`).
    pub fn allows(
        &self,
        cpu: usize,
        idle_from_us: f64,
        now_us: f64,
        (exit_latency_us, target_residency_us): (u32, u32),
        next_wakeup_us: f64,
    ) -> bool {
        let predicted_end_us = idle_from_us + self.predicted_idle_us(cpu, idle_from_us, next_wakeup_us);
        power_down_pays(now_us, predicted_end_us, target_residency_us)
            && exit_latency_allowed(
                self.rules,
                exit_latency_us,
                predicted_end_us - now_us,
                NR_IOWAITERS,
                self.cpu_dma_latency_us,
            )
    }

    /// `cpu`'s core powers down from `from_us` on.
    pub fn core_off(&mut self, cpu: usize, from_us: f64) {
        self.cpus[cpu].core_off_since_us = Some(from_us);
        self.core_moves = self.core_moves.with(cpu);
    }

    /// `cpu`'s core is powered again; since when it was off, if it was.
    pub fn core_on(&mut self, cpu: usize) -> Option<f64> {
        self.core_moves = self.core_moves.with(cpu);
        self.cpus[cpu].core_off_since_us.take()
    }

    /// The CPUs whose core powered down or up since the last call.
    pub fn take_core_moves(&mut self) -> CpuMask {
        std::mem::replace(&mut self.core_moves, CpuMask::EMPTY)
    }

    /// `cpu` wakes at `now_us`: the idle period that ends, if cpuidle followed one (not one
    /// decided for the end of kernel work still running).
    pub fn end(&mut self, cpu: usize, now_us: f64) -> Option<f64> {
        self.cpus[cpu].idle_since_us.take().filter(|&since| since <= now_us)
    }

    /// `menu_update` for `cpu`, idle since `since_us` and woken at `now_us`, paying `exit_us`:
    /// the kernel measures the residency to the end of the exit, so the exit is in it.
    pub fn learn(&mut self, cpu: usize, since_us: f64, now_us: f64, exit_us: f64) {
        let residency_us = now_us - since_us + exit_us;
        let st = &mut self.cpus[cpu];
        let recorded_us =
            st.menu.update(self.rules, st.idle_next_timer_us, NR_IOWAITERS, residency_us, exit_us.round() as u32);
        st.history.record(recorded_us);
    }

    /// `cpu`'s correction factor of `bucket`.
    #[cfg(test)]
    pub fn correction_ratio(&self, cpu: usize, bucket: usize) -> f64 {
        self.cpus[cpu].menu.ratio(bucket)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Core-off of the Exynos 5422's A7 (exit latency, target residency), µs.
    const CORE_OFF: (u32, u32) = (300, 5000);

    #[test]
    fn a_long_known_idle_allows_power_down_and_a_short_one_does_not() {
        let idle = Idle::new(2, CpuIdle::ClusterOff, None, Kernel::V5_10);
        assert!(idle.allows(0, 0.0, 0.0, CORE_OFF, 100_000.0));
        assert!(!idle.allows(0, 0.0, 0.0, CORE_OFF, 1_000.0));
        // the PM QoS limit below the exit latency forbids it whatever the prediction
        let qos = Idle::new(2, CpuIdle::ClusterOff, Some(100), Kernel::V5_10);
        assert!(!qos.allows(0, 0.0, 0.0, CORE_OFF, 100_000.0));
        assert!(!Idle::new(1, CpuIdle::ClusterOff, Some(0), Kernel::V3_10).deep_states_allowed());
    }

    #[test]
    fn short_wakeups_teach_the_governor_to_expect_short_idles() {
        let mut idle = Idle::new(1, CpuIdle::ClusterOff, None, Kernel::V5_10);
        // the timer says 100 ms, but something wakes the CPU after 1 ms, again and again
        let mut now = 0.0;
        for _ in 0..20 {
            idle.begin(0, now, now + 100_000.0);
            now += 1_000.0;
            let since = idle.end(0, now).expect("an idle period");
            idle.learn(0, since, now, 0.0);
        }
        assert!(!idle.allows(0, now, now, CORE_OFF, now + 100_000.0));
        assert!(idle.correction_ratio(0, crate::kernel::menu::which_bucket(100_000.0, 0)) < 0.1);
    }

    #[test]
    fn an_idle_decided_ahead_ends_only_once_it_began() {
        let mut idle = Idle::new(1, CpuIdle::Wfi, None, Kernel::V3_10);
        assert!(!idle.powers_down());
        idle.begin(0, 50.0, 1000.0);
        assert_eq!(idle.end(0, 10.0), None);
        idle.begin(0, 5.0, 1000.0);
        assert_eq!(idle.end(0, 10.0), Some(5.0));
        idle.core_off(0, 7.0);
        assert_eq!((idle.core_on(0), idle.core_on(0)), (Some(7.0), None));
    }
}
