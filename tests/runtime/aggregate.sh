# shellcheck shell=bash
# Runtime tests, area aggregate: In-kernel aggregations: exact counts and histograms, bpftrace as the oracle.
# Sourced by tests/runtime/runner.sh after lib.sh; each test_NAME runs alone
# under its own timeout (timeout_NAME=SECS, default $DEFAULT_TIMEOUT).

# The tests the QEMU guests run too (runner.sh): what the kernel decides;
# every_kernel_tests in every guest, guest_tests dealt between them.
# shellcheck disable=SC2034 # read by runner.sh
guest_tests="agg_hist_exact agg_latency agg_keys_past_the_bound"

# a drain's speed beside its own two hogs, not beside the busy pass's
# other tests as well (2,000 updates dropped there in CI): on a quiet
# machine (runner.sh)
# shellcheck disable=SC2034 # read by runner.sh
quiet_agg_keys_burst_beside_hogs=1

test_agg_hist_exact() {
	local out=$WORK/hist.txt
	"$PMT" -q --tp syscalls:sys_enter_read --filter 'fd == 100' --hist count -o "$out" -- "$TP"/reader 3 || return 1
	expect_output hist.txt "$out"
}

test_agg_lhist_and_stats() {
	local out=$WORK/lhist.txt
	"$PMT" -q --tp syscalls:sys_enter_read --filter 'fd == 100' --lhist count:0:5000:1000 -o "$out" -- "$TP"/reader 3 || return 1
	expect_output lhist.txt "$out" || return 1
	"$PMT" -q --tp syscalls:sys_enter_read --filter 'fd == 100' --stats count -o "$out" -- "$TP"/reader 3 || return 1
	expect_output stats.txt "$out" || return 1
	"$PMT" -q --tp syscalls:sys_enter_read --filter 'fd == 100' --sum count/1024 -o "$out" -- "$TP"/reader 3 || return 1
	expect_eq "--sum count/1024" "$(cat "$out")" "@: 21" || return 1   # 3*(1+2+4) for 1K..4K
	"$PMT" -q --tp syscalls:sys_enter_read --filter 'fd == 100' --max count -o "$out" -- "$TP"/reader 3 || return 1
	expect_eq "--max" "$(cat "$out")" "@: 4096"
}

test_agg_count_by_comm() {
	local out=$WORK/count.txt
	"$PMT" -q --tp syscalls:sys_enter_getppid --count --by comm -o "$out" -- "$TP"/mixer || return 1
	expect_output count_by_comm.txt "$out" || return 1
	"$PMT" -q --tp syscalls:sys_enter_getppid --count --by comm --top 2 -o "$out" -- "$TP"/mixer || return 1
	expect_output count_by_comm_top2.txt "$out" || return 1
	# two probes, keyed by probe and comm; a filter on one of them
	"$PMT" -q --tp syscalls:sys_enter_getppid --filter 'comm ~ "mix-?"' --tp syscalls:sys_enter_openat \
		--filter 'comm == "other"' --count --by probe,comm -o "$out" -- "$TP"/mixer || return 1
	expect_output count_by_probe_comm.txt "$out"
}

# bpftrace as the oracle, both attached to the same run of the mixer
test_agg_vs_bpftrace() {
	requires bpftrace userspace || return
	local ours=$WORK/ours.txt theirs=$WORK/bt.txt err=$WORK/agg.err bt pm try
	# a bpftrace that does not end on SIGINT is killed: both run again
	for try in 1 2; do
		# ready once its probes are attached, after BEGIN's line;
		# line-buffered, as -o FILE is written only at exit
		stdbuf -oL bpftrace -e 'BEGIN { printf("ready\n"); } tracepoint:syscalls:sys_enter_getppid /comm == "mix-a" || comm == "mix-b" || comm == "other"/ { @[comm] = count(); }' \
			>"$theirs" 2>/dev/null &
		bt=$!
		"$PMT" -a --tp syscalls:sys_enter_getppid --filter 'comm ~ "mix-*" || comm == "other"' --count --by comm -o "$ours" 2>"$err" &
		pm=$!
		if ! wait_for "$err" "aggregating" 1200 || ! wait_for "$theirs" "^ready" 1200 ||
			! bt_attached $bt "$theirs" "BEGIN tracepoint"; then
			kill -INT $bt $pm
			return 1
		fi
		"$TP"/mixer
		sleep 0.3
		kill -INT $pm
		wait $pm || { stop_bpftrace $bt; return 1; }
		stop_bpftrace $bt && break
		[ $try = 1 ] || { fail "bpftrace did not end on SIGINT, twice"; return 1; }
	done
	check agg_vs_bpftrace "$ours" "$theirs" || return 1
}

