# shellcheck shell=bash
# What the side-by-side benchmark scripts share (memory-ab.sh, hot-ab.sh,
# practice-load.sh): the configurations on their command line, waiting for
# a server, its CPU time. Sourced, not run.

# Waits up to 30 s until something listens on 127.0.0.1:PORT.
wait_for_port() { # port
  for _ in $(seq 300); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# User and system CPU of a process so far, in clock ticks (getconf CLK_TCK).
cpu_ticks() { # pid
  awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# Runs `run ROUND LABEL BINARY FLAGS` for each LABEL=BINARY[:FLAGS] given,
# ROUNDS times, the configurations alternating within each round so the
# machine's drifting load hits them alike.
each_config() { # rounds config...
  local rounds="$1" round config spec
  shift
  for round in $(seq "$rounds"); do
    for config in "$@"; do
      spec="${config#*=}"
      if [[ "$spec" == *:* ]]; then
        run "$round" "${config%%=*}" "${spec%%:*}" "${spec#*:}"
      else
        run "$round" "${config%%=*}" "$spec" ""
      fi
    done
  done
}
