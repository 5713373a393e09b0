#!/usr/bin/env bash
# Where a request's CPU time goes, for the default configuration at hot
# cache (server/docs/benchmarks.md, "Where the time goes"): CPU seconds per
# request from /proc, a perf profile with call graphs turned into a
# flamegraph (inferno) and a breakdown by component, and the table reads
# per request (pread64 calls counted with strace on a shorter pass).
#
#   profile-hot.sh OUT_DIR
#
# Settings (environment): ZUGZWANG (the server binary, started as
# `ZUGZWANG serve`), BENCH (the replay client, zugzwang-bench), TABLES
# (table directory), LOG (workload), CLIENTS (12), PORT (3101), CACHE_MB (0:
# every request reaches the engine), NICE (-10), SERVE_FLAGS (more `serve`
# flags; the benchmark switches, e.g. --pool-only-probes, need
# ZUGZWANG=target/release/zugzwang-bench). Tables never checked (no
# `zugzwang verify --init`) are served with --allow-unchecked where
# ZUGZWANG knows it, as binaries from before checking by default did; give `--state-dir S` in
# SERVE_FLAGS after `zugzwang verify --init --state-dir S TABLES` to
# profile checked reads. Needs perf, strace, and
# inferno-collapse-perf / inferno-flamegraph (cargo install inferno).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
ZUGZWANG="${ZUGZWANG:-$repo/target/release/zugzwang}"
BENCH="${BENCH:-$repo/target/release/zugzwang-bench}"
TABLES="${TABLES:-$repo/../shared/syzygy/standard}"
LOG="${LOG:-$repo/../shared/workloads/explore-345.txt}"
CLIENTS="${CLIENTS:-12}"
PORT="${PORT:-3101}"
CACHE_MB="${CACHE_MB:-0}"
NICE="${NICE:--10}"
SERVE_FLAGS="${SERVE_FLAGS:-}"

