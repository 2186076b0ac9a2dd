# shellcheck shell=bash
# Runtime tests, area offcpu: --offcpu, time off the CPU by stack, against
# a program's known sleeps and pipe waits and against libbpf-tools'
# offcputime on the same run.
# Sourced by tests/runtime/runner.sh after lib.sh; each test_NAME runs alone
# under its own timeout (timeout_NAME=SECS, default $DEFAULT_TIMEOUT).

# The tests the QEMU guests run too (runner.sh): what the kernel decides;
# every_kernel_tests in every guest, guest_tests dealt between them.
# shellcheck disable=SC2034 # read by runner.sh
guest_tests="offcpu_known_times"
# what each took in a guest beside two CPU hogs (make test, CI's
# load), seconds, where 15 or more (runner.sh deals guest_tests by
# it; 10 where not given)
# shellcheck disable=SC2034 # read by runner.sh
guest_secs_offcpu_known_times=20

OW=$TP/offwaiter
# offwaiter measures how long its waits kept it off the CPU (wall time
# less its CPU time: a busy machine makes them longer, a timer firing
# late, a woken thread waiting for a CPU) and prints "nap US" and
# "wait_pipe US": the time off the CPU in each stack is that, within
# preemptions just outside the measured calls (more under TCG).
TOL=0.05
[ -n "${PMT_VM:-}" ] && TOL=0.15
# measured WHAT OUT: what offwaiter said it measured
measured() { awk -v w="$1" '$1 == w { print $2 }' "$2"; }

# offwaiter 10 20: nap() sleeps 10 x 20 ms, wait_pipe() waits 10 x 20 ms
# on a pipe; each as long as offwaiter measured it, in its own stack.
test_offcpu_known_times() {
	"$PMT" -q --offcpu --folded -o "$WORK/o.folded" -- "$OW" 10 20 100 >"$WORK/o.out" 2>"$WORK/o.err" ||
		{ cat "$WORK/o.err" >&2; return 1; }
	# what pmtrace said (lost events, stacks cut short), shown if a check fails
	cat "$WORK/o.err" >&2
	check offcpu_measured "$WORK/o.folded" ";nap;" "$(measured nap "$WORK/o.out")" $TOL || return 1
	check offcpu_measured "$WORK/o.folded" ";wait_pipe;" "$(measured wait_pipe "$WORK/o.out")" $TOL || return 1
	# one comm, both stacks in microseconds, kernel frames innermost
	# (arm64's kernel gives the tracepoint's caller twice, as perf does)
	grep -Eq '^offwaiter;_start;.*;main;nap;sleep_ms;.*;do_nanosleep;schedule;__schedule(;__schedule)? [0-9]*$' "$WORK/o.folded" ||
		{ cat "$WORK/o.folded" >&2; fail "nap's stack"; return 1; }
}

# PID holds a BPF link open (what attached it)
has_bpf_link() {
	local f
	for f in /proc/"$1"/fd/*; do
		[ "$(readlink "$f" 2>/dev/null)" != "anon_inode:bpf_link" ] || return 0
	done
	return 1
}

# libbpf-tools' offcputime on the same process at the same time: the same
# pipe and sleep totals (5%), the same kernel stacks below the tracing
# frames (its own program's, and __traceiter_sched_switch that two
# tracers on one tracepoint add).
test_offcpu_vs_offcputime() {
	command -v offcputime >/dev/null || { skip "needs offcputime (libbpf-tools: make test-deps)"; return; }
	local pid
	# its warm-up lasts until both tracers are attached (SIGUSR1)
	"$OW" 10 20 120000 >"$WORK/ow.out" &
	local prog=$!
	wait_for "$WORK/ow.out" "^pid " || return 1
	pid=$(awk '/^pid/{print $2}' "$WORK/ow.out")
	offcputime -p "$pid" 180 >"$WORK/oc.txt" 2>"$WORK/oc.err" &
	local oc=$!
	"$PMT" --offcpu --stack kernel --folded -p "$pid" -o "$WORK/pm.folded" 2>"$WORK/pm.err" &
	local pm=$!
	# offcputime says nothing once attached: its link is there
	local tries=$((600 * ${PMT_SLOWDOWN:-100} / 100))
	until has_bpf_link $oc; do
		tries=$((tries - 1))
		if [ $tries -le 0 ] || ! kill -0 $oc 2>/dev/null; then
			cat "$WORK/oc.err" >&2
			fail "offcputime did not attach"
			kill $prog $pm
			return 1
		fi
		nap 0.05
	done
	wait_for "$WORK/pm.err" "Ctrl-C to stop" 600 $pm || { kill $prog $oc; return 1; }
	kill -USR1 $prog
	wait $pm || { cat "$WORK/pm.err" >&2; return 1; }
	wait $prog
	kill -INT $oc 2>/dev/null
	wait $oc
	# a switch back the kernel did not trace: pmtrace closes the wait
	# from the thread's run time (and says how many times); offcputime
	# loses it, a wait of 20 ms at most each
	local unseen
	unseen=$(sed -n 's/^pmtrace: --offcpu: \([0-9]*\) times a thread left a CPU with no sched_switch.*/\1/p' "$WORK/pm.err")
	# pipe_read: anon_pipe_read since 6.14
	check offcpu_vs_offcputime "$WORK/pm.folded" "$WORK/oc.txt" "${unseen:-0}" pipe_read do_nanosleep
}

