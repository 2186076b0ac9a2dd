// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include "filter/expr.h"
#include "filter/filter.h"
#include "filter/operand.h"
#include "test.h"

/* the expressions filters compile (programs of the whole test run) */
static struct pmt_exprs exprs;

/* The compiled program as text, or the formatted error. */
static const char *compile(struct pmt_buf *b, const char *expr, const struct pmt_format *fmt)
{
	struct pmt_filter f;
	struct pmt_error err = {0};

	b->len = 0;
	if (pmt_filter__compile(expr, fmt, "sched:sched_switch", &exprs, &f, &err))
		pmt_error__format(b, &err);
	else
		pmt_filter__dump(b, &f);
	return pmt_buf__cstr(b);
}

/*
 * A reference walk of a compiled program in userspace, the same algorithm
 * as bpf/filter.bpf.h, over a record and fixed common values.
 */
struct env {
	const uint8_t *rec;
	uint32_t pid, tid, cpu, uid, gid;
	uint64_t cgroup;
	const char *comm;
	uint64_t slots[PMT_XSLOTS];
};

static bool match(const struct pmt_filter *f, uint64_t pat, const char *s, size_t len)
{
	const struct pmt_pattern *p = &f->pats[pat];
	uint64_t d = 1;
	size_t i;

	for (i = 0; i < len && i < PMT_STR_MAX && s[i]; i++) {
		d = ((d << 1) & p->mask[f->cls[(uint8_t)s[i]]]) | (d & p->star);
		if (!d)
			return false;
	}
	return d & p->final;
}

/* An operand's value (an expression's: its slot) */
static uint64_t value_of(const struct pmt_operand *o, void *arg)
{
	const struct env *env = arg;
	bool sign = o->flags & PMT_FFLAG_SIGNED;

	switch (o->src) {
	case PMT_FSRC_FIELD: return pmt_load_int(env->rec + o->off, o->size, sign);
	case PMT_FSRC_PID: return env->pid;
	case PMT_FSRC_TID: return env->tid;
	case PMT_FSRC_CPU: return env->cpu;
	case PMT_FSRC_UID: return env->uid;
	case PMT_FSRC_GID: return env->gid;
	case PMT_FSRC_CGROUP: return env->cgroup;
	case PMT_FSRC_EXPR: return env->slots[o->off % PMT_XSLOTS];
	}
	return 0;
}

static bool eval(const struct pmt_filter *f, struct env *env)
{
	int idx = f->start, steps;

	/* the expressions first, as bpf/filter.bpf.h runs them */
	if (f->xprog != PMT_XPROG_NONE)
		pmt_expr__eval(&exprs.v[f->xprog], value_of, env, env->slots);
	for (steps = 0; steps < PMT_FILTER_MAX && idx < PMT_FILTER_MAX; steps++) {
		const struct pmt_filter_entry *e = &f->e[idx];
		uint64_t v = 0;
		bool r = false, sign = e->o.flags & PMT_FFLAG_SIGNED;

		if (e->op == PMT_FOP_MATCH) {
			const char *s = "";
			size_t len = 0;
			uint32_t w;

			if (e->o.src == PMT_FSRC_COMM)
				s = env->comm, len = 16;
			else if (e->o.src == PMT_FSRC_FIELD_STR)
				s = (const char *)env->rec + e->o.off, len = e->o.size;
			else if (e->o.src == PMT_FSRC_FIELD_DSTR) {
				memcpy(&w, env->rec + e->o.off, 4);
				s = (const char *)env->rec + (w & 0xffff), len = w >> 16;
			}
			r = match(f, e->val, s, len);
		} else {
			v = value_of(&e->o, env);
			switch (e->op) {
			case PMT_FOP_EQ: r = v == e->val; break;
			case PMT_FOP_LT:
				r = sign ? (int64_t)v < (int64_t)e->val : v < e->val;
				break;
			case PMT_FOP_LE:
				r = sign ? (int64_t)v <= (int64_t)e->val : v <= e->val;
				break;
			case PMT_FOP_BAND: r = v & e->val; break;
			}
		}
		idx = r ? e->t : e->f;
	}
	return idx == PMT_FILTER_ACCEPT;
}

