// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Expression compiler (expr.h): lex -> parse into a typed tree (operands
 * resolved and types computed as C computes them) -> postfix code. A
 * tree without operands is folded into its value here; a bare operand
 * needs no code at all.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "filter/expr.h"
#include "util/grow.h"

/* tokens: the operators by their text, and three kinds */
enum { X_END = 256, X_INT, X_NAME };

struct xtok {
	int kind; /* a character, a two-character operator's code, or X_* */
	int pos, len;
	uint64_t num;
	bool hex; /* an integer written in hex (or octal): C types it another way */
};

/* two-character operators */
enum { X_SHL = 300, X_SHR, X_LE, X_GE, X_EQ, X_NE, X_LAND, X_LOR };

struct xtype {
	uint8_t bits; /* 32 or 64 */
	bool is_signed;
};

struct xnode {
	int op; /* X_INT, X_NAME, a unary ('-' '~' '!' as 'u' << 8 | c) or binary operator */
	struct xnode *a, *b;
	struct xtype t;
	uint64_t num;		/* X_INT */
	struct pmt_operand opd; /* X_NAME */
};

#define UNARY(c) ('u' << 8 | (c))

struct xparser {
	const char *src, *what, *probe;
	const struct pmt_format *fmt;
	struct pmt_error *err;
	struct xtok tok;
	int depth;
	bool failed;
};

static int xerr(struct xparser *p, int pos, int len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int xerr(struct xparser *p, int pos, int len, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (p->failed)
		return -EINVAL;
	p->failed = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pmt_error__usage(p->err, "%s: %s", p->what, msg);
	pmt_error__caret(p->err, p->src, pos, len);
	return -EINVAL;
}

/* --- lexer --------------------------------------------------------------- */

static bool ident_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       (!first && c >= '0' && c <= '9');
}

static int lex(struct xparser *p)
{
	static const struct {
		char text[3];
		int kind;
	} two[] = {
		{"<<", X_SHL}, {">>", X_SHR}, {"<=", X_LE},   {">=", X_GE},
		{"==", X_EQ},  {"!=", X_NE},  {"&&", X_LAND}, {"||", X_LOR},
	};
	const char *s = p->src;
	int i = p->tok.pos + p->tok.len, j;
	size_t k;
	char *end;

	while (s[i] == ' ' || s[i] == '\t')
		i++;
	p->tok = (struct xtok){.pos = i};
	if (!s[i]) {
		p->tok.kind = X_END;
		return 0;
	}
	for (k = 0; k < sizeof(two) / sizeof(two[0]); k++) {
		if (s[i] == two[k].text[0] && s[i + 1] == two[k].text[1]) {
			p->tok.kind = two[k].kind;
			p->tok.len = 2;
			return 0;
		}
	}
	if (strchr("+-*/%&|^~!<>()", s[i])) {
		p->tok.kind = (unsigned char)s[i];
		p->tok.len = 1;
		return 0;
	}
	if (s[i] >= '0' && s[i] <= '9') {
		errno = 0;
		p->tok.num = strtoull(s + i, &end, 0);
		p->tok.len = (int)(end - (s + i));
		if (errno == ERANGE)
			return xerr(p, i, p->tok.len, "number too large for 64 bits");
		if (ident_char(*end, false))
			return xerr(p, i, p->tok.len + 1, "bad number: expected digits or 0x hex");
		p->tok.kind = X_INT;
		p->tok.hex = s[i] == '0' && p->tok.len > 1;
		return 0;
	}
	if (ident_char(s[i], true)) {
		for (j = i; ident_char(s[j], false); j++)
			;
		/* str(NAME): one name, a string */
		if (j - i == 3 && !strncmp(s + i, "str", 3) && s[j] == '(') {
			int e = j + 1;

			while (ident_char(s[e], false))
				e++;
			if (s[e] == ')')
				j = e + 1;
		}
		p->tok.kind = X_NAME;
		p->tok.len = j - i;
		return 0;
	}
	return xerr(p, i, 1, "unexpected character '%c'", s[i]);
}

/* --- types --------------------------------------------------------------- */

/* C's integer promotion: narrower than int becomes int */
static struct xtype promote(struct xtype t)
{
	return t.bits < 32 ? (struct xtype){32, true} : t;
}

