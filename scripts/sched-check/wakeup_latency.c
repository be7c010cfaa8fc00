/* One periodic thread and HOGS CPU-bound threads on one CPU, as rt-app runs them: the periodic
 * thread wakes at each absolute release (period PERIOD_US), runs RUN_US of its own CPU time and
 * sleeps to the next release; a late job starts at once. Prints, for the jobs after the first
 * WARMUP, the wake-up latency (from the release to the first instruction after the sleep,
 * rt-app's wu_lat; 0 for a job that did not sleep) and whether the job ended after the next
 * release (an overrun: rt-app's negative slack), as one summary line:
 *   SCHED-CHECK <label> jobs=N wu_lat_mean_us=.. wu_lat_p50_us=.. wu_lat_p95_us=.. wu_lat_max_us=.. overruns=K
 * Usage: wakeup_latency LABEL CPU HOGS PERIOD_US RUN_US JOBS WARMUP
 * Threads, not processes, so that autogroup (off on the guest's command line anyway) and task
 * groups play no part: every thread is SCHED_OTHER at nice 0 in the root group. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int cpu;

static void pin_here(void)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0) {
		perror("sched_setaffinity");
		exit(1);
	}
}

static double now_us(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void *hog(void *unused)
{
	(void)unused;
	pin_here();
	for (volatile unsigned long n = 0;; n++)
		;
	return NULL;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc != 8) {
		fprintf(stderr, "usage: %s LABEL CPU HOGS PERIOD_US RUN_US JOBS WARMUP\n", argv[0]);
		return 2;
	}
	const char *label = argv[1];
	cpu = atoi(argv[2]);
	int hogs = atoi(argv[3]), jobs = atoi(argv[6]), warmup = atoi(argv[7]);
	double period_us = atof(argv[4]), run_us = atof(argv[5]);
	pin_here();
	for (int i = 0; i < hogs; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, hog, NULL) != 0) {
			perror("pthread_create");
			return 1;
		}
	}
	double *latency_us = calloc(jobs, sizeof(double));
	int kept = 0, overruns = 0;
	double release_us = now_us(CLOCK_MONOTONIC) + period_us;
	for (int job = 0; job < jobs; job++) {
		struct timespec at = { (time_t)(release_us / 1e6), (long)((release_us - (time_t)(release_us / 1e6) * 1e6) * 1e3) };
		/* a job released while the last one still ran starts at once: no wake-up, and its
		 * wu_lat is 0, as rt-app resets it after an overrun */
		int sleeps = now_us(CLOCK_MONOTONIC) < release_us;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
		double wake_us = now_us(CLOCK_MONOTONIC);
		double cpu0_us = now_us(CLOCK_THREAD_CPUTIME_ID);
		while (now_us(CLOCK_THREAD_CPUTIME_ID) - cpu0_us < run_us)
			;
		double end_us = now_us(CLOCK_MONOTONIC);
		if (job >= warmup) {
			latency_us[kept++] = sleeps && wake_us > release_us ? wake_us - release_us : 0.0;
			overruns += end_us > release_us + period_us;
		}
		release_us += period_us;
	}
	double sum = 0;
	for (int i = 0; i < kept; i++)
		sum += latency_us[i];
	qsort(latency_us, kept, sizeof(double), by_value);
	printf("SCHED-CHECK %s jobs=%d wu_lat_mean_us=%.0f wu_lat_p50_us=%.0f wu_lat_p95_us=%.0f wu_lat_max_us=%.0f overruns=%d\n",
	       label, kept, sum / kept, latency_us[kept / 2], latency_us[(int)(kept * 0.95)], latency_us[kept - 1], overruns);
	fflush(stdout);
	return 0;
}
