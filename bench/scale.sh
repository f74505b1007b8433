#!/usr/bin/env bash
# bench/scale.sh is the scale section of bench/bench.sh (bench/bench.sh
# --scale [RUNS]): see there. Runs are interleaved, and each figure is
# the median of RUNS.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:-3}
work=${BENCH_DIR:-$(mktemp -d)}
mkdir -p "$work"
go build -o "$work/ratesim" .
r=$work/ratesim
flags=(--unit ms --window 10s)

echo "generating the 5M-row UUID trace in $work"
"$r" gen --pattern steady --users 100000 --requests 5000000 --seed 1 --unit ms --keys uuid -o csv >"$work/uuid.csv"

: >"$work/scale.txt"
# measure LABEL CMD...: wall, user+system seconds and peak RSS (KiB).
measure() {
	local label=$1
	shift
	/usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" "$@" >"$work/out.$label" 2>"$work/err.txt" ||
		{ cat "$work/err.txt" >&2; return 1; }
	read -r secs user sys kib <"$work/time.txt"
	echo "$label $secs $(echo "$user + $sys" | bc) $kib" >>"$work/scale.txt"
}
# piped LABEL USERS REQUESTS: gen | compare --summary -, the compare measured.
piped() {
	local label=$1 users=$2 n=$3
	"$r" gen --pattern steady --users "$users" --requests "$n" --seed 1 --unit ms --keys uuid -o csv |
		measure "$label" "$r" compare --summary -o json "${flags[@]}" -
}
# shards4: the 4 shards one after another and the merge, timed as one.
shards4() {
	local i
	for i in 0 1 2 3; do
		"$r" compare --summary --shard "$i/4" -o partial "${flags[@]}" "$work/uuid.csv" >"$work/s$i.partial"
	done
	"$r" merge -o json "$work"/s[0-3].partial
}
export -f shards4
export r work
export flags_text="${flags[*]}"

for run in $(seq "$runs"); do
	piped gen20M 1000000 20000000
	if [ -n "${BENCH_SCALE_FULL:-}" ]; then
		piped gen100M 10000000 100000000
	fi
	measure compare "$r" compare --summary -o json "${flags[@]}" "$work/uuid.csv"
	measure shards4+merge bash -c 'flags=($flags_text); shards4'
	measure sweep64 "$r" sweep --capacity 1..64 --rate 1/1s -o json "${flags[@]}" "$work/uuid.csv"
	measure sort64MiB "$r" compare --summary -o json --sort --sort-mem 64MiB "${flags[@]}" "$work/uuid.csv"
	echo "run $run done ($(cut -d' ' -f1-3 /proc/loadavg))" >&2
done
cmp "$work/out.compare" "$work/out.shards4+merge" && echo "4 shards + merge: byte-identical to one run"

awk '
function median(arr, n,   i, j, t) {
	for (i = 2; i <= n; i++) { t = arr[i]; for (j = i - 1; j >= 1 && arr[j] > t; j--) arr[j+1] = arr[j]; arr[j+1] = t }
	return (n % 2) ? arr[(n+1)/2] : (arr[n/2] + arr[n/2+1]) / 2
}
{ n[$1]++; w[$1, n[$1]] = $2; c[$1, n[$1]] = $3; m[$1, n[$1]] = $4 }
END {
	printf "%-14s %10s %10s %12s\n", "command", "wall s", "cpu s", "peak MiB"
	for (k in n) {
		for (i = 1; i <= n[k]; i++) { a[i] = w[k, i]; b[i] = c[k, i]; d[i] = m[k, i] }
		wall[k] = median(a, n[k]); cpu[k] = median(b, n[k]); mem[k] = median(d, n[k]) / 1024
		printf "%-14s %10.2f %10.2f %12.1f\n", k, wall[k], cpu[k], mem[k] | "sort"
	}
	close("sort")
	printf "\nratios (median of each):\n"
	printf "  4 shards + merge / one run: %.2fx wall, %.2fx cpu; peak %.1f MiB against %.1f MiB\n", wall["shards4+merge"] / wall["compare"], cpu["shards4+merge"] / cpu["compare"], mem["shards4+merge"], mem["compare"]
	printf "  sweep of 64 token buckets / compare: %.2fx wall, %.2fx cpu; peak %.1f MiB\n", wall["sweep64"] / wall["compare"], cpu["sweep64"] / cpu["compare"], mem["sweep64"]
	printf "  --sort --sort-mem 64MiB: peak %.1f MiB (%.2fx the bound)\n", mem["sort64MiB"], mem["sort64MiB"] / 64
	printf "  20M rows over 1M keys, gen | compare: %.2f s wall, %.2f s cpu, peak %.1f MiB\n", wall["gen20M"], cpu["gen20M"], mem["gen20M"]
	if ("gen100M" in n) printf "  100M rows over 10M keys, gen | compare: %.2f s wall, %.2f s cpu, peak %.1f MiB\n", wall["gen100M"], cpu["gen100M"], mem["gen100M"]
}' "$work/scale.txt"