/* C's usual arithmetic conversions (of promoted types) */
static struct xtype common(struct xtype a, struct xtype b)
{
	struct xtype u, s;

	if (a.bits == b.bits && a.is_signed == b.is_signed)
		return a;
	if (a.is_signed == b.is_signed)
		return a.bits > b.bits ? a : b;
	u = a.is_signed ? b : a;
	s = a.is_signed ? a : b;
	/* the signed type wins only where it holds every unsigned value */
	return u.bits >= s.bits ? u : s;
}

/* A literal's type: int, long, then unsigned long; hex also tries the
 * unsigned type of each width (C 6.4.4.1) */
static struct xtype literal_type(uint64_t v, bool hex)
{
	if (v <= INT32_MAX)
		return (struct xtype){32, true};
	if (hex && v <= UINT32_MAX)
		return (struct xtype){32, false};
	if (v <= INT64_MAX)
		return (struct xtype){64, true};
	return (struct xtype){64, false};
}

/* --- parser -------------------------------------------------------------- */

static void xfree(struct xnode *n)
{
	if (!n)
		return;
	xfree(n->a);
	xfree(n->b);
	free(n);
}

static struct xnode *xnew(struct xparser *p, int op, struct xnode *a, struct xnode *b)
{
	struct xnode *n = calloc(1, sizeof(*n));

	if (!n) {
		if (!p->failed)
			pmt_error__runtime(p->err, -ENOMEM, "%s: out of memory", p->what);
		p->failed = true;
		xfree(a);
		xfree(b);
		return NULL;
	}
	n->op = op;
	n->a = a;
	n->b = b;
	return n;
}

static struct xnode *parse_binary(struct xparser *p, int min_prec);

static struct xnode *parse_name(struct xparser *p)
{
	struct pmt_opinfo info;
	struct pmt_buf b = {0};
	char name[128];
	struct xnode *n;
	int r;

	snprintf(name, sizeof(name), "%.*s", p->tok.len, p->src + p->tok.pos);
	r = pmt_operand__resolve(p->fmt, name, &info);
	if (!r && info.is_str) {
		xerr(p, p->tok.pos, p->tok.len, "'%s' is a string: expressions compute numbers",
		     name);
		return NULL;
	}
	if (r) {
		if (r == PMT_OPERAND_NOT_PTR)
			pmt_operand__not_ptr(&b, name, &info);
		else if (r == PMT_OPERAND_ARRAY)
			pmt_buf__printf(&b, "'%s' is an array: expressions compute numbers", name);
		else
			pmt_buf__printf(&b, "unknown field '%s' for %s", name, p->probe);
		xerr(p, p->tok.pos, p->tok.len, "%s", pmt_buf__cstr(&b));
		if (r == PMT_OPERAND_UNKNOWN) {
			b.len = 0;
			pmt_operand__hint(&b, p->fmt, p->probe, name);
			pmt_error__hint(p->err, "%s", pmt_buf__cstr(&b));
		}
		pmt_buf__free(&b);
		return NULL;
	}
	n = xnew(p, X_NAME, NULL, NULL);
	if (!n)
		return NULL;
	n->opd = info.o;
	n->t = promote((struct xtype){(uint8_t)(info.o.size * 8), info.is_signed});
	return lex(p) ? (xfree(n), NULL) : n;
}

static struct xnode *parse_unary(struct xparser *p)
{
	struct xnode *n;
	int op = p->tok.kind, pos = p->tok.pos;

