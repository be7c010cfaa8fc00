//! The board's kernel as the engine keeps it when the platform describes it (`[kernel]`):
//! where device and broadcast interrupts go (`kernel::irq`), the workload's interrupt streams,
//! the account of interrupt work per source and CPU, the kernel threads with the work queued
//! for each (`kernel::kthreads`) and the kernel's per-CPU timers. The flows that charge this
//! work are in `flow::kernel`.

use crate::kernel::boot::BootOptions;
use crate::kernel::irq::{irq_cpu, Account, InterruptReport, Streams};
use crate::kernel::kthreads::{kthreads, next_expiry_us, Kthread, Pending};
use crate::platform::{KernelSetup, Platform};
use crate::random::Rng;
use crate::workload::IrqStream;

/// A kernel thread of the run: what it is, its thread, the event it sleeps on, its queue.
#[derive(Debug, Clone)]
struct Slot {
    kthread: Kthread,
    thread: usize,
    event: usize,
    pending: Pending,
}

/// One interrupt of a workload stream, as the flow charges it.
#[derive(Debug, Clone)]
pub struct DeviceIrq {
    /// The device (the account's source).
    pub device: String,
    /// Its handler and softirq, reference µs (the entry and exit are `entry_us`).
    pub handler_us: f64,
    pub softirq: Option<(String, f64)>,
    /// The semaphore its handler posts this time, if any.
    pub posts: Option<usize>,
}

pub struct Interrupts<'a> {
    setup: &'a KernelSetup,
    hz: u32,
    streams: Vec<IrqStream>,
    next: Streams,
    /// Per stream: the semaphore it posts (the workload's phases wait on it).
    posts: Vec<Option<usize>>,
    device_cpu: usize,
    broadcast_cpu: Option<usize>,
    account: Account,
    slots: Vec<Slot>,
    /// Kernel threads to wake at the next event: (slot, the CPU that queued the work).
    to_wake: Vec<(usize, Option<usize>)>,
    /// Per kernel timer, per CPU: its next expiry, µs.
    timer_due_us: Vec<Vec<f64>>,
    /// Per CPU: the time of its latest local timer interrupt (one handles every timer due).
    last_timer_irq_us: Vec<f64>,
}

