#!/usr/bin/env bash
# Three Zugzwang replicas behind nginx on this machine: replays a request log
# through nginx, kills one replica (SIGKILL, as a crash) in the middle of the
# run and restarts it, once with consistent hashing and once with round
# robin. Reports the requests that failed (the goal is 0), p99 while the
# replica was down, and the share of requests the replicas' response caches
# answered under each method. Needs no arguments; run from anywhere.
#
# Environment (all optional):
#   ZUGZWANG_BIN   the binary (default: the release build, built if missing)
#   BENCH_BIN      the replay client, zugzwang-bench (default: the release
#                  build, built if missing)
#   LOG            request log (default ../shared/workloads/explore-34.txt,
#                  else the excerpt in server/tests/fixtures)
#   TABLES         table directory for the replicas (default: embedded 3-4);
#                  its tables must be checked first (`zugzwang verify --init
#                  DIR`, with STATE_DIR for read-only tables), else they are
#                  refused
#   STATE_DIR      passed as --state-dir where TABLES' checksums are kept
#   CLIENTS=12     parallel clients of `zugzwang-bench replay`
#   BEFORE=5000    requests replayed before the failure phase
#   DURING=10000   requests of the failure phase: one replica is killed
#                  0.5 s into it and restarted (ready to serve) after it;
#                  the rest of the log is replayed after the restart
#   BASE_PORT=3101 replicas on BASE_PORT..BASE_PORT+2; NGINX_PORT=8081
#   KEEP=1         keep the scratch directory (results, logs) and print it
#
# The last line reads:
#   failover: F failed of N requests, p99 during failure X ms, cache hits hash H % vs round robin R %
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
clients=${CLIENTS:-12}
before=${BEFORE:-5000}
during=${DURING:-10000}
base_port=${BASE_PORT:-3101}
nginx_port=${NGINX_PORT:-8081}
ports=("$base_port" "$((base_port + 1))" "$((base_port + 2))")
victim=1 # index into ports: the replica that is killed

say() { echo "failover.sh: $*" >&2; }

# --- what to run --------------------------------------------------------

find_binary() {
    if [ -n "${ZUGZWANG_BIN:-}" ]; then
        echo "$ZUGZWANG_BIN"
        return
    fi
    local target=${CARGO_TARGET_DIR:-$repo/target}
    if [ ! -x "$target/release/zugzwang" ]; then
        say "building the release binary (cargo build --release -p server --bin zugzwang)"
        (cd "$repo" && cargo build --release -p server --bin zugzwang >&2)
    fi
    echo "$target/release/zugzwang"
}

find_bench() {
    if [ -n "${BENCH_BIN:-}" ]; then
        echo "$BENCH_BIN"
        return
    fi
    local target=${CARGO_TARGET_DIR:-$repo/target}
    if [ ! -x "$target/release/zugzwang-bench" ]; then
        say "building the replay client (cargo build --release -p bench --bin zugzwang-bench)"
        (cd "$repo" && cargo build --release -p bench --bin zugzwang-bench >&2)
    fi
    echo "$target/release/zugzwang-bench"
}

find_log() {
    if [ -n "${LOG:-}" ]; then
        echo "$LOG"
    elif [ -f "$repo/../shared/workloads/explore-34.txt" ]; then
        echo "$repo/../shared/workloads/explore-34.txt"
    else
        echo "$repo/server/tests/fixtures/explore-34.txt"
    fi
}

install_nginx() {
    command -v nginx >/dev/null && return
    say "installing nginx (apt-get install -y nginx)"
    apt-get install -y nginx >&2 || {
        apt-get update >&2 && apt-get install -y nginx >&2
    }
    # The package may start a system nginx on port 80; this script runs its
    # own and leaves nothing behind.
    nginx -s stop 2>/dev/null || true
}

bin=$(find_binary)
bench=$(find_bench)
log=$(find_log)
install_nginx
for binary in "$bin" "$bench"; do
    [ -x "$binary" ] || {
        say "no binary at $binary"
        exit 1
    }
done

# --- processes, all stopped on exit ---------------------------------------

work=$(mktemp -d)
chmod 755 "$work" # nginx workers may run as another user when started as root
declare -A replica_pid=()
nginx_pid=""

stop_pid() {
    local pid=$1
    kill "$pid" 2>/dev/null || return 0
    wait "$pid" 2>/dev/null || true
}

stop_all() {
    [ -n "$nginx_pid" ] && stop_pid "$nginx_pid"
    nginx_pid=""
    local port
    for port in "${!replica_pid[@]}"; do
        stop_pid "${replica_pid[$port]}"
    done
    replica_pid=()
}