	if (++p->depth > 32) {
		xerr(p, p->tok.pos, p->tok.len, "expression nested too deeply (at most 32 levels)");
		return NULL;
	}
	if (op == '-' || op == '~' || op == '!') {
		if (lex(p) || !(n = parse_unary(p)))
			return NULL;
		n = xnew(p, UNARY(op), n, NULL);
		if (n)
			n->t = op == '!' ? (struct xtype){32, true} : n->a->t;
	} else if (op == '(') {
		if (lex(p) || !(n = parse_binary(p, 1)))
			return NULL;
		if (p->tok.kind != ')') {
			xerr(p, p->tok.kind == X_END ? pos : p->tok.pos,
			     p->tok.kind == X_END ? 1 : p->tok.len,
			     p->tok.kind == X_END ? "unbalanced '(': a ')' is missing"
						  : "expected ')'");
			xfree(n);
			return NULL;
		}
		if (lex(p)) {
			xfree(n);
			return NULL;
		}
	} else if (op == X_INT) {
		n = xnew(p, X_INT, NULL, NULL);
		if (!n)
			return NULL;
		n->num = p->tok.num;
		n->t = literal_type(p->tok.num, p->tok.hex);
		if (lex(p)) {
			xfree(n);
			return NULL;
		}
	} else if (op == X_NAME) {
		n = parse_name(p);
	} else {
		xerr(p, p->tok.pos, p->tok.len ? p->tok.len : 1,
		     op == X_END ? "expected a value, but the expression ends here"
				 : "expected a value: a field, a number, '(' or a unary - ~ !");
		return NULL;
	}
	p->depth--;
	return n;
}

/* C's precedence, higher binds tighter; 0: not a binary operator */
static int precedence(int op)
{
	switch (op) {
	case '*':
	case '/':
	case '%': return 10;
	case '+':
	case '-': return 9;
	case X_SHL:
	case X_SHR: return 8;
	case '<':
	case '>':
	case X_LE:
	case X_GE: return 7;
	case X_EQ:
	case X_NE: return 6;
	case '&': return 5;
	case '^': return 4;
	case '|': return 3;
	case X_LAND: return 2;
	case X_LOR: return 1;
	}
	return 0;
}

static struct xtype binary_type(int op, struct xtype a, struct xtype b)
{
	switch (op) {
	case X_SHL:
	case X_SHR: return a;
	case '<':
	case '>':
	case X_LE:
	case X_GE:
	case X_EQ:
	case X_NE:
	case X_LAND:
	case X_LOR: return (struct xtype){32, true};
	}
	return common(a, b);
}

/* precedence climbing: operators of min_prec and above, left to right */
static struct xnode *parse_binary(struct xparser *p, int min_prec)
{
	struct xnode *l = parse_unary(p), *r;
	int op, prec;

	while (l && (prec = precedence(p->tok.kind)) && prec >= min_prec) {
		op = p->tok.kind;
		if (lex(p) || !(r = parse_binary(p, prec + 1))) {
			xfree(l);
			return NULL;
		}
		l = xnew(p, op, l, r);
		if (l)
			l->t = binary_type(op, l->a->t, l->b->t);
	}
	return l;
}

/* --- code ---------------------------------------------------------------- */

/* operations one expression may take: a probe's program holds several */
#define EXPR_OPS 32

struct xcode {
	struct pmt_expr x;
	int sp, max_sp;
	bool too_long, has_operand;
};

static void put(struct xcode *c, uint8_t code, struct xtype t, int sp_change)
{
	struct pmt_expr_op *op;

	if (c->x.n >= EXPR_OPS) {
		c->too_long = true;
		return;
	}
	op = &c->x.op[c->x.n++];
	op->code = code;
	op->flags = (uint8_t)((t.is_signed ? PMT_XF_SIGNED : 0) | (t.bits == 32 ? PMT_XF_32 : 0));
	c->sp += sp_change;
	if (c->sp > c->max_sp)
		c->max_sp = c->sp;
}

