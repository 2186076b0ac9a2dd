# shellcheck shell=bash
# Runtime tests, area filter: Filters decided in the kernel: exact verdicts, context loads, diagnostics.
# Sourced by tests/runtime/runner.sh after lib.sh; each test_NAME runs alone
# under its own timeout (timeout_NAME=SECS, default $DEFAULT_TIMEOUT).

# The tests the QEMU guests run too (runner.sh): what the kernel decides;
# every_kernel_tests in every guest, guest_tests dealt between them.
# shellcheck disable=SC2034 # read by runner.sh
guest_tests="filter_exact filter_pid_system_wide"

# Filtered and unfiltered copies of the same tracepoints in one run: the
# kernel's verdicts must equal the predicate applied to the unfiltered stream.
test_filter_exact() {
	local out=$WORK/filter.json err=$WORK/filter.err
	"$PMT" --json -o "$out" \
		--tp syscalls:sys_enter_getppid \
		--tp syscalls:sys_enter_getppid --filter 'comm == "mix-a"' \
		--tp syscalls:sys_enter_getppid --filter 'comm ~ "mix-*" && !(comm == "mix-b")' \
		--tp syscalls:sys_enter_getppid --filter 'comm == "other" || comm ~ "m?x[e]r"' \
		--tp syscalls:sys_enter_openat \
		--tp syscalls:sys_enter_openat --filter 'flags & 1 || (flags & 0x80000 && flags < 0x80003)' \
		--tp sched:sched_process_exec \
		--tp sched:sched_process_exec --filter 'filename ~ "*/mix*"' \
		-- sh -c "/bin/true; exec $TP/mixer" 2>"$err" || { cat "$err" >&2; return 1; }
	grep -q "filtered out in the kernel" "$err" || { cat "$err" >&2; fail "no filtered count in the summary"; return 1; }
	check filter_exact "$out" || return 1
}

test_filter_pid_system_wide() {
	local out=$WORK/fpid.txt err=$WORK/fpid.err pid
	"$TP"/getppid_loop 4000 200 >"$WORK/child.out" &
	pid=$!
	kill -STOP $pid
	"$PMT" -a --tp syscalls:sys_enter_getppid --filter "pid == $pid" -o "$out" 2>"$err" &
	local tracer=$!
	wait_for "$err" tracing 600 || return 1
	kill -CONT $pid
	while kill -0 $pid 2>/dev/null; do nap 0.05; done
	sleep 0.2
	kill -INT $tracer
	wait $tracer || { cat "$err" >&2; return 1; }
	expect_eq "events of pid $pid" "$(grep -c " $pid/$pid \[" "$out")" 4000 || return 1
	expect_eq "other events" "$(grep -vc " $pid/$pid \[" "$out")" 0
}

# Tracepoint fields in a record's first 128 bytes are loaded from the BPF
# context (no copy); a session with a shorter record (getppid: 12 bytes)
# reads the others with a helper instead. Same answers either way: signed
# 8-byte, 8-byte unsigned args, 4-byte signed keys.
test_filter_ctx_fields() {
	local out extra short=(--tp syscalls:sys_enter_getppid --filter pid==0)
	# shellcheck disable=SC2086 # $extra is empty or the words of short
	for extra in "" "${short[*]}"; do
		out=$("$PMT" -q --tp syscalls:sys_exit_read --filter 'ret == -21' $extra --count --by probe -- cat / 2>/dev/null)
		expect_eq "EISDIR reads${extra:+ beside getppid}" "$out" "@[tracepoint:syscalls:sys_exit_read]: 1" || return 1
		out=$("$PMT" -q --tp syscalls:sys_enter_read --filter 'fd == 100 && count >= 64 && count < 1024' \
			$extra --count --by probe -- "$TP"/reader 5)
		expect_eq "reads of 64..512 bytes${extra:+ beside getppid}" "$out" "@[tracepoint:syscalls:sys_enter_read]: 20" || return 1
		"$PMT" -q --json --tp sched:sched_switch --filter 'prev_comm == "sleeper" && prev_prio > 100 && prev_pid > 1' \
			$extra -o "$WORK/ctx.json" -- "$TP"/sleeper 5 1 >/dev/null || return 1
		check filter_ctx_fields "$WORK/ctx.json" || return 1
	done
}

test_filter_errors() {
	# the whole diagnostic: message, the filter with a caret, the hint
	usage_error "unknown field 'prev_pidd' for sched:sched_switch" --tp sched:sched_switch --filter 'prev_pidd == 0' || return 1
	expect_output unknown_field.err "$WORK/usage.err" || return 1
	usage_error "'next_comm' is a string, compared with a number" --tp sched:sched_switch --filter 'next_comm == 1' || return 1
	usage_error "--filter must follow the probe" --filter 'pid == 1' --tp sched:sched_switch || return 1
	# a glob: the filter must fit every probe it expands to
	usage_error "unknown field 'next_pid' for sched:sched_process_exec" --tp 'sched:sched_process_e*' --filter 'next_pid == 1' || return 1
	usage_error "filter too large" --tp sched:sched_switch --filter "$("$PY3" -c 'print(" || ".join(f"pid == {i}" for i in range(40)))')" || return 1
	no_leftovers
}
