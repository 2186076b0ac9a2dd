#!/bin/sh
# Load every program variant once: verifier acceptance on the running
# kernel (tools/vmtest runs this on other kernels). Prints one line per
# check and "vm-smoke: N passed, N failed".
PMT=./pmtrace TP=.output/testprogs
p=0 f=0
check() { # NAME EXPECTED COMMAND...
	name=$1 want=$2
	shift 2
	got=$("$@" 2>/tmp/smoke.err | grep -c .)
	if [ "$got" = "$want" ]; then echo "ok   $name"; p=$((p + 1)); else
		echo "FAIL $name: $got lines, expected $want"; sed 's/^/    /' /tmp/smoke.err | tail -20; f=$((f + 1)); fi
}
check stream 101 $PMT -q --tp syscalls:sys_enter_getppid -- $TP/getppid_loop 100
check stream-cpu 1 sh -c "$PMT -q -C 0 --tp sched:sched_switch -a -d 0.3 >/dev/null && echo done"
check filter-num 101 $PMT -q --tp syscalls:sys_enter_getppid --filter 'pid > 1 && !(cpu > 4096)' -- $TP/getppid_loop 100
check filter-str 2 $PMT -q --tp sched:sched_process_exec --filter 'filename ~ "*/getppid_*" && comm == "getppid_loop"' -- $TP/getppid_loop 1
check count 4 $PMT -q --tp syscalls:sys_enter_getppid --count --by comm -- $TP/mixer
check hist 13 sh -c "$PMT -q --tp syscalls:sys_enter_read --filter 'fd == 100' --hist count -- $TP/reader | grep '|'"
check lhist 5 sh -c "$PMT -q --tp syscalls:sys_enter_read --filter 'fd == 100' --lhist count:0:5000:1000 -- $TP/reader | grep '|'"
check latency 1 sh -c "$PMT -q --latency syscalls:sys_enter_clock_nanosleep,syscalls:sys_exit_clock_nanosleep --unit ms -- $TP/sleeper 5 1 | grep -c '@msecs'"
check pmu-stream 1 sh -c "$PMT -q -e cpu-clock --freq 999 --stack --filter 'mode == user' -- $TP/spinner 200 | grep -c pmt_spin_inner | grep -v '^0$' >/dev/null && echo ok"
check pmu-stack-agg 1 sh -c "$PMT -q -e cpu-clock --freq 999 --stack --folded -- $TP/spinner 200 | grep -c 'pmt_spin_outer;pmt_spin_inner'"
check pmu-sym 1 sh -c "$PMT -q -e cpu-clock --freq 999 --count --by sym --top 1 -- $TP/spinner 200 | grep -c '^@\[pmt_spin_inner\]'"
echo "vm-smoke: $p passed, $f failed"
[ $f = 0 ]
