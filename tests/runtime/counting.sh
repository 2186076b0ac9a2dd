# shellcheck shell=bash
# Runtime tests, area counting: --stat against perf stat on the same
# commands, and --counter's per-call counts.
# Sourced by tests/runtime/runner.sh after lib.sh; each test_NAME runs alone
# under its own timeout (timeout_NAME=SECS, default $DEFAULT_TIMEOUT).

# The tests the QEMU guests run too (runner.sh): what the kernel decides;
# every_kernel_tests in every guest, guest_tests dealt between them.
# shellcheck disable=SC2034 # read by runner.sh
guest_tests="counter_streamed stat_counts_from_exec counter_faults_per_call"

# counts compared with perf stat's, context switches among them: on a quiet machine (runner.sh)
# shellcheck disable=SC2034 # read by runner.sh
quiet_stat_vs_perf_stat=1
# shellcheck disable=SC2034 # read by runner.sh
quiet_stat_text_as_perf=1
# shellcheck disable=SC2034 # read by runner.sh
quiet_stat_counts_from_exec=1
# shellcheck disable=SC2034 # read by runner.sh
quiet_stat_interval_sums_to_total=1
# shellcheck disable=SC2034 # read by runner.sh
quiet_stat_system_wide_and_pid=1
# shellcheck disable=SC2034 # read by runner.sh
quiet_counter_sleep_and_migrate=1
# shellcheck disable=SC2034 # read by runner.sh
quiet_counter_by_comm_interval=1

# How many times pmtrace said a thread ran on a CPU with no sched_switch
# telling its arrival (its stderr): the calls that may count less.
unseen_of() {
	local n
	n=$(sed -n 's/^pmtrace: warning: \([0-9]*\) times a thread ran on a CPU with no sched_switch.*/\1/p' "$1")
	echo "${n:-0}"
}

# perf stat -x, and pmtrace --stat --json on the same two commands (one
# that spins 200 ms of CPU and faults 3000 pages, one that sleeps 200
# times): page faults and context switches within 1% of perf stat's.
# Task-clock is judged against the task-clock the command counted on
# itself in the same run (two runs of the same work differ by 10% on a
# busy machine; its CPU-time clock leaves out a hypervisor's steal):
# within what comes before its main and after its last read.
test_stat_vs_perf_stat() {
	local cmd exact
	for cmd in "spinner 200 3000" "sleeper 200 1"; do
		case $cmd in spinner*) exact="spin" ;; *) exact="sleep" ;; esac
		# shellcheck disable=SC2086 # the command's words
		perf stat -x, -e page-faults,context-switches,task-clock -o "$WORK/perf.csv" \
			-- "$TP"/$cmd >"$WORK/perf.out" || return 1
		# shellcheck disable=SC2086
		"$PMT" --stat --json -e page-faults,context-switches,task-clock -o "$WORK/pmt.json" \
			-- "$TP"/$cmd >"$WORK/pmt.out" || return 1
		check stat_vs_perf "$WORK/pmt.json" "$WORK/perf.csv" "$exact" "${PMT_VM:-}" \
			"$WORK/pmt.out" "$WORK/perf.out" || return 1
	done
}

# Every event named as perf stat -j names it: perf stat's default set,
# a list longer than the first room the counters are given (their names
# must survive it growing), and each event alone.
test_stat_json_names_every_event() {
	requires perf userspace || return
	local e list=task-clock,context-switches,cpu-migrations,page-faults,minor-faults,major-faults,cpu-clock,alignment-faults,emulation-faults,cycles
	# (the default set, all ten together, and alone the one that falls
	# back where there is no PMU and one software counter: each of the
	# ten alone was 22 runs of perf and pmtrace, 15 s of CI's busy pass)
	for e in "" "$list" cycles page-faults; do
		perf stat -j ${e:+-e "$e"} -o "$WORK/perf.json" -- true || return 1
		"$PMT" --stat --json ${e:+-e "$e"} -o "$WORK/pmt.json" -- true || return 1
		check stat_json_names "$WORK/pmt.json" "$WORK/perf.json" "${e:-the default set}" || return 1
	done
}

