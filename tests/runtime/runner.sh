#!/usr/bin/env bash
# The runtime suite: real BPF programs in the running kernel, real events
# from deterministic children (tests/testprogs). Needs root.
#
#   tests/runtime/runner.sh [AREA...] [-k SUBSTRING]
#   tests/runtime/runner.sh --lists   (the areas' test lists made for the
#                                      QEMU guests to read, nothing run)
#
# AREA is a file tests/runtime/AREA.sh (default: every one); -k keeps the
# tests whose name contains SUBSTRING. Each test runs in its own shell
# with its own work directory, under its own timeout (timeout_NAME=SECS in
# its area file, else DEFAULT_TIMEOUT), scaled by the slowdown the suite
# measures when it starts (tests/runtime/calibrate.sh: TCG, a busy or a
# slower machine), so a hung test fails alone and a slow machine is no
# failure. Ends with "runtime: N passed, N failed, N skipped"; KEEP=1
# keeps the work directories.
#
# Tests whose figures a busy machine changes (counts compared with perf
# stat's, shares of complete stacks) say so with quiet_NAME=1 in their area
# file; RUNTIME_PASS=busy runs the others, RUNTIME_PASS=quiet only those
# (make test runs them once the QEMU guests are done); in a guest they run
# last.
#
# In a QEMU guest (PMT_VM set) only the tests its area file names in
# guest_tests or every_kernel_tests run:
# those whose outcome the kernel decides (programs loaded and verified,
# each kind of probe attached, the in-kernel unwinder and Python reader,
# drains, counters). What user space does with the records is the same on
# every kernel and is tested on the host. Every guest runs
# every_kernel_tests: what a kernel's verifier decides most, and each
# kprobe mode's and fentry's exact counts and BTF chains (the rest of what
# this host cannot run, kprobes and fentry, is dealt as guest_tests).
# The arm64 guest (PMT_VM_ARCH=arm64, no share) runs both lists and
# arm64_tests: what differs by architecture beyond what the kernel
# decides (the user-space unwinder's arm64 half against the guest's own
# perf). PMT_VM_TESTS="AREA/NAME ..." runs those
# alone (make test's arm64 guest: tests/run.sh). The guest_tests are dealt between
# the guests make test starts (PMT_VM_SHARE=K/N: the K-th share of N),
# each kernel checked below and above by this host's; a guest without a
# share runs them all. They are dealt by their cost, the longest first,
# each to the share with the least so far: an area file's
# guest_secs_NAME=SECS is what the test took in a guest beside the
# suites (CI's run beside two CPU hogs, 2026-12-05; 10 unless said).
# Before each test the guest's runner writes "AREA/NAME" to
# $PMT_VM_PROGRESS, so a guest that runs out of its budget is named with
# the test it was in (tools/vmtest).
cd "$(dirname "$0")/../.." || exit 1
export DEFAULT_TIMEOUT=${DEFAULT_TIMEOUT:-120}

areas=() only='' lists_only=''
while [ $# -gt 0 ]; do
	case $1 in
	-k) only=$2; shift 2 ;;
	--lists) lists_only=1; shift ;;
	*) areas+=("$1"); shift ;;
	esac
