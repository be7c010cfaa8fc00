#!/usr/bin/env bash
# The kernel module's CI step (called by .ci/run; docs/kernel-module.md):
#  1. installs Debian's kernel headers and cross compilers (apt-get; root or sudo);
#  2. builds kmod/ (cpufreq_anti_snoop.ko and the test's fake_cpufreq.ko) for amd64, arm64 and
#     armhf with W=1; any compiler or modpost warning fails the step;
#  3. runs the conformance test (the C core, hetlabd's and the simulator's governor), which also
#     writes what the guest feeds the module;
#  4. boots Debian's amd64 kernel in QEMU (TCG, a busybox initramfs) running
#     kmod/test/guest-init.sh: fake driver, governor switched in and out, fed decisions checked,
#     live samples timed, modules unloaded, no oops.
# Downloads are kept in $KMOD_CI_DIR (default /tmp/hetlab-kmod-ci) for the next run.
# --bench also runs hetlabd's governor_sample bench (built static) in the guest, after the
# module's own live samples, so both costs come from the same emulated machine (not in CI: it
# takes minutes under TCG).
set -euo pipefail
BENCH=0
[ "${1:-}" = "--bench" ] && BENCH=1
cd "$(dirname "$0")/.."
REPO=$PWD
WORK=${KMOD_CI_DIR:-/tmp/hetlab-kmod-ci}
T0=$(date +%s.%N)
trap 'echo "kmod-ci: interrupted" >&2; exit 130' INT TERM
say() { echo "kmod-ci: $*"; }
die() {
	echo "kmod-ci: error: $*" >&2
	exit 1
}
elapsed() { echo "$(date +%s.%N) $T0" | awk '{printf "%.1f", $1 - $2}'; }
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo

# ---- 1. packages --------------------------------------------------------------------------
NATIVE="linux-headers-amd64 gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf qemu-system-x86 busybox-static cpio"
foreign=$(dpkg --print-foreign-architectures)
need_update=0
for a in arm64 armhf; do
	if ! grep -qx "$a" <<<"$foreign"; then
		$SUDO dpkg --add-architecture "$a"
		need_update=1
	fi
done
# shellcheck disable=SC2086
if [ $need_update = 1 ] || ! dpkg -s $NATIVE >/dev/null 2>&1 || ! apt-cache show linux-headers-arm64:arm64 >/dev/null 2>&1; then
	# a mirror caught mid-sync fails one index: what the step needs is checked right after
	$SUDO apt-get update -q >/dev/null || say "apt-get update reported errors; going on with the indexes it has"
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $NATIVE >/dev/null
fi
say "packages ready ($(elapsed) s)"

# The headers package a metapackage points at: linux-headers-6.1.0-N-FLAVOUR.
headers_of() { apt-cache depends "$1" 2>/dev/null | awk '/Depends: linux-headers-/ {print $2; exit}' | sed 's/:.*//'; }
AMD64_HDR=$(headers_of linux-headers-amd64)
ARM64_HDR=$(headers_of linux-headers-arm64:arm64)
ARMHF_HDR=$(headers_of linux-headers-armmp:armhf)
[ -n "$AMD64_HDR" ] && [ -n "$ARM64_HDR" ] && [ -n "$ARMHF_HDR" ] ||
	die "cannot find Debian's headers packages for amd64/arm64/armhf (amd64 '$AMD64_HDR', arm64 '$ARM64_HDR', armhf '$ARMHF_HDR')"
