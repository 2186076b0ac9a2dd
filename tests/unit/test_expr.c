// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The expression compiler: C's precedence and types, the values the
 * kernel's machine computes (its reference, pmt_expr__eval), folding, and
 * every diagnostic. */
#include <errno.h>
#include <stdlib.h>
#include "filter/expr.h"
#include "test.h"

/* a record of sys_exit_openat's layout: ret (long, 8 bytes at 16), and a
 * made-up record for narrow types: s8 at 8, u8 at 9, s16 at 10, u16 at
 * 12, s32 at 16, u32 at 20, u64 at 24 */
static struct pmt_format *narrow_format(void)
{
	static const struct {
		const char *name, *type;
		uint32_t off, size;
		bool sign;
	} f[] = {
		{"s8", "s8", 8, 1, true},
		{"u8", "u8", 9, 1, false},
		{"s16", "s16", 10, 2, true},
		{"u16", "u16", 12, 2, false},
		{"s32", "int", 16, 4, true},
		{"u32", "unsigned int", 20, 4, false},
		{"u64", "u64", 24, 8, false},
		{"s64", "long", 32, 8, true},
		{"ptr", "const char *", 40, 8, false},
	};
	struct pmt_format *fmt = pmt_format__new("t:narrow", 48);
	struct pmt_field *fl;
	size_t i;

	for (i = 0; fmt && i < sizeof(f) / sizeof(f[0]); i++) {
		fl = pmt_format__add(fmt, f[i].name, f[i].type, f[i].off, f[i].size,
				     i == 8 ? PMT_F_PTR : PMT_F_INT);
		if (!fl)
			return NULL;
		fl->is_signed = f[i].sign;
	}
	return fmt;
}

static uint8_t rec[48];

static uint64_t load(const struct pmt_operand *o, void *arg)
{
	(void)arg;
	if (o->src == PMT_FSRC_PID)
		return 42;
	if (o->src != PMT_FSRC_FIELD)
		return 0;
	return pmt_load_int(rec + o->off, o->size, o->flags & PMT_FFLAG_SIGNED);
}

static void fill(void)
{
	int8_t s8 = -3;
	uint8_t u8 = 250;
	int16_t s16 = -300;
	uint16_t u16 = 65000;
	int32_t s32 = -7;
	uint32_t u32 = 4000000000u;
	uint64_t u64 = 1ULL << 63;
	int64_t s64 = -2;

	memcpy(rec + 8, &s8, 1);
	memcpy(rec + 9, &u8, 1);
	memcpy(rec + 10, &s16, 2);
	memcpy(rec + 12, &u16, 2);
	memcpy(rec + 16, &s32, 4);
	memcpy(rec + 20, &u32, 4);
	memcpy(rec + 24, &u64, 8);
	memcpy(rec + 32, &s64, 8);
}

/* what C computes for each, on the record above (C's own arithmetic on
 * the same types is the oracle: each want is the C expression itself) */
static const int8_t s8 = -3;
static const uint8_t u8 = 250;
static const int16_t s16 = -300;
static const uint16_t u16 = 65000;
static const int32_t s32 = -7;
static const uint32_t u32 = 4000000000u;
static const uint64_t u64 = 1ULL << 63;
static const int64_t s64 = -2;

/* bpftrace's names of the integer types a cast names */
typedef uint8_t uint8;
typedef uint16_t uint16;
typedef uint32_t uint32;
typedef uint64_t uint64;
typedef int8_t int8;
typedef int16_t int16;
typedef int32_t int32;
typedef int64_t int64;

/* the table is C's own arithmetic: what a compiler warns about in it
 * (precedence, mixed signedness) is what it checks */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wparentheses"
#pragma GCC diagnostic ignored "-Wsign-compare"
#ifdef __clang__
#pragma GCC diagnostic ignored "-Wtautological-compare"
#else
#pragma GCC diagnostic ignored "-Wbool-compare"
#endif
#define CASE(e)                                             \
	{                                                   \
#e, (uint64_t)(int64_t)(e), (e) < 0 ? 1 : 0 \
	}
#define CASEU(e)                     \
	{                            \
#e, (uint64_t)(e), 0 \
	}

