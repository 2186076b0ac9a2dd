/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Every probe kind, a line each. The enum (opts.h), the options and their
 * messages (opts.c), --help (usage.c), --latency's prefixes and the
 * providers that serve each kind (src/probes/registry_bpf.c) are all made
 * from this table: a new kind is its provider's file in src/probes/ and
 * one line here (and its words in the man page, which a unit test checks).
 *
 * X(ID, PREFIX, OPTION, SHORT, ARG, NEEDS, HELP, RETURN, PROVIDER)
 *   ID        PMT_PROBE_ID
 *   PREFIX    its name as a prefix of --latency specs (kprobe:vfs_read),
 *             and in messages; NULL: no prefix (-e's events)
 *   OPTION    --OPTION ARG (and -SHORT, or 0) adds a probe of the kind
 *   NEEDS     what an empty ARG is told it needs; NULL: not checked here
 *   HELP      --help's text after the option: lines, the first beside it
 *   RETURN    the kind that probes its return (--latency FUNC), or NONE
 *   PROVIDER  the struct pmt_provider serving it (src/probes/)
 */
#ifndef PMT_KINDS_H
#define PMT_KINDS_H

#define PMT_HELP_INDENT "                         "

#define PMT_PROBE_KINDS(X)                                                                         \
	X(TRACEPOINT, "tracepoint", "tp", 0, "CATEGORY:NAME",                                      \
	  "CATEGORY:NAME, e.g. --tp sched:sched_switch",                                           \
	  "stream a tracepoint; globs allowed (sched:sched_*)\n", NONE, pmt_tracepoint_provider)   \
	X(PERF, NULL, "event", 'e', "EVENT", NULL,                                                 \
	  "sample a PMU event: cycles, instructions, cpu-clock,\n" PMT_HELP_INDENT                 \
	  "page-faults, L1-dcache-load-misses, rNNNN,\n" PMT_HELP_INDENT                           \
	  "PMU/TERM=VAL,.../; modifiers :u :k\n"                                                   \
	  "      --period N         sample every N events, or\n"                                   \
	  "      --freq HZ          N samples a second per CPU (default 4000)\n" PMT_HELP_INDENT   \
	  "sample fields: ip addr period value mode(user|kernel)\n",                               \
	  NONE, pmt_perf_provider)                                                                 \
	X(KPROBE, "kprobe", "kprobe", 0, "FUNC[+OFF]", "a kernel function, e.g. vfs_read",         \
	  "kernel function entry; globs allowed ('vfs_*')\n", KRETPROBE, pmt_kprobe_provider)      \
	X(KRETPROBE, "kretprobe", "kretprobe", 0, "FUNC", "a kernel function, e.g. vfs_read",      \
	  "kernel function return\n" PMT_HELP_INDENT                                               \
	  "fields: arg0..arg5, retval; with fentry/fexit also\n" PMT_HELP_INDENT                   \
	  "the parameters by name (count, file, ...)\n"                                            \
	  "      --kprobe-mode auto|fentry|kprobe  how to attach (default auto:\n" PMT_HELP_INDENT \
	  "fentry/fexit where the kernel can)\n",                                                  \
	  NONE, pmt_kprobe_provider)                                                               \
	X(UPROBE, "uprobe", "uprobe", 0, "PATH:SYM[+OFF]",                                         \
	  "PATH:SYMBOL, e.g. /usr/bin/bash:readline",                                              \
	  "user function entry (executable or library);\n" PMT_HELP_INDENT "fields arg0..arg5\n",  \
	  URETPROBE, pmt_uprobe_provider)                                                          \
	X(URETPROBE, "uretprobe", "uretprobe", 0, "PATH:SYM",                                      \
	  "PATH:SYMBOL, e.g. /usr/bin/bash:readline",                                              \
	  "user function return; field retval (as bpftrace's)\n", NONE, pmt_uprobe_provider)       \
	X(USDT, "usdt", "usdt", 0, "PATH:[PROVIDER:]NAME",                                         \
	  "PATH:[PROVIDER:]NAME, e.g. python3:gc__start",                                          \
	  "a USDT probe (sys/sdt.h); globs allowed;\n" PMT_HELP_INDENT                             \
	  "fields arg0..argN as the probe types them, and\n" PMT_HELP_INDENT                       \
	  "str(argN), the string argument N points at\n",                                          \
	  NONE, pmt_usdt_provider)                                                                 \
	X(RAWTP, "rawtracepoint", "rawtp", 0, "NAME",                                              \
	  "a tracepoint's name, e.g. --rawtp sched_switch",                                        \
	  "a typed raw tracepoint (tp_btf): the arguments\n" PMT_HELP_INDENT                       \
	  "the kernel passes it, by name and BTF type\n" PMT_HELP_INDENT                           \
	  "(--rawtp sched_switch --by 'next->comm')\n",                                            \
	  NONE, pmt_rawtp_provider)

#endif
