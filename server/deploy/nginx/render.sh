#!/usr/bin/env bash
# Writes the nginx configuration for Zugzwang replicas to stdout, from
# zugzwang.conf.template beside this script.
#
#   render.sh HOST:PORT...                 replicas, in any order
#   LISTEN=80                              address nginx listens on
#   SITE_ROOT=/usr/local/share/zugzwang/site   the page's assets (holds pkg/)
#   BALANCE=hash | least_conn | round_robin    (default hash, see the template)
#   MAX_FAILS=3 FAIL_TIMEOUT=2s            passive health check
#   BROTLI_STATIC=1                        send the bundle's .br files (written by
#                                          `zugzwang bundle compress`); needs
#                                          nginx's brotli module
#   PREFER_COMPLETE=1                      ask each replica's /metrics how many
#                                          tables it has installed and keep
#                                          those with fewer than the most out
#                                          (down with hash, backup otherwise)
#   METRICS_PORT=9300                      where the replicas serve /metrics
#                                          (`serve --metrics-bind HOST:9300`),
#                                          on their own hosts; default: the
#                                          replica's address
#
# Example: LISTEN=80 render.sh 10.0.0.1:3000 10.0.0.2:3000 > /etc/nginx/conf.d/zugzwang.conf
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
listen=${LISTEN:-80}
site_root=${SITE_ROOT:-/usr/local/share/zugzwang/site}
balance=${BALANCE:-hash}
max_fails=${MAX_FAILS:-3}
fail_timeout=${FAIL_TIMEOUT:-2s}
prefer_complete=${PREFER_COMPLETE:-0}
metrics_port=${METRICS_PORT:-}
if [ "${BROTLI_STATIC:-0}" = 1 ]; then
    brotli_line='brotli_static on;'
else
    brotli_line='# brotli_static on; (BROTLI_STATIC=1, with the brotli module)'
fi

if [ "$#" -eq 0 ]; then
    echo "usage: render.sh HOST:PORT... (see the comment at the top)" >&2
    exit 2
fi

# shellcheck disable=SC2016 # nginx variables, written as they are
case "$balance" in
    hash) balance_line='hash $zugzwang_position consistent;' ;;
    least_conn) balance_line='least_conn;' ;;
    round_robin) balance_line='# round robin (the default method)' ;;
    *)
        echo "BALANCE must be hash, least_conn or round_robin, not $balance" >&2
        exit 2
        ;;
esac

# Tables installed on a replica, all variants together (the samples of
# zugzwang_tables_installed{variant="..."}, or the unlabelled one of older
# servers), or nothing if it does not answer: an unreachable replica is
# left to the health checks.
installed_tables() {
    local at=$1
    if [ -n "$metrics_port" ]; then
        at="${1%:*}:$metrics_port"
    fi
    curl -fsS --max-time 2 "http://$at/metrics" 2>/dev/null |
        awk '$1 ~ /^zugzwang_tables_installed($|\{)/ { sum += $2; seen = 1 }
             END { if (seen) print sum }' || true
}

declare -A installed=()
most=0
if [ "$prefer_complete" = 1 ]; then
    for replica in "$@"; do
        count=$(installed_tables "$replica")
        installed[$replica]=${count:-}
        if [ -n "$count" ] && [ "$count" -gt "$most" ]; then
            most=$count
        fi
    done
fi

servers=""
for replica in "$@"; do
    line="    server $replica max_fails=$max_fails fail_timeout=$fail_timeout"
    count=${installed[$replica]:-}
    if [ -n "$count" ] && [ "$count" -lt "$most" ]; then
        # hash forbids backup servers: an incomplete replica is left out.
        if [ "$balance" = hash ]; then
            line="$line down; # incomplete: $count of $most tables"
        else
            line="$line backup; # incomplete: $count of $most tables"
        fi
    else
        line="$line;"
    fi
    servers+="$line"$'\n'
done

template=$(<"$here/zugzwang.conf.template")
template=${template//@BALANCE@/$balance_line}
template=${template//@SERVERS@/${servers%$'\n'}}
template=${template//@LISTEN@/$listen}
template=${template//@SITE_ROOT@/$site_root}
template=${template//@BROTLI_STATIC@/$brotli_line}
printf '%s\n' "$template"
