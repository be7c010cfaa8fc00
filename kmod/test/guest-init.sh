#!/bin/busybox sh
# /init of the QEMU guest of scripts/kmod-ci.sh (busybox, Debian's amd64 kernel, no disk).
# Loads fake_cpufreq (two policies: CPU 0 with the Exynos 5422 LITTLE table, CPU 1 the big
# one), then cpufreq_anti_snoop three times:
#   1. test_hook=1, the built-in lctes2020-fig4: feeds /feeds/lctes2020-fig4.feed, whose answers
#      must equal the decisions hetlab's Rust governor and the C core agreed on
#      (/feeds/*.expected), and whose requests must reach the driver;
#   2. the same with the trained model loaded by request_firmware;
#   3. live, with software events standing in for the PMUs: the governor samples on its own
#      with 1 blocked, 1 running and 71 blocked watched threads; its cost per sample is read
#      from debugfs stats (hetlabd's governor_sample bench runs after it when present).
# Each time the policies go to anti_snoop and back to schedutil and the module is unloaded.
# Ends with "KMOD-TEST PASS" or "KMOD-TEST FAIL: why", then powers off.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t debugfs debugfs /sys/kernel/debug
mount -t tmpfs tmpfs /tmp
CPUFREQ=/sys/devices/system/cpu/cpufreq
DBG=/sys/kernel/debug
dmesg > /tmp/dmesg.boot # what the boot said: only later lines are this test's

fail() {
	echo "KMOD-TEST FAIL: $*"
	dmesg | tail -40
	poweroff -f
}

governors() {
	for p in policy0 policy1; do
		echo "$1" > $CPUFREQ/$p/scaling_governor || fail "cannot set $1 on $p"
		[ "$(cat $CPUFREQ/$p/scaling_governor)" = "$1" ] || fail "$p is not on $1"
	done
}

unload() {
	governors schedutil
	rmmod cpufreq_anti_snoop || fail "rmmod cpufreq_anti_snoop"
	lsmod | grep -q cpufreq_anti_snoop && fail "the module is still loaded"
}

# Feeds /feeds/$1.feed through the hook; the answers must be $1.expected, and the driver must
# have received exactly the changes of frequency they ask for.
feed() {
	echo > $DBG/fake_cpufreq/requests
	cur0=$(cat $CPUFREQ/policy0/scaling_cur_freq)
	cur1=$(cat $CPUFREQ/policy1/scaling_cur_freq)
	echo 0 > $DBG/anti_snoop/stats
	cat /feeds/$1.feed > $DBG/anti_snoop/feed || fail "$1: the feed was refused"
	cat $DBG/anti_snoop/answers > /tmp/answers
	cmp /tmp/answers /feeds/$1.expected || fail "$1: answers differ from the expected decisions"
	# a request per change of frequency: policy N is CPU N
	awk -v c0="$cur0" -v c1="$cur1" 'BEGIN { cur[0] = c0; cur[1] = c1 }
		{ if ($2 != cur[$1]) { print $1, $2; cur[$1] = $2 } }' /tmp/answers > /tmp/want
	cat $DBG/fake_cpufreq/requests > /tmp/requests
	cmp /tmp/requests /tmp/want || fail "$1: the driver's requests differ from the decisions"
	echo "kmod-test: $1: $(wc -l < /tmp/answers) answers equal the expected, $(wc -l < /tmp/requests) requests reached the driver"
	grep . $DBG/anti_snoop/stats | sed "s/^/kmod-test: $1 stats: /"
}

insmod /fake_cpufreq.ko || fail "insmod fake_cpufreq"
[ -d $CPUFREQ/policy1 ] || fail "fake_cpufreq made no policy1"

insmod /cpufreq_anti_snoop.ko test_hook=1 cluster_first_cpus=0,1 || fail "insmod (built-in model)"
governors anti_snoop
[ "$(cat $CPUFREQ/anti_snoop/model)" = "lctes2020-fig4" ] || fail "the built-in model is not lctes2020-fig4"
feed lctes2020-fig4
unload

insmod /cpufreq_anti_snoop.ko test_hook=1 cluster_first_cpus=0,1 model=anti_snoop-exynos5422.bin ||
	fail "insmod (trained model from /lib/firmware)"
governors anti_snoop
feed exynos5422-significant-depth3
# the tunables: Algorithm 2's step and the sampling rate, range-checked
echo 2 > $CPUFREQ/anti_snoop/freq_step || fail "freq_step refused 2"
echo 20000 > $CPUFREQ/anti_snoop/sampling_rate || fail "sampling_rate refused 20000"
[ "$(cat $CPUFREQ/anti_snoop/sampling_rate)" = 20000 ] || fail "sampling_rate does not read back"
echo 1 > $CPUFREQ/anti_snoop/sampling_rate 2>/dev/null && fail "sampling_rate took 1 us (below two ticks)"
echo 0 > $CPUFREQ/anti_snoop/freq_step 2>/dev/null && fail "freq_step took 0"
unload

insmod /cpufreq_anti_snoop.ko pmu=software cluster_first_cpus=0,1 || fail "insmod (live, software events)"
governors anti_snoop
# live samples for 3 s: what each cost, with the watched threads of $1
live() {
	echo 0 > $DBG/anti_snoop/stats
	sleep 3
	grep -q "live_samples [1-9]" $DBG/anti_snoop/stats || fail "the governor took no sample of its own"
	echo "kmod-test: live, $1: $(grep . $DBG/anti_snoop/stats | tr '\n' ';')"
}
watch() {
	echo "$1" > $CPUFREQ/anti_snoop/tasks || fail "cannot watch pid $1"
}
sleep 1000 &
watch $!
live "1 watched thread, blocked"
echo clear > $CPUFREQ/anti_snoop/tasks
(while :; do :; done) &
busy=$!
watch $busy
live "1 watched thread, running"
echo clear > $CPUFREQ/anti_snoop/tasks
i=0
while [ $i -lt 71 ]; do
	sleep 1000 &
	watch $!
	i=$((i + 1))
done
[ "$(wc -w < $CPUFREQ/anti_snoop/tasks)" = 71 ] || fail "71 threads are not watched"
live "71 watched threads, blocked"
kill $busy
echo clear > $CPUFREQ/anti_snoop/tasks
unload
rmmod fake_cpufreq || fail "rmmod fake_cpufreq"

if dmesg | tail -n +$(($(wc -l < /tmp/dmesg.boot) + 1)) | grep -E "Oops|BUG:|WARNING:|Call Trace|general protection"; then
	fail "the kernel log has an oops or a warning"
fi
if [ -e $DBG/kmemleak ]; then
	echo scan > $DBG/kmemleak
	[ -s $DBG/kmemleak ] && fail "kmemleak reports leaks: $(head -20 $DBG/kmemleak)"
	echo "kmod-test: kmemleak: no leak"
else
	echo "kmod-test: kmemleak: not in this kernel (CONFIG_DEBUG_KMEMLEAK is off)"
fi
# hetlabd's governor_sample bench in the same guest, when scripts/kmod-ci.sh --bench put it here
if [ -x /governor_sample ]; then
	kill $(jobs -p) 2>/dev/null
	/governor_sample 2>&1 | sed "s/^/kmod-test: hetlabd bench: /"
fi
echo "KMOD-TEST PASS"
poweroff -f
