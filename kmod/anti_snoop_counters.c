// SPDX-License-Identifier: GPL-2.0
/*
 * The counters anti_snoop reads, as kernel perf counters through exported functions only
 * (perf_event_create_kernel_counter, perf_event_read_value, perf_event_release_kernel; the
 * faster perf_event_read_local is not exported):
 *
 * - the CCI-400 PMU: per cluster, si_rrq_hs_any and si_rrq_stall_tt_full on its slave port,
 *   counted system-wide on the CPU the PMU counts on (its sysfs cpumask);
 * - per thread, without patching task_struct: a per-task kernel counter pair (CPU_CYCLES 0x11,
 *   BUS_ACCESS 0x19) on each thread of the processes written to the `tasks` tunable. Per-CPU
 *   counters read at each context switch would need perf_event_read_local (a read from the
 *   scheduler's atomic context; perf_event_read_value sleeps), so they are not an option for a
 *   module. On big.LITTLE each core PMU counts only on its own CPUs: with core_pmu_types given,
 *   a thread has one pair per cluster's PMU and its counts fall to the cluster they were taken
 *   on; without, one PERF_TYPE_RAW pair whose counts go to the cluster of the CPU the thread
 *   last ran on (task_cpu), as hetlab's simulator and hetlabd's per-thread mode attribute them.
 *
 * pmu=software opens software events in their place (context switches, page faults, task
 * clock), as hetlabd's --pmu software does, so the whole read path runs where there is no such
 * hardware (a QEMU guest).
 *
 * Each policy keeps its own baseline of every counter: a sample sees what changed since that
 * policy's previous sample.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/pid.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

#include "anti_snoop.h"

static char *pmu = "hardware";
module_param(pmu, charp, 0444);
MODULE_PARM_DESC(pmu, "hardware (ARM core PMUs, CCI-400) or software (software events stand in, for tests)");

static int cci_pmu_type = -1;
module_param(cci_pmu_type, int, 0444);
MODULE_PARM_DESC(cci_pmu_type, "perf type of the CCI-400 PMU (/sys/bus/event_source/devices/CCI_400*/type)");

static int cci_cpu;
module_param(cci_cpu, int, 0444);
MODULE_PARM_DESC(cci_cpu, "the CPU the CCI-400 PMU counts on (its cpumask; default 0)");

static int core_pmu_types[AS_MAX_CLUSTERS];
static int n_core_pmu_types;
module_param_array(core_pmu_types, int, &n_core_pmu_types, 0444);
MODULE_PARM_DESC(core_pmu_types, "perf type of each cluster's core PMU, in cluster order (default: PERF_TYPE_RAW)");

#define ARMV7_CPU_CYCLES 0x11
#define ARMV7_BUS_ACCESS 0x19
#define CCI_SI_RRQ_HS_ANY 0x00
#define CCI_SI_RRQ_STALL_TT_FULL 0x09
#define AS_MAX_TASKS 256

/* One counted event and each policy's value of it at its previous sample. */
struct counter {
	struct perf_event *event;
	u64 base[AS_MAX_CLUSTERS];
};

struct watched {
	struct task_struct *task; /* a reference held */
	pid_t tgid;
	/* per counted PMU: cycles, bus accesses */
	struct counter cycles[AS_MAX_CLUSTERS], bus[AS_MAX_CLUSTERS];
};

static DEFINE_MUTEX(counters_lock);
static u32 nclusters;
static bool software;
static struct counter cci_hs[AS_MAX_CLUSTERS], cci_stall[AS_MAX_CLUSTERS];
static bool cci_ok;
static struct watched *tasks[AS_MAX_TASKS];
static u32 ntasks;

static struct perf_event *open_counter(u32 type, u64 config, int cpu, struct task_struct *task)
{
	struct perf_event_attr attr = {
		.type = type,
		.size = sizeof(attr),
		.config = config,
	};

	return perf_event_create_kernel_counter(&attr, cpu, task, NULL, NULL);
}

