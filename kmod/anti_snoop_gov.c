// SPDX-License-Identifier: GPL-2.0
/*
 * cpufreq_anti_snoop: hetlab's anti-snoop governor (LCTES'20 "ondemand-anti-snoop", seed
 * paper Algorithm 2) as a cpufreq governor module. One governor, "anti_snoop", runs every
 * policy it is chosen for; each policy's sample reads its CPUs' idle time (ondemand's load),
 * the CCI-400 ports and the watched threads' core counters of the *other* clusters
 * (anti_snoop_counters.c), and asks the decision core (anti_snoop_core.c) — the code hetlab's
 * conformance test checks against hetlab's Rust governor sample by sample.
 *
 * Without CCI counters it is ondemand (a pr_warn says so once). docs/kernel-module.md tells
 * how to build, load, feed and unload it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/firmware.h>
#include <linux/kernel_stat.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/tick.h>

#include "anti_snoop.h"
#include "anti_snoop_fig4.h"

/* ---- module parameters ------------------------------------------------------------------- */

static char *model;
module_param(model, charp, 0444);
MODULE_PARM_DESC(model, "firmware file of `hetlab export-model --kernel` (default: the built-in lctes2020-fig4)");

static int cluster_first_cpus[AS_MAX_CLUSTERS] = { 0, 4 };
static int n_cluster_first_cpus = 2;
module_param_array(cluster_first_cpus, int, &n_cluster_first_cpus, 0444);
MODULE_PARM_DESC(cluster_first_cpus, "first CPU of each cluster, ascending (default 0,4: Exynos 5422)");

static char *cluster_names[AS_MAX_CLUSTERS] = { "little", "big" };
static int n_cluster_names = 2;
module_param_array(cluster_names, charp, &n_cluster_names, 0444);
MODULE_PARM_DESC(cluster_names, "each cluster's name, the model's tree for it (default little,big)");

static int cci_ports[AS_MAX_CLUSTERS] = { 3, 4 };
static int n_cci_ports = 2;
module_param_array(cci_ports, int, &n_cci_ports, 0444);
MODULE_PARM_DESC(cci_ports, "each cluster's CCI-400 slave port (default 3,4: Exynos 5422)");

bool as_test_hook;
module_param_named(test_hook, as_test_hook, bool, 0444);
MODULE_PARM_DESC(test_hook, "no sampling of its own: samples come from debugfs anti_snoop/feed (tests)");

/* ---- shared state ----------------------------------------------------------------------- */

DEFINE_MUTEX(as_global_lock);
struct as_gov_policy *as_active[AS_MAX_CLUSTERS];
const struct as_model *as_model;
static struct as_gov_tunables *global_tunables; /* when governors are not per policy */
/* guards the tunables' values: the sample work copies them under it, never under the mutexes */
static DEFINE_SPINLOCK(as_tunables_lock);

/* ---- tunables (sysfs) ------------------------------------------------------------------- */

static struct as_gov_tunables *to_tunables(struct gov_attr_set *attr_set)
{
	return container_of(attr_set, struct as_gov_tunables, attr_set);
}

/* Every policy sharing the tunables reads the new value at its next sample. */
static ssize_t store_u32(struct gov_attr_set *attr_set, const char *buf, size_t count, u32 *field, u32 min, u32 max)
{
	u32 v;

	if (kstrtou32(buf, 0, &v) || v < min || v > max)
		return -EINVAL;
	spin_lock(&as_tunables_lock);
	*field = v;
	spin_unlock(&as_tunables_lock);
	return count;
}

static struct as_tunables tunables_of(struct as_gov_policy *gp)
{
	struct as_tunables t;

	spin_lock(&as_tunables_lock);
	t = gp->tunables->t;
	spin_unlock(&as_tunables_lock);
	return t;
}

static u64 min_sampling_rate_us(void)
{
	return 2 * TICK_NSEC / NSEC_PER_USEC; /* CPUFREQ_DBS_MIN_SAMPLING_INTERVAL */
}

static ssize_t sampling_rate_show(struct gov_attr_set *attr_set, char *buf)
{
	struct as_gov_tunables *t = to_tunables(attr_set);
	u64 rate;

	/* no lock but the spinlock: kobject removal waits for readers, under as_global_lock */
	spin_lock(&as_tunables_lock);
	rate = t->t.sampling_rate_us ? t->t.sampling_rate_us : t->default_rate_us;
	spin_unlock(&as_tunables_lock);
	return sprintf(buf, "%llu\n", rate);
}

