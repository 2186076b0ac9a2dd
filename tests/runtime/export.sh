# shellcheck shell=bash
# shellcheck disable=SC2153 # PORT and PMT_PID: set by serve (lib.sh)
# Runtime tests, area export: --listen (Prometheus/OpenMetrics) and --pprof.
# Sourced by tests/runtime/runner.sh after lib.sh; each test_NAME runs alone
# under its own timeout (timeout_NAME=SECS, default $DEFAULT_TIMEOUT).

scrape() { # [ACCEPT]: the exposition on stdout
	curl -sS --max-time 10 ${1:+-H "Accept: $1"} "http://127.0.0.1:$PORT/metrics"
}

OM_ACCEPT='application/openmetrics-text; version=1.0.0'

# A real Prometheus scraping the server serve started each second, its
# job's settings ([JOB-LINES]: scheme, tls_config, ...) added; its API
# at 127.0.0.1:$PROM_PORT. Stopped with pmtrace at the test's end.
prometheus_scraping() {
	PROM_PORT=$("$PY3" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	cat >"$WORK/prom.yml" <<-EOF
		global:
		  scrape_interval: 1s
		scrape_configs:
		  - job_name: pmtrace
		${1:-}
		    static_configs:
		      - targets: ['127.0.0.1:$PORT']
	EOF
	prometheus --config.file="$WORK/prom.yml" --storage.tsdb.path="$WORK/tsdb" \
		--web.listen-address="127.0.0.1:$PROM_PORT" >"$WORK/prom.log" 2>&1 &
	PROM_PID=$!
	trap 'kill -9 $PROM_PID 2>/dev/null; kill -INT "$PMT_PID" 2>/dev/null; wait "$PMT_PID" $PROM_PID 2>/dev/null' EXIT
}

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
	prometheus_scraping || return 1
	check prometheus_histogram "$PROM_PORT" || { tail -5 "$WORK/prom.log" >&2; return 1; }
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
	"$PY3" -c 'import socket,time; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(30)' >"$WORK/port" &
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
# exit, so every spinner sample is whole: from the program's or the
# loader's entry (checks/export.py whole_from_entry), or, in execve's
# last steps (the name is the new program's, the registers still the
# shell's), [unknown] above the kernel's frames, or one frame in
# crtstuff's code without CFI. Nothing
# is forgotten, and the profile of the same run agrees (its mappings the
# spinner's file with its build-id).
test_exited_processes_named_past_the_bound() {
	requires userspace go || return
	# 300 processes past a bound of 32
	local n=300
	cat >"$WORK/churn.sh" <<-EOF
		for i in \$(seq $n); do "$PWD/$TP/spinner" 5 >/dev/null; done
	EOF
	PMT_MAX_DEAD=32 "$PMT" -e cpu-clock --freq 999 --stack --folded -o "$WORK/f.txt" \
		--pprof "$WORK/p.pb.gz" -- sh "$WORK/churn.sh" 2>"$WORK/err" || { cat "$WORK/err" >&2; return 1; }
	! grep -q "forgotten" "$WORK/err" || { cat "$WORK/err" >&2; fail "processes forgotten"; return 1; }
	# 300 x 5 ms of spinning at 999 Hz, half of it at least, through main
	check whole_from_entry "$WORK/f.txt" "$TP"/spinner spinner 750 || return 1
	export HOME=$WORK
	go tool pprof -top -sample_index=samples -nodecount=100000 -nodefraction=0 "$WORK/p.pb.gz" >"$WORK/top.txt" 2>"$WORK/pprof.err" || return 1
	go tool pprof -raw "$WORK/p.pb.gz" >"$WORK/raw.txt" 2>>"$WORK/pprof.err" || return 1
	check pprof_vs_folded "$WORK/f.txt" "$WORK/top.txt" "$WORK/raw.txt" "$(readlink -f "$TP"/spinner)" \
		"$(readelf -n "$TP"/spinner | sed -n 's/.*Build ID: //p')" churn
}

# --web-config's files in $WORK: a CA, the server's certificate for
# 127.0.0.1 signed by it, a client's it signed and one it did not, and
# alice's password (s3cret) as a bcrypt hash (libcrypt's, through Python).
web_certs() {
	local w=$WORK ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
	{
		openssl req -x509 "${ec[@]}" -keyout "$w/ca.key" -out "$w/ca.crt" -days 2 -subj /CN=pmt-ca &&
			openssl req "${ec[@]}" -keyout "$w/server.key" -out "$w/server.csr" -subj /CN=127.0.0.1 &&
			printf 'subjectAltName=IP:127.0.0.1\n' >"$w/san.ext" &&
			openssl x509 -req -in "$w/server.csr" -CA "$w/ca.crt" -CAkey "$w/ca.key" -CAcreateserial \
				-out "$w/server.crt" -days 2 -extfile "$w/san.ext" &&
			openssl req "${ec[@]}" -keyout "$w/client.key" -out "$w/client.csr" -subj /CN=scraper &&
			openssl x509 -req -in "$w/client.csr" -CA "$w/ca.crt" -CAkey "$w/ca.key" -CAcreateserial \
				-out "$w/client.crt" -days 2 &&
			openssl req -x509 "${ec[@]}" -keyout "$w/rogue.key" -out "$w/rogue.crt" -days 2 -subj /CN=rogue
	} 2>"$w/openssl.err" || { cat "$w/openssl.err" >&2; fail "openssl"; return 1; }
	ALICE=$("$PY" -W ignore -c 'import crypt; print(crypt.crypt("s3cret", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 10)))') ||
		{ fail "no bcrypt hash"; return 1; }
}

code_of() { # CURL-ARGS...: the HTTP status, or curl's exit status as "curl N"
	local code
	code=$(curl -sS --max-time 10 -o "$WORK/body" -w '%{http_code}' "$@" 2>"$WORK/curl.err") || code="curl $?"
	echo "$code"
}

# HTTPS and basic auth (exporter-toolkit's --web.config.file format):
# curl with the right, a wrong and no password, an unknown user, a server
# certificate it does not trust and plain HTTP; the counts exact, promtool
# agrees, refusals counted on /metrics. Then a real Prometheus scrapes it
# with tls_config and basic_auth.
test_metrics_https_basic_auth() {
	requires curl openssl promtool prometheus host || return
	web_certs || return 1
	printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nbasic_auth_users:\n  alice: %s\n' \
		"$ALICE" >"$WORK/web.yml"
	cp "$TP"/getppid_loop "$WORK/ppid_tls"
	serve -a --tp syscalls:sys_enter_getppid --filter 'comm == "ppid_tls"' --count --web-config "$WORK/web.yml" || return 1
	grep -q "serving metrics at https://.* (basic auth)" "$WORK/serve.err" || { cat "$WORK/serve.err" >&2; fail "not announced as https with basic auth"; return 1; }
	"$WORK/ppid_tls" 777 >/dev/null
	local url="https://127.0.0.1:$PORT/metrics"
	expect_eq "right password" "$(code_of --cacert "$WORK/ca.crt" -u alice:s3cret "$url")" 200 || return 1
	promtool check metrics <"$WORK/body" || { fail "promtool"; return 1; }
	grep -qx 'pmtrace_syscalls_sys_enter_getppid_events_total 777' "$WORK/body" || { cat "$WORK/body" >&2; fail "count not exact"; return 1; }
	expect_eq "wrong password" "$(code_of --cacert "$WORK/ca.crt" -u alice:guess "$url")" 401 || return 1
	expect_eq "no password" "$(code_of --cacert "$WORK/ca.crt" -D "$WORK/hdr" "$url")" 401 || return 1
	grep -qi '^WWW-Authenticate: Basic realm="pmtrace"' "$WORK/hdr" || { cat "$WORK/hdr" >&2; fail "no WWW-Authenticate"; return 1; }
	expect_eq "unknown user" "$(code_of --cacert "$WORK/ca.crt" -u mallory:s3cret "$url")" 401 || return 1
	expect_eq "untrusted server certificate" "$(code_of -u alice:s3cret "$url")" "curl 60" || return 1
	[ "$(code_of -u alice:s3cret "http://127.0.0.1:$PORT/metrics")" != 200 ] || { fail "plain HTTP answered"; return 1; }
	code_of --cacert "$WORK/ca.crt" -u alice:s3cret "$url" >/dev/null
	grep -qx 'pmtrace_http_refused_total{reason="password"} 3' "$WORK/body" ||
		{ grep refused "$WORK/body" >&2; fail "refusals not counted 3"; return 1; }
	prometheus_scraping "    scheme: https
    tls_config:
      ca_file: $WORK/ca.crt
    basic_auth:
      username: alice
      password: s3cret" || return 1
	check prometheus_query "$PROM_PORT" 'pmtrace_syscalls_sys_enter_getppid_events_total' 777 ||
		{ tail -5 "$WORK/prom.log" >&2; return 1; }
}
# shellcheck disable=SC2034 # read by runner.sh
timeout_metrics_https_basic_auth=90

# Mutual TLS: a client certificate the client CA signed is served; none,
# or one it did not sign, is answered 403 and counted; TLS 1.2 is refused
# where min_version is TLS13; the configured headers are on each answer.
# Then VerifyClientCertIfGiven with a password: go tool pprof (no
# certificate; the CA from SSL_CERT_FILE) fetches a profile over HTTPS
# with alice's password, and is refused with a wrong one.
test_metrics_mutual_tls() {
	requires curl openssl go host || return
	web_certs || return 1
	cat >"$WORK/mtls.yml" <<-EOF
		tls_server_config:
		  cert_file: server.crt
		  key_file: server.key
		  client_ca_file: ca.crt
		  client_auth_type: RequireAndVerifyClientCert
		  min_version: TLS13
		http_server_config:
		  headers:
		    X-Frame-Options: deny
	EOF
	serve --tp sched:sched_switch --count --web-config "$WORK/mtls.yml" || return 1
	local url="https://127.0.0.1:$PORT/metrics" ca=(--cacert "$WORK/ca.crt") mine=(--cert "$WORK/client.crt" --key "$WORK/client.key")
	expect_eq "signed client certificate" "$(code_of "${ca[@]}" "${mine[@]}" -D "$WORK/hdr" "$url")" 200 || return 1
	grep -qi '^X-Frame-Options: deny' "$WORK/hdr" || { cat "$WORK/hdr" >&2; fail "no X-Frame-Options"; return 1; }
	expect_eq "no client certificate" "$(code_of "${ca[@]}" "$url")" 403 || return 1
	expect_eq "a certificate the CA did not sign" "$(code_of "${ca[@]}" --cert "$WORK/rogue.crt" --key "$WORK/rogue.key" "$url")" 403 || return 1
	[ "$(code_of "${ca[@]}" "${mine[@]}" --tls-max 1.2 "$url")" != 200 ] ||
		{ fail "TLS 1.2 answered with min_version TLS13"; return 1; }
	code_of "${ca[@]}" "${mine[@]}" "$url" >/dev/null
	grep -qx 'pmtrace_http_refused_total{reason="client_cert"} 2' "$WORK/body" ||
		{ grep refused "$WORK/body" >&2; fail "refusals not counted 2"; return 1; }
	kill -INT "$PMT_PID" && wait "$PMT_PID"
	printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_ca_file: ca.crt\n  client_auth_type: VerifyClientCertIfGiven\nbasic_auth_users:\n  alice: %s\n' \
		"$ALICE" >"$WORK/given.yml"
	serve -a -e cpu-clock --freq 99 --stack --web-config "$WORK/given.yml" || return 1
	expect_eq "a certificate the CA did not sign" \
		"$(code_of "${ca[@]}" -u alice:s3cret --cert "$WORK/rogue.crt" --key "$WORK/rogue.key" "https://127.0.0.1:$PORT/metrics")" 403 || return 1
	export HOME=$WORK SSL_CERT_FILE=$WORK/ca.crt
	local prof="127.0.0.1:$PORT/debug/pprof/profile?seconds=1"
	go tool pprof -raw "https://alice:s3cret@$prof" >"$WORK/p.txt" 2>"$WORK/p.err" ||
		{ cat "$WORK/p.err" >&2; fail "go tool pprof over https"; return 1; }
	grep -q "^PeriodType: cpu nanoseconds" "$WORK/p.txt" || { head -5 "$WORK/p.txt" >&2; fail "no CPU profile"; return 1; }
	if go tool pprof -raw "https://alice:guess@$prof" >"$WORK/p.txt" 2>"$WORK/p.err" ||
		! grep -q "401 Unauthorized" "$WORK/p.err"; then
		cat "$WORK/p.err" >&2
		fail "a wrong password fetched a profile"
		return 1
	fi
}
# shellcheck disable=SC2034 # read by runner.sh
timeout_metrics_mutual_tls=60

# --web-config's mistakes: exit 2 naming the file, line and key, the port
# not served, nothing attached.
test_metrics_web_config_refused() {
	requires openssl userspace || return
	web_certs || return 1
	printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: nothere.key\n' >"$WORK/w1.yml"
	usage_error "w1.yml:3: key_file '.*/nothere.key': No such file or directory" \
		--tp sched:sched_switch --count --listen 0 --web-config "$WORK/w1.yml" || return 1
	printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: client.key\n' >"$WORK/w2.yml"
	usage_error "w2.yml: its key and certificate: The certificate and the given key do not match" \
		--tp sched:sched_switch --count --listen 0 --web-config "$WORK/w2.yml" || return 1
	printf 'basic_auth_users:\n  alice: s3cret\n' >"$WORK/w3.yml"
	usage_error "w3.yml:2: basic_auth_users: alice's password is not a bcrypt hash" \
		--tp sched:sched_switch --count --listen 0 --web-config "$WORK/w3.yml" || return 1
	printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n' >"$WORK/w4.yml"
	usage_error "w4.yml:4: tls_server_config: cipher_suites is not supported by pmtrace" \
		--tp sched:sched_switch --count --listen 0 --web-config "$WORK/w4.yml" || return 1
	usage_error "--web-config secures what --listen serves" \
		--tp sched:sched_switch --count --web-config "$WORK/w4.yml" || return 1
	no_leftovers
}
