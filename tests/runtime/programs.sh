# shellcheck shell=bash
# Runtime tests, area programs: bpftrace's programs (FILE.bt, -e
# 'PROGRAM') run without a compiler, each against bpftrace 0.17 running
# the same text on the same command.
# Sourced by tests/runtime/runner.sh after lib.sh; each test_NAME runs alone
# under its own timeout (timeout_NAME=SECS, default $DEFAULT_TIMEOUT).

# The tests the QEMU guests run too (runner.sh): what the kernel decides.
# shellcheck disable=SC2034 # read by runner.sh
guest_tests="program_file_vs_bpftrace"

# A tracer's maps as bpftrace prints them at exit: from the first @ line
# on, blank lines left out.
maps_of() {
	sed -n '/^@/,$p' "$1" | sed '/^$/d'
}

# bpftrace runs the same program on the same command: its maps must be
# ours (file $1). The oracle's half: host only.
vs_bpftrace_program() { # OURS BPFTRACE-ARGS...
	local ours=$1
	shift
	oracle_on_host || return 0
	requires bpftrace || return
	bpftrace "$@" >"$WORK/bt.txt" 2>&1 || { fail "bpftrace $* failed"; cat "$WORK/bt.txt" >&2; return 1; }
	maps_of "$WORK/bt.txt" >"$WORK/theirs"
	cmp -s "$ours" "$WORK/theirs" || {
		diff "$ours" "$WORK/theirs" >&2
		fail "pmtrace's maps (<) are not bpftrace's (>)"
		return 1
	}
}

# A file as bpftrace's tools are written (#!, comments, a predicate,
# args and a map of its own name), run with -c: the calls' first
# argument, one in three left out, in a linear histogram by comm. The
# numbers are exact: 1,000 calls with 0..999.
test_program_file_vs_bpftrace() {
	local bt=$WORK/adds.bt
	cat >"$bt" <<EOF
#!/usr/bin/env bpftrace
/*
 * adds.bt: the first argument of pmt_ut_add, as a linear histogram.
 */

uprobe:$CALLS:pmt_ut_add
/arg0 % 3 != 1/   // one in three left out
{
	@adds[comm] = lhist(arg0, 0, 1000, 100);
}
EOF
	"$PMT" -q "$bt" -c "$CALLS 1000" -o "$WORK/out.txt" || { fail "pmtrace $bt failed"; return 1; }
	maps_of "$WORK/out.txt" >"$WORK/ours"
	# 100 values a bucket, 33 or 34 of them = 1 (mod 3)
	expect_eq "first bucket" "$(sed -n 2p "$WORK/ours")" \
		"[0, 100)              67 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|" || return 1
	expect_eq "lines" "$(wc -l <"$WORK/ours")" 11 || return 1
	vs_bpftrace_program "$WORK/ours" "$bt" -c "$CALLS 1000"
}

# -e: a tracepoint's fields through args->, a predicate, two keys, a
# power-of-two histogram, and BEGIN's lines first (a column header as
# the tools print theirs); exact for the reader's 39 reads of 1 B to 4
# KiB.
test_program_e_vs_bpftrace() {
	local prog='BEGIN { printf("Tracing reads... Hit Ctrl-C to end.\n"); printf("%-8s %5s|%-4d|%x\n", "COMM", "FD", -7, 255); }
tracepoint:syscalls:sys_enter_read /args->fd == 100/ { @bytes[comm, args->fd] = hist(args->count); }'
	"$PMT" -q -e "$prog" -c "$TP/reader 3" -o "$WORK/out.txt" || { fail "pmtrace -e failed"; return 1; }
	head -2 "$WORK/out.txt" >"$WORK/begin"
	expect_eq "BEGIN's lines" "$(tr '\n' ';' <"$WORK/begin")" \
		"Tracing reads... Hit Ctrl-C to end.;COMM        FD|-7  |ff;" || return 1
	maps_of "$WORK/out.txt" >"$WORK/ours"
	expect_eq "the map" "$(head -1 "$WORK/ours")" "@bytes[reader, 100]: " || return 1
	expect_eq "reads counted" "$(awk '/^\[/ {n += $(NF - 1)} END {print n}' "$WORK/ours")" 39 || return 1
	vs_bpftrace_program "$WORK/ours" -e "$prog" -c "$TP/reader 3" || return 1
	oracle_on_host || return 0
	# its first lines, past "Attaching..." and what it says of the
	# locked-memory limit on stderr
	grep -v -e '^Attaching' -e '^ERROR:' "$WORK/bt.txt" | head -2 >"$WORK/bt-begin"
	cmp -s "$WORK/bt-begin" "$WORK/begin" || {
		diff "$WORK/begin" "$WORK/bt-begin" >&2
		fail "BEGIN's lines (<) are not bpftrace's (>)"
		return 1
	}
}

# Two blocks, each its predicate, one update (@[probe]++) keyed by the
# probe as bpftrace names it; counts as bpftrace's.
test_program_blocks_vs_bpftrace() {
	local prog='tracepoint:syscalls:sys_enter_read /args->fd == 100/ { @[probe]++; }
tracepoint:syscalls:sys_enter_openat /comm == "reader"/ { @[probe]++ }'
	"$PMT" -q -e "$prog" -c "$TP/reader 3" -o "$WORK/out.txt" || { fail "pmtrace -e failed"; return 1; }
	maps_of "$WORK/out.txt" | sort >"$WORK/ours"
	expect_eq "the reads" "$(grep sys_enter_read "$WORK/ours")" \
		"@[tracepoint:syscalls:sys_enter_read]: 39" || return 1
	oracle_on_host || return 0
	requires bpftrace || return
	bpftrace -e "$prog" -c "$TP/reader 3" >"$WORK/bt.txt" 2>&1
	maps_of "$WORK/bt.txt" | sort >"$WORK/theirs"
	cmp -s "$WORK/ours" "$WORK/theirs" || { diff "$WORK/ours" "$WORK/theirs" >&2; fail "maps differ"; }
}

# What the engine cannot run yet is refused with its line, exit 2, and
# nothing attached.
test_program_refusals() {
	printf 'tracepoint:syscalls:sys_enter_read\n{\n\tprintf("%%d\\n", pid);\n}\n' >"$WORK/p.bt"
	usage_error "^pmtrace: $WORK/p.bt:3: 'printf' is not supported yet" "$WORK/p.bt" || return 1
	grep -q '^ *printf("%d\\n", pid);$' "$WORK/usage.err" || { fail "the line is not quoted"; cat "$WORK/usage.err" >&2; return 1; }
	usage_error "^pmtrace: -e:1: probe 'interval:s:1' is not supported yet" -e 'interval:s:1 { @ = count(); }' || return 1
	usage_error "^pmtrace: -e: a program says its probes and its map" -e 't:a:b { @ = count(); }' --count || return 1
	usage_error "unknown tracepoint 'syscalls:sys_enter_nope'" -e 'tracepoint:syscalls:sys_enter_nope { @ = count(); }' || return 1
	usage_error "^pmtrace: $WORK/none.bt: No such file or directory" "$WORK/none.bt" || return 1
	no_leftovers
}
