//! The model's mechanisms, each one module of state and pure functions with a narrow interface
//! (the engine composes them; none of them knows the event loop):
//!
//! - [`cache`]: miss ratios of a working set against L1/L2, time per instruction;
//! - [`tlb`]: page walks beyond a core's TLB reach and where their descriptors are read;
//! - [`replacement`]: random replacement, shared by both: a line's miss ratio and residency;
//! - [`code_class`]: compute cycles per instruction from a phase's instruction mix and a core
//!   type's per-class throughput;
//! - [`cci`]: snoops served at the snooped cluster's clock, speculative DRAM fetch, read
//!   trackers and their PMU counters;
//! - [`coherence`]: cache-line transfers between cores and clusters (shared read-modify-write
//!   data, a work pool's counter);
//! - [`dsu`]: the DynamIQ Shared Unit: the shared L3 at its own clock, the snoop filter's
//!   forwarded snoops, the clock voted by the clusters, the DSU domain's power;
//! - [`dram`]: latency under load, the bandwidth fixed point, DRAM power, latency noise;
//! - [`power`]: dynamic power C·V²·f·activity and leakage;
//! - [`energy`]: the one energy account, by rail, and the on-board sensors read from it;
//! - [`thermal`]: RC nodes and trip-point caps;
//! - [`idle`]: idle states (WFI, cluster power-down) and when they pay;
//! - [`pollution`]: the lines and TLB entries an interrupt handler and the thread it
//!   interrupts evict from each other (what a perf sample costs that thread).

pub mod cache;
pub mod cci;
pub mod code_class;
pub mod coherence;
pub mod dram;
pub mod dsu;
pub mod energy;
pub mod idle;
pub mod pollution;
pub mod power;
pub mod replacement;
pub mod thermal;
pub mod tlb;
