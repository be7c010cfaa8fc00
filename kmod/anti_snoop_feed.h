/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The recorded counter sequence ("feed"): one line per event, read by the user-space replay
 * (kmod/test/core_replay.c) and by the module's debugfs test hook alike, so both feed the core
 * the same numbers. Written by crates/hetlab-linux/tests/kmod_conformance.rs.
 *
 *   hetlab-kmod-feed 1
 *   P policy cluster cpuinfo_min cpuinfo_max tick_us latency_ns nopps opp...      a policy
 *   T policy sampling_rate_us up_threshold sampling_down_factor ignore_nice freq_step   tunables
 *   B policy cur min max thermal_cap                                             governor start
 *   S policy cur min max thermal_cap ncpus (cpu wall_us idle_us nice_us)...
 *     nports (cluster hs_any stall)... nthreads (cluster bus_access cpu_cycles)...  a sample
 *
 * Frequencies in kHz; '#' starts a comment line. The answer to every B and S line is
 * "policy target_khz next_sample_us".
 */
#ifndef ANTI_SNOOP_FEED_H
#define ANTI_SNOOP_FEED_H

#include "anti_snoop_core.h"

#define AS_FEED_HEADER "hetlab-kmod-feed 1"

struct as_feed_line {
	char kind; /* 'P', 'T', 'B', 'S', or 0 for a blank or comment line */
	u32 policy;
	/* P */
	char cluster[AS_CLUSTER_NAME_LEN + 1];
	u32 cpuinfo_min_khz, cpuinfo_max_khz, latency_ns, nopps;
	u64 tick_us;
	u32 opps[AS_MAX_OPPS];
	/* T */
	struct as_tunables tunables;
	/* B, S: the sample's arrays point into the caller's buffers */
	struct as_sample_in in;
};

/* The caller's room for one S line. */
struct as_feed_room {
	struct as_cpu_in *cpus;
	u32 max_cpus;
	struct as_port_in *ports;
	u32 max_ports;
	struct as_thread_in *threads;
	u32 max_threads;
};

/* Parses one line (without its newline); 0, or -1 with the reason in why. */
int as_feed_parse(const char *line, struct as_feed_line *out, const struct as_feed_room *room, const char **why);

#endif /* ANTI_SNOOP_FEED_H */
