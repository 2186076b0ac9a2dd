"""What the checks of every area share: readers of what pmtrace, perf and
bpftrace wrote, and the entry point each area file calls."""
import collections
import json
import os
import re
import struct
import subprocess
import sys
import types
import zlib


def events(path):
    """The JSON Lines pmtrace --json wrote."""
    with open(path) as f:
        return [json.loads(line) for line in f]


def main(checks):
    """Run the check named by argv[1] among checks (an area file's
    globals) with argv[1:]; a failed assertion says what differed."""
    fns = {n: f for n, f in checks.items()
           if isinstance(f, types.FunctionType) and f.__module__ != __name__}
    fn = fns.get(sys.argv[1] if len(sys.argv) > 1 else "")
    if not fn:
        sys.exit(f"{sys.argv[0]}: no check {sys.argv[1:2]}; known: {' '.join(sorted(fns))}")
    try:
        fn(sys.argv[1:])
    except AssertionError as e:
        print(f"    check {sys.argv[1]}: {e}", file=sys.stderr)
        sys.exit(1)
