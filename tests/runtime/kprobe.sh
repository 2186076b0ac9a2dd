# shellcheck shell=bash
# Runtime tests, area kprobe: Kernel function probes (kprobes, fentry/fexit): where the kernel has them.
# Sourced by tests/runtime/runner.sh after lib.sh; each test_NAME runs alone
# under its own timeout (timeout_NAME=SECS, default $DEFAULT_TIMEOUT).

# The tests the QEMU guests run too (runner.sh): what the kernel decides;
# every_kernel_tests in every guest, guest_tests dealt between them.
# shellcheck disable=SC2034 # read by runner.sh
every_kernel_tests="kprobe_exact_count_and_retval fentry_member_chains"
# shellcheck disable=SC2034 # read by runner.sh
guest_tests="kprobe_errors kprobe_stream_args kprobe_latency kprobe_glob_multi kprobe_not_ftraced kprobe_stack fentry_tcpaccept_capable"
# what each took in a guest beside two CPU hogs (make test, CI's
# load), seconds, where 15 or more (runner.sh deals guest_tests by
# it; 10 where not given)
# shellcheck disable=SC2034 # read by runner.sh
guest_secs_fentry_tcpaccept_capable=26
guest_secs_kprobe_errors=19
guest_secs_kprobe_stack=18
guest_secs_kprobe_stream_args=17
guest_secs_kprobe_latency=17
guest_secs_kprobe_not_ftraced=15

# The kprobe modes this kernel has; skips (status 77) when none.
kernel_modes() {
	KMODES=""
	have_fentry && KMODES="fentry"
	have_kprobes && KMODES="$KMODES kprobe"
	[ -n "$KMODES" ] || skip "this kernel has neither kprobes (CONFIG_KPROBES unset) nor fentry; runs in the QEMU 6.1/6.12 guests (make vmtest)"
}

test_kprobe_unavailable_message() {
	have_kprobes && { skip "this kernel has kprobes"; return; }
	have_fentry && { skip "this kernel has fentry"; return; }
	usage_error "this kernel can attach neither kprobes .* nor fentry/fexit" --kprobe vfs_read || return 1
	grep -q "uprobes (--uprobe PATH:SYMBOL)" "$WORK/usage.err" || { fail "no hint at what works"; return 1; }
	usage_error "this kernel can attach neither" --latency kprobe:vfs_read || return 1
	no_leftovers
}

test_kprobe_exact_count_and_retval() {
	kernel_modes || return
	local m out
	for m in $KMODES; do
		out=$("$PMT" -q --kprobe-mode "$m" --kprobe vfs_read --filter 'arg2 == 12345' --count -- "$CALLS" 40) || return 1
		expect_eq "$m: vfs_read calls with count 12345" "$out" "@: 40" || return 1
		out=$("$PMT" -q --kprobe-mode "$m" --kretprobe vfs_read --filter 'retval == 12345' --count -- "$CALLS" 40) || return 1
		expect_eq "$m: vfs_read returns of 12345" "$out" "@: 40" || return 1
		out=$("$PMT" -q --kprobe-mode "$m" --kretprobe vfs_read --filter 'retval > 12000' --hist retval -- "$CALLS" 40 | grep '|') || return 1
		echo "$out" | grep -Eq '^\[8K, 16K\) +40 \|' || { fail "$m: retval hist: $out"; return 1; }
		note "$m: ok"
	done
}

test_kprobe_stream_args() {
	kernel_modes || return
	local m out=$WORK/kp.json
	for m in $KMODES; do
		"$PMT" -q --json --kprobe-mode "$m" --kprobe vfs_read --filter 'arg2 == 12345' -o "$out" -- "$CALLS" 5 || return 1
		check kprobe_stream_args "$out" "$m" || return 1
	done
}

test_kprobe_latency() {
	kernel_modes || return
	local m out want='^\[16, 32\) +1 \|'
	# (a sleep stretched past 32 ms under TCG: the next bucket up there)
	[ -z "${PMT_VM:-}" ] || want='^\[(16, 32|32, 64)\) +1 \|'
	for m in $KMODES; do
		out=$("$PMT" -q --kprobe-mode "$m" --latency kprobe:hrtimer_nanosleep --unit ms -- "$CALLS" 1 20 | grep '|') || return 1
		echo "$out" | grep -Eq "$want" || { fail "$m: 20 ms sleep not in [16, 32) ms: $out"; return 1; }
	done
}

