# shellcheck shell=bash
# Runtime tests, area oneliners: bpftrace's one-liners and tools written
# with pmtrace's options (str() of pointers, for now), each against
# bpftrace 0.17 on the same workload where bpftrace is right.
# In the guests (TCG, where bpftrace takes tens of seconds to start) the
# tests of what the kernel side does run: strings read and faulting,
# strings in filters, an expression, a member chain; the rest, whose BPF
# side those cover, on the host only.
# Sourced by tests/runtime/runner.sh after lib.sh; each test_NAME runs alone
# under its own timeout (timeout_NAME=SECS, default $DEFAULT_TIMEOUT).

# The tests the QEMU guests run too (runner.sh): what the kernel decides;
# every_kernel_tests in every guest, guest_tests dealt between them.
# shellcheck disable=SC2034 # read by runner.sh
guest_tests="rawtp_typed_arguments naptime_member_chain_vs_bpftrace kaddr_kernel_variables"
# what each took in a guest beside two CPU hogs (make test, CI's
# load), seconds, where 15 or more (runner.sh deals guest_tests by
# it; 10 where not given)
# shellcheck disable=SC2034 # read by runner.sh
guest_secs_kaddr_kernel_variables=25
guest_secs_rawtp_typed_arguments=35

UT=$TP/untouched
LIBC=/lib/x86_64-linux-gnu/libc.so.6

# Map lines as bpftrace prints them, sorted: ours quote a key that is
# empty or holds a space (@["echo one"]), bpftrace's never do; a read
# that faulted is our <fault> and bpftrace's empty string.
as_bpftrace() {
	sed -E 's/^@\["(.*)"\]: /@[\1]: /; s/^@\[<fault>\]: /@[]: /' | sort
}

# bpftrace's map @ (named @ or @x) as ours prints it: @[key]: n, sorted
bpftrace_map() {
	grep -E '^@[a-z]*\[' "$1" | sed -E 's/^@[a-z]*\[/@[/' | sort
}

# vs_bpftrace WHAT OURS PROGRAM COMMAND: bpftrace runs PROGRAM on
# COMMAND (-c, from the command's exec where PROGRAM says so); its map
# must be OURS (a sorted map file). The oracle's half: host only.
vs_bpftrace() {
	oracle_on_host || return 0
	requires bpftrace || return
	bpftrace -e "$3" -c "$4" >"$WORK/bt.txt" 2>&1
	bpftrace_map "$WORK/bt.txt" >"$WORK/theirs"
	same_map "$1" "$2" "$WORK/theirs"
}

# same_map WHAT OURS THEIRS: identical maps, or the difference
same_map() {
	cmp -s "$2" "$3" || { diff "$2" "$3" >&2; fail "$1: pmtrace's map (<) is not bpftrace's (>)"; return 1; }
}

# opensnoop streamed, bpftrace's tutorial one-liner: each open's comm
# and file name (--str filename: the string at the pointer field, read
# in the kernel), every line as bpftrace's printf("%s %s\n", comm,
# str(args->filename)) prints it on the same command. The command's own
# files in order; a missing one too. JSON carries the string among the
# fields.
test_str_streamed_vs_bpftrace() {
	local cmd
	echo a >"$WORK/a.txt"
	printf 'exec /bin/cat %s %s %s >/dev/null 2>&1\n' "$WORK/a.txt" "$WORK/a.txt" "$WORK/none" >"$WORK/run.sh"
	cmd="/bin/sh $WORK/run.sh"
	# shellcheck disable=SC2086 # cmd's words are the command's
	"$PMT" -q --tp syscalls:sys_enter_openat --str filename -o "$WORK/o.txt" -- $cmd >/dev/null 2>&1
	sed -nE 's/^ *([^ ]+) .* str\(filename\)=(.*)$/\1 \2/p' "$WORK/o.txt" >"$WORK/ours"
	expect_eq "the command's own files" "$(grep -F "$WORK/" "$WORK/ours" | tr '\n' ';')" \
		"sh $WORK/run.sh;cat $WORK/a.txt;cat $WORK/a.txt;cat $WORK/none;" || return 1
	# shellcheck disable=SC2086
	"$PMT" -q --json --tp syscalls:sys_enter_openat --str 'str(filename)' -- $cmd 2>/dev/null |
		grep -F "$WORK/none" >"$WORK/o.json"
	expect_eq "JSON" "$("$PY3" -c 'import json,sys; print(json.loads(sys.stdin.readline())["fields"]["str(filename)"])' <"$WORK/o.json")" \
		"$WORK/none" || return 1
	oracle_on_host || return 0
	requires bpftrace || return
	bpftrace -e 'tracepoint:syscalls:sys_enter_openat /pid == cpid/ { printf("%s %s\n", comm, str(args->filename)); }' \
		-c "$cmd" >"$WORK/bt.txt" 2>&1
	expect_eq "bpftrace's lines" "$(grep -F "$WORK/" "$WORK/ours")" "$(grep -F "$WORK/" "$WORK/bt.txt")"
}

# --str on a uprobe's argument in a page never touched: paged in by the
# sleepable program, as for keys; an address no fault serves streams as
# <fault>.
test_str_streamed_uprobe() {
	local out
	out=$("$PMT" -q --uprobe "$UT:color_of" --str arg0,arg1 -- "$UT" 3 2>/dev/null |
		grep -o 'str(arg[01])=[^ ]*' | tr '\n' ';')
	expect_eq "paged in; a fault" "$out" \
		"str(arg0)=red;str(arg1)=<fault>;str(arg0)=green;str(arg1)=<fault>;str(arg0)=blue;str(arg1)=<fault>;"
}

