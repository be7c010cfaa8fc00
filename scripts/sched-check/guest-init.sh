#!/bin/busybox sh
# /init of scripts/sched-check.sh's QEMU guest (busybox, one of Debian's kernels, no disk): runs
# /wakeup_latency three times under each set of sched features below (EEVDF's on a 6.6+ kernel,
# CFS's defaults on an older one), restoring the defaults after each; prints the kernel, its
# base slice and its features first, then powers off. Every line the host reads starts with
# "SCHED-CHECK".
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t debugfs debugfs /sys/kernel/debug
FEATURES=/sys/kernel/debug/sched/features
SLICE=/sys/kernel/debug/sched/base_slice_ns
[ -f $SLICE ] || SLICE=/sys/kernel/debug/sched/min_granularity_ns # CFS's (before 6.6)
echo "SCHED-CHECK kernel $(uname -r) cpus=$(grep -c ^processor /proc/cpuinfo) $(basename $SLICE)=$(cat $SLICE)"
echo "SCHED-CHECK features $(cat $FEATURES)"
if grep -q PLACE_LAG $FEATURES; then
	SETS="default NO_DELAY_DEQUEUE NO_DELAY_DEQUEUE+NO_PLACE_LAG NO_DELAY_DEQUEUE+NO_RUN_TO_PARITY"
else
	SETS="default"
fi
# CPU, hogs, period µs, run µs, jobs, warm-up jobs: the same as scripts/sched-check/wakeup.json
# (CPU 4; CPU 0 on a one-CPU guest)
CPU=4
[ "$(grep -c ^processor /proc/cpuinfo)" -gt 4 ] || CPU=0
ARGS="$CPU 3 10000 1000 500 20"
# the first run after boot overran 34-84 jobs of 480 in four boots of 6.12, and every later run
# under the same features none: boot's own deferred work, not the scheduler; a throwaway run
# takes it
/wakeup_latency warm-up $ARGS
# three runs of each: each starts at another phase of the 4 ms tick
for run in 1 2 3; do
	for set in $SETS; do
		features=$(echo "$set" | tr '+' ' ' | sed 's/^default$//')
		for f in $features; do echo "$f" > $FEATURES || echo "SCHED-CHECK error: cannot set $f"; done
		/wakeup_latency "$set run=$run" $ARGS
		for f in $features; do echo "${f#NO_}" > $FEATURES; done
	done
done
echo "SCHED-CHECK done"
poweroff -f
