# shellcheck shell=bash
# Runtime tests, area python: CPython 3.11's frames among the native
# frames of Debian's /usr/bin/python3.11 (no debug symbols), read in the
# kernel from the thread's interpreter state: the call structures of
# tests/testprogs/pyframes.py (a loop through two functions, recursion 20
# deep, a generator, a thread, a C function calling back into Python,
# a sleep off the CPU), their lines, every output; an interpreter of
# another version keeps its native frames, with a notice.
# Sourced by tests/runtime/runner.sh after lib.sh; each test_NAME runs alone
# under its own timeout (timeout_NAME=SECS, default $DEFAULT_TIMEOUT).

# The tests the QEMU guests run too (runner.sh): what the kernel decides;
# every_kernel_tests in every guest, guest_tests dealt between them.
# shellcheck disable=SC2034 # read by runner.sh
every_kernel_tests="python_offcpu"

PYF=tests/testprogs/pyframes.py
# rounds of each mode: about a second here; TCG runs Python ~15x slower
PYSCALE=1
[ -n "${PMT_VM:-}" ] && PYSCALE=8

# Samples in the eval loop without a Python frame (frozen modules' frames,
# the interpreter's start-up imports, count as Python frames): those whose
# stack ended early for tables still being read, which pmtrace counts in
# its summary (a busy machine reads them later), and beyond them at most
# this share.
NOPY=0.1

# pyframes MODE ROUNDS EXPECTED [SHARE]: folded stacks of a run, and the
# share of the samples running the script's calls whose Python frames end
# with EXPECTED (';'-separated names), lines as the script has them.
pyframes() {
	local mode=$1 rounds=$(($2 / PYSCALE)) err=$WORK/$1.err pending
	"$PMT" -e cpu-clock --freq 999 --stack user --folded -o "$WORK/$mode.folded" -- \
		"$PY" "$PYF" "$mode" "$rounds" >/dev/null 2>"$err" || { cat "$err" >&2; return 1; }
	pending=$(sed -n 's/^pmtrace: \([0-9]*\) user stacks met a file whose unwind tables were still being read.*/\1/p' "$err")
	check python_frames "$WORK/$mode.folded" "$3" "${4:-0.9}" $NOPY "${pending:-0}"
}

test_python_loop() {
	pyframes loop 300 "<module>:48;g:18;f:12-13"
}

test_python_recursion() {
	# the walker's depth: the same BPF code on every kernel (loaded and
	# checked in the guests by unwind_python and python_loop)
	requires userspace || return
	pyframes rec 1000 "<module>:51;$(printf 'rec:24;%.0s' $(seq 20))rec:23;f:12-13"
}

test_python_generator() {
	requires userspace || return
	pyframes gen 200 "<module>:53;gen:29;f:12-13"
}

# sorted() (C) calls the key function: a second call of the eval loop
test_python_c_callback() {
	requires userspace || return
	pyframes keyed 300 "keyed:33;keyed.<locals>.<lambda>:33;f:12-13" 0.8
}

# another thread: found in the interpreter's list of threads by its id
test_python_thread() {
	requires userspace || return
	pyframes thread 200 "Thread._bootstrap_inner:1038;Thread.run:975;worker:38;f:12-13"
}

# off the CPU in time.sleep, which lets go of the GIL: the thread is
# found in the interpreter's list; 10 naps of 50 ms, as long as the script
# measured its calls of time.sleep kept it off the CPU (wall time less its
# CPU time: on a busy machine a wakeup waits for a CPU), within
# preemptions just outside them (2%, under TCG 10%: the arm64 guest
# beside two CPU hogs had 538 ms against 510)
test_python_offcpu() {
	local napped tol=0.02
	[ -n "${PMT_VM:-}" ] && tol=0.10
	napped=$("$PMT" --offcpu --folded -o "$WORK/nap.folded" -- "$PY" "$PYF" nap 10 2>"$WORK/nap.err" |
		sed -n 's/^napped \([0-9]*\) us$/\1/p') || { cat "$WORK/nap.err" >&2; return 1; }
	[ -n "$napped" ] || { fail "the script said nothing of its naps"; return 1; }
	# the script's file as the interpreter makes it: absolute
	check offcpu_measured "$WORK/nap.folded" ";<module> ($PWD/$PYF:64);nap ($PWD/$PYF:42);" "$napped" $tol ||
		{ cat "$WORK/nap.err" >&2; return 1; }
}

