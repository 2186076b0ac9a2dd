#!/usr/bin/env python3
"""Checks of the runtime tests: python3 tests/runtime/checks.py NAME ARGS...

One function per check, named after its test; each reads the files the
test wrote and fails with an assertion that says what differed."""
import collections
import json
import os
import re
import struct
import subprocess
import sys
import zlib


def events(path):
    """The JSON Lines pmtrace --json wrote."""
    with open(path) as f:
        return [json.loads(line) for line in f]


def children_followed(argv):
    per = collections.Counter(e["pid"] for e in events(argv[1]))
    assert sorted(per.values()) == [700, 700, 700], per


def json_valid(argv):
    evs = events(argv[1])
    names = {e["event"] for e in evs}
    assert "sched:sched_process_exec" in names and "syscalls:sys_enter_openat" in names, names
    for e in evs:
        assert set(e) >= {"ts", "cpu", "comm", "pid", "tid", "event", "fields"}, e
        assert isinstance(e["ts"], int) and isinstance(e["fields"], dict)
    ex = [e for e in evs if e["event"] == "sched:sched_process_exec"]
    assert any(e["fields"]["filename"] == "/usr/bin/cat" or e["fields"]["filename"].endswith("/cat") for e in ex), ex
    o = [e for e in evs if e["event"] == "syscalls:sys_enter_openat"][0]
    assert isinstance(o["fields"]["flags"], int) and o["fields"]["filename"].startswith("0x"), o


def timestamp_order(argv):
    evs = events(argv[1])
    cpus = {e["cpu"] for e in evs}
    assert len(evs) > 50, len(evs)
    ts = [e["ts"] for e in evs]
    bad = sum(1 for a, b in zip(ts, ts[1:]) if b < a)
    assert bad == 0, f"{bad} out of order of {len(ts)}"
    print(f"    {len(evs)} events from CPUs {sorted(cpus)} in order", file=sys.stderr)


def cpu_filter(argv):
    evs = events(argv[1])
    pin0, pin1 = int(argv[2]), int(argv[3] or -1)  # no pin1: one CPU
    cpus = {e["cpu"] for e in evs}
    assert cpus == {0}, cpus
    def away(pid):  # the sleeper switched out: 20 nanosleeps, 20 switches
        # (as taskset, before its exec, it may still run where it forked)
        return sum(1 for e in evs if e["fields"]["prev_pid"] == pid
                   and e["fields"]["prev_comm"] == "sleeper")
    assert away(pin0) >= 20, f"CPU 0's sleeper switched out {away(pin0)} times, not 20"
    assert away(pin1) == 0, f"CPU 1's sleeper seen {away(pin1)} times"


def sched_switch_vs_perf(argv):
    pid = int(argv[3])
    def key(f):
        return (f["prev_comm"], int(f["prev_pid"]), int(f["prev_prio"]),
                f["next_comm"], int(f["next_pid"]), int(f["next_prio"]))
    ours = collections.Counter()
    for e in events(argv[1]):
        f = e["fields"]
        if pid in (f["prev_pid"], f["next_pid"]) and "sleeper" in (f["prev_comm"], f["next_comm"]):
            ours[key(f)] += 1
    rx = re.compile(r"prev_comm=(.*?) prev_pid=(\d+) prev_prio=(\d+) prev_state=\S+ ==> next_comm=(.*?) next_pid=(\d+) next_prio=(\d+)")
    theirs = collections.Counter()
    for l in open(argv[2]):
        m = rx.search(l)
        if m:
            f = dict(zip(["prev_comm", "prev_pid", "prev_prio", "next_comm", "next_pid", "next_prio"], m.groups()))
            if pid in (int(f["prev_pid"]), int(f["next_pid"])) and "sleeper" in (f["prev_comm"], f["next_comm"]):
                theirs[key(f)] += 1
    n = sum(ours.values())
    assert n >= 80, f"only {n} switches of the child seen"
    assert ours == theirs, f"differ: pmtrace-only {ours - theirs}, perf-only {theirs - ours}"
    print(f"    {n} switches of pid {pid} identical to perf's", file=sys.stderr)


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


def agg_hist_exact(argv):
    rows = re.findall(r"^(\[[^\])\n]*[\])])\s+(\d+) \|", open(argv[1]).read(), re.M)
    want = ["[1]", "[2, 4)", "[4, 8)", "[8, 16)", "[16, 32)", "[32, 64)", "[64, 128)", "[128, 256)",
            "[256, 512)", "[512, 1K)", "[1K, 2K)", "[2K, 4K)", "[4K, 8K)"]
    assert [r[0] for r in rows] == want, rows
    assert all(int(r[1]) == 3 for r in rows), rows


def agg_lhist_and_stats(argv):
    rows = dict(re.findall(r"^(\[[^)]*\))\s+(\d+) \|", open(argv[1]).read(), re.M))
    assert rows == {"[0, 1000)": "30", "[1000, 2000)": "3", "[2000, 3000)": "3", "[3000, 4000)": "0", "[4000, 5000)": "3"}, rows


def agg_vs_bpftrace(argv):
    ours = dict(re.findall(r"^@\[(.*)\]: (\d+)$", open(argv[1]).read(), re.M))
    theirs = dict(re.findall(r"^@\[(.*)\]: (\d+)$", open(argv[2]).read(), re.M))
    assert ours == theirs == {"other": "50", "mix-a": "100", "mix-b": "200"}, (ours, theirs)


def agg_cache_churn(argv):
    rows = re.findall(r"^@\[(\d+)\]: count (\d+), average (\d+), min (-?\d+), max (-?\d+), total (\d+)$",
                      open(argv[1]).read(), re.M)
    assert len(rows) == 200, len(rows)
    for k, n, avg, lo, hi, tot in rows:
        k = int(k)
        assert (int(n), int(avg), int(lo), int(hi), int(tot)) == (50, k, k, k, 50 * k), (k, n, avg, lo, hi, tot)


