#!/usr/bin/env bash
# Run the suites and end with one line: "N passed, N failed, N skipped".
#
#   tests/run.sh              everything: unit (no root), unit under
#                             ASan+UBSan, the fuzzer, lint, the runtime
#                             suite in QEMU guests (x86-64's 6.1 and 6.12,
#                             and ARM64_CI_TESTS in arm64's 6.1 unless
#                             PMT_ARM64_CI=0) and on this kernel
#   tests/run.sh vm           the runtime suite in the guests only
#   tests/run.sh vm-arm64     every test a guest runs in an arm64 guest
#                             (Debian's arm64 6.1 kernel in
#                             qemu-system-aarch64), against pmtrace and
#                             the test programs cross-built (make
#                             vm-arm64-deps installs what it needs)
#   tests/run.sh AREA...      runtime areas on this kernel, a file each in
#                             tests/runtime/: stream, filter, aggregate,
#                             export, counting, pmu, uprobe, usdt, kprobe,
#                             unwind, python, offcpu, exit, cli; or the
#                             suites unit, asan, fuzz, lint, vm; or
#                             sanitize: this kernel's suite against
#                             pmtrace built with ASan+UBSan
# shellcheck disable=SC2317 # suites are called through run_suite and one_suite
cd "$(dirname "$0")/.." || exit 1
total_p=0 total_f=0 total_s=0
failed=() # each failure, with its details, repeated above the summary

