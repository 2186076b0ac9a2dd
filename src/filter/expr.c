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
#include "filter/lex.h"
#include "util/grow.h"
#include "util/suggest.h"

/* tokens: the lexer's (lex.h) */
enum { X_END = PMT_TOK_END, X_INT = PMT_TOK_INT, X_NAME = PMT_TOK_NAME };
enum {
	X_SHL = PMT_TOK_SHL,
	X_SHR = PMT_TOK_SHR,
	X_LE = PMT_TOK_LE,
	X_GE = PMT_TOK_GE,
	X_EQ = PMT_TOK_EQ,
	X_NE = PMT_TOK_NE,
	X_LAND = PMT_TOK_LAND,
	X_LOR = PMT_TOK_LOR,
	X_ARROW = PMT_TOK_ARROW,
};
/* tree nodes of member chains: a load of a member, an offset into an
 * object, a string at an address */
enum {
	X_LOADN = 400,
	X_OFFN,
	X_STRN,
	X_VARN,	  /* a saved value: num its variable */
	X_SVARN,  /* a saved string (its address): num its variable */
	X_STRLIT, /* "", compared with a string */
	X_TUPLE	  /* (a, b): a saved value's key of two values, nowhere else */
};

/* what a value is: a number, a pointer (its pointee typed), an object in
 * memory (its address: a struct or an array), a string at an address */
enum { V_NUM, V_PTR, V_ADDR, V_STR };

struct xtype {
	uint8_t bits; /* 32 or 64 */
	bool is_signed;
};

struct xnode {
	int op; /* X_INT, X_NAME, a unary ('-' '~' '!' as 'u' << 8 | c) or binary operator;
		 * '?': cond ? a : b */
	struct xnode *a, *b, *cond;
	struct xtype t;
	uint64_t num;		/* X_INT; X_LOADN, X_OFFN: the offset */
	struct pmt_operand opd; /* X_NAME; X_LOADN: o.size, the bytes read */
	int vk;			/* V_*: what the value is */
	int tid;		/* V_PTR: the pointee's type; V_ADDR: the object's */
	uint32_t slen;		/* V_STR: a char array's length (0: unknown) */
	int chain;		/* members walked to here */
	int pos, len;		/* where the value stands, for messages */
	bool has;		/* X_VARN: has_key(), whether its key is there */
};

#define UNARY(c) ('u' << 8 | (c))

struct xparser {
	struct pmt_lexer lx; /* its token: tok */
	const char *src, *what, *probe;
	const struct pmt_format *fmt;
	const struct pmt_typesys *types;
	struct pmt_varnames *vars; /* NULL: no saved values here */
	struct pmt_error *err;
	struct pmt_tok tok;
	int depth;
	bool stmts;    /* statements: '=' ';' too */
	bool want_str; /* a string is wanted: a saved value read bare is one */
	bool in_key;   /* a saved value's key: (a, b) is one of two values */
};

