# shellcheck shell=bash
# Runtime tests, area cli: Usage errors, privileges, --list and --info, globs.
# Sourced by tests/runtime/runner.sh after lib.sh; each test_NAME runs alone
# under its own timeout (timeout_NAME=SECS, default $DEFAULT_TIMEOUT).

# The tests the QEMU guests run too (runner.sh): what the kernel decides;
# every_kernel_tests in every guest, guest_tests dealt between them.
# shellcheck disable=SC2034 # read by runner.sh
guest_tests="glob_many syscalls_routed_same_as_direct core_btf_vs_min_core_btf kernel_lists_read_once"
# what each took in a guest beside two CPU hogs (make test, CI's
# load), seconds, where 15 or more (runner.sh deals guest_tests by
# it; 10 where not given)
# shellcheck disable=SC2034 # read by runner.sh
guest_secs_core_btf_vs_min_core_btf=50
guest_secs_syscalls_routed_same_as_direct=16
guest_secs_glob_many=15
# shellcheck disable=SC2034 # read by runner.sh
every_kernel_tests="verifier_work_bounded"

test_errors_exit_2() {
	requires userspace || return
	usage_error "unknown tracepoint 'sched:sched_swich'" --tp sched:sched_swich || return 1
	grep -q "did you mean sched:sched_switch" "$WORK/usage.err" || { fail "no suggestion"; return 1; }
	usage_error "unknown tracepoint 'schde:sched_switch'" --tp schde:sched_switch || return 1
	grep -q "did you mean sched:sched_switch" "$WORK/usage.err" || { fail "no suggestion"; return 1; }
	usage_error "no tracepoint matches" --tp 'sched:nothing_*' || return 1
	usage_error "expected CATEGORY:NAME" --tp sched_switch || return 1
	usage_error "-p 999999999: no such process" --tp sched:sched_switch -p 999999999 || return 1
	usage_error "cannot execute '/nonexistent/cmd'" --tp sched:sched_switch -- /nonexistent/cmd || return 1
	usage_error "cannot execute 'no-such-command-pmt'" --tp sched:sched_switch -- no-such-command-pmt || return 1
	usage_error "cannot open output file '/nonexistent/dir/out'" --tp sched:sched_switch -o /nonexistent/dir/out || return 1
	usage_error "cannot be combined" --tp sched:sched_switch -p 1 -- true || return 1
	usage_error "-C/--cpu: '99'" --tp sched:sched_switch -C 99 || return 1
	usage_error "no probe given" -d 1 || return 1
	no_leftovers
}

test_not_root() {
	requires setpriv || return
	local err=$WORK/nr.err
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$PMT" --tp sched:sched_switch -d 1 >/dev/null 2>"$err"
	expect_eq "exit status as nobody" $? 2 || return 1
	grep -q "permission denied: tracing needs root, or CAP_BPF and CAP_PERFMON" "$err" || {
		cat "$err" >&2; fail "no privilege message"; }
}

test_list_and_info() {
	local n
	n=$("$PMT" --list 'sched:sched_switch' | wc -l)
	expect_eq "--list sched:sched_switch" "$n" 1 || return 1
	n=$("$PMT" --list 'syscalls:sys_enter_*' | wc -l)
	[ "$n" -gt 100 ] || { fail "--list 'syscalls:sys_enter_*' gave $n"; return 1; }
	"$PMT" --info sched:sched_process_exec >"$WORK/info.txt" || return 1
	grep -Eq '^ +filename +__data_loc char\[\] +8 +4 +(yes|no) +dynamic string' "$WORK/info.txt" || {
		cat "$WORK/info.txt" >&2; fail "--info does not show filename"; return 1; }
	usage_error "unknown tracepoint" --info sched:nope
}

