#!/usr/bin/env bash
# Click to rendered list (tests/bench.spec.ts) for several builds, side by
# side: each build's server runs on its own port, and the walks alternate
# between them round by round, so the machine's drifting load hits them
# alike (server/docs/benchmarks.md, "The browser: click to rendered list").
#
#   end2end/bench/click-ab.sh LABEL=DIR ...
#
# DIR holds a release build: the `zugzwang` binary and the `site/` that
# `cargo leptos build --release` leaves in target/ (copy both out, e.g.
# cp target/release/zugzwang target/site -r /var/tmp/zz-main/). Settings
# (environment): ROUNDS (3), MOVES (100), PORT (3031, then one up per
# build), BUSY (0: that many CPU-bound loops run beside the walks, to
# measure on a machine as busy as the issue's: load average about 5 with
# BUSY=2 on two cores). The servers run on the embedded tables with the
# response cache off (every first visit is probed). Prints each walk's
# summary with the load average beside it, then every build's walks pooled.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROUNDS="${ROUNDS:-3}"
MOVES="${MOVES:-100}"
PORT="${PORT:-3031}"
BUSY="${BUSY:-0}"

[[ $# -ge 1 ]] || {
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
labels=()
ports=()
pids=()
times="$(mktemp -d)"
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$times"' EXIT
port="$PORT"
for spec in "$@"; do
  label="${spec%%=*}"
  dir="${spec#*=}"
  [[ -x "$dir/zugzwang" && -d "$dir/site/pkg" ]] || {
    echo "$dir: expected a zugzwang binary and site/pkg beside it" >&2
    exit 2
  }
  # Builds before the byte-sized cache count entries instead.
  cache=(--cache-mb 0)
  "$dir/zugzwang" serve --help | grep -q -- --cache-mb || cache=(--cache-entries 0)
  LEPTOS_SITE_ROOT="$dir/site" "$dir/zugzwang" serve --bind "127.0.0.1:$port" "${cache[@]}" \
    >"/tmp/click-ab-$label.log" 2>&1 &
  pids+=("$!")
  labels+=("$label")
  ports+=("$port")
  port=$((port + 1))
done
for p in "${ports[@]}"; do
  for _ in $(seq 50); do
    curl -sf "http://127.0.0.1:$p/tables" >/dev/null && break
    sleep 0.2
  done
done
for _ in $(seq "$BUSY"); do
  while :; do :; done &
  pids+=("$!")
done
cd "$here/.."
for round in $(seq "$ROUNDS"); do
  for i in "${!labels[@]}"; do
    echo "== round $round: ${labels[$i]} ($(uptime | sed 's/.*load/load/'))"
    BENCH=1 BENCH_MOVES="$MOVES" BASE_URL="http://127.0.0.1:${ports[$i]}" BENCH_OUT="$times/${labels[$i]}.jsonl" \
      PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npx playwright test bench --reporter=list 2>&1 |
      grep -E "click-to-render|first visits|hovered|revisits|lost|passed|failed" || true
  done
done
# One walk's p95 is decided by its three or four slowest clicks; the walks
# pooled give each build's figure over every round.
echo "== all rounds pooled"
for label in "${labels[@]}"; do
  node -e '
    const walks = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
    const q = (xs, p) => xs.length ? xs[Math.min(xs.length - 1, Math.floor(p * xs.length))].toFixed(1) : "-";
    const line = (kind) => {
      const xs = walks.flatMap((w) => w[kind]).sort((a, b) => a - b);
      return `${kind} n=${xs.length} p50 ${q(xs, 0.5)} p95 ${q(xs, 0.95)} p99 ${q(xs, 0.99)} ms`;
    };
    console.log(`${process.argv[2]}: ${["firstVisits", "hovered", "revisits"].map(line).join("; ")}`);
  ' "$times/$label.jsonl" "$label" || echo "$label: no walk finished"
done