# --state and the block bounds select what offcputime's --state, -m, -M do.
test_offcpu_filters() {
	"$PMT" -q --offcpu --state runnable --folded -o "$WORK/r.folded" -- "$OW" 10 20 100 >/dev/null || return 1
	# the sleeps are no runnable time: only a wait whose wake-up came
	# between its setting its state and its switch (or a write that wakes
	# the child, preempted) is runnable, rightly, a little of the 400 ms;
	# in a guest whose vCPU a busy host takes away right there, its timer
	# fires first more often (seen beside the host suite: past 20 ms;
	# allowed: a quarter of the 400 ms)
	local most=20000
	[ -z "${PMT_VM:-}" ] || most=100000
	awk -v most=$most '/do_nanosleep|pipe_read/ { s += $NF } END { exit s >= most }' "$WORK/r.folded" ||
		{ cat "$WORK/r.folded" >&2; fail "sleeps counted as runnable"; return 1; }
	"$PMT" -q --offcpu --state blocked --folded -o "$WORK/b.folded" -- "$OW" 10 20 100 >"$WORK/b.out" || return 1
	check offcpu_measured "$WORK/b.folded" ";nap;" "$(measured nap "$WORK/b.out")" $TOL || return 1
	# what the bounds promise of each wait, read from sums by stack:
	# --min-block 30000 counts waits of 30 ms or more, so a stack shown
	# holds at least that (a 20 ms nap that a busy machine stretches past
	# 30 ms is rightly one); --max-block 10000 counts waits of 10 ms at
	# most: the 10 naps and 10 pipe waits of 20 ms are none of them, and
	# what short waits the two functions have (a runnable wait for a
	# mutex in pipe_read) cannot add up to the 10 x 20 ms they would
	"$PMT" -q --offcpu --min-block 30000 --folded -o "$WORK/m.folded" -- "$OW" 10 20 100 >/dev/null || return 1
	awk '$NF < 30000 { bad = 1 } END { exit bad }' "$WORK/m.folded" ||
		{ cat "$WORK/m.folded" >&2; fail "a stack of less than --min-block 30000"; return 1; }
	"$PMT" -q --offcpu --max-block 10000 --folded -o "$WORK/x.folded" -- "$OW" 10 20 100 >/dev/null || return 1
	local fn
	for fn in nap wait_pipe; do
		awk -v fn=";$fn;" 'index($0, fn) { s += $NF } END { exit s >= 100000 }' "$WORK/x.folded" ||
			{ cat "$WORK/x.folded" >&2; fail "$fn: its 20 ms waits counted under --max-block 10000"; return 1; }
	done
	# by comm, as a bpftrace-style map of microseconds
	"$PMT" -q --offcpu --by comm -- "$OW" 10 20 100 | grep '^@\[offwaiter\]: ' >"$WORK/c.txt" || return 1
	awk '{ if ($2 < 400000 * 0.95) exit 1 }' "$WORK/c.txt" || { cat "$WORK/c.txt" >&2; fail "by comm: under 400 ms"; return 1; }
	# usage errors are user space's, the same on every kernel
	[ -z "${PMT_VM:-}" ] || return 0
	usage_error "--offcpu takes sched:sched_switch itself" --offcpu --tp sched:sched_switch -- "$OW" 1 1 1 || return 1
	usage_error "--state goes with --offcpu" --state blocked --tp sched:sched_switch -- "$OW" 1 1 1 || return 1
	usage_error "--state: 'sleeping': expected blocked" --offcpu --state sleeping -- "$OW" 1 1 1 || return 1
	usage_error "--offcpu sums the time off the CPU: it takes no --count" --offcpu --count -- "$OW" 1 1 1 || return 1
	no_leftovers
}

# The flame graph says what it weighs; pprof's second sample type is
# off-cpu/nanoseconds: 5 x 20 ms in nap and in wait_pipe.
test_offcpu_flamegraph_pprof() {
	requires userspace || return
	"$PMT" -q --offcpu --flamegraph "$WORK/o.svg" -- "$OW" 5 20 100 >/dev/null || return 1
	grep -q "Off-CPU Time" "$WORK/o.svg" || { fail "flame graph title"; return 1; }
	requires go || return
	"$PMT" -q --offcpu --pprof "$WORK/o.pb.gz" -- "$OW" 5 20 100 >"$WORK/p.out" || return 1
	go tool pprof -raw "$WORK/o.pb.gz" >"$WORK/raw.txt" 2>"$WORK/pprof.err" ||
		{ cat "$WORK/pprof.err" >&2; fail "go tool pprof -raw"; return 1; }
	grep -q "samples/count off-cpu/nanoseconds" "$WORK/raw.txt" || { head "$WORK/raw.txt" >&2; fail "sample types"; return 1; }
	check offcpu_pprof_total "$WORK/raw.txt" "$(measured nap "$WORK/p.out")" "$(measured wait_pipe "$WORK/p.out")" $TOL
}
