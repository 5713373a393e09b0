#!/usr/bin/env bash
# The slow tier in an object store beside the local slow tier (issue 46;
# server/docs/benchmarks.md, "The slow tier in an object store"): the same
# tables, the same prefixes on a local fast tier, the same replay, with the
# slow tier
#   local       the table directory (its pages in the page cache, as the
#               bucket's are in Garage's)
#   garage      a one-node Garage 2.5 bucket on loopback
#   delayed     the same bucket through `zugzwang-bench delay-proxy`, each
#               answer held back DELAY_MS (a store across a network; this
#               machine's kernel has no netem)
# each also with `--remote-no-keep-alive` (garage-nka, delayed-nka). Every
# configuration starts a fresh server (its caches cold), replays the log
# with CLIENTS clients, then replays it again on the same server (its caches
# warm). After each pass /metrics gives the GETs sent and the slow-tier
# reads made, per request.
#
#   remote-tier.sh OUT_DIR [CONFIG...]   (default: every configuration)
#
# Settings (environment): ZUGZWANG (`zugzwang`, for `tier build`), SERVER
# (started as `SERVER serve`; zugzwang-bench), BENCH (zugzwang-bench),
# GARAGE (garage 2.5), TABLES (the shared 3-4-5 tables), LOG
# (explore-345), CLIENTS (12), MAX_REQUESTS (per pass, 4000), DURATION
# (seconds per pass, 120), DELAY_MS (20), PORT (first of four ports:
# server, Garage RPC, Garage S3, proxy; 3620), NICE (0).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
ZUGZWANG="${ZUGZWANG:-$repo/target/release/zugzwang}"
SERVER="${SERVER:-$repo/target/release/zugzwang-bench}"
BENCH="${BENCH:-$repo/target/release/zugzwang-bench}"
GARAGE="${GARAGE:-$(command -v garage || echo "$HOME/.cargo/bin/garage")}"
TABLES="${TABLES:-$repo/../shared/syzygy/standard}"
LOG="${LOG:-$repo/../shared/workloads/explore-345.txt}"
CLIENTS="${CLIENTS:-12}"
MAX_REQUESTS="${MAX_REQUESTS:-4000}"
DURATION="${DURATION:-120}"
DELAY_MS="${DELAY_MS:-20}"
PORT="${PORT:-3620}"
NICE="${NICE:-0}"
# shellcheck source=lib.sh
. "$here/lib.sh"

