#!/usr/bin/python3
"""The checks of tests/runtime/fleet.sh: python3 tests/runtime/checks/fleet.py NAME ARGS...
(lib.sh's check). One function a check, named after its test."""
from common import *  # noqa: F401,F403


def raw_samples(path):
    """go tool pprof -raw's samples: {comm label: samples}, and the text."""
    r = open(path).read()
    assert "Samples:" in r and "Locations" in r, r[:300]
    counts, cur = collections.Counter(), None
    for line in r[r.index("Samples:"):r.index("Locations")].splitlines():
        m = re.match(r"^\s+(\d+)(?:\s+\d+)?: [\d ]*$", line)
        if m:
            cur = int(m.group(1))
            continue
        m = re.match(r"^\s+comm:\[(.*)\]$", line)
        if m and cur is not None:
            counts[m.group(1)] += cur
            cur = None
    return counts, r


def served_profile(argv):
    """Each profile fetched over HTTP covers its own window: every CPU
    busy throughout (a spinner each), the window's samples of every
    process add up to its duration x frequency x CPUs (10%), whichever
    ran (a second window merged in would be half as many again). The
    duration is the profile's own: the seconds asked for, and more where
    a busy machine closed the window late (3.2 s for 2 seen in CI), but
    never less. The spinners, beside whatever else runs, have a share of
    them (a quarter of a CPU's at least: beside two CPU hogs one had
    61%) and their functions are named. argv: seconds, frequency, CPUs,
    files."""
    secs, freq, cpus = float(argv[1]), int(argv[2]), int(argv[3])
    for path in argv[4:]:
        counts, r = raw_samples(path)
        assert "PeriodType: cpu nanoseconds" in r, r[:200]
        # go tool pprof cuts the duration to 4 characters: "3.21" (s)
        m = re.search(r"^Duration: ([0-9.]+)", r, re.M)
        assert m, f"{path}: no Duration line: {r[:300]}"
        dur = float(m.group(1))
        assert secs <= dur <= secs + 5, f"{path}: a window of {dur} s for {secs} asked"
        want, got = dur * freq * cpus, sum(counts.values())
        assert abs(got - want) <= 0.1 * want, \
            f"{path}: {got} samples in {dur} s, expected {want:.0f} +- 10% ({counts.most_common(4)})"
        assert counts["spinner"] >= secs * freq / 4, f"{path}: {counts.most_common(4)}"
        locs = r[r.index("Locations"):]
        assert "pmt_spin_inner" in locs and "pmt_spin_outer" in locs, locs[:600]
        print(f"    {path.rsplit('/', 1)[-1]}: {got} samples of {cpus} CPUs, {counts['spinner']} the spinners'",
              file=sys.stderr)


if __name__ == "__main__":
    main(globals())
