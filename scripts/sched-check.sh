#!/usr/bin/env bash
# hetlab's fair classes against real kernels (docs/sched-kernel-check.md): one periodic thread
# (1 ms every 10 ms) beside three CPU hogs on one CPU, its wake-up latency and overruns, measured
# in a QEMU guest and simulated by hetlab, for two kernels: Debian's 6.12 (EEVDF, under four sets
# of sched features) and 6.1 (CFS).
#  1. downloads each kernel's package (Debian's cloud flavour; the versions and SHA-256 pinned
#     below: a Debian point release may retire one, then update the three lines) once into
#     $SCHED_CHECK_DIR (default /tmp/hetlab-sched-check);
#  2. builds scripts/sched-check/wakeup_latency.c statically and boots each kernel in QEMU (TCG,
#     6.12 on 8 CPUs as the RK3588 has, 6.1 on one; a busybox initramfs running
#     scripts/sched-check/guest-init.sh)
#     with `-icount`: the guest's clock follows its instruction count, so the host's load does
#     not reach the measurement;
#  3. simulates scripts/sched-check/wakeup.json (the same threads, as rt-app runs them) on the
#     rk3588 platform (8 CPUs, HZ 250 as Debian's kernels): under `eevdf` with the guest's base
#     slice and the features as --sched-tunable, and under `smp` (3.10's CFS) and `eas` (5.10's),
#     at three phases of the releases;
#  4. prints both side by side.
# Needs qemu-system-x86, busybox-static, cpio and gcc (it installs the first three with apt-get
# when they are missing) and hetlab (`make setup`). About six minutes; not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
WORK=${SCHED_CHECK_DIR:-/tmp/hetlab-sched-check}
HETLAB=${HETLAB:-$REPO/.venv/bin/hetlab}
POOL=http://deb.debian.org/debian/pool/main/l/linux
# name, CPUs, kernel release, package file, SHA-256 (bookworm-backports' 6.12, bookworm's 6.1).
# 6.1 boots on one CPU: under -icount it hangs bringing up the second ("Booting SMP
# configuration"), with or without tsc=reliable; 6.12 boots on eight.
KERNELS=(
	"6.12 8 6.12.95+deb12-cloud-amd64 linux-image-6.12.95+deb12-cloud-amd64-unsigned_6.12.95-1~bpo12+1_amd64.deb 6ed2b95055a96af9f543a427cc1bc56f67e5e72ec16b227ec965a9325aeb3480"
	"6.1 1 6.1.0-50-cloud-amd64 linux-image-6.1.0-50-cloud-amd64-unsigned_6.1.176-1_amd64.deb 4f217f710203cdfedde21f836bc66a0a4d773752d7fe8e5e13f701f891788945"
)
# Ctrl-C stops the whole check at once: QEMU runs in the foreground (timeout --foreground) with
# its stdin from /dev/null, so the terminal's SIGINT reaches it and it does not take the terminal
trap 'echo "sched-check: interrupted" >&2; exit 130' INT TERM
say() { echo "sched-check: $*"; }
die() {
	echo "sched-check: error: $*" >&2
	exit 1
}
[ -x "$HETLAB" ] || die "no hetlab at $HETLAB: run 'make setup' first (or set HETLAB)"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
need=""
command -v qemu-system-x86_64 >/dev/null || need="$need qemu-system-x86"
[ -x /bin/busybox ] || need="$need busybox-static"
command -v cpio >/dev/null || need="$need cpio"
if [ -n "$need" ]; then
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $need >/dev/null
fi
mkdir -p "$WORK"

# ---- the guest's initramfs (one for both kernels) ------------------------------------------
INITRD=$WORK/initrd
rm -rf "$INITRD"
mkdir -p "$INITRD/bin" "$INITRD"/{proc,sys,dev}
cp /bin/busybox "$INITRD/bin/busybox"
cp scripts/sched-check/guest-init.sh "$INITRD/init"
chmod +x "$INITRD/init"
gcc -O2 -static -pthread -Wall -Wextra -Werror -o "$INITRD/wakeup_latency" scripts/sched-check/wakeup_latency.c
(cd "$INITRD" && find . | cpio -o -H newc --quiet | gzip -1) >"$WORK/initrd.gz"