[[ $# -eq 1 ]] || {
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2
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

# The replay client is `zugzwang-bench replay` (BENCH); a zugzwang from
# before the benchmarks left it (`zugzwang bench replay`) does as well.
replay_cmd=("$BENCH" replay)
"$BENCH" replay --help >/dev/null 2>&1 || replay_cmd=("$BENCH" bench replay)

# Binaries before the byte-sized cache count entries instead.
cache=(--cache-mb "$CACHE_MB")
"$ZUGZWANG" serve --help | grep -q -- --cache-mb || cache=(--cache-entries "$CACHE_MB")
# Tables never checked are refused unless --allow-unchecked
# (binaries from before serve them without it); --mmap checks nothing and
# takes no such flag.
unchecked=()
if [[ " $SERVE_FLAGS " != *" --mmap "* ]] && "$ZUGZWANG" serve --help | grep -q -- --allow-unchecked; then
  unchecked=(--allow-unchecked)
fi
# shellcheck disable=SC2086 # flags are words on purpose
nice -n "$NICE" "$ZUGZWANG" serve --bind "127.0.0.1:$PORT" --tables "$TABLES" \
  "${cache[@]}" "${unchecked[@]}" $SERVE_FLAGS 2>"$out/server.log" &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true' EXIT
for _ in $(seq 300); do
  (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
  sleep 0.1
done

replay() {
  nice -n "$NICE" "${replay_cmd[@]}" --endpoint "http://127.0.0.1:$PORT/standard" \
    --log "$LOG" --clients "$CLIENTS" --out "$out/$1.tsv" --label "$1" "${@:2}"
}

# Fields 14 and 15 of /proc/PID/stat: user and system time in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$server_pid/stat"; }

echo "== warm pass (tables opened, page cache filled)" >&2
replay warm >/dev/null
hz="$(getconf CLK_TCK)"
per_request() {
  awk -v t="$1" -v hz="$hz" -v n="$2" -v what="$3" 'BEGIN {
    printf "server CPU%s: %.2f s for %d requests = %.3f ms per request\n", what, t / hz, n, 1000 * t / hz / n
  }'
}
echo "== measured pass" >&2
before="$(cpu_ticks)"
replay measured >"$out/measured-summary.txt"
after="$(cpu_ticks)"
per_request "$((after - before))" "$(($(wc -l <"$out/measured.tsv") - 1))" "" | tee "$out/cpu.txt"

echo "== profiled pass under perf" >&2
before="$(cpu_ticks)"
perf record -F 250 --call-graph dwarf,16384 -p "$server_pid" -o "$out/perf.data" -- sleep 3600 \
  2>"$out/perf-record.log" &
perf_pid=$!
sleep 1
replay profiled >"$out/profiled-summary.txt"
kill -INT "$perf_pid"
wait "$perf_pid" || true
after="$(cpu_ticks)"
per_request "$((after - before))" "$(($(wc -l <"$out/profiled.tsv") - 1))" " (perf running)" |
  tee -a "$out/cpu.txt"

echo "== folding stacks and drawing the flamegraph" >&2
perf script -i "$out/perf.data" 2>/dev/null | inferno-collapse-perf >"$out/stacks.folded"
inferno-flamegraph --title "zugzwang serve, hot cache, default configuration" \
  <"$out/stacks.folded" >"$out/flamegraph.svg"

# Each sample counted once, by the first matching rule (order matters:
# a futex wake from inside a table probe is a hand-off, not a lookup).
python3 - "$out/stacks.folded" <<'PY' | tee "$out/breakdown.txt"
import collections, sys
def classify(frames):
    s = ";".join(frames)
    if any(f.startswith(("futex", "__futex", "do_futex", "__x64_sys_futex")) for f in frames) \
            or "exit_to_user_mode_loop;schedule" in s or "schedule_hrtimeout" in s:
        return "thread hand-offs: futex wake/park, scheduling"
    if any(k in s for k in ("pread64", "ksys_pread", "preadv2", "do_preadv")):
        return "table reads: pread64/preadv2 syscalls, page-cache copy"
    if "shakmaty_syzygy" in s or "store::" in s:
        return "table lookups: decoding (shakmaty_syzygy, store)"
    if "serde_json" in s or "serde::" in s:
        return "JSON serialisation"
    if "shakmaty::" in s or "SanPlus" in s or "legal_moves" in s:
        return "move generation, SAN, FEN"
    if any(k in s for k in ("tcp_", "sock_", "epoll", "hyper::", "axum::", "tower", "h1::",
                            "sendmsg", "recvfrom", "__sys_recv", "__sys_send", "eventfd")):
        return "HTTP and sockets (hyper, axum, kernel TCP)"
    if any(k in s for k in ("malloc", "free", "realloc", "_int_")):
        return "allocation"
    if "tokio::" in s:
        return "tokio runtime (other)"
    return "other"
total, share = 0, collections.Counter()
for line in open(sys.argv[1]):
    stack, n = line.rstrip("\n").rsplit(" ", 1)
    total += int(n)
    share[classify(stack.split(";"))] += int(n)
for name, n in share.most_common():
    print(f"{100 * n / total:5.1f}%  {name}")
PY
perf report -i "$out/perf.data" --no-children --sort symbol --stdio 2>/dev/null |
  grep -v '^#' | grep -v '^$' | head -40 >"$out/top-self.txt" || true

echo "== table reads per request (pread64 and preadv2 calls, 2000 requests under strace)" >&2
strace -c -f -e trace=pread64,preadv2 -p "$server_pid" -o "$out/strace.txt" &
strace_pid=$!
sleep 1
replay counted --max-requests 2000 >/dev/null
kill -INT "$strace_pid"
wait "$strace_pid" || true
awk '/pread64|preadv2/ { printf "%s calls per request: %.1f\n", $NF, $4 / 2000 }' "$out/strace.txt" | tee -a "$out/cpu.txt"

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
