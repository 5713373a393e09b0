#!/usr/bin/env bash
# Where a request's CPU time goes, for the default configuration at hot
# cache (server/docs/benchmarks.md, "Where the time goes"): CPU seconds per
# request from /proc, a perf profile with call graphs turned into a
# flamegraph (inferno) and a breakdown by component, and the table reads
# per request (pread64 calls counted with strace on a shorter pass).
#
#   profile-hot.sh OUT_DIR
#
# Settings (environment): ZUGZWANG (binary), TABLES (table directory), LOG
# (workload), CLIENTS (12), PORT (3101), CACHE_ENTRIES (0: every request
# reaches the engine), NICE (-10). Needs perf, strace, and
# inferno-collapse-perf / inferno-flamegraph (cargo install inferno).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
ZUGZWANG="${ZUGZWANG:-$repo/target/release/zugzwang}"
TABLES="${TABLES:-$repo/../shared/syzygy/standard}"
LOG="${LOG:-$repo/../shared/workloads/explore-345.txt}"
CLIENTS="${CLIENTS:-12}"
PORT="${PORT:-3101}"
CACHE_ENTRIES="${CACHE_ENTRIES:-0}"
NICE="${NICE:--10}"

[[ $# -eq 1 ]] || {
  sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
out="$1"
mkdir -p "$out"
for tool in perf strace inferno-collapse-perf inferno-flamegraph; do
  command -v "$tool" >/dev/null || {
    echo "profile-hot: $tool is missing (perf: apt-get install linux-perf; strace: apt-get install strace; inferno: cargo install inferno)" >&2
    exit 2
  }
done

nice -n "$NICE" "$ZUGZWANG" serve --bind "127.0.0.1:$PORT" --tables "$TABLES" \
  --cache-entries "$CACHE_ENTRIES" 2>"$out/server.log" &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true' EXIT
for _ in $(seq 300); do
  (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
  sleep 0.1
done

replay() {
  nice -n "$NICE" "$ZUGZWANG" bench replay --endpoint "http://127.0.0.1:$PORT/standard" \
    --log "$LOG" --clients "$CLIENTS" --out "$out/$1.tsv" --label "$1" "${@:2}"
}

# Fields 14 and 15 of /proc/PID/stat: user and system time in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$server_pid/stat"; }

echo "== warm pass (tables opened, page cache filled)" >&2
replay warm >/dev/null
echo "== measured pass under perf" >&2
before="$(cpu_ticks)"
perf record -F 499 --call-graph dwarf,32768 -p "$server_pid" -o "$out/perf.data" -- sleep 3600 \
  2>"$out/perf-record.log" &
perf_pid=$!
sleep 1
replay profiled >"$out/profiled-summary.txt"
kill -INT "$perf_pid"
wait "$perf_pid" || true
after="$(cpu_ticks)"
requests="$(($(wc -l <"$out/profiled.tsv") - 1))"
hz="$(getconf CLK_TCK)"
awk -v t="$((after - before))" -v hz="$hz" -v n="$requests" 'BEGIN {
  printf "server CPU: %.2f s for %d requests = %.3f ms per request (perf running)\n", t / hz, n, 1000 * t / hz / n
}' | tee "$out/cpu.txt"

echo "== folding stacks and drawing the flamegraph" >&2
perf script -i "$out/perf.data" 2>/dev/null | inferno-collapse-perf >"$out/stacks.folded"
inferno-flamegraph --title "zugzwang serve, hot cache, default configuration" \
  <"$out/stacks.folded" >"$out/flamegraph.svg"

# Share of samples whose stack contains a frame of each component (a sample
# can count for several: serialisation runs inside the HTTP handler).
awk '
  { n = $NF; total += n; $NF = ""; s = $0 }
  s ~ /shakmaty_syzygy/                                   { tb += n }
  s ~ /pread|sys_pread64|filemap_read|copy_page_to_iter/  { io += n }
  s ~ /shakmaty::(movegen|position|san)|legal_moves|SanPlus|from_move_and_play/ && s !~ /shakmaty_syzygy/ { mg += n }
  s ~ /serde_json|serde::ser/                             { js += n }
  s ~ /hyper::|h1::|axum::|tower/                         { http += n }
  s ~ /tokio::runtime::blocking|spawn_blocking|Semaphore|tokio::sync/ { pool += n }
  s ~ /moka::/                                            { cache += n }
  s ~ /\[unknown\]|swapper|idle/                          { idle += n }
  END {
    printf "%-52s %6.1f%%\n", "table lookups (shakmaty_syzygy, inclusive)", 100 * tb / total
    printf "%-52s %6.1f%%\n", "  of which pread / page-cache copies", 100 * io / total
    printf "%-52s %6.1f%%\n", "move generation, SAN (outside table probes)", 100 * mg / total
    printf "%-52s %6.1f%%\n", "JSON serialisation", 100 * js / total
    printf "%-52s %6.1f%%\n", "HTTP (hyper, axum, tower)", 100 * http / total
    printf "%-52s %6.1f%%\n", "blocking pool hand-off, semaphores", 100 * pool / total
    printf "%-52s %6.1f%%\n", "response cache (moka)", 100 * cache / total
    printf "%-52s %6d\n", "samples", total
  }' "$out/stacks.folded" | tee "$out/breakdown.txt"
perf report -i "$out/perf.data" --no-children --sort symbol --stdio 2>/dev/null |
  grep -v '^#' | grep -v '^$' | head -40 >"$out/top-self.txt" || true

echo "== table reads per request (pread64 calls, 2000 requests under strace)" >&2
strace -c -f -e trace=pread64 -p "$server_pid" -o "$out/strace.txt" &
strace_pid=$!
sleep 1
replay counted --max-requests 2000 >/dev/null
kill -INT "$strace_pid"
wait "$strace_pid" || true
awk '/pread64/ { printf "pread64 calls per request: %.1f\n", $4 / 2000 }' "$out/strace.txt" | tee -a "$out/cpu.txt"

echo "== positions probed per request (the root and every legal move)" >&2
python3 - "$PORT" "$LOG" <<'PY' | tee -a "$out/cpu.txt"
import json, sys, urllib.parse, urllib.request
port, log = sys.argv[1], sys.argv[2]
fens = [l.strip() for l in open(log) if l.strip() and not l.startswith("#")][:2000]
moves = 0
for fen in fens:
    url = f"http://127.0.0.1:{port}/standard?fen={urllib.parse.quote(fen)}"
    with urllib.request.urlopen(url) as r:
        moves += len(json.load(r)["moves"])
print(f"positions probed per request: {1 + moves / len(fens):.1f} (first {len(fens)} requests)")
PY
