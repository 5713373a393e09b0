#!/usr/bin/env bash
# /standard's response times alone and while clients keep pages of long
# practice games in flight, for several binaries side by side:
# the configurations alternate within each round, so the machine's drifting
# load hits them alike (server/docs/benchmarks.md, "A budget per request").
#
#   practice-load.sh OUT_DIR LABEL=BINARY ...
#
# e.g. practice-load.sh /var/tmp/pl before=/var/tmp/zz40-before/zugzwang \
#        after=/var/tmp/zz40-after/zugzwang
#
# Per run: a fresh `BINARY serve --tables TABLES` (default flags otherwise),
# one unmeasured pass of /standard (tables opened, page cache filled), one
# unmeasured page of each game (its answers worked out once, as any later
# visit finds them); then /standard measured alone (one client, REQUESTS
# positions of LOG not asked before), then measured again (the next REQUESTS
# positions) while PRACTICE clients each load the page of one long game over
# and over (`zugzwang-bench replay` with the game's moves in its endpoint).
# The positions a game's first page probes (answers not yet known), and
# the practice pages served during the loaded pass with their mean time,
# come from /metrics before and after.
#
# Settings (environment): GAMES (a file of practice paths, one a line, as
# end2end/bench/long-practice.mjs prints them; default: PRACTICE games of 649
# plies of KBBvKP made with it, which needs node and end2end's node_modules),
# PRACTICE (8), REQUESTS (2000), ROUNDS (3), TABLES, LOG, PORT (3291), NICE
# (0), BENCH (zugzwang-bench). Prints one Markdown row per run and writes
# them to OUT_DIR/rows.md.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
repo="$(cd "$here/../.." && pwd)"
TABLES="${TABLES:-$repo/../shared/syzygy/standard}"
LOG="${LOG:-$repo/../shared/workloads/explore-345.txt}"
PRACTICE="${PRACTICE:-8}"
REQUESTS="${REQUESTS:-2000}"
ROUNDS="${ROUNDS:-3}"
PORT="${PORT:-3291}"
NICE="${NICE:-0}"
BENCH="${BENCH:-$repo/target/release/zugzwang-bench}"