# The text, line by line, in perf stat's columns: the same header, the
# value, unit, event and ratio fields where perf puts them, the footer.
test_stat_text_as_perf() {
	perf stat -e page-faults,context-switches,task-clock,cycles -o "$WORK/perf.txt" \
		-- "$TP"/spinner 20 300 >/dev/null || return 1
	"$PMT" --stat -e page-faults,context-switches,task-clock,cycles -o "$WORK/pmt.txt" \
		-- "$TP"/spinner 20 300 >/dev/null || return 1
	check stat_text_vs_perf "$WORK/pmt.txt" "$WORK/perf.txt" || return 1
}

# Counting starts at the command's exec: nothing of pmtrace's own fork
# (its copied pages) is counted, so a command that faults little shows
# what perf stat shows.
test_stat_counts_from_exec() {
	local p q i v
	# the least of three runs each: a run of true now and then takes a
	# few faults more than its usual (seen: 52 against a usual 48-50)
	for i in 1 2 3; do
		v=$("$PMT" --stat --json -e page-faults -- true | sed -n 's/.*"counter-value":"\([0-9]*\).*/\1/p')
		[ -n "$v" ] && { [ -z "$p" ] || [ "$v" -lt "$p" ]; } && p=$v
		v=$(perf stat -x, -e page-faults -- true 2>&1 >/dev/null | cut -d, -f1)
		[ -n "$v" ] && { [ -z "$q" ] || [ "$v" -lt "$q" ]; } && q=$v
	done
	note "true: $p page faults (perf stat: $q), the least of 3 runs each"
	# what a forked pmtrace touches before exec would add to ours
	# more; a guest's runs of true differ by a few either way (seen: 57
	# against 62, 63 against 59)
	local below=3 above=3
	[ -n "${PMT_VM:-}" ] && below=$((q / 8)) above=$((q / 8))
	if [ -z "$p" ] || [ -z "$q" ] || [ $((p - q)) -gt "$above" ] || [ $((q - p)) -gt "$below" ]; then
		fail "pmtrace $p, perf stat $q"
		return 1
	fi
}

# --interval: each interval's deltas; their sum is the whole run's count
# (page faults: perf stat's; task-clock: the command's own clock's).
test_stat_interval_sums_to_total() {
	"$PMT" --stat --json --interval 0.05 -e page-faults,task-clock \
		-o "$WORK/int.json" -- "$TP"/spinner 300 3000 >"$WORK/int.out" || return 1
	perf stat -x, -e page-faults,task-clock -o "$WORK/perf.csv" \
		-- "$TP"/spinner 300 3000 >/dev/null || return 1
	check stat_interval_sum "$WORK/int.json" "$WORK/perf.csv" "$WORK/int.out" || return 1
}

# An event the machine cannot count is shown as perf shows it; the others
# still count, and the run succeeds.
test_stat_not_supported() {
	if has_cpu_pmu; then
		skip "this machine has a CPU PMU: cycles is supported"
		return
	fi
	"$PMT" --stat -e cycles,page-faults -o "$WORK/ns.txt" -- "$TP"/spinner 0 100 >/dev/null ||
		return 1
	grep -Eq '^   <not supported>      cycles +$' "$WORK/ns.txt" || { cat "$WORK/ns.txt" >&2; fail "no <not supported> cycles"; return 1; }
	grep -Eq '^ +[0-9]{3,}      page-faults ' "$WORK/ns.txt" || { cat "$WORK/ns.txt" >&2; fail "page-faults not counted"; return 1; }
}

