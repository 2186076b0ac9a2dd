#!/usr/bin/python3
"""The checks of tests/runtime/stream.sh: python3 tests/runtime/checks/stream.py NAME ARGS...
(lib.sh's check). One function a check, named after its test."""
from common import *  # noqa: F401,F403

PAYLOAD = re.compile(r"^ *(\S+) +(?:\d+/)?(\d+) +\[\d+\] +[\d.]+: +([\w:]+): ?(.*)$")


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


if __name__ == "__main__":
    main(globals())
