# Shared helpers for the runtime tests (sourced by tests/runtime.sh).
# A test is a function test_NAME; it returns 0 (pass), 1 (fail) or 77
# (skip, after calling skip "reason").
PMT=${PMT:-./pmtrace}
TP=${TP:-.output/testprogs}
WORK=$(mktemp -d /tmp/pmtrace-test.XXXXXX)
[ -n "$KEEP" ] && echo "work dir: $WORK" >&2
[ -n "$KEEP" ] || trap 'rm -rf "$WORK"' EXIT

fail() { echo "    FAIL: $*" >&2; return 1; }
skip() { echo "    SKIP: $*" >&2; return 77; }
note() { echo "    $*" >&2; }

expect_eq() { # what actual expected
	[ "$2" = "$3" ] || { fail "$1: got '$2', expected '$3'"; return 1; }
}

# Nothing of pmtrace may remain loaded: no program named pmt_*, no link to
# one. The kernel-side teardown of tracepoint links runs in pmtrace's
# background closer (an RCU grace period per tracepoint), so allow it 60 s.
no_leftovers() {
	local left tries=600
	while left=$(leftovers) && [ -n "$left" ] && [ $tries -gt 0 ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
	[ -z "$left" ] || { fail "left in the kernel after 60 s: $left"; return 1; }
}

leftovers() {
	python3 - <<'PY'
import json, subprocess
def show(what):
    out = subprocess.run(["bpftool", "-j", what, "show"], capture_output=True, text=True).stdout
    return json.loads(out or "[]")
ids = {p["id"] for p in show("prog") if p.get("name", "").startswith("pmt_")}
links = [l for l in show("link") if l.get("prog_id") in ids]
print(f"{len(ids)} programs, {len(links)} links" if ids or links else "")
PY
}

# Wait until FILE contains PATTERN (default 5 s).
wait_for() {
	local file=$1 pattern=$2 tries=${3:-100}
	while [ "$tries" -gt 0 ]; do
		grep -q -- "$pattern" "$file" 2>/dev/null && return 0
		sleep 0.05
		tries=$((tries - 1))
	done
	fail "timed out waiting for '$pattern' in $file"
}
