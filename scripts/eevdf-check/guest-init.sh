#!/bin/busybox sh
# /init of scripts/eevdf-check.sh's QEMU guest (busybox, Debian's 6.12 kernel, no disk): runs
# /wakeup_latency three times under each set of EEVDF's sched features below, restoring the
# defaults after each, prints the kernel's base slice and HZ-related facts, then powers off. Every line the
# host reads starts with "EEVDF-CHECK".
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t debugfs debugfs /sys/kernel/debug
FEATURES=/sys/kernel/debug/sched/features
echo "EEVDF-CHECK kernel $(uname -r) cpus=$(grep -c ^processor /proc/cpuinfo) base_slice_ns=$(cat /sys/kernel/debug/sched/base_slice_ns)"
echo "EEVDF-CHECK features $(cat $FEATURES)"
# CPU, hogs, period µs, run µs, jobs, warm-up jobs: the same as scripts/eevdf-check/wakeup.json
ARGS="4 3 10000 1000 500 20"
# the first run after boot overran 34-84 jobs of 480 in four boots, and every later run under
# the same features none: boot's own deferred work, not EEVDF; a throwaway run takes it
/wakeup_latency warm-up $ARGS
# three runs of each: each starts at another phase of the 4 ms tick
for run in 1 2 3; do
	for set in "" "NO_DELAY_DEQUEUE" "NO_DELAY_DEQUEUE NO_PLACE_LAG" "NO_DELAY_DEQUEUE NO_RUN_TO_PARITY"; do
		for f in $set; do echo "$f" > $FEATURES || echo "EEVDF-CHECK error: cannot set $f"; done
		label=$(echo "${set:-default}" | tr ' ' '+')
		/wakeup_latency "$label run=$run" $ARGS
		for f in $set; do echo "${f#NO_}" > $FEATURES; done
	done
done
echo "EEVDF-CHECK done"
poweroff -f