[[ $# -ge 2 ]] || {
  sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
out="$1"
shift
mkdir -p "$out"
games="${GAMES:-$out/games.txt}"
if [[ ! -s "$games" ]]; then
  node "$repo/end2end/bench/long-practice.mjs" '4k3/7p/8/8/8/8/8/2B1KB2 w - - 0 1' 649 "$PRACTICE" >"$games"
fi
mapfile -t paths <"$games"
base="http://127.0.0.1:$PORT"
# Positions: a warm-up part, then the alone and loaded parts, never repeated.
sed -n "1,${REQUESTS}p" "$LOG" >"$out/warm.txt"
sed -n "$((REQUESTS + 1)),$((2 * REQUESTS))p" "$LOG" >"$out/alone.txt"
sed -n "$((2 * REQUESTS + 1)),$((3 * REQUESTS))p" "$LOG" >"$out/loaded.txt"

echo "| round | run | /standard p50 alone ms | p50 loaded ms | loaded/alone | p99 alone ms | p99 loaded ms | practice pages/s | practice mean ms | first page: probes | first page: ms |" | tee "$out/rows.md"
echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|" | tee -a "$out/rows.md"

metric() { # name-and-labels: the sum of the matching samples on /metrics
  curl -s "$base/metrics" | awk -v m="$1" 'index($0, m) == 1 { s += $NF } END { printf "%.6f\n", s }'
}

replay() { # label log clients endpoint
  nice -n "$NICE" "$BENCH" replay --endpoint "$4" --log "$2" --clients "$3" --warmup 0 \
    --out "$out/$1.tsv" --label "$1" 2>/dev/null | grep '^|' | tail -1
}

# p50 and p99 of a summary row: | label | requests | errors | req/s | mean | p50 | p90 | p99 | ...
field() { awk -F'|' -v f="$2" '{ gsub(/ /, "", $f); print $f }' <<<"$1"; }

run() { # round label binary
  local round="$1" label="$2" binary="$3"
  local unchecked=()
  "$binary" serve --help | grep -q -- --allow-unchecked && unchecked=(--allow-unchecked)
  nice -n "$NICE" "$binary" serve --bind "127.0.0.1:$PORT" --tables "$TABLES" \
    "${unchecked[@]}" 2>"$out/$label-$round.server.log" &
  local pid=$!
  wait_for_port "$PORT"
  replay "$label-$round-warm" "$out/warm.txt" 1 "$base/standard" >/dev/null
  local i endpoints=() logs=() first_probes first_ms=0 t
  first_probes="$(metric 'zugzwang_probes_total')"
  for i in "${!paths[@]}"; do
    # The game's start goes in the log (replay appends it as &fen=), its
    # moves in the endpoint.
    local query="${paths[$i]#*\?}" start
    start="$(sed 's/.*fen=\([^&]*\).*/\1/' <<<"$query")"
    endpoints+=("$base/practice?$(sed 's/^fen=[^&]*&//' <<<"$query")")
    yes "$start" | head -n 100000 >"$out/start-$i.txt" || true
    logs+=("$out/start-$i.txt")
    t="$(curl -s -o /dev/null -w '%{time_total}' "$base/practice?$query")"
    first_ms="$(awk -v a="$first_ms" -v t="$t" 'BEGIN { print a + 1000 * t }')"
  done
  first_probes="$(awk -v a="$first_probes" -v b="$(metric 'zugzwang_probes_total')" -v n="${#paths[@]}" \
    'BEGIN { printf "%.0f", (b - a) / n }')"
  first_ms="$(awk -v a="$first_ms" -v n="${#paths[@]}" 'BEGIN { printf "%.0f", a / n }')"
  local alone loaded
  alone="$(replay "$label-$round-alone" "$out/alone.txt" 1 "$base/standard")"
  local load=()
  for i in "${!endpoints[@]}"; do
    "$BENCH" replay --endpoint "${endpoints[$i]}" --log "${logs[$i]}" --clients 1 \
      --duration 3600 --out "$out/$label-$round-practice-$i.tsv" >/dev/null \
      2>"$out/$label-$round-practice-$i.log" &
    load+=($!)
  done
  sleep 2 # every client in flight before the measured pass
  local t0=$SECONDS pages1 sum1 pages2 sum2
  pages1="$(metric 'zugzwang_http_request_duration_seconds_count{route="/practice"}')"
  sum1="$(metric 'zugzwang_http_request_duration_seconds_sum{route="/practice"}')"
  loaded="$(replay "$label-$round-loaded" "$out/loaded.txt" 1 "$base/standard")"
  pages2="$(metric 'zugzwang_http_request_duration_seconds_count{route="/practice"}')"
  sum2="$(metric 'zugzwang_http_request_duration_seconds_sum{route="/practice"}')"
  local seconds=$((SECONDS - t0))
  kill "${load[@]}" 2>/dev/null || true
  wait "${load[@]}" 2>/dev/null || true
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  local a50 l50 a99 l99
  a50="$(field "$alone" 7)" l50="$(field "$loaded" 7)"
  a99="$(field "$alone" 9)" l99="$(field "$loaded" 9)"
  awk -v round="$round" -v label="$label" -v a50="$a50" -v l50="$l50" -v a99="$a99" -v l99="$l99" \
    -v pages="$(awk -v a="$pages1" -v b="$pages2" 'BEGIN { print b - a }')" \
    -v sum="$(awk -v a="$sum1" -v b="$sum2" 'BEGIN { print b - a }')" \
    -v first_probes="$first_probes" -v first_ms="$first_ms" -v seconds="$seconds" 'BEGIN {
      printf "| %s | %s | %s | %s | %.2f | %s | %s | %.1f | %.0f | %s | %s |\n", round, label, a50, l50,
        l50 / a50, a99, l99, pages / (seconds > 0 ? seconds : 1), pages ? 1000 * sum / pages : 0,
        first_probes, first_ms
    }' | tee -a "$out/rows.md"
}

each_config "$ROUNDS" "$@"
