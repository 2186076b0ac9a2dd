#!/usr/bin/python3
"""The checks of tests/runtime/unwind.sh: python3 tests/runtime/checks/unwind.py NAME ARGS...
(lib.sh's check). One function a check, named after its test."""
import math

from common import *  # noqa: F401,F403


def ustacks_of(argv):
    """How many entries of a bpftool -j dump of pmt_stacks (stdin) are
    stacks of the processes listed in argv[1]."""
    pids = {int(p) for p in open(argv[1])}
    keys = [int.from_bytes(bytes(int(b, 16) for b in e["key"]), "little") for e in json.load(sys.stdin)]
    print(sum(1 for k in keys if k >> 32 in pids))


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


def functions_of(nm):
    """The functions' addresses by name in nm's output (text and weak)."""
    syms = {}
    for line in open(nm):
        f = line.split()
        if len(f) == 3 and f[1] in "tTwW":
            syms[f[2]] = int(f[0], 16)
    return syms


def addr2line_frames(prog, addrs):
    """llvm-addr2line -f -i at each of addrs in prog: by address, its
    frames (name, file or "", line or 0), inlined calls first, the
    function itself last."""
    out = subprocess.run(["llvm-addr2line", "-a", "-f", "-i", "-e", prog] + [hex(a) for a in addrs],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    frames, cur = {}, None
    for k in range(len(out)):
        if out[k].startswith("0x") and (k == 0 or ":" in out[k - 1]):
            cur = int(out[k], 16)
            frames[cur] = []
        elif ":" not in out[k]:
            path, _, ln = out[k + 1].rpartition(":")
            ln = ln.split()[0]
            frames[cur].append((out[k], "" if path == "??" else path, int(ln) if ln.isdigit() else 0))
    return frames


def inline_vs_addr2line(argv):
    """argv: streamed JSON (--no-demangle); the program; its nm; folded
    stacks with and without inlined frames; go tool pprof -raw of a
    profile. Each site of the program in the streamed stacks (the frames
    at one address: inlined ones, then the function) must be what
    llvm-addr2line -f -i prints for it."""
    js, prog, nm, folded, plain, raw = argv[1:7]
    prog = os.path.realpath(prog)
    syms = functions_of(nm)
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
    theirs = addr2line_frames(prog, addrs)
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




def lines_vs_addr2line(argv):
    """argv: streamed JSON of a program built by clang (no
    .debug_aranges); the program; its nm. Each of its own frames' file
    and line in the stacks is llvm-addr2line's at the same address."""
    js, prog, nm = argv[1:4]
    prog = os.path.realpath(prog)
    syms = functions_of(nm)
    # (a caller's address is in its call: the return address less one)
    ours = {}
    for line in open(js):
        for f in json.loads(line).get("stack", []):
            fn, _, off = f["sym"].partition("+0x")
            if f.get("dso") == prog and fn in syms and not f.get("inlined"):
                ours[syms[fn] + int(off or "0", 16)] = (f.get("file", ""), f.get("line", 0))
    assert len(ours) >= 3, f"{len(ours)} addresses of the program in the stacks"
    # the function's own line, under any inlined calls there (the one a
    # frame that is not inlined shows)
    theirs = addr2line_frames(prog, sorted(ours))
    for a in sorted(ours):
        assert ours[a] == theirs[a][-1][1:], (hex(a), "ours", ours[a], "llvm-addr2line", theirs[a][-1][1:])
    # (_start has none: crt1.o's, without DWARF)
    lined = sum(1 for _, ln in ours.values() if ln)
    assert lined >= 3, ("too few addresses with a line", ours)
    print(f"    {len(ours)} addresses' files and lines as llvm-addr2line's ({lined} with a line)", file=sys.stderr)


def remap_stacks(argv):
    """argv: streamed samples with user stacks of tests/testprogs/remap;
    the least share of the samples in its two files (mapped in turn at
    0x7e0000000000) that must be complete to main through run (b's code
    unwound with a's tables would not be: half of them); remap's output,
    the time between the two files. Every sample's innermost frame is
    named after the file mapped there when it was taken: a's spin before
    that time, b's after (a reader naming samples by the mappings of
    when it reads them names a's last samples after b)."""
    least = float(argv[2])
    switch = None
    for line in open(argv[3]):
        if line.startswith("switch "):
            sec, nsec = line.split()[1].split(".")
            switch = int(sec) * 1000000 + int(nsec) // 1000
    assert switch is not None, "remap printed no switch time"
    recs, cur = [], None
    for line in open(argv[1]):
        if line.startswith("\t"):
            if cur is not None:
                cur[1].append(line.split())
        elif line.strip():
            m = re.search(r" (\d+)\.(\d{6}): ", line)
            cur = (int(m.group(1)) * 1000000 + int(m.group(2)) if m else None, [])
            recs.append(cur)
    mine = [r for r in recs if r[1] and 0x7e0000000000 <= int(r[1][0][0], 16) < 0x7e0000100000]
    done = [r for r in mine if any(f[-1].startswith("run+") for f in r[1]) and any(f[-1].startswith("main+") for f in r[1])]
    assert len(mine) >= 100 and len(done) >= least * len(mine), (len(done), len(mine))
    wrong = [(t, f[0][1]) for t, f in mine
             if t is None or f[0][1].split("+")[0] != ("remap_spin_a" if t <= switch else "remap_spin_b")]
    assert not wrong, (f"{len(wrong)} of {len(mine)} samples named after the other file (switch at {switch} us)",
                       wrong[:5])
    before = sum(1 for t, _ in mine if t <= switch)
    print(f"    {len(done)} of {len(mine)} samples in the two files complete to main; "
          f"each named after its own file ({before} in a, {len(mine) - before} in b)", file=sys.stderr)


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


def frame_name(f):
    """A streamed JSON frame as folded stacks and keys name it: without
    its +0xOFFSET (but FILE+0xOFFSET, code no symbol names, whole), an
    inlined one marked so."""
    unnamed = f.get("dso") and f["sym"].startswith(os.path.basename(f["dso"]) + "+0x")
    name = f["sym"] if unnamed else re.sub(r"\+0x[0-9a-f]+$", "", f["sym"])
    return name + (" (inlined)" if f.get("inlined") else "")


def stacks_streamed_vs_keyed(argv):
    """A streamed run's stacks (JSON, one record a line) against an
    aggregation by kstack,ustack of the same events: the kernel stacks
    and the user stacks equal, event for event (none lost, none merged,
    none made up); most user stacks complete in both; neither run lost
    anything."""
    streamed_k, keyed_k, streamed_u, keyed_u = (collections.Counter() for _ in range(4))
    for line in open(argv[1]):
        if not line.startswith("{"):
            continue
        k, u = [], []
        for f in json.loads(line).get("stack", []):
            # FILE+0xOFFSET: code no symbol names, the same as keyed
            name = frame_name(f)
            # (keys print an unknown frame with its address)
            name = f"{name} {f['addr']}" if name == "[unknown]" else name
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
    # pace, but a stack that meets a file not read yet is finished in
    # user space from its copy, by the same rules: one truth, event for
    # event, as the kernel stacks (less a stack deeper than the copy's
    # 8 KiB, which ends early in whichever run copied it: said, counted)
    early = r"pmtrace: \d+ user stacks met a file whose unwind tables were not read yet.*\((\d+) of them end early"
    short = sum(int(m) for m in re.findall(early, serr + aerr))
    # (and those an aggregation's rings had no room to take: keyed in the
    # kernel as far as they were walked, counted, said)
    cutre = r"pmtrace: (\d+) user stacks end early at a file whose unwind tables were not read yet.* the event rings had no room"
    short += sum(int(m) for m in re.findall(cutre, aerr))
    udiff = (keyed_u - streamed_u) + (streamed_u - keyed_u)
    # (a caller's mapping the walk could not learn, its lookup refused
    # while the other tracer's program held the lock on the same event,
    # is finished from the copy too: before, 4-14 of ~65,000 keyed
    # stacks were epoll_wait alone)
    apart = sum(udiff.values())
    # (under TCG the tables come after most of the run: not judged)
    some = [(k[-3:], v, keyed_u[k], streamed_u[k]) for k, v in udiff.items()][:8]
    assert argv[6] == "none" or apart <= missed + 2 * short, (missed, short, apart, some)
    pend = r"pmtrace: (\d+) user stacks met a file whose unwind tables were still being read"
    pending = {"streamed": sum(map(int, re.findall(pend, serr))),
               "keyed": sum(map(int, re.findall(pend, aerr)))}
    done = {name: sum(c for u, c in runs.items() if u and u[-1] == "_start") / n
            for name, runs in (("streamed", streamed_u), ("keyed", keyed_u))}
    judged = {name: (done[name] * n + pending[name]) / n for name in done}
    print(f"    {n} events of nginx: kernel stacks as streamed ({len(keyed_k)} distinct, "
          f"{sum(diff.values())} apart, {missed} not seen by the kernel); user stacks as "
          f"streamed ({len(keyed_u)} distinct, {sum(udiff.values())} apart)", file=sys.stderr)
    if argv[6] == "none":
        print("    user stacks' completeness not judged: under TCG the unwinder's tables "
              "arrive after most of the run", file=sys.stderr)
        return
    assert min(judged.values()) >= float(argv[6]), (done, pending)
    print(f"    user stacks complete to _start: {done['keyed']:.1%} "
          f"(streamed {done['streamed']:.1%}); ended early for tables being read: "
          f"{pending['keyed']} (streamed {pending['streamed']})", file=sys.stderr)


def json_folded(path):
    """A streamed run's JSON records collapsed as --folded prints them:
    comm, then the frames outermost first, inlined ones named so."""
    out = collections.Counter()
    for line in open(path):
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        names = []
        for f in r.get("stack", []):
            # FILE+0xOFFSET: code no symbol names, the same folded
            names.append(frame_name(f))
        out[";".join([r["comm"]] + names[::-1])] += 1
    return out


def streamed_vs_folded(argv):
    """argv: a streamed run (JSON), a folded run of the same events (two
    tracers at once), their stderr, "names" (Python frames' names judged
    too) or "frames" (under TCG the tracers read code objects' names
    long after the events, and many are gone), and the frames that must
    be among them (';'-separated substrings of folded lines, each in
    some line of both): the same stacks, frame for frame, event for
    event (less events the kernel ran neither program for, and copies of
    a stack too short to finish, each said)."""
    streamed = json_folded(argv[1])
    folded = collections.Counter()
    for line in open(argv[2]):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        folded[stack] += int(n)
    serr, ferr = open(argv[3]).read(), open(argv[4]).read()
    assert re.search(r"pmtrace: \d+ events, 0 lost", serr), serr
    assert "warning" not in re.sub(r"pmtrace: warning: \d+ events not seen[^\n]*\n", "", serr + ferr), ferr
    missed = sum(int(m) for m in re.findall(r"pmtrace: warning: (\d+) events not seen", serr + ferr))
    early = r"finished from the copy of their stack \((\d+) of them end early"
    short = sum(int(m) for m in re.findall(early, serr + ferr))
    cutre = r"pmtrace: (\d+) user stacks end early at a file whose unwind tables were not read yet.* the event rings had no room"
    short += sum(int(m) for m in re.findall(cutre, ferr))
    # (and those copied before the kernel knew their interpreter: no
    # Python frames, said)
    short += sum(int(m) for m in re.findall(r"pmtrace: (\d+) of those stacks lack Python frames", serr + ferr))
    # (and those whose eval loop the kernel met with no frame to read)
    short += sum(int(m) for m in re.findall(r"pmtrace: (\d+) user stacks pass through a Python eval loop", serr + ferr))
    n = sum(streamed.values())

    def apart(a, b):
        return sum(((a - b) + (b - a)).values())

    # a Python code object freed before the tracer read its name (a
    # module's body after its import) is "[python]", in whichever run
    # was later to read it (said at exit): the frames themselves, names
    # of Python frames aside, are the same
    def py_masked(c):
        out = collections.Counter()
        for k, v in c.items():
            out[";".join("[py]" if f == "[python]" or (re.search(r" \(.*\)$", f) and not f.endswith(" (inlined)"))
                         else f for f in k.split(";"))] += v
        return out

    unnamed = sum(c for k, c in list(streamed.items()) + list(folded.items()) if "[python]" in k.split(";"))
    some = [(k.split(";")[-4:], streamed[k], folded[k]) for k in (streamed - folded) + (folded - streamed)][:4]
    assert n >= 100 and apart(py_masked(streamed), py_masked(folded)) <= missed + 2 * short, \
        (n, missed, short, apart(py_masked(streamed), py_masked(folded)), some)
    if argv[5] == "names":
        assert apart(streamed, folded) <= missed + 2 * short + 2 * unnamed, (apart(streamed, folded), unnamed, some)
        assert unnamed <= n // 20, ("Python frames unnamed", unnamed, n)
    # (frames only: a Python frame wanted is any Python frame, named or
    # not, in both runs)
    for want in argv[6:]:
        for name, c in (("streamed", streamed), ("folded", folded)):
            if argv[5] == "frames" and ".py:" in want:
                assert any("[py]" in k.split(";") for k in py_masked(c)), (f"no Python frame in the {name} run",)
                continue
            assert any(want in k for k in c), (f"no {name} stack holds {want}", c.most_common(2))
    print(f"    {n} events, {len(folded)} stacks: streamed and folded frame for frame "
          f"({apart(streamed, folded)} apart: {missed} not seen, {short} copies too short, "
          f"{unnamed} with a Python code object unnamed in one run)", file=sys.stderr)


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



JS_KINDS = ("JS:", "LazyCompile:", "Function:", "Script:")

def jit_names_in_map(argv):
    """argv: folded or streamed stacks, a perf map: every frame naming JS
    code (V8's "JS:" names from V8 11 on, node 20; "LazyCompile:",
    "Function:" and "Script:" before, Debian's node 18) is the name of a
    line of the map."""
    names = set()
    for line in open(argv[2], errors="replace"):
        parts = line.rstrip("\n").split(" ", 2)
        if len(parts) == 3:
            names.add(parts[2])
    seen = collections.Counter()
    for line in open(argv[1], errors="replace"):
        if line.startswith("\t"):  # streamed: "\t    ADDR NAME+0xOFF"
            fr = re.sub(r"\+0x[0-9a-f]+$", "", line.strip().split(" ", 1)[-1])
            if fr.startswith(JS_KINDS):
                seen[fr] += 1
            continue
        stack, _, count = line.rstrip("\n").rpartition(" ")
        for fr in stack.split(";"):
            if fr.startswith(JS_KINDS):
                seen[fr] += int(count)
    assert seen, "no JS frames"
    unknown = [f for f in seen if f not in names]
    assert not unknown, f"JS frames not in the map: {unknown[:5]}"
    print(f"    {len(seen)} JS functions named, each a line of the map", file=sys.stderr)

def stripped_offsets(argv):
    """argv: folded stacks of a stripped nofp; its debug file; its name
    (nofp). Its frames are all NAME+0xOFFSET (none [unknown]); addr2line on the debug file
    names each offset within nofp's functions, and the stacks hold the
    chain main -> nofp_a -> nofp_b (nofp_c inlined) -> qsort -> nofp_cmp."""
    folded, debug, base = argv[1:4]
    stacks = collections.Counter()
    for line in open(folded):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        stacks[stack] += int(count)
    total = sum(stacks.values())
    assert total >= 50, ("too few samples", total)
    # (under TCG a few samples are a lone [unknown] leaf: an address in
    # no mapping, seen before this naming existed)
    unknown = sum(c for s, c in stacks.items() if "[unknown]" in s)
    assert unknown <= 0.05 * total, (f"{unknown} of {total} samples with [unknown] frames",
                                     [s for s in stacks if "[unknown]" in s][:2])
    offs = {f for s in stacks for f in s.split(";")[1:] if f.startswith("nofp")}
    bad = sorted(f for f in offs if not re.fullmatch(re.escape(base) + r"\+0x[0-9a-f]+", f))
    assert not bad, ("frames of the stripped file not FILE+0xOFFSET", bad[:5])
    offs = sorted(offs)
    # each address's function: the outermost of its inlined ones (-i)
    out = subprocess.run(["addr2line", "-a", "-f", "-i", "-e", debug] + [f.split("+")[1] for f in offs],
                         capture_output=True, text=True, check=True).stdout.split("\n")
    outer, want_func = [], False
    for line in filter(None, out):
        if re.fullmatch(r"0x[0-9a-f]+", line):
            outer.append(None)
            want_func = True
        elif outer and want_func:
            outer[-1] = line  # then its file:line
            want_func = False
        else:
            want_func = True
    name = dict(zip(offs, outer))
    # (a sample in a PLT stub has no function addr2line names: allowed
    # there only)
    plt = []
    for line in subprocess.run(["readelf", "-SW", debug], capture_output=True, text=True).stdout.splitlines():
        m = re.search(r"\] (\.plt\S*)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if m:
            plt.append((int(m.group(2), 16), int(m.group(2), 16) + int(m.group(4), 16)))
    for off, n in list(name.items()):
        at = int(off.split("+")[1], 16)
        if n == "??" and any(lo <= at < hi for lo, hi in plt):
            name[off] = "[plt]"
    # (and the C runtime's own, at the start and the exit)
    crt = {"__do_global_dtors_aux", "frame_dummy", "register_tm_clones", "deregister_tm_clones",
           "_init", "_fini", "[plt]"}
    odd = sorted({n for n in name.values()} - {"_start", "main", "nofp_a", "nofp_b", "nofp_c", "nofp_cmp"} - crt)
    assert not odd, ("offsets addr2line does not put in nofp's functions", odd)
    chain = 0
    for s, c in stacks.items():
        names = [name.get(f, f) for f in s.split(";")[1:]]
        mine = [n for n in names if n in ("_start", "main", "nofp_a", "nofp_b", "nofp_cmp")]
        if mine[:4] == ["_start", "main", "nofp_a", "nofp_b"]:
            chain += c
    # (the rest: the start before main, a tenth of the run under TCG)
    assert chain >= 0.8 * total, (f"{chain} of {total} samples through _start;main;nofp_a;nofp_b",
                                  stacks.most_common(2))
    print(f"    {total} samples, {len(offs)} offsets, all in nofp's functions by addr2line; "
          f"{chain} through main -> nofp_a -> nofp_b", file=sys.stderr)


def stripped_named(argv):
    """argv: folded stacks of a stripped nofp whose debug file was found;
    its command name. No frame FILE+0xOFFSET; 80% of the samples through
    _start;...;main;nofp_a.constprop.0;nofp_b.constprop.0."""
    folded, comm = argv[1:3]
    total = chain = 0
    offsets = collections.Counter()
    for line in open(folded):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        total += int(count)
        offsets.update(f for f in stack.split(";")[1:] if re.fullmatch(r"nofp\+0x[0-9a-f]+", f))
        if re.search(r";_start;.*;main;nofp_a[.a-z0-9]*;nofp_b", stack):
            chain += int(count)
    assert total >= 50, ("too few samples", total)
    assert not offsets, ("frames left unnamed", offsets.most_common(3))
    assert chain >= 0.8 * total, (f"{chain} of {total} through main;nofp_a;nofp_b", comm)
    print(f"    {chain} of {total} samples named through main -> nofp_a -> nofp_b", file=sys.stderr)


def build_complete(argv):
    """argv: pmtrace's folded stacks of a build; perf script -F
    comm,ip,sym of perf record --call-graph dwarf on the same build (or
    "-" and the share perf reaches, as argv[4]); the command judged. Its
    samples complete to __libc_start_call_main: a share at least
    perf's."""
    comm, end = argv[3], "__libc_start_call_main"
    ours = total = 0
    for line in open(argv[1]):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        frames = stack.split(";")
        if frames[0] == comm:
            total += int(n)
            ours += int(n) if end in frames else 0
    if argv[2] == "-":
        assert total >= 50 and ours / total >= float(argv[4]), (f"{comm}: {ours} of {total} complete", argv[4])
        print(f"    {comm}: {ours} of {total} samples complete to {end} ({ours / total:.0%}); "
              f"perf reaches {float(argv[4]):.0%} on the host's build", file=sys.stderr)
        return
    theirs = ptotal = 0
    cur = None
    for line in list(open(argv[2], errors="replace")) + [""]:
        if line.strip() and not line.startswith("\t"):
            cur = [line.split()[0], False]
        elif cur and line.strip():
            f = line.split()
            cur[1] = cur[1] or (len(f) > 1 and f[1].split("+")[0] == end)
        elif cur:
            ptotal += cur[0] == comm
            theirs += cur[0] == comm and cur[1]
            cur = None
    assert total >= 50 and ptotal >= 50, ("too few samples", total, ptotal)
    share, pshare = ours / total, theirs / ptotal
    assert share >= pshare, (f"{comm}: {ours} of {total} samples complete ({share:.0%}), "
                             f"perf record --call-graph dwarf {theirs} of {ptotal} ({pshare:.0%})")
    print(f"    {comm}: {ours} of {total} samples complete to {end} ({share:.0%}); "
          f"perf record --call-graph dwarf {theirs} of {ptotal} ({pshare:.0%})", file=sys.stderr)


def stream_samples(path, comm):
    """The user stacks of COMM's samples in a streamed text file (pmtrace's
    default output or perf script's: a header line, then a tab and a frame
    a line, "ADDR NAME+OFF (DSO)"), each a list of names, innermost first:
    kernel frames, unnamed ones and Python's left out; offsets, symbol
    versions and the suffixes of GCC's clones (.part.0, .constprop.0: perf
    names an inlined copy by its origin) dropped."""
    samples, cur = [], None
    for line in list(open(path, errors="replace")) + [""]:
        if line.strip() and not line.startswith("\t"):
            if cur is not None:
                samples.append(cur)
            cur = [] if line.split()[0] == comm else None
        elif cur is not None and line.strip() and "[kernel" not in line:
            f = line.split()
            # (pmtrace's Python frames, "ADDR FUNC (FILE:LINE)", perf has not)
            if len(f) < 2 or re.fullmatch(r"\(.*:[0-9]+\)", f[-1]):
                continue
            name = re.sub(r"\+0x[0-9a-f]+$", "", f[1]).split("@")[0]
            name = re.sub(r"(\.(constprop|part|isra|cold|lto_priv)\.[0-9]+)+$", "", name)
            # unnamed: perf's [unknown], pmtrace's FILE+0xOFF
            if name != "[unknown]" and "." not in name:
                cur.append(name)
    if cur is not None:
        samples.append(cur)
    return samples


def vs_perf_dwarf(argv):
    """argv: pmtrace's streamed user stacks, perf script's of perf record
    --call-graph dwarf on the same process over the same seconds, the
    comm, the share of pmtrace's samples that must be whole. Whole: the
    stack reaches __libc_start_call_main. pmtrace's share is at least
    what is asked and at least perf's (less sampling noise); each function on at least 10% of
    perf's whole stacks is on pmtrace's whole stacks as often, within four
    standard deviations of the two samplings' difference; perf's most
    common whole stack, from __libc_start_call_main in (recursion folded),
    is among pmtrace's."""
    end = "__libc_start_call_main"
    ours, theirs = stream_samples(argv[1], argv[3]), stream_samples(argv[2], argv[3])
    assert len(ours) >= 100 and len(theirs) >= 100, ("too few samples", len(ours), len(theirs))

    def whole(samples):
        out = []
        for s in samples:
            if end in s:
                inner = s[:s.index(end) + 1]
                out.append(tuple(f for i, f in enumerate(inner) if i == 0 or f != inner[i - 1]))
        return out

    w_ours, w_theirs = whole(ours), whole(theirs)
    share, pshare = len(w_ours) / len(ours), len(w_theirs) / len(theirs)
    print(f"    {argv[3]}: {len(w_ours)} of {len(ours)} samples whole ({share:.0%}); perf record "
          f"--call-graph dwarf {len(w_theirs)} of {len(theirs)} ({pshare:.0%})", file=sys.stderr)
    assert share >= float(argv[4]), (f"{share:.1%} whole, want {float(argv[4]):.0%}")
    # as often as perf's, within four standard deviations of the two
    # samplings' difference (the arm64 guest: 1,960 of 1,961 against 720
    # of 720)
    p = (len(w_ours) + len(w_theirs)) / (len(ours) + len(theirs))
    slack = 4 * math.sqrt(p * (1 - p) * (1 / len(ours) + 1 / len(theirs)))
    assert share >= pshare - slack, ("fewer whole stacks than perf's", share, pshare, slack)
    if len(w_theirs) < 50:
        # (a static program's .eh_frame without .eh_frame_hdr: perf's
        # DWARF mode stops at the first frame)
        print(f"    perf has {len(w_theirs)} whole stacks: their functions are not compared", file=sys.stderr)
        return
    n1, n2 = len(w_ours), len(w_theirs)
    funcs = {f for s in w_theirs for f in set(s)}
    shown = []
    for f in sorted(funcs):
        p2 = sum(f in s for s in w_theirs) / n2
        if p2 < 0.10:
            continue
        p1 = sum(f in s for s in w_ours) / n1
        p = (p1 * n1 + p2 * n2) / (n1 + n2)
        tol = max(4 * math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2)), 0.02)
        assert abs(p1 - p2) <= tol, (f"{f} on {p1:.1%} of pmtrace's whole stacks, {p2:.1%} of perf's", tol)
        shown.append(f"{f} {p1:.0%}/{p2:.0%}")
    print(f"    on the whole stacks, pmtrace's/perf's: {', '.join(shown)}", file=sys.stderr)
    top = collections.Counter(w_theirs).most_common(1)[0][0]
    assert top in set(w_ours), ("perf's most common stack is not pmtrace's", ";".join(reversed(top)))

if __name__ == "__main__":
    main(globals())
