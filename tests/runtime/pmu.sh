# shellcheck shell=bash
# Runtime tests, area pmu: PMU sampling (-e): samples, filters, stacks, folded stacks, flame graphs.
# Sourced by tests/runtime/runner.sh after lib.sh; each test_NAME runs alone
# under its own timeout (timeout_NAME=SECS, default $DEFAULT_TIMEOUT).

# The tests the QEMU guests run too (runner.sh): what the kernel decides;
# every_kernel_tests in every guest, guest_tests dealt between them.
# shellcheck disable=SC2034 # read by runner.sh
guest_tests="pmu_page_faults pmu_mode_filter pmu_cycles_fallback"
# what each took in a guest beside two CPU hogs (make test, CI's
# load), seconds, where 15 or more (runner.sh deals guest_tests by
# it; 10 where not given)
# shellcheck disable=SC2034 # read by runner.sh
guest_secs_pmu_mode_filter=22
# shellcheck disable=SC2034 # read by runner.sh
every_kernel_tests="pmu_cycles_hardware"

# a share of samples in one function: on a quiet machine (runner.sh)
# shellcheck disable=SC2034 # read by runner.sh
quiet_pmu_spin_samples=1


test_pmu_spin_samples() {
	local out=$WORK/spin.json pid
	"$PMT" -q --json -e cpu-clock --freq 999 --stack user -o "$out" -- "$TP"/spinner 1000 >"$WORK/child.out" || return 1
	pid=$(sed -n 's/^pid=//p' "$WORK/child.out")
	check pmu_spin_samples "$out" "$pid" || return 1
}

test_pmu_mode_filter() {
	local u=$WORK/user.json
	"$TP"/getppid_loop 3000000 >/dev/null &
	local bg=$!
	"$PMT" -q --json -a -e cpu-clock --freq 999 --filter 'mode == user' -e cpu-clock --filter 'mode == kernel' \
		-d 1 -o "$u" || { kill $bg 2>/dev/null; return 1; }
	kill $bg 2>/dev/null
	check pmu_mode_filter "$u" || return 1
}

test_pmu_page_faults() {
	local out=$WORK/pf.json pid
	"$PMT" -q --json -e page-faults --period 1 --count --by pid -o "$out" -- "$TP"/spinner 0 3000 >"$WORK/child.out" || return 1
	pid=$(sed -n 's/^pid=//p' "$WORK/child.out")
	check pmu_page_faults "$out" "$pid" || return 1
}

test_pmu_pid_filter_vs_unfiltered() {
	local out=$WORK/pidf.json err=$WORK/pidf.err
	# spinners that outlive the trace however slow the machine (killed
	# after it): the guests' one CPU under TCG ran 4 s ones out
	"$TP"/spinner 60000 >"$WORK/child.out" &
	local bg=$!
	wait_for "$WORK/child.out" pid= || { kill $bg; return 1; }
	local pid
	pid=$(sed -n 's/^pid=//p' "$WORK/child.out")
	"$TP"/spinner 60000 >/dev/null &
	local other=$!
	"$PMT" --json -a -e cpu-clock --freq 499 -e cpu-clock --freq 499 --filter "pid == $pid" \
		--count --by probe,pid -d 1.5 -o "$out" 2>"$err" || { kill $bg $other; return 1; }
	kill $bg $other
	grep -q "events filtered out in the kernel" "$err" || { cat "$err" >&2; fail "no filtered count"; return 1; }
	check pmu_pid_filter_vs_unfiltered "$out" "$pid" "$other" || return 1
}