run_suite() { # NAME COMMAND...
	local name=$1 out rc p f s t0=$SECONDS
	shift
	echo "== $name"
	out=$("$@" 2>&1)
	rc=$?
	echo "$out"
	# a guest ran in the background: its own wall time (SUITE_WALL)
	if [ -n "${SUITE_WALL:-}" ]; then
		echo "== $name: $SUITE_WALL s (in the background, beside other suites)"
	else
		echo "== $name: $((SECONDS - t0)) s"
	fi
	# each FAIL line with the (at most 3) detail lines printed before it
	mapfile -t -O ${#failed[@]} failed < <(echo "$out" | awk -v n="$name" '
		/^FAIL / { for (i = 0; i < k; i++) print d[i]; print n ": " $0; k = 0; next }
		/^    / { if (k == 3) { d[0] = d[1]; d[1] = d[2]; k = 2 } d[k++] = substr($0, 1, 300); next }
		{ k = 0 }')
	read -r p f s < <(echo "$out" | sed -n 's/^[a-z-]*: \([0-9]*\) passed, \([0-9]*\) failed\(, \([0-9]*\) skipped\)\{0,1\}$/\1 \2 \4/p' | tail -1)
	if [ -z "$p" ]; then
		echo "FAIL $name: no summary line (exit $rc)"
		failed+=("FAIL $name: no summary line (exit $rc)")
		p=0 f=1 s=0
	elif [ $rc != 0 ] && [ "$f" = 0 ]; then
		echo "FAIL $name: exit $rc"
		failed+=("FAIL $name: exit $rc")
		f=1
	fi
	total_p=$((total_p + p)) total_f=$((total_f + f)) total_s=$((total_s + ${s:-0}))
}

summary() {
	echo "== all suites: $SECONDS s"
	[ ${#failed[@]} = 0 ] || printf '%s\n' "== failures" "${failed[@]}"
	echo "$total_p passed, $total_f failed, $total_s skipped"
	[ $total_f = 0 ]
	exit
}

# The runtime suite on Debian's stock kernels in QEMU (tools/vmtest): the
# newest 6.1 and 6.12 packages, where kprobes and fentry exist. The two
# guests (one TCG vCPU each) run in the background while the unit suites
# and the fuzzer are built and run, at the same priority: they are the
# longest part of the run (at nice 19 beside two CPU hogs they got 6% of
# a CPU and never finished). The host's runtime suite runs beside them
# too, but for the tests whose figures a busy machine changes: every test
# asserts what pmtrace promises on a busy machine (make test-load), and a
# CI machine two or three times slower than this one is busy all along.
vm_pkg() { # PACKAGE-REGEX
	apt-cache search --names-only "$1" 2>/dev/null | cut -d' ' -f1 | sort -V | tail -1
}
# A guest's budget: what CI's 90 minutes leave it (GUEST_BUDGET_S), the
# builds before it and the quiet pass after it taken out. Not a bound on
# its speed: a test that hangs in a guest ends at its own timeout (scaled
# by the guest's calibration); a guest past this fails, naming the test
# it was in (tools/vmtest). A guest's suite takes 10 minutes here in make
# test, 6 times that beside two CPU hogs for the tests that run bpftrace,
# and TCG's speed differs twofold between machines of this kind whose
# native speed is the same (CI's 6.1 guest took 1,008 s for what took
# 590 here): a budget from the host's speed alone failed there.
GUEST_BUDGET_S=4200
vm_start() { # NAME PACKAGE-REGEX SHARE: sets VM_PIDS, logs to .output/vm-NAME.log
	local pkg log=.output/vm-$1.log share=$3
	pkg=$(vm_pkg "$2")
	if [ -z "$pkg" ]; then
		printf 'skip vm: no package matches %s (apt-get update?)\nvm: 0 passed, 0 failed, 1 skipped\n' "$2" >"$log"
		return
	fi
	VMTEST_BUDGET=$GUEST_BUDGET_S tools/vmtest "$pkg" env PMT_VM_SHARE="$share" tests/runtime/runner.sh >"$log" 2>&1 &
	VM_PIDS+=("$!")
}
# the 6.12 guest's kernel package (its suite's and the budget test's)
VM_612_RE='^linux-image-6\.12\.[0-9]+\+deb12-amd64$'
# Both guests run every_kernel_tests (each kprobe mode's and fentry's
# exact counts, the verifier's work) and half of guest_tests each
# (runner.sh, PMT_VM_SHARE): a suite of both lists took 12 minutes a
# guest beside make test's other suites here, 17 and 21 beside two CPU hogs.
vms_start() {
	mkdir -p .output
	# the areas' test lists, read by the guests (their roots are
	# read-only: each would parse every area file again)
	tests/runtime/runner.sh --lists
	vm_start 6.1 '^linux-image-6\.1\.0-[0-9]+-amd64$' 1/2
	vm_start 6.12 "$VM_612_RE" 2/2
	! arm64_in_ci || vm_arm64_start
	# the host's test of a guest past its budget: a guest idle until its
	# budget ends (90 s, times the calibration), most of it waiting; in
	# the background with the guests, not in the busy pass's line
	# (the 6.12 guest's kernel: its unpacking is vmtest's, under a lock)
	(PMT_VM_BUDGET_PKG=$(vm_pkg "$VM_612_RE") \
		tests/runtime/runner.sh -k guest_out_of_budget cli >.output/vm-budget.log 2>&1) &
	VM_PIDS+=("$!")
	export PMT_RUNTIME_ELSEWHERE=cli/guest_out_of_budget
}
vm_result() { # NAME: the guest's log (its suite ends "runtime: N passed, ...")
	cat ".output/vm-$1.log"
	grep -q "^vmtest: .*: status 0 after " ".output/vm-$1.log" || grep -q "^vm: " ".output/vm-$1.log"
}
vm_wall() { # NAME: the guest's wall time, boot included, as vmtest said it
	sed -n 's/^vmtest: .*: status [0-9]* after \([0-9]*\) s$/\1/p' ".output/vm-$1.log" | tail -1
}
# arm64: the cross build, then Debian's newest arm64 6.1 in
# qemu-system-aarch64 (TCG) on a root of Debian's arm64 packages. make
# test's guests include one that runs ARM64_CI_TESTS, in the background
# beside the x86 guests (PMT_ARM64_CI=0 leaves it out; make test-deps
# installs what it needs): what the architecture changes (system call numbers, argument
# and return registers of kprobes, uprobes and USDT, kernel stacks past
# the BPF frames, the PMU, the in-kernel unwinder's whole stacks and the
# Python frame reader, what arm64's verifier accepts). The unwinder
# against the guest's own perf (unwind_vs_perf_dwarf) runs in the full
# list alone: beside two CPU hogs it took 314 and 352 s of the CI
# guest's CPU (30 s alone), a third of all the guest did, while
# unwind_nofp_chain checks the same chain's stacks whole on arm64 in
# 40; and rawtp_typed_arguments (typed raw tracepoints: 53 s of the
# guest's 379 in a quiet CI run, the most of any) in the full list alone
# too: what it checks, BTF's argument types, is not the architecture's.
# tests/run.sh vm-arm64 runs every test a guest runs, each whole
# (guest_tests, every_kernel_tests, arm64_tests: 70 tests, some 50
# minutes here).
ARM64_CI_TESTS="stream/getppid_exact kprobe/kprobe_exact_count_and_retval
kprobe/kprobe_stack uprobe/uprobe_exact_args uprobe/uretprobe_retval usdt/usdt_args_exact
pmu/pmu_cycles_hardware unwind/unwind_nofp_chain python/python_offcpu
cli/verifier_work_bounded programs/program_opensnoop_vs_bpftrace"
# (Alone, boot included: 371 s here. Beside make test's other suites:
# 707 s quiet, the root made by mmdebstrap included; 1,004 s beside two
# CPU hogs.) The whole list's time here quiet
# (its budget is three times that)
ARM64_ALL_S=3000
# make test's arm64 guest: unless PMT_ARM64_CI=0
arm64_in_ci() { [ "${PMT_ARM64_CI:-1}" != 0 ]; }
ARM64_NEEDS="needs Debian's arm64 packages, qemu-system-aarch64, mmdebstrap and the cross compiler (make vm-arm64-deps)"
arm64_ok() {
	[ -n "$(vm_pkg '^linux-image-6\.1\.0-[0-9]+-arm64$')" ] && command -v qemu-system-aarch64 >/dev/null &&
		command -v mmdebstrap >/dev/null && command -v aarch64-linux-gnu-gcc >/dev/null
}
vm_arm64() { # [TESTS]: the guest's log in .output/vm-arm64.log
	local pkg log=.output/vm-arm64.log budget=$GUEST_BUDGET_S
	pkg=$(vm_pkg '^linux-image-6\.1\.0-[0-9]+-arm64$')
	if ! arm64_ok; then
		echo "skip vm-arm64: $ARM64_NEEDS"
		echo "vm: 0 passed, 0 failed, 1 skipped"
		return 0
	fi
	if ! make -s ARCH=arm64 WERROR=1 all testprogs >.output/build-arm64.log 2>&1; then
		cat .output/build-arm64.log
		echo "FAIL build of pmtrace and the test programs for arm64"
		echo "build: 0 passed, 1 failed"
		return 1
	fi
	# (the whole list's: past CI's)
	[ -n "${1:-}" ] || budget=$((3 * ARM64_ALL_S))
	VMTEST_BUDGET=$budget tools/vmtest "$pkg" env PMT_VM_TESTS="${1:-}" ${1:+PMT_VS_PERF=nofp} \
		tests/runtime/runner.sh >"$log" 2>&1
	cat "$log"
	grep -q "^vmtest: .*: status 0 after " "$log"
}
# make test's: in the background, its output (and its wall time) kept
vm_arm64_start() {
	arm64_ok || return 0
	(vm_arm64 "$(tr '\n' ' ' <<<"$ARM64_CI_TESTS")" >.output/vm-arm64-ci.log 2>&1; echo "rc $?" >>.output/vm-arm64-ci.log) &
	VM_PIDS+=("$!")
	ARM64_T0=$SECONDS
}
vm_arm64_result() {
	sed '/^rc [0-9]*$/d' .output/vm-arm64-ci.log
	grep -qx "rc 0" .output/vm-arm64-ci.log
}
vm_suites() {
	if $vm_ok; then
		[ ${#VM_PIDS[@]} = 0 ] || wait "${VM_PIDS[@]}"
		SUITE_WALL=$(vm_wall 6.1) run_suite "vm 6.1" vm_result 6.1
		SUITE_WALL=$(vm_wall 6.12) run_suite "vm 6.12" vm_result 6.12
		SUITE_WALL=$(sed -n 's/^runtime: \([0-9]*\) s$/\1/p' .output/vm-budget.log) \
			run_suite "vm budget" cat .output/vm-budget.log
		if [ -n "${ARM64_T0:-}" ]; then
			SUITE_WALL=$(vm_wall arm64) run_suite "vm arm64" vm_arm64_result
		elif arm64_in_ci; then
			echo "skip vm arm64: $ARM64_NEEDS"
			total_s=$((total_s + 1))
		fi
	else
		echo "skip vm: needs root and qemu-system-x86 (make test-deps)"
		total_s=$((total_s + 1))
	fi
}

# Every libFuzzer target (tests/fuzz/*_fuzz.c) for FUZZ_SECONDS each
# (default 4 here; make fuzz alone: 60): each target is a test.
fuzz_suite() {
	local log n pass=0 bad=0
	if ! make -s fuzz-build >.output/fuzz-build.log 2>&1; then
		tail -20 .output/fuzz-build.log
		echo "FAIL fuzz/build (see .output/fuzz-build.log)"
		echo "fuzz: 0 passed, 1 failed"
		return 1
	fi
	# the targets at once, each its seconds (libFuzzer's time is wall
	# time: one after another took 39 s of CI's run beside two CPU hogs)
	local names=() pids=() i
	for n in tests/fuzz/*_fuzz.c; do
		n=${n##*/} && n=${n%_fuzz.c}
		names+=("$n")
		make -s "fuzz-$n" FUZZ_SECONDS="${FUZZ_SECONDS:-4}" >".output/fuzz-$n.log" 2>&1 &
		pids+=("$!")
	done
	for i in "${!names[@]}"; do
		n=${names[$i]}
		log=.output/fuzz-$n.log
		if wait "${pids[$i]}"; then
			grep -E '^stat::number_of_executed_units' "$log" | sed 's/^/    /'
			echo "ok   fuzz/$n"
			pass=$((pass + 1))
		else
			tail -40 "$log"
			echo "FAIL fuzz/$n (crash, leak or UB; see $log)"
			bad=$((bad + 1))
		fi
	done
	echo "fuzz: $pass passed, $bad failed"
	[ "$bad" = 0 ]
}

# clang-format and shellcheck (make lint); each file is a test.
lint_suite() {
	make -s lint
}

runtime_suite() { # AREA...
	if [ "$(id -u)" = 0 ]; then
		run_suite "runtime${RUNTIME_PASS:+ ($RUNTIME_PASS)}" tests/runtime/runner.sh "$@"
	else
		echo "skip runtime: needs root (BPF programs are loaded into the kernel)"
		total_s=$((total_s + 1))
	fi
}

# This kernel's runtime suite against pmtrace built with ASan and UBSan
# (make test-sanitize): a report makes pmtrace exit 86, which fails its
# test (the test shows pmtrace's stderr); the reports are listed again at
# the end from the suite's log. Leaks at exit are reported too. Tests
# whose bounds are memory or time skip (requires native).
sanitize_suite() {
	local log=.output/san/suite.log
	mkdir -p .output/san
	PMT=.output/san/pmtrace PMT_SANITIZED=1 \
		ASAN_OPTIONS=detect_leaks=1:exitcode=86 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=86 \
		run_suite "runtime (ASan+UBSan)" tests/runtime/runner.sh > >(tee "$log")
	wait $! 2>/dev/null
	if grep -Eq 'runtime error:|ERROR: (Address|Leak)Sanitizer' "$log"; then
		echo "== sanitizer reports"
		grep -E -A3 'runtime error:|ERROR: (Address|Leak)Sanitizer|^SUMMARY' "$log"
		return 1
	fi
}

# Under load: every test must assert what pmtrace promises, not what an
# idle machine allows. This kernel's suite beside two CPU hogs at normal
# priority; then the guests (at CI's priority) while this kernel's suite
# runs beside them. Before a hand-in; CI keeps its plain run.
load_suites() {
	local hogs=() hog
	if [ "$(id -u)" != 0 ]; then
		runtime_suite
		return
	fi
	for hog in 1 2; do
		sh -c 'while :; do :; done' "hog$hog" &
		hogs+=("$!")
	done
	run_suite "runtime (beside 2 CPU hogs)" tests/runtime/runner.sh
	kill "${hogs[@]}"
	wait "${hogs[@]}" 2>/dev/null
	! $vm_ok || vms_start
	run_suite "runtime (beside the guests)" tests/runtime/runner.sh
	vm_suites
}

# Build TARGET (its output kept in .output/build-NAME.log, shown if it
# fails), then run it (make test has built it before the guests started:
# a failed build is built again here, and shown).
built() { # TARGET COMMAND...
	local log=.output/build-${1##*/}.log
	if ! make -s "$1" >"$log" 2>&1; then
		cat "$log"
		echo "FAIL build of $1"
		echo "build: 0 passed, 1 failed"
		return 1
	fi
	shift
	"$@"
}

# the suites that need no kernel: NAME's title and what it runs
plain_title() { # NAME
	case $1 in asan) echo unit-asan ;; *) echo "$1" ;; esac
}
plain_suite() { # NAME
	case $1 in
	unit) built .output/test_unit .output/test_unit ;;
	asan) built .output/test_unit_asan env ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 .output/test_unit_asan ;;
	fuzz) fuzz_suite ;;
	lint) lint_suite ;;
	esac
}