# opensnoop: files opened by name. cat opens its two files and a missing
# one once each; everything else it opens (the loader's, the locale's)
# must come out as bpftrace counts it.
test_opensnoop_vs_bpftrace() {
	requires host || return
	oracle_on_host || return 0
	requires bpftrace || return
	local cmd
	echo a >"$WORK/a.txt"
	echo b >"$WORK/b.txt"
	cmd="/bin/cat $WORK/a.txt $WORK/b.txt $WORK/none"
	# shellcheck disable=SC2086 # cmd's words are the command's
	"$PMT" -q --tp syscalls:sys_enter_openat --count --by 'str(filename)' -- $cmd \
		>"$WORK/ours.txt" 2>"$WORK/err"
	grep '^@' "$WORK/ours.txt" | as_bpftrace >"$WORK/ours" || { cat "$WORK/ours.txt" "$WORK/err" >&2; fail "no counts"; return 1; }
	expect_eq "the command's own files" "$(grep -F "$WORK/" "$WORK/ours" | tr '\n' ';')" \
		"@[$WORK/a.txt]: 1;@[$WORK/b.txt]: 1;@[$WORK/none]: 1;" || return 1
	bpftrace -e 'tracepoint:syscalls:sys_enter_openat /pid == cpid/ { @[str(args->filename)] = count(); }' \
		-c "$cmd" >"$WORK/bt.txt" 2>&1
	bpftrace_map "$WORK/bt.txt" >"$WORK/theirs"
	[ -s "$WORK/theirs" ] || { cat "$WORK/bt.txt" >&2; fail "bpftrace printed no map"; return 1; }
	expect_eq "bpftrace: the command's own files" "$(grep -F "$WORK/" "$WORK/theirs" | tr '\n' ';')" \
		"@[$WORK/a.txt]: 1;@[$WORK/b.txt]: 1;@[$WORK/none]: 1;" || return 1
	# a page of the loader's or libc's strings may be touched in one run
	# and not yet in the other
	check same_but_unread "$WORK/ours" "$WORK/theirs" opensnoop
}

# The same strings in filters, in the kernel: a glob over the path, and
# a stream of the one event that names a file (the lean stream program).
test_opensnoop_filters() {
	local out
	echo a >"$WORK/a.txt"
	out=$("$PMT" -q --tp syscalls:sys_enter_openat --filter "str(filename) ~ \"$WORK/*\"" --count \
		-- cat "$WORK/a.txt" "$WORK/a.txt" "$WORK/none" 2>/dev/null | grep '^@')
	expect_eq "opens under the work directory" "$out" "@: 3" || return 1
	"$PMT" -q --tp syscalls:sys_enter_openat --filter "str(filename) == \"$WORK/a.txt\"" \
		-o "$WORK/s.txt" -- cat "$WORK/a.txt" /dev/null >/dev/null || return 1
	expect_eq "streamed events that open a.txt" "$(grep -c 'sys_enter_openat:' "$WORK/s.txt")" 1 || return 1
	out=$("$PMT" -q --tp syscalls:sys_enter_openat --filter "!(str(filename) ~ \"*a.txt\") && comm == \"cat\"" \
		--count --by 'comm,str(filename)' -- cat "$WORK/a.txt" 2>/dev/null | grep -c 'a\.txt')
	expect_eq "a negated glob keeps out a.txt" "$out" 0
}

# execsnoop: programs executed, by the path given to execve. bpftrace
# watches the whole system: only the workload's own programs are compared.
test_execsnoop_vs_bpftrace() {
	requires host || return
	oracle_on_host || return 0
	requires bpftrace || return
	cp /bin/true "$WORK/t1"
	cp /bin/true "$WORK/t2"
	printf 'for i in 1 2 3; do %s; done\n%s\nexec %s\n' "$WORK/t1" "$WORK/t2" "$WORK/t2" >"$WORK/run.sh"
	"$PMT" -q --tp syscalls:sys_enter_execve --count --by 'str(filename)' -- /bin/sh "$WORK/run.sh" |
		grep -F "@[$WORK/" | sort >"$WORK/ours"
	expect_eq "executions" "$(tr '\n' ';' <"$WORK/ours")" "@[$WORK/t1]: 3;@[$WORK/t2]: 2;" || return 1
	bpftrace -e 'tracepoint:syscalls:sys_enter_execve { @[str(args->filename)] = count(); }' \
		-c "/bin/sh $WORK/run.sh" >"$WORK/bt.txt" 2>&1
	bpftrace_map "$WORK/bt.txt" | grep -F "@[$WORK/" >"$WORK/theirs"
	same_map "execsnoop" "$WORK/ours" "$WORK/theirs"
}

# bashreadline: the lines bash's readline returns, read by an
# interactive bash from its stdin; and bpftrace's
# bashreadline.bt unchanged on the same lines: printf of str(retval) at
# a uretprobe, with time(); the same lines but for the time and pid.
test_bashreadline_vs_bpftrace() {
	requires host || return
	oracle_on_host || return 0
	requires bpftrace || return
	# Readline reads an interactive bash's stdin even when it is a file:
	# every line is there before bash starts, so none can be lost as on a
	# pseudo-terminal, where input typed before readline sets the
	# terminal up may be flushed.
	printf 'echo one\necho two words\necho one\nexit\n' >"$WORK/in"
	# bash's prompts and echoes go nowhere: written to bpftrace's output
	# they ran into its lines ("bash-5.2# 12:54:56  4667   echo one")
	printf 'exec bash --norc --noprofile -i >/dev/null 2>&1\n' >"$WORK/rl.sh"
	"$PMT" -q --uretprobe /bin/bash:readline --count --by 'str(retval)' -- /bin/sh "$WORK/rl.sh" \
		<"$WORK/in" >"$WORK/ours.txt" 2>"$WORK/err"
	grep '^@' "$WORK/ours.txt" | as_bpftrace >"$WORK/ours"
	expect_eq "lines read" "$(tr '\n' ';' <"$WORK/ours")" "@[echo one]: 2;@[echo two words]: 1;@[exit]: 1;" ||
		{ cat "$WORK/err" >&2; return 1; }
	bpftrace -e 'uretprobe:/bin/bash:readline { @[str(retval)] = count(); }' \
		-c "/bin/sh $WORK/rl.sh" <"$WORK/in" >"$WORK/bt.txt" 2>&1
	bpftrace_map "$WORK/bt.txt" >"$WORK/theirs"
	same_map "bashreadline" "$WORK/ours" "$WORK/theirs" || return 1
	local tool=/usr/sbin/bashreadline.bt
	[ -r "$tool" ] || return 0
	"$PMT" -q "$tool" -- /bin/sh "$WORK/rl.sh" <"$WORK/in" >"$WORK/ours.txt" 2>"$WORK/err" ||
		{ cat "$WORK/err" >&2; fail "pmtrace $tool failed"; return 1; }
	lines_of() { sed -nE -e '/^TIME /p' -e 's/^[0-9]{2}:[0-9]{2}:[0-9]{2}  [0-9]+ +/TIME PID /p' "$1"; }
	lines_of "$WORK/ours.txt" >"$WORK/ours"
	expect_eq "the lines" "$(tr '\n' ';' <"$WORK/ours")" \
		"TIME      PID    COMMAND;TIME PID echo one;TIME PID echo two words;TIME PID echo one;TIME PID exit;" ||
		{ cat "$WORK/ours.txt" >&2; return 1; }
	bpftrace "$tool" -c "/bin/sh $WORK/rl.sh" <"$WORK/in" >"$WORK/bt.txt" 2>"$WORK/bt.err"
	lines_of "$WORK/bt.txt" >"$WORK/theirs"
	same_lines
}

