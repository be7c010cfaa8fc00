/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cpufreq_anti_snoop: what the module's files share. anti_snoop_gov.c is the governor
 * (policies, sampling, tunables, the model), anti_snoop_counters.c the perf counters,
 * anti_snoop_debugfs.c the statistics and the test hook; anti_snoop_core.c decides.
 */
#ifndef ANTI_SNOOP_H
#define ANTI_SNOOP_H

#include <linux/cpufreq.h>
#include <linux/mutex.h>
#include <linux/workqueue.h>

#include "anti_snoop_core.h"

#define AS_GOVERNOR_NAME "anti_snoop"
/* Clusters (one cpufreq policy each) the module tells apart. */
#define AS_MAX_CLUSTERS AS_MAX_TREES
/* Threads whose counters one sample may carry. */
#define AS_MAX_THREADS 256

/* The tunables, in sysfs under the governor's directory. */
struct as_gov_tunables {
	struct gov_attr_set attr_set;
	struct as_tunables t;
	u64 default_rate_us; /* the last started policy's default sampling rate */
};

/* What a policy's sample cost, from ktime_get. */
struct as_cost {
	u64 samples;
	u64 total_ns;
	u64 min_ns;
	u64 max_ns;
};

/* One policy governed. */
struct as_gov_policy {
	struct cpufreq_policy *policy;
	u32 cluster;		    /* index into the module's clusters (cluster_first_cpus) */
	const struct as_tree *tree; /* NULL: the model has none for it (refused at init) */
	struct as_gov_tunables *tunables;
	struct list_head tunables_hook;
	/* guards everything below: the sample work, limits and the test hook */
	struct mutex lock;
	struct delayed_work work;
	bool started;
	struct as_policy core;
	/* cumulative per-CPU times at the previous sample, by position in related_cpus, µs */
	u32 ncpus;
	u32 *cpu_ids;
	u64 *prev_wall_us, *prev_idle_us, *prev_nice_us;
	/* this sample's inputs (room for the counters the module may hold) */
	struct as_cpu_in *cpus;
	struct as_port_in ports[AS_MAX_CLUSTERS];
	struct as_thread_in threads[AS_MAX_THREADS];
	/* the test hook's own tunables (a feed's T line) */
	struct as_tunables hook_tunables;
	bool hook_defined;
};

/* anti_snoop_gov.c */
extern struct mutex as_global_lock;
extern struct as_gov_policy *as_active[AS_MAX_CLUSTERS]; /* started policies, by cluster */
extern const struct as_model *as_model;
extern bool as_test_hook;
u32 as_sorted_table(struct cpufreq_policy *policy, u32 *opps, u32 max);

/* anti_snoop_counters.c */
int as_counters_init(u32 nclusters, const int *cci_ports);
void as_counters_exit(void);
bool as_counters_cci_ok(void);
/* This sample's CCI ports and threads for the policy of cluster `reader`, as deltas since its
 * previous call; returns the number of ports, threads in *nthreads. */
u32 as_counters_read(u32 reader, struct as_port_in *ports, struct as_thread_in *threads, u32 max_threads,
		     u32 *nthreads);
/* The `tasks` tunable: "PID" adds the threads of a process, "-PID" removes them, "clear". */
int as_tasks_store(const char *buf);
ssize_t as_tasks_show(char *buf);
u32 as_cluster_of_cpu(int cpu);

/* anti_snoop_debugfs.c */
int as_debugfs_init(void);
void as_debugfs_exit(void);
void as_cost_add(struct as_cost *c, u64 ns);
/* per cluster: live samples whole, their counter and time reads alone, fed decisions */
extern struct as_cost as_live_cost[AS_MAX_CLUSTERS], as_read_cost[AS_MAX_CLUSTERS], as_hook_cost[AS_MAX_CLUSTERS];

#endif /* ANTI_SNOOP_H */
