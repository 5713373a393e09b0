#!/usr/bin/env python3
"""Where the disk reads go: summarises a `zugzwang-bench serve --read-trace FILE`.

    read-trace.py TRACE [--warmup N] [--device-reads N] [--tables K]

Each trace line is one table read the page cache could not serve (it waited
for the disk); `#tick` lines count requests and lookups every second. The
first --warmup requests (default 500, as replay-matrix.sh) are left out.
Prints Markdown tables:

- by kind of read (header, DTZ map, sparse index, block lengths, data):
  disk reads per request and per lookup;
- by table: the tables with most disk reads, index against data;
- repeats: whether the window read had been read from the disk before, by
  the same request or another, while that read was still in flight (the
  kernel then waits for it rather than reading again) or after it (the
  bytes were dropped from the page cache in between);
- per lookup: how many lookups needed 1, 2, 3 or more disk reads.

A read that waited for another probe's read of the same window
(`joined`, store::single_flight) is listed under repeats but is not a disk
read of its own anywhere else.

--device-reads is the count the throttled device served in the run (the
second column of replay-matrix.sh's reads.tsv), to set beside the trace's.
"""

import argparse
import collections
import sys

INDEX_KINDS = ("header", "dtz_map", "sparse_index", "block_lengths")
KINDS = INDEX_KINDS + ("data",)


def parse(path):
    reads, ticks = [], []
    with open(path) as f:
        header = f.readline().rstrip("\n").split("\t")
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if fields[0] == "#tick":
                t, requests, lookups, total, dropped = fields[1:6]
                ticks.append((float(t), int(requests), int(lookups), int(total), int(dropped)))
                continue
            row = dict(zip(header, fields))
            reads.append(
                {
                    "t": float(row["t_ms"]),
                    "ms": float(row["ms"]),
                    "request": int(row["request"]),
                    "lookup": int(row["lookup"]),
                    "table": row["table"],
                    "kind": row["kind"],
                    "window": int(row["window_start"]),
                    # Older traces have no such column: every read was made.
                    "joined": row.get("joined", "0") == "1",
                }
            )
    reads.sort(key=lambda r: r["t"])
    return reads, ticks


JOINED = "waited for another probe's read of it (single flight)"


def classify(reads):
    """For each read, how it relates to the last disk read of its window."""
    last = {}
    for r in reads:
        key = (r["table"], r["window"])
        prev = last.get(key)
        if r["joined"]:
            r["repeat"] = JOINED
            continue
        if prev is None:
            r["repeat"] = "first read of the window"
        else:
            same = "same request" if prev["request"] == r["request"] and r["request"] else "another request"
            in_flight = r["t"] < prev["t"] + prev["ms"]
            if in_flight:
                r["repeat"] = f"{same}, while the earlier read was in flight"
            else:
                age = r["t"] - (prev["t"] + prev["ms"])
                when = "within 1 s" if age < 1000 else "1 s or more"
                r["repeat"] = f"{same}, {when} after the earlier read"
        last[key] = r


def measured_span(ticks, warmup):
    """Requests and lookups after the warm-up, from the ticks."""
    if not ticks:
        return None, None
    start = next((t for t in ticks if t[1] >= warmup), ticks[0])
    end = ticks[-1]
    return end[1] - max(warmup, 0), end[2] - start[2]


def pct(n, d):
    return f"{100 * n / d:.1f} %" if d else "n/a"


def per(n, d, scale=1):
    return f"{scale * n / d:.2f}" if d else "n/a"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--warmup", type=int, default=500)
    ap.add_argument("--device-reads", type=int)
    ap.add_argument("--tables", type=int, default=12, help="tables listed (most disk reads first)")
    args = ap.parse_args()

    reads, ticks = parse(args.trace)
    classify(reads)
    waited = [r for r in reads if r["request"] > args.warmup]
    measured = [r for r in waited if not r["joined"]]
    requests, lookups = measured_span(ticks, args.warmup)
    total = len(measured)
    dropped = ticks[-1][4] if ticks else 0

    print(f"trace: {args.trace}")
    print(
        f"measured requests: {requests}, lookups: {lookups}, disk reads: {total}"
        f" ({per(total, requests)} per request, {per(total, lookups, 1000)} per 1000 lookups)"
    )
    if dropped:
        print(f"warning: {dropped} trace lines were dropped; the figures undercount")
    joined = len(waited) - total
    if joined:
        print(f"reads that waited for another probe's read instead of making one: {joined}")
    if args.device_reads is not None:
        everything = sum(1 for r in reads if not r["joined"])
        print(
            f"device reads in the run: {args.device_reads}; disk reads traced in the run"
            f" (warm-up included): {everything}"
        )
    print()

    by_kind = collections.Counter(r["kind"] for r in measured)
    ms_kind = collections.defaultdict(float)
    for r in measured:
        ms_kind[r["kind"]] += r["ms"]
    print("| kind of read | disk reads | share | per request | per 1000 lookups | mean wait ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for kind in KINDS:
        n = by_kind[kind]
        mean = f"{ms_kind[kind] / n:.0f}" if n else "-"
        print(f"| {kind} | {n} | {pct(n, total)} | {per(n, requests)} | {per(n, lookups, 1000)} | {mean} |")
    index = sum(by_kind[k] for k in INDEX_KINDS)
    print(f"| **index (all but data)** | {index} | {pct(index, total)} | {per(index, requests)} | {per(index, lookups, 1000)} | |")
    print()

    by_table = collections.defaultdict(collections.Counter)
    for r in measured:
        by_table[r["table"]]["index" if r["kind"] in INDEX_KINDS else "data"] += 1
    ranked = sorted(by_table.items(), key=lambda kv: -sum(kv[1].values()))
    print(f"| table | disk reads | share | index | data |")
    print("|---|---:|---:|---:|---:|")
    for table, counts in ranked[: args.tables]:
        n = sum(counts.values())
        print(f"| {table} | {n} | {pct(n, total)} | {counts['index']} | {counts['data']} |")
    rest = ranked[args.tables :]
    if rest:
        n = sum(sum(c.values()) for _, c in rest)
        print(f"| {len(rest)} other tables | {n} | {pct(n, total)} | | |")
    print()

    by_repeat = collections.Counter(r["repeat"] for r in waited)
    by_repeat_kind = collections.defaultdict(collections.Counter)
    for r in waited:
        by_repeat_kind[r["repeat"]]["index" if r["kind"] in INDEX_KINDS else "data"] += 1
    print("| the window was | reads that waited | share | index | data |")
    print("|---|---:|---:|---:|---:|")
    for repeat, n in by_repeat.most_common():
        c = by_repeat_kind[repeat]
        print(f"| {repeat} | {n} | {pct(n, len(waited))} | {c['index']} | {c['data']} |")
    print()

    per_lookup = collections.Counter(r["lookup"] for r in measured if r["lookup"])
    histogram = collections.Counter(min(n, 4) for n in per_lookup.values())
    with_reads = len(per_lookup)
    print("| disk reads in one lookup | lookups | share of lookups with any |")
    print("|---|---:|---:|")
    for n in (1, 2, 3, 4):
        label = "4 or more" if n == 4 else str(n)
        print(f"| {label} | {histogram[n]} | {pct(histogram[n], with_reads)} |")
    print(f"| lookups with no disk read | {lookups - with_reads if lookups else 'n/a'} | |")


if __name__ == "__main__":
    sys.exit(main())