static void emit(struct xcode *c, const struct xnode *n)
{
	static const struct {
		int op;
		uint8_t code;
		bool swap; /* a > b is b < a */
	} bin[] = {
		{'+', PMT_X_ADD, false},   {'-', PMT_X_SUB, false},	{'*', PMT_X_MUL, false},
		{'/', PMT_X_DIV, false},   {'%', PMT_X_MOD, false},	{'&', PMT_X_AND, false},
		{'|', PMT_X_OR, false},	   {'^', PMT_X_XOR, false},	{X_SHL, PMT_X_SHL, false},
		{X_SHR, PMT_X_SHR, false}, {X_EQ, PMT_X_EQ, false},	{X_NE, PMT_X_NE, false},
		{'<', PMT_X_LT, false},	   {X_LE, PMT_X_LE, false},	{'>', PMT_X_LT, true},
		{X_GE, PMT_X_LE, true},	   {X_LAND, PMT_X_LAND, false}, {X_LOR, PMT_X_LOR, false},
	};
	struct xtype work;
	size_t i;

	switch (n->op) {
	case X_INT:
		put(c, PMT_X_CONST, n->t, 1);
		if (!c->too_long)
			c->x.op[c->x.n - 1].k = n->num;
		return;
	case X_NAME:
		put(c, PMT_X_OPERAND, n->t, 1);
		if (!c->too_long)
			c->x.op[c->x.n - 1].o = n->opd;
		c->has_operand = true;
		return;
	case UNARY('-'):
		emit(c, n->a);
		put(c, PMT_X_NEG, n->t, 0);
		return;
	case UNARY('~'):
		emit(c, n->a);
		put(c, PMT_X_NOT, n->t, 0);
		return;
	case UNARY('!'):
		emit(c, n->a);
		put(c, PMT_X_LNOT, n->t, 0);
		return;
	}
	for (i = 0; i < sizeof(bin) / sizeof(bin[0]) && bin[i].op != n->op; i++)
		;
	emit(c, bin[i].swap ? n->b : n->a);
	emit(c, bin[i].swap ? n->a : n->b);
	/* the type the operation works in: a comparison's operands' */
	work = n->op == X_SHL || n->op == X_SHR	   ? n->t
	       : n->op == X_LAND || n->op == X_LOR ? (struct xtype){64, false}
						   : common(n->a->t, n->b->t);
	put(c, bin[i].code, work, -1);
}

/* --- evaluation (the kernel's, bpf/expr.bpf.h) ---------------------------- */

static uint64_t to_type(uint64_t v, uint8_t flags)
{
	if (!(flags & PMT_XF_32))
		return v;
	return flags & PMT_XF_SIGNED ? (uint64_t)(int64_t)(int32_t)v : (uint64_t)(uint32_t)v;
}

static uint64_t sdiv(uint64_t a, uint64_t b, bool mod)
{
	uint64_t ua = (int64_t)a < 0 ? -a : a, ub = (int64_t)b < 0 ? -b : b;
	uint64_t q = ua / ub, r = ua % ub;

	if (mod)
		return (int64_t)a < 0 ? -r : r;
	return ((int64_t)a < 0) != ((int64_t)b < 0) ? -q : q;
}

uint64_t pmt_expr__eval(const struct pmt_expr *x, pmt_expr_load_fn load, void *arg, uint64_t *slots)
{
	uint64_t st[PMT_EXPR_STACK] = {0}, a, b, r, top = 0;
	uint32_t i, sp = 0;

	for (i = 0; i < x->n && i < PMT_EXPR_OPS; i++) {
		const struct pmt_expr_op *op = &x->op[i];
		bool sg = op->flags & PMT_XF_SIGNED;
		unsigned width = op->flags & PMT_XF_32 ? 32 : 64;

		if (op->code == PMT_X_OPERAND || op->code == PMT_X_CONST) {
			if (sp >= PMT_EXPR_STACK)
				return 0;
			st[sp++] = op->code == PMT_X_CONST ? op->k : load(&op->o, arg);
			continue;
		}
		if (!sp)
			return 0;
		if (op->code == PMT_X_STORE) {
			if (slots)
				slots[op->k % PMT_XSLOTS] = st[sp - 1];
			top = st[--sp];
			continue;
		}
		a = to_type(st[sp - 1], op->flags);
		if (op->code <= PMT_X_LNOT) {
			r = op->code == PMT_X_NEG   ? to_type(-a, op->flags)
			    : op->code == PMT_X_NOT ? to_type(~a, op->flags)
						    : !a;
			st[sp - 1] = r;
			continue;
		}
		if (sp < 2)
			return 0;
		b = a;
		a = to_type(st[sp - 2], op->flags);
		switch (op->code) {
		case PMT_X_ADD: r = a + b; break;
		case PMT_X_SUB: r = a - b; break;
		case PMT_X_MUL: r = a * b; break;
		case PMT_X_DIV: r = !b ? 0 : sg ? sdiv(a, b, false) : a / b; break;
		case PMT_X_MOD: r = !b ? a : sg ? sdiv(a, b, true) : a % b; break;
		case PMT_X_AND: r = a & b; break;
		case PMT_X_OR: r = a | b; break;
		case PMT_X_XOR: r = a ^ b; break;
		case PMT_X_SHL: r = a << (b & (width - 1)); break;
		case PMT_X_SHR:
			r = sg ? (uint64_t)((int64_t)a >> (b & (width - 1)))
			       : a >> (b & (width - 1));
			break;
		case PMT_X_EQ: r = a == b; break;
		case PMT_X_NE: r = a != b; break;
		case PMT_X_LT: r = sg ? (int64_t)a < (int64_t)b : a < b; break;
		case PMT_X_LE: r = sg ? (int64_t)a <= (int64_t)b : a <= b; break;
		case PMT_X_LAND: r = a && b; break;
		case PMT_X_LOR: r = a || b; break;
		default: return 0;
		}
		if (op->code < PMT_X_EQ)
			r = to_type(r, op->flags);
		st[sp - 2] = r;
		sp--;
	}
	return sp ? st[sp - 1] : top;
}

