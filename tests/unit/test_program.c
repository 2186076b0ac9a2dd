// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* bpftrace's programs read into the engine's terms (lang/program.h):
 * what each construct becomes, and every refusal's whole message. */
#include <errno.h>
#include <string.h>
#include "lang/program.h"
#include "util/strutil.h"
#include "test.h"

/* The program as one line: probes with their filters, then the map's
 * update. */
static const char *read_as(struct pmt_buf *b, const char *text)
{
	struct pmt_error err = {0};
	struct pmt_program p;
	size_t i;

	b->len = 0;
	if (pmt_program__parse(text, "t.bt", &p, &err)) {
		pmt_error__format(b, &err);
		return pmt_buf__cstr(b);
	}
	for (i = 0; i < p.nprobes; i++)
		pmt_buf__printf(b, "%s%s%s%s%s%s%s%s%s", i ? ", " : "",
				p.probes[i].role == PMT_PROG_START ? "START "
				: p.probes[i].role == PMT_PROG_END ? "END "
								   : "",
				p.probes[i].spec, p.probes[i].filter ? " /" : "",
				p.probes[i].filter ? p.probes[i].filter : "",
				p.probes[i].filter ? "/" : "", p.probes[i].printf ? " printf{" : "",
				p.probes[i].printf ? p.probes[i].printf : "",
				p.probes[i].printf ? "}" : "");
	for (i = 0; i < p.nprobes; i++)
		if (p.probes[i].every_ns)
			pmt_buf__printf(b, " (%zu every %llu ns)", i,
					(unsigned long long)p.probes[i].every_ns);
	for (i = 0; i < p.nprobes; i++) {
		const struct pmt_prog_probe *q = &p.probes[i];
		bool any = q->print_guard;
		int k;

		for (k = 0; k < q->nupd; k++)
			any = any || q->upd_guard[k];
		if (any)
			pmt_buf__printf(b, " if{%s}", q->print_guard ? q->print_guard : "");
		for (k = 0; any && k < q->nupd; k++)
			if (q->upd_guard[k])
				pmt_buf__printf(b, " agg if{%s}", q->upd_guard[k]);
		/* which maps, where there are several */
		for (k = 0; p.nmaps > 1 && k < q->nupd; k++)
			pmt_buf__printf(b, "%s%d%s", k ? "," : " upd{", q->upd[k],
					k + 1 == q->nupd ? "}" : "");
		/* an update of the block's own */
		for (k = 0; k < q->nupd; k++)
			if (q->upd_keys[k] || q->upd_value[k])
				pmt_buf__printf(b, " %zu: @%s[%s] (%s)", i, p.maps[q->upd[k]].name,
						q->upd_keys[k] ? q->upd_keys[k] : "",
						q->upd_value[k] ? q->upd_value[k] : "");
	}
	for (i = 0; i < p.nprobes; i++)
		if (p.probes[i].stmts)
			pmt_buf__printf(b, " [%zu%s: %s]", i, p.probes[i].stmts_only ? " only" : "",
					p.probes[i].stmts);
	for (i = 0; i < (size_t)p.nmaps; i++)
		pmt_buf__printf(b, " => @%s[%s] %s(%s)", p.maps[i].name,
				p.maps[i].keys ? p.maps[i].keys : "", p.maps[i].fn,
				p.maps[i].value ? p.maps[i].value : "");
	for (i = 0; i < p.nends; i++)
		pmt_buf__printf(b, p.ends[i].text ? " end '%s'" : " end print(@%s, %d)",
				p.ends[i].text ? p.ends[i].text : p.ends[i].map, p.ends[i].top);
	if (p.lat_map)
		pmt_buf__printf(b, " latency of @%s by %s in %s", p.lat_map,
				p.lat_match ? p.lat_match : "thread", p.lat_unit);
	if (p.begin)
		pmt_buf__printf(b, " begin '%s'", p.begin);
	if (p.cleared)
		pmt_buf__printf(b, " cleared%s", p.cleared);
	if (p.interval > 0)
		pmt_buf__printf(b, " every %g s%s%s%s%s%s%s", p.interval,
				p.exit_after ? " exit" : "", p.head ? " head '" : "",
				p.head ? p.head : "", p.head ? "'" : "", p.printed ? " print" : "",
				p.cleared_each ? " clear" : "");
	for (i = 0; i < p.ntables; i++) {
		pmt_buf__printf(b, " @%s%s{", p.tables[i].map, p.tables[i].keyed ? "[]" : "");
		for (size_t k = 0; k < p.tables[i].n; k++) {
			pmt_buf__printf(b, "%s%lld:", k ? "," : "", (long long)p.tables[i].keys[k]);
			if (p.tables[i].strs)
				pmt_buf__printf(b, "\"%s\"", p.tables[i].str[k]);
			else
				pmt_buf__printf(b, "%lld", (long long)p.tables[i].num[k]);
		}
		pmt_buf__putc(b, '}');
	}
	pmt_program__free(&p);
	return pmt_buf__cstr(b);
}