done
if [ ${#areas[@]} = 0 ]; then
	for f in tests/runtime/*.sh; do
		case ${f##*/} in lib.sh | runner.sh | calibrate.sh) ;; *) f=${f##*/}; areas+=("${f%.sh}") ;; esac
	done
fi

# The tests of an area and their timeouts: "NAME SECS QUIET GUEST COST"
# lines.
list_tests() { # AREA
	# shellcheck disable=SC2016 # expanded by the inner shell
	WORK=/nonexistent bash -c '. tests/runtime/lib.sh && . "tests/runtime/$1.sh" || exit 1
		for t in $(declare -F | awk "{print \$3}" | grep "^test_"); do
			n=${t#test_} v=timeout_${t#test_} q=quiet_${t#test_} c=guest_secs_${t#test_} g=0
			[[ " ${guest_tests:-} " != *" $n "* ]] || g=1
			[[ " ${every_kernel_tests:-} " != *" $n "* ]] || g=2
			[[ " ${arm64_tests:-} " != *" $n "* ]] || g=3
			echo "$n ${!v:-$DEFAULT_TIMEOUT} ${!q:-0} $g ${!c:-10}"
		done' _ "$1"
}

# list_tests' lines for an area, kept in .output/runtime-lists/AREA
# while newer than the area's file, lib.sh and this file (whose
# list_tests makes the lines): a QEMU guest reads the
# host's (tests/run.sh makes them with --lists before the guests start;
# each area's list cost a TCG guest beside two CPU hogs some 2 s of its
# one CPU, a bash parsing the file); a guest's root is read-only, so a
# stale list there is made again, not kept.
LISTS=.output/runtime-lists
list_kept() { # AREA
	local c=$LISTS/$1 l
	if [ -f "$c" ] && [ "$c" -nt "tests/runtime/$1.sh" ] && [ "$c" -nt tests/runtime/lib.sh ] &&
		[ "$c" -nt tests/runtime/runner.sh ]; then
		# (read, not cat: a fork costs a guest 50-70 ms)
		IFS= read -r -d '' l <"$c"
		printf '%s' "$l"
		return
	fi
	l=$(list_tests "$1") || return 1
	{ mkdir -p "$LISTS" && echo "$l" >"$c.$$" && mv "$c.$$" "$c"; } 2>/dev/null || rm -f "$c.$$" 2>/dev/null
	echo "$l"
}

# The guest_tests this guest's share K/N holds, as " AREA/NAME ...": the
# longest first (AREA NAME COST lines on stdin), each to the share with
# the least so far (the lowest of equals), the same in every guest.
my_deal() { # K N
	sort -k3,3nr -k1,2 | awk -v k="$1" -v n="$2" '
		{ best = 1; for (i = 2; i <= n; i++) if (load[i] < load[best]) best = i
		  load[best] += $3; if (best == k) printf " %s/%s", $1, $2 }
		END { print " " }'
}

# --lists: the areas' lists made and kept, nothing run (tests/run.sh,
# before the guests start)
if [ -n "$lists_only" ]; then
	for area in "${areas[@]}"; do
		list_kept "$area" >/dev/null || { echo "runtime: no tests in tests/runtime/$area.sh" >&2; exit 1; }
	done
	exit 0
fi

# The slowdown against a quiet machine of this kind, in percent: every
# timeout is scaled by it; tests may scale their own allowances by it.
t_start=$SECONDS
cal=$(tests/runtime/calibrate.sh)
export PMT_SLOWDOWN=${cal%% *}
echo "runtime: calibration ${cal#* } ms a round (a quiet machine: 90), timeouts x$((PMT_SLOWDOWN / 100)).$((PMT_SLOWDOWN % 100 / 10))"

# The processes under PID but SKIP and its own, each with its state, where
# it waits in the kernel and its command line: what a test that ran out of
# time was waiting for. From /proc alone (a QEMU guest has no ps).
hung_tree() { # PID SKIP
	local pid state rest
	awk -v root="$1" -v skip="$2" '{
		i = match($0, /\) [A-Za-z] -?[0-9]+ /); split(substr($0, i + 2), f, " ")
		state[$1] = f[1]; parent[$1] = f[2]
	} END {
		keep[root] = 1
		do { n = 0; for (p in parent) if (!(p in keep) && (parent[p] in keep) && p != skip) { keep[p] = 1; n++ } } while (n)
		delete keep[root]
		for (p in keep) print p, state[p]
	}' /proc/[0-9]*/stat 2>/dev/null | sort -n | while read -r pid state; do
		rest=$({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | cut -c1-160) || continue
		[ -n "$rest" ] || continue
		echo "$pid $state in $(cat "/proc/$pid/wchan" 2>/dev/null): $rest"
		[ "$state" = R ] || head -n 4 "/proc/$pid/stack" 2>/dev/null | sed 's/^/      /'
	done
}

# The CPU time, in clock ticks, of this shell's children that have ended
# and of what they waited for: taken around a test, what it cost the
# guests and tests beside it (tests/run.sh runs them side by side); its
# processes that outlive it are not counted.
TICKS=$(getconf CLK_TCK 2>/dev/null || echo 100)
# (read by the shell into TICKS_NOW, not printed into a $(...): an awk a
# test, twice, cost a guest's CPU 0.1 s, and so does a subshell's fork)
cpu_ticks() {
	local s f
	read -r s <"/proc/$$/stat"
	# the fields after the name's ")": state first, cutime and cstime
	# the 14th and 15th
	read -ra f <<<"${s##*) }"
	TICKS_NOW=$((f[13] + f[14]))
}

# Every test to run: "AREA NAME SECS QUIET" lines. In a QEMU guest the
# quiet ones come last: the guests start beside the host's unit suites and
# fuzzer (tests/run.sh), whose CPU their one emulated CPU then misses.
passed=0 failed=0 skipped=0 plan='' last='' host_only=0 all='' mine=''
for area in "${areas[@]}"; do
	# no process substitution: a QEMU guest's /dev has no /dev/fd
	if [ ! -f "tests/runtime/$area.sh" ] || ! tests=$(list_kept "$area") || [ -z "$tests" ]; then
		echo "FAIL runtime/$area: no tests in tests/runtime/$area.sh"
		failed=$((failed + 1))
		continue
	fi
	all+=$(awk -v a="$area" '{ print a, $0 }' <<<"$tests")$'\n'
done
if [ -n "${PMT_VM:-}" ] && [ -n "${PMT_VM_SHARE:-}" ]; then
	mine=$(awk '$5 == 1 { print $1, $2, $6 }' <<<"$all" | my_deal "${PMT_VM_SHARE%/*}" "${PMT_VM_SHARE#*/}")
fi
while read -r area name secs quiet guest _; do
	[ -n "$area" ] || continue
	[ -n "$only" ] && [[ $name != *$only* ]] && continue
	# run elsewhere (tests/run.sh: in the background beside the guests)
	[[ " ${PMT_RUNTIME_ELSEWHERE:-} " == *" $area/$name "* ]] && continue
	if [ -n "$mine" ] && [ "$guest" = 1 ] && [[ $mine != *" $area/$name "* ]]; then
		guest=0
	fi
	[ "$guest" != 3 ] || [ "${PMT_VM_ARCH:-}" = arm64 ] || [ -z "${PMT_VM:-}" ] || guest=0
	# a guest given its tests by name (make test's arm64 guest)
	if [ -n "${PMT_VM_TESTS:-}" ]; then
		guest=0
		[[ " $PMT_VM_TESTS " != *" $area/$name "* ]] || guest=1
	fi
	if [ -n "${PMT_VM:-}" ] && [ "$guest" = 0 ]; then
		host_only=$((host_only + 1))
		continue
	fi
	[ "${RUNTIME_PASS:-}" = busy ] && [ "$quiet" = 1 ] && continue
	[ "${RUNTIME_PASS:-}" = quiet ] && [ "$quiet" != 1 ] && continue
	if [ -n "${PMT_VM:-}" ] && [ "$quiet" = 1 ]; then
		last+="$area $name $secs"$'\n'
	else
		plan+="$area $name $secs"$'\n'
	fi
done <<<"$all"

# the plan on fd 3: a test's commands may read their standard input (qemu
# does), which must not eat the plan
while read -r area name secs <&3; do
	[ -n "$area" ] || continue
	secs=$(((secs * PMT_SLOWDOWN + 99) / 100))
	[ -z "${PMT_VM_PROGRESS:-}" ] || echo "$area/$name $secs" >"$PMT_VM_PROGRESS"
	work=$(mktemp -d /tmp/pmtrace-test.XXXXXX) t0=$SECONDS
	cpu_ticks && c0=$TICKS_NOW
	# a few seconds before its time is up, what its processes wait in
	# shellcheck disable=SC2016 # the trap's words are expanded when it runs
	(
		sleep $((secs > 6 ? secs - 3 : secs)) &
		s=$!
		trap 'kill $s 2>/dev/null; wait $s; exit 0' TERM
		wait $s && hung_tree $$ "$BASHPID" >"$work/.hung" 2>&1
	) &
	watch=$!
	# timeout signals the test's whole process group; the test's
	# commands traced to a file: a test that runs out of time shows the
	# commands it was in
	# shellcheck disable=SC2016 # expanded by the inner shell
	WORK=$work PMT_AREA=$area timeout -k 10 "$secs" bash -c 'exec 9>"$WORK/.trace" && BASH_XTRACEFD=9 && set -x && . tests/runtime/lib.sh && . "tests/runtime/$1.sh" && "test_$2"' _ "$area" "$name"
	rc=$? t=$((SECONDS - t0))
	kill $watch 2>/dev/null
	wait $watch
	cpu_ticks && c=$((TICKS_NOW - c0))
	case $rc in
	0) echo "ok   runtime/$area/$name ($t s, CPU $((c / TICKS)).$((c % TICKS * 10 / TICKS)) s)"; passed=$((passed + 1)) ;;
	77) echo "skip runtime/$area/$name"; skipped=$((skipped + 1)) ;;
	124 | 137)
		echo "FAIL runtime/$area/$name: timed out after $secs s; its last commands:"
		tail -n 12 "$work/.trace" | cut -c1-300 | sed 's/^/    | /'
		[ ! -s "$work/.hung" ] || { echo "    its processes then:" && sed 's/^/    | /' "$work/.hung"; }
		failed=$((failed + 1))
		;;
	*) echo "FAIL runtime/$area/$name ($t s)"; failed=$((failed + 1)) ;;
	esac
	if [ -n "${KEEP:-}" ]; then echo "    work dir: $work"; else rm -rf "$work"; fi
done 3<<<"$plan$last"
[ $host_only = 0 ] || echo "runtime: $host_only tests left to the host${PMT_VM_SHARE:+ or the other guests (share $PMT_VM_SHARE of guest_tests)}"
echo "runtime: $((SECONDS - t_start)) s"
if [ $((passed + failed + skipped)) = 0 ] && [ -z "${RUNTIME_PASS:-}" ]; then
	echo "FAIL runtime: no test ran${only:+ (none matches -k $only)}"
	failed=1
fi
echo "runtime: $passed passed, $failed failed, $skipped skipped"
[ $failed = 0 ]
