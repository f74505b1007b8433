#!/usr/bin/env bash
# bench/bench.sh measures ratesim against its two yardsticks on generated
# traces, in one run on this machine, and prints the median of several runs.
#
#   bench/bench.sh [REQUESTS] [USERS] [RUNS]     (defaults 5000000 100000 5)
#
# Traces: short keys and UUID keys, Zipf-popular users (steady pattern), and
# short keys uniform over the users (no locality: nearly every request's
# first touch of its key misses the cache).
#
# Yardsticks (bench/baseline, bench/seedtb):
#   baseline  the tightest plain loop: ReadSlice, hand-parsed fields, one map
#             update a row
#   seedtb    the seed's token bucket behind bufio.Scanner + strings.Split,
#             printing one bool per request
# Targets: compare --summary -o json (five algorithms, burst, oracle) <= 1.0x
# baseline on every trace; run --algo token-bucket -o csv <= 0.8x seedtb;
# peak memory under 100 MB and flat between half and full trace length; 16
# token buckets of different capacities in one compare <= 3x the five; a
# 64-candidate token-bucket sweep <= 6x the five, under 256 MiB and flat
# between half and full trace length; report -o FILE.html <= 2x compare, and
# plot state of one key (u1) <= 1.2x compare, without holding the trace
# (short keys).
#
# Scale (opt-in, alone, as it takes long and much memory):
#
#   bench/bench.sh --scale [RUNS]        (RUNS defaults to 3)
#   BENCH_SCALE_FULL=1 bench/bench.sh --scale [RUNS]
#
# 20M rows over 1M UUID keys generated on the fly (ratesim gen | ratesim
# compare --summary -o json -), and with BENCH_SCALE_FULL=1 100M rows over
# 10M keys; on the 5M-row UUID trace: 4 shards run one after another
# (compare --summary --shard I/4 -o partial) and merge -o json against one
# run, the 64-candidate sweep against compare, and --sort's peak memory
# against --sort-mem 64MiB. Each line gives wall and CPU seconds (user +
# system) and peak RSS of the median run.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "--scale" ]; then
	exec bash bench/scale.sh "${2:-3}"
fi

requests=${1:-5000000}
users=${2:-100000}
runs=${3:-5}
work=${BENCH_DIR:-$(mktemp -d)}
mkdir -p "$work"

go build -o "$work/ratesim" .
go build -o "$work/baseline" ./bench/baseline
go build -o "$work/seedtb" ./bench/seedtb

gen() { # gen NAME REQUESTS KEYSTYLE [FLAGS...]
	local name=$1 n=$2 keys=$3
	shift 3
	"$work/ratesim" gen --pattern steady --users "$users" --requests "$n" \
		--seed 1 --unit ms --keys "$keys" "$@" -o csv >"$work/$name.csv"
}
echo "generating traces in $work ($requests requests, $users users)"
gen short "$requests" short
gen uuid "$requests" uuid
gen uniform "$requests" short --uniform
gen half $((requests / 2)) uuid
lanes16=()
for c in $(seq 1 16); do
	lanes16+=(--limiter "tb$c=token-bucket:capacity=$c")
done

# measure LABEL CMD...: wall seconds and peak RSS (KiB) of one run.
measure() {
	local label=$1
	shift
	/usr/bin/time -f "%e %M" -o "$work/time.txt" "$@" >/dev/null
	read -r secs kib <"$work/time.txt"
	echo "$label $secs $kib" >>"$work/results.txt"
}

: >"$work/results.txt"
for run in $(seq "$runs"); do
	for keys in short uuid uniform; do
		trace="$work/$keys.csv"
		measure "baseline/$keys" "$work/baseline" "$trace"
		measure "compare/$keys" "$work/ratesim" compare --summary -o json --unit ms --window 10s "$trace"
		measure "seedtb/$keys" "$work/seedtb" "$trace"
		measure "run-tb/$keys" "$work/ratesim" run --algo token-bucket -o csv --unit ms --window 10s "$trace"
	done
	measure "lanes16/short" "$work/ratesim" compare --summary -o json --unit ms --window 10s "${lanes16[@]}" "$work/short.csv"
	measure "compare/half" "$work/ratesim" compare --summary -o json --unit ms --window 10s "$work/half.csv"
	measure "sweep64/uuid" "$work/ratesim" sweep --capacity 1..64 --rate 1/1s -o json --unit ms --window 10s "$work/uuid.csv"
	measure "sweep64/half" "$work/ratesim" sweep --capacity 1..64 --rate 1/1s -o json --unit ms --window 10s "$work/half.csv"
	measure "report/short" "$work/ratesim" report --unit ms --window 10s "$work/short.csv" -o "$work/report.html"
	measure "state/short" "$work/ratesim" plot state --user u1 --unit ms --window 10s "$work/short.csv" -o "$work/state.svg"
	echo "run $run done" >&2
done

awk '
function median(arr, n,   i, j, t) {
	for (i = 2; i <= n; i++) { t = arr[i]; for (j = i - 1; j >= 1 && arr[j] > t; j--) arr[j+1] = arr[j]; arr[j+1] = t }
	return (n % 2) ? arr[(n+1)/2] : (arr[n/2] + arr[n/2+1]) / 2
}
{ n[$1]++; s[$1, n[$1]] = $2; m[$1, n[$1]] = $3 }
END {
	printf "%-16s %10s %12s\n", "command", "median s", "median MiB"
	for (k in n) {
		for (i = 1; i <= n[k]; i++) { a[i] = s[k, i]; b[i] = m[k, i] }
		sec[k] = median(a, n[k]); mem[k] = median(b, n[k]) / 1024
		printf "%-16s %10.3f %12.1f\n", k, sec[k], mem[k] | "sort"
	}
	close("sort")
	printf "\nratios (median of each):\n"
	for (keys in n) {}
	split("short uuid uniform", ks, " ")
	for (i = 1; i <= 3; i++) {
		k = ks[i]
		printf "  compare --summary -o json / baseline (%s keys): %.2fx\n", k, sec["compare/" k] / sec["baseline/" k]
		printf "  run --algo token-bucket -o csv / seed code (%s keys): %.2fx\n", k, sec["run-tb/" k] / sec["seedtb/" k]
	}
	printf "  peak memory, compare: %.1f MiB at half length, %.1f MiB at full length\n", mem["compare/half"], mem["compare/uuid"]
	printf "  compare of 16 token buckets / compare of the five (short keys): %.2fx\n", sec["lanes16/short"] / sec["compare/short"]
	printf "  sweep of 64 token buckets / compare of the five (uuid keys): %.2fx\n", sec["sweep64/uuid"] / sec["compare/uuid"]
	printf "  peak memory, sweep: %.1f MiB at half length, %.1f MiB at full length\n", mem["sweep64/half"], mem["sweep64/uuid"]
	printf "  report -o html / compare (short keys): %.2fx\n", sec["report/short"] / sec["compare/short"]
	printf "  plot state --user u1 / compare (short keys): %.2fx, peak memory %.1f MiB\n", sec["state/short"] / sec["compare/short"], mem["state/short"]
}' "$work/results.txt"
