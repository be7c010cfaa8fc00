// SPDX-License-Identifier: GPL-2.0
/*
 * anti_snoop_core: see anti_snoop_core.h. Each function names the Rust it ports.
 */
#include "anti_snoop_core.h"

#ifdef __KERNEL__
#include <linux/math64.h>
#include <linux/string.h>
#define AS_DIV64(a, b) div64_u64((a), (b))
#else
#include <string.h>
#define AS_DIV64(a, b) ((a) / (b))
#endif

/* ---- the model blob ------------------------------------------------------------------------ */

/* Layout (little-endian), written by hetlab-core's tree_blob.rs:
 *   "HLAS" u16 version=1, u16 ntrees, char name[32]
 *   per tree: char cluster[16], u8 nfeatures, u8 features[4], u8 float_mode, u16 nnodes,
 *     per node: u8 leaf, u8 feature, u8 shift, u8 eq_left, u8 verdict, u16 left, u16 right,
 *               u64 c_lo, u64 c_hi                                   (25 bytes)
 */
#define AS_BLOB_VERSION 1
#define AS_NODE_BYTES 25

struct as_reader {
	const u8 *p;
	size_t left;
	int short_read;
};

static const u8 *take(struct as_reader *r, size_t n)
{
	const u8 *p = r->p;

	if (r->left < n) {
		r->short_read = 1;
		r->left = 0;
		return NULL;
	}
	r->p += n;
	r->left -= n;
	return p;
}

static u64 take_le(struct as_reader *r, unsigned int n)
{
	const u8 *p = take(r, n);
	u64 v = 0;
	unsigned int i;

	if (!p)
		return 0;
	for (i = 0; i < n; i++)
		v |= (u64)p[i] << (8 * i);
	return v;
}

static void take_name(struct as_reader *r, char *out, size_t n)
{
	const u8 *p = take(r, n);
	size_t i;

	for (i = 0; i < n; i++)
		out[i] = p ? (char)p[i] : 0;
	out[n] = 0;
}

static const char *parse_node(struct as_reader *r, const struct as_tree *t, unsigned int i, struct as_node *n)
{
	n->leaf = (u8)take_le(r, 1);
	n->feature = (u8)take_le(r, 1);
	n->shift = (u8)take_le(r, 1);
	n->eq_left = (u8)take_le(r, 1);
	n->verdict = (u8)take_le(r, 1);
	n->left = (u16)take_le(r, 2);
	n->right = (u16)take_le(r, 2);
	n->c_lo = take_le(r, 8);
	n->c_hi = take_le(r, 8);
	if (r->short_read)
		return "truncated";
	if (n->leaf > 1 || n->verdict > 1 || n->eq_left > 1)
		return "a node flag is neither 0 nor 1";
	if (n->leaf)
		return NULL;
	if (n->feature >= t->nfeatures)
		return "a split reads a feature the tree does not list";
	if (n->shift > 127 || (n->c_hi >> 63))
		return "a split's constant is out of range";
	/* children after their parent (scikit-learn's order): no cycle, the walk ends */
	if (n->left <= i || n->right <= i || n->left >= t->nnodes || n->right >= t->nnodes)
		return "a split's children are not later nodes of the tree";
	return NULL;
}

static const char *parse_tree(struct as_reader *r, struct as_tree *t)
{
	unsigned int i;
	const char *why;

	take_name(r, t->cluster, AS_CLUSTER_NAME_LEN);
	t->nfeatures = (u8)take_le(r, 1);
	for (i = 0; i < AS_MAX_INPUTS; i++)
		t->features[i] = (u8)take_le(r, 1);
	t->float_mode = (u8)take_le(r, 1);
	t->nnodes = (u16)take_le(r, 2);
	if (r->short_read)
		return "truncated";
	if (!t->cluster[0])
		return "a tree has no cluster name";
	if (t->nfeatures > AS_MAX_INPUTS || t->float_mode > 1)
		return "a tree's header is out of range";
	for (i = 0; i < t->nfeatures; i++)
		if (t->features[i] > AS_FEATURE_MEMORY_ACCESS)
			return "a tree reads an unknown feature";
	if (t->nnodes == 0 || t->nnodes > AS_MAX_NODES)
		return "a tree has no nodes or more than AS_MAX_NODES";
	for (i = 0; i < t->nnodes; i++) {
		why = parse_node(r, t, i, &t->nodes[i]);
		if (why)
			return why;
	}
	return NULL;
}

