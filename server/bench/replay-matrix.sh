#!/usr/bin/env bash
# Runs the replay benchmark's experiment table (server/docs/benchmarks.md):
# each configuration starts a fresh server on the emulated slow tier with a
# cold page cache, replays the workload with `zugzwang-bench replay`, and
# stops the server. Needs `slow-tier.sh setup` first (and, for the fast-tier
# runs, `zugzwang tier build --from $STATE_DIR/slow/tables --to $STATE_DIR/fast/prefixes`).
#
#   replay-matrix.sh OUT_DIR CONFIG...
#
# A CONFIG is IO-HINTS-TIER-PROBES, e.g. pread-nohint-fast-par:
#   IO      pread (--read-around 0, as the experiment table was measured)
#           | mmap | raKIB (pread with --read-around KIB; ra128 is serve's default)
#   HINTS   nohint | random      (--advise-random)
#   TIER    slow | fast          (--fast $STATE_DIR/fast/prefixes)
#   PROBES  par | seq            (--sequential-probes)
# or hot-CACHE_MB (e.g. hot-64, hot-0): the default configuration with a warm
# page cache (one unmeasured pass over the log first), response cache of CACHE_MB megabytes.
#
# EVICT=SECONDS additionally evicts the slow tier's tables from the page cache
# every SECONDS during cold runs (slow-tier.sh evict), emulating a table set
# much larger than RAM, as in production.
#
# Settings (environment): ZUGZWANG (the server binary, started as
# `ZUGZWANG serve`: zugzwang-bench by default, for --sequential-probes and
# --read-trace; a zugzwang from before they moved there had them too), BENCH
# (the replay client, zugzwang-bench), LOG (workload), CLIENTS (12),
# WARMUP (requests, 500), DURATION (seconds per run, 180), MAX_REQUESTS
# (20000), CACHE_MB (0: every request reaches the engine), PORT (3100),
# STATE_DIR (as slow-tier.sh), NICE (-10: server and client are favoured over
# unrelated work on the machine, such as builds, so the run measures storage
# rather than CPU contention; 0 to disable), SERVE_ARGS (more serve flags for
# every run, e.g. "--index-cache-mb 0"), READ_TRACE (1: cold runs write
# OUT_DIR/CONFIG.trace.tsv with --read-trace, for read-trace.py).
#
# The slow tier's copy has no recorded checksums (a fast tier has them):
# such tables are refused by default, so every run but mmap
# (which checks nothing and takes no such flag) gets --allow-unchecked
# where ZUGZWANG knows it, and reads as the experiment table was measured.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
ZUGZWANG="${ZUGZWANG:-$repo/target/release/zugzwang-bench}"
BENCH="${BENCH:-$repo/target/release/zugzwang-bench}"
LOG="${LOG:-$repo/../shared/workloads/explore-345.txt}"
CLIENTS="${CLIENTS:-12}"
WARMUP="${WARMUP:-500}"
DURATION="${DURATION:-180}"
MAX_REQUESTS="${MAX_REQUESTS:-20000}"
CACHE_MB="${CACHE_MB:-0}"
PORT="${PORT:-3100}"
STATE_DIR="${STATE_DIR:-/var/tmp/zugzwang-slow-tier}"
NICE="${NICE:--10}"
EVICT="${EVICT:-}"
SERVE_ARGS="${SERVE_ARGS:-}"
READ_TRACE="${READ_TRACE:-}"
CGROUP_DIR="/sys/fs/cgroup/blkio/${CGROUP:-zugzwang-slow-tier}"

