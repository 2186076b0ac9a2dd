// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pmtrace --help, its probes from the table of kinds (kinds.h). Keep in
 * step with tools/man/pmtrace.8.scd (a unit test checks every option is in
 * both). */
#include "options/kinds.h"
#include "options/opts.h"
#include "util/strutil.h"

static const char usage_head[] =
	"usage: pmtrace [OPTIONS] --tp CATEGORY:NAME [--tp ...] [-- COMMAND [ARGS...]]\n"
	"       pmtrace [OPTIONS] FILE.bt|-e 'PROGRAM' [-c 'CMD ARGS'|-- COMMAND [ARGS...]]\n"
	"       pmtrace --stat [-e EVENT[,EVENT...]] [-a|-p PID|-- COMMAND [ARGS...]]\n"
	"       pmtrace --list [GLOB]\n"
	"       pmtrace --info CATEGORY:NAME|KIND:SPEC\n"
	"\n"
	"Probes:\n";

static const char usage_tail[] =
	"      --stack [kernel|user|both]  record call stacks (default both), on\n"
	"                         every probe: tracepoints, -e events, functions, USDT\n"
	"      --no-demangle      C++ and Rust names as the files spell them\n"
	"      --no-inline        no inlined frames nor source lines (read from the\n"
	"                         files' DWARF where they have it)\n"
	"      --no-python        no Python functions among user frames (read from\n"
	"                         CPython 3.11's frames with --unwind dwarf)\n"
	"      --debug-cache DIR  where compressed debug files are kept uncompressed\n"
	"                         (default ~/.cache/pmtrace/debug)\n"
	"      --no-debug-cache   inflate them in memory at each open instead\n"
	"      --unwind fp|dwarf  how user stacks are walked (default dwarf: the\n"
	"                         files' CFI, frame pointers where none covers)\n"
	"  --filter EXPR          keep only events of the probe before it for which\n"
	"                         EXPR holds, decided in the kernel, e.g.\n"
	"                         'prev_pid == 0 && next_comm ~ \"kworker*\"'\n"
	"                         fields, pid tid comm cpu uid gid cgroup;\n"
	"                         == != < <= > >= & ~(glob) && || ! ( )\n"
	"                         str(F): the string a pointer field F points at\n"
	"                         (also in --by and values), e.g. str(filename);\n"
	"                         operands may compute: '-ret == 2',\n"
	"                         'curtask->real_parent->pid == 1'\n"
	"      --str-len N        bytes str() reads, NUL included (default 64)\n"
	"  --str F[,G...]         print with each streamed event the strings pointer\n"
	"                         fields F, G (up to 4) point at (up to 127 bytes), e.g.\n"
	"                         --tp syscalls:sys_enter_openat --str filename;\n"
	"                         or chains: --str 'path->dentry->d_name.name'\n"
	"  --printf '\"FMT\", ARGS'  print each event of the probe before it as\n"
	"                         bpftrace's printf: fields, expressions, str(F),\n"
	"                         comm pid tid cpu uid gid nsecs elapsed probe,\n"
	"                         strftime(\"%H:%M\", nsecs); e.g.\n"
	"                         --printf '\"%-6d %s\\n\", pid, str(filename)'\n"
	"\n"
	"Aggregations, done in the kernel; printed at exit or every --interval:\n"
	"  --count                count events\n"
	"  --sum/--avg/--min/--max/--stats EXPR\n"
	"                         EXPR: a field, or an expression: len/1024, -ret,\n"
	"                         (flags & 3) * 2 (C's operators and types),\n"
	"                         curtask->real_parent->comm (the kernel's structs)\n"
	"  --hist EXPR            power-of-two histogram\n"
	"  --lhist EXPR:MIN:MAX:STEP  linear histogram\n"
	"  --by KEY[,KEY...]      one result per key (4 keys at most; sym and stack\n"
	"                         count two): fields, expressions, str(F),\n"
	"                         usym(E) ksym(E) (the symbol at address E), ntop(F),\n"
	"                         comm pid tid cpu uid probe;\n"
	"                         cgroup (its path), container, unit (systemd's);\n"
	"                         -e events also sym kstack ustack stack\n"
	"  --folded               -e --stack: print folded stacks (comm;f1;f2 count)\n"
	"  --flamegraph FILE.svg  -e --stack: write an interactive flame graph\n"
	"  --pprof FILE           --stack: write a pprof profile (gzip'd profile.proto)\n"
	"  --offcpu               time off the CPU (us) by comm and stack, from\n"
	"                         sched_switch to the thread's return, as offcputime\n"
	"      --state blocked|runnable|all  which waits (default all)\n"
	"      --min-block US, --max-block US  only waits this long\n"
	"  --latency START,END    histogram of START->END time, matched by tid or by\n"
	"  --latency kprobe:FUNC  ... or of a function's calls (also uprobe:PATH:SYM)\n"
	"  --match SF=EF          START's field SF equal to END's field EF\n"
	"  --unit ns|us|ms|s      latency unit (default us)\n"
	"  --top N                only the N largest; --interval SECS; --keep (do not\n"
	"                         reset each interval); --max-keys N (default 10240)\n"
	"  --listen [ADDR:]PORT   serve the aggregation at http://ADDR:PORT/metrics for\n"
	"                         Prometheus (ADDR default 127.0.0.1; PORT 0: any);\n"
	"                         by stack: profiles at /debug/pprof/profile?seconds=N\n"
	"  --metric NAME          the metric's name (default from probe and value)\n"
	"  --web-config FILE      TLS and basic auth for --listen, in exporter-toolkit's\n"
	"                         format (--web.config.file of Prometheus' exporters)\n"
	"\n"
	"Programs (bpftrace's; today the subset of one map, see pmtrace(8)):\n"
	"  FILE.bt, -e 'PROGRAM'  probes, /predicates/ and @map[KEYS] = count(),\n"
	"                         sum/avg/min/max/stats/hist(E), lhist(E,MIN,MAX,STEP)\n"
	"                         or @map[KEYS]++; BEGIN { printf(\"...\") }\n"
	"\n"
	"Counting, as perf stat:\n"
	"  --stat                 count each -e EVENT (comma lists allowed; default\n"
	"                         perf stat's set) and print the totals, or each\n"
	"                         --interval's; scaled when multiplexed\n"
	"  --counter EVENT        with --latency: the thread's own count of EVENT\n"
	"                         from START to END instead of time, e.g. page-faults\n"
	"                         per call of a function\n"
	"\n"
	"Targets (default: whole system):\n"
	"  -a, --all-cpus         trace the whole system (also while COMMAND runs)\n"
	"  -p, --pid PID          trace only the threads of process PID\n"
	"  -- COMMAND [ARGS...]   run COMMAND, trace it and its children, stop when it\n"
	"                         exits and exit with its status\n"
	"  -c, --command 'CMD ARGS'  the same, its words split at spaces; with a program\n"
	"                         (FILE.bt, -e 'PROGRAM') bpftrace's -c: the whole\n"
	"                         system while CMD runs\n"
	"  -C, --cpu LIST         only events on these CPUs (0-3,6)\n"
	"      --cgroup PATH      only the processes of cgroup PATH and of the cgroups\n"
	"                         under it (cgroup v2, e.g. /system.slice/nginx.service)\n"
	"\n"
	"Output:\n"
	"  -o, --output FILE      write events to FILE instead of stdout\n"
	"      --json             JSON Lines: one object per event\n"
	"      --raw              text: every field as name=value (not the kernel's print format)\n"
	"  -q, --quiet            no start/summary messages (losses are still reported)\n"
	"  -v, --verbose          libbpf and verifier messages (-vv: more)\n"
	"\n"
	"Run:\n"
	"  -d, --duration SECS    stop after SECS seconds\n"
	"      --buffer-pages N   perf ring pages per CPU, a power of two (default 256,\n"
	"                         1024 when stacks are streamed; more with many probes)\n"
	"  -l, --list [GLOB]      list tracepoints and PMU events; usdt:PATH[:GLOB]\n"
	"                         the USDT probes of a file, with their arguments\n"
	"      --info CAT:NAME    show a tracepoint's fields\n"
	"  -h, --help             this text\n"
	"  -V, --version          version\n";

/* One kind's lines: "  -S, --OPTION ARG" then its help from column 26
 * (two spaces at least), as the rest of --help is laid out. */
static void kind_help(struct pmt_buf *b, char s, const char *option, const char *arg,
		      const char *help)
{
	size_t at = b->len, gap = 0;

	if (s)
		pmt_buf__printf(b, "  -%c, --%s %s", s, option, arg);
	else
		pmt_buf__printf(b, "  --%s %s", option, arg);
	do {
		pmt_buf__putc(b, ' ');
		gap++;
	} while (b->len - at < 25 || gap < 2);
	pmt_buf__puts(b, help);
}

const char *pmt_usage(void)
{
	static struct pmt_buf b; /* made once, kept to the end */

	if (b.len)
		return b.p;
	pmt_buf__puts(&b, usage_head);
#define HELP(id, prefix, option, s, arg, needs, help, ret, prov) \
	kind_help(&b, s, option, arg, help);
	PMT_PROBE_KINDS(HELP)
#undef HELP
	pmt_buf__puts(&b, usage_tail);
	return pmt_buf__cstr(&b);
}
