#!/usr/bin/env bash
# hetlab's EEVDF against a real Linux 6.12 kernel (docs/eevdf-kernel-check.md): one periodic
# thread (1 ms every 10 ms) beside three CPU hogs on one CPU, its wake-up latency and overruns
# under four sets of sched features, measured in a QEMU guest and simulated by hetlab.
#  1. downloads Debian's 6.12 cloud kernel (bookworm-backports, the version and SHA-256 pinned
#     below) once into $EEVDF_CHECK_DIR (default /tmp/hetlab-eevdf-check);
#  2. builds scripts/eevdf-check/wakeup_latency.c statically and boots the kernel in QEMU (TCG,
#     8 CPUs as the RK3588 has, a busybox initramfs running scripts/eevdf-check/guest-init.sh)
#     with `-icount`: the guest's clock follows its instruction count, so the host's load does
#     not reach the measurement;
#  3. simulates scripts/eevdf-check/wakeup.json (the same threads, as rt-app runs them) on the
#     rk3588 platform (8 CPUs, HZ 250 as Debian's kernel) under `eevdf`, with the guest's base
#     slice and the features as --sched-tunable, at three phases of the releases;
#  4. prints both side by side.
# Needs qemu-system-x86, busybox-static, cpio and gcc (it installs the first three with apt-get
# when they are missing) and hetlab (`make setup`). About a minute; not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
WORK=${EEVDF_CHECK_DIR:-/tmp/hetlab-eevdf-check}
HETLAB=${HETLAB:-$REPO/.venv/bin/hetlab}
KVER=6.12.95+deb12-cloud-amd64
DEB=linux-image-${KVER}-unsigned_6.12.95-1~bpo12+1_amd64.deb
DEB_URL=http://deb.debian.org/debian/pool/main/l/linux/$DEB
DEB_SHA256=6ed2b95055a96af9f543a427cc1bc56f67e5e72ec16b227ec965a9325aeb3480
say() { echo "eevdf-check: $*"; }
die() {
	echo "eevdf-check: error: $*" >&2
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

# ---- 1. the kernel -----------------------------------------------------------------------
mkdir -p "$WORK"
VMLINUZ=$WORK/vmlinuz-$KVER
if [ ! -f "$VMLINUZ" ]; then
	curl -fsS -o "$WORK/$DEB" "$DEB_URL" || die "cannot download $DEB_URL"
	echo "$DEB_SHA256  $WORK/$DEB" | sha256sum -c --quiet - || die "$DEB does not have the pinned SHA-256"
	dpkg-deb --fsys-tarfile "$WORK/$DEB" | tar -x -O "./boot/vmlinuz-$KVER" >"$VMLINUZ.part"
	mv "$VMLINUZ.part" "$VMLINUZ"
	rm -f "$WORK/$DEB"
fi

# ---- 2. the guest ------------------------------------------------------------------------
INITRD=$WORK/initrd
rm -rf "$INITRD"
mkdir -p "$INITRD/bin" "$INITRD"/{proc,sys,dev}
cp /bin/busybox "$INITRD/bin/busybox"
cp scripts/eevdf-check/guest-init.sh "$INITRD/init"
chmod +x "$INITRD/init"
gcc -O2 -static -pthread -Wall -Wextra -Werror -o "$INITRD/wakeup_latency" scripts/eevdf-check/wakeup_latency.c
(cd "$INITRD" && find . | cpio -o -H newc --quiet | gzip -1) >"$WORK/initrd.gz"
say "booting Linux $KVER in QEMU (TCG, -icount shift=1: 2 ns per instruction)"
# noautogroup: every thread in the root group, as hetlab runs them. QEMU 7.2's TCG with -icount
# and 8 CPUs sometimes faults during boot (a double fault or a bad pointer with garbage EFLAGS,
# 2 of 7 boots here, before any measurement): such a boot prints no result and is retried.
for attempt in 1 2 3; do
	timeout 600 qemu-system-x86_64 -machine accel=tcg -cpu max -icount shift=1,sleep=off -m 512 -smp 8 \
		-nographic -no-reboot -kernel "$VMLINUZ" -initrd "$WORK/initrd.gz" \
		-append "console=ttyS0 panic=-1 noautogroup loglevel=4" >"$WORK/guest.log" 2>&1 || true
	grep -aq "EEVDF-CHECK done" "$WORK/guest.log" && break
	say "boot $attempt did not finish: $(grep -aoE "(Kernel panic|Oops)[^\r]*" "$WORK/guest.log" | head -1)"
done
grep -aq "EEVDF-CHECK done" "$WORK/guest.log" || {
	tail -40 "$WORK/guest.log"
	die "the guest did not finish in three boots (log: $WORK/guest.log)"
}
grep -aoE "EEVDF-CHECK (kernel|features).*" "$WORK/guest.log" | tr -d '\r' | sed 's/^EEVDF-CHECK /kernel: /'

# ---- 3. hetlab ---------------------------------------------------------------------------
LOGS=$WORK/rtapp-logs
# the guest's base slice (6.12.95 shows a 0.70 ms base x 4; hetlab's default is 6.12.19's 0.75 ms)
SLICE_NS=$(grep -aoE "base_slice_ns=[0-9]+" "$WORK/guest.log" | head -1 | cut -d= -f2)
sim() { # LABEL RUN TUNABLES...: the summary line of one simulated run
	local label=$1 run=$2
	shift 2
	rm -rf "$LOGS" && mkdir -p "$LOGS"
	# each run's periodic thread starts (run - 1) x 667 µs later: three phases of its releases
	# against the 4 ms tick, whose phase in the guest each run finds where the last one ended
	python3 -c 'import json, sys; w = json.load(open(sys.argv[1])); w["tasks"]["periodic"]["delay"] = int(sys.argv[2])
json.dump(w, open(sys.argv[3], "w"))' scripts/eevdf-check/wakeup.json $(((run - 1) * 667)) "$WORK/wakeup.json"
	"$HETLAB" simulate --platform rk3588 --scheduler eevdf --governor performance --workload "$WORK/wakeup.json" \
		--sched-tunable "base_slice_ns=$SLICE_NS" --rtapp-logs "$LOGS" "$@" >/dev/null
	# the same jobs as the guest's: the 20 after the first are warm-up, then up to 480
	python3 - "$label run=$run" "$LOGS/wakeup-periodic-3.log" <<'PY'
import sys
label, log = sys.argv[1:]
rows = [line.split() for line in open(log) if not line.startswith("#")][20:500]
lat = sorted(float(r[10]) for r in rows)  # wu_lat
overruns = sum(float(r[7]) < 0 for r in rows)  # negative slack
n = len(lat)
print(f"EEVDF-CHECK {label} jobs={n} wu_lat_mean_us={sum(lat) / n:.0f} wu_lat_p50_us={lat[n // 2]:.0f} "
      f"wu_lat_p95_us={lat[int(n * 0.95)]:.0f} wu_lat_max_us={lat[-1]:.0f} overruns={overruns}")
PY
}

# ---- 4. side by side ---------------------------------------------------------------------
table() { # the summary lines as a table
	sed -E 's/^EEVDF-CHECK //; s/ (run|jobs|wu_lat_mean_us|wu_lat_p50_us|wu_lat_p95_us|wu_lat_max_us|overruns)=/\t/g' |
		awk -F'\t' '{ printf "%-40s %3s %5s %8s %8s %8s %8s %9s\n", $1, $2, $3, $4, $5, $6, $7, $8 }'
}
printf "%-40s %3s %5s %8s %8s %8s %8s %9s\n" "kernel or model (features)" "run" "jobs" "mean µs" "p50 µs" "p95 µs" \
	"max µs" "overruns"
{
	grep -aoE "EEVDF-CHECK [A-Za-z_+]+ run=[0-9] jobs=.*" "$WORK/guest.log" | tr -d '\r' | sed 's/^EEVDF-CHECK /EEVDF-CHECK linux /'
	for run in 1 2 3; do
		sim "hetlab" "$run"
		sim "hetlab PLACE_LAG=0" "$run" --sched-tunable PLACE_LAG=0
		sim "hetlab RUN_TO_PARITY=0" "$run" --sched-tunable RUN_TO_PARITY=0
	done
} | table