/* A sched_switch record: prev_comm, prev_pid, prev_state, next_comm, next_pid. */
static void switch_rec(uint8_t *rec, const char *prev, int32_t ppid, int64_t state,
		       const char *nextc, int32_t npid)
{
	memset(rec, 0, 64);
	strncpy((char *)rec + 8, prev, 16);
	memcpy(rec + 24, &ppid, 4);
	memcpy(rec + 32, &state, 8);
	strncpy((char *)rec + 40, nextc, 16);
	memcpy(rec + 56, &npid, 4);
}

static int check(const char *expr, const struct pmt_format *fmt, struct env *env)
{
	struct pmt_filter f;
	struct pmt_error err = {0};

	if (pmt_filter__compile(expr, fmt, "t:t", &exprs, &f, &err)) {
		fprintf(stderr, "  compile '%s': %s\n", expr, err.msg);
		return -1;
	}
	return eval(&f, env);
}

TEST(filter_programs)
{
	struct pmt_format *fmt = pmt_test__format("sched_switch.format");
	struct pmt_buf b = {0};

	ASSERT_TRUE(fmt);
	/* tracepoint fields in the first 128 bytes: loaded from the context,
	 * no copy of the record */
	ASSERT_STREQ(compile(&b, "prev_pid == 0", fmt),
		     "start 0\n0: field@24:4s ctx == 0 ? accept : reject\n");
	/* && binds tighter than ||; ! swaps edges; != too */
	ASSERT_STREQ(compile(&b, "pid == 1 || !(tid != 2) && cpu < 3", fmt),
		     "start 2\n"
		     "0: cpu < 3 ? accept : reject\n"
		     "1: tid == 2 ? 0 : reject\n"
		     "2: pid == 1 ? accept : 1\n");
	/* >, >= are <=, < with swapped edges; & is a bit test; literal first mirrors */
	ASSERT_STREQ(
		compile(&b,
			"prev_state > 1 && prev_state >= -4 && prev_state & 0x40 && 100 > next_prio",
			fmt),
		"start 3\n"
		"0: field@60:4s ctx < 100 ? accept : reject\n"
		"1: field@32:8s ctx & 64 ? 0 : reject\n"
		"2: field@32:8s ctx < -4 ? reject : 1\n"
		"3: field@32:8s ctx <= 1 ? reject : 2\n");
	ASSERT_STREQ(compile(&b, "next_comm == \"bash\" || comm ~ \"k*\" || comm != \"bash\"", fmt),
		     "start 2 record\n"
		     "0: comm ~ pat0 ? reject : accept\n"
		     "1: comm ~ pat1 ? accept : 0\n"
		     "2: field_str@40:16 ~ pat0 ? accept : 1\n");
	/* bare field: non-zero; size suffix */
	ASSERT_STREQ(
		compile(&b, "prev_state && cgroup == 4k", fmt),
		"start 1\n0: cgroup == 4096 ? accept : reject\n1: field@32:8s ctx == 0 ? reject : 0\n");
	pmt_format__free(fmt);
	/* beyond 128 bytes, unaligned, or a record a program builds (PMU,
	 * calls): from the copy */
	fmt = pmt_format__new("x", 200);
	ASSERT_TRUE(fmt && pmt_format__add(fmt, "far", "u32", 160, 4, PMT_F_INT) &&
		    pmt_format__add(fmt, "odd", "u32", 10, 4, PMT_F_INT));
	ASSERT_STREQ(compile(&b, "far == 1", fmt),
		     "start 0 record\n0: field@160:4 == 1 ? accept : reject\n");
	fmt->raw_ctx = true;
	ASSERT_STREQ(
		compile(&b, "far == 1 || odd == 2", fmt),
		"start 1 record\n0: field@10:4 == 2 ? accept : reject\n1: field@160:4 == 1 ? accept : 0\n");
	ASSERT_STREQ(compile(&b, "far == 1", fmt),
		     "start 0 record\n0: field@160:4 == 1 ? accept : reject\n");
	pmt_buf__free(&b);
	pmt_format__free(fmt);
}