def agg_cache_churn_2(argv):
    snaps = events(argv[1])
    assert len(snaps) >= 3, "only %d snapshots" % len(snaps)
    tot = collections.Counter()
    for s in snaps:
        for e in s["entries"]:
            assert 0 < e["count"] <= 40, e
            tot[e["key"]["count"]] += e["count"]
    assert len(tot) == 200 and set(tot.values()) == {40}, tot


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


def ustacks_of(argv):
    """How many entries of a bpftool -j dump of pmt_stacks (stdin) are
    stacks of the processes listed in argv[1]."""
    pids = {int(p) for p in open(argv[1])}
    keys = [int.from_bytes(bytes(int(b, 16) for b in e["key"]), "little") for e in json.load(sys.stdin)]
    print(sum(1 for k in keys if k >> 32 in pids))


def agg_json(argv):
    snap = events(argv[1])
    assert len(snap) == 1 and snap[0]["aggregation"] == "hist", snap
    e = snap[0]["entries"]
    assert len(e) == 1 and e[0]["key"] == {"comm": "reader"} and e[0]["count"] == 26, e
    assert [b["count"] for b in e[0]["buckets"]] == [2] * 13 and e[0]["buckets"][0]["range"] == "[1]", e


def agg_latency(argv):
    text = open(argv[1]).read()
    assert text.startswith("@msecs:"), text
    rows = dict(re.findall(r"^(\[[^\])\n]*[\])])\s+(\d+) \|", text, re.M))
    assert sum(map(int, rows.values())) == 20, rows
    # 1 ms sleeps; a loaded VM may overshoot one or two, an emulated (TCG)
    # guest sharing the host with another guest a few more, by up to 15 ms
    # seen; none can be shorter than 1 ms
    if argv[2]:
        assert int(rows.get("[1]", 0)) >= 14 and "[0]" not in rows, rows
    else:
        assert int(rows.get("[1]", 0)) >= 18, rows


