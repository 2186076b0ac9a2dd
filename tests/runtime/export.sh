# shellcheck shell=bash
# shellcheck disable=SC2153 # PORT and PMT_PID: set by serve (lib.sh)
# Runtime tests, area export: --listen (Prometheus/OpenMetrics) and --pprof.
# Sourced by tests/runtime/runner.sh after lib.sh; each test_NAME runs alone
# under its own timeout (timeout_NAME=SECS, default $DEFAULT_TIMEOUT).

scrape() { # [ACCEPT]: the exposition on stdout
	curl -sS --max-time 10 ${1:+-H "Accept: $1"} "http://127.0.0.1:$PORT/metrics"
}

OM_ACCEPT='application/openmetrics-text; version=1.0.0'

# Exact counts per label from a scrape in either format; promtool agrees
# the 0.0.4 text is well formed; OpenMetrics ends in # EOF and names
# counter families without _total.
test_metrics_counter_exact() {
	requires userspace curl promtool || return
	cp "$TP"/getppid_loop "$WORK/ppid_a" && cp "$TP"/getppid_loop "$WORK/ppid_b"
	serve -a --tp syscalls:sys_enter_getppid --filter 'comm ~ "ppid_*"' --count --by comm || return 1
	"$WORK/ppid_a" 1234 >/dev/null && "$WORK/ppid_b" 321 >/dev/null
	scrape >"$WORK/m.txt" || return 1
	scrape "$OM_ACCEPT" >"$WORK/om.txt" || return 1
	promtool check metrics <"$WORK/m.txt" || { cat "$WORK/m.txt" >&2; fail "promtool"; return 1; }
	check metrics_counter "$WORK/m.txt" "$WORK/om.txt" || return 1
}

# A real Prometheus scrapes pmtrace (OpenMetrics, as it asks first); its
# query API returns the exact histogram buckets of reader's known sizes.
test_prometheus_histogram() {
	requires curl prometheus host || return
	cp "$TP"/reader "$WORK/rd_small"
	serve -a --tp syscalls:sys_enter_read --filter 'fd == 100' --hist count --by comm \
		--metric read_size_bytes || return 1
	"$TP"/reader 3 >/dev/null && "$WORK/rd_small" 1 >/dev/null
	local pport
	pport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	cat >"$WORK/prom.yml" <<-EOF
		global:
		  scrape_interval: 1s
		scrape_configs:
		  - job_name: pmtrace
		    static_configs:
		      - targets: ['127.0.0.1:$PORT']
	EOF
	prometheus --config.file="$WORK/prom.yml" --storage.tsdb.path="$WORK/tsdb" \
		--web.listen-address="127.0.0.1:$pport" >"$WORK/prom.log" 2>&1 &
	local prom=$!
	trap 'kill -9 $prom 2>/dev/null; kill -INT "$PMT_PID" 2>/dev/null; wait "$PMT_PID" $prom 2>/dev/null' EXIT
	check prometheus_histogram "$pport" || { tail -5 "$WORK/prom.log" >&2; return 1; }
}
# shellcheck disable=SC2034 # read by runner.sh
timeout_prometheus_histogram=90

# Clients that connect and say nothing, send garbage or half a request,
# and 50 scrapers at once, all while a workload runs: every event is
# counted, scrapes still answer, and SIGINT ends pmtrace at once. (Host
# only: it times the server, and under TCG 50 curls take a minute of CPU.)
test_metrics_bad_clients() {
	requires curl host || return
	cp "$TP"/getppid_loop "$WORK/ppid_bad"
	serve -a --tp syscalls:sys_enter_getppid --filter 'comm == "ppid_bad"' --count || return 1
	exec 3<>"/dev/tcp/127.0.0.1/$PORT" # silent
	exec 4<>"/dev/tcp/127.0.0.1/$PORT"
	printf 'GET /metrics HTTP/1.1\r\nHost: x\r\n' >&4 # half a request
	printf '\000\377 garbage \r\n\r\n' >"/dev/tcp/127.0.0.1/$PORT"
	"$WORK/ppid_bad" 300000 >/dev/null &
	local load=$! i scrapers=()
	for i in $(seq 50); do
		scrape >"$WORK/s$i.txt" &
		scrapers+=($!)
	done
	wait $load "${scrapers[@]}"
	for i in $(seq 50); do
		grep -q '^pmtrace_build_info' "$WORK/s$i.txt" || { fail "scrape $i incomplete"; return 1; }
	done
	local start end
	start=$(date +%s%N)
	scrape >"$WORK/final.txt" || return 1
	end=$(date +%s%N)
	[ $(((end - start) / 1000000)) -lt 2000 ] || { fail "a scrape took $(((end - start) / 1000000)) ms"; return 1; }
	grep -qx 'pmtrace_syscalls_sys_enter_getppid_events_total 300000' "$WORK/final.txt" ||
		{ grep getppid "$WORK/final.txt" >&2; fail "count not exact"; return 1; }
	grep -qx 'pmtrace_dropped_updates_total{reason="max_keys"} 0' "$WORK/final.txt" || return 1
	start=$(date +%s%N)
	kill -INT "$PMT_PID"
	wait "$PMT_PID" || { cat "$WORK/serve.err" >&2; fail "exit status $?"; return 1; }
	end=$(date +%s%N)
	[ $(((end - start) / 1000000)) -lt 3000 ] || { fail "SIGINT took $(((end - start) / 1000000)) ms with clients connected"; return 1; }
	exec 3>&- 4>&-
	no_leftovers
}

