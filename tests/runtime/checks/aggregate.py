#!/usr/bin/python3
"""The checks of tests/runtime/aggregate.sh: python3 tests/runtime/checks/aggregate.py NAME ARGS...
(lib.sh's check). One function a check, named after its test."""
from common import *  # noqa: F401,F403


def agg_vs_bpftrace(argv):
    ours = dict(re.findall(r"^@\[(.*)\]: (\d+)$", open(argv[1]).read(), re.M))
    theirs = dict(re.findall(r"^@\[(.*)\]: (\d+)$", open(argv[2]).read(), re.M))
    assert ours == theirs == {"other": "50", "mix-a": "100", "mix-b": "200"}, (ours, theirs)


def agg_cache_churn(argv):
    """argv: the output; the rounds each of the 200 keys saw"""
    rows = re.findall(r"^@\[(\d+)\]: count (\d+), average (\d+), min (-?\d+), max (-?\d+), total (\d+)$",
                      open(argv[1]).read(), re.M)
    r = int(argv[2])
    assert len(rows) == 200, len(rows)
    for k, n, avg, lo, hi, tot in rows:
        k = int(k)
        assert (int(n), int(avg), int(lo), int(hi), int(tot)) == (r, k, k, k, r * k), (k, n, avg, lo, hi, tot)


def agg_cache_churn_2(argv):
    """argv: the JSON snapshots; the rounds each of the 200 keys saw"""
    snaps = events(argv[1])
    r = int(argv[2])
    assert len(snaps) >= 3, "only %d snapshots" % len(snaps)
    tot = collections.Counter()
    for s in snaps:
        for e in s["entries"]:
            assert 0 < e["count"] <= r, e
            tot[e["key"]["count"]] += e["count"]
    assert len(tot) == 200 and set(tot.values()) == {r}, tot


def agg_interval_forgets_idle(argv):
    snaps = events(argv[1])
    tot = collections.Counter()
    for s in snaps:
        for e in s["entries"]:
            tot[e["key"]["count"]] += e["count"]
    assert set(tot) == set(range(1, 401)), sorted(set(range(1, 401)) ^ set(tot))[:20]
    bad = {k: n for k, n in tot.items() if n != 2}
    assert not bad, bad
    assert len(snaps) >= 8, len(snaps)


def agg_json(argv):
    snap = events(argv[1])
    assert len(snap) == 1 and snap[0]["aggregation"] == "hist", snap
    e = snap[0]["entries"]
    assert len(e) == 1 and e[0]["key"] == {"comm": "reader"} and e[0]["count"] == 26, e
    assert [b["count"] for b in e[0]["buckets"]] == [2] * 13 and e[0]["buckets"][0]["range"] == "[1]", e


def agg_latency(argv):
    """argv: the histogram of 20 1 ms sleeps in ms; the sleeper's own
    lengths of them (slept NS). Each call lasts at least 1 ms and at most
    what the program measured around it (the system call is inside the
    program's measure): however long a busy machine makes a sleep, no
    bucket and above holds more calls than the program saw as long."""
    text = open(argv[1]).read()
    assert text.startswith("@msecs:"), text
    rows = dict(re.findall(r"^(\[[^\])\n]*[\])])\s+(\d+) \|", text, re.M))
    assert sum(map(int, rows.values())) == 20, rows
    assert "[0]" not in rows and "(..., 0)" not in rows, rows
    theirs = [int(n) // 1000000 for n in re.findall(r"^slept (\d+)$", open(argv[2]).read(), re.M)]
    assert len(theirs) == 20, theirs

    def low(label):
        return int(label[1:].split(",")[0].rstrip("]").replace("K", "000"))

    # for every bound: no more calls at or above it than the program saw
    for label in rows:
        b = low(label)
        ours = sum(int(n) for lb, n in rows.items() if low(lb) >= b)
        assert ours <= sum(1 for t in theirs if t >= b), (label, rows, sorted(theirs))
    print(f"    20 sleeps: {rows}; the program measured {sorted(theirs)} ms", file=sys.stderr)


def hist_maps(path):
    """bpftrace-style histogram text -> {(map, key): [(bucket, count), ...]}."""
    maps, cur = {}, None
    for line in open(path):
        line = line.rstrip("\n")
        m = re.match(r"^(@\w*)(?:\[(.*)\])?: *$", line)
        if m:
            cur = (m.group(1), m.group(2))
            maps[cur] = []
            continue
        m = re.match(r"^(\S.*?)\s+(\d+) \|", line)
        if m and cur:
            maps[cur].append((m.group(1), int(m.group(2))))
    return maps


def hist_vs_bpftrace(argv):
    theirs = hist_maps(argv[1])
    names = ["@neg", "@below", "@many", "@bypid"]
    total = 0
    for name, path in zip(names, argv[2:]):
        ours = {key: rows for (_, key), rows in hist_maps(path).items()}
        want = {key: rows for (m, key), rows in theirs.items() if m == name}
        assert ours and ours == want, (name, ours, want)
        total += sum(len(r) for r in ours.values())
    many = [rows for (m, _), rows in theirs.items() if m == "@many"][0]
    assert len(many) > 256, len(many)
    print(f"    {total} buckets equal to bpftrace's", file=sys.stderr)




if __name__ == "__main__":
    main(globals())