def pmu_spin_samples(argv):
    ev = events(argv[1])
    pid = int(argv[2])
    mine = [e for e in ev if e["pid"] == pid]
    assert all(e["pid"] == pid for e in ev), "samples of other processes"
    # 1 s of CPU time at 999 Hz, counted per task
    # a TCG guest's clock, its CPU shared with the host's suite, is looser
    high = 1200 if os.environ.get("PMT_VM") else 1100
    assert 800 <= len(mine) <= high, f"{len(mine)} samples for 1 s at 999 Hz"
    # the rest lands in clock_gettime's system call and in interrupts, more
    # of them on a loaded machine (CI saw 742 of ~950)
    syms = collections.Counter(e["sym"].split("+")[0] for e in mine)
    top = syms.most_common(1)[0]
    assert top[0] == "pmt_spin_inner" and top[1] > 0.6 * len(mine), syms.most_common(5)
    inner = [e for e in mine if e["sym"].startswith("pmt_spin_inner")]
    frames = [f["sym"].split("+")[0] for f in inner[len(inner) // 2]["stack"]]
    assert frames[:3] == ["pmt_spin_inner", "pmt_spin_outer", "main"], frames
    assert all(e["fields"]["mode"] == "user" and e["fields"]["period"] > 0 for e in inner)


def pmu_mode_filter(argv):
    by = collections.defaultdict(list)
    for l in open(argv[1]):
        e = json.loads(l)
        by[e["event"]].append(int(e["fields"]["ip"], 16))
    user, kern = by["cpu-clock"], by["cpu-clock#2"]
    assert user and kern, {k: len(v) for k, v in by.items()}
    assert all(ip < 0xffff800000000000 for ip in user), "a kernel ip passed mode == user"
    assert all(ip >= 0xffff800000000000 for ip in kern), "a user ip passed mode == kernel"


def pmu_page_faults(argv):
    snap = json.loads(open(argv[1]).read())
    counts = {e["key"]["pid"]: e["count"] for e in snap["entries"]}
    pid = int(argv[2])
    assert list(counts) == [pid], f"faults of other processes: {counts}"
    assert counts[pid] >= 3000, counts


def pmu_pid_filter_vs_unfiltered(argv):
    snap = json.loads(open(argv[1]).read())
    pid, other = int(argv[2]), int(argv[3])
    c = {(e["key"]["probe"], e["key"]["pid"]): e["count"] for e in snap["entries"]}
    filt = {k[1]: v for k, v in c.items() if k[0] == "cpu-clock#2"}
    assert list(filt) == [pid], f"filtered probe kept {filt}"
    full = c.get(("cpu-clock", pid), 0)
    assert c.get(("cpu-clock", other), 0) > 0, "the unfiltered probe missed the other spinner"
    # two perf events on the same clock, CPUs and rate: the counts agree
    # (a 1-CPU TCG guest shares its CPU with the other spinner: >= 100)
    assert full >= 100 and abs(filt[pid] - full) <= 0.2 * full, (filt[pid], full)


def png_not_blank(argv):
    d = open(argv[1], "rb").read()
    assert d[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, hdr = 8, b"", None
    while pos < len(d):
        n, t = struct.unpack(">I4s", d[pos:pos + 8])
        if t == b"IHDR": hdr = struct.unpack(">IIBBBBB", d[pos + 8:pos + 21])
        if t == b"IDAT": idat += d[pos + 8:pos + 8 + n]
        pos += 12 + n
    w, h, depth, ctype = hdr[:4]
    bpp = {2: 3, 6: 4}[ctype]
    raw, stride, prev, colours = zlib.decompress(idat), w * bpp, bytearray(w * bpp), set()
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        colours.update(bytes(line[i:i + 3]) for i in range(0, stride, bpp * 7))
        prev = line
    assert len(colours) > 10, f"only {len(colours)} colours: blank"


def pmu_count_by_stack_and_sym(argv):
    text = open(argv[1]).read()
    # @[ frames ]: count, innermost first; the spinner's stack is the largest
    blocks = re.findall(r"@\[\n((?:        .*\n)+)\]: (\d+)", text)
    assert blocks, text[:500]
    frames, n = max(blocks, key=lambda b: int(b[1]))
    assert frames.split()[:3] == ["pmt_spin_inner", "pmt_spin_outer", "main"], frames
    assert int(n) > int(argv[2]), (n, argv[2])


def uprobe_exact_args(argv):
    ev = events(argv[1])
    got = [(e["fields"]["arg0"], e["fields"]["arg1"]) for e in ev]
    assert got == [(i, 2 * i) for i in range(50)], got[:5]
    assert all(e["event"].endswith("calls:pmt_ut_add") and e["comm"] == "calls" for e in ev)


def uretprobe_retval(argv):
    got = [json.loads(l)["fields"]["retval"] for l in open(argv[1])]
    assert got == [3 * i for i in range(50)], got[:5]


def uprobe_stack(argv):
    text = open(argv[1]).read()
    assert len(re.findall(r"uprobe:\S*pmt_ut_add\+4:", text)) == 3, text[:800]
    frames = re.findall(r"^\t +[0-9a-f]+ ([^+\s]+)", text, re.M)
    assert frames[:2] == ["pmt_ut_add", "main"], frames[:6]
    assert frames.count("main") == 3, frames


def kprobe_stream_args(argv):
    ev = events(argv[1])
    assert len(ev) == 5 and all(e["event"] == "kprobe:vfs_read" for e in ev), ev
    f = ev[0]["fields"]
    if argv[2] == "fentry":
        # BTF names and types: vfs_read(struct file *file, char *buf, size_t count, loff_t *pos)
        assert f["count"] == 12345 and f["file"].startswith("0x"), f
    else:
        assert f["arg2"] == 12345, f


def exposition(path):
    """Samples of a Prometheus/OpenMetrics text: {(name, labels): value}."""
    rx = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
    lrx = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
    out = {}
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        m = rx.match(line.rstrip("\n"))
        assert m, f"not a sample line: {line!r}"
        labels = tuple(sorted(lrx.findall(m.group(2) or "")))
        out[(m.group(1), labels)] = float(m.group(3))
    return out


def metrics_counter(argv):
    name = "pmtrace_syscalls_sys_enter_getppid_events_total"
    for path in argv[1:3]:
        m = exposition(path)
        got = {dict(l)["comm"]: v for (n, l), v in m.items() if n == name}
        assert got == {"ppid_a": 1234, "ppid_b": 321}, (path, got)
        hits = m[("pmtrace_events_total", (("probe", "syscalls:sys_enter_getppid"),))]
        filtered = m[("pmtrace_filtered_events_total", (("probe", "syscalls:sys_enter_getppid"),))]
        assert hits == 1555, f"pmtrace_events_total {hits}, expected 1555"
        assert filtered >= 0 and m[("pmtrace_lost_events_total", ())] == 0
        assert [v for (n, _), v in m.items() if n == "pmtrace_build_info"] == [1], path
    text = open(argv[1]).read()
    assert f"# TYPE {name} counter" in text, text[:300]
    om = open(argv[2]).read()
    assert om.endswith("# EOF\n"), om[-100:]
    assert f"# TYPE {name[:-6]} counter" in om and f"# TYPE {name} " not in om, om[:300]


def prometheus_histogram(argv):
    import time
    import urllib.parse
    import urllib.request
    port = argv[1]

    def query(q):
        url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": q})
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return json.load(r)["data"]["result"]
        except OSError:
            return None
    deadline = time.time() + 60
    while time.time() < deadline:
        r = query('read_size_bytes_count')
        if r and len(r) == 2:
            break
        time.sleep(0.5)
    else:
        raise AssertionError(f"Prometheus has no read_size_bytes_count for both comms: {r}, up: {query('up')}")
    up = query('up{job="pmtrace"}')
    assert up and up[0]["value"][1] == "1", up
    counts = {x["metric"]["comm"]: x["value"][1] for x in r}
    assert counts == {"reader": "39", "rd_small": "13"}, counts
    sums = {x["metric"]["comm"]: x["value"][1] for x in query('read_size_bytes_sum')}
    assert sums == {"reader": str(3 * 8191), "rd_small": "8191"}, sums
    buckets = collections.defaultdict(dict)
    for x in query('read_size_bytes_bucket'):
        buckets[x["metric"]["comm"]][x["metric"]["le"]] = int(x["value"][1])
    # sizes 1, 2, 4 ... 4096: size 2^j is in [2^j, 2^(j+1)), le 2^(j+1) - 1
    for comm, times in (("reader", 3), ("rd_small", 1)):
        want = {str(2 ** (j + 1) - 1): times * (j + 1) for j in range(13)}
        want["+Inf"] = times * 13
        assert buckets[comm] == want, (comm, buckets[comm], want)
    print(f"    Prometheus: {sum(len(b) for b in buckets.values())} bucket series exact", file=sys.stderr)


def pprof_vs_folded(argv):
    folded, top, raw, exe, build_id = argv[1:6]
    total, flat = 0, collections.Counter()
    for line in open(folded):
        stack, n = line.rsplit(" ", 1)
        frames = stack.split(";")
        total += int(n)
        if len(frames) > 1:  # comm alone: a sample without frames
            # an inlined leaf: "f (inlined)" folded, "f (inline)" in pprof
            flat[frames[-1].removesuffix(" (inlined)")] += int(n)
    text = open(top).read()
    m = re.search(r"Total samples = (\d+)", text)
    assert m and int(m.group(1)) == total, (m and m.group(0), total)
    theirs = collections.Counter()
    for line in text.splitlines():
        f = line.split(None, 5)
        if len(f) == 6 and f[0].isdigit() and f[1].endswith("%"):
            if int(f[0]):
                theirs[f[5].removesuffix(" (inline)")] += int(f[0])
    assert theirs == flat, f"flat counts differ: pprof {theirs.most_common(5)} folded {flat.most_common(5)}"
    assert flat.most_common(1)[0][0] == "pmt_spin_inner", flat.most_common(3)
    r = open(raw).read()
    assert "PeriodType: cpu nanoseconds" in r and "Period: 1001001" in r, r[:200]
    vals = re.findall(r"^\s+(\d+)\s+(\d+): [\d ]+$", r, re.M)
    assert vals and all(int(b) == int(a) * 1001001 for a, b in vals), vals[:5]
    assert sum(int(a) for a, _ in vals) == total, (sum(int(a) for a, _ in vals), total)
    assert re.search(rf"^\d+: 0x\w+/0x\w+/0x[0-9a-f]+ {re.escape(exe)} {build_id} \[FN\]$", r, re.M), r[r.find("Mappings"):][:500]
    # the kernel's mapping, when a sample has kernel frames (a short spin
    # in a slow guest may have none)
    if re.search(r"^\s*\d+: 0xffff[0-9a-f]{12} ", r, re.M):
        assert re.search(r"^\d+: 0xffff800000000000/0xffffffffffffffff/0x0 \[kernel.kallsyms\]", r, re.M), \
            r[r.find("Mappings"):][:500]
    print(f"    {total} samples, {len(flat)} functions as --folded's", file=sys.stderr)


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


PAYLOAD = re.compile(r"^ *(\S+) +(?:\d+/)?(\d+) +\[\d+\] +[\d.]+: +([\w:]+): ?(.*)$")


def comm_tids(paths, comm):
    """The threads shown as comm in any of the text outputs."""
    tids = set()
    for path in paths:
        for line in open(path, errors="replace"):
            m = PAYLOAD.match(line.rstrip("\n"))
            if m and m.group(1) == comm:
                tids.add(m.group(2))
    return tids


def payload_lines(path, tids):
    """(event, payload) of the text lines of threads tids, sorted. By
    thread, not by comm: an event at an exec (an interrupt's, between the
    comm's change and perf's record of it) can show the old comm in perf
    and the new one in pmtrace."""
    out = []
    for line in open(path, errors="replace"):
        m = PAYLOAD.match(line.rstrip("\n"))
        if m and m.group(2) in tids:
            out.append((m.group(3), m.group(4).rstrip()))
    return sorted(out)


def rows_diff(ours, theirs):
    """What only one side has (counted: a row may repeat), and the totals."""
    a, b = collections.Counter(ours), collections.Counter(theirs)
    return list((a - b).items())[:5], list((b - a).items())[:5], len(ours), len(theirs)


def payload_vs_perf_script(argv):
    tids = comm_tids(argv[1:3], argv[3])
    ours, theirs = payload_lines(argv[1], tids), payload_lines(argv[2], tids)
    events = sorted({e for e, _ in ours})
    # perf names no module symbol where it cannot read the modules (the
    # guests): there it prints the address; accept our name for exactly
    # those lines
    mod = re.compile(r"=0xffffffffc[0-9a-f]{7}\b")
    if ours != theirs and any(mod.search(p) for _, p in theirs):
        anyval = re.compile(r"(call_site|function)=\S+")
        norm = lambda rows: sorted((e, anyval.sub(r"\1=?", p)) for e, p in rows)
        unnamed = sum(1 for _, p in theirs if mod.search(p))
        print(f"    {unnamed} lines with a module address perf could not name", file=sys.stderr)
        ours, theirs = norm(ours), norm(theirs)
    # events that came in an interrupt while one of pmtrace's programs ran
    # on that CPU are skipped by the kernel (perf's own events are not),
    # and pmtrace reports them: perf may have exactly those more
    missed = re.search(r"warning: (\d+) events not seen", open(argv[4]).read()) if len(argv) > 4 else None
    only_ours, only_theirs, _, _ = rows_diff(ours, theirs)
    if missed and not only_ours and 0 < len(theirs) - len(ours) <= int(missed.group(1)):
        print(f"    {len(theirs) - len(ours)} events only perf saw; pmtrace reported {missed.group(1)} skipped "
              "by the kernel", file=sys.stderr)
        ours = theirs
    assert ours and ours == theirs, rows_diff(ours, theirs)
    print(f"    {len(ours)} events identical to perf script's ({', '.join(events)})", file=sys.stderr)


def perf_csv(path):
    """perf stat -x, lines: event -> value (clock events in msec)."""
    out = {}
    with open(path) as f:
        for line in f:
            fields = line.rstrip("\n").split(",")
            if len(fields) >= 3 and fields[2] and not line.startswith("#"):
                try:
                    out[fields[2]] = float(fields[0])
                except ValueError:
                    out[fields[2]] = None
    return out


def stat_json(path):
    """pmtrace --stat --json lines: event -> value (None: not counted)."""
    out = {}
    for e in events(path):
        v = e["counter-value"]
        out[e["event"]] = None if v.startswith("<") else float(v)
    return out


def within(what, ours, theirs, share):
    assert ours is not None and theirs is not None, (what, ours, theirs)
    assert abs(ours - theirs) <= share * max(ours, theirs), (what, ours, theirs)
    print(f"    {what}: {ours:g} (perf stat {theirs:g})", file=sys.stderr)


def stat_vs_perf(argv):
    """argv[3]: the counters the command makes large and steady ("spin":
    3000 faults and 200 ms of CPU; "sleep": 200 context switches)."""
    ours, theirs = stat_json(argv[1]), perf_csv(argv[2])
    vm = len(argv) > 4 and argv[4]
    if argv[3] == "sleep" and vm:
        # a guest's one emulated CPU adds tens of preemptions to the
        # sleeps, more in one run than in the other: each has its 200
        assert ours["context-switches"] >= 200 and theirs["context-switches"] >= 200, (ours, theirs)
        print(f"    context-switches: {ours['context-switches']:g} "
              f"(perf stat {theirs['context-switches']:g}), each at least the 200 sleeps", file=sys.stderr)
    elif argv[3] == "sleep":
        within("context-switches", ours["context-switches"], theirs["context-switches"], 0.01)
    else:
        within("page-faults", ours["page-faults"], theirs["page-faults"], 0.01)
        # argv[4]: in an emulated guest, where the same work's CPU time
        # varies by tens of percent from run to run
        within("task-clock msec", ours["task-clock"], theirs["task-clock"], 0.6 if vm else 0.05)


def stat_text_vs_perf(argv):
    """The same lines, with the digits of the values and ratios set aside:
    header, columns, units, ratios' units, footer."""
    def shape(path):
        lines = [l.rstrip("\n") for l in open(path) if not l.startswith("#")]
        while lines and not lines[0]:
            lines.pop(0)
        return lines

    ours, theirs = shape(argv[1]), shape(argv[2])
    assert len(ours) == len(theirs), ("lines", ours, theirs)
    num = re.compile(r"[0-9][0-9,.]*")
    for a, b in zip(ours, theirs):
        if "Performance counter stats" in b:
            assert a == b, (a, b)
            continue
        assert len(a) == len(b), ("width", a, b)
        assert num.sub("9", a).replace(" ", "") == num.sub("9", b).replace(" ", ""), (a, b)
        assert a.find("#") == b.find("#"), ("ratio column", a, b)
        assert a[18:57] == b[18:57], ("unit and event columns", a, b)
    print(f"    {len(ours)} lines in perf stat's layout", file=sys.stderr)


def stat_interval_sum(argv):
    sums = collections.Counter()
    times = []
    for e in events(argv[1]):
        times.append(e["interval"])
        if not e["counter-value"].startswith("<"):
            sums[e["event"]] += float(e["counter-value"])
    assert times == sorted(times) and len(set(times)) >= 3, times
    theirs = perf_csv(argv[2])
    within("page-faults summed over intervals", sums["page-faults"], theirs["page-faults"], 0.01)
    within("task-clock msec summed over intervals", sums["task-clock"], theirs["task-clock"],
           0.6 if len(argv) > 3 and argv[3] else 0.05)


def stat_cpus_utilized(argv):
    (e,) = events(argv[1])
    assert e["event"] == "cpu-clock" and e["metric-unit"] == "CPUs utilized", e
    assert abs(e["metric-value"] - int(argv[2])) < 0.1 * int(argv[2]), e


def stat_pid_busy(argv):
    text = open(argv[1]).read()
    m = re.search(r"([0-9.]+) msec task-clock +# +([0-9.]+) CPUs utilized", text)
    assert m, text
    # the spinner had a CPU to itself for 0.3 s (less in an emulated guest)
    assert 150 <= float(m.group(1)) <= 330 and 0.5 <= float(m.group(2)) <= 1.1, m.group(0)


def agg_snapshots(path):
    """pmtrace --json aggregation snapshots."""
    return [e for e in events(path) if "entries" in e]


def counter_lhist(argv):
    """argv: file, counter, "BUCKET=COUNT,...", warm-up calls (each in
    bucket 0 or 1, which they may share with the expected ones)."""
    (snap,) = agg_snapshots(argv[1])
    assert snap["counter"] == argv[2], snap
    (entry,) = snap["entries"]
    got = {b["bucket"]: b["count"] for b in entry["buckets"] if b["count"]}
    want = {int(k): int(v) for k, v in (p.split("=") for p in argv[3].split(","))}
    warm = int(argv[4])
    for low in (0, 1):
        extra = got.get(low, 0) - want.get(low, 0)
        assert 0 <= extra <= warm, (low, got, want)
        warm -= extra
        if low in got:
            got[low] -= extra
    got = {k: v for k, v in got.items() if v}
    # argv[5]: calls allowed above the one expected bucket (never below)
    over = int(argv[5]) if len(argv) > 5 else 0
    if over and len(want) == 1:
        (w,) = want
        for k in sorted(got):
            if k > w and got[k] <= over:
                over -= got[k]
                got[w] = got.get(w, 0) + got.pop(k)
    assert got == want and warm == 0, (got, want)
    print(f"    {sum(want.values())} calls, each its exact count: {argv[3]}", file=sys.stderr)


def counter_intervals(argv):
    snaps = agg_snapshots(argv[1])
    assert len(snaps) >= 3, len(snaps)
    calls = none = 0
    # a TCG guest whose CPU the host takes away for a while may find a
    # 1 ms sleep's timer expired before it switches out (as counter_stats)
    slack = 5 if os.environ.get("PMT_VM") else 0
    for s in snaps:
        for e in s["entries"]:
            assert e["key"] == {"comm": argv[2]}, e
            # at least its own sleep; pmtrace's interval prints may preempt it
            zero = sum(b["count"] for b in e["buckets"] if b["range"] == "[0]")
            assert e["sum"] >= e["count"] - zero and (e["min"] >= 1 or zero), e
            calls += e["count"]
            none += zero
    assert calls == int(argv[3]), calls
    assert none <= slack, f"{none} calls without a switch"
    print(f"    {calls} calls over {len(snaps)} intervals" + (f", {none} without a switch" if none else ""),
          file=sys.stderr)


def counter_streamed(argv):
    """Records of pmt_faults(k) entries: value grows by delta; from the
    third on, delta is the k of the call before (the first two also take
    the program's start and the warm-up's first-hit cost)."""
    evs = events(argv[1])
    assert len(evs) == int(argv[3]), len(evs)
    prev = None
    for i, e in enumerate(evs):
        (c,) = e["counters"]
        assert c["event"] == argv[2], c
        if prev is not None:
            assert c["value"] == prev["counters"][0]["value"] + c["delta"], (prev, e)
            if i >= 2:
                assert c["delta"] == prev["fields"]["arg0"], (i, prev, e)
        prev = e
    print(f"    {len(evs)} records, each delta the faults of the call before", file=sys.stderr)


def counter_stats(argv):
    """argv: file of @NAME: count C, average A, min M, max X, total T
    lines; the map (name, or [key]); calls; each call's own count; how
    many more in all at most (default 3: rare preemptions)."""
    name, calls, each = argv[2], int(argv[3]), int(argv[4])
    extra = int(argv[5]) if len(argv) > 5 and argv[5] else 3
    key = name if name.startswith("[") else "_".join(re.split("[-:]", name))
    text = open(argv[1]).read()
    m = re.search(r"^@" + re.escape(key) + r": count (\d+), average -?\d+, min (-?\d+), max (-?\d+), "
                  r"total (-?\d+)$", text, re.M)
    assert m, (key, text)
    count, low, high, total = (int(x) for x in m.groups())
    # a TCG guest whose CPU the host takes away for a while may find a
    # short sleep's timer expired before it switches out: a few calls
    # then count one less
    slack = 5 if os.environ.get("PMT_VM") and each else 0
    assert count == calls and each - (slack > 0) <= low <= each, m.group(0)
    assert each * calls - slack <= total <= each * calls + extra, m.group(0)
    print(f"    {m.group(0)}", file=sys.stderr)


def metrics_counter_hist(argv):
    text = open(argv[1]).read()
    got = {}
    for m in re.finditer(r'^pmtrace_uprobe_\w*pmt_faults_page_faults_(bucket\{le="([^"]+)"\}|count|sum) (\S+)$',
                         text, re.M):
        got[m.group(2) or m.group(1)] = float(m.group(3))
    assert got.get("1") == 11 and got.get("3") == 31 and got.get("7") == 71, (got, text)
    assert got.get("+Inf") == 71 and got.get("count") == 71 and 280 <= got.get("sum", 0) <= 281, got
    print(f"    buckets le=1,3,7: {got['1']:g}, {got['3']:g}, {got['7']:g}; sum {got['sum']:g}", file=sys.stderr)


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


def demangled_vs_perf(argv):
    """argv: perf script -F ip,sym,dso output; our folded stacks, and the
    same with --no-demangle; the program's path. perf's frequent names
    in the program must be ours; none of ours mangled; --no-demangle
    keeps the mangled names."""
    perf, ours, raw, prog = argv[1:5]
    seen = collections.Counter()
    for line in open(perf, errors="replace"):
        m = re.match(r"^\s*[0-9a-f]+ (.+?)(?:\+0x[0-9a-f]+)? \((.+)\)$", line)
        if m and m.group(2) == prog and m.group(1) != "[unknown]":
            seen[m.group(1)] += 1
    total = sum(seen.values())
    # the names demangling makes (scoped: "::"), and those named; a plain
    # C name perf's frame pointers find is no demangler's business
    named = set(argv[5].split(",")) if len(argv) > 5 else set()
    frequent = {n for n, c in seen.items() if c >= max(total * 0.02, 5) and ("::" in n or n in named)}
    assert frequent, ("perf saw nothing of the program", total, seen.most_common(5))

    def frames(path):
        out = collections.Counter()
        for line in open(path):
            stack, _, count = line.rstrip("\n").rpartition(" ")
            for f in stack.split(";")[1:]:
                out[f] += int(count)
        return out
    mine = frames(ours)
    missing = sorted(frequent - set(mine))
    assert not missing, ("named by perf, not by us", missing, sorted(mine)[:20])
    # PLT stubs keep the name perf gives them (_ZdlPvm@plt: perf names
    # stubs from the raw symbol)
    mangled = sorted(f for f in mine if re.match(r"_[ZR][A-Za-z0-9_]", f) and not f.endswith("@plt"))
    assert not mangled, ("left mangled", mangled)
    rawnames = frames(raw)
    assert any(re.match(r"_[ZR]", f) for f in rawnames), ("--no-demangle demangled", sorted(rawnames)[:10])
    print(f"    {len(frequent)} names perf prints often, all ours: " +
          ", ".join(sorted(frequent, key=len)[:4]), file=sys.stderr)


def inline_vs_addr2line(argv):
    """argv: streamed JSON (--no-demangle); the program; its nm; folded
    stacks with and without inlined frames; go tool pprof -raw of a
    profile. Each site of the program in the streamed stacks (the frames
    at one address: inlined ones, then the function) must be what
    llvm-addr2line -f -i prints for it."""
    js, prog, nm, folded, plain, raw = argv[1:7]
    prog = os.path.realpath(prog)
    syms = {}
    for line in open(nm):
        f = line.split()
        if len(f) == 3 and f[1] in "tTwW":
            syms[f[2]] = int(f[0], 16)
    sites = {}
    for line in open(js):
        stack = json.loads(line).get("stack", [])
        i = 0
        while i < len(stack):
            j = i
            while j < len(stack) and stack[j].get("inlined"):
                j += 1
            if j == len(stack):
                break
            fn, _, off = stack[j]["sym"].partition("+0x")
            # the program's own code (a library's _init is no site of it)
            if fn in syms and stack[j].get("dso") == prog:
                site = [(f["sym"], f.get("file", ""), f.get("line", 0)) for f in stack[i:j]]
                site.append((fn, stack[j].get("file", ""), stack[j].get("line", 0)))
                sites[syms[fn] + int(off or "0", 16)] = site
            i = j + 1
    assert len(sites) >= 10, f"{len(sites)} sites of the program in the stacks"
    addrs = sorted(sites)
    out = subprocess.run(["llvm-addr2line", "-a", "-f", "-i", "-e", prog] + [hex(a) for a in addrs],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    theirs, cur = {}, None
    for k in range(len(out)):
        if out[k].startswith("0x") and (k == 0 or ":" in out[k - 1]):
            cur = int(out[k], 16)
            theirs[cur] = []
        elif ":" not in out[k]:
            path, _, ln = out[k + 1].rpartition(":")
            ln = ln.split()[0]
            theirs[cur].append((out[k], "" if path == "??" else path, int(ln) if ln.isdigit() else 0))
    deepest = 0
    for a in addrs:
        # the function itself is named by the symbol table, as perf names
        # it (of aliases such as a destructor's D1/D2, perf's choice):
        # its file and line are the DWARF's
        if theirs[a]:
            theirs[a][-1] = (sites[a][-1][0],) + theirs[a][-1][1:]
        # no line: llvm-addr2line names the unit's file anyway, we none
        theirs[a] = [(n, f if ln else "", ln) for n, f, ln in theirs[a]]
        assert sites[a] == theirs[a], (hex(a), "ours", sites[a], "addr2line", theirs[a])
        deepest = max(deepest, len(sites[a]) - 1)
    assert deepest >= 3, f"at most {deepest} inlined frames at a site"

    def samples(path, what):
        n = 0
        for line in open(path):
            stack, _, count = line.rstrip("\n").rpartition(" ")
            n += int(count) if what in stack else 0
        return n
    lam = "Sorter::run(double)::{lambda(int, int)#1}::operator() (inlined);heavy_less"
    # stacks through the function itself (a stack cut short above it can
    # still hold the lambda, whose name starts "Sorter::run(double)")
    total = samples(folded, ";Sorter::run;")
    assert total and samples(folded, lam) > 0.5 * total, (samples(folded, lam), total)
    assert samples(folded, ";Sorter::run;std::sort<") == total, "std::sort not inlined in every stack of Sorter::run"
    assert samples(plain, "(inlined)") == 0 and samples(plain, "Sorter::run") > 0, "--no-inline"
    # pprof: the lambda's line under _M_invoke's location, with its file
    text = open(raw).read()
    assert re.search(r"Sorter::run::\{lambda#1\}::operator \S*/sorter\.cc:28 ", text), text[-2000:]
    print(f"    {len(sites)} sites as addr2line -i shows them, up to {deepest} inlined; "
          f"{samples(folded, lam)} of {total} samples through the inlined lambda", file=sys.stderr)


PYFRAME = re.compile(r"^(.+) \((.+\.py):(\d+)\)$")


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
    assert no_py <= no_py_share * (running + no_py), f"{no_py} samples in the eval loop without Python frames"
    print(f"    {ok} of {running} samples ({ok / running:.1%}) end with {argv[2][-60:]}; "
          f"{no_py} in the eval loop before Python frames", file=sys.stderr)


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


def remap_stacks(argv):
    """argv: streamed samples with user stacks of tests/testprogs/remap;
    the least share of the samples in its two files (mapped in turn at
    0x7e0000000000) that must be complete to main through run (b's code
    unwound with a's tables would not be: half of them). By address, not
    name: a reader behind its rings (seen in a TCG guest) names a sample
    by a mapping made after it."""
    least = float(argv[2])
    recs, cur = [], None
    for line in open(argv[1]):
        if line.startswith("\t"):
            if cur is not None:
                cur.append(line.split())
        elif line.strip():
            cur = []
            recs.append(cur)
    mine = [r for r in recs if r and 0x7e0000000000 <= int(r[0][0], 16) < 0x7e0000100000]
    done = [r for r in mine if any(f[-1].startswith("run+") for f in r) and any(f[-1].startswith("main+") for f in r)]
    assert len(mine) >= 100 and len(done) >= least * len(mine), (len(done), len(mine))
    print(f"    {len(done)} of {len(mine)} samples in the two files complete to main", file=sys.stderr)


def folded_share(argv):
    """argv: folded stacks; the stack expected; the least share of the
    samples that must be exactly it."""
    want, least = argv[2], float(argv[3])
    counts = collections.Counter()
    for line in open(argv[1]):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        counts[stack] += int(n)
    total = sum(counts.values())
    assert total >= 50, ("too few samples", total)
    share = counts[want] / total
    assert share >= least, (f"{share:.1%} of {total} samples are {want}", counts.most_common(3))
    print(f"    {counts[want]} of {total} samples ({share:.1%}) {want}", file=sys.stderr)


def stacks_streamed_vs_keyed(argv):
    """A streamed run's stacks (JSON, one record a line) against an
    aggregation by kstack,ustack of the same events: the kernel stacks
    equal, event for event (none lost, none merged, none made up); most
    user stacks complete in both; neither run lost anything."""
    streamed_k, keyed_k, streamed_u, keyed_u = (collections.Counter() for _ in range(4))
    for line in open(argv[1]):
        if not line.startswith("{"):
            continue
        k, u = [], []
        for f in json.loads(line).get("stack", []):
            name = re.sub(r"\+0x[0-9a-f]+$", "", f["sym"])
            name = f"{name} {f['addr']}" if name == "[unknown]" else name
            name += " (inlined)" if f.get("inlined") else ""
            (k if int(f["addr"], 16) >= 0xffff800000000000 else u).append(name)
        streamed_k[tuple(k)] += 1
        streamed_u[tuple(u)] += 1
    for snap in events(argv[2]):
        for e in snap["entries"]:
            keyed_k[tuple(e["key"]["kstack"])] += e["count"]
            keyed_u[tuple(e["key"]["ustack"])] += e["count"]
    serr, aerr = open(argv[3]).read(), open(argv[4]).read()
    assert re.search(r"pmtrace: \d+ events, 0 lost", serr), serr
    # events the kernel ran neither run's program for, as each says (an
    # interrupt's event while a program ran on that CPU): a run may miss
    # an event the other saw, so the two may differ by that many
    unseen = r"pmtrace: warning: (\d+) events not seen: [^\n]*\n"
    missed = sum(int(m) for m in re.findall(unseen, serr + aerr))
    assert "lost their stack" not in aerr and "warning" not in re.sub(unseen, "", aerr), aerr
    n = sum(streamed_k.values())
    assert n >= int(argv[5]) and abs(sum(keyed_k.values()) - n) <= missed, ("events", n, sum(keyed_k.values()))
    diff = (keyed_k - streamed_k) + (streamed_k - keyed_k)
    assert not keyed_k[()] and sum(diff.values()) <= missed, (keyed_k[()], missed, list(diff.items())[:2])
    # user stacks: the two runs' unwinders read their tables at their own
    # pace (a process's first stacks may end early in one), so only their
    # completeness is held to a bar here (exact counts by user stack:
    # tp_stack_paths_exact, unwind_python)
    done = {name: sum(c for u, c in runs.items() if u and u[-1] == "_start") / n
            for name, runs in (("streamed", streamed_u), ("keyed", keyed_u))}
    assert min(done.values()) >= float(argv[6]), done
    print(f"    {n} events of nginx: kernel stacks as streamed ({len(keyed_k)} distinct, "
          f"{sum(diff.values())} apart, {missed} not seen by the kernel); user stacks "
          f"complete to _start: {done['keyed']:.1%} (streamed {done['streamed']:.1%})", file=sys.stderr)


def kstacks_hold(argv):
    """argv: a --json --by kstack map; the function every stack holds."""
    fn = argv[2]
    entries = [e for line in open(argv[1]) if line.startswith("{") for e in json.loads(line)["entries"]]
    assert entries, "no stacks"
    total = sum(e["count"] for e in entries)
    without = [e["key"]["kstack"] for e in entries if fn not in e["key"]["kstack"]]
    assert not without, ("stacks without " + fn, without[:3])
    assert total >= 20, ("fewer switches than the sleeper's 20 sleeps", total)
    print(f"    {total} switches in {len(entries)} stacks, each through {fn}", file=sys.stderr)


def offcpu_share(argv):
    """argv: --offcpu folded stacks; a substring of the stacks to add up;
    the microseconds expected; the relative tolerance."""
    total = sum(int(line.rsplit(" ", 1)[1]) for line in open(argv[1]) if argv[2] in line)
    want, tol = int(argv[3]), float(argv[4])
    # never less than the known time (a timer fires late, not early)
    assert want * 0.99 <= total <= want * (1 + tol), (f"{argv[2]}: {total} us, expected {want} + {tol:.0%}",
                                                     open(argv[1]).read()[:2000])
    print(f"    {argv[2].strip(';')}: {total} us off the CPU (known: {want})", file=sys.stderr)


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
    ours, theirs = argv[1], argv[2]
    ok = []
    blocks = offcputime_blocks(theirs)
    for fn in argv[3:]:
        mine = [(line.rsplit(" ", 1)) for line in open(ours) if fn in line]
        t_mine = sum(int(n) for _, n in mine)
        t_theirs = sum(us for fr, _, _, us in blocks if any(fn in f for f in fr))
        assert t_theirs > 0 and abs(t_mine - t_theirs) <= 0.05 * t_theirs, (fn, t_mine, t_theirs)
        # the kernel stack, innermost first, below the tracing frames
        stacks_mine = {tuple(below_tracing(s.split(";")[1:][::-1])) for s, _ in mine}
        stacks_theirs = {tuple(below_tracing(fr)) for fr, _, _, _ in blocks if any(fn in f for f in fr)}
        assert stacks_mine & stacks_theirs, (fn, stacks_mine, stacks_theirs)
        ok.append(f"{fn} {t_mine} us (offcputime {t_theirs})")
    print("    " + "; ".join(ok), file=sys.stderr)


def offcpu_pprof_total(argv):
    """argv: go tool pprof -raw output; the nanoseconds expected in the
    samples through nap (5 x 20 ms) and wait_pipe; tolerance."""
    text = open(argv[1]).read()
    samples = text.split("Samples:", 1)[1].split("Locations", 1)[0]
    locs = {}
    for m in re.finditer(r"^\s+(\d+): 0x[0-9a-f]+ M=\d+ (\S+)", text, re.M):
        locs[m.group(1)] = m.group(2)
    want, tol = int(argv[2]), float(argv[3])
    got = collections.Counter()
    for m in re.finditer(r"^\s+(\d+)\s+(\d+): ([\d ]+)$", samples, re.M):
        names = {locs.get(x) for x in m.group(3).split()}
        for fn in ("nap", "wait_pipe"):
            if fn in names:
                got[fn] += int(m.group(2))
    for fn in ("nap", "wait_pipe"):
        assert want * 0.99 <= got[fn] <= want * (1 + tol), (fn, got, want, samples[:1500])
    print(f"    pprof off-cpu/nanoseconds: nap {got['nap']}, wait_pipe {got['wait_pipe']}", file=sys.stderr)


CHECKS = {name: fn for name, fn in list(globals().items()) if callable(fn) and name not in ("events",)}

if __name__ == "__main__":
    fn = CHECKS.get(sys.argv[1] if len(sys.argv) > 1 else "")
    if not fn:
        sys.exit(f"checks.py: no check {sys.argv[1:2]}; known: {' '.join(sorted(CHECKS))}")
    try:
        fn(sys.argv[1:])
    except AssertionError as e:
        print(f"    check {sys.argv[1]}: {e}", file=sys.stderr)
        sys.exit(1)
