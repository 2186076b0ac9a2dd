// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Filter compiler. Three steps, all with positions kept for diagnostics:
 * lex -> parse into a small AST (operands resolved and type-checked as they
 * are read) -> emit a DAG of comparisons where !, && and || are only edges:
 *
 *   gen(a && b, T, F) = gen(a, gen(b, T, F), F)
 *   gen(a || b, T, F) = gen(a, T, gen(b, T, F))
 *   gen(!a, T, F)     = gen(a, F, T)
 *
 * String literals and globs become Shift-And automata over byte classes
 * shared by the filter's patterns (see struct pmt_pattern in bpf/abi.h).
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "filter/expr.h"
#include "filter/filter.h"
#include "filter/lex.h"
#include "filter/operand.h"
#include "symbols/cgroups.h"

enum tok_kind {
	T_NONE, /* not a token of the filter's */
	T_END,
	T_IDENT,
	T_INT,
	T_STR,
	T_EQ,
	T_NE,
	T_LT,
	T_LE,
	T_GT,
	T_GE,
	T_BAND,
	T_GLOB,
	T_AND,
	T_OR,
	T_NOT,
	T_LP,
	T_RP,
	T_MINUS,
	T_MAP, /* '@': a program's saved value, an expression's operand */
};

struct tok {
	enum tok_kind kind;
	int pos, len;
	uint64_t num; /* T_INT */
	char *str;    /* T_STR (decoded), T_IDENT */
	size_t slen;
};

enum node_kind { N_AND, N_OR, N_NOT, N_CMP };

struct node {
	enum node_kind kind;
	struct node *a, *b;
	/* N_CMP */
	struct pmt_opinfo opd; /* what to test */
	enum tok_kind op;      /* T_EQ.. T_GLOB; T_NE via op, "bare" as T_NE 0 */
	uint64_t val;
	char *str; /* string literal / glob, not NUL-safe: slen */
	size_t slen;
};

struct parser {
	struct pmt_lexer lx; /* its token, mapped: tok */
	const char *src;
	const struct pmt_format *fmt;
	const char *probe;
	/* operands written as expressions: compiled into mine, made one
	 * program of the session's exprs (NULL: refused) */
	struct pmt_exprs *exprs;
	struct pmt_exprs mine;
	struct tok tok; /* current token */
	struct pmt_error *err;
	int depth;
};