# FILE: a Python program looking up localhost 5 times, 127.0.0.1 3 times
# (getaddrinfo in libc).
write_gai_py() {
	printf '%s\n' 'import socket' 'for i in range(5): socket.getaddrinfo("localhost", 80)' \
		'for i in range(3): socket.getaddrinfo("127.0.0.1", 80)' >"$1"
}

# gethostlatency's names: getaddrinfo's first argument, in libc.
test_gethostnames_vs_bpftrace() {
	requires host || return
	oracle_on_host || return 0
	requires bpftrace || return
	[ -x "$PY" ] || { skip "needs $PY (python3.11)"; return; }
	write_gai_py "$WORK/gai.py"
	"$PMT" -q --uprobe "$LIBC:getaddrinfo" --count --by 'str(arg0)' -- "$PY" "$WORK/gai.py" |
		grep '^@' | as_bpftrace >"$WORK/ours"
	expect_eq "names looked up" "$(tr '\n' ';' <"$WORK/ours")" "@[127.0.0.1]: 3;@[localhost]: 5;" || return 1
	bpftrace -e "uprobe:$LIBC:getaddrinfo /pid == cpid/ { @[str(arg0)] = count(); }" \
		-c "$PY $WORK/gai.py" >"$WORK/bt.txt" 2>&1
	bpftrace_map "$WORK/bt.txt" >"$WORK/theirs"
	same_map "getaddrinfo names" "$WORK/ours" "$WORK/theirs"
}

# gethostlatency: the time of each getaddrinfo by the host asked. The
# host is an argument, gone at the return: a key naming a field the end
# (uretprobe) lacks and the start has is built at the start and carried
# to the end. Every call timed (5 and 3), each host's calls as bpftrace's
# gethostlatency counts them (str(arg0) kept at entry, by tid). The same
# through a latency in ms (--stats: count, and a sane min).
test_gethostlatency_vs_bpftrace() {
	[ -x "$PY" ] || { skip "needs $PY (python3.11)"; return; }
	write_gai_py "$WORK/gai.py"
	"$PMT" -q --latency "uprobe:$LIBC:getaddrinfo" --count --by 'str(arg0)' -- "$PY" "$WORK/gai.py" |
		grep '^@' | sed -E 's/^@[a-z]+\[/@[/' | as_bpftrace >"$WORK/ours"
	expect_eq "calls timed by host" "$(tr '\n' ';' <"$WORK/ours")" "@[127.0.0.1]: 3;@[localhost]: 5;" || return 1
	"$PMT" -q --latency "uprobe:$LIBC:getaddrinfo" --unit us --stats value --by 'str(arg0),comm' \
		-- "$PY" "$WORK/gai.py" | grep '^@' >"$WORK/stats"
	grep -Eq '^@[a-z]*\[localhost, python3.11\]: count 5, ' "$WORK/stats" ||
		{ cat "$WORK/stats" >&2; fail "no stats of localhost's 5 calls"; return 1; }
	vs_bpftrace "gethostlatency" "$WORK/ours" \
		"uprobe:$LIBC:getaddrinfo /pid == cpid/ { @start[tid] = nsecs; @host[tid] = arg0; }
		 uretprobe:$LIBC:getaddrinfo /@start[tid]/ { @[str(@host[tid])] = count(); delete(@start[tid]); delete(@host[tid]); }" \
		"$PY $WORK/gai.py"
}

# Strings in pages the process never touched (tests/testprogs/untouched):
# the probe's own program cannot fault them in, so a sleepable program
# attached beside it copies them first (bpf_copy_from_user): every read
# succeeds, red, green and blue, where bpftrace 0.17 prints @[]: 300 and
# says nothing. An address no fault can serve (arg1 is 0, 1 or 2) is a
# <fault> key, counted in the summary. Touched first, the same strings.
test_str_untouched_fault() {
	local out
	"$PMT" --usdt "$UT:pmt:color" --count --by 'str(arg2)' -o "$WORK/o" -- "$UT" 300 >/dev/null 2>"$WORK/e" ||
		{ cat "$WORK/e" >&2; return 1; }
	expect_eq "USDT keys, paged in" "$(grep '^@' "$WORK/o" | sort | tr '\n' ';')" \
		"@[blue]: 100;@[green]: 100;@[red]: 100;" || return 1
	! grep -q "reads failed" "$WORK/e" || { cat "$WORK/e" >&2; fail "a failed read counted"; return 1; }
	"$PMT" -q --uprobe "$UT:color_of" --count --by 'str(arg0)' -o "$WORK/u" -- "$UT" 30 >/dev/null 2>"$WORK/e"
	expect_eq "uprobe keys, paged in" "$(grep '^@' "$WORK/u" | sort | tr '\n' ';')" \
		"@[blue]: 10;@[green]: 10;@[red]: 10;" || return 1
	out=$("$PMT" -q --usdt "$UT:pmt:color" --str arg2 -- "$UT" 3 2>/dev/null | grep -o 'str(arg2)=[a-z]*' | tr '\n' ';')
	expect_eq "--str, paged in" "$out" "str(arg2)=red;str(arg2)=green;str(arg2)=blue;" || return 1
	"$PMT" --usdt "$UT:pmt:color" --count --by 'str(arg1)' -o "$WORK/o" -- "$UT" 300 >/dev/null 2>"$WORK/e" ||
		{ cat "$WORK/e" >&2; return 1; }
	expect_eq "USDT keys at addresses 0..2" "$(grep '^@' "$WORK/o")" "@[<fault>]: 300" || return 1
	grep -q "warning: 300 str() reads failed" "$WORK/e" || { cat "$WORK/e" >&2; fail "failed reads not counted"; return 1; }
	"$PMT" -q --uprobe "$UT:color_of" --count --by 'str(arg1)' -o "$WORK/u" -- "$UT" 30 >/dev/null 2>"$WORK/e"
	expect_eq "uprobe keys at addresses 0..29" "$(grep '^@' "$WORK/u")" "@[<fault>]: 30" || return 1
	grep -q "warning: 30 str() reads failed" "$WORK/e" || { cat "$WORK/e" >&2; fail "failed reads not counted (-q)"; return 1; }
	# each probe's failed reads, as many as its calls
	"$PMT" -q --usdt "$UT:pmt:color" --uprobe "$UT:color_of" --count --by 'probe,str(arg1)' -o "$WORK/u" \
		-- "$UT" 30 >/dev/null 2>"$WORK/e"
	expect_eq "per probe" "$(grep -c '^@\[.*, <fault>\]: 30$' "$WORK/u"),$(grep -c '^pmtrace: warning: 60 str() reads failed' "$WORK/e"),$(grep -cE '^    30 in (usdt:.*:pmt:color|uprobe:.*:color_of)$' "$WORK/e")" \
		"2,1,2" || { cat "$WORK/u" "$WORK/e" >&2; return 1; }
	"$PMT" --usdt "$UT:pmt:color" --count --by 'str(arg2)' -o "$WORK/t" -- "$UT" touch 300 >/dev/null 2>"$WORK/e" ||
		return 1
	expect_eq "touched first" "$(grep '^@' "$WORK/t" | sort | tr '\n' ';')" "@[blue]: 100;@[green]: 100;@[red]: 100;" || return 1
	! grep -q "reads failed" "$WORK/e" || { cat "$WORK/e" >&2; fail "a failed read counted"; return 1; }
	out=$("$PMT" -q --uprobe "$UT:color_of" --filter 'str(arg0) ~ "gr*" || str(arg0) == "red"' --count \
		-- "$UT" touch 30 2>/dev/null | grep '^@')
	expect_eq "a filter on str(arg0)" "$out" "@: 20" || return 1
	out=$("$PMT" -q --usdt "$UT:pmt:color" --str-len 4 --count --by 'arg1,str(arg2)' -- "$UT" touch 30 2>/dev/null |
		grep '^@' | sort | tr '\n' ';')
	expect_eq "--str-len 4: three bytes and the NUL" "$out" "@[0, red]: 10;@[1, gre]: 10;@[2, blu]: 10;"
}