test_agg_interval_snapshots() {
	local out=$WORK/iv.txt
	# a sleeper keeps every interval busy on an otherwise idle machine
	"$TP"/sleeper 800 2 >/dev/null &
	local bg=$!
	"$PMT" -q -a --tp sched:sched_switch --count --interval 0.25 -d 1.1 -o "$out" || { kill $bg; return 1; }
	kill $bg 2>/dev/null; wait $bg
	# 4 interval snapshots, then the final one for the last 0.1 s
	expect_eq "timestamped snapshots" "$(grep -cE '^[0-9]{2}:[0-9]{2}:[0-9]{2}$' "$out")" 5 || return 1
	expect_eq "count lines" "$(grep -c '^@: ' "$out")" 5
}

# 200 keys interleaved: every event changes key, so the kernel's per-CPU
# cache (bpf/abi.h, PMT_AGG_CACHE slots) writes back and reloads all the
# time; counts, sums, min and max stay exact, at exit and summed over
# interval snapshots taken while it churns
test_agg_cache_churn() {
	# the cache is the same BPF code on every kernel (loaded in the guests
	# by every aggregation there)
	requires userspace || return
	local out=$WORK/churn.txt rounds=50 rounds2=40
	"$PMT" -q --tp syscalls:sys_enter_read --filter 'fd == 100' --stats count --by count \
		-o "$out" -- "$TP"/reader $rounds 200 || return 1
	check agg_cache_churn "$out" $rounds || return 1
	"$PMT" -q --json --interval 0.02 --tp syscalls:sys_enter_read --filter 'fd == 100' --count --by count \
		-o "$out" -- "$TP"/reader $rounds2 200 3000 || return 1
	check agg_cache_churn_2 "$out" $rounds2
}

# --interval forgets keys that saw nothing in the interval it printed
# (deleted in the kernel, so the hash holds what is live): 400 keys in
# rounds of 100 with pauses, each key back once after going idle, under
# --max-keys 250: no drops, and each key's deltas add up to its 2 reads
test_agg_interval_forgets_idle() {
	local out=$WORK/idle.json err=$WORK/idle.err
	"$PMT" --json --interval 0.1 --tp syscalls:sys_enter_read --filter 'fd == 100' --count --by count \
		--max-keys 250 -o "$out" -- "$TP"/reader 8 100 300000 100 2>"$err" || return 1
	if grep -q dropped "$err"; then
		cat "$err" >&2
		fail "updates dropped although idle keys were forgotten"
		return 1
	fi
	check agg_interval_forgets_idle "$out"
}

test_agg_json() {
	local out=$WORK/agg.json
	"$PMT" -q --json --tp syscalls:sys_enter_read --filter 'fd == 100' --hist count --by comm -o "$out" -- "$TP"/reader 2 || return 1
	check agg_json "$out" || return 1
}

test_agg_latency() {
	local out=$WORK/lat.txt
	# glibc's nanosleep() is the clock_nanosleep system call
	"$PMT" -q --latency syscalls:sys_enter_clock_nanosleep,syscalls:sys_exit_clock_nanosleep --unit ms \
		-o "$out" -- "$TP"/sleeper 20 1 times >"$WORK/times" || return 1
	check agg_latency "$out" "$WORK/times" || return 1
	# runqlat: wakeup to switch-in, matched by pid; both happen in other
	# tasks' contexts, so system wide, keyed by the task switched in
	"$PMT" -a --latency sched:sched_wakeup,sched:sched_switch --match pid=next_pid --by next_comm \
		-o "$out" 2>"$WORK/lat.err" &
	local tracer=$!
	wait_for "$WORK/lat.err" aggregating 600 || return 1
	"$TP"/sleeper 50 1 >/dev/null
	kill -INT $tracer
	wait $tracer || return 1
	grep -q '^@usecs\[sleeper\]: $' "$out" || { cat "$out" >&2; fail "no run-queue latency of the sleeper"; }
}