# A session reads each of the kernel's lists of names once, however many
# specs look names up in it: the kernel writes available_events and
# available_filter_functions a page a read() and walks its list from the
# start for each page, and a program of five globs, reading the 60,000
# functions once a spec, spent a second of its start there under TCG.
# strace counts the opens; the counts are exact. (In a guest the kprobes'
# part alone: the tracepoints' is this host's, and took two thirds of the
# test's 34 s in CI's guest.)
test_kernel_lists_read_once() {
	requires strace || return
	[ -z "${PMT_VM:-}" ] || { kprobe_lists_read_once; return; }
	strace -f -qq -e trace=openat -o "$WORK/st" "$PMT" -q --tp 'sched:sched_process_*' --tp 'signal:*' \
		--tp 'syscalls:sys_enter_getpp*' --tp sched:sched_nope_ --count --by probe -- "$TP"/getppid_loop 7 \
		>"$WORK/out" 2>"$WORK/err"
	expect_eq "pmtrace's status (an unknown tracepoint)" $? 2 || return 1
	expect_eq "opens of available_events" "$(grep -c '/available_events"' "$WORK/st")" 1 || return 1
	strace -f -qq -e trace=openat -o "$WORK/st" "$PMT" -q --tp 'sched:sched_process_*' --tp 'signal:*' \
		--tp 'syscalls:sys_enter_getpp*' --count --by probe -- "$TP"/getppid_loop 7 >"$WORK/out" || return 1
	expect_eq "opens of available_events" "$(grep -c '/available_events"' "$WORK/st")" 1 || return 1
	grep -qx '@\[tracepoint:syscalls:sys_enter_getppid\]: 7' "$WORK/out" || { cat "$WORK/out" >&2; fail "no 7 getppid calls"; return 1; }
	have_kprobes || return 0
	kprobe_lists_read_once
}
kprobe_lists_read_once() {
	strace -f -qq -e trace=openat -o "$WORK/st" "$PMT" -q --kprobe 'vfs_read*' --kprobe 'vfs_write*' \
		--kprobe vfs_open --kretprobe 'vfs_read' --count --by probe -- "$TP"/getppid_loop 7 >/dev/null || return 1
	expect_eq "opens of available_filter_functions" "$(grep -c '/available_filter_functions"' "$WORK/st")" 1
}

test_glob_many() {
	local out=$WORK/glob.txt err=$WORK/glob.err
	"$PMT" --tp 'syscalls:sys_enter_*' -o "$out" -- "$TP"/getppid_loop 100 2>"$err" >/dev/null || { cat "$err" >&2; return 1; }
	grep -Eq "tracing [0-9]{3} probes" "$err" || { cat "$err" >&2; fail "glob did not expand to hundreds"; return 1; }
	expect_eq "getppid events" "$(grep -c 'sys_enter_getppid:' "$out")" 100 || return 1
	no_leftovers
}

# tools/completion/pmtrace, as bash calls it: options, tracepoints from
# tracefs, -e events, the fields of the --tp given before.
test_bash_completion() {
	"$PMT" --list sched:sched_switch >/dev/null || return 1	# mounts tracefs
	# shellcheck disable=SC1091 # checked by itself
	. tools/completion/pmtrace
	complete_as() { # EXPECTED WORDS...: the last word is being completed
		local want=$1
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		COMPREPLY=()
		PATH=$PWD:$PATH _pmtrace
		expect_eq "completion of '$*'" "${COMPREPLY[*]}" "$want"
	}
	complete_as "--kprobe-mode" pmtrace --kprobe-m || return 1
	complete_as "sched:sched_switch" pmtrace --tp sched:sched_swit || return 1
	complete_as "prev_pid prev_prio" pmtrace --tp sched:sched_switch --filter prev_p || return 1
	complete_as "comm,next_comm" pmtrace --tp sched:sched_switch --count --by comm,next_c || return 1
	complete_as "cpu-clock cpu-migrations" pmtrace -e cpu- || return 1
	complete_as "kernel" pmtrace -e cpu-clock --stack ker
}

# make install/uninstall honour DESTDIR and PREFIX; the installed man page
# reads without warnings and the binary knows its version.
test_make_install() {
	requires host || return	# the guest's tree is read-only: no make there
	local root=$WORK/root f
	make -s install DESTDIR="$root" PREFIX=/usr >/dev/null || return 1
	for f in sbin/pmtrace share/man/man8/pmtrace.8 share/bash-completion/completions/pmtrace \
		lib/systemd/system/pmtrace-profiler.service; do
		[ -f "$root/usr/$f" ] || { fail "make install did not install usr/$f"; return 1; }
	done
	grep -q '^ExecStart=/usr/sbin/pmtrace ' "$root/usr/lib/systemd/system/pmtrace-profiler.service" ||
		{ fail "the unit does not run the installed pmtrace"; return 1; }
	"$root/usr/sbin/pmtrace" --version | grep -Eq '^pmtrace [0-9]+\.[0-9]+\.[0-9]+$' || { fail "no version"; return 1; }
	[ -z "$(man --warnings -l "$root/usr/share/man/man8/pmtrace.8" 2>&1 >/dev/null)" ] || {
		fail "man --warnings complains"; return 1; }
	make -s uninstall DESTDIR="$root" PREFIX=/usr >/dev/null || return 1
	expect_eq "files left after make uninstall" "$(find "$root" -type f | wc -l)" 0
}