# What str() refuses: usage errors (exit 2), nothing attached.
test_str_usage_errors() {
	requires userspace || return
	local rc
	"$PMT" --tp syscalls:sys_enter_openat --count --by 'str(__syscall_nr)' -d 1 2>"$WORK/e"
	rc=$?
	expect_eq "exit status" "$rc" 2 || return 1
	expect_eq "message" "$(head -1 "$WORK/e")" \
		"pmtrace: --by: str(__syscall_nr): the field is int (4 bytes), not an address: str() reads the string an 8-byte pointer field points at" ||
		return 1
	"$PMT" --tp syscalls:sys_enter_openat --count --by 'str(filenme)' -d 1 2>"$WORK/e"
	expect_eq "exit status" "$?" 2 || return 1
	grep -q '^hint: did you mean str(filename)?' "$WORK/e" || { cat "$WORK/e" >&2; fail "no close name"; return 1; }
	"$PMT" --tp syscalls:sys_enter_openat --str-len 1 --count -d 1 2>"$WORK/e"
	expect_eq "exit status" "$?" 2 || return 1
	expect_eq "message" "$(head -1 "$WORK/e")" "pmtrace: --str-len: '1' is not a number of bytes between 2 and 128" ||
		return 1
	no_leftovers
}

# FILE: a Python program whose opens fail 5 times with ENOENT, 2 with
# ENOTDIR and 3 with EISDIR.
write_errs_py() {
	cat >"$1" <<-'PYEOF'
		import os
		def fail(path, flags, n):
		    for i in range(n):
		        try: os.close(os.open(path, flags))
		        except OSError: pass
		fail("/nonexistent/x", os.O_RDONLY, 5)
		fail("/etc/passwd/x", os.O_RDONLY, 2)
		fail("/tmp", os.O_WRONLY, 3)
	PYEOF
}

# errno by syscall: failed opens by -ret (ENOENT 2, ENOTDIR 20, EISDIR
# 21), an expression key beside a field, against bpftrace's
# @[comm, -args->ret] on the same program.
test_errno_by_expression_vs_bpftrace() {
	[ -x "$PY" ] || { skip "needs $PY (python3.11)"; return; }
	write_errs_py "$WORK/errs.py"
	"$PMT" -q --tp syscalls:sys_exit_openat --filter 'ret < 0' --count --by 'comm,-ret' -- "$PY" "$WORK/errs.py" |
		grep '^@' | sort >"$WORK/ours"
	[ "$(sed -n 's/^@\[python3.11, 2\]: //p' "$WORK/ours")" -ge 5 ] 2>/dev/null ||
		{ cat "$WORK/ours" >&2; fail "5 ENOENT (and the interpreter's own)"; return 1; }
	expect_eq "ENOTDIR and EISDIR" "$(grep -E ', (20|21)\]' "$WORK/ours" | tr '\n' ';')" \
		"@[python3.11, 20]: 2;@[python3.11, 21]: 3;" || return 1
	vs_bpftrace "errno by -ret" "$WORK/ours" \
		'tracepoint:syscalls:sys_exit_openat /pid == cpid && args->ret < 0/ { @[comm, -args->ret] = count(); }' \
		"$PY $WORK/errs.py"
}

# Filters whose operands compute, decided in the kernel: the failed opens
# of errs.py by errno written as -ret (bpftrace's /-args->ret == 20/), and
# by a member chain to a string (the parent's comm), against bpftrace's
# on the same program.
test_filter_expressions_vs_bpftrace() {
	[ -x "$PY" ] || { skip "needs $PY (python3.11)"; return; }
	local out
	write_errs_py "$WORK/errs.py"
	"$PMT" -q --tp syscalls:sys_exit_openat --filter '-ret == 20 || -ret * 2 == 42' --count --by 'comm,-ret' \
		-- "$PY" "$WORK/errs.py" | grep '^@' | sort >"$WORK/ours"
	expect_eq "ENOTDIR and EISDIR by -ret" "$(tr '\n' ';' <"$WORK/ours")" \
		"@[python3.11, 20]: 2;@[python3.11, 21]: 3;" || return 1
	# a chain to a string: the child of a shell (sh -c, which forks it)
	out=$("$PMT" -q -a --tp syscalls:sys_exit_openat \
		--filter 'curtask->real_parent->comm == "sh" && comm == "python3.11" && (ret & 0xff) == 236' \
		--count -- sh -c "$PY $WORK/errs.py; true" | grep '^@')
	expect_eq "ENOTDIR of the shell's child, by a chain" "$out" "@: 2" || return 1
	usage_error "unknown field 'rett' for syscalls:sys_exit_openat" --tp syscalls:sys_exit_openat --filter '-rett == 2' || return 1
	grep -A1 '^  -rett == 2$' "$WORK/usage.err" | grep -q '^   \^~~~$' ||
		{ cat "$WORK/usage.err" >&2; fail "the caret is not under rett"; return 1; }
	usage_error "task_struct has no member 'real_parnt'" --tp syscalls:sys_exit_openat --filter 'curtask->real_parnt->pid == 1' || return 1
	no_leftovers || return 1
	vs_bpftrace "filtered by -ret" "$WORK/ours" \
		'tracepoint:syscalls:sys_exit_openat /pid == cpid && (-args->ret == 20 || -args->ret * 2 == 42)/ { @[comm, -args->ret] = count(); }' \
		"$PY $WORK/errs.py"
}

