#!/usr/bin/env bash
# tests/runtime/calibrate.sh: how much slower than a quiet machine of
# this kind this one runs now, in percent (at least 100).
#
# From the wall time of the work a runtime test is made of:
# pmtrace started (its programs loaded and verified), a command traced to
# its end, stopped. The median of three rounds against REF_MS, measured on
# a quiet machine of this kind (2 cores, 2026-11-27: 88-97 ms a round).
# Under TCG, beside CPU hogs or on a slower machine it comes out higher,
# and so do the timeouts scaled by it (tests/runtime/runner.sh), in a
# QEMU guest as on the host.
#
# Prints "PERCENT MS", MS the median round.
cd "$(dirname "$0")/../.." || exit 1
REF_MS=90
PMT=${PMT:-./pmtrace}
TP=${TP:-.output/testprogs}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

round() { # the wall time of one round, in ms
	local t0
	t0=$(now_ms)
	"$PMT" -q --tp syscalls:sys_enter_getppid -o /dev/null -- "$TP"/getppid_loop 20000 >/dev/null || return 1
	echo $(($(now_ms) - t0))
}

ms=()
for i in 1 2 3; do
	ms[i]=$(round) || { echo "calibrate: a round failed" >&2; echo "100 0"; exit 1; }
done
med=$(printf '%s\n' "${ms[@]}" | sort -n | sed -n 2p)
pct=$((med * 100 / REF_MS))
[ $pct -ge 100 ] || pct=100
echo "$pct $med"