static const struct {
	const char *text;
	uint64_t want;
	int negative; /* the C result's type is signed and negative */
} values[] = {
	/* precedence and associativity */
	CASE(1 + 2 * 3),
	CASE((1 + 2) * 3),
	CASE(10 - 4 - 3),
	CASE(100 / 10 / 5),
	CASE(1 << 2 + 1),
	CASE(6 & 3 ^ 5 | 8),
	CASE(1 < 2 == 1),
	CASE(3 > 2 && 0 || 7),
	CASE(!0 + !5 + ~0),
	CASE(-s32 * 2 % 5),
	/* the conditional: lowest, right to left, the sides' common type */
	CASE(s32 < 0 ? -s32 : s32),
	CASE(u8 ? s64 : 5),
	CASE(0	 ? 1
	     : 2 ? 3
		 : 4),
	CASE(1 + 1 ? 2 * 3 : 4 || 0),
	CASEU(s32 ? u32 : s32),
	CASE((s16 > 0 ? s16 : -s16) * 2),
	/* promotion: narrow types become int */
	CASE(s8 + u8),
	CASE(-u8),
	/* bswap(E): as many bytes as E's own type has, unsigned (C has no
	 * such operator: the values by hand, from the variables below) */
	{"bswap(u16)", 0xe8fd, 0},
	{"bswap(u16) + 1", 0xe8fe, 0},
	{"bswap(s32)", 0xf9ffffff, 0},
	{"bswap(u64)", 0x80, 0},
	{"bswap(u8)", 250, 0},
	{"bswap((uint16)u32)", 0x0028, 0},
	CASE(u16 * 3),
	CASE(s16 >> 2),
	CASE(~u8),
	/* usual conversions: int and unsigned int meet as unsigned int */
	CASEU(s32 + u32),
	CASE(s32 < u32),
	CASE(s32 < 5),
	CASEU(u32 * 2),
	CASEU(u32 / s32),
	CASE(s32 / 2),
	CASE(s32 % 4),
	CASE(s32 >> 1),
	CASEU(u32 >> 1),
	/* 64 bits: long and unsigned long */
	CASEU(u64 >> 62),
	CASE(s64 >> 1),
	CASE(s64 < u64),
	CASE(s64 < 0),
	CASEU(s64 + u32),
	CASE(s64 *s32),
	CASE(-s64 / 4),
	CASE(s32 + s64),
	/* literals: 2147483648 is a long, 0x80000000 an unsigned int */
	CASE(2147483648 + s32),
	CASEU(0x80000000 + s32),
	/* unsigned overflow wraps in the type's width */
	CASEU(u32 + u32),
	CASEU(u64 + u64),
	/* casts: narrowed to the low bits, sign-extended where signed;
	 * widened as C widens */
	CASEU((uint64)s32),
	CASE((int64)u32 * -1),
	CASEU((uint32)s64),
	CASE((int8)u32),
	CASE((int16)u16 + 1),
	CASEU((uint8)(s32 - 1)),
	CASE((int32)u64 - 1),
};
#pragma GCC diagnostic pop

/* text compiled over the narrow record and run as the kernel would:
 * NULL and the value in *got, or the compiler's message */
static const char *run(struct pmt_exprs *t, const struct pmt_format *fmt, const char *text,
		       struct pmt_opinfo *info, uint64_t *got, struct pmt_error *err)
{
	pmt_error__clear(err);
	if (pmt_expr__compile(t, text, fmt, "t:narrow", "--by", NULL, info, err))
		return err->msg;
	*got = info->o.src == PMT_FSRC_EXPR ? pmt_expr__eval(&t->v[info->o.off], load, NULL, NULL)
					    : load(&info->o, NULL);
	return NULL;
}

TEST(expr_values_as_c)
{
	struct pmt_format *fmt = narrow_format();
	struct pmt_error err = {0};
	struct pmt_exprs t = {0};
	struct pmt_opinfo info;
	size_t i;

	ASSERT_TRUE(fmt);
	fill();
	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		uint64_t got = 0;
		const char *msg = run(&t, fmt, values[i].text, &info, &got, &err);

		if (msg) {
			FAIL_AT("'%s': %s", values[i].text, msg);
			continue;
		}
		if (got != values[i].want)
			FAIL_AT("'%s': got %#llx, C gives %#llx", values[i].text,
				(unsigned long long)got, (unsigned long long)values[i].want);
		if (values[i].negative && !info.is_signed)
			FAIL_AT("'%s': C's type is signed", values[i].text);
	}
	pmt_exprs__free(&t);
	pmt_format__free(fmt);
}

/* Division by zero is defined (x / 0 is 0, x % 0 is x, as BPF's); a
 * shift count is taken modulo the width; INT64_MIN / -1 wraps. */
TEST(expr_division_by_zero_and_edges)
{
	struct pmt_format *fmt = narrow_format();
	struct pmt_error err = {0};
	struct pmt_exprs t = {0};
	struct pmt_opinfo info;
	static const struct {
		const char *text;
		uint64_t want;
	} edges[] = {
		{"s32 / (u8 - 250)", 0},
		{"s32 % (u8 - 250)", (uint64_t)-7},
		{"u64 / (s64 + 2)", 0},
		{"u64 % (s64 + 2)", 1ULL << 63},
		{"1 << (s64 + 34)", 1ULL << 0}, /* 32 modulo 32 */
		{"s64 << 65", (uint64_t)-4},	/* 65 modulo 64 */
		{"(u64 / 1 - 1 + 1) / -1", 0},	/* unsigned: 2^63 / (2^64 - 1) */
		{"(s64 * 4611686018427387904) / -1", 1ULL << 63},
	};
	size_t i;

	ASSERT_TRUE(fmt);
	fill();
	for (i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		uint64_t got = 0;
		const char *msg = run(&t, fmt, edges[i].text, &info, &got, &err);

		if (msg) {
			FAIL_AT("'%s': %s", edges[i].text, msg);
			continue;
		}
		if (got != edges[i].want)
			FAIL_AT("'%s': got %#llx, expected %#llx", edges[i].text,
				(unsigned long long)got, (unsigned long long)edges[i].want);
	}
	pmt_exprs__free(&t);
	pmt_format__free(fmt);
}