boot() { # NAME CPUS KVER DEB SHA256: the kernel's summary lines in $WORK/guest-NAME.log
	local name=$1 cpus=$2 kver=$3 deb=$4 sha=$5 log=$WORK/guest-$1.log vmlinuz=$WORK/vmlinuz-$3
	if [ ! -f "$vmlinuz" ]; then
		curl -fsS -o "$WORK/$deb" "$POOL/$deb" || die "cannot download $POOL/$deb"
		echo "$sha  $WORK/$deb" | sha256sum -c --quiet - || die "$deb does not have the pinned SHA-256"
		dpkg-deb --fsys-tarfile "$WORK/$deb" | tar -x -O "./boot/vmlinuz-$kver" >"$vmlinuz.part"
		mv "$vmlinuz.part" "$vmlinuz"
		rm -f "$WORK/$deb"
	fi
	say "booting Linux $kver on $cpus CPUs in QEMU (TCG, -icount shift=1: 2 ns per instruction)"
	# noautogroup: every thread in the root group, as hetlab runs them. QEMU 7.2's TCG with
	# -icount and 8 CPUs sometimes faults during boot (a double fault or a bad pointer with
	# garbage EFLAGS, 3 of 10 boots of 6.12 here, before any measurement): oops=panic ends such a
	# boot at once, and it is retried.
	for attempt in 1 2 3; do
		timeout --foreground 900 qemu-system-x86_64 -machine accel=tcg -cpu max -icount shift=1,sleep=off -m 512 -smp "$cpus" \
			-nographic -no-reboot -kernel "$vmlinuz" -initrd "$WORK/initrd.gz" \
			-append "console=ttyS0 panic=-1 oops=panic noautogroup loglevel=4" </dev/null >"$log" 2>&1 || true
		grep -aq "SCHED-CHECK done" "$log" && break
		say "boot $attempt of $kver did not finish: $(grep -aoE "(Kernel panic|Oops)[^\r]*" "$log" | head -1)"
	done
	grep -aq "SCHED-CHECK done" "$log" || {
		tail -40 "$log"
		die "the $kver guest did not finish in three boots (log: $log)"
	}
	grep -aoE "SCHED-CHECK (kernel|features).*" "$log" | tr -d '\r' | sed 's/^SCHED-CHECK /guest: /'
}
for k in "${KERNELS[@]}"; do
	# shellcheck disable=SC2086
	boot $k
done

# ---- hetlab -------------------------------------------------------------------------------
LOGS=$WORK/rtapp-logs
# 6.12's base slice as its guest shows it (6.12.95: a 0.70 ms base x 4; hetlab's default is
# 6.12.19's 0.75 ms)
SLICE_NS=$(grep -aoE "base_slice_ns=[0-9]+" "$WORK/guest-6.12.log" | head -1 | cut -d= -f2)
sim() { # LABEL RUN SIMULATE-OPTIONS...: the summary line of one simulated run
	local label=$1 run=$2
	shift 2
	rm -rf "$LOGS" && mkdir -p "$LOGS"
	# each run's periodic thread starts (run - 1) x 667 µs later, its timer first as the guest's
	# program sleeps first: 10 ms releases against the 4 ms tick alternate 2 ms apart, so three
	# starts 667 µs apart cover their phases (the guest's runs find theirs where the last ended)
	python3 -c 'import json, sys; w = json.load(open(sys.argv[1])); w["tasks"]["periodic"]["delay"] = int(sys.argv[2])
json.dump(w, open(sys.argv[3], "w"))' scripts/sched-check/wakeup.json $(((run - 1) * 667)) "$WORK/wakeup.json"
	"$HETLAB" simulate --platform rk3588 --workload "$WORK/wakeup.json" --rtapp-logs "$LOGS" "$@" >/dev/null
	# the same jobs as the guest's: the 20 after the first are warm-up, then up to 480
	python3 - "$label run=$run" "$LOGS/wakeup-periodic-3.log" <<'PY'
import sys
label, log = sys.argv[1:]
rows = [line.split() for line in open(log) if not line.startswith("#")][20:500]
lat = sorted(float(r[10]) for r in rows)  # wu_lat
overruns = sum(float(r[7]) < 0 for r in rows)  # negative slack
n = len(lat)
print(f"SCHED-CHECK {label} jobs={n} wu_lat_mean_us={sum(lat) / n:.0f} wu_lat_p50_us={lat[n // 2]:.0f} "
      f"wu_lat_p95_us={lat[int(n * 0.95)]:.0f} wu_lat_max_us={lat[-1]:.0f} overruns={overruns}")
PY
}

# ---- side by side ---------------------------------------------------------------------------
table() { # the summary lines as a table
	sed -E 's/^SCHED-CHECK //; s/ (run|jobs|wu_lat_mean_us|wu_lat_p50_us|wu_lat_p95_us|wu_lat_max_us|overruns)=/\t/g' |
		awk -F'\t' '{ printf "%-46s %3s %5s %8s %8s %8s %8s %9s\n", $1, $2, $3, $4, $5, $6, $7, $8 }'
}
printf "%-46s %3s %5s %8s %8s %8s %8s %9s\n" "kernel or model (features)" "run" "jobs" "mean µs" "p50 µs" "p95 µs" \
	"max µs" "overruns"
{
	for name in 6.12 6.1; do
		grep -aoE "SCHED-CHECK [A-Za-z_+]+ run=[0-9] jobs=.*" "$WORK/guest-$name.log" | tr -d '\r' |
			sed "s/^SCHED-CHECK /SCHED-CHECK linux $name /"
	done
	eevdf=(--scheduler eevdf --governor performance --sched-tunable "base_slice_ns=$SLICE_NS")
	for run in 1 2 3; do
		sim "hetlab eevdf" "$run" "${eevdf[@]}"
		sim "hetlab eevdf PLACE_LAG=0" "$run" "${eevdf[@]}" --sched-tunable PLACE_LAG=0
		sim "hetlab eevdf RUN_TO_PARITY=0" "$run" "${eevdf[@]}" --sched-tunable RUN_TO_PARITY=0
		sim "hetlab smp (3.10 CFS)" "$run" --scheduler smp --governor performance
		sim "hetlab eas (5.10 CFS)" "$run" --scheduler eas --governor schedutil
	done
} | table