KVER=${AMD64_HDR#linux-headers-}

# Foreign headers are unpacked, not installed: their scripts link to the host's linux-kbuild.
ROOT=$WORK/root
mkdir -p "$WORK/debs" "$ROOT/usr/lib"
ln -sfn /usr/lib/linux-kbuild-6.1 "$ROOT/usr/lib/linux-kbuild-6.1"
fetch() { # package[:arch] -> the path of its .deb, downloaded once
	local name=${1%%:*}
	if ! ls "$WORK/debs/${name}_"*.deb >/dev/null 2>&1; then
		(cd "$WORK/debs" && apt-get download "$1" >/dev/null 2>&1) || die "apt-get download $1 failed"
	fi
	ls "$WORK/debs/${name}_"*.deb | tail -1
}
for h in "$ARM64_HDR:arm64" "$ARMHF_HDR:armhf"; do
	[ -f "$ROOT/usr/src/${h%%:*}/Makefile" ] && continue
	dpkg -x "$(fetch "$h")" "$ROOT"
	common=$(apt-cache depends "$h" | awk '/Depends: <?linux-headers-.*-common/ {gsub(/[<>]/, "", $2); print $2; exit}' | sed 's/:.*//')
	dpkg -x "$(fetch "$common")" "$ROOT"
	sed -i "s#^include /usr/src/#include $ROOT/usr/src/#" "$ROOT/usr/src/${h%%:*}/Makefile"
done
VMLINUZ=$ROOT/boot/vmlinuz-$KVER
if [ ! -f "$VMLINUZ" ]; then # only the kernel of the image package: the guest loads no module of it
	dpkg-deb --fsys-tarfile "$(fetch "linux-image-$KVER")" | tar -x -C "$ROOT" "./boot/vmlinuz-$KVER"
fi
[ -f "$VMLINUZ" ] || die "no $VMLINUZ in linux-image-$KVER"
say "headers $AMD64_HDR, $ARM64_HDR, $ARMHF_HDR and the $KVER image unpacked ($(elapsed) s)"

# ---- 2. builds -----------------------------------------------------------------------------
build() { # name KDIR make-args...
	local name=$1 kdir=$2 dir=$WORK/build-$1
	shift 2
	rm -rf "$dir"
	cp -r "$REPO/kmod" "$dir"
	local t=$(date +%s.%N)
	make -C "$dir" KDIR="$kdir" W=1 "$@" >"$dir/build.log" 2>&1 || {
		cat "$dir/build.log"
		die "the $name build failed"
	}
	if grep -Ei "warning|error" "$dir/build.log"; then
		die "the $name build has warnings (W=1)"
	fi
	local secs
	secs=$(echo "$(date +%s.%N) $t" | awk '{printf "%.1f", $1 - $2}')
	say "built for $name in $secs s: $(cd "$dir" && file -b cpufreq_anti_snoop.ko | cut -d, -f1-2), no warning with W=1"
}
build amd64 "/usr/src/$AMD64_HDR"
build arm64 "$ROOT/usr/src/$ARM64_HDR" ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-
build armhf "$ROOT/usr/src/$ARMHF_HDR" ARCH=arm CROSS_COMPILE=arm-linux-gnueabihf-

# ---- 3. conformance, and the guest's feeds -----------------------------------------------
FEEDS=$WORK/feeds
rm -rf "$FEEDS"
HETLAB_KMOD_FEED_DIR=$FEEDS cargo test -q --release -p hetlab-linux --test kmod_conformance -- --nocapture 2>&1 |
	grep -E "kmod conformance: .*(compared|differences)" || die "the conformance test failed"
say "conformance done ($(elapsed) s)"

# ---- 4. the QEMU guest ------------------------------------------------------------------
INITRD_DIR=$WORK/initrd
rm -rf "$INITRD_DIR"
mkdir -p "$INITRD_DIR/bin" "$INITRD_DIR/feeds" "$INITRD_DIR/lib/firmware" "$INITRD_DIR"/{proc,sys,tmp,dev}
cp /bin/busybox "$INITRD_DIR/bin/busybox"
cp "$REPO/kmod/test/guest-init.sh" "$INITRD_DIR/init"
chmod +x "$INITRD_DIR/init"
cp "$WORK/build-amd64/cpufreq_anti_snoop.ko" "$WORK/build-amd64/test/fake_cpufreq.ko" "$INITRD_DIR/"
cp "$FEEDS"/*.feed "$FEEDS"/*.expected "$INITRD_DIR/feeds/"
cp "$FEEDS/exynos5422-significant-depth3.blob" "$INITRD_DIR/lib/firmware/anti_snoop-exynos5422.bin"
GUEST_TIMEOUT=170
if [ $BENCH = 1 ]; then
	RUSTFLAGS="-C target-feature=+crt-static" cargo bench -q -p hetlab-linux --bench governor_sample \
		--target x86_64-unknown-linux-gnu --no-run 2>&1 | tail -1
	cp "$(ls -t target/x86_64-unknown-linux-gnu/release/deps/governor_sample-* | grep -v '\.d$' | head -1)" \
		"$INITRD_DIR/governor_sample"
	GUEST_TIMEOUT=900
fi
(cd "$INITRD_DIR" && find . | cpio -o -H newc --quiet | gzip -1) >"$WORK/initrd.gz"
t=$(date +%s.%N)
# QEMU in the foreground (timeout --foreground) with its stdin from /dev/null: a terminal's
# Ctrl-C reaches it and the trap below, and it does not take the terminal over (-nographic)
timeout --foreground $GUEST_TIMEOUT qemu-system-x86_64 -machine accel=tcg -m 512 -smp 2 -nographic -no-reboot \
	-kernel "$VMLINUZ" -initrd "$WORK/initrd.gz" \
	-append "console=ttyS0 panic=-1 oops=panic loglevel=4" </dev/null >"$WORK/guest.log" 2>&1 || true
secs=$(echo "$(date +%s.%N) $t" | awk '{printf "%.1f", $1 - $2}')
grep -oE "kmod-test:.*" "$WORK/guest.log" | tr -d "\r" | sed "s/^/kmod-ci: guest: /" || true
if ! grep -q "KMOD-TEST PASS" "$WORK/guest.log"; then
	tail -60 "$WORK/guest.log"
	die "the QEMU guest test failed (log: $WORK/guest.log)"
fi
say "QEMU guest (TCG, $KVER): PASS in $secs s"
say "done in $(elapsed) s"