# Kernel variables, as loads.bt reads them: kaddr("SYM") is a symbol's
# address and *E the 8 bytes there, read at each event: pid_max (exact:
# /proc/sys/kernel/pid_max) and avenrun (the 1-minute load as loads.bt
# computes it, within 0.1 of /proc/loadavg's): the kernel's own files are
# the oracle (bpftrace runs on the host only, whose kernel lists no
# variables in /proc/kallsyms: neither tool can read them there). And
# bpftrace's loads.bt unchanged: its interval block reads avenrun every
# second in the kernel (a perf event on one CPU, as bpftrace runs it).
test_kaddr_kernel_variables() {
	local want out load
	if ! grep -qw pid_max /proc/kallsyms; then
		usage_error "no kernel symbol 'pid_max' in /proc/kallsyms, which lists no variables on this kernel" \
			--tp sched:sched_process_exec --count --by '*kaddr("pid_max")' || return 1
		[ ! -r /usr/sbin/loads.bt ] ||
			usage_error "no kernel symbol 'avenrun' in /proc/kallsyms, which lists no variables on this kernel" \
				/usr/sbin/loads.bt || return 1
		skip "this kernel's /proc/kallsyms lists no variables (CONFIG_KALLSYMS_ALL unset; said so, as checked): runs in the QEMU guests"
		return
	fi
	want=$(cat /proc/sys/kernel/pid_max)
	"$PMT" -q --tp sched:sched_process_exec --count --by '*kaddr("pid_max") & 0xffffffff' -- true |
		grep '^@' >"$WORK/ours"
	expect_eq "pid_max" "$(cat "$WORK/ours")" "@[$want]: 1" || return 1
	# /proc/loadavg read every 0.1 s from before to after brackets it
	# (the load moves every 5 s, up or down: a slow guest's run may see
	# two moves; it rounds up by at most 0.01)
	# (builtins alone: an awk and a sleep each round cost a TCG guest
	# most of the test's 55 s beside CI; read -t on a FIFO no one writes
	# waits the 0.1 s)
	local before after sampler
	mkfifo "$WORK/never" || { fail "no FIFO in $WORK"; return 1; }
	(
		exec 7<>"$WORK/never"
		while :; do
			read -r l _ </proc/loadavg
			echo $((10#${l%.*} * 100 + 10#${l#*.}))
			read -rt 0.1 -u 7 _
		done >"$WORK/loads"
	) &
	sampler=$!
	sleep 0.2
	out=$("$PMT" -q --tp sched:sched_process_exec --count --by '(*kaddr("avenrun") * 100) >> 11' -- true |
		sed -n 's/^@\[\(.*\)\]: 1$/\1/p')
	local tool=""
	if [ -r /usr/sbin/loads.bt ]; then
		"$PMT" -q /usr/sbin/loads.bt -o "$WORK/loads.txt" -- sleep 1.2 || return 1
		# "12:00:01 load averages: 0.170 0.060 0.010": the 1-minute x 100
		tool=$(awk '/load averages:/ { split($4, v, "."); print v[1] * 100 + int(v[2] / 10); exit }' "$WORK/loads.txt")
	fi
	sleep 0.2
	kill $sampler
	wait $sampler 2>/dev/null
	before=$(sort -n "$WORK/loads" | head -1)
	after=$(sort -n "$WORK/loads" | tail -1)
	load="$before..$after"
	note "load x 100: $out, loads.bt's ${tool:-(no loads.bt)}, /proc/loadavg's $load"
	if [ -z "$out" ] || [ "$out" -lt $((before - 2)) ] || [ "$out" -gt $((after + 2)) ]; then
		fail "avenrun's load $out, /proc/loadavg's $load"
		return 1
	fi
	if [ -r /usr/sbin/loads.bt ] &&
		{ [ -z "$tool" ] || [ "$tool" -lt $((before - 2)) ] || [ "$tool" -gt $((after + 2)) ]; }; then
		cat "$WORK/loads.txt" >&2
		fail "loads.bt's load ${tool:-(none)}, /proc/loadavg's $load"
		return 1
	fi
	usage_error "no kernel symbol 'avenrn' in /proc/kallsyms" --tp sched:sched_process_exec --count \
		--by '*kaddr("avenrn")' || return 1
	no_leftovers
}

# Values that compute: a sum and a histogram of expressions of the same
# reads (40 of 2 to 5 bytes), against bpftrace's on the same program.
test_value_expressions_vs_bpftrace() {
	requires host || return
	[ -x "$PY" ] || { skip "needs $PY (python3.11)"; return; }
	local out
	# 2 to 5 bytes: the interpreter reads single bytes of its own
	printf 'import os\nfor i in range(40):\n    os.read(os.open("/etc/hostname", os.O_RDONLY), 2 + i %% 4)\n' >"$WORK/reads.py"
	out=$("$PMT" -q --tp syscalls:sys_enter_read --filter 'count >= 2 && count <= 5' --sum '(count & 3) * 10 + 1' \
		-- "$PY" "$WORK/reads.py" | grep '^@')
	# 10 reads each of 2, 3, 4, 5 bytes: 10 * (21 + 31 + 1 + 11)
	expect_eq "sum of (count & 3) * 10 + 1" "$out" "@: 640" || return 1
	"$PMT" -q --tp syscalls:sys_enter_read --filter 'count >= 2 && count <= 5' --hist 'count * 100 / 3' \
		-- "$PY" "$WORK/reads.py" | grep '^\[' >"$WORK/ours"
	expect_eq "histogram buckets" "$(awk '{ n += $3 } END { print NR, n }' "$WORK/ours")" "2 40" || { cat "$WORK/ours" >&2; return 1; }
	oracle_on_host || return 0
	requires bpftrace || return
	bpftrace -e 'tracepoint:syscalls:sys_enter_read /pid == cpid && args->count >= 2 && args->count <= 5/ { @s = sum((args->count & 3) * 10 + 1); @h = hist(args->count * 100 / 3); }' \
		-c "$PY $WORK/reads.py" >"$WORK/bt.txt" 2>&1
	expect_eq "bpftrace's sum" "$(grep '^@s:' "$WORK/bt.txt")" "@s: 640" || return 1
	sed -n '/^@h:/,/^$/p' "$WORK/bt.txt" | grep '^\[' >"$WORK/theirs"
	same_map "histogram of count * 100 / 3" "$WORK/ours" "$WORK/theirs"
}

# Expressions refused: usage errors with a caret, exit 2, nothing attached.
test_expression_usage_errors() {
	requires userspace || return
	"$PMT" --tp syscalls:sys_exit_openat --count --by 'comm,-rett' -d 1 2>"$WORK/e"
	expect_eq "exit status" "$?" 2 || return 1
	expect_eq "message" "$(cat "$WORK/e")" "pmtrace: --by: unknown field 'rett' for syscalls:sys_exit_openat
  -rett
   ^~~~
hint: did you mean ret? syscalls:sys_exit_openat has: __syscall_nr ret; every probe has: pid tid comm cpu uid gid cgroup" ||
		return 1
	"$PMT" --tp syscalls:sys_exit_openat --hist 'ret +' -d 1 2>"$WORK/e"
	expect_eq "exit status" "$?" 2 || return 1
	expect_eq "message" "$(head -1 "$WORK/e")" "pmtrace: --hist: expected a value, but the expression ends here" ||
		return 1
	no_leftovers
}

# naptime's keys: the parent's comm through the kernel's types
# (curtask->real_parent->comm, a char array: a string), and a number at
# the end of a chain; bpftrace's @[curtask->real_parent->comm, comm] on
# the same script. A chain walks offsets from the running kernel's BTF.
test_naptime_member_chain_vs_bpftrace() {
	local out
	printf 'sleep 0.01; sleep 0.01\n/bin/sleep 0.01\n' >"$WORK/nap.sh"
	"$PMT" -q --tp syscalls:sys_enter_clock_nanosleep --count \
		--by 'curtask->real_parent->comm,comm,curtask->real_parent->tgid == pid' -- /bin/sh "$WORK/nap.sh" |
		grep '^@' >"$WORK/keys"
	expect_eq "parents and sleepers" "$(cat "$WORK/keys")" "@[sh, sleep, 0]: 3" || return 1
	out=$("$PMT" -q --tp syscalls:sys_enter_clock_nanosleep --count \
		--by 'str(curtask->mm->exe_file->f_path.dentry->d_name.name),curtask->real_parent->real_parent->pid > 0' \
		-- /bin/sh "$WORK/nap.sh" | grep '^@')
	expect_eq "a char pointer 6 members deep" "$out" "@[sleep, 1]: 3" || return 1
	oracle_on_host || return 0
	requires bpftrace || return
	"$PMT" -q --tp syscalls:sys_enter_clock_nanosleep --filter 'comm == "sleep"' --count \
		--by 'curtask->real_parent->comm,comm' -- /bin/sh "$WORK/nap.sh" | grep '^@' >"$WORK/ours"
	# (bpftrace -c traces every process: the sleeps of cpid's children
	# alone, beside other sleepers on the machine)
	bpftrace -e 'tracepoint:syscalls:sys_enter_clock_nanosleep /comm == "sleep" && curtask->real_parent->tgid == (uint32)cpid/ { @[curtask->real_parent->comm, comm] = count(); }' \
		-c "/bin/sh $WORK/nap.sh" >"$WORK/bt.txt" 2>&1
	bpftrace_map "$WORK/bt.txt" >"$WORK/theirs"
	same_map "naptime" "$WORK/ours" "$WORK/theirs"
}

# Typed raw tracepoints (tp_btf): the arguments the kernel passes
# sched_process_exec, named and typed by BTF, walked as chains. The
# filenames through bprm->filename must count what the tracepoint's own
# record says (--tp ... --by filename) and what bpftrace counts with
# str(args->filename); p is the task exec'ing, old_pid its pid. Its kernel
# stack starts where the tracepoint's does (__traceiter_... here,
# bprm_execve in the guests), not in the BPF program that took it.
test_rawtp_typed_arguments() {
	local ours theirs
	printf '/bin/true\n/bin/true\n/bin/true\n/bin/echo x >/dev/null\n' >"$WORK/ex.sh"
	"$PMT" -q --rawtp sched_process_exec --count \
		--by 'str(bprm->filename),p->pid == pid,old_pid == pid' -- /bin/sh "$WORK/ex.sh" |
		grep '^@' | sort >"$WORK/ours"
	expect_eq "typed arguments" "$(tr '\n' ';' <"$WORK/ours")" \
		"@[/bin/echo, 1, 1]: 1;@[/bin/sh, 1, 1]: 1;@[/bin/true, 1, 1]: 3;" || return 1
	ours=$(sed -E 's/, 1, 1\]/]/' "$WORK/ours")
	theirs=$("$PMT" -q --tp sched:sched_process_exec --count --by filename -- /bin/sh "$WORK/ex.sh" |
		grep '^@' | sort)
	expect_eq "the tracepoint's own record" "$ours" "$theirs" || return 1
	# (arm64's kernel gives a tracepoint's first frame twice, as perf
	# and bpftrace show it too: the first two of the frames told apart)
	"$PMT" -q --rawtp sched:sched_process_exec --stack kernel --count --by stack -- /bin/true |
		sed -n 2,4p | uniq | head -2 >"$WORK/top"
	"$PMT" -q --tp sched:sched_process_exec --stack kernel --count --by stack -- /bin/true |
		sed -n 2,4p | uniq | head -2 >"$WORK/tptop"
	expect_eq "the kernel stack's first frames" "$(cat "$WORK/top")" "$(cat "$WORK/tptop")" || return 1
	"$PMT" -q --rawtp sched_switch --count --by 'prev->pid == pid,prev->comm' \
		-- /bin/sh -c 'sleep 0.01; sleep 0.01' | grep '^@' | sed -E 's/\]: [0-9]+$/]/' | sort -u >"$WORK/sw"
	expect_eq "sched_switch's prev is the task switching out" "$(tr '\n' ';' <"$WORK/sw")" \
		"@[1, sh];@[1, sleep];" || return 1
	# streamed through the chain: --str takes what str() does
	"$PMT" -q --rawtp sched_process_exec --str 'bprm->filename' -- /bin/sh "$WORK/ex.sh" |
		grep -o 'str(bprm->filename)=[^ ]*' | sort | uniq -c | awk '{print $2 " " $1}' >"$WORK/str"
	expect_eq "--str through a chain" "$(tr '\n' ';' <"$WORK/str")" \
		"str(bprm->filename)=/bin/echo 1;str(bprm->filename)=/bin/sh 1;str(bprm->filename)=/bin/true 3;" || return 1
	printf '%s\n' "$ours" >"$WORK/ours"
	# bpftrace sees every process's execs: the command's and its
	# children's alone (pmtrace's -- traces those)
	vs_bpftrace "execs by filename" "$WORK/ours" \
		'tracepoint:sched:sched_process_exec /pid == cpid || curtask->real_parent->tgid == cpid/ { @[str(args->filename)] = count(); }' \
		"/bin/sh $WORK/ex.sh"
}

# --rawtp's mistakes: a name BTF does not type (with a close one), a glob
# past the programs a run has, a member the argument's struct lacks.
test_rawtp_usage_errors() {
	"$PMT" --rawtp sched_swich --count -d 1 2>"$WORK/e"
	expect_eq "exit status" "$?" 2 || return 1
	expect_eq "message" "$(cat "$WORK/e")" "pmtrace: --rawtp 'sched_swich': the kernel's BTF types no tracepoint sched_swich (a module's tracepoints are not typed here: use --tp)
hint: did you mean sched_switch?" || return 1
	"$PMT" --rawtp 'sched_*' --count -d 1 2>"$WORK/e"
	expect_eq "exit status" "$?" 2 || return 1
	grep -q "tracepoints match, and a run takes at most 8 typed raw tracepoints" "$WORK/e" ||
		{ fail "glob: $(cat "$WORK/e")"; return 1; }
	"$PMT" -q --rawtp sched_switch --count --by 'next->comx' -d 1 2>"$WORK/e"
	expect_eq "exit status" "$?" 2 || return 1
	expect_eq "message" "$(cat "$WORK/e")" "pmtrace: --by: struct task_struct has no member 'comx'
  next->comx
        ^~~~
hint: did you mean comm?" || return 1
	no_leftovers
}

# What a chain refuses: usage errors with a caret and a close name, exit 2.
test_member_chain_usage_errors() {
	requires userspace || return
	"$PMT" --tp syscalls:sys_enter_clock_nanosleep --count --by 'comm,curtask->real_parnt->pid' -d 1 2>"$WORK/e"
	expect_eq "exit status" "$?" 2 || return 1
	expect_eq "message" "$(cat "$WORK/e")" "pmtrace: --by: struct task_struct has no member 'real_parnt'
  curtask->real_parnt->pid
           ^~~~~~~~~~
hint: did you mean real_parent?" || return 1
	"$PMT" --tp syscalls:sys_enter_clock_nanosleep --sum 'curtask->comm' -d 1 2>"$WORK/e"
	expect_eq "exit status" "$?" 2 || return 1
	expect_eq "message" "$(head -1 "$WORK/e")" \
		"pmtrace: syscalls:sys_enter_clock_nanosleep: 'curtask->comm' is a string: --sum needs a number" ||
		return 1
	no_leftovers
}

# threadsnoop's start routines, usym(arg2) of pthread_create: named in the
# process that made them, after it has gone (bpftrace 0.17 prints the
# bare addresses of a PIE that exited: the same counts under other keys).
test_threadsnoop_usym() {
	requires host || return
	local S=$TP/spawner
	"$PMT" -q --uprobe "$LIBC:pthread_create" --count --by 'usym(arg2)' -- "$S" 3 2 |
		grep '^@' | sort >"$WORK/ours"
	expect_eq "start routines" "$(tr '\n' ';' <"$WORK/ours")" "@[worker_a]: 3;@[worker_b]: 2;" || return 1
	oracle_on_host || return 0
	requires bpftrace || return
	bpftrace -e "uprobe:$LIBC:pthread_create /pid == cpid/ { @[usym(arg2)] = count(); }" \
		-c "$S 3 2" >"$WORK/bt.txt" 2>&1
	expect_eq "bpftrace's counts" "$(bpftrace_map "$WORK/bt.txt" | sed 's/.*: //' | sort | tr '\n' ' ')" "2 3 " ||
		return 1
	note "bpftrace 0.17: $(bpftrace_map "$WORK/bt.txt" | tr '\n' ' ')"
}

# ksym() of a kernel function pointer: the hrtimer every nanosleep
# arms, against bpftrace's ksym(args->function).
test_ksym_of_a_field_vs_bpftrace() {
	requires host || return
	local out
	out=$("$PMT" -q --tp timer:hrtimer_start --count --by 'ksym(function)' -- "$TP"/sleeper 20 1 |
		grep '^@\[hrtimer_wakeup\]')
	expect_eq "20 sleeps' timers" "$out" "@[hrtimer_wakeup]: 20" || return 1
	oracle_on_host || return 0
	requires bpftrace || return
	bpftrace -e 'tracepoint:timer:hrtimer_start /pid == cpid/ { @[ksym(args->function)] = count(); }' \
		-c "$TP/sleeper 20 1" >"$WORK/bt.txt" 2>&1
	expect_eq "bpftrace" "$(bpftrace_map "$WORK/bt.txt" | grep hrtimer_wakeup)" "$out"
}

# tcpconnect's address, ntop() of an IPv4 address field: 3 connections
# over loopback, the client's SYN_SENT -> ESTABLISHED, system-wide (the
# change may come in another task's softirq); bpftrace's ntop(args->daddr)
# on the same program.
test_ntop_tcp_connects_vs_bpftrace() {
	[ -x "$PY" ] || { skip "needs $PY (python3.11)"; return; }
	local port
	write_conn_py "$WORK/conn.py"
	port=$((20000 + RANDOM % 20000))
	"$PMT" -q -a --tp sock:inet_sock_set_state --filter 'oldstate == 2 && newstate == 1 && family == 2' \
		--count --by 'ntop(daddr),dport' -- "$PY" "$WORK/conn.py" $port | grep '^@' >"$WORK/ours"
	expect_eq "connections" "$(grep ", $port\]" "$WORK/ours")" "@[127.0.0.1, $port]: 3" || { cat "$WORK/ours" >&2; return 1; }
	requires host bpftrace || return
	port=$((port + 1))
	"$PMT" -q -a --tp sock:inet_sock_set_state --filter 'oldstate == 2 && newstate == 1 && family == 2' \
		--count --by 'ntop(daddr),dport' -- "$PY" "$WORK/conn.py" $port | grep ", $port\]" >"$WORK/ours"
	port=$((port + 1))
	bpftrace -e 'tracepoint:sock:inet_sock_set_state /args->oldstate == 2 && args->newstate == 1 && args->family == 2/ { @[ntop(args->daddr), args->dport] = count(); }' \
		-c "$PY $WORK/conn.py $port" >"$WORK/bt.txt" 2>&1
	expect_eq "bpftrace" "$(bpftrace_map "$WORK/bt.txt" | grep ", $port\]" | sed "s/$port/PORT/")" \
		"$(sed "s/$((port - 1))/PORT/" "$WORK/ours")"
}

