# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# pyframes.py MODE ROUNDS: Python call structures whose frames the tests
# expect in the native stacks of /usr/bin/python3.11 (lines matter: the
# tests name them).
import sys
import threading
import time


def f(n):
    x = 0
    for i in range(n):
        x += i * i  # line 13
    return x


def g(n):
    return f(n) + 1  # line 18


def rec(d, n):
    if d == 0:
        return f(n)
    return rec(d - 1, n)


def gen(n):
    for _ in range(n):
        yield f(20000)


def keyed(n):
    return sorted(range(n), key=lambda v: f(300) - v)


def worker(n):
    for _ in range(n):
        f(20000)


def nap(s):
    t = time.monotonic() - time.thread_time(); time.sleep(s); NAPPED[0] += time.monotonic() - time.thread_time() - t  # noqa: E501,E702 (one line)


mode, rounds, NAPPED = sys.argv[1], int(sys.argv[2]), [0.0]
if mode == "loop":
    for _ in range(rounds):
        g(100000)
elif mode == "rec":
    for _ in range(rounds):
        rec(20, 20000)
elif mode == "gen":
    for _ in gen(rounds * 5):
        pass
elif mode == "keyed":
    for _ in range(rounds):
        keyed(300)
elif mode == "thread":
    t = threading.Thread(target=worker, args=(rounds * 5,))
    t.start()
    t.join()
elif mode == "nap":
    for _ in range(rounds):
        nap(0.05)
if mode == "nap":  # the naps' time off the CPU: wall time less the thread's CPU time
    print(f"napped {int(NAPPED[0] * 1e6)} us")


def grow(n):  # page faults under Python frames: new lists of new strings
    keep = []
    for _ in range(n):
        keep.append([str(i) * 3 for i in range(20000)])
    return len(keep)


if mode == "grow":
    print(grow(rounds))