static ssize_t sampling_rate_store(struct gov_attr_set *attr_set, const char *buf, size_t count)
{
	struct as_gov_tunables *t = to_tunables(attr_set);
	u64 v;

	/* at least two ticks, as the dbs governors' sampling_rate_store */
	if (kstrtou64(buf, 0, &v) || v < min_sampling_rate_us() || v > UINT_MAX)
		return -EINVAL;
	spin_lock(&as_tunables_lock);
	t->t.sampling_rate_us = v;
	spin_unlock(&as_tunables_lock);
	return count;
}

#define AS_U32_TUNABLE(name, field, min, max)                                                       \
	static ssize_t name##_show(struct gov_attr_set *attr_set, char *buf)                       \
	{                                                                                            \
		return sprintf(buf, "%u\n", to_tunables(attr_set)->t.field);                         \
	}                                                                                            \
	static ssize_t name##_store(struct gov_attr_set *attr_set, const char *buf, size_t count)  \
	{                                                                                            \
		return store_u32(attr_set, buf, count, &to_tunables(attr_set)->t.field, min, max);   \
	}                                                                                            \
	static struct governor_attr name = __ATTR_RW(name)

AS_U32_TUNABLE(up_threshold, up_threshold, 1, 100);
AS_U32_TUNABLE(sampling_down_factor, sampling_down_factor, 1, AS_MAX_SAMPLING_DOWN_FACTOR);
AS_U32_TUNABLE(ignore_nice_load, ignore_nice_load, 0, 1);
/* Algorithm 2's cpu_freq_step, in OPPs of the policy's table (hetlab's governor: 1). */
AS_U32_TUNABLE(freq_step, freq_step_opps, 1, AS_MAX_OPPS);
static struct governor_attr sampling_rate = __ATTR_RW(sampling_rate);

static ssize_t model_show(struct gov_attr_set *attr_set, char *buf)
{
	return sprintf(buf, "%s\n", as_model->name);
}
static struct governor_attr model_name = __ATTR(model, 0444, model_show, NULL);

static ssize_t tasks_show(struct gov_attr_set *attr_set, char *buf)
{
	return as_tasks_show(buf);
}

static ssize_t tasks_store(struct gov_attr_set *attr_set, const char *buf, size_t count)
{
	int ret = as_tasks_store(buf);

	return ret ? ret : count;
}
static struct governor_attr tasks = __ATTR_RW(tasks);

static struct attribute *as_attrs[] = {
	&sampling_rate.attr, &up_threshold.attr, &sampling_down_factor.attr, &ignore_nice_load.attr,
	&freq_step.attr,     &model_name.attr,	 &tasks.attr,		     NULL,
};
ATTRIBUTE_GROUPS(as);

static void tunables_release(struct kobject *kobj)
{
	kfree(to_tunables(to_gov_attr_set(kobj)));
}

static struct kobj_type as_tunables_ktype = {
	.default_groups = as_groups,
	.sysfs_ops = &governor_sysfs_ops,
	.release = tunables_release,
};

/* ---- policies -------------------------------------------------------------------------- */

static int cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/* The policy's valid frequencies, ascending, without repeats (the driver's table may be in any
 * order); 0 when it has no table. */
u32 as_sorted_table(struct cpufreq_policy *policy, u32 *opps, u32 max)
{
	struct cpufreq_frequency_table *pos;
	u32 n = 0, i, kept = 0;

	if (!policy->freq_table)
		return 0;
	cpufreq_for_each_valid_entry(pos, policy->freq_table) {
		if (n < max)
			opps[n++] = pos->frequency;
	}
	sort(opps, n, sizeof(u32), cmp_u32, NULL);
	for (i = 0; i < n; i++)
		if (!kept || opps[i] != opps[kept - 1])
			opps[kept++] = opps[i];
	return kept;
}

static int cluster_of_policy(struct cpufreq_policy *policy)
{
	u32 c = as_cluster_of_cpu(cpumask_first(policy->related_cpus));

	return c < (u32)n_cluster_first_cpus ? (int)c : -1;
}

u32 as_cluster_of_cpu(int cpu)
{
	int c;

	for (c = n_cluster_first_cpus - 1; c >= 0; c--)
		if (cpu >= cluster_first_cpus[c])
			return (u32)c;
	return 0;
}

