#!/usr/bin/env bash
# Slow-tier reads per request on a cold page cache (dropped every second),
# counted by the server itself (zugzwang_table_reads_total{tier="slow"}):
# counts, not times, so a debug build serves (server/docs/benchmarks.md,
# "Depth to mate: what it costs"). Needs root (drop_caches).
#
#   cold-reads.sh LABEL PORT [SERVE_FLAGS...]
#
# e.g. cold-reads.sh dtm 3162 --dtm ../shared/prophet
#      cold-reads.sh nodtm 3161 --dtm /var/tmp/empty-dtm
#
# Settings (environment): ZUGZWANG (target/debug/zugzwang), BENCH
# (target/debug/zugzwang-bench), TABLES, FAST (a tier built with `zugzwang
# tier build` for TABLES and the DTM directory), WARM_LOG and LOG (the
# halves of explore-34.txt), REQUESTS (2000). What FAST has no checksums
# for (e.g. DTM files no MD5SUMS lists) is served with --allow-unchecked
# where ZUGZWANG knows it, as binaries from before checking by default did.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
ZUGZWANG="${ZUGZWANG:-$repo/target/debug/zugzwang}"
BENCH="${BENCH:-$repo/target/debug/zugzwang-bench}"
TABLES="${TABLES:-$repo/../shared/syzygy/standard}"
FAST="${FAST:-/var/tmp/zzbench/fast}"
WARM_LOG="${WARM_LOG:-/var/tmp/zzbench/explore34-a.txt}"
LOG="${LOG:-/var/tmp/zzbench/explore34-b.txt}"
REQUESTS="${REQUESTS:-2000}"
[[ $# -ge 2 ]] || { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
label="$1" port="$2"
shift 2
unchecked=()
"$ZUGZWANG" serve --help | grep -q -- --allow-unchecked && unchecked=(--allow-unchecked)
"$ZUGZWANG" serve --bind "127.0.0.1:$port" --tables "$TABLES" --fast "$FAST" \
  --cache-mb 0 --probe-memo-mb 0 "${unchecked[@]}" "$@" 2>"/tmp/cold-reads-$label.log" &
pid=$!
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
replay() { # log requests label
  "$BENCH" replay --endpoint "http://127.0.0.1:$port/standard" --log "$1" --clients 4 \
    --max-requests "$2" --warmup 0 --out "/tmp/cold-reads-$3.tsv" --label "$3" 2>/dev/null
}
slow() {
  curl -s "127.0.0.1:$port/metrics" |
    awk '/^zugzwang_table_reads_total\{tier="slow"/ { s += $2 } END { print s + 0 }'
}
replay "$WARM_LOG" 300 warm >/dev/null
before="$(slow)"
(while kill -0 "$pid" 2>/dev/null; do echo 3 >/proc/sys/vm/drop_caches; sleep 1; done) &
evict=$!
replay "$LOG" "$REQUESTS" "$label" | tail -1
after="$(slow)"
kill "$evict" "$pid"
wait "$pid" 2>/dev/null || true
awk -v l="$label" -v n="$REQUESTS" -v r="$((after - before))" \
  'BEGIN { printf "%s: %d slow reads for %d requests, %.3f per request\n", l, r, n, r / n }'