/* The code: a bare name needs none; constants fold; equal expressions are
 * shared; > is < of the operands swapped; what the operands use. */
TEST(expr_code)
{
	struct pmt_format *fmt = narrow_format();
	struct pmt_error err = {0};
	struct pmt_exprs t = {0};
	struct pmt_opinfo info;
	struct pmt_uses u = {0};
	struct pmt_buf b = {0};

	ASSERT_TRUE(fmt);
	ASSERT_EQ(pmt_expr__compile(&t, "(s32)", fmt, "t", "--by", NULL, &info, &err), 0);
	ASSERT_EQ(info.o.src, PMT_FSRC_FIELD);
	ASSERT_EQ(t.n, 0);
	ASSERT_EQ(pmt_expr__compile(&t, "-(2 * 3) + 1", fmt, "t", "--by", NULL, &info, &err), 0);
	ASSERT_EQ(info.o.src, PMT_FSRC_EXPR);
	ASSERT_EQ(t.v[info.o.off].n, 1);
	ASSERT_EQ(t.v[info.o.off].op[0].code, PMT_X_CONST);
	ASSERT_EQ(t.v[info.o.off].op[0].k, (uint64_t)-5);
	ASSERT_TRUE(info.is_signed);
	ASSERT_EQ(pmt_expr__compile(&t, "u32 > pid", fmt, "t", "--by", NULL, &info, &err), 0);
	pmt_expr__dump(&b, &t.v[info.o.off]);
	ASSERT_STREQ(pmt_buf__cstr(&b), "operand src3@0:4\noperand src0@20:4\nlt u32\n");
	ASSERT_EQ(pmt_expr__compile(&t, "u32  >  pid", fmt, "t", "--by", NULL, &info, &err), 0);
	ASSERT_EQ(info.o.off, 1); /* the same code as before: shared */
	ASSERT_EQ(t.n, 2);
	pmt_exprs__uses(&t, &u);
	ASSERT_EQ(u.srcs, 1u << PMT_FSRC_FIELD | 1u << PMT_FSRC_PID);
	pmt_buf__free(&b);
	pmt_exprs__free(&t);
	pmt_format__free(fmt);
}

static const struct {
	const char *text, *want;
} diagnostics[] = {
	{"s32 ? 1", "--by: expected ':' of COND ? A : B\n"
		    "  s32 ? 1\n"
		    "      ^\n"},
	{"-rett", "--by: unknown field 'rett' for t:narrow\n"
		  "  -rett\n"
		  "   ^~~~\n"
		  "hint: t:narrow has: s8 u8 s16 u16 s32 u32 u64 s64 ptr; every probe has: pid "
		  "tid comm cpu uid gid cgroup\n"},
	{"-s33", "--by: unknown field 's33' for t:narrow\n"
		 "  -s33\n"
		 "   ^~~\n"
		 "hint: did you mean s32? t:narrow has: s8 u8 s16 u16 s32 u32 u64 s64 ptr; every "
		 "probe has: pid tid comm cpu uid gid cgroup\n"},
	{"comm + 1", "--by: 'comm' is a string: expressions compute numbers\n"
		     "  comm + 1\n"
		     "  ^~~~\n"},
	{"str(ptr) * 2", "--by: 'str(ptr)' is a string: expressions compute numbers\n"
			 "  str(ptr) * 2\n"
			 "  ^~~~~~~~\n"},
	{"(s32 + 1", "--by: unbalanced '(': a ')' is missing\n"
		     "  (s32 + 1\n"
		     "  ^\n"},
	{"s32 + 1)", "--by: unbalanced ')'\n"
		     "  s32 + 1)\n"
		     "         ^\n"},
	{"s32 +", "--by: expected a value, but the expression ends here\n"
		  "  s32 +\n"
		  "       ^\n"},
	{"s32 * * 2",
	 "--by: '*' reads the value at an address: this is a number narrower than one\n"
	 "  s32 * * 2\n"
	 "          ^\n"},
	{"s32 * / 2", "--by: expected a value: a field, a number, '(' or a unary - ~ ! *\n"
		      "  s32 * / 2\n"
		      "        ^\n"},
	{"s32 2", "--by: expected an operator or the end\n"
		  "  s32 2\n"
		  "      ^\n"},
	{"s32 = 2", "--by: unexpected character '='\n"
		    "  s32 = 2\n"
		    "      ^\n"},
	{"12q + s32", "--by: bad number: expected digits or 0x hex\n"
		      "  12q + s32\n"
		      "  ^~~\n"},
	{"99999999999999999999 + s32", "--by: number too large for 64 bits\n"
				       "  99999999999999999999 + s32\n"
				       "  ^~~~~~~~~~~~~~~~~~~~\n"},
	{"str(s8) + 1", "--by: str(s8): the field is s8 (1 byte), not an address: str() reads "
			"the string an 8-byte pointer field points at\n"
			"  str(s8) + 1\n"
			"  ^~~~~~~\n"},
};

