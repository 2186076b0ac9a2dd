# shellcheck shell=bash
# shellcheck disable=SC2153 # PORT and PMT_PID: set by serve (lib.sh)
# Runtime tests, area fleet: what a tracer left running on every host
# needs: cgroups by name (--by cgroup/container/unit, --cgroup), profiles
# served over HTTP, its own losses as metrics. Sourced by
# tests/runtime/runner.sh after lib.sh; each test_NAME runs alone.

# Cgroups named as systemd and Kubernetes name them, under a slice of the
# test's own (T), and one outside it (OTHER); HEX a container id.
# work.sh runs getppid_loop 1000 in demo.service, 700 in the container's
# scope, 300 in OTHER.
cg_layout() {
	cg_root || return
	HEX=$(printf '%064x' "$$")
	T=/pmt_test_$$.slice
	SVC=$T/system.slice/demo.service
	POD=$T/kubepods.slice/kubepods-pod$$.slice
	CTR=$POD/cri-containerd-$HEX.scope
	OTHER=/pmt_other_$$
	mkdir -p "$CG$SVC" "$CG$CTR" "$CG$OTHER" || { fail "cannot make cgroups under $CG"; return 1; }
	trap cg_cleanup EXIT
	cat >"$WORK/work.sh" <<-EOF
		run_in() { sh -c 'echo \$\$ >"\$0/cgroup.procs" && exec "\$1" "\$2" >/dev/null' "$CG\$1" "$TP/getppid_loop" "\$2"; }
		run_in $SVC 1000 && run_in $CTR 700 && run_in $OTHER 300
	EOF
}

cg_cleanup() {
	[ -n "${PMT_PID:-}" ] && { kill -INT "$PMT_PID" 2>/dev/null; wait "$PMT_PID" 2>/dev/null; }
	rmdir "$CG$SVC" "$CG$T/system.slice" "$CG$CTR" "$CG$POD" "$CG$T/kubepods.slice" "$CG$T" \
		"$CG$OTHER" 2>/dev/null
	[ -z "$CG_MOUNTED" ] || umount "$CG"
}

# Keys by cgroup path, container id and systemd unit: exact counts, in
# text and JSON; --cgroup on the parent slice counts both children's
# workers and nothing else, decided in the kernel (the filtered count).
test_cgroup_names_exact() {
	cg_layout || return
	local out=$WORK/out.txt
	"$PMT" -q --tp syscalls:sys_enter_getppid --filter 'comm == "getppid_loop"' --count \
		--by cgroup,container,unit -o "$out" -- sh "$WORK/work.sh" || return 1
	printf '%s\n' "@[$OTHER, , -.slice]: 300" \
		"@[$CTR, $HEX, cri-containerd-$HEX.scope]: 700" \
		"@[$SVC, , demo.service]: 1000" >"$WORK/want.txt"
	diff -u "$WORK/want.txt" "$out" || { fail "--by cgroup,container,unit"; return 1; }
	"$PMT" -q --cgroup "$T" --tp syscalls:sys_enter_getppid --filter 'comm == "getppid_loop"' \
		--count --by unit --json -o "$out" -- sh "$WORK/work.sh" || return 1
	if ! grep -q '"entries":\[{"key":{"unit":"cri-containerd-'"$HEX"'.scope"},"count":700,.*{"key":{"unit":"demo.service"},"count":1000,' "$out" ||
		[ "$(grep -o '"key"' "$out" | wc -l)" != 2 ]; then
		cat "$out" >&2
		fail "--cgroup $T"
		return 1
	fi
	# a cgroup as a filter operand, by path
	"$PMT" -q --tp syscalls:sys_enter_getppid --filter "cgroup == \"$CTR\"" --count \
		-o "$out" -- sh "$WORK/work.sh" || return 1
	grep -qx '@: 700' "$out" || { cat "$out" >&2; fail "cgroup == \"$CTR\""; return 1; }
}