one_suite() { # NAME
	case $1 in
	unit | asan | fuzz | lint) run_suite "$(plain_title "$1")" plain_suite "$1" ;;
	vm-arm64) run_suite "vm arm64" vm_arm64 ;;
	load) load_suites ;;
	sanitize) sanitize_suite ;;
	*) return 1 ;;
	esac
}

# The suites that need no kernel, side by side, each its output and wall
# time kept in .output/suite-NAME.out ("rc STATUS SECS" its last line),
# then each reported in turn. One after another they were 101 s of CI's
# run beside the guests and two CPU hogs, the busy pass waiting on them;
# side by side they take a larger share of the CPUs the hogs take too.
plain_suites() { # NAME...
	local n pids=() out
	for n in "$@"; do
		(
			t0=$SECONDS
			plain_suite "$n" >".output/suite-$n.out" 2>&1
			echo "rc $? $((SECONDS - t0))" >>".output/suite-$n.out"
		) &
		pids+=("$!")
	done
	wait "${pids[@]}"
	for n in "$@"; do
		out=.output/suite-$n.out
		SUITE_WALL=$(sed -n '$s/^rc [0-9]* //p' "$out") run_suite "$(plain_title "$n")" plain_result "$out"
	done
}
plain_result() { # FILE: its output, and its status
	sed '$d' "$1"
	[ "$(sed -n '$s/^rc \([0-9]*\) .*/\1/p' "$1")" = 0 ]
}

