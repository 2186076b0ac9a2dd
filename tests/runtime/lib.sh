# shellcheck shell=bash
# Shared by every runtime test (sourced by tests/runtime/runner.sh before
# an area file). A test is a function test_NAME that returns 0 (pass), 1
# (fail) or 77 (skip, after saying why with skip or requires). Each runs in
# its own shell with its own $WORK directory, under its own timeout.
PMT=${PMT:-./pmtrace}
TP=${TP:-.output/testprogs}
export CALLS=$TP/calls	# tests/testprogs/calls: uprobe and kprobe targets
# Debian's interpreter by its path (PATH may hold pyenv's shims): the
# workloads' (PY: their comm is python3.11) and the checks' (PY3)
# shellcheck disable=SC2034 # read by the area files
PY=/usr/bin/python3.11
# shellcheck disable=SC2034 # read by the area files
PY3=/usr/bin/python3
WORK=${WORK:?the runner makes a work directory per test}
DEFAULT_TIMEOUT=${DEFAULT_TIMEOUT:-120}
# no debuginfod server but the ones a test starts (a shell's profile may
# name Debian's: fetches from it would wait on the network)
unset DEBUGINFOD_URLS

# nap SECS: a sleep without a process, for loops that wait: a read that
# times out on a FIFO nobody writes. In a TCG guest a fork and exec of
# sleep (or grep) costs 50-70 ms of its one CPU: a loop polling every
# 50 ms took half of it from the tracer it waited on.
nap() {
	[ -p "$WORK/.nap" ] || mkfifo "$WORK/.nap" 2>/dev/null || { sleep "$1"; return 0; }
	read -r -t "$1" <>"$WORK/.nap" || :
}

fail() { echo "    FAIL: $*" >&2; return 1; }
skip() { echo "    SKIP: $*" >&2; return 77; }
note() { echo "    $*" >&2; }

expect_eq() { # what actual expected
	[ "$2" = "$3" ] || { fail "$1: got '$2', expected '$3'"; return 1; }
}

# expect_output NAME FILE: FILE holds exactly the expected output kept in
# tests/runtime/outputs/AREA/NAME; else the difference, and a failure.
expect_output() {
	local want=tests/runtime/outputs/${PMT_AREA:?the runner names the area}/$1
	[ -f "$want" ] || { fail "no expected output $want"; return 1; }
	diff -u "$want" "$2" >&2 || { fail "$2 is not $want"; return 1; }
}

# check NAME ARGS...: the test's check of what it wrote (JSON events,
# histograms, ...), the function NAME of its area's checks file,
# tests/runtime/checks/AREA.py (the runner names the area).
check() {
	"$PY3" "tests/runtime/checks/${PMT_AREA:?the runner names the area}.py" "$@"
}

# a CPU PMU: x86's "cpu" (cpu_core, cpu_atom), arm64's "armv8_pmuv3_0"
# (QEMU's -cpu max has one)
has_cpu_pmu() {
	local d
	for d in /sys/bus/event_source/devices/cpu* /sys/bus/event_source/devices/armv8*; do
		[ -e "$d" ] && return 0
	done
	return 1
}
have_kprobes() { [ -e /sys/bus/event_source/devices/kprobe ]; }
have_fentry() { "$PMT" -q --kprobe-mode fentry --kprobe vfs_read -d 0.01 >/dev/null 2>&1; }