# Containers in profiles: folded stacks carry the container's id (none:
# no frame) and pprof samples a container label (none: no label), for a
# spinner in the container's scope and one in demo.service.
test_cgroup_names_in_profiles() {
	requires go || return
	cg_layout || return
	cat >"$WORK/spin.sh" <<-EOF
		run_in() { sh -c 'echo \$\$ >"\$0/cgroup.procs" && exec "\$1" 200 >/dev/null' "$CG\$1" "$PWD/$TP/spinner"; }
		run_in $CTR && run_in $SVC
	EOF
	"$PMT" -q -e cpu-clock --freq 999 --stack user --by comm,container,stack --folded -o "$WORK/f.txt" \
		--pprof "$WORK/p.pb.gz" -- sh "$WORK/spin.sh" || return 1
	local inside outside
	inside=$(awk -v h="spinner;$HEX;_start;" 'index($0, h) == 1 { n += $NF } END { print n + 0 }' "$WORK/f.txt")
	outside=$(awk '/^spinner;_start;/ { n += $NF } END { print n + 0 }' "$WORK/f.txt")
	if [ "$inside" -lt 150 ] || [ "$outside" -lt 150 ]; then
		cat "$WORK/f.txt" >&2
		fail "folded: $inside samples in the container, $outside outside"
		return 1
	fi
	export HOME=$WORK
	go tool pprof -raw "$WORK/p.pb.gz" >"$WORK/raw.txt" 2>"$WORK/pprof.err" || { cat "$WORK/pprof.err" >&2; return 1; }
	if ! grep -q "comm:\[spinner\] container:\[$HEX\]" "$WORK/raw.txt" ||
		! grep -qE "comm:\[spinner\]$" "$WORK/raw.txt"; then
		grep container "$WORK/raw.txt" | sort | uniq -c >&2
		fail "pprof labels"
		return 1
	fi
}

