// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs anti_snoop/:
 *   stats    each cluster's samples and their cost, ns from ktime_get (mean, min, max): "live"
 *            for the governor's own samples (counters, idle times and the decision), "read" for
 *            their counter and idle-time reads alone, "hook" for the fed ones (the decision
 *            alone); writing anything resets them
 *   feed     (test_hook=1) write a feed (anti_snoop_feed.h): each B and S line runs the core on
 *            the policy of that cluster with the line's numbers and requests the frequency it
 *            decides, exactly as a live sample does
 *   answers  (test_hook=1) "policy target_khz next_sample_us" for every B and S line fed
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/ktime.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "anti_snoop.h"
#include "anti_snoop_feed.h"

#define LINE_MAX_BYTES 16384
#define ANSWERS_BYTES (1 << 20)
#define FEED_PORTS 8

static struct dentry *dir;
static DEFINE_MUTEX(hook_lock); /* the feed's partial line and the answers */
static char *line_buf;		/* the partial line of the last write */
static size_t line_len;
static char *answers;
static size_t answers_len;
static u64 lines_fed;
static struct as_cpu_in *room_cpus;
static struct as_port_in *room_ports;
static struct as_thread_in *room_threads;
static const struct as_tree *hook_tree[AS_MAX_CLUSTERS];
struct as_cost as_live_cost[AS_MAX_CLUSTERS], as_read_cost[AS_MAX_CLUSTERS], as_hook_cost[AS_MAX_CLUSTERS];

void as_cost_add(struct as_cost *c, u64 ns)
{
	if (!c->samples || ns < c->min_ns)
		c->min_ns = ns;
	if (ns > c->max_ns)
		c->max_ns = ns;
	c->samples++;
	c->total_ns += ns;
}

static size_t cost_text(char *buf, size_t len, const char *name, const struct as_cost *c)
{
	return scnprintf(buf, len, " %s_samples %llu %s_mean_ns %llu %s_min_ns %llu %s_max_ns %llu", name, c->samples,
			 name, c->samples ? div64_u64(c->total_ns, c->samples) : 0, name, c->min_ns, name, c->max_ns);
}

#define STATS_BYTES 2048

static ssize_t stats_read(struct file *f, char __user *ubuf, size_t count, loff_t *pos)
{
	char *buf = kmalloc(STATS_BYTES, GFP_KERNEL);
	size_t n = 0;
	ssize_t ret;
	u32 c;

	if (!buf)
		return -ENOMEM;
	for (c = 0; c < AS_MAX_CLUSTERS; c++) {
		if (!as_live_cost[c].samples && !as_hook_cost[c].samples)
			continue;
		n += scnprintf(buf + n, STATS_BYTES - n, "cluster %u", c);
		if (as_live_cost[c].samples) {
			n += cost_text(buf + n, STATS_BYTES - n, "live", &as_live_cost[c]);
			n += cost_text(buf + n, STATS_BYTES - n, "read", &as_read_cost[c]);
		}
		if (as_hook_cost[c].samples)
			n += cost_text(buf + n, STATS_BYTES - n, "hook", &as_hook_cost[c]);
		n += scnprintf(buf + n, STATS_BYTES - n, "\n");
	}
	ret = simple_read_from_buffer(ubuf, count, pos, buf, n);
	kfree(buf);
	return ret;
}

static ssize_t stats_write(struct file *f, const char __user *ubuf, size_t count, loff_t *pos)
{
	memset(as_live_cost, 0, sizeof(as_live_cost));
	memset(as_read_cost, 0, sizeof(as_read_cost));
	memset(as_hook_cost, 0, sizeof(as_hook_cost));
	return count;
}

static void answer(u32 policy, const struct as_decision *d)
{
	answers_len += scnprintf(answers + answers_len, ANSWERS_BYTES - answers_len, "%u %u %llu\n", policy,
				 d->target_khz, d->next_sample_us);
}

/* A P line: the policy of that cluster must have the line's table; its core starts afresh. */
static const char *define_policy(struct as_gov_policy *gp, const struct as_feed_line *l)
{
	u32 opps[AS_MAX_OPPS], n = as_sorted_table(gp->policy, opps, AS_MAX_OPPS);

	if (n != l->nopps || memcmp(opps, l->opps, n * sizeof(u32)))
		return "the policy's frequency table is not the line's";
	hook_tree[l->policy] = as_model_tree(as_model, l->cluster);
	if (!hook_tree[l->policy])
		return "the model has no tree for the line's cluster";
	if (as_policy_init(&gp->core, l->policy, l->opps, l->nopps, l->cpuinfo_min_khz, l->cpuinfo_max_khz,
			   as_default_sampling_rate_us(l->tick_us, l->latency_ns)))
		return "the table is not ascending";
	as_tunables_default(&gp->hook_tunables);
	gp->hook_defined = true;
	return NULL;
}