test_pmu_cycles_fallback() {
	local out=$WORK/cyc.txt err=$WORK/cyc.err
	if has_cpu_pmu; then skip "this machine has a CPU PMU: cycles does not fall back"; return; fi
	local ran n
	"$PMT" -e cycles --freq 999 -o "$out" -- "$TP"/spinner 200 2>"$err" >"$WORK/cyc.out" || { cat "$err" >&2; return 1; }
	grep -q "cycles: this machine has no hardware PMU.*falling back to cpu-clock, as perf does" "$err" || {
		cat "$err" >&2; fail "no fallback notice"; return 1; }
	# the fallback keeps the frequency asked for: cpu-clock's hrtimer
	# maps 999 Hz to a fixed period of 1e9/999 ns, on every sample
	n=$(grep -c 'cpu-clock: ip=' "$out")
	local other
	other=$(grep 'cpu-clock: ip=' "$out" | grep -vc ' period=1001001 ')
	[ "$other" = 0 ] || { grep -m3 -v ' period=1001001 ' "$out" >&2; fail "$other of $n samples not at 999 Hz's period"; return 1; }
	# a sample a ms of the CPU time the spinner had: half of them at
	# least on the host. In a TCG guest beside CPU hogs the vCPU's timer
	# interrupts come late and merge (one sample each, the hrtimer then
	# forwarded): a CI run had 107 for 223 ms there, so only some
	ran=$(sed -n 's/^task_clock_ms=\([0-9]*\).*/\1/p' "$WORK/cyc.out")
	local least=$((${ran:-200} / 2))
	[ -z "${PMT_VM:-}" ] || least=10
	if [ "$n" -lt "$least" ] || [ "$n" -le 10 ]; then
		fail "$n samples after the fallback for ${ran:-?} ms of CPU (at least $least)"
		return 1
	fi
	usage_error "instructions: this machine has no hardware PMU" -e instructions -- true || return 1
	grep -q "cpu-clock, task-clock, page-faults" "$WORK/usage.err" || { fail "no software alternatives named"; return 1; }
	no_leftovers
}

# A CPU PMU (the arm64 guest's: QEMU's -cpu max has one; x86's TCG has
# none, nor has this host): cycles sampled as asked, without a fallback,
# and counted as perf stat counts them on the same spinner.
test_pmu_cycles_hardware() {
	has_cpu_pmu || { skip "no CPU PMU here: cycles falls back (pmu_cycles_fallback)"; return; }
	local ran n
	"$PMT" -e cycles --freq 999 -o "$WORK/cyc.txt" -- "$TP"/spinner 200 2>"$WORK/cyc.err" >"$WORK/cyc.out" ||
		{ cat "$WORK/cyc.err" >&2; return 1; }
	! grep -q "falling back" "$WORK/cyc.err" || { cat "$WORK/cyc.err" >&2; fail "fell back with a PMU"; return 1; }
	ran=$(sed -n 's/^task_clock_ms=\([0-9]*\).*/\1/p' "$WORK/cyc.out")
	n=$(grep -c ' cycles: ip=' "$WORK/cyc.txt")
	note "$n cycles samples for ${ran:-?} ms of CPU at 999 Hz"
	# (the kernel's frequency mode sets the period from the count's rate
	# at each tick: under TCG on a loaded host the emulated counter's
	# rate swings, and a CI run beside two CPU hogs had 94 samples for
	# 231 ms; the samples are counted, not the kernel's estimate judged)
	if [ "$n" -lt $((${ran:-200} / 4)) ] || [ "$n" -le 10 ]; then
		head -3 "$WORK/cyc.txt" >&2
		fail "$n cycles samples for ${ran:-?} ms of CPU"
		return 1
	fi
	requires perf || return
	"$PMT" --stat --json -e cycles,task-clock -o "$WORK/pmt.json" -- "$TP"/spinner 200 >/dev/null || return 1
	perf stat -x, -e cycles,task-clock -o "$WORK/perf.csv" -- "$TP"/spinner 200 >/dev/null || return 1
	check pmu_cycles_hardware "$WORK/pmt.json" "$WORK/perf.csv"
}

