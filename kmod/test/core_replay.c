// SPDX-License-Identifier: GPL-2.0
/*
 * The module's decision core as a user-space program: replays a feed (anti_snoop_feed.h)
 * through anti_snoop_core.c with a model blob, printing "policy target_khz next_sample_us" for
 * every B and S line, as the module's debugfs test hook answers them.
 *
 *   core_replay MODEL.blob FEED [--time ROUNDS]
 *   core_replay MODEL.blob --tree CLUSTER   < lines of "num den" pairs, one per feature
 *
 * --time replays the samples ROUNDS more times (state reset each round) and prints the
 * decision's cost, ns per sample (the fastest round), to stderr. --tree walks one cluster's
 * tree for each line of counts and prints 1 (increase_frequency) or 0.
 *
 * Build: cc -std=c99 -O2 -Wall -Wextra -Werror -I kmod kmod/test/core_replay.c
 *           kmod/anti_snoop_core.c kmod/anti_snoop_feed.c -o core_replay
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "anti_snoop_core.h"
#include "anti_snoop_feed.h"

#define MAX_POLICIES 8

struct replay_policy {
	int defined;
	struct as_policy core;
	struct as_tunables tunables;
	const struct as_tree *tree;
};

/* A parsed line kept for replay, with its own arrays. */
struct kept {
	struct as_feed_line line;
	struct as_cpu_in *cpus;
	struct as_port_in *ports;
	struct as_thread_in *threads;
};

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "core_replay: %s: %s\n", what, detail);
	exit(2);
}

static unsigned char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t cap = 0, n = 0, got;

	if (!f)
		die(path, "cannot open");
	do {
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			buf = realloc(buf, cap + 1);
			if (!buf)
				die(path, "out of memory");
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got);
	fclose(f);
	buf[n] = 0;
	*len = n;
	return buf;
}

static struct kept *read_feed(char *text, size_t *count)
{
	struct kept *lines = NULL;
	size_t n = 0, cap = 0, lineno = 0;
	static struct as_cpu_in cpus[AS_MAX_POLICY_CPUS];
	static struct as_port_in ports[64];
	static struct as_thread_in threads[4096];
	struct as_feed_room room = { cpus, AS_MAX_POLICY_CPUS, ports, 64, threads, 4096 };
	char *line = text, *end;
	const char *why;

	for (; line && *line; line = end ? end + 1 : NULL) {
		struct kept k;

		end = strchr(line, '\n');
		if (end)
			*end = 0;
		lineno++;
		if (as_feed_parse(line, &k.line, &room, &why)) {
			fprintf(stderr, "core_replay: feed line %zu: %s\n", lineno, why);
			exit(2);
		}
		if (!k.line.kind)
			continue;
		k.cpus = malloc(sizeof(*cpus) * (k.line.in.ncpus + 1));
		k.ports = malloc(sizeof(*ports) * (k.line.in.nports + 1));
		k.threads = malloc(sizeof(*threads) * (k.line.in.nthreads + 1));
		if (!k.cpus || !k.ports || !k.threads)
			die("feed", "out of memory");
		if (k.line.kind == 'S') {
			memcpy(k.cpus, cpus, sizeof(*cpus) * k.line.in.ncpus);
			memcpy(k.ports, ports, sizeof(*ports) * k.line.in.nports);
			memcpy(k.threads, threads, sizeof(*threads) * k.line.in.nthreads);
		}
		k.line.in.cpus = k.cpus;
		k.line.in.ports = k.ports;
		k.line.in.threads = k.threads;
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			lines = realloc(lines, cap * sizeof(*lines));
			if (!lines)
				die("feed", "out of memory");
		}
		lines[n++] = k;
	}
	*count = n;
	return lines;
}