/* --- the table ----------------------------------------------------------- */

bool pmt_expr__is_expression(const char *text)
{
	const char *s = text;

	if (!strncmp(s, "str(", 4))
		return false;
	for (; *s; s++)
		if (!ident_char(*s, false))
			return true;
	return *text >= '0' && *text <= '9';
}

static int add(struct pmt_exprs *t, const struct pmt_expr *x)
{
	struct pmt_expr *v;
	size_t i;

	for (i = 0; i < t->n; i++)
		if (!memcmp(&t->v[i], x, sizeof(*x)))
			return (int)i;
	if (t->n >= PMT_EXPRS)
		return -E2BIG;
	v = pmt_grow(t->v, &t->cap, t->n, sizeof(*v), 4);
	if (!v)
		return -ENOMEM;
	t->v = v;
	t->v[t->n] = *x;
	return (int)t->n++;
}

static uint64_t no_load(const struct pmt_operand *o, void *arg)
{
	(void)o;
	(void)arg;
	return 0;
}

int pmt_expr__compile(struct pmt_exprs *t, const char *text, const struct pmt_format *fmt,
		      const char *probe, const char *what, struct pmt_opinfo *out,
		      struct pmt_error *err)
{
	struct xparser p = {.src = text, .what = what, .probe = probe, .fmt = fmt, .err = err};
	struct xcode c = {0};
	struct xnode *n;
	int idx;

	memset(out, 0, sizeof(*out));
	if (lex(&p))
		return -EINVAL;
	n = parse_binary(&p, 1);
	if (n && p.tok.kind != X_END)
		xerr(&p, p.tok.pos, p.tok.len,
		     p.tok.kind == ')' ? "unbalanced ')'" : "expected an operator or the end");
	if (p.failed) {
		xfree(n);
		return -EINVAL;
	}
	if (n->op == X_NAME) {
		/* a bare name: the operand itself */
		out->o = n->opd;
		out->is_signed = n->opd.flags & PMT_FFLAG_SIGNED;
		xfree(n);
		return 0;
	}
	emit(&c, n);
	out->is_signed = n->t.is_signed;
	xfree(n);
	if (c.too_long)
		return xerr(&p, 0, (int)strlen(text),
			    "expression too long: at most %d operations and values", EXPR_OPS);
	if (c.max_sp > PMT_EXPR_STACK)
		return xerr(&p, 0, (int)strlen(text),
			    "expression too deep: at most %d values pending at once (use fewer "
			    "parentheses on the right)",
			    PMT_EXPR_STACK);
	if (!c.has_operand) {
		/* constant: folded */
		uint64_t v = pmt_expr__eval(&c.x, no_load, NULL, NULL);

		memset(&c.x, 0, sizeof(c.x));
		c.x.n = 1;
		c.x.op[0].code = PMT_X_CONST;
		c.x.op[0].k = v;
	}
	idx = add(t, &c.x);
	if (idx == -E2BIG)
		return xerr(&p, 0, (int)strlen(text), "too many expressions: at most %d a run",
			    PMT_EXPRS);
	if (idx < 0)
		return pmt_error__runtime(err, idx, "%s: out of memory", what);
	out->o.src = PMT_FSRC_EXPR;
	out->o.size = 8;
	out->o.off = (uint16_t)idx;
	out->o.flags = out->is_signed ? PMT_FFLAG_SIGNED : 0;
	return 0;
}

