#!/usr/bin/env bash
# Emulates a slow (HDD-like) table tier with real kernel I/O, for the replay
# benchmark (server/docs/benchmarks.md). It lives in server/bench/ because
# the top level of the repository is fixed.
#
#   slow-tier.sh [--dry-run] setup       make two ext4 file systems on loop devices:
#                                        SLOW (tables copied in; read IOPS capped for
#                                        the benchmark cgroup) and FAST (unthrottled,
#                                        empty: put `zugzwang tier build` output there)
#   slow-tier.sh [--dry-run] run CMD...  drop the page cache, then run CMD inside the
#                                        throttled cgroup (cold start)
#   slow-tier.sh [--dry-run] drop-caches only drop the page cache
#   slow-tier.sh [--dry-run] evict SECONDS  every SECONDS, drop the slow tier's tables
#                                        (only those files) from the page cache, until
#                                        killed: emulates tables much larger than RAM
#   slow-tier.sh [--dry-run] status      what is set up
#   slow-tier.sh [--dry-run] teardown    unmount, detach this script's loop devices,
#                                        remove the cgroup and the images
#
# Settings (environment):
#   TABLES     tables to copy to the slow tier   (default: ../shared/syzygy/standard
#                                                 next to the repository)
#   STATE_DIR  images, mount points, state       (default: /var/tmp/zugzwang-slow-tier)
#   IOPS       read IOPS cap of the slow device  (default: 150, about one HDD)
#   CGROUP     blkio cgroup name                 (default: zugzwang-slow-tier)
#   BLKIO      cgroup v1 blkio mount             (default: /sys/fs/cgroup/blkio)
#   FAST_MB    size of the fast file system      (default: 256)
#   READ_AHEAD_KB  read-ahead of both devices    (default: 128, a SATA disk's
#                                                 default; loop devices start at
#                                                 their own, often much larger)
#
# Needs root, loop devices, mkfs.ext4 and the cgroup v1 blkio controller; it
# says which is missing and exits 2 without touching anything. --dry-run
# prints every command instead of running it and reports missing
# prerequisites as warnings (exit 0), so CI can check the script anywhere.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
TABLES="${TABLES:-$repo/../shared/syzygy/standard}"
STATE_DIR="${STATE_DIR:-/var/tmp/zugzwang-slow-tier}"
IOPS="${IOPS:-150}"
CGROUP="${CGROUP:-zugzwang-slow-tier}"
BLKIO="${BLKIO:-/sys/fs/cgroup/blkio}"
FAST_MB="${FAST_MB:-256}"
READ_AHEAD_KB="${READ_AHEAD_KB:-128}"

dry_run=0
if [[ "${1:-}" == "--dry-run" ]]; then
  dry_run=1
  shift