# requires WHAT...: skip (77) with the reason when this machine lacks one.
# perf, bpftrace, chromium, setpriv, prometheus, promtool, curl, go, node, openssl: the tool; kprobes, fentry: the
# kernel feature; cpu-pmu: a hardware PMU; host: not in a QEMU guest
# (too slow under TCG); native: not the ASan+UBSan build (make
# test-sanitize: the test bounds memory or time); userspace: what the test checks is pmtrace's user
# space (printing, names, usage errors), the same on every kernel, while
# other tests load the same programs in the guests.
requires() {
	local what
	for what in "$@"; do
		case $what in
		perf | bpftrace | bpftool | chromium | setpriv | prometheus | promtool | curl | go | nginx | wrk | node | debuginfod | java | openssl | systemd-analyze | strace)
			command -v "$what" >/dev/null || { skip "needs $what: not installed (make test-deps)"; return; } ;;
		kprobes)
			have_kprobes || { skip "needs kprobes: this kernel has none (CONFIG_KPROBES unset); runs in the QEMU guests (make vmtest)"; return; } ;;
		fentry)
			have_fentry || { skip "needs fentry: this kernel refuses BPF trampolines; runs in the QEMU guests (make vmtest)"; return; } ;;
		cpu-pmu)
			has_cpu_pmu || { skip "needs a hardware CPU PMU: this machine has none"; return; } ;;
		host)
			[ -z "${PMT_VM:-}" ] || { skip "runs on the host only (minutes under TCG)"; return; } ;;
		native)
			[ -z "${PMT_SANITIZED:-}" ] || { skip "bounds memory or time: a sanitized pmtrace's are the sanitizers'"; return; } ;;
		userspace)
			[ -z "${PMT_VM:-}" ] || { skip "runs on the host only: it checks user space, the same on every kernel"; return; } ;;
		guest-modules)
			# a guest's kernel modules (md, loop, XFS): tools/vmtest
			# gives their tree, depmod'ed, in PMT_VM_MODULES
			{ [ -n "${PMT_VM_MODULES:-}" ] && [ -r "$PMT_VM_MODULES/lib/modules/$(uname -r)/modules.dep" ] && command -v modprobe >/dev/null; } ||
				{ skip "needs the kernel's modules (loop, md, XFS) as a QEMU guest of tools/vmtest has them"; return; } ;;
		*)
			fail "requires: unknown requirement '$what'"; return ;;
		esac
	done
}

# A test's second half, the same run under bpftrace as the oracle, runs
# on the host only: in a QEMU guest bpftrace's LLVM costs some 10 s a run
# under TCG, and its numbers there test bpftrace, not the kernel. The
# first half (pmtrace's own exact counts) has passed there when this is
# reached. Usage: oracle_on_host || return 0
oracle_on_host() { [ -z "${PMT_VM:-}" ]; }

# The number of system call NAME on this machine (the few tests name)
syscall_nr() {
	case $(uname -m)/$1 in
	x86_64/getppid) echo 110 ;;
	aarch64/getppid) echo 173 ;;
	*) echo "syscall_nr: no number for $1 on $(uname -m)" >&2 && return 1 ;;
	esac
}

# The kernel's entry of system call NAME on this machine: its
# architecture's wrapper (x86-64's __x64_sys_NAME, arm64's __arm64_sys_NAME)
syscall_entry() {
	case $(uname -m) in
	aarch64) echo "__arm64_sys_$1" ;;
	*) echo "__x64_sys_$1" ;;
	esac
}

# The cgroup v2 hierarchy into CG: where /proc/mounts has it, else mounted
# for the test (the caller's cleanup unmounts it where CG_MOUNTED is set).
cg_root() {
	CG=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	# shellcheck disable=SC2034 # read by the callers' cleanups
	CG_MOUNTED=
	if [ -z "$CG" ]; then
		CG=$WORK/cgroup2
		mkdir -p "$CG"
		mount -t cgroup2 none "$CG" || { skip "no cgroup v2 hierarchy, and none can be mounted"; return; }
		# shellcheck disable=SC2034
		CG_MOUNTED=1
	fi
}

# A cgroup of the test's own (OWN_CG, a path under CG), removed when the
# test ends: a profile of it (--cgroup) sees the test's processes and
# nothing else the machine runs (a compiler's libLLVM beside the suite
# takes tables and memory that are not the test's). Enter it with
# in_own_cg; usage: cg_own || return
cg_own() {
	cg_root || return
	OWN_CG=$CG/pmt_own_$$
	mkdir "$OWN_CG" || { fail "cannot make a cgroup under $CG"; return 1; }
	trap 'rmdir "$OWN_CG"; [ -z "$CG_MOUNTED" ] || umount "$CG"' EXIT
}

