#!/usr/bin/env bash
# Two processes on loopback, as a self-hoster runs them (server/docs/
# benchmarks.md, "Answers from an upstream server"): B serves the shared
# 3-4-5 tables on 127.0.0.1:3244; A has the embedded 3- and 4-piece tables
# and `--upstream http://127.0.0.1:3244` (its default budget: one request
# a second, three at once). For COUNT 5-piece positions of LOG that A
# cannot answer:
#   cold: each asked of A once, paced at A's bucket rate, so each is asked
#         upstream (the first three at once, the burst);
#   warm: the same positions again at once, from A's store;
#   page: PAGES more positions never asked, as a browser opens them
#         (`/?fen=`): the page must show B's answer, attributed ("answer
#         from 127.0.0.1:3244"), within a second.
# Latency is curl's time_total; B's requests are counted at B (/metrics,
# the /standard route) before and after each pass.
#
#   upstream-ab.sh [BINARY]    (default target/release/zugzwang)
#
# Settings (environment): COUNT (20), PAGES (5), TABLES, LOG,
# A_PORT (3144), B_PORT (3244). Needs curl.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
repo="$(cd "$here/../.." && pwd)"
BIN="${1:-$repo/target/release/zugzwang}"
TABLES="${TABLES:-$repo/../shared/syzygy/standard}"
LOG="${LOG:-$repo/../shared/workloads/explore-345.txt}"
COUNT="${COUNT:-20}"
PAGES="${PAGES:-5}"
A_PORT="${A_PORT:-3144}"
B_PORT="${B_PORT:-3244}"
work="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

RUST_LOG=warn "$BIN" serve --bind "127.0.0.1:$B_PORT" --tables "$TABLES" \
  --allow-unchecked --state-dir "$work/b" 2>"$work/b.log" &
pids+=($!)
RUST_LOG=warn "$BIN" serve --bind "127.0.0.1:$A_PORT" \
  --upstream "http://127.0.0.1:$B_PORT" --state-dir "$work/a" 2>"$work/a.log" &
pids+=($!)
wait_for_port "$B_PORT" && wait_for_port "$A_PORT" || {
  cat "$work/a.log" "$work/b.log" >&2
  exit 1
}

# 5-piece positions of the log, each once (by board, side, castling, en passant).
awk -v n="$((COUNT + PAGES))" '{ board = $1; gsub(/[^A-Za-z]/, "", board) }
     length(board) == 5 && !seen[$1 " " $2 " " $3 " " $4]++ { print; if (++k == n) exit }' \
  "$LOG" >"$work/five"
head -n "$COUNT" "$work/five" >"$work/asked"
tail -n "$PAGES" "$work/five" >"$work/pages"

asked_of_b() {
  curl -s "http://127.0.0.1:$B_PORT/metrics" |
    awk '/^zugzwang_http_requests_total\{route="\/standard"/ { n += $NF } END { print n + 0 }'
}

# One request: its time in ms and where its answer came from.
probe() { # path
  curl -s -o /dev/null -w '%{time_total} %header{x-source}\n' "http://127.0.0.1:$A_PORT$1" |
    awk '{ printf "%.1f %s\n", $1 * 1000, ($2 == "" ? "local" : $2) }'
}

# Median, p90 and max of the first column, and how many lines say upstream.
summary() { # label file
  sort -n "$2" | awk -v label="$1" '
    { ms[NR] = $1; if ($2 == "upstream") up++ }
    END { printf "| %s | %d | %d | %.1f | %.1f | %.1f |", label, NR, up,
          ms[int((NR + 1) / 2)], ms[int(NR * 0.9 + 0.99)], ms[NR] }'
}

pass() { # label pace
  local label="$1" pace="$2" before after fen
  before="$(asked_of_b)"
  : >"$work/$label"
  while read -r fen; do
    probe "/standard?fen=${fen// /_}" >>"$work/$label"
    sleep "$pace"
  done <"$work/asked"
  after="$(asked_of_b)"
  echo "$(summary "$label" "$work/$label") $((after - before)) |"
}

echo "| pass | requests | from upstream | median ms | p90 ms | max ms | requests at B |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
# Cold: one a second, A's rate, so the bucket never runs dry.
pass cold 1
pass warm 0

# Pages never asked before: the verdict must name B within a second.
while read -r fen; do
  out="$(curl -s -w '\n%{time_total}' "http://127.0.0.1:$A_PORT/?fen=${fen// /_}")"
  ms="$(tail -n 1 <<<"$out" | awk '{ printf "%.0f", $1 * 1000 }')"
  if grep -q "answer from 127.0.0.1:$B_PORT" <<<"$out"; then said=attributed; else said=NOT-attributed; fi
  echo "page $fen: $ms ms, $said"
  sleep 1
done <"$work/pages"