# tcpconnect over IPv6: ntop() of a 16-byte address field, 2 connections
# to ::1 and 3 to 127.0.0.1 (which the tracepoint keeps in daddr_v6 as
# ::ffff:127.0.0.1); bpftrace's ntop(args->daddr_v6) on the same program.
test_ntop6_tcp_connects_vs_bpftrace() {
	[ -x "$PY" ] || { skip "needs $PY (python3.11)"; return; }
	ip -6 addr show dev lo 2>/dev/null | grep -q '::1/' || { skip "no IPv6 loopback address (::1)"; return; }
	local port by='ntop(daddr_v6),dport' f='oldstate == 2 && newstate == 1'
	cat >"$WORK/conn6.py" <<'PYEOF'
import socket, sys
port = int(sys.argv[1])
for host, family, n in (("::1", socket.AF_INET6, 2), ("127.0.0.1", socket.AF_INET, 3)):
    srv = socket.socket(family)
    srv.bind((host, port))
    srv.listen(8)
    for i in range(n):
        c = socket.create_connection((host, port))
        s, _ = srv.accept()
        s.close()
        c.close()
    srv.close()
PYEOF
	port=$((20000 + RANDOM % 20000))
	"$PMT" -q -a --tp sock:inet_sock_set_state --filter "$f" --count --by "$by" \
		-- "$PY" "$WORK/conn6.py" $port | grep ", $port\]" | sort >"$WORK/ours"
	expect_eq "connections" "$(cat "$WORK/ours")" "@[::1, $port]: 2
@[::ffff:127.0.0.1, $port]: 3" || return 1
	oracle_on_host || return 0
	requires bpftrace || return
	port=$((port + 1))
	bpftrace -e "tracepoint:sock:inet_sock_set_state /args->oldstate == 2 && args->newstate == 1/ { @[ntop(args->daddr_v6), args->dport] = count(); }" \
		-c "$PY $WORK/conn6.py $port" >"$WORK/bt.txt" 2>&1
	expect_eq "bpftrace" "$(bpftrace_map "$WORK/bt.txt" | grep ", $port\]" | sort | sed "s/$port/PORT/")" \
		"$(sed "s/$((port - 1))/PORT/" "$WORK/ours")"
}