TEST(program_read_into_the_engine)
{
	struct pmt_buf b = {0};

	ASSERT_STREQ(read_as(&b, "tracepoint:syscalls:sys_enter_openat { @[comm] = count(); }"),
		     "tracepoint:syscalls:sys_enter_openat => @[comm] count()");
	/* one-letter providers, kfunc as kprobe, a list, a predicate with
	 * args-> (args.F: the field whatever its name) and retval in
	 * pmtrace's terms; ++ counts */
	ASSERT_STREQ(
		read_as(&b, "kr:vfs_read, fr:vfs_write /retval > 0 && args->fd == 1/\n"
			    "{ @bytes[comm, pid]++ }"),
		"kretprobe:vfs_read /retval > 0 && args.fd == 1/, kretprobe:vfs_write /retval > 0 && "
		"args.fd == 1/ => "
		"@bytes[comm,pid] count()");
	ASSERT_STREQ(
		read_as(&b, "#!/usr/bin/env bpftrace\n#include <linux/fs.h>\n"
			    "/* a comment\n over lines */\n"
			    "BEGIN { printf(\"Tracing... Hit Ctrl-C to end. 100%%\\n\"); }\n"
			    "// another\n"
			    "uprobe:/bin/bash:readline { @us = lhist(args.len, 0, 100, 10); }"),
		"uprobe:/bin/bash:readline => @us[] lhist(args.len:0:100:10) begin 'Tracing... "
		"Hit Ctrl-C to end. 100%\n'");
	/* the same update in several blocks, each with its predicate */
	ASSERT_STREQ(read_as(&b, "t:a:b /pid == 1/ { @h = hist(args->len); } "
				 "u:/x:y { @h = hist(args->len) }"),
		     "tracepoint:a:b /pid == 1/, uprobe:/x:y => @h[] hist(args.len)");
	/* BEGIN's column headers, as the tools print them; the BTF branch of
	 * a conditional (a struct for kernels without BTF skipped) */
	ASSERT_STREQ(
		read_as(&b,
			"#ifndef BPFTRACE_HAVE_BTF\n#include <linux/sched.h>\n"
			"struct cfs_rq { unsigned int nr_running; };\n#else\n"
			"#include <sys/socket.h>\n#endif\n"
			"BEGIN { printf(\"%-6s %-4s %5d|%x %c%%\\n\", \"PID\", \"COMM\", -42, 255, 65); }\n"
			"t:a:b { @x = count() }"),
		"tracepoint:a:b => @x[] count() begin 'PID    COMM   -42|ff A%\n'");
	ASSERT_STREQ(read_as(&b, "usdt:/bin/x:p:n { @s[str(arg0)] = sum(arg1 * 2); }"),
		     "usdt:/bin/x:p:n => @s[str(arg0)] sum(arg1 * 2)");
	/* printf in probes' blocks: each block's calls as --printf reads
	 * them, in pmtrace's terms (args->, retval) */
	ASSERT_STREQ(read_as(&b, "t:a:b /pid > 1/ { printf(\"%-6d %s\\n\", pid, "
				 "str(args->filename)); printf(\"%d\", args->flags & 3) }\n"
				 "kr:f { printf(\"%d\\n\", retval) }"),
		     "tracepoint:a:b /pid > 1/ printf{\"%-6d %s\\n\", pid, str(args.filename"
		     "); \"%d\", args.flags & 3}, kretprobe:f printf{\"%d\\n\", retval}");
	/* a start time read back: --latency, matched by thread or keys, in
	 * the unit its division says; its map's entries forgotten as
	 * --latency forgets them */
	ASSERT_STREQ(read_as(&b, "k:blk_start { @start[arg0] = nsecs; }\n"
				 "k:blk_done /@start[arg0]/ {\n"
				 "\t@usecs = hist((nsecs - @start[arg0]) / 1000);\n"
				 "\tdelete(@start[arg0]);\n}\nEND { clear(@start); }"),
		     "START kprobe:blk_start, END kprobe:blk_done => @usecs[] hist() latency of "
		     "@start by arg0=arg0 in us cleared start ");
	ASSERT_STREQ(
		read_as(&b,
			"t:a:b /args->fd == 3/ { @s[tid] = nsecs; }\n"
			"t:a:c /@s[tid]/ { @[comm] = lhist((nsecs - @s[tid]) / 1e6, 0, 10, 1); }"),
		"START tracepoint:a:b /args.fd == 3/, END tracepoint:a:c => @[comm] lhi"
		"st(latency:0:10:1) latency of @s by thread in ms");
	ASSERT_STREQ(
		read_as(&b, "u:/x:f { @s[tid] = nsecs } ur:/x:f { @ns = stats(nsecs - @s[tid]) }"),
		"START uprobe:/x:f, END uretprobe:/x:f => @ns[] stats() latency of @s by "
		"thread in ns");
	/* $variables: their values in their place, each in its block */
	ASSERT_STREQ(read_as(&b, "t:a:b { $r = args->ret; $fd = $r >= 0 ? $r : -1;\n"
				 "  printf(\"%d %d\\n\", $fd, $r); $r = 5; printf(\"%d\", $r); }"),
		     "tracepoint:a:b printf{\"%d %d\\n\", ((args.ret) >= 0 ? (args.ret) : -1"
		     "), (args.ret); \"%d\", (5)}");
	/* a $variable given a number inside an if: that number where the
	 * condition holds (ifs within ifs: all of theirs), what it was
	 * before elsewhere, 0 where it had none */
	ASSERT_STREQ(
		read_as(&b, "t:a:b { $x = 7; if (args->n > 5) { $x = args->n * 2;\n"
			    "  if (pid) { $y = 1; } } else { $x = 1; }\n"
			    "  printf(\"%d %d\\n\", $x, $y); }"),
		"tracepoint:a:b printf{\"%d %d\\n\", ((!(args.n > 5)) ? (1) : (((args.n > 5)) ? "
		"(args.n * 2) : (7))), ((((args.n > 5)) && (pid)) ? (1) : (0))}");
	/* a $variable given again inside the if that gave it: the value
	 * given there (tcpconnect.bt's $dport = bswap($dport)); a string
	 * given inside an if, chosen where printed */
	ASSERT_STREQ(read_as(&b, "t:a:b { if (pid) { $p = args->n; $p = bswap($p);\n"
				 "  $s = comm; if (tid) { $s = \"t\"; }\n"
				 "  printf(\"%d %s\\n\", $p, $s); } }"),
		     "tracepoint:a:b printf{if ((pid)) \"%d %s\\n\", (bswap((args.n))), "
		     "(((tid)) ? (\"t\") : (((pid)) ? (comm) : (0)))} if{((pid))}");
	/* a saved value read after the block saved or forgot it: what it
	 * holds then, each in its place (tcplife.bt's @birth) */
	ASSERT_STREQ(read_as(&b, "t:a:b { @z[tid] = pid; printf(\"%d\", @z[tid]); }"),
		     "tracepoint:a:b printf{\"%d\", ((pid))} [0: @z[tid] = pid]");
	ASSERT_STREQ(
		read_as(&b, "t:a:b { if (args->n) { @z[tid] = 5; } delete(@k[tid]);\n"
			    "  printf(\"%d %d\", @z[tid] + 1, @k[tid]); }\n"
			    "t:c:d { @k[tid] = 1; }"),
		"tracepoint:a:b printf{\"%d %d\", ((((args.n)) ? (5) : (@z[tid]))) + 1, ((0))}, "
		"tracepoint:c:d [0: if ((args.n)) @z[tid] = 5; delete(@k[tid])] [1 only: "
		"@k[tid] = 1]");
	/* a key of two values through a $variable holding a tuple,
	 * has_key() and delete(@MAP, KEY) (newer biosnoop.bt's), the
	 * deleted key's read after it what the delete left */
	ASSERT_STREQ(read_as(&b, "t:a:b { $k = (args->x, tid); @s[$k] = 1; }\n"
				 "t:c:d /has_key(@s, (args.x, tid))/ { $k = (args.x, tid);\n"
				 "  delete(@s, $k); printf(\"%d\", @s[$k]); }"),
		     "tracepoint:a:b, tracepoint:c:d /has_key(@s, (args.x, tid))/ printf{\"%d\", "
		     "((0))} [0 only: @s[((args.x, tid))] = 1] [1: delete(@s[((args.x, tid))])]");
	/* a map updated two ways: each block's keys and value its own
	 * (ssllatency.bt's @hist[@func_ssl[tid]], @hist[@func_crypto[tid]];
	 * lhist's bounds the map's) */
	ASSERT_STREQ(read_as(&b, "t:a:b { @h[pid] = lhist(args->x, 0, 10, 1); }\n"
				 "t:c:d { @h[tid] = lhist(args->y * 2, 0, 10, 1); }"),
		     "tracepoint:a:b, tracepoint:c:d 1: @h[tid] (args.y * 2) => @h[pid] "
		     "lhist(args.x:0:10:1)");
	/* join(): an array's strings on a line (execsnoop.bt's) */
	ASSERT_STREQ(read_as(&b, "t:a:b { printf(\"%-5d \", pid); join(args->argv); }\n"
				 "t:c:d { join(args->argv, \",\") }"),
		     "tracepoint:a:b printf{\"%-5d \", pid; \"%s\\n\", join(args.argv)}, "
		     "tracepoint:c:d printf{\"%s\\n\", join(args.argv, \",\")}");
	/* time(): the event's wall clock time, as strftime() prints it */
	ASSERT_STREQ(read_as(&b, "t:a:b { time(\"%H:%M \"); printf(\"%d\\n\", pid); time() }"),
		     "tracepoint:a:b printf{\"%s\", strftime(\"%H:%M \", nsecs); \"%d\\n\", pid; "
		     "\"%s\", strftime(\"%H:%M:%S\\n\", nsecs)}");
	/* cat("FILE"): the file's text, read when printed (oomkill.bt's) */
	ASSERT_STREQ(read_as(&b, "t:a:b { printf(\"load: \"); cat(\"/proc/loadavg\"); }"),
		     "tracepoint:a:b printf{\"load: \"; \"%s\", cat(\"/proc/loadavg\")}");
	ASSERT_STREQ(read_as(&b, "t:a:b { $k = comm; @x[$k, pid] = sum(args->n * 2); }"),
		     "tracepoint:a:b => @x[(comm),pid] sum(args.n * 2)");
	/* values saved, read back by a predicate, printf and an update,
	 * forgotten; END's clear: not printed at the end */
	ASSERT_STREQ(read_as(&b, "t:a:b { @f[tid] = args->filename; @n = args->n * 2 }\n"
				 "t:c:d /@f[tid]/ { printf(\"%s %d\\n\", str(@f[tid]), @n);\n"
				 "  delete(@f[tid]); }\nEND { clear(@f); }"),
		     "tracepoint:a:b, tracepoint:c:d /@f[tid]/ printf{\"%s %d\\n\", str(@f[t"
		     "id]), @n} [0 only: @f[tid] = args.filename; @n = args.n * 2] [1: delet"
		     "e(@f[tid])] cleared f ");
	ASSERT_STREQ(
		read_as(&b, "t:a:b { @s[tid] = arg0; }\n"
			    "t:c:d /@s[tid]/ { @[comm] = sum(@s[tid] + retval); delete(@s[tid]) }"),
		"tracepoint:a:b, tracepoint:c:d /@s[tid]/ [0 only: @s[tid] = arg0] "
		"[1: delete(@s[tid])] => @[comm] sum(@s[tid] + retval)");
	/* BEGIN's tables: strings printf shows, numbers saved from the start;
	 * keys sorted, the last of a key given twice */
	ASSERT_STREQ(read_as(&b, "BEGIN { @n[2] = \"two\"; @n[-1] = \"-\"; @n[2] = \"2\"; @k = 5; "
				 "@o[3] = -4; }\nt:a:b { printf(\"%s %d\\n\", @n[args->x], @k + "
				 "@o[3]); }"),
		     "tracepoint:a:b printf{\"%s %d\\n\", @n[args.x], @k + @o[3]} @n[]{-1:\""
		     "-\",2:\"2\"} @k{0:5} @o[]{3:-4}");
	/* ... through a $variable (tcpretrans.bt's $statestr) */
	ASSERT_STREQ(read_as(&b, "BEGIN { @n[2] = \"two\"; }\n"
				 "t:a:b { $s = @n[args->x]; printf(\"%s\\n\", $s); }"),
		     "tracepoint:a:b printf{\"%s\\n\", (@n[args.x])} @n[]{2:\"two\"}");
	/* if/else: statements guarded, the printf's and the update's
	 * conditions said apart; macros the tools name as numbers */
	ASSERT_STREQ(read_as(&b, "t:a:b { if (args->s == TASK_RUNNING) { @q[args->p] = nsecs; }\n"
				 "  $ns = @q[args->n];\n"
				 "  if ($ns) { @us = hist((nsecs - $ns) / 1000); }\n"
				 "  delete(@q[args->n]); }"),
		     "tracepoint:a:b if{} agg if{((@q[args.n]))} [0: if ((args.s == TASK_RUN"
		     "NING)) @q[args.p] = nsecs; delete(@q[args.n])] => @us[] hist((nsecs - "
		     "(@q[args.n])) / 1000)");
	ASSERT_STREQ(
		read_as(&b, "t:a:b { if (pid > 1) { printf(\"a\"); time(); @x[tid] = 1; }\n"
			    "  else if (pid) { @x[tid] = 2; } else { delete(@x[tid]); } }"),
		"tracepoint:a:b printf{if ((pid > 1)) \"a\"; if ((pid > 1)) \"%s\", "
		"strftime(\"%H:%M:%S\\n\", nsecs)} if{((pid > 1))} [0: if ((pid > 1)) @x[tid] = 1; if ((!(pid > 1)) && (pid)) "
		"@x[tid] = 2; if ((!(pid > 1)) && !(pid)) delete(@x[tid])]");
	/* printf calls under their conditions, the record streamed where one
	 * holds (or always, one printing under none) */
	ASSERT_STREQ(
		read_as(&b,
			"t:a:b { if (pid) { printf(\"a\"); } else { printf(\"b %d\", tid); } }"),
		"tracepoint:a:b printf{if ((pid)) \"a\"; if (!(pid)) \"b %d\", tid} "
		"if{((pid)) || (!(pid))}");
	ASSERT_STREQ(read_as(&b, "t:a:b { if (pid) { printf(\"a\"); } printf(\"c\"); }"),
		     "tracepoint:a:b printf{if ((pid)) \"a\"; \"c\"}");
	/* BEGIN alone: printed, then the run lasts as long as it is told
	 * (bpftrace's hello world) */
	ASSERT_STREQ(read_as(&b, "BEGIN { printf(\"hello world\\n\"); }"),
		     " begin 'hello world\n'");
	/* profile and interval blocks: a probe, the run's intervals */
	ASSERT_STREQ(read_as(&b, "profile:hz:99 /pid/ { @cpu = lhist(cpu, 0, 1000, 1); }\n"
				 "interval:ms:1500 { time(\"%H \"); print(@cpu); clear(@cpu); }\n"
				 "END { clear(@cpu); }"),
		     "profile:hz:99 /pid/ => @cpu[] lhist(cpu:0:1000:1) cleared cpu  every 1.5 s "
		     "head '%H ' print clear");
	/* an interval block that prints or computes: a probe every interval
	 * (loads.bt's shape), beside one pmtrace does itself */
	ASSERT_STREQ(
		read_as(&b, "interval:s:1 { $a = kaddr(\"avenrun\"); time(\"%H \");\n"
			    "  printf(\"%d\\n\", *($a + 8) >> 11); }\n"
			    "i:ms:250 /cpu == 0/ { printf(\"}{\"); }\n"
			    "interval:s:2 { exit(); }"),
		"interval:s:1 printf{\"%s\", strftime(\"%H \", nsecs); \"%d\\n\", *((kaddr(\"avenrun\")) + 8) >> 11}, "
		"interval:ms:250 /cpu == 0/ printf{\"}{\"} (0 every 1000000000 ns) (1 every "
		"250000000 ns) every 2 s exit");
	/* start times --latency does not measure: saved values (nsecs the
	 * time now) */
	ASSERT_STREQ(read_as(&b, "t:a:b, t:a:c { @s[tid] = nsecs; }\n"
				 "t:c:d /@s[tid]/ { @ = hist((nsecs - @s[tid]) * 2); }"),
		     "tracepoint:a:b, tracepoint:a:c, tracepoint:c:d /@s[tid]/ [0 only: @s[tid] = "
		     "nsecs] [1 only: @s[tid] = nsecs] => @[] hist((nsecs - @s[tid]) * 2)");
	ASSERT_STREQ(read_as(&b,
			     "u:/x:f { @s[tid] = nsecs; @a[tid] = arg0; }\n"
			     "ur:/x:f /@s[tid]/ { printf(\"%d %s\\n\", (nsecs - @s[tid]) / 1e6, "
			     "str(@a[tid])); delete(@s[tid]); delete(@a[tid]); }"),
		     "uprobe:/x:f, uretprobe:/x:f /@s[tid]/ printf{\"%d %s\\n\", (nsecs - @s[tid]) "
		     "/ 1e6, str(@a[tid])} [0 only: @s[tid] = nsecs; @a[tid] = arg0] [1: "
		     "delete(@s[tid]); delete(@a[tid])]");
	pmt_buf__free(&b);
}