[[ $# -ge 2 ]] || {
  sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
out="$1"
shift
mkdir -p "$out"
for binary in "$ZUGZWANG" "$BENCH"; do
  [[ -x "$binary" ]] || {
    echo "replay-matrix: no binary at $binary (cargo build --release -p bench --bin zugzwang-bench)" >&2
    exit 2
  }
done
# The replay client is `zugzwang-bench replay` (BENCH); a zugzwang from
# before the benchmarks left it (`zugzwang bench replay`) does as well.
replay_cmd=("$BENCH" replay)
"$BENCH" replay --help >/dev/null 2>&1 || replay_cmd=("$BENCH" bench replay)

server_pid=""
evict_pid=""
stop_server() {
  if [[ -n "$evict_pid" ]]; then
    kill "$evict_pid" 2>/dev/null || true
    wait "$evict_pid" 2>/dev/null || true
    evict_pid=""
  fi
  if [[ -n "$server_pid" ]]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
}
trap stop_server EXIT

# Reads served so far by the throttled device (the one read_iops_device names).
slow_reads() {
  local dev
  dev="$(awk '{ print $1; exit }' "$CGROUP_DIR/blkio.throttle.read_iops_device")"
  awk -v dev="$dev" '$1 == dev && $2 == "Read" { n += $3 } END { print n + 0 }' \
    "$CGROUP_DIR/blkio.throttle.io_serviced"
}

wait_for_port() {
  for _ in $(seq 300); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then return 0; fi
    kill -0 "$server_pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

replay() {
  local name="$1" warmup="$2"
  nice -n "$NICE" "${replay_cmd[@]}" --endpoint "http://127.0.0.1:$PORT/standard" --log "$LOG" \
    --clients "$CLIENTS" --warmup "$warmup" --max-requests "$MAX_REQUESTS" \
    --duration "$DURATION" --out "$out/$name.tsv" --label "$name" --summary "$out/summary.md"
}

# Binaries before the byte-sized cache count entries instead.
cache_flag=--cache-mb
"$ZUGZWANG" serve --help | grep -q -- --cache-mb || cache_flag=--cache-entries
# Binaries from before checking by default serve unchecked tables without being asked.
unchecked=()
"$ZUGZWANG" serve --help | grep -q -- --allow-unchecked && unchecked=(--allow-unchecked)

for config in "$@"; do
  IFS=- read -r io hints tier probes <<<"$config"
  flags=(serve --bind "127.0.0.1:$PORT" --tables "$STATE_DIR/slow/tables")
  if [[ "$io" == hot ]]; then
    flags+=("$cache_flag" "$hints" "${unchecked[@]}")
    # shellcheck disable=SC2206
    flags+=($SERVE_ARGS)
    echo "== $config: warm pass" >&2
    nice -n "$NICE" "$ZUGZWANG" "${flags[@]}" 2>"$out/$config.server.log" &
    server_pid=$!
    wait_for_port || { echo "server did not start: $out/$config.server.log" >&2; exit 1; }
    DURATION=600 replay "$config.warm" 0 >/dev/null
    echo "== $config: measured pass" >&2
    replay "$config" 0
    stop_server
    continue
  fi
  case "$io" in
    pread) flags+=(--read-around 0 "${unchecked[@]}") ;;
    mmap) flags+=(--mmap) ;;
    ra[0-9]*) flags+=(--read-around "${io#ra}" "${unchecked[@]}") ;;
    *) echo "bad IO in $config" >&2; exit 2 ;;
  esac
  case "$hints" in nohint) ;; random) flags+=(--advise-random) ;; *) echo "bad HINTS in $config" >&2; exit 2 ;; esac
  case "$tier" in slow) ;; fast) flags+=(--fast "$STATE_DIR/fast/prefixes") ;; *) echo "bad TIER in $config" >&2; exit 2 ;; esac
  case "$probes" in par) ;; seq) flags+=(--sequential-probes) ;; *) echo "bad PROBES in $config" >&2; exit 2 ;; esac
  flags+=("$cache_flag" "$CACHE_MB")
  [[ -n "$READ_TRACE" ]] && flags+=(--read-trace "$out/$config.trace.tsv")
  # Word-split on purpose: several flags in one variable.
  # shellcheck disable=SC2206
  flags+=($SERVE_ARGS)
  echo "== $config: ${flags[*]}" >&2
  # The throttle's counters are cumulative (reset_stats leaves them): keep the start.
  reads_before="$(slow_reads)"
  nice -n "$NICE" "$here/slow-tier.sh" run "$ZUGZWANG" "${flags[@]}" 2>"$out/$config.server.log" &
  server_pid=$!
  wait_for_port || { echo "server did not start: $out/$config.server.log" >&2; exit 1; }
  if [[ -n "$EVICT" ]]; then
    "$here/slow-tier.sh" evict "$EVICT" &
    evict_pid=$!
  fi
  replay "$config" "$WARMUP"
  stop_server
  # Reads the throttled (slow) device served this run.
  reads_after="$(slow_reads)"
  printf '%s\t%s\n' "$config" "$((reads_after - reads_before))" >>"$out/reads.tsv"
done
