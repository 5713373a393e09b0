#!/usr/bin/env bash
# Hot-cache cost of several binaries or flag sets, measured side by side:
# the configurations alternate within each round, so the machine's drifting
# load hits them alike (server/docs/benchmarks.md, "Probing without a
# hand-off"). Per run: a fresh server, one unmeasured pass over the log
# (tables opened, page cache filled), then the measured pass; the server's
# CPU time over the measured pass comes from /proc.
#
#   hot-ab.sh OUT_DIR LABEL=BINARY[:FLAGS] ...
#
# e.g. hot-ab.sh /var/tmp/ab before=/var/tmp/zz-bd83c3e \
#        pool=target/release/zugzwang-bench:--pool-only-probes after=target/release/zugzwang
#
# A BINARY is started as `BINARY serve`: a zugzwang, or zugzwang-bench for
# the benchmark switches (--pool-only-probes, --sequential-probes); older
# zugzwang binaries still had those switches themselves. Every run is
# replayed by the same client, BENCH (default target/release/zugzwang-bench).
#
# Settings (environment): ROUNDS (3), TABLES, LOG, WARM_LOG (the log of
# the unmeasured pass, default LOG: give another part of the workload so
# that the measured requests are not answers the process already keeps,
# e.g. in the probe memo), CLIENTS (12), REQUESTS (20000), PORT (3111),
# CACHE_MB (0: every request is probed; given as --cache-entries to
# binaries that predate --cache-mb), NICE (-10), BENCH. Prints one Markdown row
# per run and writes them to OUT_DIR/rows.md.
#
# Tables never checked (no `zugzwang verify --init`, no tier) are refused by
# default (tables are trusted only once checked): binaries that know --allow-unchecked get it here
# and serve them unchecked, as older binaries did (tables with recorded
# checksums are checked all the same). To measure checked reads, record
# them first (`zugzwang verify --init --state-dir S TABLES`) and give
# `--state-dir S` in that configuration's FLAGS.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
repo="$(cd "$here/../.." && pwd)"
TABLES="${TABLES:-$repo/../shared/syzygy/standard}"
LOG="${LOG:-$repo/../shared/workloads/explore-345.txt}"
WARM_LOG="${WARM_LOG:-$LOG}"
ROUNDS="${ROUNDS:-3}"
CLIENTS="${CLIENTS:-12}"
REQUESTS="${REQUESTS:-20000}"
PORT="${PORT:-3111}"
CACHE_MB="${CACHE_MB:-0}"
NICE="${NICE:--10}"
BENCH="${BENCH:-$repo/target/release/zugzwang-bench}"

[[ $# -ge 2 ]] || {
  sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
# The replay client is `zugzwang-bench replay` (BENCH); a zugzwang from
# before the benchmarks left it (`zugzwang bench replay`) does as well.
replay_cmd=("$BENCH" replay)
"$BENCH" replay --help >/dev/null 2>&1 || replay_cmd=("$BENCH" bench replay)
out="$1"
shift
mkdir -p "$out"
hz="$(getconf CLK_TCK)"
echo "| round | run | req/s | p50 ms | p99 ms | server CPU ms/request |" | tee "$out/rows.md"
echo "|---:|---|---:|---:|---:|---:|" | tee -a "$out/rows.md"

run() { # round label binary flags
  local round="$1" label="$2" binary="$3" flags="$4"
  # Binaries before the byte-sized cache count entries instead.
  local cache=(--cache-mb "$CACHE_MB")
  "$binary" serve --help | grep -q -- --cache-mb || cache=(--cache-entries "$CACHE_MB")
  # Unchecked tables served as before (see above); --mmap checks nothing
  # and takes no such flag.
  local unchecked=()
  if [[ " $flags " != *" --mmap "* ]] && "$binary" serve --help | grep -q -- --allow-unchecked; then
    unchecked=(--allow-unchecked)
  fi
  # shellcheck disable=SC2086 # flags are words on purpose
  nice -n "$NICE" "$binary" serve --bind "127.0.0.1:$PORT" --tables "$TABLES" \
    "${cache[@]}" "${unchecked[@]}" $flags 2>"$out/$label-$round.server.log" &
  local pid=$!
  wait_for_port "$PORT"
  replay() { # name log
    nice -n "$NICE" "${replay_cmd[@]}" --endpoint "http://127.0.0.1:$PORT/standard" \
      --log "$2" --clients "$CLIENTS" --max-requests "$REQUESTS" --warmup 0 \
      --out "$out/$label-$round-$1.tsv" --label "$label" 2>/dev/null
  }
  replay warm "$WARM_LOG" >/dev/null
  local before after summary
  before="$(cpu_ticks "$pid")"
  summary="$(replay measured "$LOG" | grep '^|' | tail -1)"
  after="$(cpu_ticks "$pid")"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  # Summary row: | label | requests | errors | req/s | mean | p50 | p90 | p99 | ...
  awk -F'|' -v round="$round" -v label="$label" -v t="$((after - before))" -v hz="$hz" '{
    gsub(/ /, "", $3); gsub(/ /, "", $5); gsub(/ /, "", $7); gsub(/ /, "", $9)
    printf "| %s | %s | %s | %s | %s | %.3f |\n", round, label, $5, $7, $9, 1000 * t / hz / $3
  }' <<<"$summary" | tee -a "$out/rows.md"
}

each_config "$ROUNDS" "$@"