/* --printf's text split: the formats decoded and joined, the arguments
 * as written; and what is refused. */
TEST(printf_split)
{
	struct pmt_printf_text t;
	struct pmt_error err = {0};
	struct pmt_buf b = {0};

	ASSERT_EQ(pmt_printf__split("\"%-6d %s\\t\", pid, f(a, b)[1]; \"|%x\\n\", x >> 2",
				    "--printf", &t, &err),
		  0);
	ASSERT_STREQ(t.fmt.p, "%-6d %s\t|%x\n");
	ASSERT_EQ(t.nargs, 3);
	ASSERT_STREQ(t.args[0], "pid");
	ASSERT_STREQ(t.args[1], "f(a, b)[1]");
	ASSERT_STREQ(t.args[2], "x >> 2");
	pmt_printf__free(&t);
	ASSERT_EQ(pmt_printf__split("\"hi\\n\"", "--printf", &t, &err), 0);
	ASSERT_STREQ(t.fmt.p, "hi\n");
	ASSERT_EQ(t.nargs, 0);
	pmt_printf__free(&t);
	ASSERT_EQ(pmt_printf__split("\"%d\", pid,", "--printf", &t, &err), -EINVAL);
	pmt_error__format(&b, &err);
	ASSERT_STREQ(pmt_buf__cstr(&b), "--printf: expected an argument\n"
					"  \"%d\", pid,\n"
					"            ^\n");
	pmt_error__clear(&err);
	b.len = 0;
	ASSERT_EQ(pmt_printf__split("\"%d\" pid", "--printf", &t, &err), -EINVAL);
	pmt_error__format(&b, &err);
	ASSERT_STREQ(pmt_buf__cstr(&b), "--printf: expected ',' or the end\n"
					"  \"%d\" pid\n"
					"       ^~~\n");
	pmt_buf__free(&b);
}