static void close_counter(struct counter *c)
{
	if (c->event && !IS_ERR(c->event))
		perf_event_release_kernel(c->event);
	c->event = NULL;
}

static u64 read_counter(struct counter *c)
{
	u64 enabled, running;

	return c->event ? perf_event_read_value(c->event, &enabled, &running) : 0;
}

/* The change of c since reader's previous read. */
static u64 delta(struct counter *c, u32 reader)
{
	u64 v = read_counter(c), d = v - c->base[reader];

	c->base[reader] = v;
	return d;
}

bool as_counters_cci_ok(void)
{
	return cci_ok;
}

int as_counters_init(u32 n, const int *ports)
{
	u32 c;
	long err = 0;

	nclusters = n;
	software = strcmp(pmu, "software") == 0;
	if (!software && strcmp(pmu, "hardware") != 0) {
		pr_err("pmu=%s: use hardware or software\n", pmu);
		return -EINVAL;
	}
	if (!software && cci_pmu_type < 0)
		return 0; /* no CCI PMU named: the caller warns and runs as ondemand */
	for (c = 0; c < n && !err; c++) {
		u64 port = (u64)ports[c] << 5; /* arm-cci.c: source in config bits 5-7 */

		cci_hs[c].event = software ? open_counter(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, cci_cpu, NULL)
					   : open_counter(cci_pmu_type, port | CCI_SI_RRQ_HS_ANY, cci_cpu, NULL);
		cci_stall[c].event = software ? open_counter(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, cci_cpu, NULL)
					      : open_counter(cci_pmu_type, port | CCI_SI_RRQ_STALL_TT_FULL, cci_cpu, NULL);
		if (IS_ERR(cci_hs[c].event))
			err = PTR_ERR(cci_hs[c].event);
		else if (IS_ERR(cci_stall[c].event))
			err = PTR_ERR(cci_stall[c].event);
	}
	if (err) {
		pr_warn("cannot open the CCI-400 counters on CPU %d (%ld)\n", cci_cpu, err);
		for (c = 0; c < n; c++) {
			close_counter(&cci_hs[c]);
			close_counter(&cci_stall[c]);
		}
		return 0;
	}
	cci_ok = true;
	return 0;
}

static void drop_task(struct watched *w)
{
	u32 k;

	for (k = 0; k < AS_MAX_CLUSTERS; k++) {
		close_counter(&w->cycles[k]);
		close_counter(&w->bus[k]);
	}
	put_task_struct(w->task);
	kfree(w);
}

void as_counters_exit(void)
{
	u32 c;

	mutex_lock(&counters_lock);
	while (ntasks)
		drop_task(tasks[--ntasks]);
	for (c = 0; c < nclusters; c++) {
		close_counter(&cci_hs[c]);
		close_counter(&cci_stall[c]);
	}
	cci_ok = false;
	mutex_unlock(&counters_lock);
}

/* The PMUs a thread is counted on: one per cluster with core_pmu_types, else one. */
static u32 pmus_per_task(void)
{
	return !software && n_core_pmu_types ? (u32)n_core_pmu_types : 1;
}

static int watch(struct task_struct *task)
{
	struct watched *w = kzalloc(sizeof(*w), GFP_KERNEL);
	u32 k;

	if (!w)
		return -ENOMEM;
	w->task = task;
	w->tgid = task->tgid;
	for (k = 0; k < pmus_per_task(); k++) {
		u32 type = n_core_pmu_types ? (u32)core_pmu_types[k] : PERF_TYPE_RAW;

		w->cycles[k].event = software ? open_counter(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, -1, task)
					      : open_counter(type, ARMV7_CPU_CYCLES, -1, task);
		w->bus[k].event = software ? open_counter(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, -1, task)
					   : open_counter(type, ARMV7_BUS_ACCESS, -1, task);
		if (IS_ERR(w->cycles[k].event) || IS_ERR(w->bus[k].event)) {
			long err = IS_ERR(w->cycles[k].event) ? PTR_ERR(w->cycles[k].event) : PTR_ERR(w->bus[k].event);

			pr_warn("cannot count thread %d on core PMU %u (%ld)\n", task->pid, k, err);
			drop_task(w); /* puts the task reference the caller took */
			return (int)err;
		}
	}
	tasks[ntasks++] = w;
	return 0;
}

