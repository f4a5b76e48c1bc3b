#!/bin/sh
# Runs each libFuzzer harness for a bounded time: run.sh OUT SECONDS NAME...
# Seeds: tests/fuzz/corpus/<name>/ (procmaps) or tests/fuzz/corpus/elf/
# and OUT/seeds/elf/ (the ELF harnesses).  New inputs go to
# OUT/corpus/<name>/, so later runs start from what earlier ones found;
# a crash, leak, sanitizer report or hang stops that harness, leaves its
# input in OUT/crashes/ and makes the run fail.  Logs: OUT/logs/<name>.log.
set -u
out=$1 seconds=$2
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
failed=""
mkdir -p "$out/crashes" "$out/logs"
for name in "$@"; do
	case $name in
	procmaps) seeds="$root/tests/fuzz/corpus/procmaps" ;;
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
		failed="$failed $name"
		grep -E 'ERROR|SUMMARY|Test unit written|#[0-9]+ in ' "$log" | head -30
	fi
done
if [ -n "$failed" ]; then
	echo "fuzz: failed:$failed (logs in $out/logs/)" >&2
	exit 1
fi
