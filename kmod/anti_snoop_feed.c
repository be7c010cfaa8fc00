// SPDX-License-Identifier: GPL-2.0
/* The feed's line reader: see anti_snoop_feed.h. No libc: the kernel builds it too. */
#include "anti_snoop_feed.h"

struct cursor {
	const char *p;
	int bad;
};

static void skip_blanks(struct cursor *c)
{
	while (*c->p == ' ' || *c->p == '\t' || *c->p == '\r')
		c->p++;
}

static u64 next_u64(struct cursor *c)
{
	u64 v = 0;
	int digits = 0;

	skip_blanks(c);
	while (*c->p >= '0' && *c->p <= '9') {
		u64 d = (u64)(*c->p - '0');

		if (v > (~(u64)0 - d) / 10)
			c->bad = 1; /* overflow */
		v = v * 10 + d;
		c->p++;
		digits++;
	}
	if (!digits || (*c->p && *c->p != ' ' && *c->p != '\t' && *c->p != '\r'))
		c->bad = 1;
	return v;
}

static u32 next_u32(struct cursor *c)
{
	u64 v = next_u64(c);

	if (v > 0xffffffffULL)
		c->bad = 1;
	return (u32)v;
}

static void next_name(struct cursor *c, char *out, unsigned int len)
{
	unsigned int n = 0;

	skip_blanks(c);
	while (*c->p && *c->p != ' ' && *c->p != '\t' && *c->p != '\r') {
		if (n == len)
			c->bad = 1;
		else
			out[n++] = *c->p;
		c->p++;
	}
	out[n] = 0;
	if (!n)
		c->bad = 1;
}

static void read_limits(struct cursor *c, struct as_limits *l)
{
	l->cur_khz = next_u32(c);
	l->policy_min_khz = next_u32(c);
	l->policy_max_khz = next_u32(c);
	l->thermal_cap_khz = next_u32(c);
}

static const char *read_sample(struct cursor *c, struct as_sample_in *in, const struct as_feed_room *room)
{
	u32 i;

	in->ncpus = next_u32(c);
	if (in->ncpus > room->max_cpus)
		return "more CPUs than the reader has room for";
	for (i = 0; i < in->ncpus && !c->bad; i++) {
		room->cpus[i].cpu = next_u32(c);
		room->cpus[i].wall_us = next_u64(c);
		room->cpus[i].idle_us = next_u64(c);
		room->cpus[i].nice_us = next_u64(c);
	}
	in->nports = next_u32(c);
	if (in->nports > room->max_ports)
		return "more CCI ports than the reader has room for";
	for (i = 0; i < in->nports && !c->bad; i++) {
		room->ports[i].cluster = next_u32(c);
		room->ports[i].hs_any = next_u64(c);
		room->ports[i].stall = next_u64(c);
	}
	in->nthreads = next_u32(c);
	if (in->nthreads > room->max_threads)
		return "more threads than the reader has room for";
	for (i = 0; i < in->nthreads && !c->bad; i++) {
		room->threads[i].cluster = next_u32(c);
		room->threads[i].bus_access = next_u64(c);
		room->threads[i].cpu_cycles = next_u64(c);
	}
	in->cpus = room->cpus;
	in->ports = room->ports;
	in->threads = room->threads;
	return NULL;
}

static const char *read_policy(struct cursor *c, struct as_feed_line *out)
{
	u32 i;

	next_name(c, out->cluster, AS_CLUSTER_NAME_LEN);
	out->cpuinfo_min_khz = next_u32(c);
	out->cpuinfo_max_khz = next_u32(c);
	out->tick_us = next_u64(c);
	out->latency_ns = next_u32(c);
	out->nopps = next_u32(c);
	if (out->nopps == 0 || out->nopps > AS_MAX_OPPS)
		return "a policy needs 1 to AS_MAX_OPPS frequencies";
	for (i = 0; i < out->nopps; i++)
		out->opps[i] = next_u32(c);
	return NULL;
}

int as_feed_parse(const char *line, struct as_feed_line *out, const struct as_feed_room *room, const char **why)
{
	struct cursor c = { line, 0 };

	*why = NULL;
	out->kind = 0;
	skip_blanks(&c);
	if (!*c.p || *c.p == '#' || *c.p == 'h') /* blank, comment, or the header line */
		return 0;
	out->kind = *c.p++;
	out->policy = next_u32(&c);
	switch (out->kind) {
	case 'P':
		*why = read_policy(&c, out);
		break;
	case 'T':
		out->tunables.sampling_rate_us = next_u64(&c);
		out->tunables.up_threshold = next_u32(&c);
		out->tunables.sampling_down_factor = next_u32(&c);
		out->tunables.ignore_nice_load = next_u32(&c);
		out->tunables.freq_step_opps = next_u32(&c);
		break;
	case 'B':
		read_limits(&c, &out->in.lim);
		break;
	case 'S':
		read_limits(&c, &out->in.lim);
		*why = read_sample(&c, &out->in, room);
		break;
	default:
		*why = "a line must start with P, T, B or S";
		return -1;
	}
	skip_blanks(&c);
	if (!*why && (c.bad || *c.p))
		*why = "a number is missing, malformed or out of range, or the line is too long";
	return *why ? -1 : 0;
}
