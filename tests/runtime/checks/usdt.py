#!/usr/bin/python3
"""The checks of tests/runtime/usdt.sh: python3 tests/runtime/checks/usdt.py NAME ARGS...
(lib.sh's check). One function a check, named after its test."""
from common import *  # noqa: F401,F403


def usdt_args(argv):
    """argv: JSON records of usdt_prog's pmt:args; how many."""
    words = ["alpha", "beta", "gamma", ""]
    recs = [json.loads(line) for line in open(argv[1])]
    n = int(argv[2])
    assert len(recs) == n, len(recs)
    for i, r in enumerate(recs):
        f = r["fields"]
        want = {"arg0": -(i + 1), "arg1": 4000000000 + i, "arg3": i % 4, "str(arg2)": words[i % 4]}
        got = {k: f.get(k) for k in want}
        assert got == want, (i, got, want)
        assert r["event"].endswith(":pmt:args"), r["event"]
    print(f"    {n} records, each argument its exact value", file=sys.stderr)


if __name__ == "__main__":
    main(globals())