# bpftrace 0.17 runs BEGIN before it attaches its probes (BPFtrace::run:
# BEGIN_trigger, then each probe): a line BEGIN prints says only that
# they are coming, and a command run then may make events none sees
# (seen beside two CPU hogs: a guest's test waited 20 minutes for a line
# bpftrace had missed). Ready once the kernel lists as many of its
# attachments as "Attaching N probes..." (its stdout, OUT) said, less
# BEGIN's and END's and the perf events bpftool does not list
# (interval, profile): tracepoints, kprobes and uprobes as perf events,
# kprobe_multi (a glob) as a link.
bt_attachments() { # PID
	local links
	# (a link's owner from its fd: bpftool's "pids" needs what the
	# guests' kernels do not give it)
	links=$(grep -ls '^link_type:[[:space:]]*kprobe_multi' /proc/"$1"/fdinfo/* | wc -l)
	bpftool perf show 2>/dev/null | awk -v p="$1" -v n="$links" '$1 == "pid" && $2 == p { n++ } END { print n + 0 }'
}
bt_attached() { # PID OUT PROGRAM-TEXT [SECS]
	local pid=$1 n want end=$((SECONDS + (${4:-60} * ${PMT_SLOWDOWN:-100} + 99) / 100))
	command -v bpftool >/dev/null || return 0
	n=$(sed -n 's/^Attaching \([0-9]*\) probes\{0,1\}\.\.\.$/\1/p' "$2" | head -1)
	[ -n "$n" ] || { fail "bpftrace did not say how many probes it attaches"; return 1; }
	want=$((n - $(grep -cE '^[[:space:]]*(BEGIN|END|interval:|profile:)' <<<"$3")))
	while [ "$(bt_attachments "$pid")" -lt "$want" ]; do
		kill -0 "$pid" 2>/dev/null || { fail "bpftrace ended while attaching its probes"; return 1; }
		if [ $SECONDS -ge $end ]; then
			{ bpftool perf show; bpftool link show; grep -s link_type /proc/"$pid"/fdinfo/*; } 2>/dev/null | sed 's/^/    | /' >&2
			fail "bpftrace (pid $pid) attached $(bt_attachments "$pid") of the $want probes it said"
			return 1
		fi
		nap 0.1
	done
}

# Run CMD... in OWN_CG (in a subshell that enters it).
in_own_cg() {
	(echo "$BASHPID" >"$OWN_CG/cgroup.procs" && "$@")
}

# Nothing of pmtrace may remain loaded: no program named pmt_*, no link to
# one. The kernel-side teardown of tracepoint links runs in pmtrace's
# background closer (an RCU grace period per tracepoint), so allow it 60 s.
no_leftovers() {
	local left tries=600
	command -v bpftool >/dev/null || { fail "no bpftool: what is left in the kernel cannot be listed"; return 1; }
	while left=$(leftovers) && [ -n "$left" ] && [ $tries -gt 0 ]; do
		nap 0.1
		tries=$((tries - 1))
	done
	[ -z "$left" ] || { fail "left in the kernel after 60 s: $left"; return 1; }
}

leftovers() {
	"$PY3" - <<'PY'
import json, subprocess
def show(what):
    out = subprocess.run(["bpftool", "-j", what, "show"], capture_output=True, text=True).stdout
    return json.loads(out or "[]")
ids = {p["id"] for p in show("prog") if p.get("name", "").startswith("pmt_")}
links = [l for l in show("link") if l.get("prog_id") in ids]
print(f"{len(ids)} programs, {len(links)} links" if ids or links else "")
PY
}

# Wait until FILE contains PATTERN (default 5 s, TRIES of 50 ms, scaled
# by the suite's calibration) on N lines (1 unless said); with PID, only
# while that process lives.
# What FILE ends with is shown when it never does.
# FILE is read again only once it has changed: the stamp (this shell's)
# written before each read is newer than a FILE written before it
# (same-tick writes read again), a test of the shell's, no process.
# Whether FILE holds PATTERN on at least N lines.
holds() { # FILE PATTERN N
	local c
	c=$(grep -c -- "$2" "$1" 2>/dev/null)
	[ "${c:-0}" -ge "$3" ]
}

wait_for() {
	local file=$1 pattern=$2 tries=$(((${3:-100} * ${PMT_SLOWDOWN:-100} + 99) / 100)) pid=${4:-} n=${5:-1}
	local stamp=$WORK/.wait_for.$BASHPID first=1
	while [ "$tries" -gt 0 ]; do
		if [ -n "$first" ] || ! [ "$stamp" -nt "$file" ]; then
			first=
			: >"$stamp"
			holds "$file" "$pattern" "$n" && return 0
		fi
		if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
			# (what it wrote as it ended)
			holds "$file" "$pattern" "$n" && return 0
			wait "$pid" 2>/dev/null
			fail "process $pid ended (status $?) before '$pattern' (x$n) in $file; it ends:"
			break
		fi
		nap 0.05
		tries=$((tries - 1))
	done
	[ "$tries" -gt 0 ] || fail "timed out waiting for '$pattern' (x$n) in $file; it ends:"
	tail -n 5 "$file" 2>/dev/null | sed 's/^/    | /' >&2
	[ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null || threads_of "$pid"
	return 1
}

# Whether process PID (a child: bash reaps it) ends within SECS.
# A zombie is gone: bash reaps its children only when it next waits or
# forks, and nap does neither (CI: an ended pmtrace "did not end" 180 s).
alive() { # PID
	local line
	kill -0 "$1" 2>/dev/null || return 1
	read -r line <"/proc/$1/stat" 2>/dev/null || return 1
	line=${line##*) }
	[ "${line%% *}" != Z ]
}
wait_gone() { # PID SECS
	local n=$(($2 * 10))
	while [ $n -gt 0 ] && alive "$1"; do
		nap 0.1
		n=$((n - 1))
	done
	! alive "$1"
}

# Stop bpftrace run in the background (an oracle): SIGINT, again each
# second (as a user presses Ctrl-C again), its end awaited 30 s (scaled).
# bpftrace 0.17 now and then misses one: its handler sets a flag that its
# loop reads before it sleeps in epoll_wait without a timeout, so a
# SIGINT between the two is seen at the next event or signal (in CI
# beside busy guests a test waited 464 s for it; a second SIGINT ends
# it). One that outlasts them all: where its threads wait is shown, it is
# killed, and the status is 1 (the caller runs it again).
stop_bpftrace() { # PID
	local n=$(((30 * ${PMT_SLOWDOWN:-100} + 99) / 100)) i=0
	while [ $i -lt "$n" ]; do
		kill -INT "$1" 2>/dev/null || break
		wait_gone "$1" 1 && break
		i=$((i + 1))
	done
	# (ended is a zombie too, not yet reaped by this shell: kill -0
	# finds it, and a bpftrace that had ended was taken for one that
	# hung, "did not end on 1350 SIGINTs", in CI's 6.12 guest)
	if ! alive "$1"; then
		wait "$1"
		return 0
	fi
	note "bpftrace ($1) did not end on $n SIGINTs: killed; it waited in"
	threads_of "$1"
	kill -KILL "$1"
	wait "$1" 2>/dev/null
	return 1
}

# Where each thread of PID is: its state, and the kernel stack it waits
# in (what a start that never ends was doing).
threads_of() { # PID
	local t
	for t in /proc/"$1"/task/*; do
		echo "    thread ${t##*/} ($(cat "$t/comm" 2>/dev/null)): $(awk '/^State:/ { print $2, $3 }' "$t/status" 2>/dev/null)," \
			"in $(cat "$t/wchan" 2>/dev/null)"
		head -n 8 "$t/stack" 2>/dev/null | sed 's/^/    |   /'
	done >&2
	# and in user space (elfutils: make test-deps)
	! command -v eu-stack >/dev/null || eu-stack -p "$1" 2>&1 | head -n 60 | sed 's/^/    |   /' >&2
}

