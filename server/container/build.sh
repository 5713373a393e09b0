#!/usr/bin/env bash
# Builds the Zugzwang container image from this checkout: the server and the
# page (release, --split) on `scratch`, with the shared libraries the binary
# links (glibc's loader, libc, libm, libgcc_s) and nothing else: no shell, no
# package manager. See server/docs/operations.md, "Running in a container".
#
#   server/container/build.sh                 builds, then tags zugzwang:VERSION
#                                             and zugzwang:latest
#   IMAGE=zugzwang:test server/container/build.sh    another tag instead
#
#   ZUGZWANG_BIN=target/release/zugzwang ZUGZWANG_SITE=target/site
#                        package these instead of running `cargo leptos build
#                        --release --split` (CI: the end-to-end step built them)
#   CONTAINER_TOOL=docker                  docker instead of podman
#   BUILD_FLAGS="--isolation chroot"       more words for `podman build`
#   CONTEXT_DIR=DIR                        keep the build context there (it is
#                                          otherwise a temporary directory,
#                                          removed afterwards)
#
# The build context is a small directory this script assembles, never the
# checkout (whose target/ holds gigabytes): build.sh is the way to build,
# not `podman build server/container`.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"

tool=${CONTAINER_TOOL:-podman}
# The user the server runs as: no name needed, nothing else in the image
# runs (65532 is what distroless images call nonroot).
uid=65532
site_dir=/usr/local/share/zugzwang/site

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
revision=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
    revision="$revision-modified"
fi
image=${IMAGE:-}

if [ -z "${ZUGZWANG_BIN:-}" ]; then
    # The release binary and the page, as .ci/serve builds them.
    cargo leptos build --release --split
    target=${CARGO_TARGET_DIR:-target}
    bin=$target/release/zugzwang
    site=$target/site
else
    bin=$ZUGZWANG_BIN
    site=${ZUGZWANG_SITE:?ZUGZWANG_SITE names the site built with the binary (target/site)}
fi
for needed in "$bin" "$site/pkg" "$site/hash.txt"; do
    if [ ! -e "$needed" ]; then
        echo "build.sh: $needed is missing: build with \`cargo leptos build --release --split\`" >&2
        exit 1
    fi
done

if [ -n "${CONTEXT_DIR:-}" ]; then
    context=$CONTEXT_DIR
    rm -rf "$context"
    mkdir -p "$context"
else
    context=$(mktemp -d "${TMPDIR:-/tmp}/zugzwang-image.XXXXXX")
    trap 'rm -rf "$context"' EXIT
fi
rootfs=$context/rootfs
mkdir -p "$rootfs/usr/local/bin" "$rootfs/etc/ssl/certs" "$(dirname "$rootfs$site_dir")" \
    "$rootfs/tables" "$rootfs/tables-fast" "$rootfs/dtm" "$rootfs/tmp" "$context/state"
chmod 1777 "$rootfs/tmp"

# The binary without its symbol table: a fifth of its size (the tables it
# embeds are most of the rest). Panics still name the file and line.
if command -v strip >/dev/null; then
    strip -o "$rootfs/usr/local/bin/zugzwang" "$bin"
else
    cp "$bin" "$rootfs/usr/local/bin/zugzwang"
fi
cp -r "$site" "$rootfs$site_dir"
# The page's files only: nothing a development build left beside them.
find "$rootfs$site_dir" -name '*.tmp' -delete
# The bundle compressed once, here: the container takes these copies
# instead of compressing at each start (~45 MiB of peak RSS).
"$bin" bundle compress --site "$rootfs$site_dir" >&2

# The libraries the binary loads, and the loader, at the paths the binary
# names (ldd prints "name => /path (addr)" and the loader's own line). They
# come from the machine that built the binary, so they match it.
ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
    while read -r lib; do
        mkdir -p "$rootfs$(dirname "$lib")"
        cp -L "$lib" "$rootfs$lib"
    done

# Names for the user (logs, `ps` in the host), and hostname lookups from
# /etc/hosts then DNS for `tables fetch` (glibc has both built in); CA
# certificates for its https mirrors.
printf 'root:x:0:0:root:/root:/nonexistent\nzugzwang:x:%s:%s:zugzwang:/state:/nonexistent\n' "$uid" "$uid" \
    >"$rootfs/etc/passwd"
printf 'root:x:0:\nzugzwang:x:%s:\n' "$uid" >"$rootfs/etc/group"
printf 'hosts: files dns\n' >"$rootfs/etc/nsswitch.conf"
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
    cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/"
else
    echo "build.sh: no /etc/ssl/certs/ca-certificates.crt here: \`tables fetch\` from an https mirror will fail in the image" >&2
fi

cp "$here/Containerfile" "$context/Containerfile"

tags=()
if [ -n "$image" ]; then
    tags+=(--tag "$image")
else
    tags+=(--tag "zugzwang:$version" --tag "zugzwang:latest")
fi
format=()
if [ "$tool" = podman ]; then
    # OCI images have no HEALTHCHECK; Docker's format keeps it. No
    # intermediate images kept: every build's context is new anyway.
    format=(--format docker --layers=false)
fi
# shellcheck disable=SC2086 # BUILD_FLAGS are separate words
"$tool" build ${BUILD_FLAGS:-} "${format[@]}" "${tags[@]}" \
    --build-arg "VERSION=$version" \
    --build-arg "REVISION=$revision" \
    --build-arg "CREATED=$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    "$context"