static int perr(struct parser *p, int pos, int len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int perr(struct parser *p, int pos, int len, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return pmt_lex__error(&p->lx, pos, len, "%s", msg);
}

static void hint(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void hint(struct parser *p, const char *fmt, ...)
{
	char text[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	pmt_error__hint(p->err, "%s", text);
}

/* --- tokens ------------------------------------------------------------- */

/* The lexer's next token as the filter reads it: the operators it has,
 * a decoded string, a name's text; the rest worded here. */
static int next(struct parser *p)
{
	static const enum tok_kind kinds[] = {
		['('] = T_LP,	       [')'] = T_RP,	      ['~'] = T_GLOB,
		['-'] = T_MINUS,       ['!'] = T_NOT,	      ['<'] = T_LT,
		['>'] = T_GT,	       ['&'] = T_BAND,	      ['@'] = T_MAP,
		[PMT_TOK_END] = T_END, [PMT_TOK_INT] = T_INT, [PMT_TOK_NAME] = T_IDENT,
		[PMT_TOK_STR] = T_STR, [PMT_TOK_LE] = T_LE,   [PMT_TOK_GE] = T_GE,
		[PMT_TOK_EQ] = T_EQ,   [PMT_TOK_NE] = T_NE,   [PMT_TOK_LAND] = T_AND,
		[PMT_TOK_LOR] = T_OR,
	};
	struct pmt_tok *t = &p->lx.tok;
	struct pmt_buf b = {0};

	free(p->tok.str);
	p->tok.str = NULL;
	if (pmt_lex__next(&p->lx))
		return -EINVAL;
	/* << >> ->: the filter has '<' '>' '-' alone */
	if (t->kind == PMT_TOK_SHL || t->kind == PMT_TOK_SHR || t->kind == PMT_TOK_ARROW) {
		t->kind = (unsigned char)p->src[t->pos];
		t->len = 1;
	}
	if (t->kind == '=')
		return perr(p, t->pos, 1, "'=' is not an operator: did you mean '=='?");
	if (t->kind == '|')
		return perr(p, t->pos, 1, "'|' is not an operator: did you mean '||'?");
	if (t->kind >= (int)(sizeof(kinds) / sizeof(kinds[0])) || !kinds[t->kind])
		return perr(p, t->pos, 1, "unexpected character '%c'", p->src[t->pos]);
	p->tok.kind = kinds[t->kind];
	p->tok.pos = t->pos;
	p->tok.len = t->len;
	p->tok.num = t->num;
	if (t->kind == PMT_TOK_STR) {
		pmt_lex__string(&p->lx, t, &b);
		p->tok.slen = b.len;
		pmt_buf__cstr(&b);
		p->tok.str = b.p;
	} else if (t->kind == PMT_TOK_NAME) {
		p->tok.str = strndup(p->src + t->pos, (size_t)t->len);
	}
	return 0;
}

/* --- operands ------------------------------------------------------------ */

static void field_list_hint(struct parser *p, const char *name)
{
	struct pmt_buf b = {0};

	pmt_operand__hint(&b, p->fmt, p->probe, name);
	hint(p, "%s", pmt_buf__cstr(&b));
	pmt_buf__free(&b);
}

static int resolve(struct parser *p, const char *name, int pos, int len, struct pmt_opinfo *o)
{
	int r = pmt_operand__resolve(p->fmt, name, o);

	if (r == PMT_OPERAND_ARRAY)
		return perr(p, pos, len, "field '%s' is an array (%s): arrays cannot be compared",
			    name, o->field->type);
	if (r == PMT_OPERAND_NOT_PTR) {
		struct pmt_buf b = {0};

		pmt_operand__not_ptr(&b, name, o);
		perr(p, pos, len, "%s", pmt_buf__cstr(&b));
		pmt_buf__free(&b);
		return -EINVAL;
	}
	if (r) {
		perr(p, pos, len, "unknown field '%s' for %s", name, p->probe);
		field_list_hint(p, name);
		return -EINVAL;
	}
	return 0;
}

/* --- parser -------------------------------------------------------------- */

static void node_free(struct node *n)
{
	if (!n)
		return;
	node_free(n->a);
	node_free(n->b);
	free(n->str);
	free(n);
}

static struct node *new_node(enum node_kind k, struct node *a, struct node *b)
{
	struct node *n = calloc(1, sizeof(*n));

	if (!n) {
		node_free(a);
		node_free(b);
		return NULL;
	}
	n->kind = k;
	n->a = a;
	n->b = b;
	return n;
}

static bool is_cmp(enum tok_kind k)
{
	return k >= T_EQ && k <= T_GLOB;
}

static const char *op_text(enum tok_kind k)
{
	static const char *const t[] = {
		[T_EQ] = "==", [T_NE] = "!=", [T_LT] = "<",   [T_LE] = "<=",
		[T_GT] = ">",  [T_GE] = ">=", [T_BAND] = "&", [T_GLOB] = "~",
	};
	return t[k];
}

/* The token, a name, is a constant the expressions know (the kernel
 * headers' TASK_RUNNING, AF_INET; an enum's, from BTF): its value */
static bool named_constant(struct parser *p, uint64_t *v)
{
	struct pmt_error e = {0};
	struct pmt_opinfo info;
	char name[128];
	const struct pmt_expr *x;

	if (!p->exprs || p->tok.len >= (int)sizeof(name))
		return false;
	snprintf(name, sizeof(name), "%.*s", p->tok.len, p->src + p->tok.pos);
	if (pmt_expr__compile(&p->mine, name, p->fmt, p->probe, "--filter", p->exprs->types, &info,
			      &e)) {
		pmt_error__clear(&e);
		return false;
	}
	if (info.o.src != PMT_FSRC_EXPR || info.o.off >= p->mine.n)
		return false;
	x = &p->mine.v[info.o.off];
	if (x->n != 1 || x->op[0].code != PMT_X_CONST)
		return false;
	*v = x->op[0].k;
	return true;
}

/* A literal: integer (maybe negative) or string; fills n->val / n->str. */
static int parse_literal(struct parser *p, struct node *n, bool *is_str, bool *neg, int *pos,
			 int *len)
{
	*pos = p->tok.pos;
	*neg = false;
	if (p->tok.kind == T_MINUS) {
		*neg = true;
		if (next(p))
			return -EINVAL;
		if (p->tok.kind != T_INT)
			return perr(p, p->tok.pos, p->tok.len, "expected a number after '-'");
	}
	if (p->tok.kind == T_INT) {
		n->val = *neg ? -p->tok.num : p->tok.num;
		if (*neg && p->tok.num > (uint64_t)INT64_MAX + 1)
			return perr(p, *pos, p->tok.pos + p->tok.len - *pos,
				    "number too small for 64 bits");
		*is_str = false;
	} else if (p->tok.kind == T_STR) {
		n->str = p->tok.str;
		n->slen = p->tok.slen;
		p->tok.str = NULL;
		*is_str = true;
	} else if (p->tok.kind == T_IDENT && !*neg && named_constant(p, &n->val)) {
		*is_str = false; /* TASK_RUNNING, an enum's constant */
	} else {
		return perr(p, p->tok.pos, p->tok.len, "expected a number or a \"string\"");
	}
	*len = p->tok.pos + p->tok.len - *pos;
	return next(p);
}

/* Does v fit the operand's type? */
static int check_range(struct parser *p, const struct pmt_opinfo *o, uint64_t v, bool neg, int pos,
		       int len, const char *name)
{
	unsigned bits = o->o.size * 8u;
	int64_t sv = (int64_t)v;

	if (bits >= 64) {
		if (neg && !o->is_signed)
			return perr(p, pos, len, "%s is unsigned: %lld is out of its range", name,
				    (long long)sv);
		return 0;
	}
	if (o->is_signed) {
		int64_t lo = -(1LL << (bits - 1)), hi = (1LL << (bits - 1)) - 1;

		if ((neg && sv < lo) || (!neg && v > (uint64_t)hi))
			return perr(
				p, pos, len,
				"%s is a signed %u-bit field: %s%llu is out of range %lld..%lld",
				name, bits, neg ? "-" : "",
				neg ? (unsigned long long)-v : (unsigned long long)v, (long long)lo,
				(long long)hi);
		return 0;
	}
	if (neg || v > (1ULL << bits) - 1)
		return perr(p, pos, len,
			    "%s is an unsigned %u-bit field: %s%llu is out of range 0..%llu", name,
			    bits, neg ? "-" : "",
			    neg ? (unsigned long long)-v : (unsigned long long)v,
			    (unsigned long long)((1ULL << bits) - 1));
	return 0;
}

/* The value a field's symbol names (mode == user), into n->val. */
static int named_value(struct parser *p, struct node *n, const char *field)
{
	const char *const *sym = n->opd.field->symbols;
	struct pmt_buf b = {0};
	size_t i;

	for (i = 0; sym[i]; i++) {
		if (!strcmp(sym[i], p->tok.str)) {
			n->val = i;
			return 0;
		}
	}
	for (i = 0; sym[i]; i++)
		pmt_buf__printf(&b, "%s%s", i ? ", " : "", sym[i]);
	perr(p, p->tok.pos, p->tok.len, "'%s' is not a value of %s: expected one of %s", p->tok.str,
	     field, pmt_buf__cstr(&b));
	pmt_buf__free(&b);
	return -EINVAL;
}

/* A comparison being parsed: the field, the value and where each stands. */
struct test {
	struct node *n;
	char *name;	  /* the field as written */
	int fpos, flen;	  /* the field's span */
	int lpos, llen;	  /* the value's span */
	bool is_str, neg; /* the value's */
};

/* "0 < pid": the value and the operator before the field. */
static int literal_first(struct parser *p, struct test *t)
{
	if (parse_literal(p, t->n, &t->is_str, &t->neg, &t->lpos, &t->llen))
		return -1;
	if (!is_cmp(p->tok.kind))
		return perr(p, p->tok.pos, p->tok.len,
			    "expected a comparison operator after the value");
	t->n->op = p->tok.kind;
	if (t->n->op == T_GLOB || t->n->op == T_BAND)
		return perr(p, p->tok.pos, 1, "put the field on the left of '%s'",
			    op_text(t->n->op));
	return next(p);
}

/* "pid > 5", "mode == user": the operator and the value after the field. */
static int right_side(struct parser *p, struct test *t)
{
	t->n->op = p->tok.kind;
	if (next(p))
		return -1;
	if (p->tok.kind == T_IDENT && t->n->opd.field && t->n->opd.field->symbols) {
		/* a named value: mode == user */
		if (named_value(p, t->n, t->name))
			return -1;
		t->lpos = p->tok.pos;
		t->llen = p->tok.len;
		return next(p);
	}
	return parse_literal(p, t->n, &t->is_str, &t->neg, &t->lpos, &t->llen);
}

/* cgroup == "/system.slice/x.service": the cgroup v2 directory's id
 * (its inode number), found now. */
static void cgroup_literal(struct parser *p, const struct test *t)
{
	struct node *n = t->n;
	char root[256], path[4096];
	struct stat st;

	if (n->op != T_EQ && n->op != T_NE) {
		perr(p, t->lpos, t->llen, "a cgroup is compared by path with == or != only");
		return;
	}
	if (pmt_cgroup__mount(root, sizeof(root))) {
		perr(p, t->lpos, t->llen, "no cgroup v2 hierarchy is mounted");
		return;
	}
	snprintf(path, sizeof(path), "%s%s%.*s", root, n->str[0] == '/' ? "" : "/", (int)n->slen,
		 n->str);
	if (strlen(n->str) != n->slen || stat(path, &st) || !S_ISDIR(st.st_mode)) {
		perr(p, t->lpos, t->llen, "no cgroup %.*s under the cgroup v2 hierarchy at %s",
		     (int)n->slen, n->str, root);
		return;
	}
	free(n->str);
	n->str = NULL;
	n->slen = 0;
	n->val = st.st_ino;
}

/* Types: first whether the operator applies, then the value. */
static void check_types(struct parser *p, const struct test *t)
{
	const struct node *n = t->n;

	if (n->opd.o.src == PMT_FSRC_CGROUP && !n->opd.is_str && t->is_str) {
		cgroup_literal(p, t);
	} else if (n->opd.is_str && n->op != T_EQ && n->op != T_NE && n->op != T_GLOB) {
		perr(p, t->fpos, t->flen, "'%s' is a string: only ==, != and ~ apply to strings",
		     t->name);
	} else if (!n->opd.is_str && n->op == T_GLOB) {
		perr(p, t->fpos, t->flen, "'%s' is a number: ~ (glob match) applies to strings",
		     t->name);
	} else if (n->opd.is_str && !t->is_str) {
		perr(p, t->lpos, t->llen,
		     "'%s' is a string, compared with a number; use a \"string\"", t->name);
	} else if (!n->opd.is_str && t->is_str) {
		perr(p, t->lpos, t->llen, "'%s' is a number, compared with a string", t->name);
		field_list_hint(p, NULL);
	} else if (!t->is_str && n->op != T_BAND) {
		check_range(p, &n->opd, n->val, t->neg, t->lpos, t->llen, t->name);
	}
}

/* A lookahead from the current token: a copy of the lexer that reports
 * nothing. */
static struct pmt_lexer ahead(const struct parser *p)
{
	struct pmt_lexer lx = p->lx;

	lx.err = NULL;
	return lx;
}

/* The lookahead's next token; a character no token starts with is
 * passed over (the compiler that reads it says what is wrong). */
static void ahead_next(struct pmt_lexer *lx)
{
	while (pmt_lex__next(lx)) {
		lx->failed = false;
		pmt_lex__skip_to(lx, lx->tok.pos + 1);
	}
}

/* Where an operand written as an expression ends, reading from the
 * lexer's token: at a comparison, '~', '&' (the bit test), && or ||
 * outside its parentheses, at a ')' closing a group around the test, at
 * a string, or at the end: the end of the token before. */
static int operand_end(struct pmt_lexer *lx)
{
	int depth = 0, end = lx->tok.pos + lx->tok.len;

	for (;; end = lx->tok.pos + lx->tok.len) {
		ahead_next(lx);
		switch (lx->tok.kind) {
		case '(': depth++; continue;
		case ')':
			if (!depth--)
				return end;
			continue;
		case PMT_TOK_END: return end;
		case PMT_TOK_STR:
		case '~':
		case '&':
		case '=':
		case '<':
		case '>':
		case PMT_TOK_LAND:
		case PMT_TOK_LOR:
		case PMT_TOK_EQ:
		case PMT_TOK_NE:
		case PMT_TOK_LE:
		case PMT_TOK_GE:
			if (!depth)
				return end;
			continue;
		}
	}
}

/* Does the group opening at the current '(' hold an operand (an
 * operator follows its ')': (flags & 3) == 1) rather than tests? */
static bool group_is_operand(const struct parser *p)
{
	struct pmt_lexer lx = ahead(p);
	int depth = 1;

	while (depth) {
		ahead_next(&lx);
		if (lx.tok.kind == PMT_TOK_END)
			return false;
		depth += lx.tok.kind == '(' ? 1 : lx.tok.kind == ')' ? -1 : 0;
	}
	ahead_next(&lx);
	switch (lx.tok.kind) {
	case '=':
	case '<':
	case '>':
	case '~':
	case '+':
	case '-':
	case '*':
	case '/':
	case '%':
	case '^':
	case '&':
	case '|':
	case PMT_TOK_EQ:
	case PMT_TOK_NE:
	case PMT_TOK_LE:
	case PMT_TOK_GE:
	case PMT_TOK_SHL:
	case PMT_TOK_SHR:
	case PMT_TOK_ARROW: return true;
	}
	return false;
}

/* text (len bytes) is args.F or args->F, the field F whatever its name
 * (a program's spelling): "args.F", else NULL. */
static char *args_field(const char *text, int len)
{
	char *name;
	int i = 4, f;

	if (len < 6 || strncmp(text, "args", 4))
		return NULL;
	while (i < len && isspace((unsigned char)text[i]))
		i++;
	if (i < len && text[i] == '.')
		i++;
	else if (i + 1 < len && text[i] == '-' && text[i + 1] == '>')
		i += 2;
	else
		return NULL;
	while (i < len && isspace((unsigned char)text[i]))
		i++;
	for (f = i; f < len; f++)
		if (!pmt_lex__name_char(text[f], f > i))
			return NULL;
	if (f == i)
		return NULL;
	return asprintf(&name, "args.%.*s", len - i, text + i) < 0 ? NULL : name;
}

/* Is the operand at the current token written as an expression (more
 * than a field's name, args.F or str(NAME): -ret, len / 1024,
 * curtask->pid)? Its text ends at *end. */
static bool is_expr_operand(const struct parser *p, int *end)
{
	struct pmt_lexer lx = ahead(p);

	if (p->tok.kind == T_MINUS) {
		ahead_next(&lx);
		if (lx.tok.kind == PMT_TOK_INT)
			return false; /* a negative literal first: -5 < x */
		lx = ahead(p);
	} else if (p->tok.kind != T_IDENT && p->tok.kind != T_LP && p->tok.kind != T_MAP) {
		return false;
	}
	if (p->tok.kind == T_LP || p->tok.kind == T_MAP)
		pmt_lex__skip_to(&lx, p->tok.pos);
	*end = operand_end(&lx);
	if (p->tok.kind == T_IDENT && *end > p->tok.pos + p->tok.len) {
		char *f = args_field(p->src + p->tok.pos, *end - p->tok.pos);

		free(f);
		return !f;
	}
	return p->tok.kind != T_IDENT;
}

/* Is the operand ending at end compared with a string ("": a saved
 * string's emptiness)? Then a saved value read bare is a string. */
static bool compared_with_string(const struct parser *p, int end)
{
	struct pmt_lexer lx = ahead(p);

	pmt_lex__skip_to(&lx, end);
	ahead_next(&lx); /* the operator */
	if (lx.tok.kind == PMT_TOK_END)
		return false;
	ahead_next(&lx);
	return lx.tok.kind == PMT_TOK_STR;
}

/* The operand text [t->fpos, end) compiled as an expression into
 * p->mine; the lexer moved past it. */
static int expr_operand(struct parser *p, struct test *t, int end)
{
	struct pmt_error sub = {0};

	t->fpos = p->tok.pos;
	t->flen = end - p->tok.pos;
	t->name = strndup(p->src + t->fpos, (size_t)t->flen);
	if (!t->name)
		return perr(p, t->fpos, t->flen, "out of memory");
	if (!p->exprs)
		return perr(p, t->fpos, t->flen,
			    "expressions are not compiled here: compare a field's value");
	if ((compared_with_string(p, end) ? pmt_expr__compile_str : pmt_expr__compile)(
		    &p->mine, t->name, p->fmt, p->probe, "--filter", p->exprs->types, &t->n->opd,
		    &sub)) {
		/* its message quotes the operand: the whole filter is quoted
		 * here, the caret moved along */
		const char *m = sub.msg;

		if (!strncmp(m, "--filter: ", 10))
			m += 10;
		perr(p, t->fpos + (sub.len ? sub.pos : 0), sub.len ? sub.len : t->flen, "%s", m);
		if (sub.hint[0])
			hint(p, "%s", sub.hint);
		return -EINVAL;
	}
	pmt_lex__skip_to(&p->lx, end);
	return next(p);
}

/* Is the test at the current token a comparison of two operands, no
 * literal on either side (pid == cpid, args.fd == args.count, $a <
 * @limit)? Then the whole comparison is one expression, true when
 * non-zero; its text ends at *end. A name alone on the right that is no
 * operand (TASK_RUNNING, mode == user) is a literal's. */
static bool operands_compared(const struct parser *p, int *end)
{
	struct pmt_lexer lx = ahead(p);
	struct pmt_opinfo info;
	char name[128];
	int rpos, rlen, e;

	if (!p->exprs || p->tok.kind == T_INT || p->tok.kind == T_STR || p->tok.kind == T_MINUS ||
	    p->tok.kind == T_END)
		return false;
	if (p->tok.kind == T_LP || p->tok.kind == T_MAP)
		pmt_lex__skip_to(&lx, p->tok.pos);
	operand_end(&lx);
	switch (lx.tok.kind) {
	case '<':
	case '>':
	case PMT_TOK_EQ:
	case PMT_TOK_NE:
	case PMT_TOK_LE:
	case PMT_TOK_GE: break;
	default: return false;
	}
	ahead_next(&lx);
	switch (lx.tok.kind) {
	case PMT_TOK_INT:
	case PMT_TOK_STR:
	case PMT_TOK_END:
	case '-': return false;
	}
	rpos = lx.tok.pos;
	rlen = lx.tok.len;
	e = operand_end(&lx);
	if (e == rpos + rlen && lx.tok.kind != PMT_TOK_END && lx.tok.kind != ')' &&
	    lx.tok.kind != PMT_TOK_LAND && lx.tok.kind != PMT_TOK_LOR)
		return false; /* another comparison follows: not this one's */
	if (e == rpos + rlen && p->src[rpos] != '@' && p->src[rpos] != '$') {
		/* one name: an operand's (cpid, a field), or a literal's */
		if (rlen >= (int)sizeof(name))
			return false;
		snprintf(name, sizeof(name), "%.*s", rlen, p->src + rpos);
		if (pmt_operand__resolve(p->fmt, name, &info))
			return false;
	}
	*end = e;
	return true;
}

static struct node *parse_test(struct parser *p)
{
	/* mirror: 5 < x is x > 5 */
	static const enum tok_kind mirror[] = {
		[T_EQ] = T_EQ, [T_NE] = T_NE, [T_LT] = T_GT,
		[T_LE] = T_GE, [T_GT] = T_LT, [T_GE] = T_LE,
	};
	struct test t = {.n = new_node(N_CMP, NULL, NULL)};
	bool swapped = false;
	int end = 0;

	if (!t.n)
		return NULL;
	if (operands_compared(p, &end)) {
		/* the comparison one expression: true when non-zero */
		if (expr_operand(p, &t, end))
			goto fail;
		t.n->op = T_NE;
		t.n->val = 0;
		goto done;
	}
	if (is_expr_operand(p, &end)) {
		if (expr_operand(p, &t, end))
			goto fail;
		goto compared;
	}
	swapped = p->tok.kind == T_INT || p->tok.kind == T_STR || p->tok.kind == T_MINUS;
	if (swapped && literal_first(p, &t))
		goto fail;
	if (swapped && is_expr_operand(p, &end)) {
		/* 0 < -ret */
		if (expr_operand(p, &t, end))
			goto fail;
		goto compared;
	}
	if (p->tok.kind != T_IDENT) {
		perr(p, p->tok.pos, p->tok.len,
		     p->tok.kind == T_END ? "expected a field name, but the expression ends here"
					  : "expected a field name");
		goto fail;
	}
	t.fpos = p->tok.pos;
	t.flen = p->tok.len;
	if (end > t.fpos + t.flen) {
		/* args.F */
		t.flen = end - t.fpos;
		t.name = args_field(p->src + t.fpos, t.flen);
		pmt_lex__skip_to(&p->lx, end);
	} else {
		t.name = strdup(p->tok.str);
	}
	if (!t.name || resolve(p, t.name, t.fpos, t.flen, &t.n->opd) || next(p))
		goto fail;
compared:
	if (swapped) {
		t.n->op = mirror[t.n->op];
	} else if (is_cmp(p->tok.kind)) {
		if (right_side(p, &t))
			goto fail;
	} else if (t.n->opd.is_str) {
		perr(p, t.fpos, t.flen,
		     "'%s' is a string: compare it with == \"...\" or ~ \"glob*\"", t.name);
		goto fail;
	} else {
		/* a bare field: true when non-zero */
		t.n->op = T_NE;
		t.n->val = 0;
		goto done;
	}
	check_types(p, &t);
	if (p->lx.failed)
		goto fail;
done:
	free(t.name);
	return t.n;
fail:
	free(t.name);
	node_free(t.n);
	return NULL;
}

static struct node *parse_or(struct parser *p);

static struct node *parse_unary(struct parser *p)
{
	struct node *n;
	int pos;

	if (++p->depth > 64) {
		perr(p, p->tok.pos, p->tok.len, "expression nested too deeply (at most 64 levels)");
		return NULL;
	}
	if (p->tok.kind == T_NOT) {
		if (next(p))
			return NULL;
		n = parse_unary(p);
		p->depth--;
		return n ? new_node(N_NOT, n, NULL) : NULL;
	}
	if (p->tok.kind == T_LP && !group_is_operand(p)) {
		pos = p->tok.pos;
		if (next(p))
			return NULL;
		n = parse_or(p);
		if (n && p->tok.kind != T_RP) {
			perr(p, p->tok.kind == T_END ? pos : p->tok.pos,
			     p->tok.kind == T_END ? 1 : p->tok.len,
			     p->tok.kind == T_END ? "unbalanced '(': a ')' is missing"
						  : "expected ')'");
			node_free(n);
			return NULL;
		}
		if (n && next(p)) {
			node_free(n);
			return NULL;
		}
		p->depth--;
		return n;
	}
	n = parse_test(p);
	p->depth--;
	return n;
}

static struct node *parse_and(struct parser *p)
{
	struct node *l = parse_unary(p), *r;

	while (l && p->tok.kind == T_AND) {
		if (next(p) || !(r = parse_unary(p))) {
			node_free(l);
			return NULL;
		}
		l = new_node(N_AND, l, r);
	}
	return l;
}

static struct node *parse_or(struct parser *p)
{
	struct node *l = parse_and(p), *r;

	while (l && p->tok.kind == T_OR) {
		if (next(p) || !(r = parse_and(p))) {
			node_free(l);
			return NULL;
		}
		l = new_node(N_OR, l, r);
	}
	return l;
}

/* --- patterns ------------------------------------------------------------ */

/* A literal or glob as a list of atoms: 256-bit byte sets, or '*'. */
struct atoms {
	int n;
	bool star_after[PMT_PAT_MAX + 1]; /* [j]: '*' follows atom j (0: start) */
	uint8_t set[PMT_PAT_MAX + 1][32]; /* atoms 1..n */
};

static void set_add(uint8_t *set, unsigned c)
{
	set[c >> 3] |= (uint8_t)(1u << (c & 7));
}

static int add_atom(struct parser *p, struct atoms *a, int pos, int len)
{
	if (a->n >= PMT_PAT_MAX)
		return perr(
			p, pos, len,
			"string too long for a filter: at most %d characters (not counting '*')",
			PMT_PAT_MAX);
	a->n++;
	memset(a->set[a->n], 0, 32);
	return 0;
}

/* glob: * ? [abc] [a-z] [!x] [^x], \ escapes; literal: every byte as is */
static int parse_pattern(struct parser *p, const char *s, size_t n, bool glob, int pos, int len,
			 struct atoms *a)
{
	size_t i = 0, j;
	int c;

	memset(a, 0, sizeof(*a));
	while (i < n) {
		if (glob && s[i] == '*') {
			a->star_after[a->n] = true;
			i++;
			continue;
		}
		if (add_atom(p, a, pos, len))
			return -EINVAL;
		if (!glob) {
			set_add(a->set[a->n], (unsigned char)s[i++]);
			continue;
		}
		if (s[i] == '\\' && i + 1 < n) {
			set_add(a->set[a->n], (unsigned char)s[i + 1]);
			i += 2;
		} else if (s[i] == '?') {
			memset(a->set[a->n], 0xff, 32);
			i++;
		} else if (s[i] == '[') {
			bool negate = false;

			j = i + 1;
			if (j < n && (s[j] == '!' || s[j] == '^'))
				negate = true, j++;
			if (j < n && s[j] == ']') /* ']' first is literal */
				set_add(a->set[a->n], ']'), j++;
			while (j < n && s[j] != ']') {
				if (j + 2 < n && s[j + 1] == '-' && s[j + 2] != ']') {
					if ((unsigned char)s[j] > (unsigned char)s[j + 2])
						return perr(
							p, pos, len,
							"bad range '%c-%c' in [...]: it must ascend",
							s[j], s[j + 2]);
					for (c = (unsigned char)s[j]; c <= (unsigned char)s[j + 2];
					     c++)
						set_add(a->set[a->n], (unsigned)c);
					j += 3;
				} else {
					set_add(a->set[a->n], (unsigned char)s[j++]);
				}
			}
			if (j >= n)
				return perr(p, pos, len,
					    "unterminated '[' in glob: a ']' is missing");
			if (negate)
				for (c = 0; c < 32; c++)
					a->set[a->n][c] = (uint8_t)~a->set[a->n][c];
			i = j + 1;
		} else {
			set_add(a->set[a->n], (unsigned char)s[i++]);
		}
	}
	return 0;
}

/* --- code generation ----------------------------------------------------- */

struct gen {
	struct parser *p;
	struct pmt_filter *out;
	struct atoms *pats[PMT_FILTER_PATS];
	int npats;
};

static int gen_pattern(struct gen *g, const struct node *n)
{
	struct atoms a, *copy;
	int i;

	if (parse_pattern(g->p, n->str, n->slen, n->op == T_GLOB, 0, (int)strlen(g->p->src), &a))
		return -EINVAL;
	for (i = 0; i < g->npats; i++)
		if (!memcmp(g->pats[i], &a, sizeof(a)))
			return i;
	if (g->npats >= PMT_FILTER_PATS)
		return perr(g->p, 0, (int)strlen(g->p->src),
			    "filter too large: more than %d string comparisons", PMT_FILTER_PATS);
	copy = malloc(sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, &a, sizeof(a));
	g->pats[g->npats] = copy;
	return g->npats++;
}

static int gen(struct gen *g, const struct node *n, int t, int f)
{
	struct pmt_filter_entry *e;
	int b, idx, pat;

	switch (n->kind) {
	case N_NOT: return gen(g, n->a, f, t);
	case N_AND: b = gen(g, n->b, t, f); return b < 0 ? b : gen(g, n->a, b, f);
	case N_OR: b = gen(g, n->b, t, f); return b < 0 ? b : gen(g, n->a, t, b);
	case N_CMP: break;
	}
	if (g->out->n >= PMT_FILTER_MAX)
		return -E2BIG; /* reported by the caller */
	idx = g->out->n++;
	e = &g->out->e[idx];
	e->o = n->opd.o;
	e->val = n->val;
	if (pmt_operand__needs_record(&n->opd.o) ||
	    (g->p->mine.n && pmt_exprs__needs_record(&g->p->mine, &n->opd.o)))
		g->out->needs_record = 1;
	e->t = (uint8_t)t;
	e->f = (uint8_t)f;
	switch (n->op) {
	case T_NE: e->t = (uint8_t)f, e->f = (uint8_t)t; /* fallthrough */
	case T_EQ: e->op = PMT_FOP_EQ; break;
	case T_GE: e->t = (uint8_t)f, e->f = (uint8_t)t; /* fallthrough */
	case T_LT: e->op = PMT_FOP_LT; break;
	case T_GT: e->t = (uint8_t)f, e->f = (uint8_t)t; /* fallthrough */
	case T_LE: e->op = PMT_FOP_LE; break;
	case T_BAND: e->op = PMT_FOP_BAND; break;
	default: break;
	}
	if (n->opd.is_str) {
		pat = gen_pattern(g, n);
		if (pat < 0)
			return pat;
		e->op = PMT_FOP_MATCH;
		e->val = (uint64_t)pat;
		if (n->op == T_NE)
			e->t = (uint8_t)f, e->f = (uint8_t)t;
		else
			e->t = (uint8_t)t, e->f = (uint8_t)f;
	}
	return idx;
}

/* Byte classes over all atoms, then each pattern's Shift-And masks. */
static int build_classes(struct gen *g)
{
	uint8_t sig[256][(PMT_FILTER_PATS * (PMT_PAT_MAX + 1) + 7) / 8];
	int ncls = 0, c, d, k, j, bit;

	memset(sig, 0, sizeof(sig));
	for (c = 0; c < 256; c++) {
		for (k = 0; k < g->npats; k++) {
			for (j = 1; j <= g->pats[k]->n; j++) {
				if (!(g->pats[k]->set[j][c >> 3] & (1u << (c & 7))))
					continue;
				bit = k * (PMT_PAT_MAX + 1) + j;
				sig[c][bit / 8] |= (uint8_t)(1u << (bit % 8));
			}
		}
	}
	for (c = 0; c < 256; c++) {
		for (d = 0; d < c && memcmp(sig[c], sig[d], sizeof(sig[c])); d++)
			;
		if (d < c) {
			g->out->cls[c] = g->out->cls[d];
			continue;
		}
		if (ncls >= PMT_FILTER_NCLS)
			return perr(
				g->p, 0, (int)strlen(g->p->src),
				"filter too large: its strings use more than %d distinct character classes",
				PMT_FILTER_NCLS);
		g->out->cls[c] = (uint8_t)ncls++;
	}
	for (k = 0; k < g->npats; k++) {
		struct pmt_pattern *pp = &g->out->pats[k];
		struct atoms *a = g->pats[k];

		for (j = 0; j <= a->n; j++)
			if (a->star_after[j])
				pp->star |= 1ULL << j;
		pp->final = 1ULL << a->n;
		for (c = 0; c < 256; c++)
			for (j = 1; j <= a->n; j++)
				if (a->set[j][c >> 3] & (1u << (c & 7)))
					pp->mask[g->out->cls[c]] |= 1ULL << j;
	}
	return 0;
}

/* The operands written as expressions made one program of p->exprs. */
static int filter_program(struct parser *p, struct pmt_filter *out)
{
	struct pmt_operand *ops[PMT_FILTER_MAX];
	struct pmt_error sub = {0};
	size_t i;

	out->xprog = PMT_XPROG_NONE;
	if (!p->mine.n)
		return 0;
	for (i = 0; i < out->n && i < PMT_FILTER_MAX; i++)
		ops[i] = &out->e[i].o;
	if (!pmt_exprs__program(p->exprs, &p->mine, ops, i, &out->xprog, p->probe, &sub))
		return 0;
	/* too much to compute: the whole filter is the culprit */
	return sub.cls == PMT_ERR_USAGE ? perr(p, 0, (int)strlen(p->src), "%s", sub.msg)
					: pmt_error__runtime(p->err, sub.code, "%s", sub.msg);
}

/* A lone '&' (not &&) before pos: flags & 3 == 1 reads as a bit test
 * followed by a comparison with nothing to compare. */
static bool bit_test_before(const struct parser *p)
{
	struct pmt_lexer lx = ahead(p);

	pmt_lex__skip_to(&lx, 0);
	while (!pmt_lex__next(&lx) && lx.tok.pos < p->tok.pos)
		if (lx.tok.kind == '&')
			return true;
	return false;
}

int pmt_filter__compile(const char *expr, const struct pmt_format *fmt, const char *probe,
			struct pmt_exprs *exprs, struct pmt_filter *out, struct pmt_error *err)
{
	struct parser p = {.src = expr, .fmt = fmt, .probe = probe, .err = err, .exprs = exprs};
	struct gen g = {.p = &p, .out = out};
	struct node *root = NULL;
	int start, i, ret = -EINVAL;

	memset(out, 0, sizeof(*out));
	out->xprog = PMT_XPROG_NONE;
	p.mine.vars = p.exprs ? p.exprs->vars : NULL;
	pmt_lex__init(&p.lx, expr, "--filter", PMT_LEX_SIZES, err);
	if (next(&p))
		goto out;
	if (p.tok.kind == T_END) {
		perr(&p, 0, 1, "empty filter: expected an expression such as pid == 1234");
		goto out;
	}
	root = parse_or(&p);
	if (!root)
		goto out;
	if (p.tok.kind != T_END) {
		perr(&p, p.tok.pos, p.tok.len,
		     p.tok.kind == T_RP ? "unbalanced ')'"
					: "expected && or || or the end of the expression");
		if (is_cmp(p.tok.kind) && bit_test_before(&p))
			pmt_error__hint(err,
					"'&' is the bit test (F & MASK holds where a bit is set): "
					"to compare what it computes, write (F & MASK) %s N",
					op_text(p.tok.kind));
		goto out;
	}
	start = gen(&g, root, PMT_FILTER_ACCEPT, PMT_FILTER_REJECT);
	if (start == -E2BIG) {
		perr(&p, 0, (int)strlen(expr), "filter too large: at most %d comparisons",
		     PMT_FILTER_MAX);
		goto out;
	}
	if (start < 0 || build_classes(&g) || filter_program(&p, out))
		goto out;
	out->start = (uint8_t)start;
	ret = 0;
out:
	pmt_exprs__free(&p.mine);
	for (i = 0; i < g.npats; i++)
		free(g.pats[i]);
	free(p.tok.str);
	node_free(root);
	if (ret) {
		memset(out, 0, sizeof(*out));
		out->xprog = PMT_XPROG_NONE;
	}
	return ret;
}

static void dump_target(struct pmt_buf *b, int t)
{
	if (t == PMT_FILTER_ACCEPT)
		pmt_buf__puts(b, "accept");
	else if (t == PMT_FILTER_REJECT)
		pmt_buf__puts(b, "reject");
	else
		pmt_buf__printf(b, "%d", t);
}

void pmt_filter__dump(struct pmt_buf *b, const struct pmt_filter *f)
{
	static const char *const ops[] = {"==", "<", "<=", "&", "~"};
	static const char *const srcs[] = {
		"field", "field_str", "field_dstr", "pid",   "tid",  "cpu",
		"uid",	 "gid",	      "cgroup",	    "comm",  "str",  "expr",
		"task",	 "nsecs",     "elapsed",    "probe", "cpid",
	};
	_Static_assert(sizeof(srcs) / sizeof(srcs[0]) == PMT_FSRC__MAX, "a name a source");
	int i;

	pmt_buf__printf(b, "start %d%s", f->start, f->needs_record ? " record" : "");
	if (f->xprog != PMT_XPROG_NONE)
		pmt_buf__printf(b, " expressions %u", f->xprog);
	pmt_buf__putc(b, '\n');
	for (i = 0; i < f->n; i++) {
		const struct pmt_filter_entry *e = &f->e[i];

		pmt_buf__printf(b, "%d: %s", i, e->o.src < PMT_FSRC__MAX ? srcs[e->o.src] : "?");
		if (e->o.src <= PMT_FSRC_FIELD_DSTR || e->o.src == PMT_FSRC_PTR_STR)
			pmt_buf__printf(b, "@%u:%u%s%s", e->o.off, e->o.size,
					e->o.flags & PMT_FFLAG_SIGNED ? "s" : "",
					e->o.flags & PMT_FFLAG_CTX ? " ctx" : "");
		pmt_buf__printf(b, " %s ", e->op <= PMT_FOP_MATCH ? ops[e->op] : "?");
		if (e->op == PMT_FOP_MATCH)
			pmt_buf__printf(b, "pat%llu", (unsigned long long)e->val);
		else if (e->o.flags & PMT_FFLAG_SIGNED)
			pmt_buf__printf(b, "%lld", (long long)e->val);
		else
			pmt_buf__printf(b, "%llu", (unsigned long long)e->val);
		pmt_buf__puts(b, " ? ");
		dump_target(b, e->t);
		pmt_buf__puts(b, " : ");
		dump_target(b, e->f);
		pmt_buf__putc(b, '\n');
	}
}
