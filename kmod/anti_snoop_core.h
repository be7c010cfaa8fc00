/* SPDX-License-Identifier: GPL-2.0 */
/*
 * anti_snoop_core: the decision of hetlab's anti-snoop governor (LCTES'20 Algorithm 2) in C,
 * the one copy the kernel module runs and the user-space replay tests. It is a port of
 * crates/hetlab-core/src/governor/{anti_snoop,ondemand,dbs,freq_table}.rs and tree.rs, and
 * must decide exactly as they do (tests/test_kmod.py and
 * crates/hetlab-linux/tests/kmod_conformance.rs compare every sample).
 *
 * No floating point, no allocation, no libc; 64-bit divisions go through AS_DIV64 (the
 * kernel's div64_u64: a 32-bit ARM kernel has no __aeabi_uldivmod), and the tree's tests need
 * no division at all.
 * The host (kernel module or test) gathers the counts and times; the core holds per-policy
 * state between samples.
 */
#ifndef ANTI_SNOOP_CORE_H
#define ANTI_SNOOP_CORE_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stddef.h>
#include <stdint.h>
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
#endif

/* Limits of one model blob (a trained tree has a few dozen nodes). */
#define AS_MAX_TREES 4
#define AS_MAX_NODES 255
#define AS_MAX_INPUTS 4
#define AS_CLUSTER_NAME_LEN 16
#define AS_MODEL_NAME_LEN 32
/* Limits of one policy. */
#define AS_MAX_OPPS 64
#define AS_MAX_POLICY_CPUS 32

/* Feature codes of the blob (hetlab-core counters.rs). */
#define AS_FEATURE_CCI_CONGESTION 0 /* si_rrq_stall_tt_full / si_rrq_hs_any of a CCI port */
#define AS_FEATURE_MEMORY_ACCESS 1  /* bus_access / cpu_cycles of the threads that ran there */

/* One node. A split sends (num, den) left when num * 2^shift < c * den, or when the two are
 * equal and eq_left is set; den == 0 reads as the ratio 0 (num 0, den 1). In a float-mode tree
 * num and den are first rounded to doubles, as Rust's `num as f64` does; c and shift then
 * encode the midpoint between the threshold and the next double, so that the test is exactly
 * `(num as f64 / den as f64) <= threshold` (docs/kernel-module.md, "Exact thresholds"). */
struct as_node {
	u8 leaf;
	u8 feature; /* index into the tree's features */
	u8 shift;   /* 0..127 */
	u8 eq_left;
	u8 verdict; /* leaf: 1 increase_frequency, 0 decrease_frequency */
	u16 left, right;
	u64 c_lo, c_hi; /* c < 2^127 */
};

struct as_tree {
	char cluster[AS_CLUSTER_NAME_LEN + 1];
	u8 nfeatures;
	u8 features[AS_MAX_INPUTS];
	u8 float_mode;
	u16 nnodes;
	struct as_node nodes[AS_MAX_NODES];
};

struct as_model {
	char name[AS_MODEL_NAME_LEN + 1];
	u16 ntrees;
	struct as_tree trees[AS_MAX_TREES];
};

/* Parses a blob written by `hetlab export-model --kernel`; 0, or -1 with the reason in why. */
int as_model_parse(struct as_model *m, const u8 *blob, size_t len, const char **why);
/* The tree of the cluster named name, or NULL. */
const struct as_tree *as_model_tree(const struct as_model *m, const char *name);
/* 1 for increase_frequency: x[i] = (num, den) of the tree's i-th feature. */
int as_tree_increase(const struct as_tree *t, const u64 num[], const u64 den[]);

/* The cpufreq core's relations on an ascending table. */
enum as_relation { AS_RELATION_L, AS_RELATION_H, AS_RELATION_C };
u32 as_resolve(const u32 *opps, u32 nopps, u32 target, enum as_relation r, u32 min, u32 max);

/* The dbs governors' default sampling rate (Linux 4.14..6.7): max(2 ticks, transition delay). */
u64 as_default_sampling_rate_us(u64 tick_us, u32 transition_latency_ns);

struct as_tunables {
	u64 sampling_rate_us; /* 0: the default, resolved at start */
	u32 up_threshold;
	u32 sampling_down_factor;
	u32 ignore_nice_load;
	u32 freq_step_opps; /* Algorithm 2's cpu_freq_step, in OPPs (hetlab's governor: 1) */
};

#define AS_DEFAULT_UP_THRESHOLD 95 /* MICRO_FREQUENCY_UP_THRESHOLD */
#define AS_MAX_SAMPLING_DOWN_FACTOR 100000

void as_tunables_default(struct as_tunables *t);

/* What a policy's sample sees (hetlab-core's PolicyView, the parts the governor reads). */
struct as_cpu_in {
	u32 cpu;
	u64 wall_us, idle_us, nice_us;
};
struct as_port_in {
	u32 cluster; /* cluster (policy index) attached to the port */
	u64 hs_any, stall;
};
struct as_thread_in {
	u32 cluster; /* cluster the counts were taken on */
	u64 bus_access, cpu_cycles;
};
struct as_limits {
	u32 cur_khz;
	u32 policy_min_khz, policy_max_khz;
	u32 thermal_cap_khz;
};
struct as_sample_in {
	struct as_limits lim;
	u32 ncpus;
	const struct as_cpu_in *cpus;
	u32 nports;
	const struct as_port_in *ports;
	u32 nthreads;
	const struct as_thread_in *threads;
};

struct as_cpu_dbs {
	u32 cpu;
	u32 prev_load;
};

/* Per-policy state. */
struct as_policy {
	u32 index; /* the policy's cluster index, compared with the ports' clusters */
	u32 opps[AS_MAX_OPPS];
	u32 nopps;
	u32 cpuinfo_min_khz, cpuinfo_max_khz;
	u64 default_sampling_rate_us;
	u64 sampling_rate_us;
	u32 rate_mult;
	u32 ncpu_state;
	struct as_cpu_dbs dbs[AS_MAX_POLICY_CPUS];
	u32 last_load;
};

struct as_decision {
	u32 target_khz;
	u64 next_sample_us;
	u32 load;
	u8 consulted; /* the tree was asked (load at or below up_threshold, another cluster's port) */
	u8 increase;
	u32 other_cluster; /* the cluster whose counters decided, when consulted */
};

/* Sets up a policy: its ascending table (at most AS_MAX_OPPS), cpuinfo limits and the default
 * sampling rate; 0 or -1 (table too long or not ascending). */
int as_policy_init(struct as_policy *p, u32 index, const u32 *opps, u32 nopps, u32 cpuinfo_min_khz,
		   u32 cpuinfo_max_khz, u64 default_sampling_rate_us);
/* Governor start: history forgotten, the current frequency kept within the limits. */
struct as_decision as_policy_start(struct as_policy *p, const struct as_tunables *t, const struct as_limits *lim);
/* One sample: ondemand's load rule, and below up_threshold the tree (NULL: ondemand alone). */
int as_policy_sample(struct as_policy *p, const struct as_tunables *t, const struct as_tree *tree,
		     const struct as_sample_in *in, struct as_decision *out);

#endif /* ANTI_SNOOP_CORE_H */