/* text refused, its message starting with want */
static bool refused_as(struct pmt_exprs *t, struct pmt_format *fmt, struct pmt_buf *text,
		       struct pmt_buf *want)
{
	struct pmt_error err = {0};
	struct pmt_opinfo info;
	struct pmt_buf b = {0};
	bool ok;

	ok = pmt_expr__compile(t, pmt_buf__cstr(text), fmt, "t:narrow", "--by", NULL, &info,
			       &err) &&
	     (pmt_error__format(&b, &err), !strncmp(pmt_buf__cstr(&b), want->p, want->len));
	pmt_buf__free(&b);
	text->len = want->len = 0;
	return ok;
}

/* Past the bounds: PMT_EXPR_OPS operations, PMT_EXPR_STACK values
 * pending (texts made here: too long to write out) */
TEST(expr_bounds)
{
	struct pmt_format *fmt = narrow_format();
	struct pmt_exprs t = {0};
	struct pmt_buf text = {0}, want = {0};
	int i;

	ASSERT_TRUE(fmt);
	for (i = 0; i <= PMT_EXPR_OPS / 2; i++)
		pmt_buf__printf(&text, "%ss32", i ? "+" : "");
	pmt_buf__printf(&want, "--by: expression too long: at most %d operations and values\n",
			PMT_EXPR_OPS);
	ASSERT_TRUE(refused_as(&t, fmt, &text, &want));
	for (i = 0; i < PMT_EXPR_STACK; i++)
		pmt_buf__printf(&text, "s8+(");
	pmt_buf__printf(&text, "s8");
	for (i = 0; i < PMT_EXPR_STACK; i++)
		pmt_buf__putc(&text, ')');
	pmt_buf__printf(&want, "--by: expression too deep: at most %d values pending at once",
			PMT_EXPR_STACK);
	ASSERT_TRUE(refused_as(&t, fmt, &text, &want));
	ASSERT_EQ(t.n, 0);
	pmt_buf__free(&text);
	pmt_buf__free(&want);
	pmt_exprs__free(&t);
	pmt_format__free(fmt);
}

TEST(expr_diagnostics)
{
	struct pmt_format *fmt = narrow_format();
	struct pmt_exprs t = {0};
	struct pmt_opinfo info;
	struct pmt_buf b = {0};
	size_t i;

	ASSERT_TRUE(fmt);
	for (i = 0; i < sizeof(diagnostics) / sizeof(diagnostics[0]); i++) {
		struct pmt_error err = {0};

		b.len = 0;
		if (!pmt_expr__compile(&t, diagnostics[i].text, fmt, "t:narrow", "--by", NULL,
				       &info, &err)) {
			FAIL_AT("'%s': compiled", diagnostics[i].text);
			continue;
		}
		pmt_error__format(&b, &err);
		if (strcmp(pmt_buf__cstr(&b), diagnostics[i].want))
			FAIL_AT("'%s':\n    got:      %s\n    expected: %s", diagnostics[i].text,
				b.p, diagnostics[i].want);
	}
	ASSERT_EQ(t.n, 0);
	pmt_buf__free(&b);
	pmt_exprs__free(&t);
	pmt_format__free(fmt);
}

/* A program's saved values: statements in turn into one program, each
 * map numbered on first sight; read back as an expression's value (not
 * folded: the kernel's); refused where no program names them. */
TEST(expr_saved_values)
{
	struct pmt_format *fmt = narrow_format();
	struct pmt_varnames names = {0};
	struct pmt_exprs t = {.vars = &names}, none = {0};
	struct pmt_error err = {0};
	struct pmt_opinfo info;
	struct pmt_buf b = {0};
	uint16_t prog;

	ASSERT_TRUE(fmt);
	ASSERT_EQ(pmt_expr__statements(&t, "@f[tid] = ptr; delete(@f[tid]);; @n = u32 * 2", fmt,
				       "t:narrow", "t", NULL, &prog, &err),
		  0);
	ASSERT_EQ(prog, 0);
	pmt_expr__dump(&b, &t.v[prog]);
	/* a push fused with the operation after it where that takes it
	 * ("+": not a step of its own), where it uses neither o nor k */
	ASSERT_STREQ(pmt_buf__cstr(&b), "operand src4@0:4\n+operand src0@40:8\nvstore 0\n"
					"+operand src4@0:4\nvdel 0\nconst 0\noperand src0@20:4\n"
					"+const 2\nmul u32\nvstore 1\n");
	ASSERT_EQ(t.v[prog].n, 7);
	ASSERT_EQ(names.n, 2);
	ASSERT_STREQ(names.name[1], "n");
	ASSERT_TRUE(names.keyed[0] && !names.keyed[1]);
	ASSERT_TRUE(pmt_exprs__uses_vars(&t));
	ASSERT_EQ(pmt_expr__compile(&t, "@n + 1", fmt, "t:narrow", "--filter", NULL, &info, &err),
		  0);
	ASSERT_EQ(info.o.src, PMT_FSRC_EXPR);
	b.len = 0;
	pmt_expr__dump(&b, &t.v[info.o.off]);
	ASSERT_STREQ(pmt_buf__cstr(&b), "const 0\nvload 1\nconst 1\nadd s64\n");
	ASSERT_EQ(pmt_expr__statements(&t, "@f[tid] == 1", fmt, "t:narrow", "t", NULL, &prog, &err),
		  -EINVAL);
	b.len = 0;
	pmt_error__format(&b, &err);
	ASSERT_STREQ(pmt_buf__cstr(&b), "t: expected '=' after the map: @MAP[KEY] = VALUE\n"
					"  @f[tid] == 1\n"
					"          ^~\n");
	pmt_error__clear(&err);
	ASSERT_EQ(pmt_expr__compile(&none, "@n", fmt, "t:narrow", "--filter", NULL, &info, &err),
		  -EINVAL);
	b.len = 0;
	pmt_error__format(&b, &err);
	ASSERT_STREQ(pmt_buf__cstr(&b), "--filter: @n: maps are a program's (pmtrace FILE.bt, or "
					"-e 'PROGRAM'), read where it saved them\n"
					"  @n\n"
					"  ^~\n");
	pmt_error__clear(&err);
	pmt_buf__free(&b);
	pmt_exprs__free(&t);
	pmt_format__free(fmt);
}

