// SPDX-License-Identifier: GPL-2.0
/*
 * fake_cpufreq: a cpufreq driver with nothing behind it, for testing governors in a machine
 * without frequency scaling (a QEMU guest). One policy per CPU; CPU 0 gets the Exynos 5422
 * LITTLE table (200-1400 MHz), the others the big one (200-2000 MHz), 100 MHz apart, with its
 * 140 us transition latency. Every target_index call is recorded: debugfs fake_cpufreq/requests
 * lists "cpu khz" per request, oldest first; writing anything to it clears the list.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpufreq.h>
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#define LITTLE_OPPS 13
#define BIG_OPPS 19
#define LOG_BYTES (1 << 20)

static struct cpufreq_frequency_table little[LITTLE_OPPS + 1], big[BIG_OPPS + 1];
static unsigned int cur_khz[NR_CPUS];
static DEFINE_MUTEX(log_lock);
static char *log_buf;
static size_t log_len;
static bool log_full;
static struct dentry *dir;

static void fill(struct cpufreq_frequency_table *t, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		t[i].frequency = (i + 2) * 100000;
	t[n].frequency = CPUFREQ_TABLE_END;
}

static int fake_init(struct cpufreq_policy *policy)
{
	struct cpufreq_frequency_table *t = policy->cpu == 0 ? little : big;
	unsigned int n = policy->cpu == 0 ? LITTLE_OPPS : BIG_OPPS;

	policy->freq_table = t;
	policy->cpuinfo.transition_latency = 140000; /* ns, the Exynos 5422 device tree's */
	cur_khz[policy->cpu] = t[n - 1].frequency;   /* the bootloader leaves it at the top */
	return 0;
}

static unsigned int fake_get(unsigned int cpu)
{
	return cur_khz[cpu];
}

static int fake_target_index(struct cpufreq_policy *policy, unsigned int index)
{
	unsigned int khz = policy->freq_table[index].frequency;

	cur_khz[policy->cpu] = khz;
	mutex_lock(&log_lock);
	if (log_len + 32 < LOG_BYTES)
		log_len += scnprintf(log_buf + log_len, LOG_BYTES - log_len, "%u %u\n", policy->cpu, khz);
	else
		log_full = true;
	mutex_unlock(&log_lock);
	return 0;
}

static ssize_t requests_read(struct file *f, char __user *ubuf, size_t count, loff_t *pos)
{
	ssize_t ret;

	mutex_lock(&log_lock);
	ret = log_full ? -ENOSPC : simple_read_from_buffer(ubuf, count, pos, log_buf, log_len);
	mutex_unlock(&log_lock);
	return ret;
}

static ssize_t requests_write(struct file *f, const char __user *ubuf, size_t count, loff_t *pos)
{
	mutex_lock(&log_lock);
	log_len = 0;
	log_full = false;
	mutex_unlock(&log_lock);
	return count;
}

static const struct file_operations requests_fops = {
	.owner = THIS_MODULE,
	.read = requests_read,
	.write = requests_write,
	.llseek = default_llseek,
};

static struct cpufreq_driver fake_driver = {
	.name = "fake_cpufreq",
	.init = fake_init,
	.verify = cpufreq_generic_frequency_table_verify,
	.target_index = fake_target_index,
	.get = fake_get,
	.attr = cpufreq_generic_attr,
};

static int __init fake_module_init(void)
{
	int ret;

	fill(little, LITTLE_OPPS);
	fill(big, BIG_OPPS);
	log_buf = vzalloc(LOG_BYTES);
	if (!log_buf)
		return -ENOMEM;
	dir = debugfs_create_dir("fake_cpufreq", NULL);
	debugfs_create_file("requests", 0600, dir, NULL, &requests_fops);
	ret = cpufreq_register_driver(&fake_driver);
	if (ret) {
		debugfs_remove_recursive(dir);
		vfree(log_buf);
	}
	return ret;
}

static void __exit fake_module_exit(void)
{
	cpufreq_unregister_driver(&fake_driver);
	debugfs_remove_recursive(dir);
	vfree(log_buf);
}

module_init(fake_module_init);
module_exit(fake_module_exit);
MODULE_DESCRIPTION("A cpufreq driver recording requests, for governor tests");
MODULE_LICENSE("GPL");