[[ $# -ge 1 ]] || {
  sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
out="$1"
shift
configs=("$@")
((${#configs[@]})) || configs=(local garage garage-nka delayed delayed-nka)
for binary in "$ZUGZWANG" "$SERVER" "$BENCH" "$GARAGE"; do
  [[ -x "$binary" ]] || {
    echo "remote-tier: no program at $binary (cargo build --release -p server --bin zugzwang -p bench --bin zugzwang-bench; cargo install garage --version 2.5.0 --locked)" >&2
    exit 2
  }
done
[[ -d "$TABLES" && -f "$LOG" ]] || {
  echo "remote-tier: no tables at $TABLES or no log at $LOG" >&2
  exit 2
}
mkdir -p "$out"
out="$(cd "$out" && pwd)"
work="$(mktemp -d)"
server_port="$PORT" rpc_port="$((PORT + 1))" s3_port="$((PORT + 2))" proxy_port="$((PORT + 3))"
bucket=tables
pids=()
server_pid=""
cleanup() {
  [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

garage() { "$GARAGE" -c "$work/garage.toml" "$@"; }

# A one-node Garage in $work, a bucket, a key that may read and write it.
start_garage() {
  cat >"$work/garage.toml" <<EOF
metadata_dir = "$work/garage/meta"
data_dir = "$work/garage/data"
db_engine = "sqlite"
replication_factor = 1
rpc_bind_addr = "127.0.0.1:$rpc_port"
rpc_public_addr = "127.0.0.1:$rpc_port"
rpc_secret = "$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"

[s3_api]
s3_region = "garage"
api_bind_addr = "127.0.0.1:$s3_port"
root_domain = ".s3.garage.localhost"
EOF
  RUST_LOG=warn "$GARAGE" -c "$work/garage.toml" server 2>"$out/garage.log" >/dev/null &
  pids+=($!)
  for _ in $(seq 300); do garage status >/dev/null 2>&1 && break; sleep 0.1; done
  local id key
  id="$(garage node id -q | cut -d@ -f1)"
  garage layout assign -z dc1 -c 1G "$id" >/dev/null
  garage layout apply --version 1 >/dev/null
  garage bucket create "$bucket" >/dev/null
  key="$(garage key create remote-tier)"
  key_id="$(awk -F': *' '/Key ID:/ { print $2 }' <<<"$key" | tr -d ' ')"
  secret="$(awk -F': *' '/Secret key:/ { print $2 }' <<<"$key" | tr -d ' ')"
  garage bucket allow --read --write --owner "$bucket" --key remote-tier >/dev/null
  export AWS_ACCESS_KEY_ID="$key_id" AWS_SECRET_ACCESS_KEY="$secret" AWS_REGION=garage
}

# Every table into the bucket under standard/ (curl signs the PUTs).
upload() {
  local f name tries
  for f in "$TABLES"/*.rtb[wz]; do
    name="$(basename "$f")"
    for tries in $(seq 20); do
      curl -sf --aws-sigv4 "aws:amz:garage:s3" --user "$key_id:$secret" \
        -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -T "$f" \
        "http://127.0.0.1:$s3_port/$bucket/standard/$name" >/dev/null && break
      ((tries < 20)) || { echo "remote-tier: cannot PUT $name" >&2; exit 1; }
      sleep 0.5 # the layout may take a moment to apply
    done
  done
}

# A counter's sum over its series in the server's /metrics.
metric() { # name [label filter]
  curl -sf "http://127.0.0.1:$server_port/metrics" |
    awk -v name="$1" -v filter="${2:-}" \
      '$1 ~ "^"name"({|$)" && index($1, filter) { n += $2 } END { printf "%d\n", n }'
}

# Replays the log once; appends a row of its figures to $out/remote.tsv.
pass() { # config pass
  local label="$1-$2" gets0 slow0 gets slow reqs
  gets0="$(metric zugzwang_remote_gets_total)"
  slow0="$(metric zugzwang_table_reads_total 'tier="slow"')"
  nice -n "$NICE" "$BENCH" replay --endpoint "http://127.0.0.1:$server_port/standard" \
    --log "$LOG" --clients "$CLIENTS" --max-requests "$MAX_REQUESTS" --duration "$DURATION" \
    --out "$out/$label.tsv" --label "$label" --summary "$out/summary.md" >"$out/$label.txt"
  gets=$(($(metric zugzwang_remote_gets_total) - gets0))
  slow=$(($(metric zugzwang_table_reads_total 'tier="slow"') - slow0))
  reqs=$(($(wc -l <"$out/$label.tsv") - 1)) # less the header line
  awk -v l="$label" -v g="$gets" -v s="$slow" -v n="$reqs" \
    'BEGIN { printf "%s\t%d\t%d\t%d\t%.3f\t%.3f\n", l, n, s, g, s / n, g / n }' >>"$out/remote.tsv"
  tail -1 "$out/remote.tsv" >&2
}

run_config() { # config
  local config="$1" tables fast flags=()
  case "$config" in
    local) tables="$TABLES" fast="$work/fast-local" ;;
    garage | garage-nka)
      tables="s3://$bucket/standard" fast="$work/fast-remote"
      flags=(--s3-endpoint "http://127.0.0.1:$s3_port")
      ;;
    delayed | delayed-nka)
      tables="s3://$bucket/standard" fast="$work/fast-remote"
      flags=(--s3-endpoint "http://127.0.0.1:$proxy_port")
      ;;
    *) echo "remote-tier: unknown configuration $config" >&2; exit 2 ;;
  esac
  [[ "$config" == *-nka ]] && flags+=(--remote-no-keep-alive)
  echo "== $config: serve --tables $tables --fast $fast ${flags[*]}" >&2
  nice -n "$NICE" "$SERVER" serve --bind "127.0.0.1:$server_port" --tables "$tables" \
    --fast "$fast" --cache-mb 0 "${flags[@]}" 2>"$out/$config.server.log" &
  server_pid=$!
  wait_for_port "$server_port" || { echo "server did not start: $out/$config.server.log" >&2; exit 1; }
  pass "$config" cold
  pass "$config" warm
  kill "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}

start_garage
upload
"$BENCH" delay-proxy --listen "127.0.0.1:$proxy_port" --to "127.0.0.1:$s3_port" \
  --delay-ms "$DELAY_MS" 2>"$out/delay-proxy.log" &
pids+=($!)
"$ZUGZWANG" tier build --from "$TABLES" --to "$work/fast-local" >"$out/tier-build.log" 2>&1
"$ZUGZWANG" tier build --from "s3://$bucket/standard" --to "$work/fast-remote" \
  --s3-endpoint "http://127.0.0.1:$s3_port" >>"$out/tier-build.log" 2>&1
printf 'pass\trequests\tslow reads\tGETs\tslow/req\tGETs/req\n' >"$out/remote.tsv"
for config in "${configs[@]}"; do run_config "$config"; done
echo "== replay summaries: $out/summary.md; reads and GETs: $out/remote.tsv" >&2
cat "$out/remote.tsv"