test_agg_max_keys_drops() {
	local err=$WORK/mk.err out=$WORK/mk.txt
	"$PMT" --tp syscalls:sys_enter_getppid --count --by tid --max-keys 2 -o "$out" -- "$TP"/getppid_loop 10 0 4 >/dev/null 2>"$err" || return 1
	local dropped kept counted
	dropped=$(sed -n 's/.*warning: \([0-9]*\) aggregation updates dropped: --max-keys 2 is full.*/\1/p' "$err")
	[ -n "$dropped" ] || { cat "$err" >&2; fail "drops not reported"; return 1; }
	# the hash holds 2; a drain between the threads' calls (a slow
	# machine's) makes room for more: every call is counted or dropped
	kept=$(grep -c '^@\[' "$out")
	counted=$(awk -F': ' '/^@\[/ { s += $2 } END { print s + 0 }' "$out")
	note "$kept keys kept, $counted calls counted, $dropped dropped"
	if [ "$kept" -lt 2 ] || [ "$kept" -gt 4 ]; then
		fail "$kept keys kept"
		return 1
	fi
	expect_eq "calls counted and dropped" $((counted + dropped)) 40
}

# More keys than the kernel's hash holds, made over ~1.5 s: each drain
# (when a quarter of the hash was taken) moves them into pmtrace's totals, so all
# 30,000 keys come out, each with its exact count, none dropped.
test_agg_keys_past_the_bound() {
	local err=$WORK/kb.err out=$WORK/kb.txt
	"$PMT" --tp syscalls:sys_enter_lseek --filter 'fd > 2' --count --by offset --max-keys 20000 \
		-o "$out" -- "$TP"/seeker 60000 30000 25 2>"$err" || return 1
	! grep -q warning "$err" || { cat "$err" >&2; fail "updates dropped"; return 1; }
	expect_eq "keys" "$(grep -c '^@\[' "$out")" 30000 || return 1
	expect_eq "keys not counted twice" "$(grep -c '^@\[[0-9]*\]: 2$' "$out")" 30000 || return 1
	note "30000 keys through a hash of 20000, each counted twice"
}

# 30,000 keys in bursts of 1,000 every 5 ms (200,000 new keys a second)
# through a hash of 20,000, on an idle machine and beside two CPU hogs
# at the tracer's own priority: the drains keep up, every key is kept
# with its exact count, no update dropped.
test_agg_keys_burst_beside_hogs() {
	# the rate is this machine's bar: under TCG the drain is many times
	# slower than the bursts (agg_keys_past_the_bound holds the guests
	# to a rate they can keep)
	requires host native || return
	# (the bursts' gap scaled by the runner's calibration: a machine
	# slower than this one, or this one busy already (CI beside two CPU
	# hogs of its own: the idle run dropped 9,207 updates), is held to
	# its own speed; 5 ms on a quiet machine)
	local err=$WORK/kb.err out=$WORK/kb.txt hogs="" load gap=$((5 * ${PMT_SLOWDOWN:-100} / 100))
	[ "$gap" -ge 5 ] || gap=5
	for load in idle busy; do
		if [ $load = busy ]; then
			sh -c 'while :; do :; done' & hogs="$!"
			sh -c 'while :; do :; done' & hogs="$hogs $!"
		fi
		"$PMT" --tp syscalls:sys_enter_lseek --filter 'fd > 2' --count --by offset --max-keys 20000 \
			-o "$out" -- "$TP"/seeker 60000 30000 "$gap" 2>"$err"
		local rc=$?
		# shellcheck disable=SC2086 # the hogs' pids
		[ -z "$hogs" ] || { kill $hogs; wait $hogs 2>/dev/null; }
		[ $rc = 0 ] || { cat "$err" >&2; return 1; }
		! grep -q warning "$err" || { cat "$err" >&2; fail "$load: updates dropped"; return 1; }
		expect_eq "$load: keys counted twice" "$(grep -c '^@\[[0-9]*\]: 2$' "$out")" 30000 || return 1
	done
	note "30000 keys at $((1000000 / gap)) a second through a hash of 20000, idle and beside two CPU hogs"
}