# A port another program serves: one message, exit 1, nothing loaded.
test_metrics_port_in_use() {
	python3 -c 'import socket,time; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(30)' >"$WORK/port" &
	local holder=$!
	wait_for "$WORK/port" "[0-9]" || return 1
	timeout 20 "$PMT" --tp sched:sched_switch --count --listen "$(cat "$WORK/port")" 2>"$WORK/err"
	local rc=$?
	kill $holder
	expect_eq "exit status" $rc 1 || return 1
	if ! grep -q "Address already in use" "$WORK/err" ||
		! grep -q "pick another, or 0 for any" "$WORK/err"; then
		cat "$WORK/err" >&2
		fail "no clear message"
		return 1
	fi
	no_leftovers
}

# go tool pprof reads the profile; its totals and flat counts per function
# equal --folded's of the same run; CPU time is samples * period; the
# spinner's mapping carries its build-id, the kernel's its name.
test_pprof_matches_folded() {
	requires userspace go || return
	"$PMT" -q -e cpu-clock --freq 999 --stack --pprof "$WORK/p.pb.gz" --folded -o "$WORK/f.txt" \
		-- "$TP"/spinner 300 >/dev/null || return 1
	export HOME=$WORK
	go tool pprof -top -sample_index=samples -nodecount=100000 "$WORK/p.pb.gz" >"$WORK/top.txt" 2>"$WORK/pprof.err" ||
		{ cat "$WORK/pprof.err" >&2; fail "go tool pprof -top"; return 1; }
	go tool pprof -raw "$WORK/p.pb.gz" >"$WORK/raw.txt" 2>>"$WORK/pprof.err" || return 1
	local bid
	bid=$(readelf -n "$TP"/spinner | sed -n 's/.*Build ID: //p')
	check pprof_vs_folded "$WORK/f.txt" "$WORK/top.txt" "$WORK/raw.txt" "$(readlink -f "$TP"/spinner)" "$bid"
}

# --counter as a histogram metric: the faults per call of pmt_faults(k),
# k = 1..7 ten times each, and one warm-up call of 0 or 1 (see
# tests/testprogs/counted.c): cumulative buckets exact.
test_metrics_counter_histogram() {
	requires curl || return
	serve -a --latency "uprobe:$TP/counted:pmt_faults" --counter page-faults || return 1
	"$TP"/counted 70 >/dev/null || return 1
	scrape >"$WORK/c.txt" || return 1
	check metrics_counter_hist "$WORK/c.txt" || return 1
}

# Exited processes keep their names past the bound of those that wait
# (8,192; PMT_MAX_DEAD=32 here): 300 spinners of 5 ms, each gone long
# before the print. Their stacks are rebased onto their files as they
# exit, so every spinner sample is named through main to pmt_spin_*,
# nothing is forgotten, and the profile of the same run agrees (its
# mappings the spinner's file with its build-id).
test_exited_processes_named_past_the_bound() {
	requires userspace go || return
	# 300 processes past a bound of 32
	local n=300 least=750
	cat >"$WORK/churn.sh" <<-EOF
		for i in \$(seq $n); do "$PWD/$TP/spinner" 5 >/dev/null; done
	EOF
	PMT_MAX_DEAD=32 "$PMT" -e cpu-clock --freq 999 --stack user --folded -o "$WORK/f.txt" \
		--pprof "$WORK/p.pb.gz" -- sh "$WORK/churn.sh" 2>"$WORK/err" || { cat "$WORK/err" >&2; return 1; }
	! grep -q "forgotten" "$WORK/err" || { cat "$WORK/err" >&2; fail "processes forgotten"; return 1; }
	local all named
	all=$(awk '/^spinner;/ { n += $NF } END { print n + 0 }' "$WORK/f.txt")
	named=$(awk '/^spinner;_start;/ && !/\[unknown\]/ { n += $NF } END { print n + 0 }' "$WORK/f.txt")
	[ "$all" -ge "$least" ] || { fail "only $all spinner samples"; return 1; }
	# a stack's first sample may come before its tables are read
	local want=98
	[ $((named * 100)) -ge $((all * want)) ] || { grep '^spinner' "$WORK/f.txt" | sort -t' ' -k2n | tail >&2; fail "$named of $all spinner samples named from _start"; return 1; }
	export HOME=$WORK
	go tool pprof -top -sample_index=samples -nodecount=100000 -nodefraction=0 "$WORK/p.pb.gz" >"$WORK/top.txt" 2>"$WORK/pprof.err" || return 1
	go tool pprof -raw "$WORK/p.pb.gz" >"$WORK/raw.txt" 2>>"$WORK/pprof.err" || return 1
	check pprof_vs_folded "$WORK/f.txt" "$WORK/top.txt" "$WORK/raw.txt" "$(readlink -f "$TP"/spinner)" \
		"$(readelf -n "$TP"/spinner | sed -n 's/.*Build ID: //p')" churn
}