/* A saved value a program reads twice under one key is read once, first,
 * into a slot (src11: PMT_FSRC_EXPR) that both reads then take, before
 * the clock an operation takes with it (sub rev: nsecs read after); not
 * where the program wrote the variable before (each read stays). */
TEST(expr_saved_read_once)
{
	struct pmt_format *fmt = narrow_format();
	struct pmt_varnames names = {0};
	struct pmt_exprs t = {.vars = &names};
	struct pmt_error err = {0};
	struct pmt_buf b = {0};
	uint16_t prog;

	ASSERT_TRUE(fmt);
	ASSERT_EQ(pmt_expr__statements(&t, "@n = nsecs - @f[tid]; @m = @f[tid]", fmt, "t:narrow",
				       "t", NULL, &prog, &err),
		  0);
	pmt_expr__dump(&b, &t.v[prog]);
	ASSERT_STREQ(pmt_buf__cstr(&b),
		     "+operand src4@0:4\nvload 1\nstore 0\n"
		     "const 0\noperand src11@0:8\n+operand src13@0:8\nsub u64 rev\n"
		     "vstore 0\nconst 0\n+operand src11@0:8\nvstore 2\n");
	ASSERT_EQ(t.v[prog].n, 8);
	b.len = 0;
	ASSERT_EQ(pmt_expr__statements(&t, "@f[tid] = u32; @n = @f[tid] + @f[tid]", fmt, "t:narrow",
				       "t", NULL, &prog, &err),
		  0);
	pmt_expr__dump(&b, &t.v[prog]);
	/* (as the program's parser never writes it: a read after a write
	 * under the same key is the value before the block, read first) */
	ASSERT_STREQ(pmt_buf__cstr(&b),
		     "+operand src4@0:4\nvload 1\nstore 0\n"
		     "operand src4@0:4\n+operand src0@20:4\nvstore 1\nconst 0\n"
		     "operand src11@0:8\n+operand src11@0:8\nadd s64\nvstore 0\n");
	/* a program 3 operations short of the most, 16 values read twice
	 * each: read once only as far as the room left (each such read one
	 * operation more), never past it (ASan: the copy's array) */
	b.len = 0;
	for (int v = 0; v < 16; v++)
		pmt_buf__printf(&b, "%s@v%d[tid] + @v%d[tid]", v ? " + " : "@n = ", v, v);
	for (int k = 0; k < 206; k++)
		pmt_buf__printf(&b, " + u32");
	ASSERT_EQ(pmt_expr__statements(&t, pmt_buf__cstr(&b), fmt, "t:narrow", "t", NULL, &prog,
				       &err),
		  0);
	ASSERT_TRUE(t.v[prog].n <= PMT_EXPR_OPS);
	pmt_buf__free(&b);
	pmt_exprs__free(&t);
	pmt_format__free(fmt);
}

/* A key of two values (bpftrace's @m[a, b], or a tuple as a $variable
 * gives it), has_key(), delete(@MAP, KEY); refusals: a third value, a
 * map keyed both ways, a tuple as an operand. */