static void free_policy(struct as_gov_policy *gp)
{
	kfree(gp->cpu_ids);
	kfree(gp->prev_wall_us);
	kfree(gp->prev_idle_us);
	kfree(gp->prev_nice_us);
	kfree(gp->cpus);
	kfree(gp);
}

static int as_init(struct cpufreq_policy *policy)
{
	struct as_gov_policy *gp;
	struct as_gov_tunables *t;
	int cluster = cluster_of_policy(policy), ret;
	u32 n = cpumask_weight(policy->related_cpus);

	if (cluster < 0 || cluster >= n_cluster_names) {
		pr_err("policy%u: CPU %u is in no cluster of cluster_first_cpus/cluster_names\n", policy->cpu,
		       cpumask_first(policy->related_cpus));
		return -EINVAL;
	}
	if (n > AS_MAX_POLICY_CPUS) {
		pr_err("policy%u has %u CPUs; the core keeps %u\n", policy->cpu, n, AS_MAX_POLICY_CPUS);
		return -EINVAL;
	}
	gp = kzalloc(sizeof(*gp), GFP_KERNEL);
	if (!gp)
		return -ENOMEM;
	gp->cpu_ids = kcalloc(n, sizeof(u32), GFP_KERNEL);
	gp->prev_wall_us = kcalloc(n, sizeof(u64), GFP_KERNEL);
	gp->prev_idle_us = kcalloc(n, sizeof(u64), GFP_KERNEL);
	gp->prev_nice_us = kcalloc(n, sizeof(u64), GFP_KERNEL);
	gp->cpus = kcalloc(n, sizeof(*gp->cpus), GFP_KERNEL);
	if (!gp->cpu_ids || !gp->prev_wall_us || !gp->prev_idle_us || !gp->prev_nice_us || !gp->cpus) {
		free_policy(gp);
		return -ENOMEM;
	}
	gp->policy = policy;
	gp->cluster = (u32)cluster;
	gp->tree = as_model_tree(as_model, cluster_names[cluster]);
	if (!gp->tree) {
		pr_err("model %s has no tree for cluster '%s' (policy%u)\n", as_model->name, cluster_names[cluster],
		       policy->cpu);
		free_policy(gp);
		return -EINVAL;
	}
	mutex_init(&gp->lock);

	mutex_lock(&as_global_lock);
	if (!have_governor_per_policy() && global_tunables) {
		t = global_tunables;
		gov_attr_set_get(&t->attr_set, &gp->tunables_hook);
	} else {
		t = kzalloc(sizeof(*t), GFP_KERNEL);
		if (!t) {
			ret = -ENOMEM;
			goto fail;
		}
		as_tunables_default(&t->t);
		gov_attr_set_init(&t->attr_set, &gp->tunables_hook);
		ret = kobject_init_and_add(&t->attr_set.kobj, &as_tunables_ktype, get_governor_parent_kobj(policy), "%s",
					   AS_GOVERNOR_NAME);
		if (ret) {
			kobject_put(&t->attr_set.kobj);
			goto fail;
		}
		if (!have_governor_per_policy())
			global_tunables = t;
	}
	gp->tunables = t;
	policy->governor_data = gp;
	mutex_unlock(&as_global_lock);
	return 0;
fail:
	mutex_unlock(&as_global_lock);
	free_policy(gp);
	return ret;
}

static void as_exit(struct cpufreq_policy *policy)
{
	struct as_gov_policy *gp = policy->governor_data;
	struct as_gov_tunables *t = gp->tunables;
	unsigned int left;

	mutex_lock(&as_global_lock);
	left = gov_attr_set_put(&t->attr_set, &gp->tunables_hook); /* the last put frees t */
	if (!left && t == global_tunables)
		global_tunables = NULL;
	policy->governor_data = NULL;
	mutex_unlock(&as_global_lock);
	mutex_destroy(&gp->lock);
	free_policy(gp);
}

/* The CPUs' idle, wall and nice time since the previous sample (dbs_update's sources). */
static void read_cpu_times(struct as_gov_policy *gp, bool update_only)
{
	u32 i;

	for (i = 0; i < gp->ncpus; i++) {
		u32 cpu = gp->cpu_ids[i];
		u64 wall, idle = get_cpu_idle_time(cpu, &wall, 0); /* io_is_busy = 0: iowait is idle */
		u64 nice = div_u64(kcpustat_field(&kcpustat_cpu(cpu), CPUTIME_NICE, cpu), NSEC_PER_USEC);

		if (!update_only) {
			gp->cpus[i].cpu = cpu;
			gp->cpus[i].wall_us = wall - gp->prev_wall_us[i];
			gp->cpus[i].idle_us = idle - gp->prev_idle_us[i];
			gp->cpus[i].nice_us = nice - gp->prev_nice_us[i];
		}
		gp->prev_wall_us[i] = wall;
		gp->prev_idle_us[i] = idle;
		gp->prev_nice_us[i] = nice;
	}
}