# A --freq above the kernel's sample-rate limit, which the kernel lowers
# on its own when sampling interrupts take long (QEMU's arm64 guest had
# it below 999): a usage error naming the limit, as perf record -F says,
# not a refusal of the event. The limit is the machine's: set and put
# back, on the host alone.
test_pmu_freq_above_limit() {
	requires host || return
	local was
	was=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
	# shellcheck disable=SC2064 # the value now
	trap "echo $was >/proc/sys/kernel/perf_event_max_sample_rate" EXIT
	echo 500 >/proc/sys/kernel/perf_event_max_sample_rate ||
		{ skip "kernel.perf_event_max_sample_rate cannot be set (perf_cpu_time_max_percent 0 or 100)"; return; }
	usage_error "^pmtrace: cpu-clock: --freq 999 is above the kernel's limit of 500 samples/s" \
		-e cpu-clock --freq 999 -- true || return 1
	grep -q "raise kernel.perf_event_max_sample_rate" "$WORK/usage.err" || { fail "no hint"; return 1; }
	"$PMT" -q -e cpu-clock --freq 499 -o /dev/null -- true || { fail "--freq 499 under the limit refused"; return 1; }
}

# Is the PNG at $1 more than one flat colour? (pure Python: zlib + filters)
png_not_blank() {
	check png_not_blank "$1"
}

# Folded stacks of the spinner, and a flame graph that is valid XML.
test_pmu_folded() {
	local fold=$WORK/out.folded svg=$WORK/cpu.svg try
	for try in 1 2; do
		"$PMT" -q -e cpu-clock --freq 999 --stack --folded -o "$fold" -- "$TP"/spinner 500 >/dev/null || return 1
		grep -Eq '^spinner;.*main;pmt_spin_outer;pmt_spin_inner [0-9]+$' "$fold" && break
		# seen about once in 50 runs in the 6.12 guest: every sample of
		# the main loop keyed with no stack at all (open defect, see the
		# git log); once more before failing
		head -3 "$fold" >&2
		[ $try = 2 ] && { fail "no folded spinner stack"; return 1; }
		note "NOTE: no folded spinner stack in try 1 (known rare defect); trying again"
	done
	"$PMT" -q -e cpu-clock --freq 999 --stack --flamegraph "$svg" -- "$TP"/spinner 500 >/dev/null || return 1
	"$PY3" -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$svg" || { fail "SVG is not valid XML"; return 1; }
}

# The flame graph as a browser shows it: its script ran and it is a picture.
test_pmu_flamegraph_renders() {
	# its rendering by chromium takes minutes under TCG
	requires chromium host || return
	local svg=$WORK/cpu.svg
	"$PMT" -q -e cpu-clock --freq 999 --stack --flamegraph "$svg" -- "$TP"/spinner 500 >/dev/null || return 1
	# rendered: the DOM after the script ran names the function, and the
	# screenshot is a picture, not a blank page
	timeout 60 chromium --headless --no-sandbox --disable-gpu --dump-dom "file://$svg" >"$WORK/dom.xml" 2>/dev/null
	grep -q '>pmt_spin_inner<' "$WORK/dom.xml" || { fail "rendered flame graph does not show pmt_spin_inner"; return 1; }
	timeout 60 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1200,400 \
		--screenshot="$WORK/fg.png" "file://$svg" >/dev/null 2>&1
	png_not_blank "$WORK/fg.png" || { fail "blank screenshot"; return 1; }
	[ -n "$KEEP" ] && cp "$WORK/fg.png" /tmp/pmtrace-flamegraph.png
	return 0
}

test_pmu_count_by_stack_and_sym() {
	local out=$WORK/bystack.txt
	"$PMT" -q -e cpu-clock --freq 999 --stack user --count --by stack -o "$out" -- "$TP"/spinner 500 >/dev/null || return 1
	# 500 ms at 999 Hz; an emulated guest beside another one (and the
	# host's tests) gets less CPU: 172 seen
	check pmu_count_by_stack_and_sym "$out" "$([ -n "${PMT_VM:-}" ] && echo 120 || echo 350)" || return 1
	"$PMT" -q -e cpu-clock --freq 999 --count --by sym --top 1 -o "$out" -- "$TP"/spinner 500 >/dev/null || return 1
	grep -Eq '^@\[pmt_spin_inner\]: [0-9]{3}$' "$out" || { cat "$out" >&2; fail "top symbol is not pmt_spin_inner"; return 1; }
}