cleanup() {
    stop_all
    if [ "${KEEP:-0}" = 1 ]; then
        say "results and logs kept in $work"
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

wait_for() {
    local url=$1 what=$2
    local _
    for _ in $(seq 1 300); do
        curl -fsS -o /dev/null --max-time 1 "$url" 2>/dev/null && return 0
        sleep 0.1
    done
    say "$what did not come up ($url)"
    exit 1
}

start_replica() {
    local port=$1 run=$2
    local args=(serve --bind "127.0.0.1:$port")
    if [ -n "${TABLES:-}" ]; then
        args+=(--tables "$TABLES")
    fi
    if [ -n "${STATE_DIR:-}" ]; then
        args+=(--state-dir "$STATE_DIR")
    fi
    "$bin" "${args[@]}" >>"$work/$run-replica-$port.log" 2>&1 &
    replica_pid[$port]=$!
    wait_for "http://127.0.0.1:$port/metrics" "replica on port $port"
}

start_nginx() {
    local balance=$1 dir="$work/nginx-$1"
    mkdir -p "$dir/tmp" "$dir/site/pkg"
    sed "s|@DIR@|$dir|g" "$here/nginx/standalone.conf.template" >"$dir/nginx.conf"
    local replicas=()
    local port
    for port in "${ports[@]}"; do
        replicas+=("127.0.0.1:$port")
    done
    LISTEN="127.0.0.1:$nginx_port" SITE_ROOT="$dir/site" BALANCE=$balance \
        "$here/nginx/render.sh" "${replicas[@]}" >"$dir/zugzwang.conf"
    nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" -g 'daemon off;' &
    nginx_pid=$!
    wait_for "http://127.0.0.1:$nginx_port/tables" "nginx"
}

# --- figures ----------------------------------------------------------------

# Response-cache counters of a replica: "hits misses coalesced".
cache_counters() {
    curl -fsS --max-time 2 "http://127.0.0.1:$1/metrics" | awk '
        $1 == "zugzwang_response_cache_hits_total" { h = $2 }
        $1 == "zugzwang_response_cache_misses_total" { m = $2 }
        $1 == "zugzwang_response_cache_coalesced_total" { c = $2 }
        END { print h + 0, m + 0, c + 0 }'
}

# Rows of result files (header excluded), failed rows, nearest-rank p99.
rows() { tail -q -n +2 "$@" | wc -l; }
failed() { tail -q -n +2 "$@" | awk -F '\t' '$3 != 200' | wc -l; }
p99() {
    tail -q -n +2 "$@" | cut -f2 | sort -g | awk '
        { ms[NR] = $1 }
        END { if (NR == 0) { print "n/a"; exit } r = int(NR * 0.99); if (r < NR * 0.99) r++; if (r < 1) r = 1; printf "%.1f", ms[r] }'
}

replay() {
    local from=$1 out=$2
    shift 2
    tail -n "+$from" "$log" >"$out.log"
    if [ ! -s "$out.log" ]; then
        printf 'fen\tms\tstatus\tphase\n' >"$out.tsv" # the log ran out: nothing to replay
        return
    fi
    "$bench" replay --endpoint "http://127.0.0.1:$nginx_port/standard" \
        --log "$out.log" --clients "$clients" --timeout 30 --out "$out.tsv" "$@" \
        >"$out.summary" 2>"$out.err" || {
        say "zugzwang-bench replay failed: $(cat "$out.err")"
        exit 1
    }
}

# One whole run: fresh replicas and nginx, the log in three phases (before,
# with one replica killed 0.5 s into the phase and restarted once it ends,
# after its restart). Sets hit_rate: the share of requests the response
# caches spared a probe (answered from the cache, or coalesced with an
# identical request in flight), in percent, and cache_counts. (Globals, not
# printed for a $(...): a subshell would hide its processes from the
# cleanup.)
hit_rate=""
declare -A down_for=() cache_counts=()
run() {
    local balance=$1
    local out="$work/$balance"
    local port
    for port in "${ports[@]}"; do
        start_replica "$port" "$balance"
    done
    start_nginx "$balance"

    replay 1 "$out-before" --max-requests "$before"
    local sent
    sent=$(rows "$out-before.tsv")

    local victim_port=${ports[$victim]}
    replay "$((sent + 1))" "$out-failure" --max-requests "$during" &
    local replay_pid=$!
    sleep 0.5
    local lost line killed
    lost=$(cache_counters "$victim_port")
    killed=$EPOCHREALTIME
    kill -KILL "${replica_pid[$victim_port]}"
    wait "${replica_pid[$victim_port]}" 2>/dev/null || true
    wait "$replay_pid"
    start_replica "$victim_port" "$balance"
    down_for[$balance]=$(awk -v a="$killed" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    sent=$((sent + $(rows "$out-failure.tsv")))

    replay "$((sent + 1))" "$out-after"

    # The killed replica's counts up to the kill, and everyone's now.
    local counts=("$lost") hits=0 misses=0 coalesced=0 h m c
    for port in "${ports[@]}"; do
        counts+=("$(cache_counters "$port")")
    done
    for line in "${counts[@]}"; do
        read -r h m c <<<"$line"
        hits=$((hits + h))
        misses=$((misses + m))
        coalesced=$((coalesced + c))
    done
    stop_all
    cache_counts[$balance]="$hits from the cache, $coalesced coalesced, $misses computed"
    hit_rate=$(awk -v s="$((hits + coalesced))" -v t="$((hits + misses + coalesced))" \
        'BEGIN { printf "%.1f", t ? 100 * s / t : 0 }')
}

say "binary $bin, log $log ($(wc -l <"$log") lines), $clients clients"
started=$SECONDS
run hash
hash_hits=$hit_rate
run round_robin
rr_hits=$hit_rate

for balance in hash round_robin; do
    out="$work/$balance"
    echo "$balance: before $(rows "$out-before.tsv") requests p99 $(p99 "$out-before.tsv") ms;" \
        "failure (replica down ${down_for[$balance]} s): $(rows "$out-failure.tsv") requests p99 $(p99 "$out-failure.tsv") ms;" \
        "after restart $(rows "$out-after.tsv") requests p99 $(p99 "$out-after.tsv") ms;" \
        "failed $(failed "$out"-*.tsv); ${cache_counts[$balance]}"
done
echo "took $((SECONDS - started)) s"
out="$work/hash"
echo "failover: $(failed "$out"-*.tsv) failed of $(rows "$out"-*.tsv) requests, p99 during failure $(p99 "$out-failure.tsv") ms, cache hits hash $hash_hits % vs round robin $rr_hits %"
