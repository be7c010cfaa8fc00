#!/usr/bin/env bash
# Regenerates the measured workload profiles shipped in data/workloads/ (measured-*.toml) with
# `hetlab profile` (valgrind's cache simulator, the Exynos 5422's cache geometries):
#
#   measured-gcc.toml         gcc -O1 compiling QuickJS's libregexp.c (2,610 lines of real C, the
#                             regexp engine of QuickJS 2021-03-27, from the PyPI sdist quickjs 1.19.4),
#                             in place of SPEC CPU2006 403.gcc g23 (not available)
#   measured-js-todomvc.toml  QuickJS (PyPI quickjs 1.19.4) running scripts/profiles/todomvc.js, a
#                             Speedometer-like TodoMVC workload without a DOM, in place of Speedometer 2
#   measured-h264-decode.toml ffmpeg decoding (one thread) a 40-frame 1080p H.264 clip that ffmpeg's libx264
#                             encodes here from a synthetic source (testsrc2), in place of mplayer
#
# On a fresh Debian 12 machine: installs valgrind, gcc and ffmpeg with apt-get (sudo when not root),
# builds hetlab (`make setup`, which needs a Rust toolchain) unless .venv has it, and installs
# quickjs from PyPI into .venv. Takes a few minutes on 2 cores (each program runs under valgrind once
# per simulated L2 size, two at a time). Usage: scripts/measure-profiles.sh [OUTDIR] (default
# data/workloads).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$repo/data/workloads}")
quickjs_version=1.19.4

say() { printf 'measure-profiles: %s\n' "$*" >&2; }

need_apt=()
for cmd in valgrind gcc ffmpeg; do command -v "$cmd" >/dev/null || need_apt+=("$cmd"); done
if ((${#need_apt[@]})); then
    sudo=$([ "$(id -u)" -eq 0 ] || echo sudo)
    say "installing ${need_apt[*]} (apt-get)"
    $sudo apt-get update -qq
    # Debian's ffmpeg carries libx264 (libavcodec's H.264 encoder) and the H.264 decoder
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi
if [ ! -x "$repo/.venv/bin/hetlab" ]; then
    say "building hetlab (make setup)"
    make -C "$repo" setup
fi
py="$repo/.venv/bin/python"
hetlab="$repo/.venv/bin/hetlab"
"$py" -c "import quickjs" 2>/dev/null || "$repo/.venv/bin/pip" install -q "quickjs==$quickjs_version"
mkdir -p "$out"

work=$(mktemp -d "${TMPDIR:-/tmp}/hetlab-measure.XXXXXX")
trap 'rm -rf "$work"' EXIT

# --- gcc: a real multi-thousand-line C file ---------------------------------------------------
"$repo/.venv/bin/pip" download -q --no-deps --no-binary :all: "quickjs==$quickjs_version" -d "$work"
tar -xzf "$work/quickjs-$quickjs_version.tar.gz" -C "$work"
src="$work/quickjs-$quickjs_version/upstream-quickjs"
cp "$src/libregexp.c" "$src"/*.h "$work/"
lines=$(wc -l <"$work/libregexp.c")
gcc_version=$(gcc --version | head -1)
say "gcc: profiling $gcc_version on libregexp.c ($lines lines)"
(cd "$work" && "$hetlab" profile --slices 4 --out "$out/measured-gcc.toml" \
    --description "MEASURED: $gcc_version -O1 compiling QuickJS $(cat "$src/VERSION") libregexp.c ($lines lines; PyPI sdist quickjs $quickjs_version), in place of SPEC 403.gcc g23" \
    -- gcc -O1 -c libregexp.c -o libregexp.o)

# --- a JavaScript engine running a Speedometer-like TodoMVC workload ---------------------------
cp "$repo/scripts/profiles/todomvc.js" "$work/"
say "js: profiling QuickJS $quickjs_version on todomvc.js"
(cd "$work" && PATH="$repo/.venv/bin:$PATH" "$hetlab" profile --slices 4 --out "$out/measured-js-todomvc.toml" \
    --description "MEASURED: QuickJS (PyPI quickjs $quickjs_version, from Python) running scripts/profiles/todomvc.js, a DOM-less TodoMVC in four framework styles, in place of Speedometer 2" \
    -- python -c "import quickjs; print(quickjs.Context().eval(open('todomvc.js').read()))")

# --- video: ffmpeg decoding a 1080p H.264 clip encoded here ------------------------------------
ffmpeg_version=$(ffmpeg -version | head -1 | cut -d' ' -f1-3)
ffmpeg -loglevel error -y -f lavfi -i testsrc2=size=1920x1080:rate=30 -frames:v 40 \
    -c:v libx264 -preset medium -pix_fmt yuv420p "$work/clip.mp4"
say "video: profiling $ffmpeg_version decoding a 1080p H.264 clip ($(stat -c %s "$work/clip.mp4") bytes, 40 frames)"
(cd "$work" && "$hetlab" profile --slices 4 --out "$out/measured-h264-decode.toml" \
    --description "MEASURED: $ffmpeg_version decoding (-threads 1) 40 frames of 1080p H.264 (libx264 preset medium, testsrc2), in place of mplayer 1080p" \
    -- ffmpeg -nostdin -loglevel error -threads 1 -i clip.mp4 -f null -)

say "wrote $out/measured-gcc.toml, $out/measured-js-todomvc.toml, $out/measured-h264-decode.toml"
grep -H "MEASURED LL MPKI at" "$out"/measured-{gcc,js-todomvc,h264-decode}.toml | grep "platform L2" >&2
