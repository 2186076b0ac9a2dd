#!/usr/bin/python3
"""The checks of tests/runtime/export.sh: python3 tests/runtime/checks/export.py NAME ARGS...
(lib.sh's check). One function a check, named after its test."""
from common import *  # noqa: F401,F403


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


def prom_query(port, q):
    """Prometheus' answer to query q (its result list), or None."""
    import urllib.parse
    import urllib.request
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": q})
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return json.load(r)["data"]["result"]
    except OSError:
        return None


def prom_wait(port, q, ready):
    """Query q's result once ready(result) holds (a non-empty one), within
    60 s; Prometheus' scrapes of pmtrace up then. The result."""
    import time
    deadline = time.time() + 60
    while time.time() < deadline:
        r = prom_query(port, q)
        if r and ready(r):
            break
        time.sleep(0.5)
    else:
        raise AssertionError(f"Prometheus has {q} = {r}, not as awaited; up: {prom_query(port, 'up')}")
    up = prom_query(port, 'up{job="pmtrace"}')
    assert up and up[0]["value"][1] == "1", up
    return r


def prometheus_histogram(argv):
    port = argv[1]

    def query(q):
        return prom_query(port, q)
    # the test's two programs: any other process reading fd 100 while the
    # test runs (a linker does, in a build beside it) is rightly counted
    mine = '{comm=~"reader|rd_small"}'
    r = prom_wait(port, 'read_size_bytes_count' + mine, lambda r: len(r) == 2)
    counts = {x["metric"]["comm"]: x["value"][1] for x in r}
    assert counts == {"reader": "39", "rd_small": "13"}, counts
    sums = {x["metric"]["comm"]: x["value"][1] for x in query('read_size_bytes_sum' + mine)}
    assert sums == {"reader": str(3 * 8191), "rd_small": "8191"}, sums
    buckets = collections.defaultdict(dict)
    for x in query('read_size_bytes_bucket' + mine):
        buckets[x["metric"]["comm"]][x["metric"]["le"]] = int(x["value"][1])
    # sizes 1, 2, 4 ... 4096: size 2^j is in [2^j, 2^(j+1)), le 2^(j+1) - 1
    for comm, times in (("reader", 3), ("rd_small", 1)):
        want = {str(2 ** (j + 1) - 1): times * (j + 1) for j in range(13)}
        want["+Inf"] = times * 13
        assert buckets[comm] == want, (comm, buckets[comm], want)
    print(f"    Prometheus: {sum(len(b) for b in buckets.values())} bucket series exact", file=sys.stderr)


def prometheus_query(argv):
    """PORT QUERY VALUE: Prometheus (on PORT) has scraped pmtrace (up 1)
    and QUERY's one series has VALUE, within 60 s."""
    port, q, want = argv[1], argv[2], argv[3]
    prom_wait(port, q, lambda r: r[0]["value"][1] == want)
    print(f"    Prometheus scraped {q} = {want}", file=sys.stderr)


def pprof_vs_folded(argv):
    folded, top, raw, exe, build_id = argv[1:6]  # [churn]
    total, flat = 0, collections.Counter()
    for line in open(folded):
        stack, n = line.rsplit(" ", 1)
        frames = stack.split(";")
        total += int(n)
        if len(frames) > 1:  # comm alone: a sample without frames
            # an inlined leaf: "f (inlined)" folded, "f (inline)" in pprof
            # ("f (partial-inline)" where f is also seen not inlined)
            flat[frames[-1].removesuffix(" (inlined)")] += int(n)
    text = open(top).read()
    m = re.search(r"Total samples = (\d+)", text)
    assert m and int(m.group(1)) == total, (m and m.group(0), total)
    theirs = collections.Counter()
    for line in text.splitlines():
        f = line.split(None, 5)
        if len(f) == 6 and f[0].isdigit() and f[1].endswith("%"):
            if int(f[0]):
                theirs[f[5].removesuffix(" (inline)").removesuffix(" (partial-inline)")] += int(f[0])
    diff = {k: (theirs.get(k, 0), flat.get(k, 0)) for k in set(theirs) | set(flat) if theirs.get(k, 0) != flat.get(k, 0)}
    assert theirs == flat, f"flat counts differ (pprof, folded): {sorted(diff.items())[:12]}"
    # a churn of short processes (argv[6]): the spinner's hot function
    # is there, among the loader's and the shell's
    if argv[6:7] == ["churn"]:
        assert flat["pmt_spin_inner"] > 0, flat.most_common(3)
    else:
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


def no_cfi_functions(exe):
    """EXE's functions no FDE of its .eh_frame covers (crtstuff's)."""
    fdes = [(int(a, 16), int(b, 16)) for a, b in
            re.findall(r"pc=([0-9a-f]+)\.\.([0-9a-f]+)", subprocess.run(
                ["readelf", "-wf", exe], capture_output=True, text=True, check=True).stdout)]
    names = set()
    for line in subprocess.run(["nm", exe], capture_output=True, text=True, check=True).stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "tT" and not any(a <= int(f[0], 16) < b for a, b in fdes):
            names.add(f[2])
    return names


def whole_from_entry(argv):
    """Each of COMM's samples in FOLDED (stacks of EXE) is whole: its user
    frames from _start (the program's or the loader's) or _dl_start_user
    (the loader's call of the program's initializers); or [unknown] above
    kernel frames (execve's last steps: the task has the new program's
    name, its registers are still the old program's, whose code is in no
    mapping now); or one frame in a function of EXE without CFI, whose
    caller (the loader's, without frame pointers) no unwinder can find.
    At least LEAST samples pass through main."""
    folded, exe, comm, least = argv[1], argv[2], argv[3], int(argv[4])
    kinds, bad = collections.Counter(), []
    no_cfi = no_cfi_functions(exe)
    for line in open(folded):
        stack, n = line.rsplit(" ", 1)
        frames = stack.split(";")
        if frames[0] != comm:
            continue
        first = frames[1] if len(frames) > 1 else ""
        if first in ("_start", "_dl_start_user"):
            kinds["main" if "main" in frames else first] += int(n)
        elif first == "[unknown]" and len(frames) > 2:
            kinds["execve"] += int(n)
        elif len(frames) == 2 and first in no_cfi:
            kinds["no CFI"] += int(n)
        else:
            bad.append(line.strip())
    assert not bad, f"{len(bad)} stacks not whole: {bad[:5]}"
    assert kinds["main"] >= least, kinds
    print(f"    {comm}: {dict(kinds)} samples, all whole", file=sys.stderr)


def metrics_counter_hist(argv):
    text = open(argv[1]).read()
    got = {}
    for m in re.finditer(r'^pmtrace_uprobe_\w*pmt_faults_page_faults_(bucket\{le="([^"]+)"\}|count|sum) (\S+)$',
                         text, re.M):
        got[m.group(2) or m.group(1)] = float(m.group(3))
    assert got.get("1") == 11 and got.get("3") == 31 and got.get("7") == 71, (got, text)
    assert got.get("+Inf") == 71 and got.get("count") == 71 and 280 <= got.get("sum", 0) <= 281, got
    print(f"    buckets le=1,3,7: {got['1']:g}, {got['3']:g}, {got['7']:g}; sum {got['sum']:g}", file=sys.stderr)


if __name__ == "__main__":
    main(globals())