# What the user typed comes back in messages with control bytes escaped,
# never raw to the terminal.
escaped_error() { # ARGS...: pmtrace's message names them with \x1b, no raw ESC
	"$PMT" "$@" -d 0.1 >/dev/null 2>"$WORK/esc.err"
	grep -q '\\x1b\[31m' "$WORK/esc.err" || { cat -v "$WORK/esc.err" >&2; fail "$*: not escaped as \\x1b"; return 1; }
	if LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$WORK/esc.err"; then
		cat -v "$WORK/esc.err" >&2
		fail "$*: a control byte reached stderr"
		return 1
	fi
}

test_errors_escape_control_bytes() {
	local esc=$'\e[31m'
	escaped_error --tp "sched:x$esc" || return 1
	escaped_error --tp sched:sched_switch --filter "comm==\"$esc\"x" || return 1
	escaped_error --uprobe "/bin/true$esc:main" || return 1
	escaped_error -e "cpu-clock$esc" || return 1
	no_leftovers
}

# Bad inputs found by adversarial use: each exits 2 before anything is
# loaded, with one message naming what was wrong, and leaves no output
# file. One line each: MESSAGE-REGEX | ARGS (shell words).
BAD_INPUTS=$(cat <<'TABLE'
--by: '': expected KEY\[,KEY...\] with no empty key | --tp sched:sched_switch --count --by ''
--by: ',,,': expected KEY | --tp sched:sched_switch --count --by ,,,
'--' must be followed by the COMMAND | --tp sched:sched_switch --
more than 10000 buckets from MIN to MAX | --tp sched:sched_switch --lhist prev_pid:-9223372036854775808:9223372036854775807:1
offset 999999 is past the end of pmt_ut_add | --uprobe "$CALLS":pmt_ut_add+999999
a kernel interface file of /proc or /sys | --tp sched:sched_switch -o /proc/self/mem
'bogus' follows --stack, which takes kernel, user or both | -e cpu-clock --stack bogus
software has no term or event 'nosuchterm'; terms: config config1 config2; events: none | -e software/nosuchterm=1/
unknown event 'r' \(pmtrace --list | -e r
--listen serves an aggregation as metrics: add --count | --tp sched:sched_switch --listen 0
--metric names what --listen serves | --tp sched:sched_switch --count --metric reads
--metric: '9x' is not a metric name | --tp sched:sched_switch --count --listen 0 --metric 9x
--listen: '99999': expected \[ADDR:\]PORT | --tp sched:sched_switch --count --listen 99999
--listen: '::1:80': expected | --tp sched:sched_switch --count --listen ::1:80
--listen 192.0.2.1:0: Cannot assign requested address | --tp sched:sched_switch --count --listen 192.0.2.1:0
--folded writes stacks in its own format, not JSON: drop --json | -e cpu-clock --stack --folded --json
--flamegraph writes stacks in its own format, not JSON | -e cpu-clock --stack --flamegraph f.svg --json
--pprof draws stacks: add --stack | -e cpu-clock --pprof p.pb.gz
--pprof writes stacks: --by needs stack, ustack or kstack | -e cpu-clock --stack --pprof p.pb.gz --by comm
cannot write the profile to '/nonexistent/p.pb.gz' | -e cpu-clock --stack --pprof /nonexistent/p.pb.gz
--pprof writes one file at exit: drop --interval | -e cpu-clock --stack --pprof p.pb.gz --interval 1
page-faults has no 'value' here: a counter that follows a command's or process's children | -e page-faults --period 1 --stats value -- true
page-faults has no 'value' here | -e page-faults --period 1 --filter 'value > 3' -p 1
TABLE
)

test_bad_inputs() {
	local re args n=0
	requires userspace || return
	while IFS='|' read -r re args; do
		re=${re% }
		eval "set -- $args"
		usage_error "$re" -o "$WORK/bad.out" "$@" || return 1
		[ ! -e "$WORK/bad.out" ] || { fail "$args: left an output file"; return 1; }
		n=$((n + 1))
	done <<<"$BAD_INPUTS"
	note "$n bad inputs refused"
	no_leftovers
}

# From 8 syscalls:* tracepoints on, one program on raw_syscalls serves
# them by call number (detaching each tracepoint costs a grace period):
# every record of a fixed command must be what the tracepoints give one
# by one, payload included, and the exit status of the routed run must
# come with only two tracepoints to detach.
test_syscalls_routed_same_as_direct() {
	local names="getppid read write close openat mmap brk" n pat=""
	for n in $names; do
		pat="$pat${pat:+|}sys_(enter|exit)_$n:"
	done
	# 7 names a direction: below the threshold, attached one by one
	# shellcheck disable=SC2046 # one --tp per name
	"$PMT" -q $(for n in $names; do printf -- '--tp syscalls:sys_enter_%s --tp syscalls:sys_exit_%s ' "$n" "$n"; done) \
		-o "$WORK/direct.txt" -- "$TP"/getppid_loop 50 >/dev/null || return 1
	"$PMT" -v --tp 'syscalls:sys_enter_*' --tp 'syscalls:sys_exit_*' -o "$WORK/routed.txt" \
		-- "$TP"/getppid_loop 50 2>"$WORK/routed.err" >/dev/null || return 1
	grep -q "syscalls:\* tracepoints served by raw_syscalls:sys_enter" "$WORK/routed.err" || {
		cat "$WORK/routed.err" >&2; fail "the glob was not routed"; return 1; }
	# the payload after "event:" with the pointers and pids that differ
	# between runs masked
	for n in direct routed; do
		grep -E "$pat" "$WORK/$n.txt" | sed -E 's/^.*\] +[0-9.]+: //; s/0x[0-9a-f]+/PTR/g; s/=[0-9]{4,}/=BIG/g; s/(getppid: .*ret=)[0-9]+/\1PID/' \
			>"$WORK/$n.cmp"
	done
	expect_eq "getppid records routed" "$(grep -c 'sys_enter_getppid:' "$WORK/routed.cmp")" 50 || return 1
	diff -u "$WORK/direct.cmp" "$WORK/routed.cmp" >&2 || { fail "routed records differ"; return 1; }
	note "$(wc -l <"$WORK/routed.cmp") records equal"
	no_leftovers
}

# A failure of the system, not of the input, exits 1 (the errors' class,
# util/error.h): a --listen port another program holds. The message is
# printed once, with its hint, and nothing stays attached.
test_runtime_failure_exit_1() {
	local port err=$WORK/busy.err rc n
	coproc HOLD { "$PY3" -c 'import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
print(s.getsockname()[1], flush=True); time.sleep(60)'; }
	read -r port <&"${HOLD[0]}"
	timeout 30 "$PMT" --tp sched:sched_switch --count --listen "127.0.0.1:$port" -d 1 \
		>/dev/null 2>"$err"
	rc=$?
	kill "$HOLD_PID" 2>/dev/null
	expect_eq "exit status with the port taken" "$rc" 1 || { cat "$err" >&2; return 1; }
	if ! grep -q "^pmtrace: --listen 127.0.0.1:$port: Address already in use$" "$err" ||
		! grep -q "^hint: another program serves that port" "$err"; then
		cat "$err" >&2
		fail "no message naming the port"
		return 1
	fi
	n=$(grep -c '^pmtrace: ' "$err")
	expect_eq "messages" "$n" 1 || return 1
	no_leftovers
}

# Start-up: the tracepoint program is verified for what the session uses
# (bpf/common.bpf.h: sources, key kinds, comparisons, context words). Each
# of these took 41,000 to 65,000 instructions of the verifier's (90-110
# ms here, over a second under TCG) when all of them were checked; one
# line each: BOUND | ARGS (shell words). A string key reads in place; an
# expression adds its machine (some 3,500 instructions) and its keys'
# second kind of operand, checked once however many places run one
# (bpf/expr.bpf.c): opensnoop.bt's program took 112,000 when each was,
# and 52,000 when each operand loaded a tracepoint's word from the
# context through a ladder of constant offsets (now copied once an
# event, pmt_ctx_fill, and one function loads the operands), 38,000 while
# that function was static (walked again at each call: now global, it is
# checked once) and the session's program carried the stacks' code too
# (pmt_tp_flat has none): 17,000 since. From 6.7 the kernel checks a
# bpf_loop callback until its entry states repeat: a word of the caller's
# frame that the first pass changed (the pid, fetched at first use) made
# it four passes on 6.18.44 (32,590 in all; 21,665 once the pid is
# fetched before the loop, two passes).
verifier_cases=(
	'10000 | --tp syscalls:sys_enter_read --count --by comm'
	'10000 | --tp syscalls:sys_enter_read --count --by comm,pid'
	'10000 | --tp syscalls:sys_enter_read --filter fd==1 --count'
	'10000 | --tp syscalls:sys_enter_read --filter fd==1'
	'12000 | --tp syscalls:sys_enter_openat --count --by str(filename)'
	'15000 | --tp syscalls:sys_exit_openat --count --by comm,-ret'
	'25000 | --tp syscalls:sys_enter_clock_nanosleep --count --by curtask->real_parent->comm,comm'
	'25000 | /usr/sbin/opensnoop.bt'
	'15000 | /usr/sbin/syscount.bt'
)
test_verifier_work_bounded() {
	local c bound args n
	for c in "${verifier_cases[@]}"; do
		bound=${c%% |*} args=${c#*| }
		# shellcheck disable=SC2086 # the case's words
		# (a generated program's session: pmt_tp_xgen and pmt_tp_xback)
		n=$(PMT_VERIFIER_STATS=1 "$PMT" -q $args -o /dev/null -- /bin/true 2>&1 |
			awk '/^verifier: pmt_tp(_lean|_flat|_xgen|_xback)?: processed / { n += $4 } END { if (n) print n }')
		if [ -z "$n" ] || [ "$n" -gt "$bound" ]; then
			fail "$args: ${n:-no} instructions verified (bound $bound)"
			return 1
		fi
		echo "    $args: $n instructions verified" >&2
	done
}

# The tracepoint program as the kernel gets it: the kernel removes what a
# session's constants leave dead one run at a time, moving the rest of
# the program each time (bpf_remove_insns), so its load time grows with
# the square of its length. Inline, the loads of a record's words were
# 18,000 of its 29,500 instructions, and syscount.bt took 236 ms to
# start, 139 of them there; 60 ms since (bpf/fetch.bpf.h).
test_tracepoint_program_compact() {
	local obj=.output/pmtrace.bpf.o n
	command -v readelf >/dev/null || { skip "no readelf (binutils) to read the object's symbols"; return; }
	[ -f "$obj" ] || { skip "no $obj here: the tree was not built in place"; return; }
	n=$(readelf -sW "$obj" 2>/dev/null | awk '$4 == "FUNC" && $8 == "pmt_tp" { print $3 / 8 }')
	if [ -z "$n" ] || [ "$n" -gt 20000 ]; then
		fail "pmt_tp is ${n:-not found, in} instructions (bound 20,000)"
		return 1
	fi
	echo "    pmt_tp: $n instructions" >&2
}

# The kernel's BTF is parsed from a mapping where the kernel allows one
# (6.16 on), not read a page per read() as libbpf 1.1 does: src/run/
# kernel_btf.c replaces libbpf's loader, which libbpf must still call.
test_kernel_btf_mapped() {
	/usr/bin/python3 -c 'import mmap; f = open("/sys/kernel/btf/vmlinux", "rb"); mmap.mmap(f.fileno(), 0, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ)' 2>/dev/null ||
		{ skip "this kernel cannot map /sys/kernel/btf/vmlinux (6.16 and later can): libbpf reads it, as the other tests show"; return; }
	local n
	"$PMT" -q --tp syscalls:sys_enter_read --count --by comm -o "$WORK/reads" -- \
		"$PMT" -q --tp sched:sched_switch -o /dev/null -- true || { fail "the run failed"; return 1; }
	n=$(sed -n 's/^@\[pmtrace\]: //p' "$WORK/reads")
	cat "$WORK/reads" >&2
	# mapped: some 30 reads (formats, /proc); read through: over 1,300
	if [ -z "$n" ] || [ "$n" -ge 200 ]; then
		fail "the inner pmtrace made ${n:-no} read() calls: its BTF was read, not mapped"
		return 1
	fi
	echo "    $n read() calls in all: the BTF was mapped" >&2
}

# The kernel's BTF is parsed once a run (src/btf/kernel_btf_bpf.c): the
# session's types and libbpf's CO-RE share it, where each had its own
# parse, a 5.5 MB copy at the peak and 5 ms. The inner runs' opens of
# the file are counted by the outer one: a plain stream, and a key that
# walks the kernel's types (parsed before the load, used by it too).
test_kernel_btf_once() {
	local n inner
	for inner in "--tp sched:sched_switch" \
		"--tp syscalls:sys_enter_clock_nanosleep --count --by curtask->real_parent->comm"; do
		# shellcheck disable=SC2086 # the inner run's words
		"$PMT" -q --tp syscalls:sys_enter_openat --count --by 'str(filename)' -o "$WORK/opens" -- \
			"$PMT" -q $inner -o /dev/null -- true 2>/dev/null || { fail "the run failed"; return 1; }
		n=$(sed -n 's|^@\[/sys/kernel/btf/vmlinux\]: ||p' "$WORK/opens")
		expect_eq "$inner: opens of /sys/kernel/btf/vmlinux" "${n:-0}" 1 || return 1
	done
}

# CO-RE against the part of the kernel's BTF each object relocates with
# (src/btf/corebtf.c), made at start: for the stream's, the flat
# aggregations' and the whole object, the members it has and their
# offsets are those bpftool gen min_core_btf finds for the same object
# in this kernel's BTF, and libbpf took it (-v says so; a stream's run
# then never parses the whole of the kernel's BTF). In a guest too: an
# older kernel's layout, its BTF read whole where it cannot be mapped
# (an x86 guest's 36 s beside the CI's suites, not cheap enough for
# each: every kernel's lean_object_as_whole and exact kprobe counts run
# through the part made as well).
test_core_btf_vs_min_core_btf() {
	requires bpftool || return
	local dir what args obj
	dir=$(dirname "$PMT")
	[ "$dir" != . ] || dir=.output
	for what in "lean:--tp sched:sched_switch" "flat:--tp sched:sched_switch --count" \
		"whole:-e cpu-clock --stack user --count --by stack"; do
		args=${what#*:} what=${what%%:*}
		obj=$dir/pmtrace_$what.bpf.o
		[ "$what" != whole ] || obj=$dir/pmtrace.bpf.o
		[ -f "$obj" ] || { skip "no $obj here: the tree was not built in place"; return; }
		# shellcheck disable=SC2086 # the run's words
		PMT_CORE_BTF_DUMP=$WORK/ours.btf "$PMT" -v $args -o /dev/null -- true 2>"$WORK/err" ||
			{ cat "$WORK/err" >&2; fail "$what: the run failed"; return 1; }
		grep -q "^pmtrace: BPF object: the $what one" "$WORK/err" ||
			{ cat "$WORK/err" >&2; fail "$what: not the $what object"; return 1; }
		grep -Eq "^pmtrace: CO-RE: [0-9]+ relocations against [0-9]+ types made from the kernel's [0-9]+ in" "$WORK/err" ||
			{ grep CO-RE "$WORK/err" >&2; fail "$what: CO-RE not against the part made"; return 1; }
		bpftool gen min_core_btf /sys/kernel/btf/vmlinux "$WORK/min.btf" "$obj" ||
			{ fail "bpftool gen min_core_btf on $obj"; return 1; }
		check core_btf_vs_min_core_btf "$WORK/ours.btf" "$WORK/min.btf" "$what" || return 1
	done
}

# A guest that runs past its budget fails, naming the test it was in,
# and ends its log with the counts so far (tools/vmtest): the newest 6.12
# guest that make vmtest unpacked, given 90 s: its boot and calibration
# take about 25 here, 50 where TCG is slower (CI's). The test it is in
# waits idle (guest_budget_idle), so that the rest of the budget costs
# the host no CPU (the guest suite's tests took all of it: 210 s of
# QEMU's beside two CPU hogs).
test_guest_budget_idle() {
	[ -n "${PMT_VM_BUDGET_IDLE:-}" ] || { skip "the guest half of guest_out_of_budget, run by it alone"; return; }
	sleep 3600
}
# shellcheck disable=SC2034 # read by runner.sh
timeout_guest_budget_idle=3600

test_guest_out_of_budget() {
	requires host || return
	local pkg budget
	# (or the one tests/run.sh names, which its guests may be unpacking)
	pkg=${PMT_VM_BUDGET_PKG:-$(find .output/vm -maxdepth 1 -name 'linux-image-6.12.*' -printf '%f\n' 2>/dev/null | sort -V | tail -1)}
	if [ -z "$pkg" ] || ! command -v qemu-system-x86_64 >/dev/null; then
		skip "needs a guest kernel unpacked by make vmtest, and qemu"
		return
	fi
	# (at most 300 s: in make test it starts beside the builds, whose
	# load made the calibration x7.0 and the budget 631 s)
	budget=$((90 * PMT_SLOWDOWN / 100))
	[ $budget -le 300 ] || budget=300
	VMTEST_BUDGET=$budget tools/vmtest "$pkg" env PMT_VM_BUDGET_IDLE=1 PMT_VM_TESTS=cli/guest_budget_idle \
		tests/runtime/runner.sh </dev/null >"$WORK/vm.log" 2>&1
	expect_eq "vmtest's exit status" $? 1 || { sed 's/^/    | /' "$WORK/vm.log" >&2; return 1; }
	# shown indented: the suite's own failures are the lines that start so
	grep -E "^FAIL runtime/cli/guest_budget_idle: the guest ran past its budget of $budget s" "$WORK/vm.log" |
		sed 's/^/    | /' >&2
	[ "${PIPESTATUS[0]}" = 0 ] || { sed 's/^/    | /' "$WORK/vm.log" >&2; fail "no failure naming a test"; return 1; }
	grep -Eq '^runtime: [0-9]+ passed, [1-9][0-9]* failed, [0-9]+ skipped$' "$WORK/vm.log" ||
		{ sed 's/^/    | /' "$WORK/vm.log" >&2; fail "no counts"; return 1; }
	grep -q "status out of budget after" "$WORK/vm.log" || { fail "vmtest's last line"; return 1; }
}

# pmtrace as nobody (uid 65534), with only the capabilities each job
# needs (pmtrace(8), PRIVILEGES), ambient through setpriv: the job works,
# exactly; without one, the refusal or the summary names it.
as_nobody() { # CAPS PMTRACE-ARGS...: CAPS "+bpf,+perfmon" (or "")
	local caps=$1
	shift
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps="-all${caps:+,$caps}" \
		--ambient-caps="-all${caps:+,$caps}" "$PMT" "$@"
}

test_capabilities_instead_of_root() {
	requires setpriv || return
	local tp=+bpf,+perfmon,+dac_read_search out
	# a tracepoint counted: CAP_BPF, CAP_PERFMON, CAP_DAC_READ_SEARCH
	out=$(as_nobody "$tp" -q --tp syscalls:sys_enter_getppid --count -- "$TP"/getppid_loop 321 2>"$WORK/e1")
	expect_eq "getppid counted as nobody" "$(grep '^@' <<<"$out")" "@: 321" || { cat "$WORK/e1" >&2; return 1; }
	as_nobody +bpf,+perfmon -q --tp syscalls:sys_enter_getppid --count -- "$TP"/getppid_loop 3 >/dev/null 2>"$WORK/e2"
	expect_eq "exit status without CAP_DAC_READ_SEARCH" $? 2 || return 1
	grep -q "tracepoints need CAP_DAC_READ_SEARCH" "$WORK/e2" || { cat "$WORK/e2" >&2; fail "CAP_DAC_READ_SEARCH not named"; return 1; }
	as_nobody +bpf,+dac_read_search -q --tp syscalls:sys_enter_getppid --count -- "$TP"/getppid_loop 3 >/dev/null 2>"$WORK/e3"
	expect_eq "exit status without CAP_PERFMON" $? 2 || return 1
	grep -q "needs root, or CAP_BPF and CAP_PERFMON" "$WORK/e3" || { cat "$WORK/e3" >&2; fail "CAP_PERFMON not named"; return 1; }
	# a uprobe: the kernel's uprobe PMU asks CAP_SYS_ADMIN
	as_nobody "$tp" -q --uprobe "$TP/calls:pmt_ut_add" --count -- "$TP"/calls 5 >/dev/null 2>"$WORK/e4"
	expect_eq "exit status of a uprobe without CAP_SYS_ADMIN" $? 1 || return 1
	grep -q "uprobes, USDT probes and kprobes only to CAP_SYS_ADMIN" "$WORK/e4" || { cat "$WORK/e4" >&2; fail "CAP_SYS_ADMIN not named"; return 1; }
	out=$(as_nobody "$tp,+sys_admin" -q --uprobe "$TP/calls:pmt_ut_add" --count -- "$TP"/calls 50 2>"$WORK/e4")
	expect_eq "uprobe calls as nobody" "$(grep '^@' <<<"$out")" "@: 50" || { cat "$WORK/e4" >&2; return 1; }
	# kernel frames: CAP_SYSLOG, or a word of it
	as_nobody "$tp" -q -e cpu-clock --freq 499 --stack kernel --folded -- "$TP"/getppid_loop 300000 >"$WORK/k.folded" 2>"$WORK/e5" || { cat "$WORK/e5" >&2; return 1; }
	grep -q "kernel symbols need CAP_SYSLOG" "$WORK/e5" || { cat "$WORK/e5" >&2; fail "CAP_SYSLOG not named"; return 1; }
	as_nobody "$tp,+syslog" -q -e cpu-clock --freq 499 --stack kernel --folded -- "$TP"/getppid_loop 300000 >"$WORK/k.folded" 2>"$WORK/e6" || { cat "$WORK/e6" >&2; return 1; }
	if grep -q "CAP_SYSLOG" "$WORK/e6" || ! grep -q '^getppid_loop;.*do_syscall_64' "$WORK/k.folded"; then
		cat "$WORK/e6" "$WORK/k.folded" >&2
		fail "kernel frames not named with CAP_SYSLOG"
		return 1
	fi
	# root's process: its user frames need CAP_SYS_PTRACE (it spins until
	# killed: two start-ups beside CI's load outlasted 3 s)
	"$TP"/spinner 600000 >/dev/null &
	local spin=$!
	as_nobody "$tp" -q -a -e cpu-clock --freq 499 --stack user --folded -d 1 >"$WORK/u.folded" 2>"$WORK/e7"
	grep -q "of other users not read .*needs CAP_SYS_PTRACE" "$WORK/e7" || { kill $spin; cat "$WORK/e7" >&2; fail "CAP_SYS_PTRACE not named"; return 1; }
	as_nobody "$tp,+sys_ptrace" -q -a -e cpu-clock --freq 499 --stack user --folded -d 1 >"$WORK/u.folded" 2>"$WORK/e8"
	kill $spin
	grep -q '^spinner;.*pmt_spin_inner' "$WORK/u.folded" || { grep spinner "$WORK/u.folded" | head -3 >&2; cat "$WORK/e8" >&2; fail "root's spinner not named with CAP_SYS_PTRACE"; return 1; }
	no_leftovers
}

# The always-on unit (tools/systemd/pmtrace-profiler.service): systemd
# finds it sound and its sandboxing rated OK; its command, run as nobody
# with the unit's capabilities and no others (its port 0, no web.yml),
# serves a CPU profile whose samples name their functions.
test_systemd_unit() {
	requires systemd-analyze setpriv curl || return
	local unit=$WORK/pmtrace-profiler.service caps args
	sed "s|/usr/local/sbin/pmtrace|$(realpath "$PMT")|" tools/systemd/pmtrace-profiler.service >"$unit"
	systemd-analyze verify --man=no "$unit" || { fail "systemd-analyze verify"; return 1; }
	systemd-analyze security --offline=true "$unit" >"$WORK/sec" 2>&1
	grep -Eq 'Overall exposure level for pmtrace-profiler.service: [0-4]\.[0-9] OK' "$WORK/sec" ||
		{ tail -3 "$WORK/sec" >&2; fail "exposure not OK"; return 1; }
	caps=$(sed -n 's/^AmbientCapabilities=//p' "$unit" | tr ' ' '\n' | sed 's/^CAP_//' | tr '[:upper:]' '[:lower:]' | sed 's/^/+/' | paste -sd,)
	expect_eq "the bounding set is the ambient one" "$(sed -n 's/^CapabilityBoundingSet=//p' "$unit")" \
		"$(sed -n 's/^AmbientCapabilities=//p' "$unit")" || return 1
	read -ra args < <(sed -n 's/^ExecStart=[^ ]* //p' "$unit" | sed 's/--listen [^ ]*/--listen 127.0.0.1:0/; s/--web-config [^ ]*//; s/-q //')
	# (spinning until killed: beside two CPU hogs and the busy pass its 4 s
	# of CPU ran out before the profile's window began)
	"$TP"/spinner 600000 >/dev/null &
	local spin=$!
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps="-all,$caps" --ambient-caps="-all,$caps" \
		"$PMT" "${args[@]}" -d 6 2>"$WORK/unit.err" >/dev/null &
	local pm=$!
	wait_for "$WORK/unit.err" "Ctrl-C" || { kill $spin; cat "$WORK/unit.err" >&2; return 1; }
	local port
	port=$(sed -n 's|.*serving profiles at http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$WORK/unit.err")
	curl -sS --max-time 20 -o "$WORK/p.pb.gz" "http://127.0.0.1:$port/debug/pprof/profile?seconds=2" ||
		{ kill $spin; fail "no profile"; return 1; }
	kill $spin
	wait $pm
	zcat "$WORK/p.pb.gz" | grep -aq pmt_spin_inner || { fail "root's spinner not named in the profile"; return 1; }
	no_leftovers
}
