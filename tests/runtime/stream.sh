# shellcheck shell=bash
# Runtime tests, area stream: Streaming: exact counts, targets, JSON, order, perf as the oracle.
# Sourced by tests/runtime/runner.sh after lib.sh; each test_NAME runs alone
# under its own timeout (timeout_NAME=SECS, default $DEFAULT_TIMEOUT).

# The tests the QEMU guests run too (runner.sh): what the kernel decides;
# every_kernel_tests in every guest, guest_tests dealt between them.
# shellcheck disable=SC2034 # read by runner.sh
guest_tests="getppid_exact children_followed pid_exit_seen pid_filter lost_reported command_exits_seen"
# shellcheck disable=SC2034 # read by runner.sh
every_kernel_tests="lean_object_as_whole"

test_getppid_exact() {
	local out=$WORK/getppid.txt n pid nr
	# --raw: every field (the print format of sys_enter_getppid is empty)
	"$PMT" -q --raw --tp syscalls:sys_enter_getppid -o "$out" -- "$TP"/getppid_loop 5000 >"$WORK/child.out" || return 1
	pid=$(sed -n 's/^pid=//p' "$WORK/child.out")
	n=$(grep -c 'syscalls:sys_enter_getppid:' "$out")
	expect_eq "events" "$n" 5000 || return 1
	n=$(grep -vc " $pid/$pid \[" "$out")
	expect_eq "events from another pid" "$n" 0 || return 1
	nr=$(syscall_nr getppid) || return 1
	grep -q "__syscall_nr=$nr" "$out" || { fail "field __syscall_nr=$nr missing"; return 1; }
}

# A plain stream loads the lean BPF object (bpf/lean.bpf.h: only its
# programs whole, a fourteenth of the whole one's bytes), an aggregation
# of tracepoints without stacks the flat one; the same sessions on the
# whole object (PMT_NO_LEAN=1) print the same records and maps. Sessions
# that need another program take the whole object at once (a lean one is
# never opened and found wanting).
lean_run() { # LABEL WANT-OBJECT PMTRACE-ARGS...
	local label=$1 want=$2
	shift 2
	"$PMT" -v -o "$WORK/$label.txt" "$@" 2>"$WORK/$label.err" >/dev/null || { cat "$WORK/$label.err" >&2; return 1; }
	grep -q "BPF object: the $want one" "$WORK/$label.err" ||
		{ fail "$label: not the $want object"; grep "object" "$WORK/$label.err" >&2; return 1; }
	! grep -q "cuts short" "$WORK/$label.err" || { fail "$label: a lean object opened in vain"; return 1; }
}

test_lean_object_as_whole() {
	local m tp="--tp syscalls:sys_enter_getppid --tp sched:sched_process_exit"
	local prog='tracepoint:syscalls:sys_enter_getppid { @n[comm] = count(); @s = sum(pid > 0); }'
	for m in lean whole; do
		# shellcheck disable=SC2086 # two options
		PMT_NO_LEAN=$([ $m = lean ] && echo 0 || echo 1) lean_run "$m" $m --raw $tp \
			--filter 'comm == "getppid_loop"' -- "$TP"/getppid_loop 3000 || return 1
		expect_eq "$m: getppid calls" "$(grep -c 'sys_enter_getppid:' "$WORK/$m.txt")" 3000 || return 1
		expect_eq "$m: exits" "$(grep -c 'sched_process_exit:' "$WORK/$m.txt")" 1 || return 1
		# the records' fields, the pid and time aside
		sed 's/^.*\] *[0-9.]*: //; s/pid=[0-9]*//g' "$WORK/$m.txt" >"$WORK/$m.fields"
	done
	diff -u "$WORK/whole.fields" "$WORK/lean.fields" >&2 || { fail "the lean object's records differ"; return 1; }
	# aggregations, by the option and by a program (the generated
	# programs' tail calls among them, where the kernel has them)
	lean_run flat flat --tp syscalls:sys_enter_getppid --count --by comm -- "$TP"/getppid_loop 2000 || return 1
	PMT_NO_LEAN=1 lean_run flatw whole --tp syscalls:sys_enter_getppid --count --by comm -- "$TP"/getppid_loop 2000 ||
		return 1
	expect_eq "the flat object's count" "$(grep '^@' "$WORK/flat.txt")" "@[getppid_loop]: 2000" || return 1
	diff -u "$WORK/flatw.txt" "$WORK/flat.txt" >&2 || { fail "the flat object's map differs"; return 1; }
	lean_run flatp flat -e "$prog" -- "$TP"/getppid_loop 2000 || return 1
	PMT_NO_LEAN=1 lean_run flatpw whole -e "$prog" -- "$TP"/getppid_loop 2000 || return 1
	expect_eq "the flat object's maps" "$(grep '^@' "$WORK/flatp.txt" | tr '\n' ';')" "@n[getppid_loop]: 2000;@s: 2000;" ||
		return 1
	diff -u "$WORK/flatpw.txt" "$WORK/flatp.txt" >&2 || { fail "the flat object's program's maps differ"; return 1; }
	# each needs a program the lean objects cut short
	lean_run routed whole --tp 'syscalls:sys_enter_get*' -- "$TP"/getppid_loop 10 || return 1
	lean_run twice whole --tp syscalls:sys_enter_getppid --tp syscalls:sys_enter_getppid \
		--filter 'common_pid > 0' -- "$TP"/getppid_loop 10 || return 1
	lean_run stack whole --tp syscalls:sys_enter_getppid --stack kernel -- "$TP"/getppid_loop 10 || return 1
	lean_run stackagg whole --tp syscalls:sys_enter_getppid --count --by kstack -- "$TP"/getppid_loop 10
}

