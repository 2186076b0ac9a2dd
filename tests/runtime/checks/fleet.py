#!/usr/bin/env python3
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
    """Each profile fetched over HTTP: CPU samples of the spinner, which
    spun through the whole window, within 10% of seconds x frequency;
    its functions named."""
    secs, freq = float(argv[1]), int(argv[2])
    for path in argv[3:]:
        counts, r = raw_samples(path)
        assert "PeriodType: cpu nanoseconds" in r, r[:200]
        want = secs * freq
        got = counts["spinner"]
        assert abs(got - want) <= 0.1 * want, f"{path}: {got} spinner samples, expected {want:.0f} +- 10% ({counts.most_common(4)})"
        locs = r[r.index("Locations"):]
        assert "pmt_spin_inner" in locs and "pmt_spin_outer" in locs, locs[:600]


if __name__ == "__main__":
    main(globals())