test_kprobe_glob_multi() {
	requires kprobes || return
	local out err=$WORK/multi.err
	out=$("$PMT" --kprobe-mode kprobe --kprobe 'vfs_rea*' --filter 'arg2 == 12345' --count --by probe -- "$CALLS" 30 2>"$err") || return 1
	grep -Eq "functions, by kprobe(.multi)?" "$err" || { cat "$err" >&2; fail "no mechanism message"; return 1; }
	echo "$out" | grep -q '^@\[kprobe:vfs_read\]: 30$' || { fail "vfs_read by probe: $out"; return 1; }
	# a program's kprobe: as bpftrace's: kprobes, whatever trampolines
	# the kernel has; its kfunc: by fentry where it has them
	out=$("$PMT" -v -e 'kprobe:vfs_rea*, kprobe:vfs_write /arg2 == 12345/ { @[func] = count(); }' \
		-- "$CALLS" 30 2>"$err") || { cat "$err" >&2; return 1; }
	# (kprobe.multi for the glob where the kernel has multi links: 6.12's)
	expect_eq "the program's mechanisms" "$(grep -Eo 'by [a-z.]+$' "$err" | sed 's/[.]multi$//' | tr '\n' ' ')" \
		"by kprobe by kprobe " || return 1
	echo "$out" | grep -q '^@\[vfs_read\]: 30$' || { fail "the program's vfs_read: $out"; return 1; }
	if have_fentry; then
		"$PMT" -v -e 'kfunc:vfs_read /args.count == 12345/ { @ = count(); }' -- "$CALLS" 30 >"$WORK/kf.out" 2>"$err" ||
			{ cat "$err" >&2; return 1; }
		expect_eq "kfunc:'s mechanism" "$(grep -Eo 'by [a-z.]+$' "$err")" "by fentry" || return 1
		expect_eq "kfunc:'s count" "$(grep '^@' "$WORK/kf.out")" "@: 30" || return 1
	fi
	no_leftovers
}

# x86-64's syscall wrappers are not ftrace-able: kprobes only (as
# bpftrace's kprobe:); arm64's are, where the kernel has fentry at all
test_kprobe_not_ftraced() {
	requires kprobes || return
	local out fn
	fn=$(syscall_entry getppid)
	out=$("$PMT" -q --kprobe "$fn" --count -- "$TP"/getppid_loop 1000 | grep "^@") || return 1
	expect_eq "getppid calls by kprobe" "$out" "@: 1000" || return 1
	if grep -qx "$fn" /sys/kernel/tracing/available_filter_functions; then
		note "$fn is ftrace-able here ($(uname -m))"
		return
	fi
	usage_error "fentry/fexit needs a function ftrace can hook" --kprobe-mode fentry --kprobe "$fn"
}

test_kprobe_stack() {
	kernel_modes || return
	local m out=$WORK/kstack.txt
	for m in $KMODES; do
		"$PMT" -q --kprobe-mode "$m" --kprobe vfs_read --filter 'arg2 == 12345' --stack kernel -o "$out" -- "$CALLS" 3 || return 1
		# (read's entry: arm64's wrapper tail-calls ksys_read)
		grep -Eq "^\\s+[0-9a-f]+ (ksys_read|$(syscall_entry read))\\+0x[0-9a-f]+ \\(\\[kernel\\]\\)" "$out" || {
			head -20 "$out" >&2; fail "$m: no ksys_read frame"; return 1; }
		# each stack starts in the function probed, by either
		# mechanism: not in the BPF program or the trampoline
		awk '!/^\t/ { getline f; split(f, w, " "); sub(/\+.*/, "", w[2]); print w[2] }' "$out" |
			sort -u >"$WORK/first"
		expect_eq "$m: first frames" "$(cat "$WORK/first")" vfs_read || return 1
	done
}