/* Each bad expression's whole diagnostic: message, the expression quoted
 * with a caret under the bad token, and hints. */
static const struct {
	const char *expr, *want;
} diagnostics[] = {
	{"prev_pid = 0", "--filter: '=' is not an operator: did you mean '=='?\n"
			 "  prev_pid = 0\n"
			 "           ^\n"},
	{"next_comm == 5",
	 "--filter: 'next_comm' is a string, compared with a number; use a \"string\"\n"
	 "  next_comm == 5\n"
	 "               ^\n"},
	{"prev_pid == \"x\" && 1",
	 "--filter: 'prev_pid' is a number, compared with a string\n"
	 "  prev_pid == \"x\" && 1\n"
	 "              ^~~\n"
	 "hint: sched:sched_switch has: prev_comm prev_pid prev_prio prev_state next_comm "
	 "next_pid next_prio; every probe has: pid tid comm cpu uid gid cgroup\n"},
	{"(pid == 1 && nxt_pid > 3",
	 "--filter: unknown field 'nxt_pid' for sched:sched_switch\n"
	 "  (pid == 1 && nxt_pid > 3\n"
	 "               ^~~~~~~\n"
	 "hint: did you mean next_pid? sched:sched_switch has: prev_comm prev_pid prev_prio "
	 "prev_state next_comm next_pid next_prio; every probe has: pid tid comm cpu uid gid cgroup\n"},
	{"(pid == 1", "--filter: unbalanced '(': a ')' is missing\n  (pid == 1\n  ^\n"},
	{"pid == 1)", "--filter: unbalanced ')'\n  pid == 1)\n          ^\n"},
	{"pid == 1 pid",
	 "--filter: expected && or || or the end of the expression\n  pid == 1 pid\n           ^~~\n"},
	{"prev_pid & 3 == 1",
	 "--filter: expected && or || or the end of the expression\n  prev_pid & 3 == 1\n"
	 "               ^~\n"
	 "hint: '&' is the bit test (F & MASK holds where a bit is set): to compare what it "
	 "computes, write (F & MASK) == N\n"},
	/* an '&' in a string is not the bit test */
	{"comm == \"a&b\" == 1",
	 "--filter: expected && or || or the end of the expression\n  comm == \"a&b\" == 1\n"
	 "                ^~\n"},
	/* '|' is an operand's (an expression's), not the filter's */
	{"pid | 1 == 2 && tid == 1 | 2", "--filter: '|' is not an operator: did you mean '||'?\n"
					 "  pid | 1 == 2 && tid == 1 | 2\n"
					 "                           ^\n"},
	{"pid ==", "--filter: expected a number or a \"string\"\n  pid ==\n        ^\n"},
	{"prev_pid == 3000000000",
	 "--filter: prev_pid is a signed 32-bit field: 3000000000 is out of range -2147483648..2147483647\n"
	 "  prev_pid == 3000000000\n"
	 "              ^~~~~~~~~~\n"},
	{"pid == -1",
	 "--filter: pid is an unsigned 32-bit field: -1 is out of range 0..4294967295\n"
	 "  pid == -1\n"
	 "         ^~\n"},
	{"comm < \"a\"",
	 "--filter: 'comm' is a string: only ==, != and ~ apply to strings\n  comm < \"a\"\n  ^~~~\n"},
	{"pid ~ \"1*\"",
	 "--filter: 'pid' is a number: ~ (glob match) applies to strings\n  pid ~ \"1*\"\n  ^~~\n"},
	{"comm == \"ab",
	 "--filter: unterminated string: a closing \" is missing\n  comm == \"ab\n          ^~~\n"},
	{"comm == 'x'",
	 "--filter: strings take double quotes: \"...\"\n  comm == 'x'\n          ^\n"},
	{"pid == 12q",
	 "--filter: bad number: expected digits, 0x hex, or a k/M/G suffix\n  pid == 12q\n         ^~~\n"},
	{"", "--filter: empty filter: expected an expression such as pid == 1234\n  \n  ^\n"},
	{"comm",
	 "--filter: 'comm' is a string: compare it with == \"...\" or ~ \"glob*\"\n  comm\n  ^~~~\n"},
	{"comm ~ \"[z-a]\"",
	 "--filter: bad range 'z-a' in [...]: it must ascend\n  comm ~ \"[z-a]\"\n  ^~~~~~~~~~~~~~\n"},
};

