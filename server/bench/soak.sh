#!/usr/bin/env bash
# Memory over a long run (server/docs/benchmarks.md, "Memory over a soak
# run"): replays REQUESTS requests of a workload through `zugzwang-bench
# replay`, each pass over the log with the move numbers shifted (they do not
# change an answer, so they must not grow the response cache), and samples
# the server's RSS every SAMPLE seconds. Prints the RSS at each tenth of the
# run and the spread once warm (after the first tenth).
#
#   soak.sh OUT_DIR
#
# Settings (environment): ZUGZWANG (the server binary), BENCH (the replay
# client, zugzwang-bench), TABLES (table directory), LOG
# (workload), REQUESTS (1000000), CLIENTS (12), PORT (3102), SAMPLE (2),
# CACHE_MB (64; 0 sends every request to the engine). Tables never checked
# (no `zugzwang verify --init`) are served with --allow-unchecked where
# ZUGZWANG knows it, as binaries from before checking by default did.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
ZUGZWANG="${ZUGZWANG:-$repo/target/release/zugzwang}"
BENCH="${BENCH:-$repo/target/release/zugzwang-bench}"
TABLES="${TABLES:-$repo/../shared/syzygy/standard}"
LOG="${LOG:-$repo/../shared/workloads/explore-345.txt}"
REQUESTS="${REQUESTS:-1000000}"
CLIENTS="${CLIENTS:-12}"
PORT="${PORT:-3102}"
SAMPLE="${SAMPLE:-2}"
CACHE_MB="${CACHE_MB:-64}"

[[ $# -eq 1 ]] || {
  sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
# The replay client is `zugzwang-bench replay` (BENCH); a zugzwang from
# before the benchmarks left it (`zugzwang bench replay`) does as well.
replay_cmd=("$BENCH" replay)
"$BENCH" replay --help >/dev/null 2>&1 || replay_cmd=("$BENCH" bench replay)
out="$1"
mkdir -p "$out"

# Passes over the log until REQUESTS lines, pass N adding N to every move number.
awk -v want="$REQUESTS" '
  { fens[NR] = $0 }
  END {
    for (pass = 0; written < want; pass++)
      for (i = 1; i <= NR && written < want; i++) {
        n = split(fens[i], f, " ")
        if (n == 6) f[6] += pass
        line = f[1]; for (j = 2; j <= n; j++) line = line " " f[j]
        print line; written++
      }
  }' "$LOG" >"$out/soak-log.txt"

# Tables never checked are refused unless --allow-unchecked;
# binaries from before serve them without it.
unchecked=()
"$ZUGZWANG" serve --help | grep -q -- --allow-unchecked && unchecked=(--allow-unchecked)
"$ZUGZWANG" serve --bind "127.0.0.1:$PORT" --tables "$TABLES" --cache-mb "$CACHE_MB" \
  "${unchecked[@]}" 2>"$out/server.log" &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  curl -fs "http://127.0.0.1:$PORT/metrics" >/dev/null && break
  sleep 0.2
done

(
  while kill -0 "$server" 2>/dev/null; do
    printf '%s\t%s\n' "$(date +%s)" "$(awk '/^VmRSS/ {print $2}' "/proc/$server/status")"
    sleep "$SAMPLE"
  done
) >"$out/rss.tsv" &
sampler=$!

start=$(date +%s)
"${replay_cmd[@]}" --endpoint "http://127.0.0.1:$PORT/standard" \
  --log "$out/soak-log.txt" --clients "$CLIENTS" --duration 36000 \
  --out "$out/replay.tsv" --label soak >"$out/replay.txt"
end=$(date +%s)
kill "$sampler" 2>/dev/null || true
cat "$out/replay.txt"

# RSS (MB) at each tenth of the run, and the spread once warm.
awk -v start="$start" -v end="$end" '
  { t[NR] = $1; rss[NR] = $2 / 1024 }
  END {
    span = end - start
    printf "%-8s %s\n", "run", "RSS MB"
    for (k = 1; k <= 10; k++) {
      at = start + span * k / 10
      for (i = 1; i <= NR && t[i] < at; i++) last = rss[i]
      printf "%3d %%    %.1f\n", k * 10, last
    }
    for (i = 1; i <= NR; i++) {
      if (t[i] < start + span / 10) continue
      if (min == "" || rss[i] < min) min = rss[i]
      if (rss[i] > max) max = rss[i]
    }
    printf "warm: min %.1f MB, max %.1f MB, spread %.1f %% of min\n", min, max, (max - min) * 100 / min
  }' "$out/rss.tsv"
