# shellcheck shell=bash
# Runtime tests, area usdt: USDT probes (sys/sdt.h): typed arguments,
# strings, semaphores, python3.11's own probes against bpftrace.
# Sourced by tests/runtime/runner.sh after lib.sh; each test_NAME runs alone
# under its own timeout (timeout_NAME=SECS, default $DEFAULT_TIMEOUT).

# The tests the QEMU guests run too (runner.sh): what the kernel decides;
# every_kernel_tests in every guest, guest_tests dealt between them.
# shellcheck disable=SC2034 # read by runner.sh
guest_tests="usdt_args_exact usdt_semaphore_cmd usdt_semaphore_pid"

UP=$TP/usdt_prog
PY=/usr/bin/python3.11

# pmt:args(i), i < 40: -(i+1) (s32), 4000000000+i (u32), a word, i % 4
test_usdt_args_exact() {
	"$PMT" -q --json --usdt "$UP:pmt:args" --str arg2 -o "$WORK/a.json" -- "$UP" 40 >"$WORK/out" ||
		return 1
	expect_eq "program output" "$(cat "$WORK/out")" "guarded 0" || return 1
	check usdt_args "$WORK/a.json" 40 || return 1
	# text: signed as signed, the string as perf prints a char array
	"$PMT" -q --usdt "$UP:args" --str arg2 -- "$UP" 2 >"$WORK/a.txt" || return 1
	grep -q 'pmt:args: arg0=-2 arg1=4000000001 arg2=[0-9]* arg3=1 str(arg2)=beta$' "$WORK/a.txt" ||
		{ cat "$WORK/a.txt" >&2; fail "text record"; return 1; }
}

test_usdt_aggregations() {
	local out
	out=$("$PMT" -q --usdt "$UP:pmt:args" --sum arg0 -- "$UP" 40 | grep '^@') || return 1
	expect_eq "sum of arg0 (s32)" "$out" "@: -820" || return 1
	out=$("$PMT" -q --usdt "$UP:pmt:args" --sum arg1 -- "$UP" 40 | grep '^@') || return 1
	expect_eq "sum of arg1 (u32 above 2^31)" "$out" "@: 160000000780" || return 1
	out=$("$PMT" -q --usdt "$UP:pmt:args" --count --by 'str(arg2)' -- "$UP" 40 | grep '^@' | sort | tr '\n' ';') ||
		return 1
	expect_eq "count by str(arg2)" "$out" '@[""]: 10;@[alpha]: 10;@[beta]: 10;@[gamma]: 10;' || return 1
	out=$("$PMT" -q --usdt "$UP:pmt:args" --filter 'str(arg2) == "beta" || str(arg2) ~ "g*"' --count \
		-- "$UP" 40 | grep '^@') || return 1
	expect_eq "filter on str(arg2)" "$out" "@: 20" || return 1
	out=$("$PMT" -q --usdt "$UP:pmt:args" --filter 'arg0 < -30 && arg1 >= 4000000035' --count \
		-- "$UP" 40 | grep '^@') || return 1
	expect_eq "filter on signed and unsigned arguments" "$out" "@: 5" || return 1
	out=$("$PMT" -q --usdt "$UP:pmt:args" --lhist arg3:0:4:1 -- "$UP" 40 | grep -c '^\[[0-3], [1-4]) *10 |') ||
		return 1
	expect_eq "lhist of arg3: 10 in each of 4 buckets" "$out" 4
}

# --stack on a USDT probe: every one of the 40 firings in a stack through
# main to fire_one (the probe's site), streamed and folded alike.
test_usdt_stack() {
	local n
	"$PMT" -q --usdt "$UP:pmt:args" --stack user --folded -o "$WORK/u.folded" -- "$UP" 40 >/dev/null ||
		return 1
	n=$(awk '/;main;.*fire_one( \(inlined\))? [0-9]+$/ { n += $NF } END { print n + 0 }' "$WORK/u.folded")
	expect_eq "firings in stacks through main to fire_one" "$n" 40 || { cat "$WORK/u.folded" >&2; return 1; }
	"$PMT" -q --usdt "$UP:pmt:args" --stack user -o "$WORK/u.txt" -- "$UP" 40 >/dev/null || return 1
	expect_eq "streamed records with fire_one then main below" \
		"$(awk '/pmt:args:/ { if (st == 2) n++; st = 0; next } / fire_one(\+|$)/ && !st { st = 1 } / main\+/ && st == 1 { st = 2 }
			END { if (st == 2) n++; print n + 0 }' "$WORK/u.txt")" 40
}

