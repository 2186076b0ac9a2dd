#!/usr/bin/python3
"""The checks of tests/runtime/python.sh: python3 tests/runtime/checks/python.py NAME ARGS...
(lib.sh's check). One function a check, named after its test."""
from common import *  # noqa: F401,F403
from offcpu import offcpu_measured  # noqa: F401 (python.sh checks it too)

# a Python frame: "name (file:line)", the file a path or, for the
# modules frozen into the interpreter (its start-up's imports), "<frozen
# importlib._bootstrap>"
PYFRAME = re.compile(r"^(.+) \((<frozen [^>]+>|.+\.py):(\d+)\)$")


def python_frames(argv):
    """argv: folded stacks of a python3.11 run; the Python frames the
    samples running the script must end with ("name:line;..." root first,
    a line may be a range "12-13"); the least share of them that must.
    Samples running the script: through PyEval_EvalCode (not start-up
    nor shutdown) or in a thread's bootstrap."""
    want = []
    for part in argv[2].split(";"):
        name, _, lines = part.rpartition(":")
        lo, _, hi = lines.partition("-")
        want.append((name, int(lo), int(hi or lo)))
    share, no_py_share = float(argv[3]), float(argv[4])
    # stacks pmtrace said ended early for tables still being read
    pending = int(argv[5]) if len(argv) > 5 else 0
    running = ok = no_py = 0
    seen = collections.Counter()
    for line in open(argv[1], errors="replace"):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        frames = stack.split(";")
        if "PyEval_EvalCode" not in frames and not any(f.startswith("Thread._bootstrap ") for f in frames):
            continue
        matches = [m for m in map(PYFRAME.match, frames) if m]
        py = [(m.group(1), int(m.group(3))) for m in matches]
        # the script's own work: not its imports (line 6), nor start-up
        # before the interpreter's tables are read (no Python frames: an
        # upper bound for those below)
        if not py:
            no_py += int(count)
        if not any(m.group(2).endswith("pyframes.py") and m.group(3) != "6" for m in matches):
            continue
        running += int(count)
        tail = py[-len(want):]
        if len(tail) == len(want) and all(n == w[0] and w[1] <= ln <= w[2] for (n, ln), w in zip(tail, want)):
            ok += int(count)
        else:
            seen[";".join(f"{n}:{ln}" for n, ln in py[-len(want):])] += int(count)
    assert running >= 50, f"{running} samples running the script"
    assert ok >= share * running, (f"{ok} of {running} samples end {argv[2]}", seen.most_common(4))
    unexplained = max(no_py - pending, 0)
    assert unexplained <= no_py_share * (running + no_py), (
        f"{no_py} samples in the eval loop without Python frames, "
        f"{pending} said to end early for tables still being read")
    print(f"    {ok} of {running} samples ({ok / running:.1%}) end with {argv[2][-60:]}; "
          f"{no_py} in the eval loop before Python frames ({pending} stacks said to end early "
          f"for tables being read)", file=sys.stderr)


def python_outputs(argv):
    """argv: streamed JSON, go tool pprof -raw, --no-python folded stacks
    of the loop: the same Python frames (the code object's address, name,
    file and line), pprof functions with file and line; none without."""
    frames = collections.Counter()
    for line in open(argv[1]):
        for fr in json.loads(line).get("stack", []):
            m = PYFRAME.match(fr["sym"])
            if m:
                frames[(m.group(1), fr["file"] if "file" in fr else m.group(2), fr.get("line"))] += 1
                assert int(fr["addr"], 16) < 1 << 47, fr
    # the script's file as the interpreter makes it: absolute
    script = os.path.abspath("tests/testprogs/pyframes.py")
    want = {("g", script, 18), ("<module>", script, 48)}
    assert want <= set(frames), (want, frames.most_common(8))
    raw = open(argv[2]).read()
    for fn, line in (("g", 18), ("f", 13)):
        assert re.search(rf" {re.escape(fn)} {re.escape(script)}:{line} ", raw), (fn, raw[-1500:])
    # pprof drops "<...>" from short names as template arguments
    assert re.search(rf"  {re.escape(script)}:48 s=0\(<module>\)", raw), raw[-1500:]
    plain = open(argv[3]).read()
    assert "pyframes.py" not in plain and "_PyEval_EvalFrameDefault" in plain, plain[:1000]
    print(f"    {sum(frames.values())} Python frames streamed; pprof names g, f, <module> with lines",
          file=sys.stderr)


if __name__ == "__main__":
    main(globals())
