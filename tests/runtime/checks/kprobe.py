#!/usr/bin/python3
"""The checks of tests/runtime/kprobe.sh: python3 tests/runtime/checks/kprobe.py NAME ARGS...
(lib.sh's check). One function a check, named after its test."""
from common import *  # noqa: F401,F403


def kprobe_stream_args(argv):
    ev = events(argv[1])
    assert len(ev) == 5 and all(e["event"] == "kprobe:vfs_read" for e in ev), ev
    f = ev[0]["fields"]
    if argv[2] == "fentry":
        # BTF names and types: vfs_read(struct file *file, char *buf, size_t count, loff_t *pos)
        assert f["count"] == 12345 and f["file"].startswith("0x"), f
    else:
        assert f["arg2"] == 12345, f


if __name__ == "__main__":
    main(globals())