# Streamed (JSON: the code object's address, the name, file and line)
# and pprof (function, file, line) show the same frames; --no-python
# none of them.
test_python_outputs() {
	requires host || return # user space's formats
	local rounds=$((100 / PYSCALE))
	"$PMT" -q --json -e cpu-clock --freq 499 --stack user -o "$WORK/s.json" -- "$PY" "$PYF" loop $rounds >/dev/null ||
		return 1
	"$PMT" -q -e cpu-clock --freq 499 --stack user --pprof "$WORK/p.pb.gz" -- "$PY" "$PYF" loop $rounds >/dev/null ||
		return 1
	"$PMT" -q --no-python -e cpu-clock --freq 499 --stack user --folded -o "$WORK/n.folded" -- \
		"$PY" "$PYF" loop $rounds >/dev/null || return 1
	requires go || return
	go tool pprof -raw "$WORK/p.pb.gz" >"$WORK/raw.txt" 2>"$WORK/pprof.err" ||
		{ cat "$WORK/pprof.err" >&2; fail "go tool pprof -raw"; return 1; }
	check python_outputs "$WORK/s.json" "$WORK/raw.txt" "$WORK/n.folded"
}

# Code objects CPython 3.11 deep-froze into the interpreter (posixpath's
# among them) are at the same address of /usr/bin/python3.11 in every
# process: read from the first process that ran one, shared by the next
# (python/codes.h). Two processes calling os.path.join in a loop: each
# has its join frames named, every line one the function's own code has
# (co_lines), and the second's were shared, not read.
test_python_frozen_code_shared() {
	requires userspace || return
	local prog='import os.path
for i in range(1000000 // '$PYSCALE'): os.path.join("a", "b")' lines pid n bad
	lines=$("$PY" -c 'import posixpath; print(" ".join(str(l) for l in sorted({l for _, _, l in posixpath.join.__code__.co_lines() if l})))') ||
		return 1
	"$PMT" -v --json -e cpu-clock --freq 499 --stack user -o "$WORK/j.json" -- \
		sh -c "'$PY' -c '$prog'; '$PY' -c '$prog'" >/dev/null 2>"$WORK/err" || { cat "$WORK/err" >&2; return 1; }
	grep '"comm":"python3.11"' "$WORK/j.json" | grep -o '"pid":[0-9]*' | sort -u | cut -d: -f2 >"$WORK/pids"
	expect_eq "python3.11 processes sampled" "$(wc -l <"$WORK/pids")" 2 || return 1
	while read -r pid; do
		n=$(grep "\"pid\":$pid," "$WORK/j.json" | grep -o 'join (<frozen posixpath>:[0-9]*)' | tee "$WORK/join" | wc -l)
		bad=$(grep -o ':[0-9]*)' "$WORK/join" | tr -d ':)' | sort -u | grep -vxF -f <(tr ' ' '\n' <<<"$lines"))
		note "pid $pid: $n samples in join (<frozen posixpath>)"
		[ "$n" -ge 5 ] || { fail "pid $pid: $n samples name join (<frozen posixpath>), 5 at least expected"; return 1; }
		[ -z "$bad" ] || { fail "pid $pid: join at lines $bad, not among its code's ($lines)"; return 1; }
	done <"$WORK/pids"
	n=$(sed -n 's/.*Python code objects: [0-9]* read from processes, \([0-9]*\) shared.*/\1/p' "$WORK/err")
	[ "${n:-0}" -ge 1 ] || { fail "no code object shared: $(grep 'code objects' "$WORK/err")"; return 1; }
}

# An interpreter of another version (a program exporting 3.12's symbols):
# a one-line notice, native frames, no failure.
test_python_unsupported() {
	"$PMT" -e cpu-clock --freq 999 --stack user --folded -o "$WORK/f.folded" -- "$TP/fakepy" 100000000 \
		>/dev/null 2>"$WORK/err" || { cat "$WORK/err" >&2; return 1; }
	grep -q "fakepy is CPython 3.12: Python frames are read from 3.11 only" "$WORK/err" ||
		{ cat "$WORK/err" >&2; fail "no notice"; return 1; }
	grep -q ';main;_PyEval_EvalFrameDefault [0-9]*$' "$WORK/f.folded" ||
		{ head "$WORK/f.folded" >&2; fail "native frames"; return 1; }
	! grep -q '\[python\]' "$WORK/f.folded" || { fail "Python frames of a 3.12"; return 1; }
}
