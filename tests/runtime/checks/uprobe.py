#!/usr/bin/python3
"""The checks of tests/runtime/uprobe.sh: python3 tests/runtime/checks/uprobe.py NAME ARGS...
(lib.sh's check). One function a check, named after its test."""
from common import *  # noqa: F401,F403


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


if __name__ == "__main__":
    main(globals())
