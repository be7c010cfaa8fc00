//! The logical-CPU → physical-core map. At boot logical CPU i runs on core i (the platform's
//! CPU numbers). Cluster switching and the in-kernel switcher move logical CPUs onto cores of
//! another cluster at run time: the scheduler, the run queues and the threads stay with the
//! logical CPU, while speed, caches, power and the CCI port follow the core. A cpufreq policy
//! keeps its logical CPUs and sets the clock of its own cluster; translating a policy's
//! frequency onto another core type (the switcher's virtual OPP table) is the switching
//! modes' business.

use super::Engine;

impl Engine<'_> {
    /// Moves logical `cpu` onto physical `core`; the logical CPU that ran there takes `cpu`'s
    /// old core (the map stays one-to-one).
    pub fn move_cpu_to_core(&mut self, cpu: usize, core: usize) -> Result<(), String> {
        let ncpus = self.cpus.len();
        if cpu >= ncpus || core >= ncpus {
            return Err(format!(
                "cpu{cpu} -> core {core}: the platform has cpu0-{} and cores 0-{}",
                ncpus - 1,
                ncpus - 1
            ));
        }
        let other = self.sched.core_of.iter().position(|&k| k == core).expect("the map is one-to-one");
        if other == cpu {
            return Ok(());
        }
        self.integrate();
        self.update_util(cpu);
        self.update_util(other);
        let old_core = self.sched.core_of[cpu];
        self.sched.core_of[cpu] = core;
        self.sched.core_of[other] = old_core;
        let cluster_of_core =
            |k: usize| self.platform.clusters.iter().position(|c| c.cpus.contains(&k)).expect("validated");
        for logical in [cpu, other] {
            let c = cluster_of_core(self.sched.core_of[logical]);
            self.sched.cluster_of[logical] = c;
            self.sched.capacity[logical] = self.platform.cpu_capacity(c);
            self.trace_capacity(logical);
        }
        for (c, cpus) in self.sched.cpus_of_cluster.iter_mut().enumerate() {
            cpus.clear();
            cpus.extend((0..ncpus).filter(|&l| self.sched.cluster_of[l] == c));
        }
        self.dirty = true;
        Ok(())
    }

    /// The physical core logical `cpu` runs on.
    pub fn core_of(&self, cpu: usize) -> usize {
        self.sched.core_of[cpu]
    }

    /// Simulated time now, µs.
    pub fn now_us(&self) -> f64 {
        self.now_us
    }
}