# The labels a Prometheus scrape sees, --cgroup the full filesystem path.
test_cgroup_labels_scraped() {
	requires curl promtool || return
	cg_layout || return
	"$PMT" -a --cgroup "$CG$T" --tp syscalls:sys_enter_getppid --count --by container,unit \
		--listen 0 -o "$WORK/serve.out" 2>"$WORK/serve.err" &
	PMT_PID=$!
	wait_for "$WORK/serve.err" "aggregating" || { cat "$WORK/serve.err" >&2; return 1; }
	local port
	port=$(sed -n 's|.*serving metrics at http://127.0.0.1:\([0-9]*\)/metrics|\1|p' "$WORK/serve.err")
	sh "$WORK/work.sh"
	curl -sS --max-time 10 "http://127.0.0.1:$port/metrics" >"$WORK/m.txt" || return 1
	promtool check metrics <"$WORK/m.txt" || { cat "$WORK/m.txt" >&2; fail "promtool"; return 1; }
	local name=pmtrace_syscalls_sys_enter_getppid_events_total
	if ! grep -qx "$name{container=\"$HEX\",unit=\"cri-containerd-$HEX.scope\"} 700" "$WORK/m.txt" ||
		! grep -qx "$name{container=\"\",unit=\"demo.service\"} 1000" "$WORK/m.txt" ||
		[ "$(grep -c "^$name{" "$WORK/m.txt")" != 2 ]; then
		grep "$name" "$WORK/m.txt" >&2
		fail "labels"
		return 1
	fi
}

# A cgroup that is not there: one message naming what is, exit 2.
test_cgroup_usage_errors() {
	requires userspace || return
	cg_root || return
	usage_error "no cgroup /pmt_no_such_$$ under the cgroup v2 hierarchy at $CG" \
		--cgroup /pmt_no_such_$$ --tp syscalls:sys_enter_getppid --count || return 1
	usage_error "no cgroup /pmt_no_such_$$ under the cgroup v2 hierarchy" \
		--tp syscalls:sys_enter_getppid --filter "cgroup == \"/pmt_no_such_$$\"" --count || return 1
	usage_error "--stat's counters count the whole target" --stat --cgroup / -e task-clock -- true
}

# go tool pprof fetches /debug/pprof/profile?seconds=2 as it fetches Go's:
# a spinner a CPU, started as the request is made, spin through the
# window; the profile holds their functions and 2 s x 99 Hz x the CPUs of
# samples (+-10%: every CPU busy throughout, with them or with whatever
# else runs). Two overlapping requests are each answered from their own
# window.
test_pprof_served_to_go_tool() {
	requires go userspace || return
	serve -a -e cpu-clock --freq 99 --stack || return 1
	export HOME=$WORK
	local url="http://127.0.0.1:$PORT/debug/pprof/profile?seconds=2"
	go tool pprof -raw "$url" >"$WORK/a.txt" 2>"$WORK/a.err" &
	local a=$!
	wait_for "$WORK/a.err" "Fetching profile" || return 1
	local spin=() i
	for ((i = 0; i < $(nproc); i++)); do
		"$TP"/spinner 5000 >/dev/null &
		spin+=($!)
	done
	sleep 1
	go tool pprof -raw "$url" >"$WORK/b.txt" 2>"$WORK/b.err" &
	local b=$!
	wait $a || { cat "$WORK/a.err" >&2; fail "go tool pprof (first)"; kill "${spin[@]}"; return 1; }
	wait $b || { cat "$WORK/b.err" >&2; fail "go tool pprof (second)"; kill "${spin[@]}"; return 1; }
	kill "${spin[@]}"
	check served_profile 2 99 "$(nproc)" "$WORK/a.txt" "$WORK/b.txt" || return 1
	# --offcpu: off-CPU time, and the sample type says so
	kill -INT "$PMT_PID" && wait "$PMT_PID"
	serve -a --offcpu || return 1
	go tool pprof -raw "http://127.0.0.1:$PORT/debug/pprof/profile?seconds=1" >"$WORK/o.txt" 2>"$WORK/o.err" ||
		{ cat "$WORK/o.err" >&2; fail "go tool pprof (off-CPU)"; return 1; }
	grep -q "^PeriodType: off-cpu nanoseconds" "$WORK/o.txt" || { head -5 "$WORK/o.txt" >&2; fail "off-CPU profile"; return 1; }
}
# shellcheck disable=SC2034 # read by runner.sh
timeout_pprof_served_to_go_tool=60

# What cannot be served says so: no stacks sampled (404), a bad seconds
# (400), more windows than pmtrace keeps (429); /debug/pprof/ lists the
# profile; SIGINT ends pmtrace at once while profiles are being taken,
# and they are told so (503).
test_pprof_endpoint_statuses() {
	requires curl userspace || return
	serve -a --tp syscalls:sys_enter_getppid --count || return 1
	local code
	code=$(curl -sS -o "$WORK/body" -w '%{http_code}' "http://127.0.0.1:$PORT/debug/pprof/profile?seconds=1")
	expect_eq "status without stacks" "$code" 404 || return 1
	grep -q "aggregates no stacks; run it with -e EVENT --stack" "$WORK/body" || { cat "$WORK/body" >&2; return 1; }
	kill -INT "$PMT_PID" && wait "$PMT_PID"
	serve -a -e cpu-clock --freq 99 --stack || return 1
	local base="http://127.0.0.1:$PORT/debug/pprof"
	code=$(curl -sS -o "$WORK/body" -w '%{http_code}' "$base/profile?seconds=0")
	expect_eq "status of seconds=0" "$code" 400 || return 1
	curl -sS "$base/" | grep -q 'href="profile?seconds=30"' || { fail "/debug/pprof/ lists no profile"; return 1; }
	local i pids=()
	for i in 1 2 3 4; do
		curl -sS -o "$WORK/w$i" -w '%{http_code}' "$base/profile?seconds=30" >"$WORK/w$i.code" &
		pids+=($!)
	done
	sleep 1
	code=$(curl -sS -o "$WORK/body" -w '%{http_code}' "$base/profile?seconds=1")
	expect_eq "status of a fifth window" "$code" 429 || return 1
	local start end
	start=$(date +%s%N)
	kill -INT "$PMT_PID"
	wait "$PMT_PID" || { cat "$WORK/serve.err" >&2; fail "exit status $?"; return 1; }
	end=$(date +%s%N)
	wait "${pids[@]}"
	[ $(((end - start) / 1000000)) -lt 3000 ] || { fail "SIGINT took $(((end - start) / 1000000)) ms with profiles being taken"; return 1; }
	for i in 1 2 3 4; do # told why
		expect_eq "status of window $i at the stop" "$(cat "$WORK/w$i.code")" 503 || return 1
		grep -q "pmtrace is stopping" "$WORK/w$i" || return 1
	done
	no_leftovers
}

# The tracer's own losses reach the store: after a run that loses on
# purpose (strings at addresses 0..1999: failed reads; 2,000 keys
# through --max-keys 16: dropped updates), the scraped self-metrics
# equal the figures of the exit summary.
test_self_metrics_equal_summary() {
	requires curl || return
	local ut=$TP/untouched
	serve -a --uprobe "$ut:color_of" --count --by 'str(arg1),arg1' --max-keys 16 || return 1
	"$ut" 2000 >/dev/null
	curl -sS --max-time 10 "http://127.0.0.1:$PORT/metrics" >"$WORK/m.txt" || return 1
	kill -INT "$PMT_PID"
	wait "$PMT_PID" || { cat "$WORK/serve.err" >&2; fail "exit status"; return 1; }
	local reads drops
	reads=$(sed -n 's/^pmtrace: warning: \([0-9]*\) str() reads failed.*/\1/p' "$WORK/serve.err")
	drops=$(sed -n 's/^pmtrace: warning: \([0-9]*\) aggregation updates dropped: --max-keys 16 is full/\1/p' "$WORK/serve.err")
	expect_eq "failed reads in the summary" "$reads" 2000 || { cat "$WORK/serve.err" >&2; return 1; }
	[ "${drops:-0}" -gt 0 ] || { cat "$WORK/serve.err" >&2; fail "no update dropped"; return 1; }
	local want
	for want in "pmtrace_failed_reads_total{what=\"string\"} $reads" \
		"pmtrace_dropped_updates_total{reason=\"max_keys\"} $drops" \
		"pmtrace_lost_events_total 0" "pmtrace_lost_stacks_total{reason=\"table_full\"} 0"; do
		grep -qxF "$want" "$WORK/m.txt" || { grep -v '^pmtrace_uprobe' "$WORK/m.txt" >&2; fail "no '$want'"; return 1; }
	done
}

# An always-on profile's loop sleeps: samples at --freq 99 make keys no
# faster than 4 x 99 a CPU, so it wakes some 4 times a second (not 20),
# and the sideband's rings wake it when a churn fills them half: 300
# short processes' samples counted by their comm, no record lost. (A
# loop of 50 ms waits 80 times.)
test_profile_loop_sleeps() {
	requires strace || return
	local out=$WORK/out.txt waits
	strace -f -qq -e trace=epoll_pwait,ppoll -o "$WORK/st" "$PMT" -a -e cpu-clock --freq 99 \
		--count --by comm -d 4 -o "$out" 2>"$WORK/err" &
	sleep 1.5
	for _ in $(seq 300); do "$TP/getppid_loop" 20000 >/dev/null; done
	wait $! || { cat "$WORK/err" >&2; return 1; }
	waits=$(grep -c 'epoll_pwait\|ppoll' "$WORK/st")
	note "$waits waits of the loop in 4 s (250 ms each at most)"
	[ "$waits" -le 40 ] || { fail "$waits waits in 4 s: the loop did not sleep"; return 1; }
	grep -q '^@\[getppid_loop\]: [0-9]' "$out" || { cat "$out" >&2; fail "getppid_loop not counted"; return 1; }
	! grep -i 'lost\|warning' "$WORK/err" || { fail "records lost"; return 1; }
}
