#!/usr/bin/env python3
"""How many rows of each move list a keyed list could keep from the list
before it, along random walks from the click benchmark's start positions
(server/docs/benchmarks.md, "What the leftovers were worth"). A row is kept
when the list before had the same move with the same result.

    python3 end2end/bench/rows-kept.py http://127.0.0.1:3000   # needs python-chess
"""
import json
import random
import sys
import urllib.parse
import urllib.request

import chess

STARTS = [
    "4k3/8/8/8/8/8/8/4K2R w - - 0 1",
    "8/8/3k4/8/8/3K4/3P4/8 w - - 0 1",
    "8/8/8/4k3/8/8/8/1NB1K3 w - - 0 1",
    "8/8/8/3k4/8/8/2Q5/4K3 w - - 0 1",
]
STEPS = 50


def answer(base, fen):
    with urllib.request.urlopen(f"{base}/standard?fen={urllib.parse.quote(fen)}") as response:
        return json.load(response)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    base = sys.argv[1].rstrip("/")
    random.seed(1)
    kept = total = 0
    for start in STARTS:
        board = chess.Board(start)
        before = None
        for _ in range(STEPS):
            moves = answer(base, board.fen())["moves"]
            rows = {(m["uci"], m["category"], m.get("dtz")) for m in moves}
            if before is not None:
                kept += len(rows & before)
                total += len(rows)
            before = rows
            if not moves:
                break
            board.push(chess.Move.from_uci(random.choice(moves)["uci"]))
            if board.is_game_over():
                break
    print(f"rows kept from the list before: {kept} of {total}")


if __name__ == "__main__":
    main()