test_pmu_errors() {
	usage_error "unknown event 'cpu-clok'; did you mean cpu-clock" -e cpu-clok || return 1
	usage_error "no PMU 'gpu' on this machine" -e gpu/event=1/ || return 1
	usage_error "unknown modifier 'x'" -e cpu-clock:x || return 1
	usage_error "'usr' is not a value of mode: expected one of kernel, user" -e cpu-clock --filter 'mode == usr' || return 1
	expect_output mode_value.err "$WORK/usage.err" || return 1
	usage_error "unknown field 'size' for cpu-clock" -e cpu-clock --filter 'size > 1' || return 1
	if [ -d /sys/bus/event_source/devices/msr ]; then
		usage_error "msr/tsc/: the kernel refused this event for sampling" -e msr/tsc/ || return 1
	fi
	usage_error "--folded draws stacks: add --stack" -e cpu-clock --folded || return 1
	usage_error "cannot write the flame graph to '/nonexistent/x.svg'" -e cpu-clock --stack \
		--flamegraph /nonexistent/x.svg -- true || return 1
	no_leftovers
}

# A flame graph that cannot be written at exit fails the run (exit 1) with
# a message; it once exited 0.
test_pmu_flamegraph_write_fails() {
	local err=$WORK/fg.err
	"$PMT" -q -e cpu-clock --freq 999 --stack --flamegraph /dev/full -- "$TP"/spinner 200 >/dev/null 2>"$err"
	expect_eq "exit status" $? 1 || return 1
	grep -q "cannot write the flame graph to '/dev/full': No space left on device" "$err" || {
		cat "$err" >&2; fail "no message"; return 1; }
	no_leftovers
}

# The command is traced from where perf's enable_on_exec starts counting
# (begin_new_exec), so the exec's own page faults count. perf records
# every page fault system-wide during the same run: the command's faults
# (pid, after its exec) must be exactly pmtrace's count.
test_exec_page_faults_vs_perf() {
	requires perf || return
	local pid n_pmt n_perf
	perf_record_ready -a -e page-faults -c 1 -o "$WORK/pf.data" || return 1
	"$PMT" -q -e page-faults --period 1 --count -- setarch -R "$TP"/getppid_loop 1 \
		>"$WORK/child.out" 2>"$WORK/pmt.err" || { perf_record_stop; return 1; }
	sleep 0.2
	perf_record_stop
	pid=$(sed -n 's/^pid=//p' "$WORK/child.out")
	n_pmt=$(sed -n 's/^@: //p' "$WORK/child.out")
	# after the exec: setarch, then getppid_loop (before it, the held
	# child is "pmtrace")
	n_perf=$(perf script -i "$WORK/pf.data" -F pid,comm 2>/dev/null |
		awk -v p="$pid" '$2 == p && ($1 == "setarch" || $1 == "getppid_loop")' | wc -l)
	note "pid $pid: pmtrace $n_pmt page faults, perf record $n_perf"
	expect_eq "page faults of the command (perf record -a of the same run)" "$n_pmt" "$n_perf"
}

# The command's own exec: in every run, also while perf records the same
# tracepoint (its probe then runs before pmtrace's target tracking did).
test_own_exec_every_run() {
	local i n=0 rec="" runs=20
	# each run loads and attaches: seconds under TCG
	[ -n "${PMT_VM:-}" ] && runs=8
	for i in $(seq $runs); do
		if [ "$i" = $((runs / 2 + 1)) ] && command -v perf >/dev/null; then
			perf_record_ready -a -e sched:sched_process_exec -o "$WORK/exec.data" || return 1
			rec=1
		fi
		"$PMT" -q --tp sched:sched_process_exec -o "$WORK/exec.txt" -- true || return 1
		grep -q "sched_process_exec: filename=/usr/bin/true\|sched_process_exec: filename=/bin/true" "$WORK/exec.txt" &&
			n=$((n + 1))
	done
	[ -n "$rec" ] && perf_record_stop
	expect_eq "runs that show the command's own exec" $n $runs
}