VM_PIDS=()
vm_ok=false
if [ "$(id -u)" = 0 ] && command -v qemu-system-x86_64 >/dev/null; then
	vm_ok=true
fi

if [ $# -gt 0 ]; then
	areas=()
	for a in "$@"; do
		if [ "$a" = vm ]; then
			! $vm_ok || vms_start
			vm_suites
		elif ! one_suite "$a"; then
			areas+=("$a")
		fi
	done
	[ ${#areas[@]} = 0 ] || runtime_suite "${areas[@]}"
	summary
fi

# The guests start first and run beside everything else: the unit suites,
# the fuzzer, lint, and this kernel's runtime tests but those whose
# figures a busy machine changes (quiet_NAME=1), which run once the guests
# are done. (ASan's unit suite, the fuzzer and lint in the background
# beside the busy pass were tried: beside two CPU hogs a served
# system-wide profile came 10% short of its samples. The busy pass's
# bounds are for this load, not more.) The unit suites and the fuzzers
# are built before the guests start: the busy pass, not the guests, ends
# last in CI, and its start waited on these builds, which beside three
# guests and two CPU hogs took 128 s for what takes 20 here alone.
make -s .output/test_unit .output/test_unit_asan fuzz-build >.output/build-before-guests.log 2>&1
! $vm_ok || vms_start
plain_suites unit asan fuzz lint
RUNTIME_PASS=busy runtime_suite
vm_suites
RUNTIME_PASS=quiet runtime_suite
summary