impl<'a> Interrupts<'a> {
    /// The kernel of `platform` (`None` without `[kernel]`) booted with `boot` on the `online`
    /// CPUs, with the workload's interrupt `streams`; `kthread(name, event)` finds a kernel
    /// thread and its event, `semaphore(name)` a semaphore the workload's phases use.
    pub fn new(
        platform: &'a Platform,
        streams: &[IrqStream],
        online: &[bool],
        boot: &BootOptions,
        rng: &mut Rng,
        kthread: impl Fn(&str, &str) -> Option<(usize, usize)>,
        semaphore: impl Fn(&str) -> Option<usize>,
    ) -> Option<Interrupts<'a>> {
        let setup = platform.kernel.as_ref()?;
        let ncpus = platform.ncpus();
        let device_cpu = irq_cpu(boot.irqaffinity.as_deref(), online);
        let broadcast_cpu = setup.broadcast_timer.as_ref().map(|_| device_cpu);
        let slots = kthreads(platform)
            .into_iter()
            .filter_map(|k| {
                let (thread, event) = kthread(&k.name(), &k.event())?;
                Some(Slot { kthread: k, thread, event, pending: Pending::default() })
            })
            .collect();
        let timer_due_us = setup
            .timers
            .iter()
            .map(|t| {
                (0..ncpus).map(|cpu| next_expiry_us(0.0, t.period_ms, t.round_jiffies, cpu, platform.hz)).collect()
            })
            .collect();
        Some(Interrupts {
            setup,
            hz: platform.hz,
            streams: streams.to_vec(),
            next: Streams::new(streams, rng),
            posts: streams.iter().map(|s| s.posts.as_deref().and_then(&semaphore)).collect(),
            device_cpu,
            broadcast_cpu,
            account: Account::new(ncpus, device_cpu, broadcast_cpu),
            slots,
            to_wake: Vec::new(),
            timer_due_us,
            last_timer_irq_us: vec![f64::NAN; ncpus],
        })
    }

    pub fn setup(&self) -> &KernelSetup {
        self.setup
    }

    /// The CPU device interrupts go to.
    pub fn device_cpu(&self) -> usize {
        self.device_cpu
    }

    /// The CPU the broadcast timer's interrupt goes to, and its handler, reference µs.
    pub fn broadcast(&self) -> Option<(usize, f64)> {
        let device = self.setup.device(self.setup.broadcast_timer.as_deref()?)?;
        Some((self.broadcast_cpu?, device.handler_us))
    }

    // ---- device interrupts --------------------------------------------------------------------

    /// The next interrupt of any stream, µs.
    pub fn next_irq_us(&self) -> f64 {
        self.next.earliest_us()
    }

    /// The next stream interrupt due by `by_us`, fired: what its handler does.
    pub fn fire_due(&mut self, by_us: f64, rng: &mut Rng) -> Option<DeviceIrq> {
        let i = (0..self.next.len())
            .filter(|&i| self.next.next_us(i) <= by_us)
            .min_by(|&a, &b| self.next.next_us(a).total_cmp(&self.next.next_us(b)).then(a.cmp(&b)))?;
        let stream = &self.streams[i];
        let n = self.next.fire(i, stream, rng);
        let device = self.setup.device(&stream.device).expect("checked against the platform");
        Some(DeviceIrq {
            device: device.name.clone(),
            handler_us: device.handler_us,
            softirq: device.softirq.clone().map(|name| (name, device.softirq_us)),
            posts: self.posts[i].filter(|_| n.is_multiple_of(stream.every)),
        })
    }

    /// `cpu` takes a local timer interrupt at `now_us`: false if it took one at this instant
    /// already (one interrupt runs every timer due).
    pub fn timer_irq_once(&mut self, cpu: usize, now_us: f64) -> bool {
        let first = self.last_timer_irq_us[cpu] != now_us;
        self.last_timer_irq_us[cpu] = now_us;
        first
    }

    /// `source` ran on `cpu` for `s` seconds.
    pub fn account(&mut self, source: &str, cpu: usize, s: f64) {
        self.account.add(source, cpu, s);
    }

    pub fn report(&self) -> InterruptReport {
        self.account.report().clone()
    }

    // ---- kernel threads -----------------------------------------------------------------------

    fn slot_of(&self, k: Kthread) -> Option<usize> {
        self.slots.iter().position(|s| s.kthread == k)
    }

    /// Queues `work_us` for `k`, by `waker` (the CPU that queued it; `None`: its timer): it is
    /// woken at the next event if it was not already.
    pub fn queue(&mut self, k: Kthread, work_us: f64, waker: Option<usize>) {
        let Some(slot) = self.slot_of(k) else { return };
        if self.slots[slot].pending.queue(work_us) {
            self.to_wake.push((slot, waker));
        }
    }

    pub fn kthreads_to_wake(&self) -> bool {
        !self.to_wake.is_empty()
    }

    /// The kernel threads to wake, as (thread, event, waker), in the order queued.
    pub fn take_wakes(&mut self) -> Vec<(usize, usize, Option<usize>)> {
        let wakes = std::mem::take(&mut self.to_wake);
        wakes.into_iter().map(|(s, w)| (self.slots[s].thread, self.slots[s].event, w)).collect()
    }

    /// If `t` is one of these kernel threads: the reference work of its pass now, µs (its
    /// queue taken, plus its own pass cost).
    pub fn pass_us(&mut self, t: usize) -> Option<f64> {
        let pass = self.setup.kworker_pass_us;
        let slot = self.slots.iter_mut().find(|s| s.thread == t)?;
        let work = slot.pending.take();
        Some(if slot.kthread == Kthread::RcuGp { work } else { work + pass })
    }

    /// `t` is one of these kernel threads and has work queued (it does not sleep).
    pub fn has_work(&self, t: usize) -> bool {
        self.slots.iter().any(|s| s.thread == t && s.pending.has_work())
    }

    /// The thread of kernel thread `k`.
    pub fn thread_of(&self, k: Kthread) -> Option<usize> {
        self.slot_of(k).map(|s| self.slots[s].thread)
    }

    // ---- the kernel's own timers --------------------------------------------------------------

    /// The earliest kernel-timer expiry on `cpu` that would interrupt it (`idle`: deferrable
    /// ones wait for its next wake-up), µs.
    pub fn next_timer_us(&self, cpu: usize, idle: bool) -> f64 {
        let timers = self.setup.timers.iter().zip(&self.timer_due_us);
        timers.filter(|(t, _)| !(idle && t.deferrable)).map(|(_, due)| due[cpu]).fold(f64::INFINITY, f64::min)
    }

    /// The kernel timers of `cpu` due by `by_us`: each re-armed from `now_us`, its work queued
    /// on the CPU's bound kworker (woken from `cpu`). Returns how many fired.
    pub fn run_timers(&mut self, cpu: usize, now_us: f64, by_us: f64) -> usize {
        let mut fired = 0;
        for i in 0..self.setup.timers.len() {
            if self.timer_due_us[i][cpu] > by_us {
                continue;
            }
            let t = &self.setup.timers[i];
            self.timer_due_us[i][cpu] = next_expiry_us(now_us, t.period_ms, t.round_jiffies, cpu, self.hz);
            let work_us = t.work_us;
            self.queue(Kthread::Bound(cpu), work_us, Some(cpu));
            fired += 1;
        }
        fired
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::SeedableRng;
    use crate::workload::IrqArrivals;

    fn tc2() -> Platform {
        Platform::builtin("tc2").unwrap()
    }

    #[test]
    fn device_interrupts_go_to_cpu0_unless_irqaffinity_moves_them() {
        let p = tc2();
        let mut rng = Rng::seed_from_u64(1);
        let none = |_: &str, _: &str| None;
        let i = Interrupts::new(&p, &[], &[true; 5], &BootOptions::default(), &mut rng, none, |_| None).unwrap();
        assert_eq!((i.device_cpu(), i.broadcast().map(|b| b.0)), (0, Some(0)));
        let boot = BootOptions::parse("irqaffinity=2-4", 5).unwrap();
        let i = Interrupts::new(&p, &[], &[true; 5], &boot, &mut rng, none, |_| None).unwrap();
        assert_eq!((i.device_cpu(), i.broadcast().map(|b| b.0)), (2, Some(2)));
        assert!(Interrupts::new(
            &Platform::builtin("exynos5422").unwrap(),
            &[],
            &[true; 8],
            &boot,
            &mut rng,
            none,
            |_| None
        )
        .is_none());
    }

    #[test]
    fn a_stream_posts_its_semaphore_every_nth_interrupt() {
        let p = tc2();
        let mut rng = Rng::seed_from_u64(1);
        let stream = IrqStream {
            device: "aaci".into(),
            arrivals: IrqArrivals::Periodic { period_us: 100.0 },
            start_us: 0.0,
            count: None,
            posts: Some("period".into()),
            every: 2,
        };
        let mut i =
            Interrupts::new(&p, &[stream], &[true; 5], &BootOptions::default(), &mut rng, |_, _| None, |_| Some(7))
                .unwrap();
        let first = i.fire_due(0.0, &mut rng).unwrap();
        assert_eq!((first.device.as_str(), first.handler_us, first.posts), ("aaci", 20.0, None));
        assert!(i.fire_due(50.0, &mut rng).is_none());
        assert_eq!(i.fire_due(100.0, &mut rng).unwrap().posts, Some(7));
        assert_eq!(i.next_irq_us(), 200.0);
    }

    #[test]
    fn kernel_timers_queue_work_on_their_cpus_bound_kworker_and_deferrable_ones_wait_for_a_wakeup() {
        let p = tc2();
        let mut rng = Rng::seed_from_u64(1);
        let kthread = |name: &str, _: &str| (name == "kworker/2:1").then_some((40, 3));
        let mut i = Interrupts::new(&p, &[], &[true; 5], &BootOptions::default(), &mut rng, kthread, |_| None).unwrap();
        assert_eq!(i.next_timer_us(2, true), f64::INFINITY, "vmstat_update is deferrable");
        let due = i.next_timer_us(2, false);
        assert_eq!(due, 940_000.0, "a whole second less the 6 jiffies of skew, rounded down");
        assert_eq!(i.run_timers(2, due, due), 1);
        assert_eq!(i.take_wakes(), vec![(40, 3, Some(2))]);
        assert_eq!(i.pass_us(40), Some(1.0 + 2.0));
        assert!(!i.has_work(40));
        assert_eq!(i.next_timer_us(2, false), 1_940_000.0);
    }
}