# -a counts every CPU: cpu-clock is the CPUs' time (CPUs utilized = the
# number of online CPUs); -p counts one process's threads.
test_stat_system_wide_and_pid() {
	local n pid
	n=$(nproc)
	"$PMT" --stat --json -a -e cpu-clock -d 0.3 -o "$WORK/a.json" || return 1
	check stat_cpus_utilized "$WORK/a.json" "$n" || return 1
	"$TP"/spinner 3000 >/dev/null &
	pid=$!
	# the spinner's fair share of the CPUs: the tasks runnable now (it
	# among them; /proc/loadavg's fourth field) share the CPUs
	local runnable
	runnable=$(awk '{ split($4, r, "/"); print r[1] }' /proc/loadavg)
	"$PMT" --stat -p "$pid" -e task-clock -d 0.3 -o "$WORK/p.txt"
	kill "$pid" 2>/dev/null
	grep -q "^ Performance counter stats for process id '$pid':" "$WORK/p.txt" || { cat "$WORK/p.txt" >&2; fail "no header for -p"; return 1; }
	check stat_pid_busy "$WORK/p.txt" "$n" "$runnable" || return 1
}

test_counting_bad_inputs() {
	usage_error "unknown event 'pagefaults'" --stat -e pagefaults -- true || return 1
	usage_error "--stat counts PMU events \(-e EVENT\); --tp sched:sched_switch is not one" \
		--stat --tp sched:sched_switch || return 1
	usage_error "--stat counts events and prints their totals: it takes no --count" \
		--stat -e page-faults --count || return 1
	usage_error "--counter with --count: a count is aggregated per call with --latency" \
		--counter page-faults --tp sched:sched_switch --count || return 1
	usage_error "--counter: the count is the thread's own" \
		--latency sched:sched_wakeup,sched:sched_switch --match pid=next_pid --counter page-faults || return 1
	no_leftovers
}

# --counter: each call's own count, exact. pmt_faults(k) faults k fresh
# pages for k = 1..7 over 70 calls; one warm-up call of k = 0 takes the
# tracer's first-hit fault (0 or 1, see tests/testprogs/counted.c).
test_counter_faults_per_call() {
	local c=$TP/counted
	"$PMT" -q --json --latency "uprobe:$c:pmt_faults" --counter page-faults \
		--lhist page-faults:0:10:1 -o "$WORK/f.json" -- "$c" 70 >/dev/null || return 1
	check counter_lhist "$WORK/f.json" page-faults "1=10,2=10,3=10,4=10,5=10,6=10,7=10" 1 || return 1
}

# A call that sleeps once has exactly one context switch; a call that
# moves itself to the other CPU between its two halves still counts its
# own 2 x 3 faults. (Not its migrations: the kernel counts a migration on
# the CPU that does it, sometimes for another task woken there while this
# one runs; README, Counting.)
test_counter_sleep_and_migrate() {
	local c=$TP/counted extra
	# one switch a call, its own sleep's; a preemption or another wait
	# adds one: at most as many more as the sleeps' loop switched beyond
	# one a call (the program counts them: busy machines switch more).
	# A call whose arrival on a CPU the kernel did not trace counts less
	# there, and pmtrace says how many times (unseen_of).
	"$PMT" --latency "uprobe:$c:pmt_sleep_once" --counter context-switches --stats value \
		-- "$c" 70 >"$WORK/one.out" 2>"$WORK/one.err" || { cat "$WORK/one.err" >&2; return 1; }
	grep '^@' "$WORK/one.out" >"$WORK/one.txt"
	extra=$(($(sed -n 's/.* sleep_switches=\([0-9]*\) .*/\1/p' "$WORK/one.out") - 70 + 3))
	check counter_stats "$WORK/one.txt" context-switches 70 1 "$extra" "$(unseen_of "$WORK/one.err")" || return 1
	# several counters: one entry each, keyed by the counter
	"$PMT" --latency "uprobe:$c:pmt_sleep_once" --counter context-switches \
		--counter page-faults --stats value -- "$c" 70 >"$WORK/two.out" 2>"$WORK/two.err" ||
		{ cat "$WORK/two.err" >&2; return 1; }
	grep '^@' "$WORK/two.out" >"$WORK/two.txt"
	extra=$(($(sed -n 's/.* sleep_switches=\([0-9]*\) .*/\1/p' "$WORK/two.out") - 70 + 3))
	check counter_stats "$WORK/two.txt" "[context-switches]" 70 1 "$extra" "$(unseen_of "$WORK/two.err")" ||
		return 1
	check counter_stats "$WORK/two.txt" "[page-faults]" 70 0 3 || return 1
	if [ "$(nproc)" -lt 2 ]; then
		note "one CPU: no migration to make"
		return 0
	fi
	"$PMT" --json --latency "uprobe:$c:pmt_migrate" --counter page-faults \
		--lhist value:0:10:1 -o "$WORK/m.json" -- "$c" 70 >/dev/null 2>"$WORK/m.err" ||
		{ cat "$WORK/m.err" >&2; return 1; }
	# now and then (2 calls of 70 in one run of several) a moving call
	# counts a few more faults than its 6: at most 3 calls may
	check counter_lhist "$WORK/m.json" page-faults "6=70" 1 3 "$(unseen_of "$WORK/m.err")" ||
		{ cat "$WORK/m.err" >&2; return 1; }
}

