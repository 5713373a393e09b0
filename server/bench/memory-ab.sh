#!/usr/bin/env bash
# Memory and hot CPU of several binaries at their default flags, side by
# side (server/docs/benchmarks.md, "One memory budget"): the binaries
# alternate within each round. Per run: a fresh server on the 3-4-5 tables
# (DTM from the embedded Prophet tables, so every answer has `dtm`), an
# unmeasured pass over explore-34 (20,000 requests), the measured pass over
# explore-345 (20,000, CLIENTS clients: CPU per request from /proc, p50 and
# p99), peak RSS (VmHWM), then a burst of BURST clients (10,000 requests),
# RSS right after it and after IDLE seconds without requests.
#
#   memory-ab.sh OUT_DIR LABEL=BINARY[:FLAGS] ...
#
# A BINARY named lila-tablebase is started with its own flags (the same
# tables, DTM from PROPHET), so both servers are measured in one run.
# Settings (environment): ROUNDS (2), TABLES, PROPHET, CLIENTS (12),
# BURST (200), IDLE (60), PORT (3121), BENCH (target/release/zugzwang-bench).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
repo="$(cd "$here/../.." && pwd)"
TABLES="${TABLES:-$repo/../shared/syzygy/standard}"
WORK="$repo/../shared/workloads"
PROPHET="${PROPHET:-$repo/../shared/prophet}"
ROUNDS="${ROUNDS:-2}"
CLIENTS="${CLIENTS:-12}"
BURST="${BURST:-200}"
IDLE="${IDLE:-60}"
PORT="${PORT:-3121}"
BENCH="${BENCH:-$repo/target/release/zugzwang-bench}"

[[ $# -ge 2 ]] || {
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
out="$1"
shift
mkdir -p "$out"
hz="$(getconf CLK_TCK)"
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
echo "| round | run | req/s | p50 ms | p99 ms | CPU ms/request | peak RSS MiB | after burst MiB | after ${IDLE} s idle MiB |" | tee "$out/rows.md"
echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|" | tee -a "$out/rows.md"

# A Zugzwang binary, or lila-tablebase (by its name) with the same tables
# and the same Prophet DTM tables that Zugzwang carries embedded.
start() { # binary flags
  local binary="$1" flags="$2"
  if [[ "$(basename "$binary")" == lila-tablebase ]]; then
    # shellcheck disable=SC2086 # flags are words on purpose
    exec "$binary" --bind "127.0.0.1:$PORT" --standard "$TABLES" \
      --prophet "$PROPHET/2men" --prophet "$PROPHET/3men" --prophet "$PROPHET/4men" $flags
  fi
  # shellcheck disable=SC2086 # flags are words on purpose
  exec "$binary" serve --bind "127.0.0.1:$PORT" --tables "$TABLES" --allow-unchecked $flags
}

run() { # round label binary flags
  local round="$1" label="$2" binary="$3" flags="$4"
  start "$binary" "$flags" 2>"$out/$label-$round.server.log" &
  local pid=$!
  wait_for_port "$PORT"
  replay() { # name log clients requests
    "$BENCH" replay --endpoint "http://127.0.0.1:$PORT/standard" --log "$2" \
      --clients "$3" --max-requests "$4" --warmup 0 \
      --out "$out/$label-$round-$1.tsv" --label "$label" 2>/dev/null
  }
  replay warm "$WORK/explore-34.txt" "$CLIENTS" 20000 >/dev/null
  local before after summary peak burst idle
  before="$(cpu_ticks "$pid")"
  summary="$(replay measured "$WORK/explore-345.txt" "$CLIENTS" 20000 | grep '^|' | tail -1)"
  after="$(cpu_ticks "$pid")"
  peak="$(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status")"
  replay burst "$WORK/explore-34.txt" "$BURST" 10000 >/dev/null
  burst="$(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status")"
  sleep "$IDLE"
  idle="$(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status")"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  awk -F'|' -v round="$round" -v label="$label" -v t="$((after - before))" -v hz="$hz" \
    -v peak="$(mib "$peak")" -v burst="$(mib "$burst")" -v idle="$(mib "$idle")" '{
    gsub(/ /, "", $3); gsub(/ /, "", $5); gsub(/ /, "", $7); gsub(/ /, "", $9)
    printf "| %s | %s | %s | %s | %s | %.3f | %s | %s | %s |\n", round, label, $5, $7, $9, 1000 * t / hz / $3, peak, burst, idle
  }' <<<"$summary" | tee -a "$out/rows.md"
}

each_config "$ROUNDS" "$@"