fi
command="${1:-}"
[[ $# -gt 0 ]] && shift

cg="$BLKIO/$CGROUP"
loops_file="$STATE_DIR/loop-devices"
mounts_file="$STATE_DIR/mounts"

say() { echo "slow-tier: $*" >&2; }
die() {
  say "$*"
  exit 2
}

# Runs a command, or prints it under --dry-run.
run() {
  if ((dry_run)); then
    {
      printf '+'
      printf ' %q' "$@"
      printf '\n'
    } >&2
  else
    "$@"
  fi
}

# Writes a value into a kernel file (cgroup, drop_caches), or prints it.
write_to() {
  local value="$1" file="$2"
  if ((dry_run)); then
    echo "+ echo $value > $file" >&2
  else
    echo "$value" >"$file"
  fi
}

require() {
  local missing=()
  [[ "$(id -u)" == 0 ]] || missing+=("root (run with sudo: loop devices, mounts, cgroups and drop_caches need it)")
  command -v losetup >/dev/null || missing+=("losetup (apt-get install mount)")
  command -v mkfs.ext4 >/dev/null || missing+=("mkfs.ext4 (apt-get install e2fsprogs)")
  [[ -e /dev/loop-control ]] || missing+=("loop devices (/dev/loop-control; modprobe loop, or run the container with loop devices)")
  [[ -f "$BLKIO/blkio.throttle.read_iops_device" ]] ||
    missing+=("the cgroup v1 blkio controller at $BLKIO (mount -t cgroup -o blkio none $BLKIO; cgroup v2-only hosts cannot run this emulation)")
  [[ -w /proc/sys/vm/drop_caches ]] || missing+=("a writable /proc/sys/vm/drop_caches (privileged container)")
  if [[ "$command" == setup ]]; then
    [[ -d "$TABLES" ]] || missing+=("the tables at TABLES=$TABLES")
  fi
  if ((${#missing[@]})); then
    for m in "${missing[@]}"; do
      if ((dry_run)); then say "warning: this machine lacks $m"; else say "missing: $m"; fi
    done
    ((dry_run)) || die "cannot $command the emulated slow tier; nothing was changed"
  fi
}

# Undoes whatever the state files say was set up; safe to run twice.
teardown() {
  if ((dry_run)) && [[ ! -f "$mounts_file" ]]; then
    run umount "$STATE_DIR/fast"
    run umount "$STATE_DIR/slow"
    run losetup -d /dev/loopN
  fi
  if [[ -f "$mounts_file" ]]; then
    while read -r mnt; do
      if ((dry_run)) || mountpoint -q "$mnt"; then run umount "$mnt"; fi
    done < <(tac "$mounts_file")
    run rm -f "$mounts_file"
  fi
  if [[ -f "$loops_file" ]]; then
    # Only the devices this script attached, and only while they still back its images.
    while read -r dev img; do
      if ((dry_run)) || losetup -j "$img" | grep -q "^$dev:"; then run losetup -d "$dev"; fi
    done <"$loops_file"
    run rm -f "$loops_file"
  fi
  if [[ -d "$cg" ]]; then
    if [[ -s "$cg/cgroup.procs" ]]; then
      say "processes still in $cg; moving them back to the root cgroup"
      while read -r pid; do write_to "$pid" "$BLKIO/cgroup.procs" || true; done <"$cg/cgroup.procs"
    fi
    run rmdir "$cg"
  elif ((dry_run)); then
    run rmdir "$cg"
  fi
  run rm -f "$STATE_DIR/slow.img" "$STATE_DIR/fast.img"
  run rmdir --ignore-fail-on-non-empty "$STATE_DIR/slow" "$STATE_DIR/fast"
  say "torn down"
}

# Attaches an image to a free loop device (direct I/O, so the image file's
# own page cache does not hide the throttle) and records it for teardown.
attached=""
attach() {
  local img="$1"
  if ((dry_run)); then
    run losetup --find --show --direct-io=on "$img"
    attached="/dev/loopN"
  else
    attached="$(losetup --find --show --direct-io=on "$img")"
    echo "$attached $img" >>"$loops_file"
  fi
}

make_fs() {
  local name="$1" mb="$2" img dev mnt
  img="$STATE_DIR/$name.img"
  mnt="$STATE_DIR/$name"
  run truncate -s "${mb}M" "$img"
  attach "$img"
  dev="$attached"
  run mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$dev"
  # Read-ahead decides how much each miss brings in (mmap faults read around
  # by the same amount), so it is set like a disk's rather than left to the loop driver.
  write_to "$READ_AHEAD_KB" "/sys/block/${dev#/dev/}/queue/read_ahead_kb"
  run mkdir -p "$mnt"
  run mount "$dev" "$mnt"
  ((dry_run)) || echo "$mnt" >>"$mounts_file"
}

setup() {
  if [[ -f "$loops_file" || -f "$mounts_file" ]]; then
    ((dry_run)) && say "warning: already set up in $STATE_DIR; a real setup would stop here"
    ((dry_run)) || die "already set up in $STATE_DIR (run: $0 teardown)"
  fi
  run mkdir -p "$STATE_DIR"
  # Any failure from here on undoes what was done.
  trap 'say "setup failed; tearing down"; teardown' ERR
  local table_mb=64
  [[ -d "$TABLES" ]] && table_mb=$(($(du -sm "$TABLES" | cut -f1) * 13 / 10 + 64))
  make_fs slow "$table_mb"
  local slow_dev="$attached"
  make_fs fast "$FAST_MB"
  run mkdir -p "$STATE_DIR/slow/tables"
  run cp -r "$TABLES/." "$STATE_DIR/slow/tables/"
  run sync
  run mkdir -p "$cg"
  local majmin="MAJ:MIN"
  ((dry_run)) || majmin="$(lsblk -dno MAJ:MIN "$slow_dev" | tr -d ' ')"
  write_to "$majmin $IOPS" "$cg/blkio.throttle.read_iops_device"
  trap - ERR
  say "slow tier: $STATE_DIR/slow/tables on $slow_dev, read IOPS capped at $IOPS for cgroup $cg, read-ahead ${READ_AHEAD_KB} KiB"
  say "fast tier: $STATE_DIR/fast (unthrottled)"
  say "cold run:  $0 run zugzwang serve --tables $STATE_DIR/slow/tables --allow-unchecked ..."
  say "           (the copy has no recorded checksums: --allow-unchecked, or a fast tier from \`zugzwang tier build\`)"
}

# POSIX_FADV_DONTNEED on each slow-tier table, through dd's nocache flag.
evict_loop() {
  local interval="$1" tables="$STATE_DIR/slow/tables"
  [[ -d "$tables" ]] || ((dry_run)) || die "not set up (run: $0 setup)"
  while :; do
    for f in "$tables"/*; do
      run dd if="$f" iflag=nocache count=0 status=none
    done
    ((dry_run)) && return 0
    sleep "$interval"
  done
}

drop_caches() {
  run sync
  write_to 3 /proc/sys/vm/drop_caches
}

case "$command" in
  setup)
    require
    setup
    ;;
  teardown)
    require
    teardown
    ;;
  drop-caches)
    require
    drop_caches
    ;;
  evict)
    [[ "${1:-}" =~ ^[0-9]+([.][0-9]+)?$ ]] || die "usage: $0 evict SECONDS"
    evict_loop "$1"
    ;;
  run)
    [[ $# -gt 0 ]] || die "usage: $0 run COMMAND [ARGS...]"
    require
    [[ -d "$cg" ]] || ((dry_run)) || die "not set up (run: $0 setup)"
    drop_caches
    write_to $$ "$cg/cgroup.procs"
    if ((dry_run)); then run "$@"; else exec "$@"; fi
    ;;
  status)
    [[ -f "$loops_file" ]] && cat "$loops_file" || say "no loop devices attached"
    [[ -f "$mounts_file" ]] && cat "$mounts_file" || true
    [[ -f "$cg/blkio.throttle.read_iops_device" ]] && cat "$cg/blkio.throttle.read_iops_device" || true
    ;;
  *)
    sed -n '2,35p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
