#!/usr/bin/python3
"""The checks of tests/runtime/oneliners.sh: python3 tests/runtime/checks/oneliners.py NAME ARGS...
(lib.sh's check). One function a check, named after its test."""
from common import *  # noqa: F401,F403


def bpftrace_map(path):
    """@[key]: n lines (ours, as_bpftrace made them; or bpftrace's) as a dict."""
    return {k: int(n) for k, n in re.findall(r"^@\[(.*)\]: (\d+)$", open(path).read(), re.M)}


def same_but_unread(argv):
    """argv: our map, bpftrace's (both as bpftrace prints them); what.
    The same counts key by key, but for strings one side could not read
    (a page not yet touched when the event came: the two runs differ in
    that): those are counted under the empty key, ours <fault>, and must
    account for every difference; the totals are equal."""
    ours, theirs, what = bpftrace_map(argv[1]), bpftrace_map(argv[2]), argv[3]
    assert ours and theirs, (ours, theirs)
    our_unread, their_unread = ours.pop("", 0), theirs.pop("", 0)
    assert sum(ours.values()) + our_unread == sum(theirs.values()) + their_unread, \
        f"{what}: totals differ: {sum(ours.values()) + our_unread} against {sum(theirs.values()) + their_unread}"
    more = {k: ours.get(k, 0) - theirs.get(k, 0) for k in set(ours) | set(theirs)}
    we_read = sum(d for d in more.values() if d > 0)
    they_read = -sum(d for d in more.values() if d < 0)
    assert we_read <= their_unread and they_read <= our_unread, \
        f"{what}: differences not explained by unread strings: {({k: d for k, d in more.items() if d})}"
    print(f"    {what}: {len(ours)} strings, each counted as bpftrace counts it; unread: "
          f"ours {our_unread} (<fault>), bpftrace's {their_unread} (empty)", file=sys.stderr)


if __name__ == "__main__":
    main(globals())