TEST(filter_diagnostics)
{
	struct pmt_format *fmt = pmt_test__format("sched_switch.format");
	struct pmt_buf b = {0};
	size_t i;

	ASSERT_TRUE(fmt);
	for (i = 0; i < sizeof(diagnostics) / sizeof(diagnostics[0]); i++)
		if (strcmp(compile(&b, diagnostics[i].expr, fmt), diagnostics[i].want))
			FAIL_AT("'%s':\n    got:      %s\n    expected: %s", diagnostics[i].expr,
				b.p, diagnostics[i].want);
	pmt_buf__free(&b);
	pmt_format__free(fmt);
}

TEST(filter_too_large)
{
	struct pmt_buf b = {0}, e = {0};
	int i;

	for (i = 0; i < PMT_FILTER_MAX + 1; i++)
		pmt_buf__printf(&e, "%spid == %d", i ? " || " : "", i);
	compile(&b, pmt_buf__cstr(&e), NULL);
	ASSERT_TRUE(strstr(b.p, "--filter: filter too large: at most 32 comparisons\n") == b.p);
	e.len = 0;
	for (i = 0; i < PMT_FILTER_PATS + 1; i++)
		pmt_buf__printf(&e, "%scomm == \"c%d\"", i ? " || " : "", i);
	compile(&b, pmt_buf__cstr(&e), NULL);
	ASSERT_TRUE(strstr(b.p, "more than 4 string comparisons") != NULL);
	compile(&b, "comm == \"0123456789012345678901234567890123456789012345678901234567890123\"",
		NULL);
	ASSERT_TRUE(strstr(b.p, "string too long for a filter: at most 63 characters") != NULL);
	pmt_buf__free(&b);
	pmt_buf__free(&e);
}

/* Verdicts on a sched_switch record of bash (pid 42) switching to
 * kworker/1:2 (pid -1), walked as the kernel walks the program. */
static const struct {
	const char *expr;
	int pass;
} verdicts[] = {
	{"prev_pid == 42 && next_pid == -1", 1},
	{"next_pid < 0 && next_pid >= -1 && next_pid > -2 && next_pid <= -1", 1},
	{"prev_state & 0x40 && !(prev_state & 2)", 1},
	{"prev_state & 2", 0},
	{"uid == 1000 && gid == 100 && cpu == 1 && tid == 43 && cgroup == 7", 1},
	{"pid != 42 || uid == 0", 0},
	{"pid != 42 || (uid == 0 || comm == \"bash\")", 1},
	/* strings: exact, not prefix */
	{"comm == \"bash\"", 1},
	{"comm == \"bas\"", 0},
	{"comm == \"bashx\"", 0},
	{"next_comm == \"kworker/1:2\"", 1},
	/* globs */
	{"next_comm ~ \"kworker/*\"", 1},
	{"next_comm ~ \"*:2\"", 1},
	{"next_comm ~ \"*work*\"", 1},
	{"next_comm ~ \"kworker/?:[0-9]\"", 1},
	{"next_comm ~ \"kworker/[!1]*\"", 0},
	{"next_comm ~ \"*w*r*k*\"", 1},
	{"next_comm ~ \"*x*\"", 0},
	{"next_comm ~ \"k\"", 0},
	{"next_comm ~ \"*\"", 1},
	{"comm ~ \"b\\\\*\"", 0}, /* escaped star is literal */
	{"comm ~ \"[abc]ash\" && comm ~ \"ba[]s]h\"", 1},
	/* operands written as expressions: C's arithmetic, run first */
	{"-next_pid == 1", 1},
	{"-next_pid > 0 && prev_pid * 2 == 84", 1},
	{"prev_pid + next_pid == 41 || prev_pid == 0", 1},
	{"(prev_state & 3) == 1", 1},
	{"(prev_state >> 6) & 1", 1},
	{"(prev_state >> 6) == 2", 0},
	{"(prev_pid == 42 && (prev_state & 1) == 1)", 1},
	{"!(prev_pid % 5 == 2)", 0},
	{"prev_pid / 0 == 0 && prev_pid % 0 == 42", 1},
	{"-5 < -next_pid", 1},
	/* C's types: u32 - u32 wraps; int - int does not */
	{"pid - tid < 0", 0},
	{"(pid - tid) > 0", 1},
	{"prev_pid - 43 < 0", 1},
	/* two operands compared, no literal: the comparison one expression */
	{"prev_pid == pid", 1},
	{"tid > prev_pid && prev_pid != next_pid", 1},
	{"prev_pid < next_pid", 0},
	{"pid == tid || comm == \"bash\"", 1},
	{"prev_pid + 1 == tid", 1},
	{"(prev_state & 0x40) == prev_state - 1", 1},
};

