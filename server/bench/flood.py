#!/usr/bin/env python3
"""A flood of stalled half-requests against a running server, and how long
normal requests take meanwhile (issue 27).

Opens STALLED connections that each send half a request head and then
nothing, either all at once before the normal requests (--over 0) or evenly
over --over seconds while they run; then sends --requests normal requests
one after another (every --every seconds, or back to back), each on a fresh
connection, and prints each one's time from connect to the end of the
answer. With --wait-closed, it then waits that long for the server to close
every stalled socket and says how many it closed.

Run the server under the open-files limit to test, e.g.
  prlimit --nofile=512 target/release/zugzwang serve --bind 127.0.0.1:3271
  server/bench/flood.py --addr 127.0.0.1:3271 --stalled 700
"""

import argparse
import resource
import select
import socket
import statistics
import sys
import threading
import time

FEN = "4k3/8/8/8/8/8/8/3QK3_w_-_-_0_1"


def half_request(host, port):
    sock = socket.create_connection((host, port))
    sock.sendall(b"GET /standard HTTP/1.1\r\nHost: flood\r\n")
    return sock


def timed_get(host, port, timeout):
    started = time.monotonic()
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(
            f"GET /standard?fen={FEN} HTTP/1.1\r\nHost: flood\r\nConnection: close\r\n\r\n".encode()
        )
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    took = time.monotonic() - started
    status = answer.split(b" ", 2)[1].decode() if answer.startswith(b"HTTP/") else "none"
    return took, status


def flood(host, port, count, over, out):
    """Opens `count` stalled connections evenly over `over` seconds (at once if 0)."""
    began = time.monotonic()
    for i in range(count):
        if over > 0:
            time.sleep(max(0.0, began + over * i / count - time.monotonic()))
        out.append(half_request(host, port))


def count_closed(sockets, within):
    """How many of `sockets` the server closes (EOF or reset) within `within` seconds."""
    deadline = time.monotonic() + within
    open_ = {s.fileno(): s for s in sockets}
    closed = 0
    poller = select.poll()
    for fd in open_:
        poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    while open_ and time.monotonic() < deadline:
        for fd, _ in poller.poll(max(1, int((deadline - time.monotonic()) * 1000))):
            sock = open_.get(fd)
            if sock is None:
                continue
            try:
                data = sock.recv(4096)
            except ConnectionResetError:
                data = b""
            if not data:
                poller.unregister(fd)
                del open_[fd]
                closed += 1
    return closed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--addr", default="127.0.0.1:3271", help="HOST:PORT of the server")
    parser.add_argument("--stalled", type=int, default=700, help="stalled connections to open")
    parser.add_argument("--over", type=float, default=0.0,
                        help="open them over this many seconds while the requests run (0: all first)")
    parser.add_argument("--requests", type=int, default=20, help="normal requests, one after another")
    parser.add_argument("--every", type=float, default=0.0,
                        help="seconds between the starts of normal requests (0: back to back)")
    parser.add_argument("--timeout", type=float, default=30.0, help="give up on a request after this")
    parser.add_argument("--wait-closed", type=float, default=0.0,
                        help="then wait this long for the server to close the stalled sockets")
    parser.add_argument("--label", default="", help="printed first on the summary line")
    args = parser.parse_args()
    host, port = args.addr.rsplit(":", 1)
    port = int(port)

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = args.stalled + 64
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))

    stalled = []
    if args.over > 0:
        flooder = threading.Thread(target=flood, args=(host, port, args.stalled, args.over, stalled))
        flooder.start()
        time.sleep(min(0.25, args.over / 4))
    else:
        flood(host, port, args.stalled, 0, stalled)
        flooder = None

    times, statuses = [], []
    began = time.monotonic()
    for i in range(args.requests):
        if args.every > 0:
            time.sleep(max(0.0, began + args.every * i - time.monotonic()))
        took, status = timed_get(host, port, args.timeout)
        times.append(took * 1000)
        statuses.append(status)
    if flooder:
        flooder.join()
    flood_ended = time.monotonic()

    ordered = sorted(times)
    bad = sum(1 for s in statuses if s != "200")
    print(
        f"{args.label + ': ' if args.label else ''}{args.stalled} stalled"
        f"{f' over {args.over:g} s' if args.over else ' first'}, {args.requests} requests: "
        f"median {statistics.median(times):.1f} ms, p90 {ordered[int(0.9 * (len(ordered) - 1))]:.1f} ms, "
        f"max {ordered[-1]:.1f} ms, not 200: {bad}"
    )
    print("  each (ms): " + " ".join(f"{t:.0f}" for t in times))
    if args.wait_closed > 0:
        left = args.wait_closed - (time.monotonic() - flood_ended)
        closed = count_closed(stalled, max(0.0, left))
        print(f"  stalled sockets closed by the server within {args.wait_closed:g} s: {closed} of {len(stalled)}")
    for sock in stalled:
        sock.close()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
