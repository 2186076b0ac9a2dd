#!/usr/bin/python3
"""The checks of tests/runtime/offcpu.sh: python3 tests/runtime/checks/offcpu.py NAME ARGS...
(lib.sh's check). One function a check, named after its test."""
from common import *  # noqa: F401,F403


def offcpu_measured(argv):
    """argv: --offcpu folded stacks; a substring of the stacks to add up;
    the microseconds the program measured its waits took; the share they
    may differ by: the calls' own time on the CPU is measured and not off
    it, and a preemption just outside the measured calls, in the same
    stack, is off it and not measured (longer under load and TCG)."""
    total = sum(int(line.rsplit(" ", 1)[1]) for line in open(argv[1]) if argv[2] in line)
    measured, tol = int(argv[3]), float(argv[4])
    if not measured * (1 - tol) <= total <= measured * (1 + tol):
        # the stacks that hold the time the program measured and not
        # the frames wanted: the ones the failure is about first
        others = sorted((line for line in open(argv[1]) if argv[2] not in line),
                        key=lambda line: -int(line.rsplit(" ", 1)[1]))
        raise AssertionError(f"{argv[2]}: {total} us off the CPU, the program measured {measured}",
                             "".join(others[:8]))
    print(f"    {argv[2].strip(';')}: {total} us off the CPU (the program measured {measured})",
          file=sys.stderr)


def offcputime_blocks(path):
    """libbpf-tools offcputime's text: (kernel frames, comm, pid, us)."""
    out, frames = [], []
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        m = re.match(r"^\s+-\s+(\S+) \((\d+)\)$", line)
        if m:
            comm, pid = m.groups()
            continue
        if re.match(r"^\s+\d+$", line) and frames:
            out.append((frames, comm, int(pid), int(line)))
            frames = []
        elif line.strip() and not line.startswith("failed") and not line.startswith("Tracing"):
            frames.append(line.strip())
    return out


def below_tracing(frames):
    """Kernel frames innermost first, from __schedule on."""
    return frames[frames.index("__schedule"):] if "__schedule" in frames else frames


def offcpu_vs_offcputime(argv):
    ours, theirs, unseen = argv[1], argv[2], int(argv[3])
    ok = []
    blocks = offcputime_blocks(theirs)
    for fn in argv[4:]:
        mine = [(line.rsplit(" ", 1)) for line in open(ours) if fn in line]
        t_mine = sum(int(n) for _, n in mine)
        t_theirs = sum(us for fr, _, _, us in blocks if any(fn in f for f in fr))
        # offcputime loses each wait whose switch back went untraced
        # (pmtrace counted them: unseen), 20 ms at most each
        lost = min(max(t_mine - t_theirs, 0), unseen * 25000)
        assert t_theirs > 0 and abs(t_mine - lost - t_theirs) <= 0.05 * t_theirs, (fn, t_mine, t_theirs, unseen)
        # the kernel stack, innermost first, below the tracing frames
        stacks_mine = {tuple(below_tracing(s.split(";")[1:][::-1])) for s, _ in mine}
        stacks_theirs = {tuple(below_tracing(fr)) for fr, _, _, _ in blocks if any(fn in f for f in fr)}
        assert stacks_mine & stacks_theirs, (fn, stacks_mine, stacks_theirs)
        ok.append(f"{fn} {t_mine} us (offcputime {t_theirs})")
    print("    " + "; ".join(ok), file=sys.stderr)


def offcpu_pprof_total(argv):
    """argv: go tool pprof -raw output; the microseconds offwaiter measured
    its waits in nap and in wait_pipe took; the share they may differ by
    (as offcpu_measured)."""
    text = open(argv[1]).read()
    samples = text.split("Samples:", 1)[1].split("Locations", 1)[0]
    locs = {}
    for m in re.finditer(r"^\s+(\d+): 0x[0-9a-f]+ M=\d+ (\S+)", text, re.M):
        locs[m.group(1)] = m.group(2)
    want = {"nap": int(argv[2]) * 1000, "wait_pipe": int(argv[3]) * 1000}
    tol = float(argv[4])
    got = collections.Counter()
    for m in re.finditer(r"^\s+(\d+)\s+(\d+): ([\d ]+)$", samples, re.M):
        names = {locs.get(x) for x in m.group(3).split()}
        for fn in ("nap", "wait_pipe"):
            if fn in names:
                got[fn] += int(m.group(2))
    for fn in ("nap", "wait_pipe"):
        assert want[fn] * (1 - tol) <= got[fn] <= want[fn] * (1 + tol), (fn, got, want, samples[:1500])
    print(f"    pprof off-cpu/nanoseconds: nap {got['nap']}, wait_pipe {got['wait_pipe']}", file=sys.stderr)


if __name__ == "__main__":
    main(globals())