# The ids of the BPF programs, and the id of the map NAME, that process PID
# holds open (another pmtrace may run beside the test, its programs and
# maps named as this one's).
prog_ids_of() { # PID
	sed -n 's/^prog_id:[[:space:]]*//p' /proc/"$1"/fdinfo/* 2>/dev/null | sort -un
}
map_id_of() { # PID NAME
	local id
	while read -r id; do
		bpftool -j map show id "$id" 2>/dev/null | grep -q "\"name\":\"$2\"" && { echo "$id"; return 0; }
	done < <(sed -n 's/^map_id:[[:space:]]*//p' /proc/"$1"/fdinfo/* 2>/dev/null | sort -un)
	return 1
}

# Start pmtrace ARGS... --listen 0 in the background; sets PMT_PID and
# PORT (the port it chose) once it serves. Killed when the test ends.
serve() {
	# emptied here: the background shell's own redirection may come after
	# the wait below has read a line of the test's previous serve
	: >"$WORK/serve.err"
	"$PMT" "$@" --listen 0 -o "$WORK/serve.out" 2>"$WORK/serve.err" &
	PMT_PID=$!
	trap 'kill -INT $PMT_PID 2>/dev/null; wait $PMT_PID 2>/dev/null' EXIT
	wait_for "$WORK/serve.err" "aggregating" || { cat "$WORK/serve.err" >&2; return 1; }
	PORT=$(sed -n 's|.*serving metrics at https\{0,1\}://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$WORK/serve.err")
	[ -n "$PORT" ] || { cat "$WORK/serve.err" >&2; fail "no port announced"; }
}

# Usage errors: exit 2, one clear message, nothing attached.
usage_error() { # EXPECTED-MESSAGE-REGEX ARGS...
	local re=$1 err=$WORK/usage.err
	shift
	# bounded: an input wrongly accepted would trace until stopped
	timeout 30 "$PMT" "$@" >/dev/null 2>"$err"
	local rc=$?
	[ $rc = 2 ] || { fail "pmtrace $*: exit $rc, expected 2"; cat "$err" >&2; return 1; }
	grep -Eq -- "$re" "$err" || { fail "pmtrace $*: message does not match /$re/:"; cat "$err" >&2; return 1; }
}

# perf record ARGS... in the background, returning once it records:
# started disabled (-D -1) and enabled through its control fifo, whose
# ack says so (a fixed sleep is too short under TCG). PERF_PID is set.
perf_record_ready() {
	rm -f "$WORK/perf.ctl" "$WORK/perf.ack"
	mkfifo "$WORK/perf.ctl" "$WORK/perf.ack"
	perf record -q -D -1 --control "fifo:$WORK/perf.ctl,$WORK/perf.ack" "$@" 2>>"$WORK/perf.err" &
	PERF_PID=$!
	exec {PERF_CTL}>"$WORK/perf.ctl" {PERF_ACK}<"$WORK/perf.ack"
	echo enable >&"$PERF_CTL"
	local ack=
	read -r -t 120 -u "$PERF_ACK" ack
	[ "$ack" = ack ] || { fail "perf record did not start: $(cat "$WORK/perf.err")"; perf_record_stop; return 1; }
}

perf_record_stop() {
	kill -INT "$PERF_PID"
	wait "$PERF_PID"
	exec {PERF_CTL}>&- {PERF_ACK}<&-
}

# FILE: a Python program making 3 TCP connections to 127.0.0.1:PORT (its
# argument), accepted by itself.
write_conn_py() {
	cat >"$1" <<-'PYEOF'
		import socket, sys
		srv = socket.socket()
		srv.bind(("127.0.0.1", int(sys.argv[1])))
		srv.listen(8)
		for i in range(3):
		    c = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
		    s, _ = srv.accept()
		    s.close()
		    c.close()
	PYEOF
}

# $WORK/ours and $WORK/theirs, the same lines
same_lines() {
	cmp -s "$WORK/ours" "$WORK/theirs" || {
		diff "$WORK/ours" "$WORK/theirs" >&2
		fail "pmtrace's lines (<) are not bpftrace's (>)"
		return 1
	}
	note "$(wc -l <"$WORK/ours") lines as bpftrace's"
}