# bpftrace 0.17 on the same probe: the same counts and strings; its sum of a
# signed argument prints as unsigned 64-bit (2^64 - 820), ours as -820,
# the program's own value; its empty string key is @[], ours @[""] (a key
# is quoted when it is empty or holds a space, '"' or '=').
test_usdt_vs_bpftrace() {
	requires bpftrace userspace || return
	bpftrace -e "usdt:$UP:pmt:args { @s = sum(arg0); @u = sum(arg1); @w[str(arg2)] = count(); }" \
		-c "$UP 40" >"$WORK/bt.txt" 2>&1 || { cat "$WORK/bt.txt" >&2; return 1; }
	grep -q '^@s: 18446744073709550796$' "$WORK/bt.txt" || { cat "$WORK/bt.txt" >&2; fail "bpftrace's sum"; return 1; }
	grep -q '^@u: 160000000780$' "$WORK/bt.txt" || { cat "$WORK/bt.txt" >&2; fail "bpftrace's unsigned sum"; return 1; }
	"$PMT" -q --usdt "$UP:pmt:args" --count --by 'str(arg2)' -- "$UP" 40 | grep '^@' | sort >"$WORK/ours"
	grep '^@w' "$WORK/bt.txt" | sed 's/^@w/@/; s/^@\[\]/@[""]/' | sort >"$WORK/theirs"
	cmp -s "$WORK/ours" "$WORK/theirs" || { diff "$WORK/ours" "$WORK/theirs" >&2; fail "counts by string differ"; return 1; }
	note "sum(arg0): bpftrace 18446744073709550796 (unsigned), pmtrace -820 (the program's)"
}

# Semaphore-guarded: fires only while a tracer has set its semaphore.
test_usdt_semaphore_cmd() {
	local out
	expect_eq "untraced" "$("$UP" 25)" "guarded 0" || return 1
	out=$("$PMT" -q --usdt "$UP:pmt:guarded" --count -o "$WORK/c.txt" -- "$UP" 25) || return 1
	expect_eq "program output" "$out" "guarded 25" || return 1
	expect_eq "count" "$(grep '^@' "$WORK/c.txt")" "@: 25" || return 1
}

# -p on a running process: its semaphore set while traced, 0 afterwards.
test_usdt_semaphore_pid() {
	local pid tracer
	"$UP" wait 25 >"$WORK/prog.out" &
	local prog=$!
	wait_for "$WORK/prog.out" "^pid " || return 1
	pid=$(awk '/^pid/{print $2}' "$WORK/prog.out")
	"$PMT" --usdt "$UP:guarded" -p "$pid" --count -o "$WORK/c.txt" 2>"$WORK/err" &
	tracer=$!
	wait_for "$WORK/prog.out" "^guarded" 600 || { cat "$WORK/err" >&2; return 1; }
	kill -INT $tracer
	wait $tracer || { cat "$WORK/err" >&2; fail "pmtrace failed"; return 1; }
	wait_for "$WORK/prog.out" "reset\|still set" 500 || return 1
	wait $prog
	expect_eq "program output" "$(tr '\n' ';' <"$WORK/prog.out" | sed 's/^pid [0-9]*;//')" "guarded 25;reset;" || return 1
	expect_eq "count" "$(grep '^@' "$WORK/c.txt")" "@: 25" || return 1
	no_leftovers
}