# syscount: system calls by number for a command, against bpftrace's
# @[args->id] = count() on the same program. pmtrace counts from the
# command's exec (perf's enable_on_exec); bpftrace's cpid from its fork
# (its child's execve and a close before it): its program counts from
# the exec too.
test_syscount_vs_bpftrace() {
	requires host || return
	"$PMT" -q --tp raw_syscalls:sys_enter --count --by id -- "$TP"/getppid_loop 500 >"$WORK/o.txt" ||
		return 1
	grep '^@' "$WORK/o.txt" | sort >"$WORK/ours"
	expect_eq "getppid (110)" "$(sed -n 's/^@\[110\]: //p' "$WORK/ours")" 500 || return 1
	vs_bpftrace "syscount" "$WORK/ours" \
		'tracepoint:sched:sched_process_exec /pid == cpid/ { @go = 1; }
		tracepoint:raw_syscalls:sys_enter /pid == cpid && @go/ { @[args->id] = count(); }' \
		"$TP/getppid_loop 500"
}

# killsnoop: kill(2) by signal and by result, a shell's kill -0 (three),
# a TERM to its child and a signal to no process; bpftrace's maps on the
# same script.
test_killsnoop_vs_bpftrace() {
	requires host || return
	cat >"$WORK/kills.sh" <<-'EOF'
		for i in 1 2 3; do kill -0 $$; done
		sleep 10 & kill -TERM $!; wait
		kill -USR1 999999 2>/dev/null
		exit 0
	EOF
	"$PMT" -q --tp syscalls:sys_enter_kill --count --by sig -- /bin/bash "$WORK/kills.sh" | grep '^@' | sort >"$WORK/ours"
	expect_eq "signals" "$(tr '\n' ';' <"$WORK/ours")" "@[0]: 3;@[10]: 1;@[15]: 1;" || return 1
	"$PMT" -q --tp syscalls:sys_exit_kill --count --by ret -- /bin/bash "$WORK/kills.sh" | grep '^@' | sort >"$WORK/ret"
	expect_eq "results" "$(tr '\n' ';' <"$WORK/ret")" "@[-3]: 1;@[0]: 4;" || return 1
	vs_bpftrace "killsnoop" "$WORK/ours" \
		'tracepoint:syscalls:sys_enter_kill /pid == cpid/ { @[args->sig] = count(); }' \
		"/bin/bash $WORK/kills.sh"
}