TEST(expr_saved_two_keys)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{"@f[tid, u32, 1] = 1", "t: a saved value's key has two values at most, for now\n"
					"  @f[tid, u32, 1] = 1\n"
					"             ^\n"},
		{"@g[tid] = 1; @g[tid, 2] = 1", "t: @g has a key of 1 value elsewhere: not 2 here\n"
						"  @g[tid] = 1; @g[tid, 2] = 1\n"
						"                  ^~~~~~\n"},
		{"@f[1, 1] = (tid, 2) + 1", "t: expected ')'\n"
					    "  @f[1, 1] = (tid, 2) + 1\n"
					    "                 ^\n"},
		{"@h[(tid, 2) + 1] = 1", "t: a tuple is a saved value's key here, not an operand\n"
					 "  @h[(tid, 2) + 1] = 1\n"
					 "     ^~~~~~~~~\n"},
	};
	struct pmt_format *fmt = narrow_format();
	struct pmt_varnames names = {0};
	struct pmt_exprs t = {.vars = &names};
	struct pmt_error err = {0};
	struct pmt_opinfo info;
	struct pmt_buf b = {0};
	uint16_t prog;
	size_t i;

	ASSERT_TRUE(fmt);
	ASSERT_EQ(pmt_expr__statements(&t, "@f[tid, u32] = 7; delete(@f, ((tid, u32)))", fmt,
				       "t:narrow", "t", NULL, &prog, &err),
		  0);
	pmt_expr__dump(&b, &t.v[prog]);
	/* (vstore's k is its variable: the number pushed stays a step) */
	ASSERT_STREQ(pmt_buf__cstr(&b), "operand src4@0:4\noperand src0@20:4\nconst 7\n"
					"vstore 0 key2\noperand src4@0:4\n+operand src0@20:4\n"
					"vdel 0 key2\n");
	ASSERT_EQ(names.nkeys[0], 2);
	ASSERT_EQ(pmt_expr__compile(&t, "has_key(@f, (tid, u32)) + @f[tid, u32]", fmt, "t:narrow",
				    "--filter", NULL, &info, &err),
		  0);
	b.len = 0;
	pmt_expr__dump(&b, &t.v[info.o.off]);
	ASSERT_STREQ(pmt_buf__cstr(&b), "operand src4@0:4\noperand src0@20:4\nvload 0 key2 has\n"
					"operand src4@0:4\noperand src0@20:4\nvload 0 key2\n"
					"add s64\n");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_EQ(pmt_expr__statements(&t, bad[i].text, fmt, "t:narrow", "t", NULL, &prog,
					       &err),
			  -EINVAL);
		b.len = 0;
		pmt_error__format(&b, &err);
		ASSERT_STREQ(pmt_buf__cstr(&b), bad[i].msg);
		pmt_error__clear(&err);
	}
	pmt_buf__free(&b);
	pmt_exprs__free(&t);
	pmt_format__free(fmt);
}

/* Which --by words are expressions (a name is a field or a value) */
TEST(expr_told_from_names)
{
	ASSERT_TRUE(pmt_expr__is_expression("-ret"));
	ASSERT_TRUE(pmt_expr__is_expression("ret/1024"));
	ASSERT_TRUE(pmt_expr__is_expression("(pid)"));
	ASSERT_TRUE(pmt_expr__is_expression("3"));
	ASSERT_TRUE(!pmt_expr__is_expression("prev_pid"));
	ASSERT_TRUE(!pmt_expr__is_expression("str(filename)"));
	ASSERT_TRUE(!pmt_expr__is_expression("arg0"));
}

/*
 * Member chains over a made-up kernel: 1 struct task_struct { int pid @8;
 * char comm[16] @16; struct task_struct *real_parent @32; struct { int x;
 * } @40 (anonymous); unsigned flags:3 @48 (a bitfield); unsigned short
 * port @52 }; 2 int; 3 char[16]; 4 char; 5 pointer to 1; 6 the anonymous
 * struct; 7 unsigned short.
 */
static int fake_find(void *ctx, const char *name, int *id)
{
	(void)ctx;
	*id = 1;
	return strcmp(name, "task_struct") ? -ENOENT : 0;
}

static int fake_describe(void *ctx, int id, struct pmt_tinfo *out)
{
	static const struct pmt_tinfo t[] = {
		{0},
		{PMT_TK_STRUCT, 56, false, 0, 0, "struct task_struct"},
		{PMT_TK_INT, 4, true, 0, 0, "int"},
		{PMT_TK_ARRAY, 16, false, 4, 16, "an array"},
		{PMT_TK_INT, 1, true, 0, 0, "char"},
		{PMT_TK_PTR, 8, false, 1, 0, "a pointer"},
		{PMT_TK_STRUCT, 4, false, 0, 0, "struct (anonymous)"},
		{PMT_TK_INT, 2, false, 0, 0, "unsigned short"},
	};
	(void)ctx;
	if (id < 1 || id > 7)
		return -ENOENT;
	*out = t[id];
	return 0;
}

static int fake_member(void *ctx, int id, const char *name, uint32_t *off, int *type)
{
	static const struct {
		int in;
		const char *name;
		uint32_t off;
		int type;
	} m[] = {{1, "pid", 8, 2}, {1, "comm", 16, 3}, {1, "real_parent", 32, 5},
		 {1, "x", 40, 2},  {1, "port", 52, 7}, {6, "x", 0, 2}};
	size_t i;

	(void)ctx;
	if (id == 1 && !strcmp(name, "flags"))
		return -EOPNOTSUPP;
	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (m[i].in == id && !strcmp(m[i].name, name)) {
			*off = m[i].off;
			*type = m[i].type;
			return 0;
		}
	return -ENOENT;
}

static size_t fake_names(void *ctx, int id, const char **names, size_t max)
{
	static const char *const n[] = {"pid", "comm", "real_parent", "x", "flags"};
	size_t i;

	(void)ctx;
	for (i = 0; id == 1 && i < 5 && i < max; i++)
		names[i] = n[i];
	return id == 1 ? i : 0;
}