int as_model_parse(struct as_model *m, const u8 *blob, size_t len, const char **why)
{
	struct as_reader r = { blob, len, 0 };
	const u8 *magic = take(&r, 4);
	unsigned int i;

	*why = NULL;
	memset(m, 0, sizeof(*m));
	if (!magic || memcmp(magic, "HLAS", 4) != 0)
		*why = "not a hetlab kernel model (no HLAS magic)";
	else if (take_le(&r, 2) != AS_BLOB_VERSION)
		*why = "unsupported blob version";
	else {
		m->ntrees = (u16)take_le(&r, 2);
		take_name(&r, m->name, AS_MODEL_NAME_LEN);
		if (r.short_read)
			*why = "truncated";
		else if (m->ntrees == 0 || m->ntrees > AS_MAX_TREES)
			*why = "no trees, or more than AS_MAX_TREES";
	}
	for (i = 0; !*why && i < m->ntrees; i++)
		*why = parse_tree(&r, &m->trees[i]);
	if (!*why && r.left)
		*why = "trailing bytes";
	return *why ? -1 : 0;
}

const struct as_tree *as_model_tree(const struct as_model *m, const char *name)
{
	unsigned int i;

	for (i = 0; i < m->ntrees; i++)
		if (strcmp(m->trees[i].cluster, name) == 0)
			return &m->trees[i];
	return NULL;
}

/* ---- exact threshold tests (tree.rs predict_counts) ----------------------------------------- */

/* 192-bit unsigned integers, least significant limb first. */
struct u192 {
	u64 w[3];
};

/* x << s for s < 192. */
static struct u192 u192_shl(u64 x, unsigned int s)
{
	struct u192 r = { { 0, 0, 0 } };
	unsigned int limb = s / 64, bit = s % 64;

	r.w[limb] = x << bit;
	if (bit && limb + 1 < 3)
		r.w[limb + 1] = x >> (64 - bit);
	return r;
}