test_children_followed() {
	local out=$WORK/fork.json
	"$PMT" -q --json --tp syscalls:sys_enter_getppid -o "$out" -- "$TP"/getppid_loop 700 0 3 >/dev/null || return 1
	check children_followed "$out" || return 1
}

test_exit_status_passthrough() {
	"$PMT" -q --tp sched:sched_process_exit -o /dev/null -- sh -c 'exit 7'
	expect_eq "exit status" $? 7 || return 1
	"$PMT" -q --tp sched:sched_process_exit -o /dev/null -- sh -c 'kill -TERM $$'
	expect_eq "exit status of a signalled command" $? 143
}

# Exits of the traced processes: every probe of a process's exit sees it
# still traced (the targets let go of a task when it is freed, after its
# exit's probes ran). pmtxs.sh runs pmtxa 3 times and pmtxb twice (copies
# of true); with -- CMD the six exits by name, as bpftrace -c counts them
# system wide; with -p PID the script's own exit (children not followed).
exits_script() {
	cp /bin/true "$WORK/pmtxa" && cp /bin/true "$WORK/pmtxb" || return 1
	printf '#!/bin/sh\n"%s" && "%s" && "%s" && "%s" && "%s"\nexit 0\n' \
		"$WORK/pmtxa" "$WORK/pmtxa" "$WORK/pmtxa" "$WORK/pmtxb" "$WORK/pmtxb" >"$WORK/pmtxs.sh"
	chmod +x "$WORK/pmtxs.sh"
}

test_command_exits_seen() {
	exits_script || return 1
	"$PMT" -q --tp sched:sched_process_exit --count --by comm -o "$WORK/pmt.txt" -- "$WORK/pmtxs.sh" ||
		return 1
	printf '%s\n' '@[pmtxs.sh]: 1' '@[pmtxb]: 2' '@[pmtxa]: 3' >"$WORK/want.txt"
	grep '^@' "$WORK/pmt.txt" >"$WORK/got.txt"
	diff -u "$WORK/want.txt" "$WORK/got.txt" >&2 || { fail "exits of -- CMD's processes"; return 1; }
	# streamed, each exit a line
	"$PMT" -q --tp sched:sched_process_exit -o "$WORK/s.txt" -- "$WORK/pmtxs.sh" || return 1
	expect_eq "exits streamed" "$(grep -c 'sched:sched_process_exit:' "$WORK/s.txt")" 6 || return 1
	oracle_on_host || return 0
	requires bpftrace || return
	# bpftrace -c runs ELF files only: the script through sh, whose own
	# exit (comm sh) its filter leaves out
	bpftrace -q -e 'tracepoint:sched:sched_process_exit /strncmp(comm, "pmtx", 4) == 0/ { @[comm] = count(); }' \
		-c "/bin/sh $WORK/pmtxs.sh" 2>/dev/null | grep '^@' >"$WORK/bt.txt"
	grep -v pmtxs.sh "$WORK/got.txt" | diff -u "$WORK/bt.txt" - >&2 || { fail "not as bpftrace -c counts them"; return 1; }
}

test_pid_exit_seen() {
	local pid tracer
	exits_script || return 1
	"$WORK/pmtxs.sh" &
	pid=$!
	kill -STOP $pid
	# stops by itself when the process exits
	timeout 60 "$PMT" --tp sched:sched_process_exit --count --by comm -p $pid -o "$WORK/pmt.txt" 2>"$WORK/err" &
	tracer=$!
	wait_for "$WORK/err" "Ctrl-C" 600 $tracer || return 1
	kill -CONT $pid
	wait $pid
	wait $tracer || { cat "$WORK/err" >&2; fail "pmtrace -p"; return 1; }
	expect_eq "exits of -p's process" "$(grep '^@' "$WORK/pmt.txt")" '@[pmtxs.sh]: 1'
}