static const struct {
	const char *text, *want;
} refusals[] = {
	{"t:a:b { cat(\"/proc/%d/stat\", pid); }",
	 "t.bt:1: cat() of a formatted name (cat(\"FORMAT\", ARGS)) is not supported yet: "
	 "cat(\"FILE\")\n"
	 "  t:a:b { cat(\"/proc/%d/stat\", pid); }\n"
	 "          ^~~~~~~~~~~~~~~~~~~~\n"},
	{"t:a:b { cat(path); }", "t.bt:1: expected cat(\"FILE\")\n"
				 "  t:a:b { cat(path); }\n"
				 "          ^~~\n"},
	{"t:a:b { join(args->argv, \",\", 3); }",
	 "t.bt:1: join() takes an array and, maybe, a delimiter string\n"
	 "  t:a:b { join(args->argv, \",\", 3); }\n"
	 "          ^~~~~~~~~~~~~~~~~~~~~~~~\n"},
	{"tracepoint:a:b {\n\tunroll (2) { @ = count(); }\n}",
	 "t.bt:2: 'unroll' is not supported yet: a program's blocks printf, or update one map "
	 "with count(), sum(), avg(), min(), max(), stats(), hist() or lhist() (and BEGIN "
	 "prints literals)\n"
	 "   unroll (2) { @ = count(); }\n"
	 "   ^~~~~~\n"},
	{"t:a:b { if (pid { printf(\"a\"); } }",
	 "t.bt:1: if's condition is not closed: ')' is missing\n"
	 "  t:a:b { if (pid { printf(\"a\"); } }\n"
	 "          ^~\n"},
	{"t:a:b { $x = 1; printf(\"a\"); } t:c:d { printf(\"%d\", $x); }",
	 "t.bt:1: $x has no value here: a variable is assigned in its block before it is used\n"
	 "  t:a:b { $x = 1; printf(\"a\"); } t:c:d { printf(\"%d\", $x); }\n"
	 "                                                      ^~\n"},
	{"t:a:b { $x = ; }", "t.bt:1: expected a value: $VAR = VALUE\n"
			     "  t:a:b { $x = ; }\n"
			     "               ^\n"},
	{"t:a:b { printf(pid); }", "t.bt:1: expected a format in double quotes: '\"%d %s\\n\", "
				   "pid, comm'\n"
				   "  t:a:b { printf(pid); }\n"
				   "          ^~~~~~~~~~~\n"},
	{"t:a:b /@q[tid]/ {\n  @z[tid] = pid;\n}",
	 "t.bt:1: @q is read but no probe saves a value in it (@q[KEY] = VALUE)\n"
	 "  t:a:b /@q[tid]/ {\n"
	 "         ^~\n"},
	{"t:a:b { @z[tid] = pid; @n = count(); }\nt:c:d { printf(\"%d\", @n); }",
	 "t.bt:1: @n is an aggregation: it is printed at the end, not read by the probes, for "
	 "now\n"
	 "  t:a:b { @z[tid] = pid; @n = count(); }\n"
	 "                         ^~\n"},
	{"BEGIN { @n[1] = \"one\"; }\nt:a:b /@n[pid]/ { printf(\"x\"); }",
	 "t.bt:1: @n holds strings: printf shows them, @n[KEY] as an argument of its own, for "
	 "now\n"
	 "  BEGIN { @n[1] = \"one\"; }\n"
	 "          ^~\n"},
	{"BEGIN { @n[1] = \"one\"; }\nt:a:b { printf(\"%d\", @n[pid] + 1); }",
	 "t.bt:1: @n holds strings: printf shows them, @n[KEY] as an argument of its own, for "
	 "now\n"
	 "  BEGIN { @n[1] = \"one\"; }\n"
	 "          ^~\n"},
	{"BEGIN { @n[1] = \"one\"; @n[2] = 2; }\nt:a:b { printf(\"x\"); }",
	 "t.bt:1: @n holds strings: not a number\n"
	 "  BEGIN { @n[1] = \"one\"; @n[2] = 2; }\n"
	 "                         ^~\n"},
	{"BEGIN { @n[pid] = 1; }\nt:a:b { printf(\"x\"); }",
	 "t.bt:1: BEGIN's maps take a number as the key here\n"
	 "  BEGIN { @n[pid] = 1; }\n"
	 "             ^~~\n"},
	{"config = { max_strlen = 64; }\nt:a:b { @ = count(); }",
	 "t.bt:1: config: pmtrace takes missing_probes (ignore, warn or error), not max_strlen\n"
	 "  config = { max_strlen = 64; }\n"
	 "             ^~~~~~~~~~\n"},
	{"config = { missing_probes = skip; }\nt:a:b { @ = count(); }",
	 "t.bt:1: config: missing_probes is ignore, warn or error\n"
	 "  config = { missing_probes = skip; }\n"
	 "                              ^~~~\n"},
	{"t:a:b { @a = count(); }\nt:c:d { @a = sum(args->x); }",
	 "t.bt:2: @a is sum() here and count() at line 1: one function a map\n"
	 "  t:c:d { @a = sum(args->x); }\n"
	 "          ^\n"},
	{"t:a:b { @a[pid] = count(); }\nt:c:d { @a[pid, tid] = count(); }",
	 "t.bt:2: @a has 2 keys here and 1 at line 1\n"
	 "  t:c:d { @a[pid, tid] = count(); }\n"
	 "          ^\n"},
	{"t:a:b { @a = lhist(pid, 0, 10, 1); }\nt:c:d { @a = lhist(tid, 0, 20, 1); }",
	 "t.bt:2: @a's lhist() has other bounds at line 1 (0:10:1 there)\n"
	 "  t:c:d { @a = lhist(tid, 0, 20, 1); }\n"
	 "          ^\n"},
	{"t:a:b { @a = count(); @a = count(); }",
	 "t.bt:1: @a is updated twice in one block, for now\n"
	 "  t:a:b { @a = count(); @a = count(); }\n"
	 "                        ^\n"},
	{"t:a:b { @a = count(); }\nEND { print(@b); }",
	 "t.bt:2: END prints a map the probes update (print(@b)), for now\n"
	 "  END { print(@b); }\n"
	 "              ^\n"},
	{"t:a:b { @a = count(); }\nEND { print(@a, 0); }",
	 "t.bt:2: expected print(@MAP) or print(@MAP, N): N a number of entries above 0\n"
	 "  END { print(@a, 0); }\n"
	 "                  ^\n"},
	{"hardware:cache-misses:1000 { @[kstack] = count(); }",
	 "t.bt:1: probe 'hardware:cache-misses:1000' is not supported yet: expected tracepoint:, "
	 "kprobe:, kretprobe:, kfunc:, kretfunc:, uprobe:, uretprobe:, usdt:, rawtracepoint:, "
	 "profile: or interval: and what it names\n"
	 "  hardware:cache-misses:1000 { @[kstack] = count(); }\n"
	 "  ^~~~~~~~~~~~~~~~~~~~~~~~~~\n"},
	{"interval:s:1 { @ = count(); }",
	 "t.bt:1: an interval's block takes exit(), or time(), print(@MAP) and clear(@MAP), for "
	 "now\n"
	 "  interval:s:1 { @ = count(); }\n"
	 "                 ^\n"},
	{"interval:s:1, t:a:b { printf(\"x\"); }",
	 "t.bt:1: an interval probe stands alone, for now\n"
	 "  interval:s:1, t:a:b { printf(\"x\"); }\n"
	 "  ^~~~~~~~~~~~\n"},
	{"interval:s:1 /pid/ { exit(); }",
	 "t.bt:1: an interval block of exit(), time(), print() and clear() takes no predicate, "
	 "for now\n"
	 "  interval:s:1 /pid/ { exit(); }\n"
	 "  ^~~~~~~~~~~~\n"},
	{"interval:m:1 { exit(); }", "t.bt:1: expected interval:s:N or interval:ms:N\n"
				     "  interval:m:1 { exit(); }\n"
				     "  ^~~~~~~~~~~~\n"},
	{"t:a:b /pid == 1 { @ = count(); }",
	 "t.bt:1: a predicate is /CONDITION/ before the block's '{': its closing '/' is missing\n"
	 "  t:a:b /pid == 1 { @ = count(); }\n"
	 "        ^\n"},
	{"t:a:b { @x[comm]++ }\nt:c:d { @x[comm] = count(); }",
	 "t.bt:2: @x is counted with ++ and with count(): bpftrace refuses the mix (an integer "
	 "map and a count)\n"
	 "  t:c:d { @x[comm] = count(); }\n"
	 "          ^\n"},
	{"t:a:b { @x = hist(); }",
	 "t.bt:1: hist() takes one argument\n  t:a:b { @x = hist(); }\n               ^~~~~~\n"},
	{"END { clear(@x); }\nt:a:b { @x = count() }",
	 "t.bt:1: END clears the start time, saved values or the map updated before it, for "
	 "now\n"
	 "  END { clear(@x); }\n"
	 "              ^~\n"},
	{"#define X 1\nt:a:b { @x = count() }",
	 "t.bt:1: '#define' is not supported: of the preprocessor's lines #include is read "
	 "(kernel types come from BTF) and #ifndef/#ifdef BPFTRACE_HAVE_BTF, #else, #endif\n"
	 "  #define X 1\n"
	 "  ^~~~~~~\n"},
	{"#ifndef BPFTRACE_HAVE_BTF\nt:a:b { @x = count() }",
	 "t.bt:2: a conditional is not closed: #endif is missing\n"
	 "  t:a:b { @x = count() }\n"
	 "                       ^\n"},
	{"BEGIN { printf(\"%-6s %d\\n\", \"PID\"); } t:a:b { @x = count() }",
	 "t.bt:1: printf has more conversions than arguments\n"
	 "  BEGIN { printf(\"%-6s %d\\n\", \"PID\"); } t:a:b { @x = count() }\n"
	 "                 ^~~~~~~~~~~\n"},
	{"BEGIN { printf(\"%d\\n\", \"PID\"); } t:a:b { @x = count() }",
	 "t.bt:1: printf's argument 1 is a string, its %d a number\n"
	 "  BEGIN { printf(\"%d\\n\", \"PID\"); } t:a:b { @x = count() }\n"
	 "                 ^~~~~~\n"},
	{"t:a:b { @x = count()", "t.bt:1: a block is not closed: '}' is missing\n"
				 "  t:a:b { @x = count()\n"
				 "                      ^\n"},
	{"t:a:b { @x = count(); } /* open", "t.bt:1: a comment opened here is not closed: '*/' "
					    "is missing\n"
					    "  t:a:b { @x = count(); } /* open\n"
					    "                          ^~\n"},
	{"// nothing\n", "t.bt:2: the program has no probe: nothing to trace\n"
			 "  \n"
			 "  ^\n"},
	{"t:a:b { @x[comm] = count(); exit(); }",
	 "t.bt:1: 'exit' is not supported yet: a program's blocks printf, or update one map with "
	 "count(), sum(), avg(), min(), max(), stats(), hist() or lhist() (and BEGIN prints "
	 "literals)\n"
	 "  t:a:b { @x[comm] = count(); exit(); }\n"
	 "                              ^~~~\n"},
	{"t:a:b { @x[comm] = count(\"a); }",
	 "t.bt:1: unterminated string: a closing \" is missing\n"
	 "  t:a:b { @x[comm] = count(\"a); }\n"
	 "                           ^~~~~~\n"},
};