# python3.11's gc__start(generation): 30 gc.collect(1) calls, and
# whatever start-up and shutdown add, equal to bpftrace's counts.
test_usdt_python_gc() {
	requires bpftrace || return
	[ -x $PY ] || { skip "needs $PY (python3.11)"; return; }
	cat >"$WORK/gc.py" <<'PYEOF'
import gc
gc.disable()
for i in range(30):
    gc.collect(1)
for i in range(20):
    gc.collect(2)
PYEOF
	"$PMT" -q --usdt "$PY:python:gc__start" --count --by arg0 -- $PY "$WORK/gc.py" | grep '^@' | sort >"$WORK/ours" ||
		return 1
	bpftrace -e "usdt:$PY:python:gc__start { @[arg0] = count(); }" -c "$PY $WORK/gc.py" 2>&1 |
		grep '^@' | sort >"$WORK/theirs"
	grep -q '^@\[1\]: 30$' "$WORK/ours" || { cat "$WORK/ours" >&2; fail "30 collections of generation 1"; return 1; }
	grep -Eq '^@\[2\]: (2[0-9])$' "$WORK/ours" || { cat "$WORK/ours" >&2; fail "20 and a few more of generation 2"; return 1; }
	cmp -s "$WORK/ours" "$WORK/theirs" || { diff "$WORK/ours" "$WORK/theirs" >&2; fail "counts differ from bpftrace's"; return 1; }
	note "gc__start by generation: $(tr '\n' ' ' <"$WORK/ours")(bpftrace the same)"
}

test_usdt_list() {
	local out
	out=$("$PMT" --list "usdt:$UP") || return 1
	expect_eq "list" "$out" "usdt:$(realpath "$UP"):pmt:args  arg0:s32 arg1:u32 arg2:u64 arg3:s32  (semaphore)
usdt:$(realpath "$UP"):pmt:guarded  arg0:s32  (semaphore)" || return 1
	out=$("$PMT" --list "usdt:$UP:gu*") || return 1
	expect_eq "list a glob" "${out%% *}" "usdt:$(realpath "$UP"):pmt:guarded" || return 1
	if [ -x $PY ] && command -v bpftrace >/dev/null; then
		# the names are bpftrace's
		expect_eq "python3.11's probes, as bpftrace -l names them" \
			"$("$PMT" --list "usdt:$PY" | cut -d' ' -f1)" "$(bpftrace -l "usdt:$PY:*")" || return 1
	fi
}

test_usdt_bad_inputs() {
	requires userspace || return
	usage_error "--usdt '$UP:pmt:argz': .* has no USDT probe named pmt:argz" --usdt "$UP:pmt:argz" -- "$UP" 1 || return 1
	grep -q "did you mean .*:pmt:args?" "$WORK/usage.err" || { cat "$WORK/usage.err" >&2; fail "no suggestion"; return 1; }
	usage_error "no executable or library named nosuchprog" --usdt nosuchprog:x:y -- "$UP" 1 || return 1
	usage_error "is not an ELF file" --usdt "tests/runtime/usdt.sh:x" -- "$UP" 1 || return 1
	usage_error "has no USDT probes|no USDT probe" --usdt "$TP/calls:x" -- "$UP" 1 || return 1
	usage_error "expected PATH:\[PROVIDER:\]NAME" --usdt "$UP" -- "$UP" 1 || return 1
	usage_error "--str prints strings with each streamed event" --str arg2 --count --usdt "$UP:args" -- "$UP" 1 || return 1
	usage_error "--str x1: no probe has a field x1" --str x1 --usdt "$UP:args" -- "$UP" 1 || return 1
	usage_error "--str 'arg0,arg1,arg2,arg3,arg4': expected one or 4 fields" --usdt "$UP:args" --str arg0,arg1,arg2,arg3,arg4 -- "$UP" 1 || return 1
	usage_error "--str: comm: the field is a string already" --usdt "$UP:args" --str comm -- "$UP" 1 || return 1
	usage_error "unknown field|no field" --usdt "$UP:guarded" --filter 'arg3 == 1' -- "$UP" 1 || return 1
	no_leftovers
}