/* Operands written as expressions: compiled into a program run first,
 * their mistakes shown under the whole filter. */
TEST(filter_expressions)
{
	struct pmt_format *fmt = pmt_test__format("sched_switch.format");
	struct pmt_buf b = {0};

	ASSERT_TRUE(fmt);
	compile(&b, "prev_pid + next_pid > 100 && prev_pid == 1", fmt);
	ASSERT_TRUE(strstr(b.p, " expressions ") != NULL);
	ASSERT_TRUE(strstr(b.p, "expr") != NULL);
	ASSERT_STREQ(compile(&b, "prev_pid + nope > 1", fmt),
		     "--filter: unknown field 'nope' for sched:sched_switch\n"
		     "  prev_pid + nope > 1\n"
		     "             ^~~~\n"
		     "hint: sched:sched_switch has: prev_comm prev_pid prev_prio prev_state "
		     "next_comm next_pid next_prio; every probe has: pid tid comm cpu uid gid "
		     "cgroup\n");
	ASSERT_TRUE(strstr(compile(&b, "(prev_pid + ) == 1", fmt), "^") != NULL);
	/* a group of tests is still a group */
	ASSERT_TRUE(strstr(compile(&b, "(prev_pid == 1 || next_pid == 2)", fmt), "expressions") ==
		    NULL);
	pmt_buf__free(&b);
	pmt_format__free(fmt);
}

TEST(filter_semantics)
{
	struct pmt_format *fmt = pmt_test__format("sched_switch.format");
	uint8_t rec[64];
	struct env env = {.rec = rec,
			  .pid = 42,
			  .tid = 43,
			  .cpu = 1,
			  .uid = 1000,
			  .gid = 100,
			  .cgroup = 7,
			  .comm = "bash\0\0\0\0\0\0\0\0\0\0\0"};
	size_t i;

	ASSERT_TRUE(fmt);
	switch_rec(rec, "bash", 42, 0x41, "kworker/1:2", -1);
	for (i = 0; i < sizeof(verdicts) / sizeof(verdicts[0]); i++)
		if (check(verdicts[i].expr, fmt, &env) != verdicts[i].pass)
			FAIL_AT("'%s': expected %s", verdicts[i].expr,
				verdicts[i].pass ? "to pass" : "to fail");
	pmt_format__free(fmt);
}