static struct as_limits policy_limits(struct cpufreq_policy *policy)
{
	/* the thermal cap is folded into policy->max by frequency QoS */
	struct as_limits l = { policy->cur, policy->min, policy->max, policy->max };

	return l;
}

static void queue_sample(struct as_gov_policy *gp, u64 delay_us)
{
	/* unbound: an idle cluster's policy samples too, which is the point of the governor */
	queue_delayed_work(system_unbound_wq, &gp->work, usecs_to_jiffies(delay_us));
}

static void as_sample_work(struct work_struct *work)
{
	struct as_gov_policy *gp = container_of(to_delayed_work(work), struct as_gov_policy, work);
	struct as_sample_in in = { 0 };
	struct as_decision d;
	struct as_tunables t;
	ktime_t t0, t1;

	mutex_lock(&gp->lock);
	if (!gp->started) {
		mutex_unlock(&gp->lock);
		return;
	}
	t0 = ktime_get();
	t = tunables_of(gp);
	if (t.sampling_rate_us) /* a rate written since: from this sample on */
		gp->core.sampling_rate_us = t.sampling_rate_us;
	read_cpu_times(gp, false);
	in.lim = policy_limits(gp->policy);
	in.ncpus = gp->ncpus;
	in.cpus = gp->cpus;
	in.nports = as_counters_read(gp->cluster, gp->ports, gp->threads, AS_MAX_THREADS, &in.nthreads);
	in.ports = gp->ports;
	in.threads = gp->threads;
	t1 = ktime_get();
	if (as_policy_sample(&gp->core, &t, gp->tree, &in, &d) == 0) {
		as_cost_add(&as_read_cost[gp->cluster], ktime_to_ns(ktime_sub(t1, t0)));
		as_cost_add(&as_live_cost[gp->cluster], ktime_to_ns(ktime_sub(ktime_get(), t0)));
		__cpufreq_driver_target(gp->policy, d.target_khz, CPUFREQ_RELATION_H);
		queue_sample(gp, d.next_sample_us);
	}
	mutex_unlock(&gp->lock);
}

static int as_start(struct cpufreq_policy *policy)
{
	struct as_gov_policy *gp = policy->governor_data;
	u32 opps[AS_MAX_OPPS], nopps = as_sorted_table(policy, opps, AS_MAX_OPPS), cpu, i = 0;
	u64 rate = as_default_sampling_rate_us(TICK_NSEC / NSEC_PER_USEC, policy->cpuinfo.transition_latency);
	struct as_limits lim = policy_limits(policy);
	struct as_decision d;
	struct as_tunables t;

	if (policy->transition_delay_us) /* the driver's own delay, as cpufreq_policy_transition_delay_us */
		rate = max_t(u64, min_sampling_rate_us(), policy->transition_delay_us);
	spin_lock(&as_tunables_lock);
	gp->tunables->default_rate_us = rate; /* what sampling_rate shows while unset */
	spin_unlock(&as_tunables_lock);
	if (!nopps || as_policy_init(&gp->core, gp->cluster, opps, nopps, policy->cpuinfo.min_freq,
				     policy->cpuinfo.max_freq, rate)) {
		pr_err("policy%u: needs a frequency table of 1 to %u OPPs\n", policy->cpu, AS_MAX_OPPS);
		return -EINVAL;
	}
	for_each_cpu(cpu, policy->related_cpus)
		gp->cpu_ids[i++] = cpu;
	gp->ncpus = i;
	t = tunables_of(gp);
	mutex_lock(&as_global_lock);
	if (as_active[gp->cluster]) {
		mutex_unlock(&as_global_lock);
		pr_err("policy%u: cluster %s already has a policy\n", policy->cpu, cluster_names[gp->cluster]);
		return -EBUSY;
	}
	as_active[gp->cluster] = gp;
	mutex_unlock(&as_global_lock);

	INIT_DELAYED_WORK(&gp->work, as_sample_work);
	mutex_lock(&gp->lock);
	read_cpu_times(gp, true);
	as_counters_read(gp->cluster, gp->ports, gp->threads, AS_MAX_THREADS, &i); /* the baseline */
	d = as_policy_start(&gp->core, &t, &lim);
	__cpufreq_driver_target(policy, d.target_khz, CPUFREQ_RELATION_H);
	gp->started = true;
	if (!as_test_hook)
		queue_sample(gp, d.next_sample_us);
	mutex_unlock(&gp->lock);
	return 0;
}

