#!/usr/bin/env bash
# Instructions per hot request of several servers, side by side, counted by
# callgrind (server/docs/benchmarks.md, "Hot CPU beside lila-tablebase, in
# instructions"): unlike CPU seconds from /proc, an instruction count does
# not move with the machine's load, so two servers can be compared on a
# busy machine. Per run: a fresh server under `valgrind --tool=callgrind`
# with instrumentation off, the unmeasured pass of memory-ab.sh (WARM
# requests of explore-34) and the first SKIP requests of explore-345, then
# instrumentation on for the next REQUESTS requests of explore-345, a dump,
# and the server stopped. memory-ab.sh measures 20,000 requests of
# explore-345, whose first ones find the caches colder than the rest:
# SKIP=18000 counts the last 2,000 of them. Prints one Markdown row
# per run (OUT_DIR/rows.md); the dumps stay in OUT_DIR for
# callgrind_annotate.
#
#   instructions-ab.sh OUT_DIR LABEL=BINARY[:FLAGS] ...
#
# A BINARY named lila-tablebase is started with its own flags (the same
# tables, DTM from PROPHET), as memory-ab.sh does. Settings (environment):
# ROUNDS (1), WARM (20000), SKIP (0), REQUESTS (2000), CLIENTS (12), TABLES,
# PROPHET, PORT (3121), BENCH (target/release/zugzwang-bench).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
repo="$(cd "$here/../.." && pwd)"
TABLES="${TABLES:-$repo/../shared/syzygy/standard}"
WORK="$repo/../shared/workloads"
PROPHET="${PROPHET:-$repo/../shared/prophet}"
ROUNDS="${ROUNDS:-1}"
WARM="${WARM:-20000}"
SKIP="${SKIP:-0}"
REQUESTS="${REQUESTS:-2000}"
CLIENTS="${CLIENTS:-12}"
PORT="${PORT:-3121}"
BENCH="${BENCH:-$repo/target/release/zugzwang-bench}"

[[ $# -ge 2 ]] || {
  sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
for tool in valgrind callgrind_control; do
  command -v "$tool" >/dev/null || {
    echo "instructions-ab: $tool is missing (apt-get install valgrind)" >&2
    exit 2
  }
done
out="$(mkdir -p "$1" && cd "$1" && pwd)"
shift
# The measured requests: explore-345 from request SKIP + 1 on.
tail -n "+$((SKIP + 1))" "$WORK/explore-345.txt" >"$out/measured-log.txt"
echo "| round | run | requests | instructions per request |" | tee "$out/rows.md"
echo "|---:|---|---:|---:|" | tee -a "$out/rows.md"

# The server's command line: a Zugzwang binary, or lila-tablebase (by its
# name) with the same tables and Prophet DTM tables, as in memory-ab.sh.
command_of() { # binary flags
  local binary="$1" flags="$2"
  if [[ "$(basename "$binary")" == lila-tablebase ]]; then
    echo "$binary --bind 127.0.0.1:$PORT --standard $TABLES --prophet $PROPHET/2men" \
      "--prophet $PROPHET/3men --prophet $PROPHET/4men $flags"
  else
    echo "$binary serve --bind 127.0.0.1:$PORT --tables $TABLES --allow-unchecked $flags"
  fi
}

# Waits up to 5 minutes for a server starting under valgrind.
wait_long() { # port
  for _ in $(seq 10); do wait_for_port "$1" && return 0; done
  return 1
}

run() { # round label binary flags
  local round="$1" label="$2" binary="$3" flags="$4" dump="$out/$2-$1.callgrind"
  # shellcheck disable=SC2046 # the command line is words on purpose
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$dump" \
    $(command_of "$binary" "$flags") 2>"$out/$label-$round.server.log" &
  local pid=$!
  wait_long "$PORT"
  replay() { # name log requests
    "$BENCH" replay --endpoint "http://127.0.0.1:$PORT/standard" --log "$2" \
      --clients "$CLIENTS" --max-requests "$3" --warmup 0 --timeout 600 \
      --out "$out/$label-$round-$1.tsv" --label "$label" 2>/dev/null
  }
  replay warm "$WORK/explore-34.txt" "$WARM" >/dev/null
  if [[ "$SKIP" -gt 0 ]]; then
    replay skipped "$WORK/explore-345.txt" "$SKIP" >/dev/null
  fi
  callgrind_control -i on "$pid" >/dev/null 2>&1
  local summary
  summary="$(replay measured "$out/measured-log.txt" "$REQUESTS" | grep '^|' | tail -1)"
  callgrind_control -d "$pid" >/dev/null 2>&1
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  # The first dump is the measured pass; the one at exit holds the rest.
  local requests total
  requests="$(awk -F'|' '{ gsub(/ /, "", $3); print $3 }' <<<"$summary")"
  total="$(awk '/^summary:|^totals:/ { print $2; exit }' "$dump.1")"
  awk -v round="$round" -v label="$label" -v n="$requests" -v total="$total" 'BEGIN {
    printf "| %s | %s | %d | %.0f |\n", round, label, n, total / n
  }' | tee -a "$out/rows.md"
}

each_config "$ROUNDS" "$@"