TEST(filter_data_loc_string)
{
	struct pmt_format *fmt = pmt_test__format("sched_process_exec.format");
	uint8_t rec[64] = {0};
	uint32_t loc = (14u << 16) | 20;
	struct env env = {.rec = rec, .comm = "x"};

	ASSERT_TRUE(fmt);
	memcpy(rec + 8, &loc, 4);
	memcpy(rec + 20, "/usr/bin/true", 14);
	ASSERT_EQ(check("filename == \"/usr/bin/true\"", fmt, &env), 1);
	ASSERT_EQ(check("filename ~ \"/usr/*/t*\"", fmt, &env), 1);
	ASSERT_EQ(check("filename ~ \"*/false\"", fmt, &env), 0);
	/* the record's own "pid" field shadows the common one; args.pid is
	 * the field whatever the spelling; in a program's probe (bpftrace's
	 * names) pid is the builtin */
	env.pid = 7;
	memcpy(rec + 12, &(int32_t){42}, 4);
	ASSERT_EQ(check("pid == 42", fmt, &env), 1);
	ASSERT_EQ(check("args.pid == 42 && args.filename ~ \"*/true\"", fmt, &env), 1);
	ASSERT_EQ(check("(args.pid + 1) == 43", fmt, &env), 1);
	fmt->builtins_first = true;
	ASSERT_EQ(check("pid == 7 && args.pid == 42", fmt, &env), 1);
	ASSERT_EQ(check("(pid + 1) == 8", fmt, &env), 1);
	ASSERT_EQ(check("old_pid == 0", fmt, &env), 1);
	pmt_format__free(fmt);
}

/* What a session uses, told to the BPF programs before they load: only
 * the sources, comparisons, key kinds and context words its filters and
 * aggregations name. */
TEST(uses_of_filters_and_keys)
{
	struct pmt_format *sw = pmt_test__format("sched_switch.format");
	struct pmt_format *fork = pmt_test__format("sched_process_fork.format");
	struct pmt_agg_cfg a = {0};
	struct pmt_filter f;
	struct pmt_error err = {0};
	struct pmt_uses u = {0};

	ASSERT_TRUE(sw && fork);
	/* a stream filtered on prev_pid (offset 24, 4 bytes: word 6) */
	ASSERT_EQ(pmt_filter__compile("prev_pid == 1", sw, "sched:sched_switch", NULL, &f, &err),
		  0);
	pmt_uses__add(&u, &f, PMT_ACT_STREAM, &a);
	ASSERT_EQ(u.srcs, 1u << PMT_FSRC_FIELD);
	ASSERT_EQ(u.fops, 1u << PMT_FOP_EQ);
	ASSERT_EQ(u.ctx_words, 1u << 6);
	ASSERT_EQ(u.agg_kinds | u.key_kinds | u.nparts, 0);
	/* a count by comm and pid of a record with two __data_loc strings,
	 * filtered on prev_state (8 bytes at 32: words 8 and 9) and a glob */
	ASSERT_EQ(pmt_filter__compile("prev_state & 1 && comm ~ \"k*\"", sw, "sched:sched_switch",
				      NULL, &f, &err),
		  0);
	a.kind = PMT_AGG_COUNT;
	a.value.src = PMT_FSRC_CGROUP; /* not read by a count */
	a.nkeys = 2;
	a.keys[0] = (struct pmt_key_part){.o.src = PMT_FSRC_COMM, .kind = PMT_KEY_STRING};
	a.keys[1] = (struct pmt_key_part){.o.src = PMT_FSRC_PID, .kind = PMT_KEY_NUM};
	pmt_uses__add(&u, &f, PMT_ACT_AGG, &a);
	ASSERT_EQ(u.srcs, 1u << PMT_FSRC_FIELD | 1u << PMT_FSRC_COMM | 1u << PMT_FSRC_PID);
	ASSERT_EQ(u.fops, 1u << PMT_FOP_EQ | 1u << PMT_FOP_BAND | 1u << PMT_FOP_MATCH);
	ASSERT_EQ(u.ctx_words, 1u << 6 | 1u << 8 | 1u << 9);
	ASSERT_EQ(u.agg_kinds, 1u << PMT_AGG_COUNT);
	ASSERT_EQ(u.key_kinds, 1u << PMT_KEY_STRING | 1u << PMT_KEY_NUM);
	ASSERT_EQ(u.nparts, 2);
	ASSERT_EQ(pmt_format__ndyn(fork), 2);
	ASSERT_EQ(pmt_format__ndyn(sw), 0);
	/* a latency's end reads its match key; a sum its value */
	a = (struct pmt_agg_cfg){.kind = PMT_AGG_HIST, .match.src = PMT_FSRC_TID};
	pmt_uses__add(&u, NULL, PMT_ACT_LAT_END, &a);
	a = (struct pmt_agg_cfg){.kind = PMT_AGG_VALUE, .value.src = PMT_FSRC_CPU};
	pmt_uses__add(&u, NULL, PMT_ACT_AGG, &a);
	ASSERT_TRUE(u.srcs & 1u << PMT_FSRC_TID && u.srcs & 1u << PMT_FSRC_CPU);
	ASSERT_TRUE(!(u.srcs & 1u << PMT_FSRC_CGROUP));
	ASSERT_EQ(u.agg_kinds, 1u << PMT_AGG_COUNT | 1u << PMT_AGG_HIST | 1u << PMT_AGG_VALUE);
	ASSERT_EQ(u.nparts, 2);
	pmt_format__free(sw);
	pmt_format__free(fork);
}