static void as_stop(struct cpufreq_policy *policy)
{
	struct as_gov_policy *gp = policy->governor_data;

	mutex_lock(&as_global_lock); /* the test hook holds it while it feeds a policy */
	as_active[gp->cluster] = NULL;
	mutex_unlock(&as_global_lock);
	mutex_lock(&gp->lock);
	gp->started = false;
	mutex_unlock(&gp->lock);
	cancel_delayed_work_sync(&gp->work);
}

static void as_limits(struct cpufreq_policy *policy)
{
	struct as_gov_policy *gp = policy->governor_data;

	mutex_lock(&gp->lock);
	cpufreq_policy_apply_limits(policy);
	mutex_unlock(&gp->lock);
}

static struct cpufreq_governor as_governor = {
	.name = AS_GOVERNOR_NAME,
	.owner = THIS_MODULE,
	.flags = CPUFREQ_GOV_DYNAMIC_SWITCHING,
	.init = as_init,
	.exit = as_exit,
	.start = as_start,
	.stop = as_stop,
	.limits = as_limits,
};

/* ---- the model ------------------------------------------------------------------------- */

static int load_model(void)
{
	struct as_model *m = kvzalloc(sizeof(*m), GFP_KERNEL);
	const struct firmware *fw = NULL;
	struct device *dev = NULL;
	const char *why;
	int ret = 0;

	if (!m)
		return -ENOMEM;
	if (model && *model) {
		dev = root_device_register(AS_GOVERNOR_NAME);
		if (IS_ERR(dev)) {
			kvfree(m);
			return PTR_ERR(dev);
		}
		ret = request_firmware(&fw, model, dev);
		if (ret)
			pr_err("cannot load model '%s' (%d): put it under /lib/firmware\n", model, ret);
		else if (as_model_parse(m, fw->data, fw->size, &why))
			ret = -EINVAL;
		release_firmware(fw);
		root_device_unregister(dev);
	} else if (as_model_parse(m, as_builtin_model, sizeof(as_builtin_model), &why)) {
		ret = -EINVAL;
	}
	if (ret == -EINVAL)
		pr_err("model %s: %s; write it with `hetlab export-model MODEL --kernel`\n",
		       model && *model ? model : "built-in", why);
	if (ret) {
		kvfree(m);
		return ret;
	}
	as_model = m;
	pr_info("model %s, %u trees\n", m->name, m->ntrees);
	return 0;
}

static int __init as_module_init(void)
{
	int ret;

	if (n_cluster_first_cpus != n_cluster_names || n_cci_ports != n_cluster_names) {
		pr_err("cluster_first_cpus, cluster_names and cci_ports need one entry per cluster\n");
		return -EINVAL;
	}
	ret = load_model();
	if (ret)
		return ret;
	ret = as_counters_init((u32)n_cluster_names, cci_ports);
	if (ret)
		goto no_counters;
	if (!as_counters_cci_ok())
		pr_warn("no CCI-400 counters: anti_snoop decides as ondemand (load only)\n");
	ret = as_debugfs_init();
	if (ret)
		goto no_debugfs;
	ret = cpufreq_register_governor(&as_governor);
	if (ret)
		goto no_governor;
	return 0;
no_governor:
	as_debugfs_exit();
no_debugfs:
	as_counters_exit();
no_counters:
	kvfree(as_model);
	return ret;
}

static void __exit as_module_exit(void)
{
	/* the core refuses while a policy still runs the governor: the module is in use then */
	cpufreq_unregister_governor(&as_governor);
	as_debugfs_exit();
	as_counters_exit();
	kvfree(as_model);
}

module_init(as_module_init);
module_exit(as_module_exit);
MODULE_AUTHOR("hetlab");
MODULE_DESCRIPTION("anti_snoop: ondemand plus LCTES'20's snoop-aware decision trees over CCI-400 and core PMCs");
MODULE_LICENSE("GPL");
