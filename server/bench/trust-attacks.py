"""Trust by default, attacked as an operator would (issue 38): N random
KQBvKR positions against `zugzwang serve` on a copy of the shared 3-4-5
tables whose KQBvKR.rtbz has one byte flipped every 4 KiB, each answer
compared with the same position on the pristine tables. Prints, per setup,
right and wrong 200s, errors, and bodies that show a directory.

    pip install chess
    python3 server/bench/trust-attacks.py [N] [ZUGZWANG] [SHARED_TABLES] [SCRATCH]

Defaults: 2000 positions, target/release/zugzwang, ../shared/syzygy/standard,
/var/tmp/zugzwang-attacks. Ports 3301-3306 must be free."""
import os, random, shutil, subprocess, sys, time, urllib.request

import chess

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
ZZ = sys.argv[2] if len(sys.argv) > 2 else os.path.join(REPO, "target/release/zugzwang")
SHARED = sys.argv[3] if len(sys.argv) > 3 else os.path.join(REPO, "../shared/syzygy/standard")
SCRATCH = sys.argv[4] if len(sys.argv) > 4 else "/var/tmp/zugzwang-attacks"
random.seed(7)

def positions(n):
    out = []
    while len(out) < n:
        b = chess.Board(None)
        sq = random.sample(range(64), 5)
        for s, p in zip(sq, "KQBkr"):
            b.set_piece_at(s, chess.Piece.from_symbol(p))
        b.turn = random.choice([True, False])
        if b.is_valid():
            out.append(b.fen().replace(" ", "_"))
    return out

def serve(args, port):
    p = subprocess.Popen([ZZ, "serve", "--bind", f"127.0.0.1:{port}"] + args,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/tables", timeout=1)
            return p
        except Exception:
            time.sleep(0.1)
    raise SystemExit("no server")

def get(port, fen):
    try:
        r = urllib.request.urlopen(f"http://127.0.0.1:{port}/standard?fen={fen}", timeout=120)
        return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()

def count(label, args, port, fens, truth, dirs):
    p = serve(args, port)
    ok = wrong = err = 0
    leaks = 0
    for fen, right in zip(fens, truth):
        status, body = get(port, fen)
        if any(d in body for d in dirs): leaks += 1
        if status == 200:
            if body == right: ok += 1
            else: wrong += 1
        else: err += 1
    p.terminate(); p.wait()
    print(f"{label}: {ok} right 200s, {wrong} wrong 200s, {err} errors, {leaks} bodies with a path")

def flip(path):
    st = os.stat(path)
    data = bytearray(open(path, "rb").read())
    for i in range(100, len(data), 4096): data[i] ^= 0x5a
    open(path, "wb").write(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))

n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
fens = positions(n)
scratch = os.path.join(SCRATCH, "tables"); state = os.path.join(SCRATCH, "state")
shutil.rmtree(scratch, ignore_errors=True); shutil.rmtree(state, ignore_errors=True)
shutil.copytree(SHARED, scratch)
p = serve(["--tables", SHARED, "--allow-unchecked", "--state-dir", state + "-pristine"], 3301)
truth = [get(3301, f)[1] for f in fens]
p.terminate(); p.wait()
flip(f"{scratch}/KQBvKR.rtbz")
dirs = [scratch, state]
count("flipped, no manifest, default flags", ["--tables", scratch, "--state-dir", state], 3302, fens, truth, dirs)
count("flipped, no manifest, --allow-unchecked (the old default)", ["--tables", scratch, "--state-dir", state, "--allow-unchecked"], 3303, fens, truth, dirs)
r = subprocess.run([ZZ, "verify", "--init", scratch, "--state-dir", state], capture_output=True, text=True)
print("verify --init exit", r.returncode, [l for l in r.stdout.splitlines() if "KQBvKR" in l][:2])
count("after the failed verify --init, --allow-unchecked", ["--tables", scratch, "--state-dir", state, "--allow-unchecked"], 3304, fens, truth, dirs)
# damage after a good verify --init
shutil.rmtree(scratch); shutil.copytree(SHARED, scratch); shutil.rmtree(state, ignore_errors=True)
r = subprocess.run([ZZ, "verify", "--init", scratch, "--state-dir", state], capture_output=True, text=True)
print("good verify --init exit", r.returncode)
flip(f"{scratch}/KQBvKR.rtbz")
count("damage after a good verify --init", ["--tables", scratch, "--state-dir", state], 3305, fens, truth, dirs)
count("the same, restarted", ["--tables", scratch, "--state-dir", state], 3306, fens, truth, dirs)