/* str(F) refused: what holds no address, and F's close names */
static const struct {
	const char *expr, *want;
} str_diagnostics[] = {
	{"str(flags) == \"x\" && str(filenme) == \"y\"",
	 "--filter: unknown field 'str(filenme)' for sched:sched_switch\n"
	 "  str(flags) == \"x\" && str(filenme) == \"y\"\n"
	 "                       ^~~~~~~~~~~~\n"
	 "hint: did you mean str(filename)? sched:sched_switch has: __syscall_nr dfd "
	 "filename flags mode; every probe has: pid tid comm cpu uid gid cgroup\n"},
	{"str(__syscall_nr) == \"x\"",
	 "--filter: str(__syscall_nr): the field is int (4 bytes), not an address: "
	 "str() reads the string an 8-byte pointer field points at\n"
	 "  str(__syscall_nr) == \"x\"\n"
	 "  ^~~~~~~~~~~~~~~~~\n"},
	{"str(comm) == \"x\"",
	 "--filter: str(comm): the field is a string already: name it without str()\n"
	 "  str(comm) == \"x\"\n"
	 "  ^~~~~~~~~\n"},
	{"str(pid) == \"x\"", "--filter: str(pid): str() reads the string a pointer field points "
			      "at, not a value every probe has\n"
			      "  str(pid) == \"x\"\n"
			      "  ^~~~~~~~\n"},
	{"str(filename) > 3",
	 "--filter: 'str(filename)' is a string: only ==, != and ~ apply to strings\n"
	 "  str(filename) > 3\n"
	 "  ^~~~~~~~~~~~~\n"},
};

/* str(F): the string an address field points at, compared in the kernel
 * after a read (PMT_FSRC_PTR_STR over F's place). */
TEST(filter_str_of_pointer)
{
	struct pmt_format *fmt = pmt_test__format("sys_enter_openat.format");
	struct pmt_agg_cfg a = {0};
	struct pmt_filter f;
	struct pmt_error err = {0};
	struct pmt_uses u = {0};
	struct pmt_buf b = {0};
	size_t i;

	ASSERT_TRUE(fmt);
	ASSERT_EQ(pmt_filter__compile("str(filename) ~ \"/etc/*\"", fmt,
				      "syscalls:sys_enter_openat", NULL, &f, &err),
		  0);
	ASSERT_EQ(f.n, 1);
	ASSERT_EQ(f.e[0].o.src, PMT_FSRC_PTR_STR);
	ASSERT_EQ(f.e[0].o.off, 24);
	ASSERT_EQ(f.e[0].o.size, 8);
	ASSERT_EQ(f.e[0].op, PMT_FOP_MATCH);
	/* the address is a field's load: both sources are kept */
	pmt_uses__add(&u, &f, PMT_ACT_STREAM, &a);
	ASSERT_EQ(u.srcs, 1u << PMT_FSRC_PTR_STR | 1u << PMT_FSRC_FIELD);
	for (i = 0; i < sizeof(str_diagnostics) / sizeof(str_diagnostics[0]); i++)
		if (strcmp(compile(&b, str_diagnostics[i].expr, fmt), str_diagnostics[i].want))
			FAIL_AT("'%s':\n    got:      %s\n    expected: %s",
				str_diagnostics[i].expr, b.p, str_diagnostics[i].want);
	pmt_buf__free(&b);
	pmt_format__free(fmt);
}