int pmt_exprs__program(struct pmt_exprs *t, const struct pmt_exprs *mine,
		       struct pmt_operand *const *ops, size_t n, uint16_t *prog, const char *probe,
		       struct pmt_error *err)
{
	struct pmt_expr x = {0};
	int slot_of[PMT_EXPRS];
	size_t i;
	uint32_t j, nslots = 0;
	int idx;

	*prog = PMT_XPROG_NONE;
	for (i = 0; i < PMT_EXPRS; i++)
		slot_of[i] = -1;
	for (i = 0; i < n; i++) {
		struct pmt_operand *o = ops[i];
		const struct pmt_expr *e;

		if (o->src != PMT_FSRC_EXPR || o->off >= mine->n)
			continue;
		if (slot_of[o->off] >= 0) {
			o->off = (uint16_t)slot_of[o->off];
			continue;
		}
		e = &mine->v[o->off];
		if (x.n + e->n + 1 > PMT_EXPR_OPS || nslots >= PMT_XSLOTS)
			return pmt_error__usage(err,
						"%s: its expressions take more than %d operations "
						"in all",
						probe, PMT_EXPR_OPS);
		for (j = 0; j < e->n; j++)
			x.op[x.n++] = e->op[j];
		x.op[x.n].code = PMT_X_STORE;
		x.op[x.n++].k = nslots;
		slot_of[o->off] = (int)nslots;
		o->off = (uint16_t)nslots++;
	}
	if (!x.n)
		return 0;
	idx = add(t, &x);
	if (idx == -E2BIG)
		return pmt_error__usage(err, "too many probes with expressions: at most %d",
					PMT_EXPRS);
	if (idx < 0)
		return pmt_error__runtime(err, idx, "out of memory for expressions");
	*prog = (uint16_t)idx;
	return 0;
}

void pmt_exprs__uses(const struct pmt_exprs *t, struct pmt_uses *u)
{
	size_t i, j;

	for (i = 0; i < t->n; i++)
		for (j = 0; j < t->v[i].n && j < PMT_EXPR_OPS; j++)
			if (t->v[i].op[j].code == PMT_X_OPERAND)
				pmt_uses__operand(u, &t->v[i].op[j].o);
}

bool pmt_exprs__needs_record(const struct pmt_exprs *t, const struct pmt_operand *o)
{
	size_t j;

	if (o->src != PMT_FSRC_EXPR)
		return pmt_operand__needs_record(o);
	for (j = 0; t && o->off < t->n && j < t->v[o->off].n && j < PMT_EXPR_OPS; j++)
		if (t->v[o->off].op[j].code == PMT_X_OPERAND &&
		    pmt_operand__needs_record(&t->v[o->off].op[j].o))
			return true;
	return false;
}

void pmt_exprs__free(struct pmt_exprs *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}

void pmt_expr__dump(struct pmt_buf *b, const struct pmt_expr *x)
{
	static const char *const names[PMT_X__MAX] = {
		"operand", "const", "neg", "not",  "lnot", "add",   "sub", "mul",
		"div",	   "mod",   "and", "or",   "xor",  "shl",   "shr", "eq",
		"ne",	   "lt",    "le",  "land", "lor",  "store",
	};
	uint32_t i;

	for (i = 0; i < x->n && i < PMT_EXPR_OPS; i++) {
		const struct pmt_expr_op *op = &x->op[i];

		pmt_buf__printf(b, "%s%s", op->code < PMT_X__MAX ? names[op->code] : "?",
				op->code == PMT_X_OPERAND || op->code == PMT_X_CONST ||
						op->code == PMT_X_STORE
					? ""
				: op->flags & PMT_XF_32
					? (op->flags & PMT_XF_SIGNED ? " s32" : " u32")
				: op->flags & PMT_XF_SIGNED ? " s64"
							    : " u64");
		if (op->code == PMT_X_OPERAND)
			pmt_buf__printf(b, " src%u@%u:%u%s", op->o.src, op->o.off, op->o.size,
					op->o.flags & PMT_FFLAG_SIGNED ? "s" : "");
		else if (op->code == PMT_X_CONST || op->code == PMT_X_STORE)
			pmt_buf__printf(b, " %llu", (unsigned long long)op->k);
		pmt_buf__putc(b, '\n');
	}
}
