#!/usr/bin/env bash
# tests/runtime/calibrate.sh: how much slower than a quiet machine of this
# kind this one runs now, in percent (at least 100), from the wall time of
# the work a runtime test is made of: pmtrace started (its programs loaded
# and verified), a command traced to its end, stopped. The median of three
# rounds against REF_MS, measured on a quiet machine of this kind (2 cores,
# 2026-11-27: 88-97 ms a round). Under TCG, beside CPU hogs or on a slower
# machine it comes out higher, and so do the timeouts and budgets scaled
# by it (tests/runtime/runner.sh, tests/run.sh).
#
# Prints "PERCENT MS", MS the median round.
cd "$(dirname "$0")/../.." || exit 1
REF_MS=90
PMT=${PMT:-./pmtrace}
TP=${TP:-.output/testprogs}

round() { # the wall time of one round, in ms
	local t0 t1
	t0=$(date +%s%N)
	"$PMT" -q --tp syscalls:sys_enter_getppid -o /dev/null -- "$TP"/getppid_loop 20000 >/dev/null || return 1
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}

ms=()
for i in 1 2 3; do
	ms[i]=$(round) || { echo "calibrate: pmtrace failed" >&2; echo "100 0"; exit 1; }
done
med=$(printf '%s\n' "${ms[@]}" | sort -n | sed -n 2p)
pct=$((med * 100 / REF_MS))
[ $pct -ge 100 ] || pct=100
echo "$pct $med"