test_kprobe_errors() {
	kernel_modes || return
	usage_error "not a kernel function" --kprobe vfs_raed || return 1
	grep -q "did you mean vfs_read" "$WORK/usage.err" || { fail "no suggestion"; return 1; }
	usage_error "no traceable kernel function matches" --kprobe 'pmt_nothing_*' || return 1
	usage_error "unknown field 'cnt' for kretprobe:vfs_read" --kretprobe vfs_read --filter 'cnt > 1' || return 1
	no_leftovers
}

# Member chains from fentry's parameters, typed by the kernel's BTF:
# vfs_open(const struct path *path, struct file *file) names the file
# opened (str(path->dentry->d_name.name)) and its inode number (a
# 3-level chain, against stat); tcp_connect(struct sock *sk) the address
# and port connected to (ntop() of sk->__sk_common.skc_daddr, the port
# swapped from network order), as bpftrace's tcpconnect reads them.
# Mistakes are usage errors: nothing attached.
test_fentry_member_chains() {
	requires fentry || return
	local f=$WORK/pmt-chain-target out ino port
	touch "$f" && ino=$(stat -c %i "$f")
	out=$("$PMT" -q --kprobe-mode fentry --kprobe vfs_open --count \
		--by 'str(path->dentry->d_name.name),path->dentry->d_inode->i_ino' \
		-- "$TP"/open_loop 37 "$f" | grep pmt-chain-target) || return 1
	expect_eq "vfs_open of the file" "$out" "@[pmt-chain-target, $ino]: 37" || return 1
	# the tutorial's printf("open path: %s\n", str(...->d_name.name)), streamed
	out=$("$PMT" -q --kprobe-mode fentry --kprobe vfs_open --str 'path->dentry->d_name.name' \
		-- "$TP"/open_loop 3 "$f" | grep -c 'str(path->dentry->d_name.name)=pmt-chain-target$')
	expect_eq "vfs_open streamed with the chain's string" "$out" 3 || return 1
	if [ -x "$PY" ]; then
		write_conn_py "$WORK/conn.py"
		# above 32767: a u16 member read signed shows it
		port=$((33000 + RANDOM % 20000))
		out=$("$PMT" -q --kprobe-mode fentry --kprobe tcp_connect --count \
			--by 'ntop(sk->__sk_common.skc_daddr),(sk->__sk_common.skc_dport >> 8) | ((sk->__sk_common.skc_dport & 0xff) << 8)' \
			-- "$PY" "$WORK/conn.py" $port | grep '^@') || return 1
		expect_eq "tcp_connect" "$out" "@[127.0.0.1, $port]: 3" || return 1
	fi
	usage_error "struct path has no member 'dentri'" --kprobe-mode fentry --kprobe vfs_open --count --by 'path->dentri' -- true || return 1
	grep -q "did you mean dentry" "$WORK/usage.err" || { cat "$WORK/usage.err" >&2; fail "no close name"; return 1; }
	usage_error "'->' needs a pointer to a struct or union: this is a number" \
		--kprobe-mode fentry --kprobe vfs_open --count --by 'file->f_pos->x' -- true || return 1
	no_leftovers
}

# libbpf-tools' tcpaccept and capable as one-liners: inet_csk_accept's
# return value is the accepted socket (a typed pointer: its local address
# and port through the chain), cap_capable's cap the capability checked.
# Three accepts on a port of loopback; five setuid(0) by root, each a
# CAP_SETUID (7) check.
test_fentry_tcpaccept_capable() {
	requires fentry || return
	[ -x "$PY" ] || { skip "needs $PY"; return; }
	local out port
	write_conn_py "$WORK/conn.py"
	port=$((33000 + RANDOM % 20000))
	out=$("$PMT" -q --kprobe-mode fentry --kretprobe inet_csk_accept --count \
		--by 'ntop(retval->__sk_common.skc_rcv_saddr),retval->__sk_common.skc_num' \
		-- "$PY" "$WORK/conn.py" $port | grep '^@') || return 1
	expect_eq "tcpaccept" "$out" "@[127.0.0.1, $port]: 3" || return 1
	out=$("$PMT" -q --kprobe-mode fentry --kprobe cap_capable --filter 'cap == 7' --count --by 'comm,cap' \
		-- "$PY" -c 'import os
for i in range(5): os.setuid(0)' | grep '^@') || return 1
	expect_eq "capable" "$out" "@[python3.11, 7]: 5"
}