# Keys, intervals and JSON work on counts as on times.
test_counter_by_comm_interval() {
	local c=$TP/counted unseen
	"$PMT" -q --json --interval 0.05 --latency "uprobe:$c:pmt_sleep_once" \
		--counter context-switches --by comm -o "$WORK/i.json" -- "$c" 200 >/dev/null 2>"$WORK/i.err" ||
		{ cat "$WORK/i.err" >&2; return 1; }
	# a switch back the kernel did not trace leaves that stretch, and
	# the switch that ended it, uncounted: said, and allowed that many
	unseen=$(sed -n 's/^pmtrace: warning: \([0-9]*\) times a thread ran on a CPU with no sched_switch.*/\1/p' "$WORK/i.err")
	check counter_intervals "$WORK/i.json" counted 200 "${unseen:-0}" || return 1
}

test_counter_refusals() {
	local c=$TP/counted
	if ! has_cpu_pmu; then
		usage_error "--counter cycles: this machine cannot count it" \
			--latency "uprobe:$c:pmt_faults" --counter cycles -- "$c" 7 || return 1
	fi
	usage_error "--counter: unknown event 'page-fault'" \
		--latency "uprobe:$c:pmt_faults" --counter page-fault -- "$c" 7 || return 1
	usage_error "--stats cycles: --latency measures page-faults" \
		--latency "uprobe:$c:pmt_faults" --counter page-faults --stats cycles -- "$c" 7 || return 1
	no_leftovers
}

# --counter on a streamed probe: each record carries its thread's count
# so far and since its previous record. Between two entries of
# pmt_faults(k) the thread faulted exactly the k pages of the first call.
test_counter_streamed() {
	local c=$TP/counted n
	"$PMT" -q --json --uprobe "$c:pmt_faults" --counter page-faults -o "$WORK/s.json" \
		-- "$c" 70 >/dev/null || return 1
	check counter_streamed "$WORK/s.json" page-faults 71 || return 1
	"$PMT" -q --uprobe "$c:pmt_faults" --counter page-faults -o "$WORK/s.txt" -- "$c" 7 >/dev/null ||
		return 1
	grep -Eq ' page-faults=[0-9]+ \(\+1\)$' "$WORK/s.txt" || { cat "$WORK/s.txt" >&2; fail "no count in the text"; return 1; }
	# the tracepoint and perf-event programs read counters too
	n=$("$PMT" -q --tp syscalls:sys_enter_getppid --counter context-switches \
		-- "$TP"/getppid_loop 5 | grep -c ' context-switches=[0-9]* (+[0-9]*)$')
	expect_eq "getppid records with a count" "$n" 5 || return 1
	n=$("$PMT" -q --latency syscalls:sys_enter_getppid,syscalls:sys_exit_getppid \
		--counter page-faults --sum value -- "$TP"/getppid_loop 5 | grep -c '^@page_faults: ')
	expect_eq "a tracepoint pair's count" "$n" 1 || return 1
}