test_agg_errors() {
	usage_error "unknown field 'cnt' in the aggregated value" --tp syscalls:sys_enter_read --hist cnt || return 1
	usage_error "--by: unknown key 'comn'" --tp syscalls:sys_enter_read --count --by comn || return 1
	usage_error "'comm' is a string: the aggregated value needs a number" --tp syscalls:sys_enter_read --sum comm || return 1
	usage_error "--lhist: 'count:5:1:1'" --tp syscalls:sys_enter_read --lhist count:5:1:1 || return 1
	usage_error "one aggregation at a time" --tp syscalls:sys_enter_read --count --hist count || return 1
	usage_error "need an aggregation" --tp syscalls:sys_enter_read --by comm || return 1
	usage_error "unknown tracepoint 'sched:nope'" --latency sched:nope,sched:sched_switch || return 1
	no_leftovers
}

# Negative values go to the (..., 0) bucket, printed first; its count is
# the number of failed opens a filter counts in the same command. (The
# text once stopped at "@:" when a bucket was below zero.)
test_agg_hist_negative() {
	local cmd=(sh -c 'cat /nonexistent-a /nonexistent-b /etc/hostname >/dev/null 2>&1; true') failed hist
	failed=$("$PMT" -q --tp syscalls:sys_exit_openat --filter 'ret < 0' --count -- "${cmd[@]}" | sed -n 's/^@: //p') || return 1
	hist=$("$PMT" -q --tp syscalls:sys_exit_openat --hist ret -- "${cmd[@]}") || return 1
	[ "${failed:-0}" -ge 2 ] || { fail "only '$failed' failed opens counted"; return 1; }
	echo "$hist" | grep -A1 '^@: $' | sed -n 2p | grep -Eq "^\(\.\.\., 0\) +$failed \|" || {
		echo "$hist" >&2; fail "no (..., 0) bucket of $failed first"; return 1; }
}

# Histograms bucket by bucket against bpftrace, all attached to the same
# run of two concurrent `calls` processes (their events interleave):
# negative values, below and above an --lhist range, 400 linear buckets,
# and histograms keyed by pid.
test_hist_vs_bpftrace() {
	requires bpftrace userspace || return
	local bt=$WORK/bt.txt n=2000 i p pids=() ready
	stdbuf -oL bpftrace -e "BEGIN { printf(\"ready\\n\"); }
		uprobe:$CALLS:pmt_ut_neg { @neg = hist((int64)arg0); }
		uprobe:$CALLS:pmt_ut_add { @below[pid] = lhist(arg0, 100, 500, 50); @many = lhist(arg1, 0, 5000, 10); @bypid[pid] = hist(arg0); }" \
		>"$bt" 2>"$WORK/bt.err" &
	local btp=$!
	local runs=("--uprobe $CALLS:pmt_ut_neg --hist arg0"
		"--uprobe $CALLS:pmt_ut_add --lhist arg0:100:500:50 --by pid"
		"--uprobe $CALLS:pmt_ut_add --lhist arg1:0:5000:10"
		"--uprobe $CALLS:pmt_ut_add --hist arg0 --by pid")
	for i in 0 1 2 3; do
		# shellcheck disable=SC2086 # a run's words
		"$PMT" -a ${runs[i]} -o "$WORK/h$i.txt" 2>"$WORK/h$i.err" &
		pids+=($!)
	done
	ready=1
	for i in 0 1 2 3; do
		wait_for "$WORK/h$i.err" "aggregating" 1200 || ready=0
	done
	{ wait_for "$bt" "^ready" 1200 && bt_attached $btp "$bt" "BEGIN uprobe"; } || ready=0
	if [ $ready = 1 ]; then
		"$CALLS" $n & p=$!
		"$CALLS" $n
		wait $p
		sleep 0.3
	fi
	kill -INT "${pids[@]}"
	for p in "${pids[@]}"; do
		wait "$p" || { fail "a pmtrace run failed"; cat "$WORK"/h*.err >&2; stop_bpftrace $btp; return 1; }
	done
	stop_bpftrace $btp || { fail "bpftrace did not end on SIGINT"; return 1; }
	[ $ready = 1 ] || { fail "not every tracer attached"; return 1; }
	check hist_vs_bpftrace "$bt" "$WORK/h0.txt" "$WORK/h1.txt" "$WORK/h2.txt" "$WORK/h3.txt"
}