/* one kernel symbol: pid_max */
static int fake_ksym(void *ctx, const char *name, uint64_t *addr)
{
	(void)ctx;
	*addr = 0xffffffff82a00010ULL;
	return strcmp(name, "pid_max") ? -ENOENT : 0;
}

static const struct pmt_typesys fake_types = {
	.find_struct = fake_find,
	.describe = fake_describe,
	.member = fake_member,
	.member_names = fake_names,
	.ksym = fake_ksym,
};

TEST(expr_member_chains)
{
	struct pmt_format *fmt = narrow_format();
	struct pmt_field *pf;
	struct pmt_error err = {0};
	struct pmt_exprs t = {0};
	struct pmt_opinfo info;
	struct pmt_buf b = {0};

	ASSERT_TRUE(fmt);
	/* two loads: the parent's pointer (8 bytes at 32), its pid (s32 at 8) */
	ASSERT_EQ(pmt_expr__compile(&t, "curtask->real_parent->pid", fmt, "t", "--by", &fake_types,
				    &info, &err),
		  0);
	ASSERT_EQ(info.o.src, PMT_FSRC_EXPR);
	ASSERT_TRUE(info.is_signed && !info.is_str);
	pmt_expr__dump(&b, &t.v[info.o.off]);
	ASSERT_STREQ(pmt_buf__cstr(&b), "operand src12@0:8\nload u64 32\nload s32 8\n");
	/* a char array: a string at its address, 16 bytes */
	ASSERT_EQ(pmt_expr__compile(&t, "curtask->real_parent->comm", fmt, "t", "--by", &fake_types,
				    &info, &err),
		  0);
	ASSERT_TRUE(info.is_str);
	ASSERT_EQ(info.o.src, PMT_FSRC_PTR_STR);
	ASSERT_EQ(info.o.flags, PMT_FFLAG_XADDR);
	ASSERT_EQ(info.o.size, 16);
	b.len = 0;
	pmt_expr__dump(&b, &t.v[info.o.off]);
	ASSERT_STREQ(pmt_buf__cstr(&b), "operand src12@0:8\nload u64 32\nconst 16\nadd u64\n");
	/* the anonymous struct's member is found through it; an element */
	ASSERT_EQ(pmt_expr__compile(&t, "curtask->x + curtask->comm[2]", fmt, "t", "--by",
				    &fake_types, &info, &err),
		  0);
	ASSERT_EQ(pmt_expr__compile(&t, "str(curtask->real_parent)", fmt, "t", "--by", &fake_types,
				    &info, &err),
		  0);
	ASSERT_TRUE(info.is_str && !info.o.size);
	/* an unsigned short is read zero-extended (then an int of the same
	 * value): 0xba82 stays 47746 */
	ASSERT_EQ(pmt_expr__compile(&t, "curtask->port >> 8", fmt, "t", "--by", &fake_types, &info,
				    &err),
		  0);
	b.len = 0;
	pmt_expr__dump(&b, &t.v[info.o.off]);
	ASSERT_STREQ(pmt_buf__cstr(&b), "operand src12@0:8\nload u32 52\nconst 8\nshr s32\n");
	/* *E: 8 bytes at a number's address (kaddr's); a typed pointer's
	 * pointee (the parent's task_struct is a struct: refused) */
	ASSERT_EQ(pmt_expr__compile(&t, "*kaddr(\"pid_max\") & 0xffffffff", fmt, "t", "--by",
				    &fake_types, &info, &err),
		  0);
	b.len = 0;
	pmt_expr__dump(&b, &t.v[info.o.off]);
	ASSERT_STREQ(pmt_buf__cstr(&b), "const 18446744071606108176\nload u64 0\nconst 4294967295\n"
					"and u64\n");
	ASSERT_TRUE(pmt_expr__compile(&t, "*curtask->real_parent", fmt, "t", "--by", &fake_types,
				      &info, &err) != 0);
	ASSERT_STREQ(err.msg,
		     "--by: '*' of a pointer to struct task_struct: name a member with ->");
	pmt_error__clear(&err);
	ASSERT_TRUE(pmt_expr__compile(&t, "kaddr(\"pid_maxx\")", fmt, "t", "--by", &fake_types,
				      &info, &err) != 0);
	ASSERT_STREQ(err.msg, "--by: no kernel symbol 'pid_maxx' in /proc/kallsyms");
	ASSERT_EQ(err.pos, 7);
	pmt_error__clear(&err);
	ASSERT_TRUE(pmt_expr__compile(&t, "kaddr(pid_max)", fmt, "t", "--by", &fake_types, &info,
				      &err) != 0);
	ASSERT_STREQ(err.msg, "--by: kaddr takes a kernel symbol's name in quotes: "
			      "kaddr(\"avenrun\")");
	pmt_error__clear(&err);
	/* a bare curtask is its operand */
	ASSERT_EQ(pmt_expr__compile(&t, "curtask", fmt, "t", "--by", &fake_types, &info, &err), 0);
	ASSERT_EQ(info.o.src, PMT_FSRC_TASK);
	/* a tracepoint's field its format types "struct task_struct *" (a
	 * syscall's user pointer, say): the struct found by its name; a
	 * pointer to anything else is a number */
	pf = pmt_format__add(fmt, "p", "struct task_struct *", 48, 8, PMT_F_PTR);
	ASSERT_TRUE(pf != NULL);
	ASSERT_EQ(pmt_expr__compile(&t, "p->pid", fmt, "t", "--by", &fake_types, &info, &err), 0);
	b.len = 0;
	pmt_expr__dump(&b, &t.v[info.o.off]);
	ASSERT_STREQ(pmt_buf__cstr(&b), "operand src0@48:8\nload s32 8\n");
	ASSERT_TRUE(pmt_format__add(fmt, "q", "const char * const *", 56, 8, PMT_F_PTR) != NULL);
	ASSERT_TRUE(pmt_expr__compile(&t, "q->pid", fmt, "t", "--by", &fake_types, &info, &err) !=
		    0);
	ASSERT_STREQ(err.msg, "--by: '->' needs a pointer to a struct or union: this is a number");
	pmt_error__clear(&err);
	/* a parameter typed by BTF (fentry's "struct task_struct *p") */
	pf->btf_type = 5;
	ASSERT_EQ(pmt_expr__compile(&t, "p->real_parent->pid", fmt, "t", "--by", &fake_types, &info,
				    &err),
		  0);
	b.len = 0;
	pmt_expr__dump(&b, &t.v[info.o.off]);
	ASSERT_STREQ(pmt_buf__cstr(&b), "operand src0@48:8\nload u64 32\nload s32 8\n");
	pmt_buf__free(&b);
	pmt_exprs__free(&t);
	pmt_format__free(fmt);
}

