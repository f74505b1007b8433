#!/usr/bin/env bash
# bench/redis.sh measures ratesim replay --store against its yardstick,
# redis-benchmark running the same Lua script with EVALSHA at the same
# number of clients and pipeline depth, and prints the median of RUNS of
# each, in requests per second.
#
#   bench/redis.sh [REQUESTS] [USERS] [RUNS] [WORKERS] [PIPELINE]
#                  (defaults 1000000 10000 3 8 64)
#
# Both run against a redis-server of the script's own, on a free loopback
# port, stopped by its PID at the end. The trace is
# "ratesim gen --pattern steady --users USERS --requests REQUESTS --seed 1
# --unit ms"; the limiter a token bucket so large that every request is
# allowed, so that every script call writes its key, in both. The replay
# runs with --route key --summary and counts from its first request to
# its last decision (its requests_per_s); redis-benchmark sends the
# script's EVALSHA over USERS keys (-r) with the arguments of one such
# request.
#
# Target: the replay at 90% of redis-benchmark's throughput or more.
set -euo pipefail
cd "$(dirname "$0")/.."

requests=${1:-1000000}
users=${2:-10000}
runs=${3:-3}
workers=${4:-8}
pipeline=${5:-64}
work=${BENCH_DIR:-$(mktemp -d)}
mkdir -p "$work"

go build -o "$work/ratesim" .

# A free port, and its process: stopped by PID whatever happens.
port=
for try in $(seq 1 50); do
	p=$((20000 + RANDOM % 20000))
	if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
		port=$p
		break
	fi
done
[ -n "$port" ] || { echo "no free port" >&2; exit 1; }
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
redis_pid=$!
trap 'kill "$redis_pid" 2>/dev/null || true; wait "$redis_pid" 2>/dev/null || true' EXIT
for i in $(seq 1 100); do
	redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && break
	sleep 0.1
done
cli() { redis-cli -p "$port" "$@"; }

echo "generating the trace in $work ($requests requests, $users users)"
"$work/ratesim" gen --pattern steady --users "$users" --requests "$requests" --seed 1 --unit ms >"$work/trace.csv"

# The token bucket: capacity 10^9, 1 token per ms; never empty here.
policy=(--algos token-bucket --capacity 1000000000 --rate 1/1ms --unit ms)

# The store's script is the prelude, a newline and the algorithm's part.
scripts=limiters/redisstore/scripts
{ cat "$scripts/prelude.lua"; printf '\n'; cat "$scripts/bucket.lua"; } >"$work/bucket.lua"
sha=$(cli -x script load <"$work/bucket.lua")
if [ "$sha" != "$(sha1sum <"$work/bucket.lua" | cut -d' ' -f1)" ]; then
	echo "redis-cli loaded another text than the script's ($sha)" >&2
	exit 1
fi

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "ratesim replay --store: $workers workers, $pipeline requests per round trip"
: >"$work/replay.txt"
calls() { cli info commandstats | awk -F'[=,]' '/^cmdstat_evalsha:/ { print $2 }'; }
for run in $(seq 1 "$runs"); do
	cli flushall >/dev/null
	cli config resetstat >/dev/null
	"$work/ratesim" replay --store "redis://127.0.0.1:$port/0" --workers "$workers" --pipeline "$pipeline" \
		--route key --summary -o csv "${policy[@]}" "$work/trace.csv" >"$work/summary.csv"
	rps=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "requests_per_s") c = i } NR == 2 { print $c }' "$work/summary.csv")
	allowed=$(awk -F, 'NR == 2 { print $3 }' "$work/summary.csv")
	# The store sends a pipeline's requests for one key in one script
	# call: fewer calls than requests when a key comes back within it.
	echo "  run $run: $rps requests/s ($allowed of $requests allowed, $(calls | tr -d '\r') script calls)"
	echo "$rps" >>"$work/replay.txt"
done
if [ "$(cli script exists "$sha")" != 1 ]; then
	echo "the replay did not run the script redis-benchmark runs ($sha)" >&2
	exit 1
fi

# One call's arguments, as the store sends them for one request: the
# caller's clock, no clamp, the expiry margin (ms); capacity, rate n per
# per ns, capacity*per; one request: allow, cost 1, at 1 s (seconds,
# nanoseconds).
args=(c 0 3600000 1000000000 1 1000000 1000000000000000 1 a 1 1 0)
echo "redis-benchmark: EVALSHA of the same script, $workers clients, pipeline $pipeline"
: >"$work/bench.txt"
for run in $(seq 1 "$runs"); do
	cli flushall >/dev/null
	rps=$(redis-benchmark -p "$port" -c "$workers" -P "$pipeline" -n "$requests" -r "$users" -q \
		evalsha "$sha" 1 "bench:{key:__rand_int__}:token-bucket:token-bucket" "${args[@]}" |
		tr '\r' '\n' | awk '/requests per second/ { for (i = 1; i <= NF; i++) if ($i == "requests") v = $(i - 1) } END { print int(v) }')
	echo "  run $run: $rps requests/s"
	echo "$rps" >>"$work/bench.txt"
done
if [ "$(cli dbsize)" -lt 1 ]; then
	echo "redis-benchmark wrote no key: the script did not run" >&2
	exit 1
fi

replay=$(median <"$work/replay.txt")
bench=$(median <"$work/bench.txt")
pct=$((100 * replay / bench))
echo
echo "median of $runs: ratesim replay --store $replay requests/s, redis-benchmark $bench requests/s: $pct% (target >= 90%)"