static const char *run_line(struct as_gov_policy *gp, const struct as_feed_line *l)
{
	struct as_decision d;
	ktime_t t0;

	switch (l->kind) {
	case 'P':
		return define_policy(gp, l);
	case 'T':
		gp->hook_tunables = l->tunables;
		return NULL;
	}
	if (!gp->hook_defined)
		return "a sample before its policy's P line";
	if (answers_len + 64 > ANSWERS_BYTES)
		return "the answers are full: read them and reload the module";
	if (l->kind == 'B') {
		d = as_policy_start(&gp->core, &gp->hook_tunables, &l->in.lim);
	} else {
		t0 = ktime_get();
		if (as_policy_sample(&gp->core, &gp->hook_tunables, hook_tree[l->policy], &l->in, &d))
			return "more CPUs than the core keeps";
		as_cost_add(&as_hook_cost[l->policy], ktime_to_ns(ktime_sub(ktime_get(), t0)));
	}
	__cpufreq_driver_target(gp->policy, d.target_khz, CPUFREQ_RELATION_H);
	answer(l->policy, &d);
	return NULL;
}

static int feed_line(char *line)
{
	struct as_feed_room room = { room_cpus,	  AS_MAX_POLICY_CPUS, room_ports,
				     FEED_PORTS, room_threads, AS_MAX_THREADS };
	struct as_feed_line *l = kzalloc(sizeof(*l), GFP_KERNEL);
	struct as_gov_policy *gp;
	const char *why = NULL;

	if (!l)
		return -ENOMEM;
	lines_fed++;
	if (!as_feed_parse(line, l, &room, &why) && l->kind) {
		mutex_lock(&as_global_lock); /* the policy stays started while it is fed */
		gp = l->policy < AS_MAX_CLUSTERS ? as_active[l->policy] : NULL;
		if (!gp) {
			why = "no policy of that cluster runs anti_snoop";
		} else {
			mutex_lock(&gp->lock);
			why = run_line(gp, l);
			mutex_unlock(&gp->lock);
		}
		mutex_unlock(&as_global_lock);
	}
	kfree(l);
	if (why) {
		pr_err("feed line %llu: %s\n", lines_fed, why);
		return -EINVAL;
	}
	return 0;
}

static ssize_t feed_write(struct file *f, const char __user *ubuf, size_t count, loff_t *pos)
{
	size_t done = 0;
	int ret = 0;

	mutex_lock(&hook_lock);
	while (done < count && !ret) {
		size_t take = min(count - done, (size_t)LINE_MAX_BYTES - line_len), i, start = 0;

		if (!take) {
			pr_err("feed line %llu is longer than %d bytes\n", lines_fed + 1, LINE_MAX_BYTES);
			ret = -EINVAL;
			break;
		}
		if (copy_from_user(line_buf + line_len, ubuf + done, take)) {
			ret = -EFAULT;
			break;
		}
		for (i = line_len; i < line_len + take && !ret; i++) {
			if (line_buf[i] != '\n')
				continue;
			line_buf[i] = 0;
			ret = feed_line(line_buf + start);
			start = i + 1;
		}
		memmove(line_buf, line_buf + start, line_len + take - start);
		line_len = line_len + take - start;
		done += take;
	}
	mutex_unlock(&hook_lock);
	return ret ? ret : (ssize_t)count;
}

static ssize_t answers_read(struct file *f, char __user *ubuf, size_t count, loff_t *pos)
{
	ssize_t ret;

	mutex_lock(&hook_lock);
	ret = simple_read_from_buffer(ubuf, count, pos, answers, answers_len);
	mutex_unlock(&hook_lock);
	return ret;
}

static const struct file_operations stats_fops = {
	.owner = THIS_MODULE,
	.read = stats_read,
	.write = stats_write,
	.llseek = default_llseek,
};

static const struct file_operations feed_fops = {
	.owner = THIS_MODULE,
	.write = feed_write,
	.llseek = no_llseek,
};

static const struct file_operations answers_fops = {
	.owner = THIS_MODULE,
	.read = answers_read,
	.llseek = default_llseek,
};

static void free_hook(void)
{
	kfree(line_buf);
	vfree(answers);
	kfree(room_cpus);
	kfree(room_ports);
	kvfree(room_threads);
	line_buf = NULL;
	answers = NULL;
}

int as_debugfs_init(void)
{
	dir = debugfs_create_dir("anti_snoop", NULL);
	debugfs_create_file("stats", 0600, dir, NULL, &stats_fops);
	if (!as_test_hook)
		return 0;
	line_buf = kmalloc(LINE_MAX_BYTES + 1, GFP_KERNEL);
	answers = vzalloc(ANSWERS_BYTES);
	room_cpus = kcalloc(AS_MAX_POLICY_CPUS, sizeof(*room_cpus), GFP_KERNEL);
	room_ports = kcalloc(FEED_PORTS, sizeof(*room_ports), GFP_KERNEL);
	room_threads = kvcalloc(AS_MAX_THREADS, sizeof(*room_threads), GFP_KERNEL);
	if (!line_buf || !answers || !room_cpus || !room_ports || !room_threads) {
		free_hook();
		debugfs_remove_recursive(dir);
		return -ENOMEM;
	}
	debugfs_create_file("feed", 0200, dir, NULL, &feed_fops);
	debugfs_create_file("answers", 0400, dir, NULL, &answers_fops);
	pr_info("test hook: samples come from debugfs anti_snoop/feed\n");
	return 0;
}

void as_debugfs_exit(void)
{
	debugfs_remove_recursive(dir);
	free_hook();
}