/* Runs every line once; prints the answers when out is not NULL. Returns the samples' cost, ns. */
static double replay(const struct as_model *m, const struct kept *lines, size_t n, FILE *out)
{
	struct replay_policy pol[MAX_POLICIES];
	struct timespec t0, t1;
	double ns = 0;
	size_t i;

	memset(pol, 0, sizeof(pol));
	for (i = 0; i < n; i++) {
		const struct as_feed_line *l = &lines[i].line;
		struct replay_policy *p;
		struct as_decision d;

		if (l->policy >= MAX_POLICIES)
			die("feed", "policy index too large");
		p = &pol[l->policy];
		switch (l->kind) {
		case 'P':
			if (as_policy_init(&p->core, l->policy, l->opps, l->nopps, l->cpuinfo_min_khz, l->cpuinfo_max_khz,
					   as_default_sampling_rate_us(l->tick_us, l->latency_ns)))
				die("feed", "a policy's table is not ascending");
			p->tree = as_model_tree(m, l->cluster);
			if (!p->tree)
				die(l->cluster, "the model has no tree for this cluster");
			as_tunables_default(&p->tunables);
			p->defined = 1;
			break;
		case 'T':
			p->tunables = l->tunables;
			break;
		case 'B':
		case 'S':
			if (!p->defined)
				die("feed", "a sample of a policy not defined by a P line");
			if (l->kind == 'B') {
				d = as_policy_start(&p->core, &p->tunables, &l->in.lim);
			} else {
				clock_gettime(CLOCK_MONOTONIC, &t0);
				if (as_policy_sample(&p->core, &p->tunables, p->tree, &l->in, &d))
					die("feed", "a sample has more CPUs than the core keeps");
				clock_gettime(CLOCK_MONOTONIC, &t1);
				ns += (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
			}
			if (out)
				fprintf(out, "%u %u %llu\n", l->policy, d.target_khz, (unsigned long long)d.next_sample_us);
			break;
		}
	}
	return ns;
}

/* --tree: one verdict per line of counts. */
static int trees(const struct as_model *m, const char *cluster)
{
	const struct as_tree *t = as_model_tree(m, cluster);
	unsigned long long v[2 * AS_MAX_INPUTS];
	u64 num[AS_MAX_INPUTS], den[AS_MAX_INPUTS];
	unsigned int i;

	if (!t)
		die(cluster, "the model has no tree for this cluster");
	for (;;) {
		for (i = 0; i < 2u * t->nfeatures; i++)
			if (scanf("%llu", &v[i]) != 1)
				return 0;
		for (i = 0; i < t->nfeatures; i++) {
			num[i] = v[2 * i];
			den[i] = v[2 * i + 1];
		}
		printf("%d\n", as_tree_increase(t, num, den));
	}
}

int main(int argc, char **argv)
{
	static struct as_model model;
	size_t blob_len, feed_len, n, i, samples = 0;
	unsigned char *blob;
	char *feed;
	struct kept *lines;
	const char *why;
	long rounds = 0, r;
	double best = 0;

	if (argc != 3 && !(argc == 5 && strcmp(argv[3], "--time") == 0) &&
	    !(argc == 4 && strcmp(argv[2], "--tree") == 0)) {
		fprintf(stderr, "usage: core_replay MODEL.blob FEED [--time ROUNDS] | MODEL.blob --tree CLUSTER\n");
		return 2;
	}
	if (argc == 5)
		rounds = strtol(argv[4], NULL, 10);
	blob = read_all(argv[1], &blob_len);
	if (as_model_parse(&model, blob, blob_len, &why))
		die(argv[1], why);
	if (argc == 4)
		return trees(&model, argv[3]);
	feed = (char *)read_all(argv[2], &feed_len);
	if (strncmp(feed, AS_FEED_HEADER, strlen(AS_FEED_HEADER)) != 0)
		die(argv[2], "not a feed (no '" AS_FEED_HEADER "' header)");
	lines = read_feed(feed, &n);
	replay(&model, lines, n, stdout);
	for (i = 0; i < n; i++)
		samples += lines[i].line.kind == 'S';
	for (r = 0; r < rounds; r++) {
		double ns = replay(&model, lines, n, NULL);

		if (r == 0 || ns < best)
			best = ns;
	}
	if (rounds > 0 && samples)
		fprintf(stderr, "core_replay: %zu samples, %.1f ns per sample (fastest of %ld rounds)\n", samples,
			best / (double)samples, rounds);
	return 0;
}
