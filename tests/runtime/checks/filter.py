#!/usr/bin/python3
"""The checks of tests/runtime/filter.sh: python3 tests/runtime/checks/filter.py NAME ARGS...
(lib.sh's check). One function a check, named after its test."""
from common import *  # noqa: F401,F403


def filter_exact(argv):
    evs = events(argv[1])
    by = collections.defaultdict(list)
    for e in evs:
        by[e["event"]].append(e)
    def key(e):
        return (e["tid"], e["comm"], tuple(sorted(e["fields"].items())))
    def same(name, pred):
        base = name.split("#")[0]
        want = collections.Counter(key(e) for e in by[base] if pred(e))
        got = collections.Counter(key(e) for e in by[name])
        assert got == want, f"{name}: kernel kept {sum(got.values())}, predicate on the unfiltered stream keeps {sum(want.values())}"
        return sum(got.values())
    gp = "syscalls:sys_enter_getppid"
    n = {}
    n[2] = same(gp + "#2", lambda e: e["comm"] == "mix-a")
    n[3] = same(gp + "#3", lambda e: e["comm"].startswith("mix-") and e["comm"] != "mix-b")
    n[4] = same(gp + "#4", lambda e: e["comm"] in ("other", "mixer"))
    mine = sum(1 for e in by[gp] if e["comm"] in ("mix-a", "mix-b", "other", "mixer"))
    assert (mine, n[2], n[3], n[4]) == (360, 100, 100, 60), (mine, n)   # sh itself may call getppid
    o = "syscalls:sys_enter_openat"
    k = same(o + "#2", lambda e: e["fields"]["flags"] & 1 or (e["fields"]["flags"] & 0x80000 and e["fields"]["flags"] < 0x80003))
    assert k >= 12, k   # 5 O_WRONLY + 7 O_RDWR|O_CLOEXEC, plus the loader's O_CLOEXEC opens
    x = "sched:sched_process_exec"
    assert len(by[x]) == 3 and same(x + "#2", lambda e: "/mix" in e["fields"]["filename"]) == 1, by[x]  # sh, true, mixer


def filter_ctx_fields(argv):
    e = events(argv[1])
    e = [x for x in e if x["event"] == "sched:sched_switch"]
    assert len(e) >= 5 and all(x["fields"]["prev_pid"] == x["pid"] and x["fields"]["prev_prio"] == 120 for x in e), e


if __name__ == "__main__":
    main(globals())
