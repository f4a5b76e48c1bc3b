#!/bin/bash
# Runs each libFuzzer harness for a bounded time: run.sh OUT SECONDS NAME...
# FUZZ_JOBS harnesses at once (default: one per CPU), each for SECONDS.
# Seeds: tests/fuzz/corpus/<name>/ (procmaps, perfmap, replay, request) or tests/fuzz/corpus/elf/
# and OUT/seeds/elf/ (the ELF harnesses).  New inputs go to
# OUT/corpus/<name>/, so later runs start from what earlier ones found;
# a crash, leak, sanitizer report or hang stops that harness, leaves its
# input in OUT/crashes/ and makes the run fail.  Logs: OUT/logs/<name>.log.
set -u
out=$1 seconds=$2
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
jobs=${FUZZ_JOBS:-$(nproc)}
mkdir -p "$out/crashes" "$out/logs" "$out/status"

fuzz_one() {
	local name=$1 seeds log rc runs cov
	case $name in
	procmaps | perfmap | replay | request) seeds="$root/tests/fuzz/corpus/$name" ;;
	*) seeds="$root/tests/fuzz/corpus/elf $out/seeds/elf" ;;
	esac
	mkdir -p "$out/corpus/$name"
	log="$out/logs/$name.log"
	# -timeout: one input taking 10 s is a hang; -rss_limit_mb: a
	# fuzzed size field must not take the machine's memory.
	"$out/fuzz_$name" -max_total_time="$seconds" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$out/crashes/$name-" \
		"$out/corpus/$name" $seeds >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
	printf '  FUZZ     %-11s %s runs, %s, corpus %s\n' "$name" "${runs:-?}" \
		"${cov:-cov: ?}" "$(ls "$out/corpus/$name" | wc -l)"
	if [ $rc -ne 0 ]; then
		grep -E 'ERROR|SUMMARY|Test unit written|#[0-9]+ in ' "$log" | head -30
	fi
	echo $rc >"$out/status/$name"
}

running=0
for name in "$@"; do
	if [ $running -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
	fuzz_one "$name" &
	running=$((running + 1))
done
wait
failed=""
for name in "$@"; do
	[ "$(cat "$out/status/$name" 2>/dev/null)" = 0 ] || failed="$failed $name"
done
if [ -n "$failed" ]; then
	echo "fuzz: failed:$failed (logs in $out/logs/)" >&2
	exit 1
fi