TEST(program_several_maps)
{
	struct pmt_buf b = {0};

	/* syscount's shape: one block, two maps; END prints each's top */
	ASSERT_STREQ(
		read_as(&b, "t:raw_syscalls:sys_enter { @syscall[args->id] = count(); "
			    "@process[comm] = count(); }\n"
			    "END { printf(\"\\nTop 10 syscalls IDs:\\n\"); print(@syscall, 10); "
			    "clear(@syscall); printf(\"\\nTop 10 processes:\\n\"); "
			    "print(@process, 10); clear(@process); }"),
		"tracepoint:raw_syscalls:sys_enter upd{0,1} => @syscall[args.id] count() => "
		"@process[comm] count() end '\nTop 10 syscalls IDs:\n' end print(@syscall, 10) "
		"end '\nTop 10 processes:\n' end print(@process, 10) cleared syscall process ");
	/* maps under their own conditions; blocks updating different maps */
	ASSERT_STREQ(
		read_as(&b, "t:a:b { if (args->x > 1) { @h = hist(args->x); @s = "
			    "stats(args->x); } else { @f = hist(args->x); } }\n"
			    "t:c:d { @s = stats(args->x); }"),
		"tracepoint:a:b, tracepoint:c:d if{} agg if{(args.x > 1)} agg if{(args.x > 1)} agg "
		"if{!(args.x > 1)} upd{0,1,2} upd{1} => @h[] hist(args.x) => @s[] stats(args.x) => @f[] "
		"hist(args.x)");
	/* a block printing and updating maps; another block updating one */
	ASSERT_STREQ(read_as(&b, "t:a:b { @h[comm] = hist(args->x); if (args->x > 9) { "
				 "time(\"%H \"); printf(\"big\\n\"); } }\nt:c:d { @h[comm] = "
				 "hist(args->x); }"),
		     "tracepoint:a:b printf{if ((args.x > 9)) \"%s\", strftime(\"%H \", nsecs); if "
		     "((args.x > 9)) \"big\\n\"}, tracepoint:c:d if{((args.x > 9))} => @h[comm] "
		     "hist(args.x)");
	pmt_buf__free(&b);
}