/* Adds every thread of process `pid` not yet watched. */
static int watch_process(pid_t pid)
{
	struct task_struct **found, *leader, *t;
	struct pid *p = find_get_pid(pid);
	u32 n = 0, i, j;
	int ret = 0;

	leader = p ? get_pid_task(p, PIDTYPE_TGID) : NULL;
	put_pid(p);
	if (!leader)
		return -ESRCH;
	found = kmalloc_array(AS_MAX_TASKS, sizeof(*found), GFP_KERNEL);
	if (!found) {
		put_task_struct(leader);
		return -ENOMEM;
	}
	rcu_read_lock();
	for_each_thread(leader, t) {
		if (n == AS_MAX_TASKS)
			break;
		get_task_struct(t);
		found[n++] = t;
	}
	rcu_read_unlock();
	put_task_struct(leader);
	for (i = 0; i < n; i++) {
		bool known = false;

		for (j = 0; j < ntasks; j++)
			known |= tasks[j]->task == found[i];
		if (known || ret || ntasks == AS_MAX_TASKS) {
			ret = ret ? ret : (known ? 0 : -ENOSPC);
			put_task_struct(found[i]);
			continue;
		}
		ret = watch(found[i]);
	}
	kfree(found);
	return ret;
}

int as_tasks_store(const char *buf)
{
	int pid, ret = 0;
	u32 i, kept = 0;

	mutex_lock(&counters_lock);
	if (sysfs_streq(buf, "clear")) {
		while (ntasks)
			drop_task(tasks[--ntasks]);
	} else if (buf[0] == '-' && !kstrtoint(buf + 1, 0, &pid)) {
		for (i = 0; i < ntasks; i++) {
			if (tasks[i]->tgid == pid)
				drop_task(tasks[i]);
			else
				tasks[kept++] = tasks[i];
		}
		ntasks = kept;
	} else if (!kstrtoint(buf, 0, &pid) && pid > 0) {
		ret = watch_process(pid);
	} else {
		ret = -EINVAL;
	}
	mutex_unlock(&counters_lock);
	return ret;
}

ssize_t as_tasks_show(char *buf)
{
	ssize_t n = 0;
	u32 i;

	mutex_lock(&counters_lock);
	for (i = 0; i < ntasks && n < PAGE_SIZE - 16; i++)
		n += scnprintf(buf + n, PAGE_SIZE - n, "%d ", tasks[i]->task->pid);
	mutex_unlock(&counters_lock);
	return n + scnprintf(buf + n, PAGE_SIZE - n, "\n");
}

u32 as_counters_read(u32 reader, struct as_port_in *ports, struct as_thread_in *threads, u32 max_threads,
		     u32 *nthreads)
{
	u32 c, i, k, nports = 0, nt = 0;

	mutex_lock(&counters_lock);
	if (cci_ok) {
		for (c = 0; c < nclusters; c++) {
			ports[nports].cluster = c;
			ports[nports].hs_any = delta(&cci_hs[c], reader);
			ports[nports].stall = delta(&cci_stall[c], reader);
			nports++;
		}
	}
	for (i = 0; i < ntasks; i++) {
		struct watched *w = tasks[i];

		for (k = 0; k < pmus_per_task(); k++) {
			u64 cycles = delta(&w->cycles[k], reader), bus = delta(&w->bus[k], reader);

			if (!cycles || nt == max_threads)
				continue;
			threads[nt].cluster = n_core_pmu_types && !software ? k : as_cluster_of_cpu(task_cpu(w->task));
			threads[nt].bus_access = bus;
			threads[nt].cpu_cycles = cycles;
			nt++;
		}
	}
	mutex_unlock(&counters_lock);
	*nthreads = nt;
	return nports;
}