/* a * b as (hi, lo) without a 128-bit type (32-bit kernels have none). */
static void mul64(u64 a, u64 b, u64 *hi, u64 *lo)
{
	u64 a0 = (u32)a, a1 = a >> 32, b0 = (u32)b, b1 = b >> 32;
	u64 p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
	u64 mid = (p00 >> 32) + (u32)p01 + (u32)p10;

	*lo = (mid << 32) | (u32)p00;
	*hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* (c_hi:c_lo) * m << s, for c < 2^127, m <= 2^53 and s <= 11 (fits 191 bits). */
static struct u192 u192_mul_shl(u64 c_lo, u64 c_hi, u64 m, unsigned int s)
{
	struct u192 r;
	u64 h0, l0, h1, l1;

	mul64(c_lo, m, &h0, &l0);
	mul64(c_hi, m, &h1, &l1);
	r.w[0] = l0;
	r.w[1] = h0 + l1;
	r.w[2] = h1 + (r.w[1] < l1);
	if (s) {
		r.w[2] = (r.w[2] << s) | (r.w[1] >> (64 - s));
		r.w[1] = (r.w[1] << s) | (r.w[0] >> (64 - s));
		r.w[0] <<= s;
	}
	return r;
}

static int u192_cmp(const struct u192 *a, const struct u192 *b)
{
	int i;

	for (i = 2; i >= 0; i--)
		if (a->w[i] != b->w[i])
			return a->w[i] < b->w[i] ? -1 : 1;
	return 0;
}

/* x as the nearest double (ties to even), written m * 2^e with m <= 2^53: Rust's `x as f64`. */
static void round_to_double(u64 x, u64 *m, unsigned int *e)
{
	unsigned int bits = x ? 64u - (unsigned int)__builtin_clzll(x) : 0u, s;
	u64 rem, half;

	if (bits <= 53) {
		*m = x;
		*e = 0;
		return;
	}
	s = bits - 53;
	*m = x >> s;
	rem = x & ((1ULL << s) - 1);
	half = 1ULL << (s - 1);
	if (rem > half || (rem == half && (*m & 1)))
		*m += 1;
	if (*m >> 53) { /* rounded up to 2^53: one more bit of exponent */
		*m >>= 1;
		s++;
	}
	*e = s;
}

static int goes_left(const struct as_tree *t, const struct as_node *n, u64 num, u64 den)
{
	u64 mn, md;
	unsigned int en, ed;
	struct u192 lhs, rhs;
	int c;

	if (den == 0) { /* the ratio reads as 0 */
		num = 0;
		den = 1;
	}
	if (t->float_mode) {
		round_to_double(num, &mn, &en);
		round_to_double(den, &md, &ed);
	} else {
		mn = num;
		en = 0;
		md = den;
		ed = 0;
	}
	lhs = u192_shl(mn, en + n->shift);
	rhs = u192_mul_shl(n->c_lo, n->c_hi, md, ed);
	c = u192_cmp(&lhs, &rhs);
	return c < 0 || (c == 0 && n->eq_left);
}

int as_tree_increase(const struct as_tree *t, const u64 num[], const u64 den[])
{
	unsigned int i = 0;

	while (!t->nodes[i].leaf) {
		const struct as_node *n = &t->nodes[i];

		i = goes_left(t, n, num[n->feature], den[n->feature]) ? n->left : n->right;
	}
	return t->nodes[i].verdict;
}

/* ---- the cpufreq core's table lookups (freq_table.rs) ---------------------------------------- */

u32 as_resolve(const u32 *opps, u32 nopps, u32 target, enum as_relation r, u32 min, u32 max)
{
	u32 lo, hi, i;
	int have_below = 0, have_above = 0;
	u32 below = 0, above = 0;

	if (max < min)
		max = min;
	if (target < min)
		target = min;
	if (target > max)
		target = max;
	if (nopps == 0)
		return target;
	/* the valid entries: the first at or above min to the last at or below max */
	for (lo = 0; lo < nopps && opps[lo] < min; lo++)
		;
	if (lo == nopps)
		return opps[nopps - 1];
	hi = lo;
	for (i = nopps; i-- > 0;) {
		if (opps[i] <= max) {
			if (i >= lo)
				hi = i;
			break;
		}
	}
	for (i = hi + 1; i-- > lo;) {
		if (opps[i] <= target) {
			below = opps[i];
			have_below = 1;
			break;
		}
	}
	for (i = lo; i <= hi; i++) {
		if (opps[i] >= target) {
			above = opps[i];
			have_above = 1;
			break;
		}
	}
	switch (r) {
	case AS_RELATION_L:
		return have_above ? above : opps[hi];
	case AS_RELATION_H:
		return have_below ? below : opps[lo];
	default:
		if (have_below && have_above)
			return target - below > above - target ? above : below;
		if (have_below)
			return below;
		if (have_above)
			return above;
		return opps[lo];
	}
}

/* PolicyView::upper_limit_khz: min(policy max, thermal cap), never below policy min. */
static u32 upper_limit(const struct as_limits *l)
{
	u32 cap = l->thermal_cap_khz > l->policy_min_khz ? l->thermal_cap_khz : l->policy_min_khz;

	return l->policy_max_khz < cap ? l->policy_max_khz : cap;
}

static u32 resolve_in(const struct as_policy *p, const struct as_limits *l, u32 target, enum as_relation r)
{
	return as_resolve(p->opps, p->nopps, target, r, l->policy_min_khz, upper_limit(l));
}

/* freq_table.rs hold(): the current frequency moved inside the limits. */
static u32 hold(const struct as_policy *p, const struct as_limits *l)
{
	u32 max = upper_limit(l);

	if (l->cur_khz > max)
		return resolve_in(p, l, max, AS_RELATION_H);
	if (l->cur_khz < l->policy_min_khz)
		return resolve_in(p, l, l->policy_min_khz, AS_RELATION_L);
	return resolve_in(p, l, l->cur_khz, AS_RELATION_C);
}

/* freq_table.rs step_opp(): `steps` OPPs above (>0) or below (<0) from, within the limits. */
static u32 step_opp(const struct as_policy *p, const struct as_limits *l, u32 from, int steps)
{
	u32 f = resolve_in(p, l, from, AS_RELATION_C);
	long long j;
	u32 i;

	for (i = 0; i < p->nopps && p->opps[i] != f; i++)
		;
	if (i == p->nopps)
		return f;
	j = (long long)i + steps;
	if (j < 0)
		j = 0;
	if (j > (long long)p->nopps - 1)
		j = (long long)p->nopps - 1;
	return resolve_in(p, l, p->opps[j], steps >= 0 ? AS_RELATION_H : AS_RELATION_L);
}

/* ---- dbs and ondemand (dbs.rs, ondemand.rs) --------------------------------------------------- */

u64 as_default_sampling_rate_us(u64 tick_us, u32 transition_latency_ns)
{
	u64 latency_us = transition_latency_ns / 1000;
	u64 delay = latency_us == 0 ? 1000 : (latency_us * 1000 < 10000 ? latency_us * 1000 : 10000);
	u64 two_ticks = 2 * tick_us;

	return two_ticks > delay ? two_ticks : delay;
}

void as_tunables_default(struct as_tunables *t)
{
	t->sampling_rate_us = 0;
	t->up_threshold = AS_DEFAULT_UP_THRESHOLD;
	t->sampling_down_factor = 1;
	t->ignore_nice_load = 0;
	t->freq_step_opps = 1;
}

int as_policy_init(struct as_policy *p, u32 index, const u32 *opps, u32 nopps, u32 cpuinfo_min_khz,
		   u32 cpuinfo_max_khz, u64 default_sampling_rate_us)
{
	u32 i;

	memset(p, 0, sizeof(*p));
	if (nopps == 0 || nopps > AS_MAX_OPPS)
		return -1;
	for (i = 0; i < nopps; i++) {
		if (i && opps[i] <= opps[i - 1])
			return -1;
		p->opps[i] = opps[i];
	}
	p->index = index;
	p->nopps = nopps;
	p->cpuinfo_min_khz = cpuinfo_min_khz;
	p->cpuinfo_max_khz = cpuinfo_max_khz;
	p->default_sampling_rate_us = default_sampling_rate_us;
	p->sampling_rate_us = default_sampling_rate_us;
	p->rate_mult = 1;
	return 0;
}

struct as_decision as_policy_start(struct as_policy *p, const struct as_tunables *t, const struct as_limits *lim)
{
	struct as_decision d = { 0 };

	p->sampling_rate_us = t->sampling_rate_us ? t->sampling_rate_us : p->default_sampling_rate_us;
	p->ncpu_state = 0; /* dbs start: prev_load = 0 */
	p->rate_mult = 1;
	p->last_load = 0;
	d.target_khz = hold(p, lim);
	d.next_sample_us = p->sampling_rate_us;
	return d;
}

static struct as_cpu_dbs *cpu_state(struct as_policy *p, u32 cpu)
{
	u32 i;

	for (i = 0; i < p->ncpu_state; i++)
		if (p->dbs[i].cpu == cpu)
			return &p->dbs[i];
	if (p->ncpu_state == AS_MAX_POLICY_CPUS)
		return NULL;
	p->dbs[p->ncpu_state].cpu = cpu;
	p->dbs[p->ncpu_state].prev_load = 0;
	return &p->dbs[p->ncpu_state++];
}

/* dbs.rs DbsLoad::update: the max over the CPUs of 100 * busy / wall, integer percent; -1 when
 * the policy has more CPUs than AS_MAX_POLICY_CPUS. */
static int dbs_load(struct as_policy *p, const struct as_sample_in *in, u64 sampling_rate_us, u32 ignore_nice,
		    u32 *load_out)
{
	u32 max_load = 0, load, i;

	if (sampling_rate_us == 0)
		sampling_rate_us = 1;
	for (i = 0; i < in->ncpus; i++) {
		const struct as_cpu_in *c = &in->cpus[i];
		struct as_cpu_dbs *s = cpu_state(p, c->cpu);
		u64 elapsed = c->wall_us, idle = c->idle_us + (ignore_nice ? c->nice_us : 0);
		/* woken from a long idle: reuse the previous load once (fair to a bursty task) */
		int long_idle = idle > 2 * sampling_rate_us;

		if (!s)
			return -1;
		if (elapsed == 0) {
			load = s->prev_load;
		} else if (long_idle && s->prev_load != 0) {
			load = s->prev_load;
			s->prev_load = 0;
		} else {
			load = elapsed >= idle ? (u32)AS_DIV64(100 * (elapsed - idle), elapsed) : 0;
			s->prev_load = load;
		}
		if (load > max_load)
			max_load = load;
	}
	*load_out = max_load;
	return 0;
}

/* ---- anti-snoop (anti_snoop.rs) ------------------------------------------------------------- */

/* consult(): the tree asked about every other cluster with a CCI port, in port order; any
 * increase wins, else the first other cluster's answer. Returns 0 when no port is another's. */
static int consult(const struct as_policy *p, const struct as_tree *tree, const struct as_sample_in *in,
		   struct as_decision *d)
{
	u32 i, j, k;
	int found = 0;

	for (i = 0; i < in->nports; i++) {
		u32 other = in->ports[i].cluster;
		u64 hs = 0, stall = 0, bus = 0, cycles = 0, num[AS_MAX_INPUTS], den[AS_MAX_INPUTS];
		int increase;

		if (other == p->index)
			continue;
		/* ClusterCounters::of(other): its ports and the threads that ran on it */
		for (j = 0; j < in->nports; j++) {
			if (in->ports[j].cluster == other) {
				hs += in->ports[j].hs_any;
				stall += in->ports[j].stall;
			}
		}
		for (j = 0; j < in->nthreads; j++) {
			if (in->threads[j].cluster == other) {
				bus += in->threads[j].bus_access;
				cycles += in->threads[j].cpu_cycles;
			}
		}
		for (k = 0; k < tree->nfeatures; k++) {
			int cci = tree->features[k] == AS_FEATURE_CCI_CONGESTION;

			num[k] = cci ? stall : bus;
			den[k] = cci ? hs : cycles;
		}
		increase = as_tree_increase(tree, num, den);
		if (increase || !found) {
			d->increase = (u8)increase;
			d->other_cluster = other;
		}
		found = 1;
		if (increase)
			break;
	}
	d->consulted = (u8)found;
	return found;
}

int as_policy_sample(struct as_policy *p, const struct as_tunables *t, const struct as_tree *tree,
		     const struct as_sample_in *in, struct as_decision *out)
{
	const struct as_limits *l = &in->lim;
	u32 max = upper_limit(l), load, target;
	struct as_decision d = { 0 };

	if (dbs_load(p, in, p->sampling_rate_us * p->rate_mult, t->ignore_nice_load, &load))
		return -1;
	p->last_load = load;
	d.load = load;
	if (load > t->up_threshold) {
		/* fully busy: max, held for sampling_down_factor periods if not there yet */
		if (l->cur_khz < max)
			p->rate_mult = t->sampling_down_factor;
		target = resolve_in(p, l, max, AS_RELATION_H);
	} else {
		/* proportional over the whole cpuinfo range (3.17's "no deadband") */
		u64 min_f = p->cpuinfo_min_khz;
		u64 max_f = p->cpuinfo_max_khz > min_f ? p->cpuinfo_max_khz : min_f;
		u32 freq_next = (u32)(min_f + AS_DIV64((u64)load * (max_f - min_f), 100));

		p->rate_mult = 1;
		target = resolve_in(p, l, freq_next, AS_RELATION_C);
		if (tree && consult(p, tree, in, &d)) {
			int steps = (int)(t->freq_step_opps ? t->freq_step_opps : 1);
			u32 stall = step_opp(p, l, l->cur_khz, d.increase ? steps : -steps);

			target = resolve_in(p, l, target > stall ? target : stall, AS_RELATION_C);
		}
	}
	d.target_khz = target;
	d.next_sample_us = p->sampling_rate_us * p->rate_mult;
	*out = d;
	return 0;
}