/* A probe's func or probe saved by one block and printed by another
 * (sslsnoop.bt's @func_ssl[tid] = func): the maps that save them named */
TEST(program_saves_probe_names)
{
	struct pmt_program p;
	struct pmt_error err = {0};

	ASSERT_EQ(pmt_program__parse(
			  "u:/x:f, u:/x:g { @f[tid] = func; @p[tid] = probe; @n[tid] = 1; }\n"
			  "ur:/x:f /@f[tid]/ { printf(\"%s %s %d\\n\", @f[tid], @p[tid], "
			  "@n[tid]); delete(@f[tid]); }",
			  "t.bt", &p, &err),
		  0);
	ASSERT_EQ(pmt_program__names_probe(&p, "f"), 'f');
	ASSERT_EQ(pmt_program__names_probe(&p, "p"), 'p');
	ASSERT_EQ(pmt_program__names_probe(&p, "n"), 0);
	ASSERT_EQ(pmt_program__names_probe(&p, "x"), 0);
	pmt_program__free(&p);
}

/* newer bpftrace's config = { missing_probes = ...; }: what a probe of a
 * list that is not there makes (a program without one: a warning) */
TEST(program_config)
{
	static const struct {
		const char *text;
		int missing;
	} ok[] = {
		{"t:a:b { @ = count(); }", PMT_MISSING_WARN},
		{"config = {\n  missing_probes = ignore;\n}\nt:a:b { @ = count(); }",
		 PMT_MISSING_IGNORE},
		{"config={missing_probes=error}t:a:b { @ = count(); }", PMT_MISSING_ERROR},
		{"config = { missing_probes = warn; } t:a:b { @ = count(); }", PMT_MISSING_WARN},
	};
	struct pmt_program p;
	struct pmt_error err = {0};
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		ASSERT_EQ(pmt_program__parse(ok[i].text, "t.bt", &p, &err), 0);
		ASSERT_EQ((int)p.missing_probes, ok[i].missing);
		pmt_program__free(&p);
	}
}