static const struct {
	const char *text, *want;
} chain_diagnostics[] = {
	{"curtask->real_parnt->pid", "--by: struct task_struct has no member 'real_parnt'\n"
				     "  curtask->real_parnt->pid\n"
				     "           ^~~~~~~~~~\n"
				     "hint: did you mean real_parent?\n"},
	{"curtask->flags", "--by: member 'flags' of struct task_struct is a bitfield: not read\n"
			   "  curtask->flags\n"
			   "           ^~~~~\n"},
	{"curtask.pid", "--by: '.' needs a struct or union: this is a pointer (use ->)\n"
			"  curtask.pid\n"
			"  ^~~~~~~~\n"},
	{"curtask->pid->x", "--by: '->' needs a pointer to a struct or union: this is a number\n"
			    "  curtask->pid->x\n"
			    "  ^~~~~~~~~~~~~~\n"},
	{"curtask->comm + 1", "--by: a string is a whole key's value, not an operand: compare "
			      "strings in a filter\n"
			      "  curtask->comm + 1\n"
			      "  ^~~~~~~~~~~~~\n"},
	{"curtask->comm[16]", "--by: index 16 past the array's 16 elements\n"
			      "  curtask->comm[16]\n"
			      "                ^~\n"},
	{"curtask->real_parent->real_parent->real_parent->real_parent->real_parent->real_parent->"
	 "real_parent->real_parent->pid",
	 "--by: a chain of at most 8 members\n"
	 "  curtask->real_parent->real_parent->real_parent->real_parent->real_parent->real_parent->"
	 "real_parent->real_parent->pid\n"
	 "  ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~"
	 "~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"},
};

TEST(expr_member_chain_diagnostics)
{
	struct pmt_format *fmt = narrow_format();
	struct pmt_exprs t = {0};
	struct pmt_opinfo info;
	struct pmt_buf b = {0};
	struct pmt_error err = {0};
	size_t i;

	ASSERT_TRUE(fmt);
	for (i = 0; i < sizeof(chain_diagnostics) / sizeof(chain_diagnostics[0]); i++) {
		pmt_error__clear(&err);
		b.len = 0;
		if (!pmt_expr__compile(&t, chain_diagnostics[i].text, fmt, "t", "--by", &fake_types,
				       &info, &err)) {
			FAIL_AT("'%s': compiled", chain_diagnostics[i].text);
			continue;
		}
		pmt_error__format(&b, &err);
		if (strcmp(pmt_buf__cstr(&b), chain_diagnostics[i].want))
			FAIL_AT("'%s':\n    got:      %s\n    expected: %s",
				chain_diagnostics[i].text, b.p, chain_diagnostics[i].want);
	}
	/* without the kernel's types */
	pmt_error__clear(&err);
	b.len = 0;
	ASSERT_TRUE(pmt_expr__compile(&t, "curtask->pid", fmt, "t", "--by", NULL, &info, &err) !=
		    0);
	pmt_error__format(&b, &err);
	ASSERT_STREQ(pmt_buf__cstr(&b), "--by: curtask needs the kernel's types (BTF, "
					"/sys/kernel/btf/vmlinux): none here\n"
					"  curtask->pid\n"
					"  ^~~~~~~\n");
	pmt_buf__free(&b);
	pmt_exprs__free(&t);
	pmt_format__free(fmt);
}