static int xerr(struct xparser *p, int pos, int len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int xerr(struct xparser *p, int pos, int len, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return pmt_lex__error(&p->lx, pos, len, "%s", msg);
}

/* The lexer's next token, one an expression has: no strings, no '='. */
static int lex(struct xparser *p)
{
	if (pmt_lex__next(&p->lx))
		return -EINVAL;
	p->tok = p->lx.tok;
	if (p->tok.kind < 256 && !strchr("+-*/%&|^~!<>().[]?:@", p->tok.kind) &&
	    !(p->stmts && strchr("=;", p->tok.kind)) && !(p->vars && p->tok.kind == ','))
		return xerr(p, p->tok.pos, 1, "unexpected character '%c'", p->src[p->tok.pos]);
	return 0;
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
	xfree(n->cond);
	free(n);
}

static struct xnode *xnew(struct xparser *p, int op, struct xnode *a, struct xnode *b)
{
	struct xnode *n = calloc(1, sizeof(*n));

	if (!n) {
		if (!p->lx.failed)
			pmt_error__runtime(p->err, -ENOMEM, "%s: out of memory", p->what);
		p->lx.failed = true;
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
static void saved_str(struct xnode *n);
static struct xnode *parse_cond(struct xparser *p);
static struct xnode *parse_unary(struct xparser *p);
static bool numeric(struct xparser *p, const struct xnode *n);
static struct xnode *closed(struct xparser *p, struct xnode *n, int close, int errpos,
			    const char *msg);

/* The current task's address (curtask), a task_struct pointer (type id) */
static struct xnode *task_node(struct xparser *p, int id)
{
	struct xnode *n = xnew(p, X_NAME, NULL, NULL);

	if (!n)
		return NULL;
	n->opd.src = PMT_FSRC_TASK;
	n->opd.size = 8;
	n->t = (struct xtype){64, false};
	n->vk = V_PTR;
	n->tid = id;
	return n;
}

/* curtask: the current task_struct, a pointer typed by the kernel's BTF */
static struct xnode *parse_curtask(struct xparser *p)
{
	struct xnode *n;
	int id;

	if (!p->types || p->types->find_struct(p->types->ctx, "task_struct", &id)) {
		xerr(p, p->tok.pos, p->tok.len,
		     "curtask needs the kernel's types (BTF, /sys/kernel/btf/vmlinux): none here");
		return NULL;
	}
	n = task_node(p, id);
	return n && lex(p) ? (xfree(n), NULL) : n;
}

/* comm where a string is wanted: the task's, at its address
 * (curtask->comm); NULL without the kernel's types */
static struct xnode *task_comm(struct xparser *p)
{
	struct xnode *task, *n;
	uint32_t off;
	int id, mtype;

	if (!p->types || p->types->find_struct(p->types->ctx, "task_struct", &id) ||
	    p->types->member(p->types->ctx, id, "comm", &off, &mtype))
		return NULL;
	if (!(task = task_node(p, id)))
		return NULL;
	n = xnew(p, X_OFFN, task, NULL);
	if (!n)
		return NULL;
	n->num = off;
	n->t = (struct xtype){64, false};
	n->vk = V_STR;
	n->slen = 16;
	return n;
}

/* A read of a value of type ti (an integer or a pointer of 1, 2, 4 or 8
 * bytes) at the address base computes, as a node over base. */
static struct xnode *load_node(struct xparser *p, struct xnode *base, const struct pmt_tinfo *ti)
{
	struct xnode *n = xnew(p, X_LOADN, base, NULL);

	if (!n)
		return NULL;
	n->opd.size = (uint8_t)ti->size;
	/* extended as the value is signed; promoted after (an unsigned
	 * short is an int of the same value) */
	n->opd.flags = ti->kind == PMT_TK_INT && ti->is_signed ? PMT_FFLAG_SIGNED : 0;
	n->t = ti->kind == PMT_TK_PTR
		       ? (struct xtype){64, false}
		       : promote((struct xtype){(uint8_t)(ti->size * 8), ti->is_signed});
	n->vk = ti->kind == PMT_TK_PTR ? V_PTR : V_NUM;
	n->tid = ti->target;
	return n;
}

/* The value of member off/mtype of the object at base's value (V_PTR:
 * the pointer's; V_ADDR: the object's address), as a node over base */
static struct xnode *member_value(struct xparser *p, struct xnode *base, uint32_t off, int mtype,
				  const char *mname, int pos, int len)
{
	struct pmt_tinfo ti, et;
	struct xnode *n;

	if (p->types->describe(p->types->ctx, mtype, &ti)) {
		xerr(p, pos, len, "member '%s': its type is not in the kernel's BTF", mname);
		xfree(base);
		return NULL;
	}
	if (ti.kind == PMT_TK_INT || ti.kind == PMT_TK_PTR) {
		if (ti.size != 1 && ti.size != 2 && ti.size != 4 && ti.size != 8) {
			xerr(p, pos, len, "member '%s' is %s (%u bytes): not a size read", mname,
			     ti.name, ti.size);
			xfree(base);
			return NULL;
		}
		if (!(n = load_node(p, base, &ti)))
			return NULL;
	} else if (ti.kind == PMT_TK_STRUCT || ti.kind == PMT_TK_ARRAY) {
		n = xnew(p, X_OFFN, base, NULL);
		if (!n)
			return NULL;
		n->t = (struct xtype){64, false};
		n->vk = V_ADDR;
		n->tid = mtype;
		/* char name[N]: a string */
		if (ti.kind == PMT_TK_ARRAY && !p->types->describe(p->types->ctx, ti.target, &et) &&
		    et.kind == PMT_TK_INT && et.size == 1) {
			n->vk = V_STR;
			n->slen = ti.nelem;
		}
	} else {
		xerr(p, pos, len,
		     "member '%s' is %s: only integers, pointers, structs and arrays "
		     "are read",
		     mname, ti.name);
		xfree(base);
		return NULL;
	}
	n->num = off;
	n->chain = base->chain + 1;
	n->pos = base->pos;
	n->len = pos + len - base->pos;
	if (n->chain > PMT_CHAIN_MAX) {
		xerr(p, n->pos, n->len, "a chain of at most %d members", PMT_CHAIN_MAX);
		xfree(n);
		return NULL;
	}
	return n;
}

/* -> m, . m: the member named by the token after the operator */
static struct xnode *parse_member(struct xparser *p, struct xnode *base, bool arrow)
{
	struct pmt_tinfo ti;
	const char *names[256], *close[1];
	char mname[128];
	uint32_t off;
	int mtype, r, pos = p->tok.pos;
	size_t n;

	if (lex(p) || p->tok.kind != X_NAME) {
		xerr(p, p->tok.pos, p->tok.len ? p->tok.len : 1,
		     "expected a member name after '%s'", arrow ? "->" : ".");
		xfree(base);
		return NULL;
	}
	snprintf(mname, sizeof(mname), "%.*s", p->tok.len, p->src + p->tok.pos);
	if ((arrow && base->vk != V_PTR) || (!arrow && base->vk != V_ADDR) || !p->types ||
	    p->types->describe(p->types->ctx, base->tid, &ti) || ti.kind != PMT_TK_STRUCT) {
		xerr(p, base->pos, pos + 1 + (int)arrow - base->pos,
		     arrow ? "'->' needs a pointer to a struct or union: this is %s"
			   : "'.' needs a struct or union: this is %s",
		     base->vk == V_NUM		   ? "a number"
		     : base->vk == V_STR	   ? "a string"
		     : !arrow && base->vk == V_PTR ? "a pointer (use ->)"
		     : !p->types || p->types->describe(p->types->ctx, base->tid, &ti)
			     ? "of no known type"
		     : base->vk == V_PTR ? "a pointer to something else"
					 : ti.name);
		xfree(base);
		return NULL;
	}
	r = p->types->member(p->types->ctx, base->tid, mname, &off, &mtype);
	if (r == -EOPNOTSUPP) {
		xerr(p, p->tok.pos, p->tok.len, "member '%s' of %s is a bitfield: not read", mname,
		     ti.name);
		xfree(base);
		return NULL;
	}
	if (r) {
		xerr(p, p->tok.pos, p->tok.len, "%s has no member '%s'", ti.name, mname);
		n = p->types->member_names(p->types->ctx, base->tid, names, 256);
		if (pmt_suggest(mname, (char *const *)names, n, close, 1))
			pmt_error__hint(p->err, "did you mean %s?", close[0]);
		xfree(base);
		return NULL;
	}
	pos = p->tok.pos;
	r = p->tok.len;
	if (lex(p)) {
		xfree(base);
		return NULL;
	}
	return member_value(p, base, off, mtype, mname, pos, r);
}

/* [N] of an array in memory, or of a pointer: element N (a constant) */
static struct xnode *parse_index(struct xparser *p, struct xnode *base)
{
	struct pmt_tinfo ti, et;
	int pos = p->tok.pos, epos;
	uint64_t i;

	if (lex(p) || p->tok.kind != X_INT) {
		xerr(p, p->tok.pos, p->tok.len ? p->tok.len : 1,
		     "expected a number: [N] takes a "
		     "constant index");
		xfree(base);
		return NULL;
	}
	i = p->tok.num;
	epos = p->tok.pos;
	if (lex(p) || p->tok.kind != ']') {
		xerr(p, p->tok.pos, p->tok.len ? p->tok.len : 1, "expected ']'");
		xfree(base);
		return NULL;
	}
	if (!p->types || (base->vk != V_ADDR && base->vk != V_PTR && base->vk != V_STR) ||
	    p->types->describe(p->types->ctx, base->tid, &ti) ||
	    (base->vk != V_PTR && ti.kind != PMT_TK_ARRAY)) {
		xerr(p, base->pos, pos + 1 - base->pos, "'[' needs an array or a pointer");
		xfree(base);
		return NULL;
	}
	if (base->vk != V_PTR && i >= ti.nelem) {
		xerr(p, epos, (int)(p->tok.pos - epos), "index %llu past the array's %u elements",
		     (unsigned long long)i, ti.nelem);
		xfree(base);
		return NULL;
	}
	if (base->vk == V_PTR) {
		/* p[i]: the element at the pointer's value */
		if (p->types->describe(p->types->ctx, base->tid, &et) || !et.size) {
			xerr(p, base->pos, pos + 1 - base->pos,
			     "'[' needs a pointer to sized elements");
			xfree(base);
			return NULL;
		}
		return lex(p) ? (xfree(base), NULL)
			      : member_value(p, base, (uint32_t)(i * et.size), base->tid, "[]", pos,
					     2);
	}
	if (p->types->describe(p->types->ctx, ti.target, &et)) {
		xfree(base);
		return NULL;
	}
	/* the array's own address plus i elements */
	if (lex(p)) {
		xfree(base);
		return NULL;
	}
	base->vk = V_ADDR; /* a char array indexed is a char */
	return member_value(p, base, (uint32_t)(i * et.size), ti.target, "[]", pos, 2);
}

/* *E: the value at the kernel address E, typed by E's pointee where
 * the BTF gives it (a pointer's target), else 8 bytes */
static struct xnode *parse_deref(struct xparser *p, int pos)
{
	struct pmt_tinfo ti = {.kind = PMT_TK_INT, .size = 8};
	struct xnode *in, *n;

	if (lex(p) || !(in = parse_unary(p)))
		return NULL;
	if (in->vk != V_PTR && !(in->vk == V_NUM && in->t.bits == 64)) {
		xerr(p, in->pos, in->len, "'*' reads the value at an address: this is %s",
		     in->vk == V_STR	? "a string"
		     : in->vk == V_ADDR ? "a struct or an array"
					: "a number narrower than one");
		xfree(in);
		return NULL;
	}
	if (in->vk == V_PTR && p->types && p->types->describe(p->types->ctx, in->tid, &ti))
		ti = (struct pmt_tinfo){.kind = PMT_TK_INT, .size = 8};
	if ((ti.kind != PMT_TK_INT && ti.kind != PMT_TK_PTR) ||
	    (ti.size != 1 && ti.size != 2 && ti.size != 4 && ti.size != 8)) {
		xerr(p, pos, in->pos + in->len - pos, "'*' of a pointer to %s: %s", ti.name,
		     ti.kind == PMT_TK_STRUCT ? "name a member with ->" : "not a size read");
		xfree(in);
		return NULL;
	}
	if (!(n = load_node(p, in, &ti)))
		return NULL;
	n->chain = in->chain + 1;
	n->pos = pos;
	n->len = in->pos + in->len - pos;
	if (n->chain > PMT_CHAIN_MAX) {
		xerr(p, n->pos, n->len, "a chain of at most %d members", PMT_CHAIN_MAX);
		xfree(n);
		return NULL;
	}
	return n;
}

/* kaddr("SYMBOL"): the kernel symbol's address, a constant */
static struct xnode *parse_kaddr(struct xparser *p)
{
	struct pmt_lexer *lx = &p->lx;
	struct pmt_buf name = {0};
	int pos = p->tok.pos, at, len, r;
	uint64_t addr;
	struct xnode *n;

	/* the string is the lexer's token, not an expression's */
	if (pmt_lex__next(lx) || lx->tok.kind != '(' || pmt_lex__next(lx) ||
	    lx->tok.kind != PMT_TOK_STR || lx->tok.len <= 2) {
		xerr(p, pos, 5, "kaddr takes a kernel symbol's name in quotes: kaddr(\"avenrun\")");
		return NULL;
	}
	at = lx->tok.pos + 1;
	len = lx->tok.len - 2;
	pmt_lex__string(lx, &lx->tok, &name);
	if (pmt_lex__next(lx) || lx->tok.kind != ')') {
		pmt_buf__free(&name);
		xerr(p, pos, 5, "kaddr takes a kernel symbol's name in quotes: kaddr(\"avenrun\")");
		return NULL;
	}
	if (!p->types || !p->types->ksym) {
		pmt_buf__free(&name);
		xerr(p, pos, at + len + 2 - pos, "kaddr needs the kernel's symbols: none here");
		return NULL;
	}
	r = p->types->ksym(p->types->ctx, pmt_buf__cstr(&name), &addr);
	if (r) {
		xerr(p, at, len, "no kernel symbol '%s' in /proc/kallsyms%s", pmt_buf__cstr(&name),
		     r == -ENODATA ? ", which lists no variables on this kernel (built without "
				     "CONFIG_KALLSYMS_ALL)"
		     : r == -EPERM ? " that this user may see"
				   : "");
		pmt_buf__free(&name);
		return NULL;
	}
	pmt_buf__free(&name);
	n = xnew(p, X_INT, NULL, NULL);
	if (!n)
		return NULL;
	n->num = addr;
	n->t = (struct xtype){64, false};
	n->pos = pos;
	n->len = at + len + 2 - pos;
	return lex(p) ? (xfree(n), NULL) : n;
}

/* bswap(E): E's bytes in the other order, as many as its type has (a
 * member or field its own size: tcpconnect.bt's __be16 skc_dport is 2;
 * one byte as it is), its type unsigned */
static struct xnode *parse_bswap(struct xparser *p)
{
	int pos = p->tok.pos;
	struct xnode *e, *n;
	unsigned w;

	if (lex(p) || lex(p) || !(e = parse_cond(p)))
		return NULL;
	if (!(e = closed(p, e, ')', pos, "expected ')': bswap(E)")))
		return NULL;
	if (!numeric(p, e)) {
		xfree(e);
		return NULL;
	}
	w = e->opd.size ? e->opd.size : e->t.bits / 8u; /* a member's, a field's, a cast's */
	if (w == 1)
		return e; /* one byte: as it is, as bpftrace's */
	if (w != 2 && w != 4 && w != 8)
		w = e->t.bits / 8u;
	n = xnew(p, UNARY('b'), e, NULL);
	if (n) {
		n->num = w;
		n->t = (struct xtype){w == 8 ? 64 : 32, false};
	}
	return n;
}

/* str(E): the string at the address E holds */
static struct xnode *parse_str(struct xparser *p)
{
	struct xnode *n, *in;
	int pos = p->tok.pos;

	if (lex(p) || lex(p) || !(in = parse_binary(p, 1)))
		return NULL;
	if (p->tok.kind != ')') {
		xerr(p, p->tok.pos, p->tok.len ? p->tok.len : 1, "expected ')' after str(...");
		xfree(in);
		return NULL;
	}
	if (in->vk != V_PTR && in->vk != V_STR && !(in->vk == V_NUM && in->t.bits == 64)) {
		xerr(p, in->pos, in->len, "str() reads the string at an address: this is %s",
		     in->vk == V_ADDR ? "a struct or an array" : "a number narrower than one");
		xfree(in);
		return NULL;
	}
	if (in->vk == V_STR) /* str() of a char array: itself */
		n = in;
	else if ((n = xnew(p, X_STRN, in, NULL))) {
		n->vk = V_STR;
		n->t = (struct xtype){64, false};
		n->chain = in->chain;
	}
	if (n) {
		n->pos = pos;
		n->len = p->tok.pos + 1 - pos;
	}
	return lex(p) ? (xfree(n), NULL) : n;
}

/* A function parameter typed by the kernel's BTF (fentry/fexit) that is
 * a pointer: member chains start from it, as from curtask. */
/* A field a tracepoint's format types "struct NAME *" (a syscall's
 * user pointer, say): that struct's BTF id, by its name; 0 if none. */
static int format_struct(struct xparser *p, const struct pmt_field *f)
{
	const char *t = f->type ? f->type : "", *e, *star;
	char name[128];
	int id;

	if (!strncmp(t, "const ", 6))
		t += 6;
	if (strncmp(t, "struct ", 7))
		return 0;
	t += 7;
	e = t + strcspn(t, " *");
	star = strchr(e, '*');
	if (e == t || (size_t)(e - t) >= sizeof(name) || !star || strchr(star + 1, '*'))
		return 0; /* one pointer to a struct, no more */
	memcpy(name, t, (size_t)(e - t));
	name[e - t] = '\0';
	return p->types->find_struct(p->types->ctx, name, &id) ? 0 : id;
}

static void typed_pointer(struct xparser *p, struct xnode *n, const struct pmt_field *f)
{
	struct pmt_tinfo ti;
	int id;

	if (!f || !p->types || f->kind != PMT_F_PTR)
		return;
	if (!f->btf_type) {
		if ((id = format_struct(p, f))) {
			n->vk = V_PTR;
			n->tid = id;
		}
		return;
	}
	if (p->types->describe(p->types->ctx, f->btf_type, &ti) || ti.kind != PMT_TK_PTR)
		return;
	n->vk = V_PTR;
	n->tid = ti.target;
}

/* The kernel headers' constants bpftrace's tools name (#include
 * <linux/sched.h>: TASK_RUNNING; <linux/socket.h>: AF_INET): macros,
 * which BTF does not keep. */
static bool constant(const char *name, struct xnode **out)
{
	static const struct {
		const char *name;
		int value;
	} macros[] = {
		{"TASK_RUNNING", 0},
		{"TASK_INTERRUPTIBLE", 1},
		{"TASK_UNINTERRUPTIBLE", 2},
		{"AF_UNIX", 1},
		{"AF_INET", 2},
		{"AF_INET6", 10},
	};
	size_t i;

	for (i = 0; i < sizeof(macros) / sizeof(macros[0]); i++)
		if (!strcmp(name, macros[i].name)) {
			*out = calloc(1, sizeof(**out));
			if (*out) {
				(*out)->op = X_INT;
				(*out)->num = (uint64_t)macros[i].value;
				(*out)->t = (struct xtype){32, true};
			}
			return *out != NULL;
		}
	return false;
}

/* An enumerator of the kernel's enums (bpftrace reads them from BTF:
 * tcpdrop.bt's SKB_DROP_REASON_NOT_SPECIFIED), a constant; NULL where
 * none is named so (a name in capitals alone is looked for) */
static struct xnode *enumerator(struct xparser *p, const char *name)
{
	struct xnode *n;
	int64_t v;
	size_t i;

	for (i = 0; name[i]; i++)
		if (!(name[i] == '_' || (name[i] >= 'A' && name[i] <= 'Z') ||
		      (i && name[i] >= '0' && name[i] <= '9')))
			return NULL;
	if (!p->types || !p->types->enumerator || p->types->enumerator(p->types->ctx, name, &v))
		return NULL;
	if (!(n = xnew(p, X_INT, NULL, NULL)))
		return NULL;
	n->num = (uint64_t)v;
	n->t = v >= INT32_MIN && v <= INT32_MAX ? (struct xtype){32, true}
						: (struct xtype){64, true};
	return n;
}

/* args.F or args->F (the lexer at args): the record's field F whatever
 * its name (bpftrace's spelling; a bare builtin's name is the builtin in a
 * program): name "args.F", the tokens taken, p->tok spanning them. 0: not
 * that. */
static int args_field(struct xparser *p, char *name, size_t size)
{
	struct pmt_lexer lx = p->lx;
	int pos = p->tok.pos;

	if (p->tok.len != 4 || strncmp(p->src + pos, "args", 4) || pmt_lex__next(&lx) ||
	    (lx.tok.kind != X_ARROW && lx.tok.kind != '.') || pmt_lex__next(&lx) ||
	    lx.tok.kind != X_NAME)
		return 0;
	snprintf(name, size, "args.%.*s", lx.tok.len, p->src + lx.tok.pos);
	p->lx = lx;
	p->tok = lx.tok;
	p->tok.pos = pos;
	p->tok.len = lx.tok.pos + lx.tok.len - pos;
	return 1;
}

static struct xnode *parse_name(struct xparser *p)
{
	struct pmt_opinfo info;
	struct pmt_buf b = {0};
	char name[128];
	struct xnode *n;
	int r;

	if (!args_field(p, name, sizeof(name)))
		snprintf(name, sizeof(name), "%.*s", p->tok.len, p->src + p->tok.pos);
	r = pmt_operand__resolve(p->fmt, name, &info);
	if (r == PMT_OPERAND_UNKNOWN && !strcmp(name, "curtask"))
		return parse_curtask(p);
	if (r == PMT_OPERAND_UNKNOWN && constant(name, &n))
		return lex(p) ? (xfree(n), NULL) : n;
	if (r == PMT_OPERAND_UNKNOWN && (n = enumerator(p, name)))
		return lex(p) ? (xfree(n), NULL) : n;
	if (r == PMT_OPERAND_UNKNOWN && (!strcmp(name, "nsecs") || !strcmp(name, "elapsed"))) {
		/* bpftrace's: the time now, in ns (a program's start times),
		 * and since pmtrace began */
		r = 0;
		memset(&info, 0, sizeof(info));
		info.o.src = name[0] == 'n' ? PMT_FSRC_NSECS : PMT_FSRC_ELAPSED;
		info.o.size = 8;
	}
	if (r == PMT_OPERAND_UNKNOWN && p->stmts &&
	    (!strcmp(name, "func") || !strcmp(name, "probe"))) {
		/* a program's saved func or probe: the probe's id here, its
		 * name where printf shows the saved value */
		r = 0;
		memset(&info, 0, sizeof(info));
		info.o.src = PMT_FSRC_PROBE;
		info.o.size = 4;
	}
	if (!r && info.is_str && p->stmts && info.o.src == PMT_FSRC_COMM) {
		/* saved as a string (the task's comm, PMT_XF_COMM) */
		n = xnew(p, X_NAME, NULL, NULL);
		if (!n)
			return NULL;
		n->opd = info.o;
		n->vk = V_STR;
		n->t = (struct xtype){64, false};
		return lex(p) ? (xfree(n), NULL) : n;
	}
	if (!r && info.is_str && info.o.src == PMT_FSRC_COMM && (n = task_comm(p)))
		return lex(p) ? (xfree(n), NULL) : n;
	if (!r && info.is_str) {
		xerr(p, p->tok.pos, p->tok.len,
		     p->stmts ? "a map saves comm, str(ADDRESS) or a char array as a string: not "
				"'%s', a field of the record"
			      : "'%s' is a string: expressions compute numbers",
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
	typed_pointer(p, n, info.field);
	return lex(p) ? (xfree(n), NULL) : n;
}

/* The token closing what n was read in (close), passed: n; else msg
 * said (at errpos, or -1: the token) and n freed: NULL */
static struct xnode *closed(struct xparser *p, struct xnode *n, int close, int errpos,
			    const char *msg)
{
	if (p->tok.kind != close) {
		xerr(p, errpos >= 0 ? errpos : p->tok.pos,
		     errpos >= 0 || !p->tok.len ? 1 : p->tok.len, "%s", msg);
		xfree(n);
		return NULL;
	}
	if (lex(p)) {
		xfree(n);
		return NULL;
	}
	return n;
}

/* The number of the saved value named name (len bytes): a new one
 * numbered on first sight; -1 when there are too many (reported) */
static int var_id(struct xparser *p, const char *name, int len, int pos)
{
	struct pmt_varnames *v = p->vars;
	int id;

	if (!v) {
		xerr(p, pos, len + 1,
		     "@%.*s: maps are a program's (pmtrace FILE.bt, or -e 'PROGRAM'), read where "
		     "it saved them",
		     len, name);
		return -1;
	}
	if ((id = pmt_varnames__id(v, name, (size_t)len)) < 0)
		xerr(p, pos, len + 1,
		     v->n == PMT_VARS ? "more than %d maps of saved values in one program"
				      : "a map's name is shorter than %d characters",
		     v->n == PMT_VARS ? PMT_VARS : (int)sizeof(v->name[0]));
	return id;
}

int pmt_varnames__id(struct pmt_varnames *v, const char *name, size_t len)
{
	uint32_t i;

	for (i = 0; i < v->n; i++)
		if (strlen(v->name[i]) == len && !strncmp(v->name[i], name, len))
			return (int)i;
	if (v->n == PMT_VARS || len >= sizeof(v->name[0]))
		return -1;
	snprintf(v->name[v->n], sizeof(v->name[0]), "%.*s", (int)len, name);
	return (int)v->n++;
}

/* @NAME (the lexer at '@'): its variable's number, the lexer after it;
 * -1 when refused (said) */
static int var_name(struct xparser *p)
{
	int pos = p->tok.pos, len = 0;

	if (lex(p))
		return -1;
	if (p->tok.kind == X_NAME && p->tok.pos == pos + 1) {
		len = p->tok.len;
		if (lex(p))
			return -1;
	}
	return var_id(p, p->src + pos + 1, len, pos);
}

/* (a, b) in a saved value's key (the lexer at the ','; a taken) */
static struct xnode *parse_tuple(struct xparser *p, struct xnode *a)
{
	struct xnode *b;

	if (lex(p) || !(b = parse_cond(p))) {
		xfree(a);
		return NULL;
	}
	if (p->tok.kind == ',') {
		xerr(p, p->tok.pos, 1, "a saved value's key has two values at most, for now");
		xfree(a);
		xfree(b);
		return NULL;
	}
	return xnew(p, X_TUPLE, a, b);
}

/* Variable id's key of n values (1 or 2, at pos): as every other of its
 * keys */
static bool key_count(struct xparser *p, int id, int n, int pos, int len)
{
	uint8_t *k = &p->vars->nkeys[id];

	if (*k && *k != n) {
		xerr(p, pos, len, "@%s has a key of %d value%s elsewhere: not %d here",
		     p->vars->name[id], *k, *k > 1 ? "s" : "", n);
		return false;
	}
	*k = (uint8_t)n;
	p->vars->keyed[id] = true;
	return true;
}

/* A saved value's key up to close (the lexer at its first token), for
 * variable id: one value (*k2 NULL) or two, "a, b" or a tuple "(a, b)"
 * (as a $variable holding one gives it) */
static int parse_key(struct xparser *p, int id, int close, struct xnode **k1, struct xnode **k2)
{
	int pos = p->tok.pos;
	bool was = p->in_key;
	struct xnode *k;

	*k1 = *k2 = NULL;
	p->in_key = true;
	k = parse_cond(p);
	if (k && p->tok.kind == ',')
		k = parse_tuple(p, k);
	p->in_key = was;
	if (!k)
		return -EINVAL;
	if (k->op == X_TUPLE) {
		*k1 = k->a;
		*k2 = k->b;
		k->a = k->b = NULL;
		xfree(k);
	} else {
		*k1 = k;
	}
	if (!numeric(p, *k1) || (*k2 && !numeric(p, *k2)) ||
	    !key_count(p, id, *k2 ? 2 : 1, pos, p->tok.pos - pos) ||
	    !(*k1 = closed(p, *k1, close, -1,
			   close == ']' ? "expected ']' after the map's key"
					: "expected ')' after the map's key"))) {
		xfree(*k1);
		xfree(*k2);
		*k1 = *k2 = NULL;
		return -EINVAL;
	}
	return 0;
}

/* @NAME or @NAME[KEY] (the lexer at '@'): a saved value, 64 bits as
 * bpftrace's maps keep them; its key one number or two (none: 0) */
static struct xnode *parse_var(struct xparser *p)
{
	int pos = p->tok.pos, id;
	struct xnode *n, *key = NULL, *key2 = NULL;

	if ((id = var_name(p)) < 0)
		return NULL;
	if (p->tok.kind == '[' && (lex(p) || parse_key(p, id, ']', &key, &key2)))
		return NULL;
	n = xnew(p, p->vars->str[id] ? X_SVARN : X_VARN, key, key2);
	if (n) {
		n->num = (uint64_t)id;
		n->t = (struct xtype){64, !p->vars->str[id]};
		n->pos = pos;
		n->len = p->tok.pos - pos;
		if (p->vars->str[id])
			saved_str(n);
	}
	return n;
}

/* has_key(@MAP, KEY) (the lexer at has_key): 1 where the map holds a
 * value or a string under KEY, else 0, as bpftrace's */
static struct xnode *parse_has_key(struct xparser *p)
{
	int pos = p->tok.pos, id;
	struct xnode *n, *key, *key2;

	if (lex(p) || p->tok.kind != '(' || lex(p) || p->tok.kind != '@') {
		if (!p->lx.failed)
			xerr(p, p->tok.pos, p->tok.len ? p->tok.len : 1,
			     "expected has_key(@MAP, KEY)");
		return NULL;
	}
	if ((id = var_name(p)) < 0)
		return NULL;
	if (p->tok.kind != ',') {
		xerr(p, p->tok.pos, p->tok.len ? p->tok.len : 1,
		     "expected ',' and the key: has_key(@MAP, KEY)");
		return NULL;
	}
	if (lex(p) || parse_key(p, id, ')', &key, &key2))
		return NULL;
	n = xnew(p, X_VARN, key, key2);
	if (n) {
		n->num = (uint64_t)id;
		n->has = true;
		n->t = (struct xtype){32, true};
		n->pos = pos;
		n->len = p->tok.pos - pos;
	}
	return n;
}

/* n, a saved value read, as the saved string it reads */
static void saved_str(struct xnode *n)
{
	n->op = X_SVARN;
	n->vk = V_STR;
	n->slen = PMT_SAVED_STR_LEN;
	n->t = (struct xtype){64, false};
}

/* n, a 0, as "": a saved string no map holds (read as one: its buffer
 * emptied) */
static void empty_string(struct xnode *n)
{
	n->op = X_SVARN;
	n->num = PMT_VARS; /* no variable's */
	n->a = NULL;
	saved_str(n);
}

/* Where a string is wanted (printf's %s, a comparison with ""): a saved
 * value read bare is the map's string, from here on (no number of it
 * read before: reads compile before the statements that save) */
static bool want_string(struct xparser *p, struct xnode *n)
{
	uint64_t id = n->num;

	if (n->op != X_VARN || !p->vars || n->has)
		return n->vk == V_STR;
	if (p->vars->read_num[id]) {
		xerr(p, n->pos, n->len, "@%s is read as a number elsewhere: not a string here",
		     p->vars->name[id]);
		return false;
	}
	p->vars->str[id] = true;
	saved_str(n);
	return true;
}

/* bpftrace's integer types a cast names: bits, signed */
static const struct {
	const char *name;
	uint8_t bits;
	bool is_signed;
} int_types[] = {
	{"uint8", 8, false}, {"uint16", 16, false}, {"uint32", 32, false}, {"uint64", 64, false},
	{"int8", 8, true},   {"int16", 16, true},   {"int32", 32, true},   {"int64", 64, true},
};

/* Does the '(' at hand open a cast, (struct NAME *) or (uint64)? The
 * integer type's index into *it, or -1 for a struct */
static bool is_cast(const struct xparser *p, int *it)
{
	struct pmt_lexer peek = p->lx;
	size_t i;

	peek.err = NULL;
	if (pmt_lex__next(&peek) || peek.tok.kind != X_NAME)
		return false;
	if (peek.tok.len == 6 && !strncmp(p->src + peek.tok.pos, "struct", 6)) {
		*it = -1;
		return true;
	}
	for (i = 0; i < sizeof(int_types) / sizeof(int_types[0]); i++)
		if ((int)strlen(int_types[i].name) == peek.tok.len &&
		    !strncmp(p->src + peek.tok.pos, int_types[i].name, (size_t)peek.tok.len))
			break;
	if (i == sizeof(int_types) / sizeof(int_types[0]) || pmt_lex__next(&peek) ||
	    peek.tok.kind != ')')
		return false;
	*it = (int)i;
	return true;
}

/* A cast (the lexer at its '('), and what it applies to: (struct NAME
 * *)E makes E a pointer to that struct (its members then walked with
 * ->); (uintN)E and (intN)E bring E to that type, as C converts */
static struct xnode *parse_cast(struct xparser *p, int it)
{
	int pos = p->tok.pos, id = 0, nlen = 0, npos = 0;
	struct xnode *n, *k;
	char name[128];

	if (lex(p))
		return NULL;
	if (it < 0) {
		if (lex(p) || p->tok.kind != X_NAME) {
			xerr(p, p->tok.pos, 1, "expected (struct NAME *)");
			return NULL;
		}
		npos = p->tok.pos;
		nlen = p->tok.len;
		if (lex(p) || p->tok.kind != '*' || lex(p) || p->tok.kind != ')') {
			if (!p->lx.failed)
				xerr(p, p->tok.pos, 1,
				     "expected '*)': a cast to a pointer, (struct NAME *)");
			return NULL;
		}
		snprintf(name, sizeof(name), "%.*s", nlen, p->src + npos);
		if (!p->types || p->types->find_struct(p->types->ctx, name, &id)) {
			xerr(p, npos, nlen,
			     p->types ? "no struct %s in the kernel's types (BTF)"
				      : "a cast to struct %s needs the kernel's types (BTF)",
			     name);
			return NULL;
		}
	} else if (lex(p)) { /* the type's name; then ')' */
		return NULL;
	}
	if (lex(p) || !(n = parse_unary(p)))
		return NULL;
	if (!numeric(p, n)) {
		xfree(n);
		return NULL;
	}
	if (it < 0) {
		n->vk = V_PTR;
		n->tid = id;
		n->t = (struct xtype){64, false};
		return n;
	}
	/* 64 bits: the value kept, its type now the cast's; narrower: the
	 * low bits, sign-extended for a signed type (<< then >>) */
	if (int_types[it].bits == 64) {
		n->t = (struct xtype){64, int_types[it].is_signed};
		n->vk = V_NUM;
		return n;
	}
	if (!(k = xnew(p, X_INT, NULL, NULL))) {
		xfree(n);
		return NULL;
	}
	k->num = 64 - int_types[it].bits;
	k->t = (struct xtype){64, false};
	n = xnew(p, X_SHL, n, k);
	if (n)
		n->t = (struct xtype){64, false};
	if (n && (k = xnew(p, X_INT, NULL, NULL))) {
		k->num = 64 - int_types[it].bits;
		k->t = (struct xtype){64, false};
		n = xnew(p, X_SHR, n, k); /* arithmetic where signed: its type */
	}
	if (n) {
		n->t = (struct xtype){64, int_types[it].is_signed};
		n->opd.size = int_types[it].bits / 8; /* its own width: bswap()'s */
		n->pos = pos;
		n->len = p->tok.pos - pos;
	}
	return n;
}

/* "": what a string is compared with for its emptiness (empty_test) */
static struct xnode *parse_empty(struct xparser *p)
{
	struct xnode *n;

	if (p->tok.len != 2) {
		xerr(p, p->tok.pos, p->tok.len,
		     "a string here is \"\" (compared with a string for its emptiness): "
		     "compare strings with others in a filter");
		return NULL;
	}
	n = xnew(p, X_STRLIT, NULL, NULL);
	if (!n)
		return NULL;
	n->vk = V_STR;
	n->t = (struct xtype){64, false};
	return lex(p) ? (xfree(n), NULL) : n;
}

static struct xnode *unary(struct xparser *p);

/* A unary expression; a tuple stands in a key's parentheses alone */
static struct xnode *parse_unary(struct xparser *p)
{
	bool was = p->in_key;
	struct xnode *n;

	p->in_key = was && p->tok.kind == '(';
	n = unary(p);
	p->in_key = was;
	return n;
}

static struct xnode *unary(struct xparser *p)
{
	struct xnode *n;
	int op = p->tok.kind, pos = p->tok.pos, it;

	if (++p->depth > 32) {
		xerr(p, p->tok.pos, p->tok.len, "expression nested too deeply (at most 32 levels)");
		return NULL;
	}
	if (op == '-' || op == '~' || op == '!') {
		if (lex(p) || !(n = parse_unary(p)))
			return NULL;
		if (!numeric(p, n)) {
			xfree(n);
			return NULL;
		}
		n = xnew(p, UNARY(op), n, NULL);
		if (n)
			n->t = op == '!' ? (struct xtype){32, true} : n->a->t;
	} else if (op == '(' && is_cast(p, &it)) {
		p->in_key = false;
		n = parse_cast(p, it);
	} else if (op == '(') {
		if (lex(p) || !(n = parse_cond(p)))
			return NULL;
		if (p->tok.kind == ',' && p->in_key)
			n = parse_tuple(p, n);
		n = n ? closed(p, n, ')', p->tok.kind == X_END ? pos : -1,
			       p->tok.kind == X_END ? "unbalanced '(': a ')' is missing"
						    : "expected ')'")
		      : NULL;
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
	} else if (op == PMT_TOK_STR) {
		n = parse_empty(p);
	} else if (op == '*') {
		n = parse_deref(p, pos);
	} else if (op == '@') {
		n = parse_var(p);
	} else if (op == X_NAME && p->vars && p->tok.len == 7 &&
		   !strncmp(p->src + p->tok.pos, "has_key", 7)) {
		n = parse_has_key(p);
	} else if (op == X_NAME && p->tok.len == 5 && !strncmp(p->src + p->tok.pos, "kaddr", 5)) {
		n = parse_kaddr(p);
	} else if (op == X_NAME && p->tok.len == 5 && !strncmp(p->src + p->tok.pos, "bswap", 5) &&
		   p->src[p->tok.pos + 5] == '(') {
		n = parse_bswap(p);
	} else if (op == X_NAME && p->tok.len == 3 && !strncmp(p->src + p->tok.pos, "str", 3) &&
		   p->src[p->tok.pos + 3] == '(') {
		n = parse_str(p);
	} else if (op == X_NAME) {
		n = parse_name(p);
	} else {
		xerr(p, p->tok.pos, p->tok.len ? p->tok.len : 1,
		     op == X_END ? "expected a value, but the expression ends here"
				 : "expected a value: a field, a number, '(' or a unary - ~ ! *");
		return NULL;
	}
	if (n && !n->len) {
		n->pos = pos;
		n->len = p->tok.pos - pos;
	}
	/* postfix: -> . [ bind tighter than any unary operator */
	while (n && (p->tok.kind == X_ARROW || p->tok.kind == '.' || p->tok.kind == '['))
		n = p->tok.kind == '[' ? parse_index(p, n)
				       : parse_member(p, n, p->tok.kind == X_ARROW);
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

/* An operator's operand must be a number (or a pointer, as one) */
static bool numeric(struct xparser *p, const struct xnode *n)
{
	if (n->op == X_TUPLE) {
		xerr(p, n->pos, n->len, "a tuple is a saved value's key here, not an operand");
		return false;
	}
	if (n->vk == V_NUM || n->vk == V_PTR)
		return true;
	xerr(p, n->pos, n->len,
	     n->vk == V_STR ? "a string is a whole key's value, not an operand: compare strings "
			      "in a filter"
			    : "a struct or an array: name a member with -> or .");
	return false;
}

/* S == "" or S != "" (either way round; l and r taken): whether the
 * string's first byte is 0, read at its address */
static struct xnode *empty_test(struct xparser *p, int op, struct xnode *l, struct xnode *r)
{
	struct xnode *s = l->op == X_STRLIT ? r : l, *lit = l->op == X_STRLIT ? l : r, *n, *zero;
	int pos = l->pos, end = r->pos + r->len;

	if (s->op == X_STRLIT || (s->op == X_NAME && s->vk == V_STR) || !want_string(p, s) ||
	    s->vk != V_STR) {
		if (!p->lx.failed)
			xerr(p, s->pos, s->len,
			     s->op == X_NAME ? "'comm' is never empty"
			     : s->op == X_STRLIT
				     ? "two strings compared: compare a string with \"\""
				     : "compared with \"\": this is not a string (a saved "
				       "string, str(ADDRESS) or a char array)");
		xfree(l);
		xfree(r);
		return NULL;
	}
	xfree(lit);
	n = xnew(p, X_LOADN, s, NULL);
	zero = xnew(p, X_INT, NULL, NULL);
	if (!n || !zero) {
		xfree(n);
		xfree(zero);
		return NULL;
	}
	n->opd.size = 1;
	n->t = (struct xtype){32, true};
	zero->t = (struct xtype){32, true};
	n = xnew(p, op, n, zero);
	if (n) {
		n->t = (struct xtype){32, true};
		n->pos = pos;
		n->len = end - pos;
	}
	return n;
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
		if ((op == X_EQ || op == X_NE) && (l->op == X_STRLIT || r->op == X_STRLIT)) {
			l = empty_test(p, op, l, r);
			continue;
		}
		if (!numeric(p, l) || !numeric(p, r)) {
			xfree(l);
			xfree(r);
			return NULL;
		}
		l = xnew(p, op, l, r);
		if (l) {
			l->t = binary_type(op, l->a->t, l->b->t);
			l->pos = l->a->pos;
			l->len = l->b->pos + l->b->len - l->a->pos;
		}
	}
	return l;
}

/* C's COND ? A : B, the lowest of the operators, right to left; its
 * type A's and B's common one. */
static struct xnode *parse_cond(struct xparser *p)
{
	struct xnode *c = parse_binary(p, 1), *a = NULL, *b = NULL, *n;
	int pos = p->tok.pos;
	bool strs = false;

	if (!c || p->tok.kind != '?')
		return c;
	if (lex(p) || !(a = parse_cond(p)))
		goto fail;
	if (p->tok.kind != ':') {
		xerr(p, p->tok.kind == X_END ? pos : p->tok.pos, 1, "expected ':' of COND ? A : B");
		goto fail;
	}
	if (lex(p) || !(b = parse_cond(p)) || !numeric(p, c))
		goto fail;
	/* strings: the address of the one chosen (a saved value beside a
	 * string is a saved string) */
	if (a->vk == V_STR && b->op == X_VARN && !want_string(p, b))
		goto fail;
	/* 0 beside a string: a $variable with no value before its if,
	 * bpftrace's "" */
	if (a->vk == V_STR && b->op == X_INT && !b->num)
		empty_string(b);
	if (b->vk == V_STR && a->op == X_INT && !a->num)
		empty_string(a);
	if (b->vk == V_STR && a->op == X_VARN && !want_string(p, a))
		goto fail;
	if (a->vk == V_STR && b->vk == V_STR && a->op != X_STRLIT && b->op != X_STRLIT)
		strs = true;
	else if (!numeric(p, a) || !numeric(p, b))
		goto fail;
	n = xnew(p, '?', a, b);
	if (!n) {
		xfree(c);
		return NULL;
	}
	n->cond = c;
	n->t = common(a->t, b->t);
	if (strs) {
		n->vk = V_STR;
		n->slen = a->slen > b->slen ? a->slen : b->slen;
		n->t = (struct xtype){64, false};
	}
	n->pos = c->pos;
	n->len = b->pos + b->len - c->pos;
	return n;
fail:
	xfree(c);
	xfree(a);
	xfree(b);
	return NULL;
}

/* --- code ---------------------------------------------------------------- */

/* operations one expression may take: as many as a probe's program
 * holds (pmt_exprs__program says when all of them take more) */
#define EXPR_OPS PMT_EXPR_OPS

struct xcode {
	struct pmt_expr x;
	int sp, max_sp;
	bool too_long, has_operand;
	uint32_t max_ops; /* 0: EXPR_OPS */
	uint32_t nstrs;	  /* saved strings read (SLOAD's buffers) */
	struct pmt_varnames *vars;
};

static void put(struct xcode *c, uint8_t code, struct xtype t, int sp_change)
{
	struct pmt_expr_op *op;

	if (c->x.n >= (c->max_ops ? c->max_ops : EXPR_OPS)) {
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

static void emit(struct xcode *c, const struct xnode *n);

/* a saved value's key: 0 for none */
static void emit_key(struct xcode *c, const struct xnode *key)
{
	if (key) {
		emit(c, key);
		return;
	}
	put(c, PMT_X_CONST, (struct xtype){64, false}, 1);
	if (!c->too_long)
		c->x.op[c->x.n - 1].k = 0;
}

/* COND ? A : B: both sides evaluated (they have no side effects), each
 * once (nsecs read twice would differ), then the one COND chooses */
static void emit_cond(struct xcode *c, const struct xnode *n)
{
	emit(c, n->a);
	emit(c, n->b);
	emit(c, n->cond);
	put(c, PMT_X_SEL, n->t, -2);
}

/* A saved value or string read (its key first); "" alone is never
 * emitted (empty_test compares it away) */
static void emit_saved(struct xcode *c, const struct xnode *n)
{
	if (n->op == X_STRLIT) {
		c->too_long = true;
		return;
	}
	emit_key(c, n->a);
	if (n->b)
		emit(c, n->b);
	put(c, n->op == X_VARN ? PMT_X_VLOAD : PMT_X_SLOAD, n->t, -!!n->b);
	c->has_operand = true; /* saved: nothing to fold */
	if (n->op == X_SVARN && c->nstrs >= PMT_XSTRS)
		c->too_long = true;
	if (c->too_long)
		return;
	c->x.op[c->x.n - 1].k = n->num;
	c->x.op[c->x.n - 1].flags |= (n->b ? PMT_XF_KEY2 : 0) | (n->has ? PMT_XF_HAS : 0);
	if (n->has)
		return;
	if (n->op == X_SVARN)
		c->x.op[c->x.n - 1].o.size = (uint8_t)c->nstrs++; /* its own buffer */
	else if (c->vars)
		c->vars->read_num[n->num] = true;
}

/* Does n read a saved value or string (saved), else the event's clock
 * (nsecs, elapsed)? */
static bool reads(const struct xnode *n, bool saved)
{
	if (!n)
		return false;
	if (n->op == X_VARN || n->op == X_SVARN)
		return saved || reads(n->a, saved) || reads(n->b, saved);
	if (n->op == X_NAME)
		return !saved && (n->opd.src == PMT_FSRC_NSECS || n->opd.src == PMT_FSRC_ELAPSED);
	return reads(n->a, saved) || reads(n->b, saved) || reads(n->cond, saved);
}

static void emit_binary(struct xcode *c, const struct xnode *n)
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
	const struct xnode *first, *second;
	struct xtype work;
	bool rev;
	size_t i;

	for (i = 0; i < sizeof(bin) / sizeof(bin[0]) && bin[i].op != n->op; i++)
		;
	first = bin[i].swap ? n->b : n->a;
	second = bin[i].swap ? n->a : n->b;
	/* a saved value before the clock (PMT_XF_REV) */
	rev = reads(second, true) && !reads(first, true) && reads(first, false);
	emit(c, rev ? second : first);
	emit(c, rev ? first : second);
	/* the type the operation works in: a comparison's operands' */
	work = n->op == X_SHL || n->op == X_SHR	   ? n->t
	       : n->op == X_LAND || n->op == X_LOR ? (struct xtype){64, false}
						   : common(n->a->t, n->b->t);
	put(c, bin[i].code, work, -1);
	if (rev && !c->too_long)
		c->x.op[c->x.n - 1].flags |= PMT_XF_REV;
}

static void emit(struct xcode *c, const struct xnode *n)
{
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
	case X_LOADN:
		emit(c, n->a);
		put(c, PMT_X_LOAD, (struct xtype){n->t.bits, n->opd.flags & PMT_FFLAG_SIGNED}, 0);
		c->has_operand = true; /* memory: nothing to fold */
		if (!c->too_long) {
			c->x.op[c->x.n - 1].k = n->num;
			c->x.op[c->x.n - 1].o.size = n->opd.size;
		}
		return;
	case X_OFFN:
		emit(c, n->a);
		if (n->num) {
			put(c, PMT_X_CONST, n->t, 1);
			if (!c->too_long)
				c->x.op[c->x.n - 1].k = n->num;
			put(c, PMT_X_ADD, (struct xtype){64, false}, -1);
		}
		return;
	case X_STRN: emit(c, n->a); return;
	case X_VARN:
	case X_SVARN:
	case X_STRLIT: emit_saved(c, n); return;
	case UNARY('-'):
	case UNARY('~'):
	case UNARY('!'):
	case UNARY('b'):
		emit(c, n->a);
		put(c,
		    n->op == UNARY('-')	  ? PMT_X_NEG
		    : n->op == UNARY('~') ? PMT_X_NOT
		    : n->op == UNARY('!') ? PMT_X_LNOT
					  : PMT_X_BSWAP,
		    n->t, 0);
		if (n->op == UNARY('b') && !c->too_long)
			c->x.op[c->x.n - 1].k = n->num; /* bswap's bytes */
		return;
	case '?': emit_cond(c, n); return;
	}
	emit_binary(c, n);
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

/* The values a statement's operation pops: its key, its value (none for
 * the task's comm), its guard */
static uint32_t stored(const struct pmt_expr_op *op)
{
	return (op->code == PMT_X_VSTORE || (op->code == PMT_X_SSTORE && !(op->flags & PMT_XF_COMM))
			? 2
			: 1) +
	       !!(op->flags & PMT_XF_GUARD) + !!(op->flags & PMT_XF_KEY2);
}

/* A binary operation of a and b (in its type) into *r; false if op is
 * none */
static bool binary(const struct pmt_expr_op *op, uint64_t a, uint64_t b, uint64_t *r)
{
	bool sg = op->flags & PMT_XF_SIGNED;
	unsigned width = op->flags & PMT_XF_32 ? 32 : 64;

	switch (op->code) {
	case PMT_X_ADD: *r = a + b; break;
	case PMT_X_SUB: *r = a - b; break;
	case PMT_X_MUL: *r = a * b; break;
	case PMT_X_DIV: *r = !b ? 0 : sg ? sdiv(a, b, false) : a / b; break;
	case PMT_X_MOD: *r = !b ? a : sg ? sdiv(a, b, true) : a % b; break;
	case PMT_X_AND: *r = a & b; break;
	case PMT_X_OR: *r = a | b; break;
	case PMT_X_XOR: *r = a ^ b; break;
	case PMT_X_SHL: *r = a << (b & (width - 1)); break;
	case PMT_X_SHR:
		*r = sg ? (uint64_t)((int64_t)a >> (b & (width - 1))) : a >> (b & (width - 1));
		break;
	case PMT_X_EQ: *r = a == b; break;
	case PMT_X_NE: *r = a != b; break;
	case PMT_X_LT: *r = sg ? (int64_t)a < (int64_t)b : a < b; break;
	case PMT_X_LE: *r = sg ? (int64_t)a <= (int64_t)b : a <= b; break;
	case PMT_X_LAND: *r = a && b; break;
	case PMT_X_LOR: *r = a || b; break;
	default: return false;
	}
	return true;
}

uint64_t pmt_expr__eval(const struct pmt_expr *x, pmt_expr_load_fn load, void *arg, uint64_t *slots)
{
	uint64_t st[PMT_EXPR_STACK] = {0}, own[PMT_XSLOTS] = {0}, a, b, r, top = 0;
	uint32_t i, sp = 0;

	if (!slots)
		slots = own;

	for (i = 0; i < x->n && i < PMT_EXPR_OPS; i++) {
		struct pmt_expr_op fused = x->op[i];
		const struct pmt_expr_op *op = &x->op[i];

		if (op->code <= PMT_X_CONST || (op->code & (PMT_X_PUSH_O | PMT_X_PUSH_K))) {
			if (sp >= PMT_EXPR_STACK)
				return 0;
			st[sp++] = op->code == PMT_X_CONST || (op->code & PMT_X_PUSH_K) ? op->k
				   : op->o.src == PMT_FSRC_EXPR
					   ? slots[op->o.off % PMT_XSLOTS] /* read_once */
					   : load(&op->o, arg);
			if (op->code <= PMT_X_CONST)
				continue;
			fused.code &= PMT_X_CODE; /* then the operation */
			op = &fused;
		}
		if (!sp)
			return 0;
		if (op->code == PMT_X_STORE) {
			slots[op->k % PMT_XSLOTS] = st[sp - 1];
			top = st[--sp];
			continue;
		}
		if (op->code == PMT_X_LOAD || op->code == PMT_X_VLOAD || op->code == PMT_X_SLOAD) {
			/* kernel memory, saved values: the kernel's */
			if ((op->flags & PMT_XF_KEY2) && op->code != PMT_X_LOAD && !--sp)
				return 0;
			st[sp - 1] = 0;
			continue;
		}
		if (op->code == PMT_X_VDEL || op->code == PMT_X_VSTORE || op->code == PMT_X_SDEL ||
		    op->code == PMT_X_SSTORE) {
			sp = sp > stored(op) ? sp - stored(op) : 0;
			continue;
		}
		a = to_type(st[sp - 1], op->flags);
		if (op->code <= PMT_X_BSWAP) {
			r = op->code == PMT_X_NEG    ? to_type(-a, op->flags)
			    : op->code == PMT_X_NOT  ? to_type(~a, op->flags)
			    : op->code == PMT_X_LNOT ? !a
			    : op->k == 2	     ? __builtin_bswap16((uint16_t)a)
			    : op->k == 4	     ? __builtin_bswap32((uint32_t)a)
						     : __builtin_bswap64(a);
			st[sp - 1] = r;
			continue;
		}
		if (sp < 2)
			return 0;
		if (op->code == PMT_X_SEL) {
			if (sp < 3)
				return 0;
			st[sp - 3] = to_type(st[sp - 1] ? st[sp - 3] : st[sp - 2], op->flags);
			sp -= 2;
			continue;
		}
		b = a;
		a = to_type(st[sp - 2], op->flags);
		if (op->flags & PMT_XF_REV) {
			r = a;
			a = b;
			b = r;
		}
		if (!binary(op, a, b, &r))
			return 0;
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
	bool str = !strncmp(s, "str(", 4);

	if (str)
		s += 4;
	/* args.F is the field F's name */
	if (!strncmp(s, "args.", 5))
		s += 5;
	if (str) {
		/* str(NAME) is an operand's name; str(a->b) an expression */
		for (; *s && *s != ')'; s++)
			if (!pmt_lex__name_char(*s, false))
				return true;
		return false;
	}
	for (; *s; s++)
		if (!pmt_lex__name_char(*s, false))
			return true;
	return *text >= '0' && *text <= '9';
}

/* Can op take the push before it (PMT_X_PUSH_O: the operand o, else
 * PMT_X_PUSH_K: the number k)? Where it uses neither itself. */
static bool takes_push(const struct pmt_expr_op *op, uint8_t push)
{
	uint8_t code = op->code;

	if (code & (PMT_X_PUSH_O | PMT_X_PUSH_K))
		return false;
	if ((code >= PMT_X_ADD && code <= PMT_X_SEL) || code == PMT_X_NEG || code == PMT_X_NOT ||
	    code == PMT_X_LNOT)
		return true;
	/* these use k (a slot, a variable), not o */
	return push == PMT_X_PUSH_O && (code == PMT_X_STORE || code == PMT_X_VLOAD ||
					code == PMT_X_VSTORE || code == PMT_X_VDEL);
}

/* Does x write variable var (VSTORE, VDEL, SSTORE, SDEL) before op i? */
static bool written_before(const struct pmt_expr *x, uint32_t i, uint64_t var)
{
	uint32_t j;

	for (j = 0; j < i; j++)
		if (x->op[j].code >= PMT_X_VSTORE && x->op[j].code != PMT_X_SLOAD &&
		    x->op[j].k == var)
			return true;
	return false;
}

/* What op (not fused) does to the stack's depth */
static int depth_change(const struct pmt_expr_op *op)
{
	uint8_t c = op->code;

	if (c <= PMT_X_CONST)
		return 1;
	if (c <= PMT_X_BSWAP || c == PMT_X_LOAD)
		return 0;
	if (c <= PMT_X_LOR || c == PMT_X_STORE)
		return -1;
	if (c == PMT_X_SEL)
		return -2;
	if (c == PMT_X_VLOAD || c == PMT_X_SLOAD)
		return -!!(op->flags & PMT_XF_KEY2);
	return -(int)stored(op);
}

/* The operations computing the key of op i, a read (VLOAD, SLOAD: the
 * key on top) or a write (VSTORE ... SDEL: its value and guard above the
 * key): [*from, *to), the key's values (two with PMT_XF_KEY2) and
 * nothing else, as postfix code has them (walking back, the first point
 * from which they leave that many values more), reading and writing no
 * saved value; false where they do not */
static bool key_range(const struct pmt_expr *x, uint32_t i, uint32_t *from, uint32_t *to)
{
	const struct pmt_expr_op *op = &x->op[i];
	int keys = 1 + !!(op->flags & PMT_XF_KEY2), sum = 0, above = 0;
	uint32_t j = i;

	if (op->code != PMT_X_VLOAD && op->code != PMT_X_SLOAD)
		above = (int)stored(op) - keys;
	*to = i;
	while (j > 0) {
		const struct pmt_expr_op *o = &x->op[--j];
		bool in_key = sum >= above; /* the values above it all walked */

		if (in_key && o->code >= PMT_X_STORE && o->code != PMT_X_LOAD)
			return false;
		sum += depth_change(o);
		if (!in_key && sum == above)
			*to = j;
		if (sum == above + keys) {
			*from = j;
			return true;
		}
	}
	return false;
}

/* Does a write before read i (its key [from, i)) save its variable under
 * the same key, computed by the same operations? */
static bool written_same_key(const struct pmt_expr *x, uint32_t i, uint32_t from)
{
	const struct pmt_expr_op *r = &x->op[i];
	uint32_t j, wf, wt;

	for (j = 0; j < from; j++) {
		const struct pmt_expr_op *w = &x->op[j];

		if (w->code < PMT_X_VSTORE || w->code == PMT_X_SLOAD || w->k != r->k ||
		    (w->flags & PMT_XF_KEY2) != (r->flags & PMT_XF_KEY2) ||
		    !key_range(x, j, &wf, &wt))
			continue;
		if (wt - wf == i - from &&
		    !memcmp(&x->op[wf], &x->op[from], (i - from) * sizeof(*w)))
			return true;
	}
	return false;
}

/* Reads made first, into slots (read_once): read at[k]'s key from op
 * from[k]; the operations the program then skips (a key read first) */
struct hoist {
	uint32_t from[PMT_XSLOTS], at[PMT_XSLOTS], n, slots;
	uint32_t slot_of[PMT_EXPR_OPS]; /* slot + 1 of read i, or 0 */
	bool skip[PMT_EXPR_OPS];
	uint32_t grow; /* operations the program gains */
};

/* Read i (its key from op from) first, into a slot of its own, the
 * program growing by grow: false where there is no room */
static bool hoist_read(const struct pmt_expr *x, struct hoist *h, uint32_t from, uint32_t i,
		       uint32_t grow)
{
	uint32_t j;

	if (h->slots >= PMT_XSLOTS || x->n + h->grow + grow > PMT_EXPR_OPS)
		return false;
	h->from[h->n] = from;
	h->at[h->n++] = i;
	h->slot_of[i] = ++h->slots;
	h->grow += grow;
	for (j = from; j < i; j++)
		h->skip[j] = true;
	return true;
}

/* Reads another repeats under the same key (a single operand or number),
 * before any write of their variable: made once, the repeats reading
 * the first's slot. Each adds 3 operations (key, read, store) and takes
 * 1 from itself and each of its repeats. */
static void hoist_repeats(const struct pmt_expr *x, struct hoist *h)
{
	uint32_t i, j;

	for (i = 1; i < x->n && i < PMT_EXPR_OPS; i++) {
		const struct pmt_expr_op *r = &x->op[i], *key = &x->op[i - 1];

		if (r->code != PMT_X_VLOAD || (r->flags & (PMT_XF_KEY2 | PMT_XF_HAS)) ||
		    key->code > PMT_X_CONST || h->slot_of[i] || written_before(x, i, r->k))
			continue;
		for (j = i + 2; j < x->n && j < PMT_EXPR_OPS; j++)
			if (!memcmp(&x->op[j], r, sizeof(*r)) &&
			    !memcmp(&x->op[j - 1], key, sizeof(*key)) &&
			    !written_before(x, j, r->k)) {
				if (!h->slot_of[i] && !hoist_read(x, h, i - 1, i, 1))
					break;
				h->slot_of[j] = h->slot_of[i];
				h->skip[j - 1] = true;
			}
	}
}

/*
 * A saved value a kernel program reads more than once under the same
 * key (a single operand or number: runqlat.bt's $ns = @qtime[next_pid],
 * in the histogram's value and in its condition) read once, first, into
 * a slot of its own, and the reads made reads of that slot (an operand
 * PMT_FSRC_EXPR): one map lookup less each, and one value, as bpftrace's
 * $variable is. Two lookups could see two values: a start saved on
 * another CPU between them gave a latency of the whole uptime, 0 read by
 * the value's and the start by the condition's.
 *
 * And a read after a write under the same key is made first, with its
 * key: src/lang/program.c gives such a read the value written, whose
 * text reads what was there before the block ($i = @n[1] + 1; @n[1] =
 * $i; @last = $i is @last = @n[1] + 1, which read after the store gave
 * one more). A read under another key stays where it is, as bpftrace's.
 * False where such a read cannot be made first (a saved string, no
 * room).
 */
static bool read_once(struct pmt_expr *x)
{
	static struct hoist h;
	static struct pmt_expr y;
	uint32_t i, j, from, to, k;

	memset(&h, 0, sizeof(h));
	for (i = 0; i < x->n && i < PMT_EXPR_OPS; i++)
		if (x->op[i].code == PMT_X_STORE && x->op[i].k + 1 > h.slots)
			h.slots = (uint32_t)x->op[i].k + 1;
	for (i = 0; i < x->n && i < PMT_EXPR_OPS; i++) {
		const struct pmt_expr_op *r = &x->op[i];

		if ((r->code != PMT_X_VLOAD && r->code != PMT_X_SLOAD) ||
		    !written_before(x, i, r->k))
			continue;
		/* under another key, or one that reads saved values: a read
		 * where it stands, as bpftrace's */
		if (!key_range(x, i, &from, &to) || !written_same_key(x, i, from))
			continue;
		/* the same read made first already: its slot */
		for (k = 0; k < h.n; k++)
			if (h.at[k] - h.from[k] == i - from &&
			    !memcmp(&x->op[h.from[k]], &x->op[from], (i - from + 1) * sizeof(*r)))
				break;
		if (k < h.n) {
			h.slot_of[i] = h.slot_of[h.at[k]];
			for (j = from; j < i; j++)
				h.skip[j] = true;
			continue;
		}
		/* the key and the read again, a store; here one operand */
		if (r->code == PMT_X_SLOAD || !hoist_read(x, &h, from, i, 2))
			return false;
	}
	hoist_repeats(x, &h);
	if (!h.n)
		return true;
	memset(&y, 0, sizeof(y));
	for (k = 0; k < h.n; k++) {
		for (j = h.from[k]; j <= h.at[k]; j++)
			y.op[y.n++] = x->op[j];
		y.op[y.n].code = PMT_X_STORE;
		y.op[y.n++].k = h.slot_of[h.at[k]] - 1;
	}
	for (i = 0; i < x->n && i < PMT_EXPR_OPS; i++) {
		if (h.skip[i])
			continue; /* a key read first: the slot's operand below */
		if (h.slot_of[i]) {
			y.op[y.n].code = PMT_X_OPERAND;
			y.op[y.n].flags = x->op[i].flags;
			y.op[y.n].o.src = PMT_FSRC_EXPR;
			y.op[y.n].o.size = 8;
			y.op[y.n++].o.off = (uint16_t)(h.slot_of[i] - 1);
			continue;
		}
		y.op[y.n++] = x->op[i];
	}
	*x = y;
	return true;
}

/* A kernel program's pushes fused with the operation after them: one
 * step of the machine less each (some 17 ns here, where the push itself
 * costs what it costs). The machine has no jumps: operations may move. */
static void fuse(struct pmt_expr *x)
{
	uint32_t i, n = 0;

	for (i = 0; i < x->n && i < PMT_EXPR_OPS; i++) {
		const struct pmt_expr_op *op = &x->op[i], *next = &x->op[i + 1];
		uint8_t push = op->code == PMT_X_OPERAND ? PMT_X_PUSH_O : PMT_X_PUSH_K;

		if (op->code <= PMT_X_CONST && i + 1 < x->n && takes_push(next, push)) {
			struct pmt_expr_op f = *next;

			f.code |= push;
			if (push == PMT_X_PUSH_O)
				f.o = op->o;
			else
				f.k = op->k;
			x->op[n++] = f;
			i++;
			continue;
		}
		x->op[n++] = *op;
	}
	memset(&x->op[n], 0, (x->n - n) * sizeof(x->op[0]));
	x->n = n;
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

/* add()'s failure r, said */
static int add_failed(struct xparser *p, int r)
{
	if (r == -E2BIG)
		return xerr(p, 0, (int)strlen(p->src), "too many expressions: at most %d a run",
			    PMT_EXPRS);
	return pmt_error__runtime(p->err, r, "%s: out of memory", p->what);
}

/* p set to read text (the lexer at its first token): 0, or -EINVAL */
static int start(struct xparser *p, const struct pmt_exprs *t, const char *text,
		 const struct pmt_format *fmt, const char *probe, const char *what,
		 const struct pmt_typesys *types, struct pmt_error *err)
{
	*p = (struct xparser){.src = text,
			      .what = what,
			      .probe = probe,
			      .fmt = fmt,
			      .types = types,
			      .vars = t->vars,
			      .err = err};
	pmt_lex__init(&p->lx, text, what, 0, err);
	return lex(p);
}

static int compile(struct pmt_exprs *t, const char *text, const struct pmt_format *fmt,
		   const char *probe, const char *what, const struct pmt_typesys *types,
		   struct pmt_opinfo *out, bool want_str, struct pmt_error *err)
{
	struct xparser p;
	int vk = V_NUM;
	uint32_t slen = 0;
	struct xcode c = {.vars = t->vars};
	struct xnode *n;
	int idx;

	memset(out, 0, sizeof(*out));
	if (start(&p, t, text, fmt, probe, what, types, err))
		return -EINVAL;
	p.want_str = want_str;
	n = parse_cond(&p);
	if (n && p.tok.kind != X_END)
		xerr(&p, p.tok.pos, p.tok.len,
		     p.tok.kind == ')' ? "unbalanced ')'" : "expected an operator or the end");
	if (n && !p.lx.failed && want_str && n->op == X_VARN)
		want_string(&p, n);
	if (n && !p.lx.failed && n->op == X_STRLIT)
		xerr(&p, n->pos, n->len, "\"\" is compared with a string here, not a value");
	if (p.lx.failed) {
		xfree(n);
		return -EINVAL;
	}
	if (n->vk == V_ADDR) {
		xerr(&p, n->pos, n->len, "a struct or an array: name a member with -> or .");
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
	out->is_signed = n->vk == V_NUM && n->t.is_signed;
	vk = n->vk;
	slen = n->slen;
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
	if (idx < 0)
		return add_failed(&p, idx);
	out->o.src = PMT_FSRC_EXPR;
	out->o.size = 8;
	out->o.off = (uint16_t)idx;
	out->o.flags = out->is_signed ? PMT_FFLAG_SIGNED : 0;
	if (vk == V_STR) {
		/* the string at the address the expression computes; size:
		 * a char array's length, 0 when a pointer's */
		out->o.src = PMT_FSRC_PTR_STR;
		out->o.flags = PMT_FFLAG_XADDR;
		out->o.size = (uint8_t)(slen > 255 ? 255 : slen);
		out->is_str = true;
	}
	return 0;
}

int pmt_exprs__program(struct pmt_exprs *t, const struct pmt_exprs *mine,
		       struct pmt_operand *const *ops, size_t n, uint16_t *prog, const char *probe,
		       struct pmt_error *err)
{
	struct pmt_expr x = {0};
	int slot_of[PMT_EXPRS];
	size_t i;
	uint32_t j, nslots = 0, nstrs = 0;
	int idx;

	*prog = PMT_XPROG_NONE;
	for (i = 0; i < PMT_EXPRS; i++)
		slot_of[i] = -1;
	for (i = 0; i < n; i++) {
		struct pmt_operand *o = ops[i];
		const struct pmt_expr *e;

		if (!(o->src == PMT_FSRC_EXPR ||
		      (o->src == PMT_FSRC_PTR_STR && (o->flags & PMT_FFLAG_XADDR))) ||
		    o->off >= mine->n)
			continue;
		if (slot_of[o->off] >= 0) {
			o->off = (uint16_t)slot_of[o->off];
			continue;
		}
		e = &mine->v[o->off];
		if (x.n + e->n + 1 > PMT_EXPR_OPS || nslots >= PMT_XSLOTS)
			return pmt_error__usage(err,
						"%s: its expressions take more than %d operations "
						"or %d values in all (%u and %u so far, %u more)",
						probe, PMT_EXPR_OPS, PMT_XSLOTS, x.n, nslots, e->n);
		for (j = 0; j < e->n; j++) {
			x.op[x.n] = e->op[j];
			/* each saved string read its own buffer */
			if (e->op[j].code == PMT_X_SLOAD &&
			    (x.op[x.n].o.size = (uint8_t)nstrs++) >= PMT_XSTRS)
				return pmt_error__usage(err, "%s: reads more than %d saved strings",
							probe, PMT_XSTRS);
			x.n++;
		}
		x.op[x.n].code = PMT_X_STORE;
		x.op[x.n++].k = nslots;
		slot_of[o->off] = (int)nslots;
		o->off = (uint16_t)nslots++;
	}
	if (!x.n)
		return 0;
	if (!read_once(&x))
		return pmt_error__usage(err,
					"%s: its expressions read more saved values than %d "
					"slots hold",
					probe, PMT_XSLOTS);
	fuse(&x);
	idx = add(t, &x);
	if (idx == -E2BIG)
		return pmt_error__usage(err, "too many probes with expressions: at most %d",
					PMT_EXPRS);
	if (idx < 0)
		return pmt_error__runtime(err, idx, "out of memory for expressions");
	*prog = (uint16_t)idx;
	return 0;
}

int pmt_expr__compile(struct pmt_exprs *t, const char *text, const struct pmt_format *fmt,
		      const char *probe, const char *what, const struct pmt_typesys *types,
		      struct pmt_opinfo *out, struct pmt_error *err)
{
	return compile(t, text, fmt, probe, what, types, out, false, err);
}

int pmt_expr__compile_str(struct pmt_exprs *t, const char *text, const struct pmt_format *fmt,
			  const char *probe, const char *what, const struct pmt_typesys *types,
			  struct pmt_opinfo *out, struct pmt_error *err)
{
	return compile(t, text, fmt, probe, what, types, out, true, err);
}

/* --- statements ----------------------------------------------------------- */

/* if (CONDITION) before a statement (the lexer at if): its condition
 * into *guard, the lexer past the ')'. 0, or -EINVAL */
static int guard_of(struct xparser *p, struct xnode **guard)
{
	if (lex(p) || p->tok.kind != '(')
		return p->lx.failed
			       ? -EINVAL
			       : xerr(p, p->tok.pos, 1, "expected '(' after if: if (CONDITION)");
	if (lex(p) || !(*guard = parse_cond(p)))
		return -EINVAL;
	if (!numeric(p, *guard)) {
		xfree(*guard);
		*guard = NULL;
		return -EINVAL;
	}
	*guard = closed(p, *guard, ')', -1, "expected ')' after if (CONDITION");
	return *guard ? 0 : -EINVAL;
}

/* The target and value of @NAME[KEY] = VALUE or delete(@NAME[KEY])
 * (del; the lexer at the '@'); -EINVAL (said, nothing kept) */
static int target_of(struct xparser *p, bool del, struct xnode **target, struct xnode **value)
{
	if (p->tok.kind != '@')
		return xerr(p, p->tok.pos, p->tok.len ? p->tok.len : 1,
			    "expected @MAP[KEY] = VALUE or delete(@MAP[KEY])");
	if (!(*target = parse_var(p)))
		return -EINVAL;
	/* delete(@MAP, KEY), as newer bpftrace writes it */
	if (del && p->tok.kind == ',' && !(*target)->a) {
		if (!lex(p) &&
		    !parse_key(p, (int)(*target)->num, ')', &(*target)->a, &(*target)->b))
			return 0;
	} else if (p->tok.kind != (del ? ')' : '=')) {
		xerr(p, p->tok.pos, p->tok.len ? p->tok.len : 1,
		     del ? "expected ')' after delete(@MAP[KEY]"
			 : "expected '=' after the map: @MAP[KEY] = VALUE");
	} else if (!lex(p) && (del || (*value = parse_cond(p)))) {
		if (!*value || (*value)->vk == V_NUM || (*value)->vk == V_PTR ||
		    ((*value)->vk == V_STR && (*value)->op != X_STRLIT))
			return 0;
		xerr(p, (*value)->pos, (*value)->len,
		     (*value)->vk == V_STR ? "a map saves comm, str(ADDRESS), a char array or a "
					     "saved string here, not a literal"
					   : "a struct or an array: name a member with -> or .");
	}
	xfree(*target);
	xfree(*value);
	*target = *value = NULL;
	return -EINVAL;
}

/* Does the statement on target save (or forget) a string (*str)? A map
 * holds numbers or strings: the first save of a string, or the first
 * read where a string is wanted (want_string), makes it a string's. */
static int saved_kind(struct xparser *p, const struct xnode *target, const struct xnode *value,
		      bool *str)
{
	struct pmt_varnames *v = p->vars;
	uint64_t id = target->num;

	*str = v->str[id];
	if (!value)
		return 0;
	if (value->vk == V_STR && !v->str[id]) {
		if (v->read_num[id])
			return xerr(p, value->pos, value->len,
				    "@%s is read as a number elsewhere: this saves a string",
				    v->name[id]);
		*str = v->str[id] = true;
	} else if (value->vk != V_STR && v->str[id]) {
		return xerr(p, value->pos, value->len, "@%s holds strings: this is a number",
			    v->name[id]);
	}
	return 0;
}

/* [if (CONDITION)] @NAME[KEY] = VALUE or delete(@NAME[KEY]) (the lexer
 * at its start) into c; guarded, done only where the condition holds */
static int statement(struct xparser *p, struct xcode *c)
{
	struct xnode *target = NULL, *value = NULL, *guard = NULL;
	bool del, str, comm;

	if (p->tok.kind == X_NAME && p->tok.len == 2 && !strncmp(p->src + p->tok.pos, "if", 2) &&
	    guard_of(p, &guard))
		return -EINVAL;
	del = p->tok.kind == X_NAME && p->tok.len == 6 &&
	      !strncmp(p->src + p->tok.pos, "delete", 6);
	if (del && (lex(p) || p->tok.kind != '(' || lex(p))) {
		xfree(guard);
		return p->lx.failed ? -EINVAL
				    : xerr(p, p->tok.pos, 1, "expected delete(@MAP[KEY])");
	}
	if (target_of(p, del, &target, &value)) {
		xfree(guard);
		return -EINVAL;
	}
	if (saved_kind(p, target, value, &str)) {
		xfree(target);
		xfree(value);
		xfree(guard);
		return -EINVAL;
	}
	comm = value && value->op == X_NAME && value->vk == V_STR; /* the task's comm */
	emit_key(c, target->a);
	if (target->b)
		emit(c, target->b);
	if (value && !comm)
		emit(c, value);
	if (guard)
		emit(c, guard);
	put(c,
	    str	    ? (value ? PMT_X_SSTORE : PMT_X_SDEL)
	    : value ? PMT_X_VSTORE
		    : PMT_X_VDEL,
	    target->t, (value && !comm ? -2 : -1) - !!guard - !!target->b);
	if (!c->too_long) {
		c->x.op[c->x.n - 1].k = target->num;
		c->x.op[c->x.n - 1].flags |= (guard ? PMT_XF_GUARD : 0) | (comm ? PMT_XF_COMM : 0) |
					     (target->b ? PMT_XF_KEY2 : 0);
	}
	xfree(target);
	xfree(value);
	xfree(guard);
	return 0;
}

int pmt_expr__statements(struct pmt_exprs *t, const char *text, const struct pmt_format *fmt,
			 const char *probe, const char *what, const struct pmt_typesys *types,
			 uint16_t *prog, struct pmt_error *err)
{
	struct xparser p;
	struct xcode c = {.max_ops = PMT_EXPR_OPS, .vars = t->vars};
	int idx;

	*prog = PMT_XPROG_NONE;
	if (start(&p, t, text, fmt, probe, what, types, err))
		return -EINVAL;
	p.stmts = true; /* '=' and ';' from the next token on */
	while (p.tok.kind != X_END) {
		if (p.tok.kind != ';' && statement(&p, &c))
			return -EINVAL;
		if (p.tok.kind != ';' && p.tok.kind != X_END)
			return xerr(&p, p.tok.pos, p.tok.len ? p.tok.len : 1,
				    "expected ';' after the statement");
		if (p.tok.kind == ';' && lex(&p))
			return -EINVAL;
	}
	if (c.too_long || c.max_sp > PMT_EXPR_STACK)
		return xerr(&p, 0, (int)strlen(text),
			    "a block's statements take more than %d operations or %d values "
			    "pending at once",
			    PMT_EXPR_OPS, PMT_EXPR_STACK);
	if (!c.x.n)
		return 0;
	if (!read_once(&c.x))
		return xerr(&p, 0, (int)strlen(text),
			    "a block reads a saved value after saving it: read first, as "
			    "bpftrace reads it, only where its key reads no saved value and it "
			    "is a number, and at most %d of them",
			    PMT_XSLOTS);
	fuse(&c.x);
	idx = add(t, &c.x);
	if (idx < 0)
		return add_failed(&p, idx);
	*prog = (uint16_t)idx;
	return 0;
}

/* op's operand, where it pushes one (PMT_X_OPERAND, PMT_X_PUSH_O) */
static const struct pmt_operand *pushed(const struct pmt_expr_op *op)
{
	return op->code == PMT_X_OPERAND || (op->code & PMT_X_PUSH_O) ? &op->o : NULL;
}

bool pmt_exprs__uses_vars(const struct pmt_exprs *t)
{
	size_t i, j;

	for (i = 0; i < t->n; i++)
		for (j = 0; j < t->v[i].n && j < PMT_EXPR_OPS; j++)
			if ((t->v[i].op[j].code & PMT_X_CODE) >= PMT_X_VLOAD)
				return true;
	return false;
}

void pmt_exprs__uses(const struct pmt_exprs *t, struct pmt_uses *u)
{
	size_t i, j;

	for (i = 0; i < t->n; i++)
		for (j = 0; j < t->v[i].n && j < PMT_EXPR_OPS; j++)
			if (pushed(&t->v[i].op[j]))
				pmt_uses__operand(u, pushed(&t->v[i].op[j]));
}

bool pmt_exprs__needs_record(const struct pmt_exprs *t, const struct pmt_operand *o)
{
	size_t j;

	if (o->src != PMT_FSRC_EXPR &&
	    !(o->src == PMT_FSRC_PTR_STR && (o->flags & PMT_FFLAG_XADDR)))
		return pmt_operand__needs_record(o);
	for (j = 0; t && o->off < t->n && j < t->v[o->off].n && j < PMT_EXPR_OPS; j++)
		if (pushed(&t->v[o->off].op[j]) &&
		    pmt_operand__needs_record(pushed(&t->v[o->off].op[j])))
			return true;
	return false;
}

void pmt_exprs__free(struct pmt_exprs *t)
{
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
}

static void dump_op(struct pmt_buf *b, const struct pmt_expr_op *op)
{
	static const char *const names[PMT_X__MAX] = {
		"operand", "const", "neg",    "not",  "lnot",  "bswap",	 "add",	 "sub",
		"mul",	   "div",   "mod",    "and",  "or",    "xor",	 "shl",	 "shr",
		"eq",	   "ne",    "lt",     "le",   "land",  "lor",	 "sel",	 "store",
		"load",	   "vload", "vstore", "vdel", "sload", "sstore", "sdel",
	};

	pmt_buf__printf(b, "%s%s", op->code < PMT_X__MAX ? names[op->code] : "?",
			op->code == PMT_X_OPERAND || op->code == PMT_X_CONST ||
					op->code == PMT_X_STORE || op->code >= PMT_X_VLOAD
				? ""
			: op->flags & PMT_XF_32	    ? (op->flags & PMT_XF_SIGNED ? " s32" : " u32")
			: op->flags & PMT_XF_SIGNED ? " s64"
						    : " u64");
	if (op->code >= PMT_X_ADD && op->code <= PMT_X_LOR && (op->flags & PMT_XF_REV))
		pmt_buf__printf(b, " rev");
	if (op->code == PMT_X_OPERAND)
		pmt_buf__printf(b, " src%u@%u:%u%s", op->o.src, op->o.off, op->o.size,
				op->o.flags & PMT_FFLAG_SIGNED ? "s" : "");
	else if (op->code == PMT_X_CONST || op->code == PMT_X_STORE || op->code == PMT_X_LOAD ||
		 op->code == PMT_X_BSWAP || op->code >= PMT_X_VLOAD)
		pmt_buf__printf(b, " %llu%s%s", (unsigned long long)op->k,
				op->code >= PMT_X_VLOAD && (op->flags & PMT_XF_KEY2) ? " key2" : "",
				op->code >= PMT_X_VLOAD && (op->flags & PMT_XF_HAS) ? " has" : "");
	pmt_buf__putc(b, '\n');
}

/* One line an operation; a fused push (PMT_X_PUSH_*) on a line of its
 * own before its operation's, marked "+" */
void pmt_expr__dump(struct pmt_buf *b, const struct pmt_expr *x)
{
	uint32_t i;

	for (i = 0; i < x->n && i < PMT_EXPR_OPS; i++) {
		struct pmt_expr_op op = x->op[i], push = x->op[i];

		if (op.code & (PMT_X_PUSH_O | PMT_X_PUSH_K)) {
			push.code = op.code & PMT_X_PUSH_O ? PMT_X_OPERAND : PMT_X_CONST;
			push.flags = 0;
			pmt_buf__putc(b, '+');
			dump_op(b, &push);
			op.code &= PMT_X_CODE;
		}
		dump_op(b, &op);
	}
}