/* kernel function probes by bpftrace's name for them: kprobe: and
 * kretprobe: are kprobes there, kfunc:, kretfunc:, fentry: and fexit:
 * trampolines (the session attaches each as bpftrace does) */
TEST(program_kprobes_and_kfuncs)
{
	static const struct {
		const char *text;
		bool kprobes, kfuncs;
	} cases[] = {
		{"kprobe:vfs_read, kr:vfs_write { @ = count(); }", true, false},
		{"k:vfs_read { @ = count(); }", true, false},
		{"kretprobe:vfs_read { @ = count(); }", true, false},
		{"kfunc:vfs_read { @ = count(); }", false, true},
		{"kretfunc:vfs_read { @ = count(); }", false, true},
		{"fentry:vfs_read, fr:vfs_write { @ = count(); }", false, true},
		{"kprobe:vfs_read, fexit:vfs_write { @ = count(); }", true, true},
		{"t:a:b { @ = count(); }", false, false},
	};
	struct pmt_program p;
	struct pmt_error err = {0};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ASSERT_EQ(pmt_program__parse(cases[i].text, "t.bt", &p, &err), 0);
		ASSERT_EQ(p.kprobes, cases[i].kprobes);
		ASSERT_EQ(p.kfuncs, cases[i].kfuncs);
		pmt_program__free(&p);
	}
}

TEST(program_refusals)
{
	struct pmt_buf b = {0};
	size_t i;

	for (i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++)
		if (strcmp(read_as(&b, refusals[i].text), refusals[i].want))
			FAIL_AT("'%s':\n    got:      %s\n    expected: %s", refusals[i].text, b.p,
				refusals[i].want);
	pmt_buf__free(&b);
}
