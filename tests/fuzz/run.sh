#!/usr/bin/env bash
# tests/fuzz/run.sh: builds the libFuzzer target for the comparator and runs it
# for FUZZ_SECONDS (default 60); exits non-zero on a crash, a sanitizer report
# or a broken invariant. Seeds come from the golden cases in tests/cmp/.
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${FUZZ_SECONDS:-60}
out=build/fuzz
mkdir -p "$out/corpus" "$out/artifacts"
# clang plus its fuzzer/sanitizer runtime (a separate Debian package, libclang-rt-N-dev)
if ! command -v clang >/dev/null; then
	echo "fuzz: installing clang" >&2
	apt-get install -y -qq clang >/dev/null
fi
probe=$(mktemp /tmp/judge-fuzz-probe.XXXXXX)
if ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' |
	clang -x c -fsanitize=fuzzer,address,undefined -o "$probe" - 2>/dev/null; then
	v=$(clang -dumpversion | cut -d. -f1)
	echo "fuzz: installing libclang-rt-$v-dev" >&2
	apt-get install -y -qq "libclang-rt-$v-dev" >/dev/null
fi
rm -f "$probe"
clang -std=gnu11 -I. -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-o "$out/fuzz_compare" tests/fuzz/fuzz_compare.c judge/grading/compare.c judge/grading/compare_unordered.c judge/grading/compare_regex.c common/utf8.c common/strbuf.c \
	$(pkg-config --cflags --libs libpcre2-8) -lm

# seed: [mode][flags][len lo][len hi] expected got, from each golden case
seeds=$(mktemp -d /tmp/judge-fuzz-seeds.XXXXXX)
trap 'rm -rf "$seeds"' EXIT
for d in tests/cmp/*/; do
	[ -f "$d/args" ] || continue
	read -r mode flags <"$d/args" || true
	case $mode in exact) m=0 ;; lines) m=1 ;; tokens) m=2 ;; unordered) m=3 ;; regex) m=4 ;; *) continue ;; esac
	f=0
	[[ $flags == *case_sensitive* ]] && f=$((f | 1))
	[[ $flags == *space_change_sensitive* ]] && f=$((f | 2))
	[[ $flags == *unordered_tokens* ]] && f=$((f | 4))
	[[ $flags == *float_absolute_tolerance* ]] && f=$((f | 8))
	[[ $flags == *float_relative_tolerance* ]] && f=$((f | 16))
	[[ $flags == *float_tolerance* ]] && f=$((f | 24))
	n=$(stat -c %s "$d/expected")
	[ "$n" -lt 65536 ] || continue
	{
		printf "\\x$(printf %02x $m)\\x$(printf %02x $f)\\x$(printf %02x $((n & 255)))\\x$(printf %02x $((n >> 8)))"
		cat "$d/expected" "$d/got"
	} >"$seeds/$(basename "$d")"
done

echo "fuzz: running fuzz_compare for ${secs}s"
"$out/fuzz_compare" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
	-print_final_stats=1 -artifact_prefix="$out/artifacts/" "$out/corpus" "$seeds"
echo "fuzz: no crash in ${secs}s"
