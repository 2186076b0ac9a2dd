# shellcheck shell=bash
# Runtime tests, area counting: --stat against perf stat on the same
# commands, and --counter's per-call counts.
# Sourced by tests/runtime/runner.sh after lib.sh; each test_NAME runs alone
# under its own timeout (timeout_NAME=SECS, default $DEFAULT_TIMEOUT).

# perf stat -x, and pmtrace --stat --json on the same two commands (one
# that spins 200 ms of CPU and faults 3000 pages, one that sleeps 200
# times): page faults and context switches within 1%, task-clock 5%.
test_stat_vs_perf_stat() {
	local cmd exact
	for cmd in "spinner 200 3000" "sleeper 200 1"; do
		case $cmd in spinner*) exact="spin" ;; *) exact="sleep" ;; esac
		# shellcheck disable=SC2086 # the command's words
		perf stat -x, -e page-faults,context-switches,task-clock -o "$WORK/perf.csv" \
			-- "$TP"/$cmd >/dev/null || return 1
		# shellcheck disable=SC2086
		"$PMT" --stat --json -e page-faults,context-switches,task-clock -o "$WORK/pmt.json" \
			-- "$TP"/$cmd >/dev/null || return 1
		check stat_vs_perf "$WORK/pmt.json" "$WORK/perf.csv" "$exact" || return 1
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
	local p q
	p=$("$PMT" --stat --json -e page-faults -- true | sed -n 's/.*"counter-value":"\([0-9]*\).*/\1/p')
	q=$(perf stat -x, -e page-faults -- true 2>&1 >/dev/null | cut -d, -f1)
	note "true: $p page faults (perf stat: $q)"
	if [ -z "$p" ] || [ -z "$q" ] || [ $((p - q)) -gt 1 ] || [ $((q - p)) -gt 1 ]; then
		fail "pmtrace $p, perf stat $q"
		return 1
	fi
}

# --interval: each interval's deltas; their sum is the whole run's count.
test_stat_interval_sums_to_total() {
	"$PMT" --stat --json --interval 0.05 -e page-faults,context-switches \
		-o "$WORK/int.json" -- "$TP"/sleeper 40 5 >/dev/null || return 1
	perf stat -x, -e page-faults,context-switches -o "$WORK/perf.csv" \
		-- "$TP"/sleeper 40 5 >/dev/null || return 1
	check stat_interval_sum "$WORK/int.json" "$WORK/perf.csv" || return 1
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
	"$PMT" --stat -p "$pid" -e task-clock -d 0.3 -o "$WORK/p.txt"
	kill "$pid" 2>/dev/null
	grep -q "^ Performance counter stats for process id '$pid':" "$WORK/p.txt" || { cat "$WORK/p.txt" >&2; fail "no header for -p"; return 1; }
	check stat_pid_busy "$WORK/p.txt" || return 1
}

test_counting_bad_inputs() {
	usage_error "unknown event 'pagefaults'" --stat -e pagefaults -- true || return 1
	usage_error "--stat counts PMU events \(-e EVENT\); --tp sched:sched_switch is not one" \
		--stat --tp sched:sched_switch || return 1
	usage_error "--stat counts events and prints their totals: it takes no --count" \
		--stat -e page-faults --count || return 1
	usage_error "--counter measures an event count between two points: add --latency" \
		--counter page-faults --tp sched:sched_switch || return 1
	usage_error "--counter: the count is the thread's own" \
		--latency sched:sched_wakeup,sched:sched_switch --match pid=next_pid --counter page-faults || return 1
	no_leftovers
}