# setuids: the uids and gids a program sets, by the syscall's own
# fields, against bpftrace's.
test_setuids_vs_bpftrace() {
	requires host || return
	[ -x "$PY" ] || { skip "needs $PY (python3.11)"; return; }
	echo 'import os; os.setgroups([]); os.setresgid(65534, 65534, 65534); os.setgid(65534); os.setuid(65534)' \
		>"$WORK/ids.py"
	"$PMT" -q --tp syscalls:sys_enter_setuid --tp syscalls:sys_enter_setgid --tp syscalls:sys_enter_setresgid \
		--count --by probe -- "$PY" "$WORK/ids.py" | grep '^@' | sort >"$WORK/ours"
	expect_eq "calls" "$(tr '\n' ';' <"$WORK/ours")" \
		"@[tracepoint:syscalls:sys_enter_setgid]: 1;@[tracepoint:syscalls:sys_enter_setresgid]: 1;@[tracepoint:syscalls:sys_enter_setuid]: 1;" || return 1
	"$PMT" -q --tp syscalls:sys_enter_setuid --count --by uid -- "$PY" "$WORK/ids.py" | grep '^@' >"$WORK/uid"
	expect_eq "uid" "$(cat "$WORK/uid")" "@[65534]: 1" || return 1
	vs_bpftrace "setuids" "$WORK/uid" \
		'tracepoint:syscalls:sys_enter_setuid /pid == cpid/ { @[args->uid] = count(); }' \
		"$PY $WORK/ids.py"
}
