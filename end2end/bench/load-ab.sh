#!/usr/bin/env bash
# Navigation to a usable page on a throttled connection (load-time.mjs:
# 1.6 Mbit/s, 150 ms RTT, CPU 4x slower) for several builds side by side;
# visits alternate between the builds round by round.
#
#   end2end/bench/load-ab.sh LABEL=DIR ...
#
# DIR holds a release build as for click-ab.sh: the `zugzwang` binary and
# the `site/` that `cargo leptos build --release --split` leaves in target/
# (cp -r target/release/zugzwang target/site DIR/). The first build is the
# one the others are compared with. Settings (environment): ROUNDS (10),
# PORT (3041, then one up per build).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROUNDS="${ROUNDS:-10}"
PORT="${PORT:-3041}"
[[ $# -ge 1 ]] || {
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
targets=()
port="$PORT"
for spec in "$@"; do
  label="${spec%%=*}"
  dir="${spec#*=}"
  [[ -x "$dir/zugzwang" && -d "$dir/site/pkg" ]] || {
    echo "$dir: expected a zugzwang binary and site/pkg beside it" >&2
    exit 2
  }
  LEPTOS_SITE_ROOT="$dir/site" "$dir/zugzwang" serve --bind "127.0.0.1:$port" >"/tmp/load-ab-$label.log" 2>&1 &
  pids+=("$!")
  targets+=("$label=http://127.0.0.1:$port")
  port=$((port + 1))
done
for t in "${targets[@]}"; do
  for _ in $(seq 50); do
    curl -sf "${t#*=}/tables" >/dev/null && break
    sleep 0.2
  done
done
cd "$here/.."
node bench/load-time.mjs "$ROUNDS" "${targets[@]}"