test_pid_filter() {
	local out=$WORK/pid.txt err=$WORK/pid.err pid n
	# held stopped (within its 200 ms nap) until the tracer is ready
	"$TP"/getppid_loop 3000 200 >"$WORK/child.out" &
	pid=$!
	kill -STOP $pid
	# stops by itself when the process exits
	timeout 60 "$PMT" --tp syscalls:sys_enter_getppid -p "$pid" -o "$out" 2>"$err" &
	local tracer=$!
	wait_for "$err" tracing 600 || return 1
	kill -CONT $pid
	wait $tracer
	expect_eq "exit status" $? 0 || return 1
	n=$(grep -c " $pid/$pid \[" "$out")
	expect_eq "events of -p $pid" "$n" 3000 || return 1
	expect_eq "other events" "$(grep -vc " $pid/$pid \[" "$out")" 0
}

test_json_valid() {
	local out=$WORK/ev.json
	"$PMT" -q --json --tp 'sched:sched_process_*' --tp syscalls:sys_enter_openat -o "$out" \
		-- sh -c 'cat /etc/hostname >/dev/null; true' || return 1
	check json_valid "$out" || return 1
}

test_data_loc_string() {
	local out=$WORK/exec.txt
	"$PMT" -q --tp sched:sched_process_exec -o "$out" -- "$TP"/sleeper 1 1 >/dev/null || return 1
	grep -q "filename=$TP/sleeper pid=" "$out" || { cat "$out" >&2; fail "exec filename not decoded"; }
}

test_timestamp_order() {
	local out=$WORK/order.json
	"$PMT" -q --json -a --tp sched:sched_switch --tp sched:sched_wakeup -o "$out" -d 2 &
	local tracer=$!
	# load both CPUs so events interleave
	"$TP"/getppid_loop 2000000 >/dev/null & "$TP"/getppid_loop 2000000 >/dev/null & "$TP"/sleeper 200 2 >/dev/null
	wait $tracer || return 1
	wait
	check timestamp_order "$out" || return 1
}

# A sleeper pinned to CPU 0 and one to the last CPU: CPU 0's switches are
# all there, the other's none (an idle CPU 0 alone would pass an empty
# trace)
test_cpu_filter() {
	local out=$WORK/cpu.json err=$WORK/cpu.err
	"$PMT" --json -C 0 --tp sched:sched_switch -o "$out" 2>"$err" &
	local tracer=$!
	wait_for "$err" "tracing" || return 1
	local other
	other=$("$PY3" -c 'import os; print(max(os.sched_getaffinity(0)))')
	taskset -c 0 "$TP"/sleeper 20 1 >"$WORK/c0.out" &
	# a guest with one CPU has no other to keep out
	if [ "$other" != 0 ]; then taskset -c "$other" "$TP"/sleeper 20 1 >"$WORK/c1.out"; fi
	wait $!
	kill -INT $tracer
	wait $tracer || { cat "$err" >&2; return 1; }
	check cpu_filter "$out" "$(sed -n 's/^pid=//p' "$WORK/c0.out")" \
		"$(sed -n 's/^pid=//p' "$WORK/c1.out" 2>/dev/null)" || return 1
}

# perf is the oracle: both see the same sched_switch events of the child.
test_sched_switch_vs_perf() {
	requires perf || return
	local ours=$WORK/ours.json theirs=$WORK/perf.data err=$WORK/pmt.err
	perf record -q -a -e sched:sched_switch -o "$theirs" 2>"$WORK/perf.err" &
	local perf_pid=$!
	"$PMT" --json -a --tp sched:sched_switch -o "$ours" 2>"$err" &
	local pmt_pid=$!
	wait_for "$err" "tracing" || return 1
	sleep 2.5	# perf record has no ready signal; give it time to open its events
	# On CPU 0: perf on these VMs misses idle->task switches on CPU 1
	# even when it runs alone (pmtrace sees them), so only CPU 0 agrees.
	taskset -c 0 "$TP"/sleeper 40 2 >"$WORK/child.out"
	sleep 0.2
	kill -INT $pmt_pid $perf_pid
	wait $pmt_pid || { cat "$err" >&2; fail "pmtrace failed"; return 1; }
	wait $perf_pid
	local pid
	pid=$(sed -n 's/^pid=//p' "$WORK/child.out")
	perf script -i "$theirs" -F trace 2>/dev/null >"$WORK/perf.txt"
	check sched_switch_vs_perf "$ours" "$WORK/perf.txt" "$pid" || return 1
}

# The events a run wrote and lost, from its summary in FILE (its
# stderr; a filter's count may follow): "EVENTS LOST", empty fields
# where it printed none.
run_counts() { # FILE
	sed -n 's/^pmtrace: \([0-9]*\) events, \([0-9]*\) lost\(, [0-9]* filtered out in the kernel\)\{0,1\}$/\1 \2/p' "$1"
}

test_lost_reported() {
	local err=$WORK/lost.err events lost
	# one page per CPU and a flood: the rings overflow
	"$PMT" --buffer-pages 1 --tp syscalls:sys_enter_getppid -o /dev/null \
		-- "$TP"/getppid_loop 300000 >/dev/null 2>"$err" || { cat "$err" >&2; return 1; }
	read -r events lost <<<"$(run_counts "$err")"
	if [ -z "$lost" ] || [ "$lost" -eq 0 ]; then cat "$err" >&2; fail "no lost events reported"; return 1; fi
	grep -q "warning: lost $lost events" "$err" || fail "no loss warning"
	# every call is accounted for: written or reported lost
	expect_eq "events + lost" $((events + lost)) 300000
}

# The payload of a text line is what perf script prints for the same
# event: perf record -k mono and pmtrace, both system-wide, record one run
# of a copy of bash named pmtmix (forks, opens, a signal to itself, timed
# reads); every event in its context, as both saw it, must be the same.
test_payload_vs_perf_script() {
	requires perf || return
	local tps="sched:sched_switch sched:sched_process_exec sched:sched_process_fork sched:sched_wakeup_new
		syscalls:sys_enter_openat syscalls:sys_exit_openat kmem:kmalloc kmem:kfree signal:signal_generate
		signal:signal_deliver timer:hrtimer_start timer:hrtimer_cancel" tp pargs=() eargs=()
	for tp in $tps; do
		pargs+=(--tp "$tp")
		eargs+=(-e "$tp")
	done
	cp "$(command -v bash)" "$WORK/pmtmix"
	mkfifo "$WORK/fifo"
	perf_record_ready -k mono -a "${eargs[@]}" -o "$WORK/mix.data" || return 1
	"$PMT" -a "${pargs[@]}" -o "$WORK/mix.txt" 2>"$WORK/pmt.err" &
	local pm=$!
	wait_for "$WORK/pmt.err" "tracing" 1200 || { kill -INT $pm; perf_record_stop; return 1; }
	# shellcheck disable=SC2016 # expanded by the copy of bash
	"$WORK/pmtmix" -c 'trap "true" USR1; kill -USR1 $$; exec 3<>"$1"
		for i in 1 2 3; do read -t 0.02 -u 3; done; /bin/true; cat /dev/null; exit 0' pmtmix "$WORK/fifo"
	sleep 0.5
	kill -INT $pm
	wait $pm || { perf_record_stop; return 1; }
	perf_record_stop
	perf script -i "$WORK/mix.data" -F comm,tid,cpu,time,event,trace 2>/dev/null >"$WORK/perf.txt" || return 1
	check payload_vs_perf_script "$WORK/mix.txt" "$WORK/perf.txt" pmtmix "$WORK/pmt.err"
}

# A writer slower than the events (a million getppid calls from two
# loops at once, formatted to /dev/null: the rings fill): each CPU's events wait for ordering at
# most as much as its ring holds, then the ring is left to the kernel,
# which counts what it has no room for. Every call written or reported
# lost, and pmtrace's peak RSS within 6 MiB (the rings' size twice, and
# 2 MiB of the writer's and the reorder's own) of a run of 10 calls; it
# held 65-70 MB more when it read the rings on. (The kernel's BTF, parsed
# whole at the start until 24a1159, had set both runs' peak: 4,216 KB
# over once it was gone, in CI, 4,660 here.)
test_slow_writer_memory_bounded() {
	requires native || return
	local err=$WORK/slow.err events lost small big
	.output/tools/maxrss "$WORK/rss" "$PMT" --tp syscalls:sys_enter_getppid -o /dev/null \
		-- "$TP"/getppid_loop 10 >/dev/null 2>"$err" || { cat "$err" >&2; return 1; }
	small=$(cat "$WORK/rss")
	# two loops at once, one a CPU: twice the events one writer formats
	# (the shell's own getppid left out)
	.output/tools/maxrss "$WORK/rss" "$PMT" --tp syscalls:sys_enter_getppid -o /dev/null \
		--filter 'comm == "getppid_loop"' -- sh -c "$TP/getppid_loop 500000 & $TP/getppid_loop 500000; wait" >/dev/null 2>"$err" ||
		{ cat "$err" >&2; return 1; }
	big=$(cat "$WORK/rss")
	read -r events lost <<<"$(run_counts "$err")"
	note "peak RSS $small KB for 10 calls, $big KB for 1,000,000 ($events written, $lost lost)"
	expect_eq "events + lost" $((events + lost)) 1000000 || return 1
	[ "$big" -le $((small + 6144)) ] || fail "peak RSS $big KB: more than 6 MiB over the $small KB of 10 calls"
}

# Until process PID writes under 1 MiB a quarter second (the machine's
# own events make 0.45 here), or under an eighth of its busiest quarter
# second since (a busy machine makes more), 30 s at most: a reader
# caught up. Its bytes written, in /proc/PID/io, read by bash alone.
caught_up() { # PID
	local n=120 w=-1 last d peak=0 line
	while [ $n -gt 0 ]; do
		last=$w
		while read -r line; do
			[ "${line%% *}" != wchar: ] || w=${line#* }
		done <"/proc/$1/io"
		if [ "$last" -ge 0 ]; then
			d=$((w - last))
			[ $d -le $peak ] || peak=$d
			[ $d -ge 1048576 ] || return 0
			[ $((d * 8)) -ge $peak ] || return 0
		fi
		nap 0.25
		n=$((n - 1))
	done
}

# The flood: 260 tracepoints of the commonest categories streamed
# system-wide to a file while bursts of perf bench sched messaging run
# (some 600,000 events a second in a burst here). The rings are sized by
# the probes' number (16 MiB a CPU, seen in pmtrace's mappings), the reader
# drains them while it writes, and nothing is lost: the pauses between
# bursts are the reader's to catch up in (as they are perf record's),
# each until it has (a machine whose reader gets a fraction of a CPU
# needs longer than a quiet one's quarter second).
test_flood_no_loss() {
	requires perf host native || return
	local err=$WORK/flood.err pm args=() tp n pages events lost range tfs=/sys/kernel/tracing
	while read -r tp; do args+=(--tp "$tp"); done < <(
		for c in sched timer irq irq_vectors kmem raw_syscalls signal task workqueue writeback \
			block filemap ext4 rcu sock skb net napi tlb mmap_lock migrate compaction; do
			[ -d "$tfs/events/$c" ] || continue
			for f in "$tfs/events/$c"/*/format; do
				n=${f%/format} n=${n##*/}
				case $n in irq_work*) continue ;; esac # no BPF there
				echo "$c:$n"
			done
		done | head -260)
	"$PMT" -a "${args[@]}" -o "$WORK/flood.out" 2>"$err" &
	pm=$!
	wait_for "$err" "Ctrl-C" 600 $pm || { kill -INT $pm; return 1; }
	# each CPU's ring: its pages and the header page, mapped once
	pages=$(while read -r range _ _ _ _ n; do
		[ "$n" = "anon_inode:[perf_event]" ] || continue
		echo $(((16#${range#*-} - 16#${range%-*}) / 4096 - 1))
	done <"/proc/$pm/maps" | sort -u | tr '\n' ' ')
	# (some 270,000 events a burst on a quiet machine here, more on a
	# busy one; five took 65 s of CI's busy pass beside two CPU hogs)
	# (bursts until 600,000 lines are written, three at most: beside
	# CI's guests their own events made one burst's run 8.6 million
	# events and 96 s of the busy pass)
	for _ in 1 2 3; do
		perf bench sched messaging -g 1 -l 20 >/dev/null
		caught_up $pm
		[ "$(wc -l <"$WORK/flood.out")" -lt 600000 ] || break
	done
	kill -INT $pm
	wait $pm || { cat "$err" >&2; return 1; }
	read -r events lost <<<"$(run_counts "$err")"
	note "$((${#args[@]} / 2)) tracepoints, rings of $pages pages a CPU, $events events, ${lost:-?} lost"
	[ $((${#args[@]} / 2)) -ge 200 ] || { fail "only $((${#args[@]} / 2)) tracepoints here"; return 1; }
	expect_eq "ring pages per CPU" "$pages" "4096 " || return 1
	[ "${events:-0}" -ge 500000 ] || { fail "only ${events:-0} events: no flood"; return 1; }
	expect_eq "events lost" "$lost" 0
}
# shellcheck disable=SC2034 # read by runner.sh
timeout_flood_no_loss=240
