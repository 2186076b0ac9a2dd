// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bpftrace's programs read into the engine's terms (program.h). The text
 * is first copied with its comments and #include lines blanked (places
 * kept, for messages); probe specs are read as text (paths hold '/' and
 * '.'), predicates as the text between their slashes, and blocks token
 * by token with the languages' lexer (filter/lex.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "filter/lex.h"
#include "lang/program.h"
#include "util/grow.h"

struct parser {
	const char *name; /* the file, or "-e" */
	const char *orig; /* the text as given */
	char *src;	  /* comments and #include lines blanked */
	struct pmt_lexer lx;
	struct pmt_error lexerr; /* the lexer's, told by next() */
	struct pmt_error *err;
	struct pmt_program *p;
	bool failed;
	/* the start time's shape (--latency) refused: the program is read
	 * again with every map a saved value's (no_lat) */
	bool lat_refused, no_lat;
	/* inside an if: the condition what is read now is under (ifs within
	 * ifs joined with &&), else NULL; closed: the statement just read
	 * ended with its block's '}' (no ';' after it) */
	char *guard;
	bool closed;
	int nblocks;   /* blocks read so far */
	char *end_key; /* the start time's key where it is read back */
	/* the maps of saved values (@NAME[KEY] = VALUE), those END clears:
	 * " NAME NAME " */
	struct pmt_buf saved, cleared;
	/* the maps saving func or probe (sslsnoop.bt's @func_ssl[tid] =
	 * func), or the kernel's stack (biostacks.bt's @reqstack[k] =
	 * kstack): " NAME NAME " each */
	struct pmt_buf funcs, probes, kstacks;
	/* the block's $variables so far: each its value's text, used in
	 * its place (a value of the event: nothing changes it meanwhile) */
	/* the block's saved values written so far (@NAME[KEY] squeezed, as
	 * written) and what a read of one after is, (GUARD) ? (VALUE) :
	 * (BEFORE); maps_as_written: rewrite leaves reads as they are */
	struct written {
		char *target, *text;
	} w[32];
	int nw;
	bool maps_as_written;
	struct var {
		char *name, *text;
		/* given a value inside an if: its condition (guard), the
		 * value (given) and what it was before (before); text is
		 * (guard) ? (given) : (before). NULL: not so */
		char *guard, *given, *before;
	} vars[32];
	int nvars;
};

/* What a block's statement does to the map. */
struct update {
	char *map, *fn, *value, *keys;
	int tend;  /* where @NAME[KEYS] ends in the source */
	bool incr; /* @map++: an integer map, printed as count()'s */
};

static int line_of(const struct parser *P, int pos)
{
	int line = 1, i;

	for (i = 0; i < pos && P->orig[i]; i++)
		line += P->orig[i] == '\n';
	return line;
}

/* "NAME:LINE: MSG", the line quoted with a caret under [pos, pos+len). */
static int perr(struct parser *P, int pos, int len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int perr(struct parser *P, int pos, int len, const char *fmt, ...)
{
	const char *s = P->orig;
	int start = pos, end = pos;
	char msg[768], *line;
	va_list ap;

	if (P->failed)
		return -EINVAL;
	P->failed = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	while (start > 0 && s[start - 1] != '\n')
		start--;
	while (s[end] && s[end] != '\n')
		end++;
	pmt_error__usage(P->err, "%s:%d: %s", P->name, line_of(P, pos), msg);
	line = strndup(s + start, (size_t)(end - start));
	if (line) {
		if (len > end - pos)
			len = end - pos;
		pmt_error__caret(P->err, line, pos - start, len > 0 ? len : 1);
		free(line);
	}
	return -EINVAL;
}

/* The lexer's next token; a bad one told with its line. */
/* perr of the start time's shape: the program may still read as
 * saved values */
#define lat_perr(P, ...) ((P)->lat_refused = true, perr((P), __VA_ARGS__))

static int next(struct parser *P)
{
	const char *m = P->lexerr.msg;

	if (!pmt_lex__next(&P->lx))
		return 0;
	if (!strncmp(m, P->name, strlen(P->name)) && !strncmp(m + strlen(P->name), ": ", 2))
		m += strlen(P->name) + 2;
	return perr(P, P->lexerr.pos, P->lexerr.len, "%s", m);
}

/* --- the text ------------------------------------------------------------- */

/* The preprocessor's conditionals bpftrace's tools use: BTF is here,
 * so #ifndef BPFTRACE_HAVE_BTF skips to its #else or #endif. */
struct cond {
	bool skip[8]; /* each open conditional's: its lines are skipped */
	int n;
};

static bool skipping(const struct cond *c)
{
	return c->n && c->skip[c->n - 1];
}

static void blank_line(char *s, int *i)
{
	while (s[*i] && s[*i] != '\n')
		s[(*i)++] = ' ';
}

/* A # line at s[*i]: taken in and blanked. */
static int directive(struct parser *P, struct cond *c, int *i)
{
	const char *s = P->src + *i, *arg;
	int n = (int)strcspn(s, " \t\n"), pos = *i;
	bool btf;

	arg = s + n + strspn(s + n, " \t");
	btf = !strncmp(arg, "BPFTRACE_HAVE_BTF", 17) && strchr(" \t\n", arg[17]);
	if ((n == 7 && !strncmp(s, "#ifndef", 7) && btf) ||
	    (n == 6 && !strncmp(s, "#ifdef", 6) && btf)) {
		if (c->n == 8)
			return perr(P, pos, n, "conditionals nested more than 8 deep");
		c->skip[c->n] = skipping(c) || n == 7;
		c->n++;
	} else if (n == 5 && !strncmp(s, "#else", 5) && c->n) {
		c->skip[c->n - 1] = (c->n > 1 && c->skip[c->n - 2]) || !c->skip[c->n - 1];
	} else if (n == 6 && !strncmp(s, "#endif", 6) && c->n) {
		c->n--;
	} else if (!(n == 8 && !strncmp(s, "#include", 8)) && strncmp(s, "#!", 2) && !skipping(c)) {
		return perr(P, pos, n,
			    "'%.*s' is not supported: of the preprocessor's lines #include is "
			    "read (kernel types come from BTF) and #ifndef/#ifdef "
			    "BPFTRACE_HAVE_BTF, #else, #endif",
			    n, s);
	}
	blank_line(P->src, i);
	return 0;
}

/* Comments, # lines (a #! first line too) and what conditionals skip
 * become spaces. */
static int blank(struct parser *P)
{
	char *s = P->src;
	struct cond c = {0};
	bool line_start = true;
	int i = 0, j;

	while (s[i]) {
		if (line_start && s[i] == '#') {
			if (directive(P, &c, &i))
				return -EINVAL;
		} else if (line_start && skipping(&c) && s[i] != '\n') {
			blank_line(s, &i);
		} else if (s[i] == '"') {
			for (i++; s[i] && s[i] != '"' && s[i] != '\n'; i++)
				if (s[i] == '\\' && s[i + 1])
					i++;
			if (s[i] == '"')
				i++;
			line_start = false;
		} else if (s[i] == '/' && s[i + 1] == '/') {
			blank_line(s, &i);
		} else if (s[i] == '/' && s[i + 1] == '*') {
			for (j = i; s[j] && !(s[j] == '*' && s[j + 1] == '/'); j++)
				;
			if (!s[j])
				return perr(P, i, 2,
					    "a comment opened here is not closed: '*/' is missing");
			for (j += 2; i < j; i++)
				if (s[i] != '\n')
					s[i] = ' ';
		} else {
			if (s[i] == '\n')
				line_start = true;
			else if (s[i] != ' ' && s[i] != '\t')
				line_start = false;
			i++;
		}
	}
	return c.n ? perr(P, (int)strlen(s) - 1 > 0 ? (int)strlen(s) - 1 : 0, 1,
			  "a conditional is not closed: #endif is missing")
		   : 0;
}

static int skip_space(const char *s, int i)
{
	while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')
		i++;
	return i;
}

/* --- probes --------------------------------------------------------------- */

/* bpftrace's provider names and their one-letter forms, as pmtrace's kind
 * prefixes; fn: a kernel function probe, 'k' by kprobes in bpftrace
 * (kprobe:), 'f' by trampolines (kfunc:, fentry:) */
static const struct {
	const char *bt, *pmt;
	char fn;
} providers[] = {
	{"tracepoint", "tracepoint", 0},
	{"t", "tracepoint", 0},
	{"kprobe", "kprobe", 'k'},
	{"k", "kprobe", 'k'},
	{"kretprobe", "kretprobe", 'k'},
	{"kr", "kretprobe", 'k'},
	{"kfunc", "kprobe", 'f'},
	{"fentry", "kprobe", 'f'},
	{"f", "kprobe", 'f'},
	{"kretfunc", "kretprobe", 'f'},
	{"fexit", "kretprobe", 'f'},
	{"fr", "kretprobe", 'f'},
	{"uprobe", "uprobe", 0},
	{"u", "uprobe", 0},
	{"uretprobe", "uretprobe", 0},
	{"ur", "uretprobe", 0},
	{"usdt", "usdt", 0},
	{"U", "usdt", 0},
	{"rawtracepoint", "rawtracepoint", 0},
	{"rt", "rawtracepoint", 0},
	{"profile", "profile", 0},
	{"p", "profile", 0},
	{"interval", "interval", 0},
	{"i", "interval", 0},
};

static int add_probe(struct parser *P, int pos, int len, const char *filter)
{
	const char *s = P->src + pos, *colon = memchr(s, ':', (size_t)len);
	struct pmt_prog_probe *v;
	size_t i, n = colon ? (size_t)(colon - s) : (size_t)len;

	for (i = 0; i < sizeof(providers) / sizeof(providers[0]); i++)
		if (strlen(providers[i].bt) == n && !strncmp(s, providers[i].bt, n))
			break;
	if (i == sizeof(providers) / sizeof(providers[0]) || !colon || colon + 1 == s + len)
		return perr(P, pos, len,
			    "probe '%.*s' is not supported yet: expected tracepoint:, kprobe:, "
			    "kretprobe:, kfunc:, kretfunc:, uprobe:, uretprobe:, usdt:, "
			    "rawtracepoint:, profile: or interval: and what it names",
			    len, s);
	if (providers[i].fn)
		*(providers[i].fn == 'f' ? &P->p->kfuncs : &P->p->kprobes) = true;
	v = pmt_grow(P->p->probes, &P->p->cap, P->p->nprobes, sizeof(*v), 4);
	if (!v)
		return pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	P->p->probes = v;
	v = &v[P->p->nprobes++];
	memset(v, 0, sizeof(*v));
	v->block = P->nblocks;
	if (asprintf(&v->spec, "%s:%.*s", providers[i].pmt, (int)(len - n - 1), colon + 1) < 0 ||
	    asprintf(&v->where, "%s:%d", P->name, line_of(P, pos)) < 0 ||
	    (filter && !(v->filter = strdup(filter)))) {
		v->spec = NULL;
		v->where = NULL;
		return pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	}
	return 0;
}

/* --- expressions -------------------------------------------------------- */

/* Does condition cur (an if's: ifs within ifs are joined by branch() as
 * "(OUTER) && COND") hold only where g does: is it g, or g and more? */
static bool guard_implies(const char *cur, const char *g)
{
	size_t n, e;
	int depth;

	if (!cur || !g)
		return false;
	n = strlen(cur);
	while (n) {
		if (n == strlen(g) && !strncmp(cur, g, n))
			return true;
		if (cur[0] != '(')
			return false;
		for (e = 0, depth = 0; e < n; e++) {
			depth += (cur[e] == '(') - (cur[e] == ')');
			if (!depth)
				break;
		}
		if (e >= n || n - e < 5 || strncmp(cur + e, ") && ", 5))
			return false;
		cur++; /* OUTER */
		n = e - 1;
	}
	return false;
}

/* The block's $NAME at lx's '$' into b: its value's text in parentheses;
 * false if it has none (said). */
static bool use_var(struct parser *P, struct pmt_lexer *lx, struct pmt_buf *b)
{
	struct pmt_lexer peek = *lx;
	int i, pos = lx->tok.pos;
	const struct var *v;
	size_t n;

	if (pmt_lex__next(&peek) || peek.tok.kind != PMT_TOK_NAME || peek.tok.pos != pos + 1) {
		perr(P, pos, 1, "expected a variable's name after '$'");
		return false;
	}
	for (i = P->nvars - 1; i >= 0; i--)
		if ((int)strlen(P->vars[i].name) == peek.tok.len &&
		    !strncmp(P->vars[i].name, P->src + peek.tok.pos, (size_t)peek.tok.len))
			break;
	if (i < 0) {
		perr(P, pos, peek.tok.len + 1,
		     "$%.*s has no value here: a variable is assigned in its block before it "
		     "is used",
		     peek.tok.len, P->src + peek.tok.pos);
		return false;
	}
	v = &P->vars[i];
	n = P->guard ? strlen(P->guard) : 0;
	/* inside the if that gave it (or an if within it): the value given;
	 * outside an if within the one read in: what that if adds to the
	 * condition alone (the rest holds here) */
	if (guard_implies(P->guard, v->guard))
		pmt_buf__printf(b, "(%s)", v->given);
	else if (n && v->guard && v->guard[0] == '(' && !strncmp(v->guard + 1, P->guard, n) &&
		 !strncmp(v->guard + 1 + n, ") && ", 5))
		pmt_buf__printf(b, "((%s) ? (%s) : (%s))", v->guard + n + 6, v->given, v->before);
	else
		pmt_buf__printf(b, "(%s)", v->text);
	*lx = peek;
	return true;
}

static char *squeezed(const char *text);
static char *rewrite(struct parser *P, int start, int end);

/*
 * A read of a saved value at the lexer's '@' (before end) that the block
 * saved or forgot before, under the same key as written: what it reads
 * then, (GUARD) ? (VALUE) : (BEFORE) (the lexer left at its last token),
 * or NULL (the lexer where it was). A block's reads see its own saves
 * as bpftrace's do, each in its place.
 */
static const char *written_read(struct parser *P, struct pmt_lexer *lx, int end)
{
	struct pmt_lexer peek = *lx;
	int from = lx->tok.pos, to, depth = 0, i;
	char *raw, *t;

	if (!P->nw || P->maps_as_written || pmt_lex__next(&peek) || peek.tok.kind != PMT_TOK_NAME ||
	    peek.tok.pos != from + 1)
		return NULL;
	to = peek.tok.pos + peek.tok.len;
	{
		struct pmt_lexer k = peek;

		if (!pmt_lex__next(&k) && k.tok.kind == '[' && k.tok.pos == to) {
			do {
				depth += (k.tok.kind == '[') - (k.tok.kind == ']');
				peek = k;
			} while (depth && !pmt_lex__next(&k) && k.tok.kind != PMT_TOK_END &&
				 k.tok.pos < end);
			if (depth)
				return NULL;
			to = peek.tok.pos + 1;
		}
	}
	/* the key as the write's: $variables given their values */
	P->maps_as_written = true;
	raw = rewrite(P, from, to);
	P->maps_as_written = false;
	t = raw ? squeezed(raw) : NULL;
	free(raw);
	for (i = P->nw - 1; t && i >= 0; i--)
		if (!strcmp(P->w[i].target, t))
			break;
	free(t);
	if (!t || i < 0)
		return NULL;
	*lx = peek;
	return P->w[i].text;
}

/* The text [start, end) in pmtrace's terms: args->F and args.F are
 * args.F, the field F whatever its name (a bare builtin's name is the
 * builtin: the probes' formats say builtins_first), a $variable its
 * value. NULL: refused (said) or out of memory. */
static char *rewrite(struct parser *P, int start, int end)
{
	struct pmt_lexer lx = P->lx, peek;
	struct pmt_buf b = {0};
	const char *s = P->src;
	int at = start;

	lx.err = NULL;
	pmt_lex__skip_to(&lx, start);
	while (!pmt_lex__next(&lx) && lx.tok.kind != PMT_TOK_END && lx.tok.pos < end) {
		const struct pmt_tok *t = &lx.tok;

		if (t->kind == '$') {
			pmt_buf__add(&b, s + at, (size_t)(t->pos - at));
			if (!use_var(P, &lx, &b)) {
				pmt_buf__free(&b);
				return NULL;
			}
			at = lx.tok.pos + lx.tok.len;
			continue;
		}
		if (t->kind == '@') {
			int from = t->pos; /* t moves with the lexer */
			const char *w = written_read(P, &lx, end);

			if (w) {
				pmt_buf__add(&b, s + at, (size_t)(from - at));
				pmt_buf__printf(&b, "(%s)", w);
				at = lx.tok.pos + lx.tok.len;
			}
			continue;
		}
		if (t->kind != PMT_TOK_NAME)
			continue;
		if (t->len == 4 && !strncmp(s + t->pos, "args", 4)) {
			peek = lx;
			if (pmt_lex__next(&peek) ||
			    (peek.tok.kind != PMT_TOK_ARROW && peek.tok.kind != '.'))
				continue;
			pmt_buf__add(&b, s + at, (size_t)(t->pos - at));
			pmt_buf__add(&b, "args.", 5);
			at = peek.tok.pos + peek.tok.len;
			lx = peek;
		}
	}
	/* (a last token may reach past end: a read's span cut in a bad
	 * program) */
	if (end > at)
		pmt_buf__add(&b, s + at, (size_t)(end - at));
	/* $variables given in terms of each other double at each step */
	if (b.len > 65536) {
		pmt_buf__free(&b);
		perr(P, start, end - start,
		     "this grows past 64 KiB once its $variables are given their values");
		return NULL;
	}
	pmt_buf__cstr(&b);
	return b.p; /* its memory the caller's */
}

/* Tokens up to a ',' or the bracket that closes the list at depth 0:
 * the span read, the stop token left in the lexer. */
static int span(struct parser *P, int close, int *start, int *end)
{
	int depth = 0;

	*start = P->lx.tok.pos;
	*end = *start;
	for (;;) {
		int k = P->lx.tok.kind;

		if (k == PMT_TOK_END || k == '}' || k == ';' ||
		    (!depth && (k == ',' || k == close)))
			break;
		if (k == '(' || k == '[')
			depth++;
		else if (k == ')' || k == ']')
			depth--;
		*end = P->lx.tok.pos + P->lx.tok.len;
		if (next(P))
			return -EINVAL;
	}
	if (P->lx.tok.kind != ',' && P->lx.tok.kind != close)
		return perr(P, P->lx.tok.pos, P->lx.tok.len, "expected '%c'", close);
	if (*end == *start)
		return perr(P, P->lx.tok.pos, P->lx.tok.len ? P->lx.tok.len : 1,
			    "expected an expression");
	return 0;
}

/* A list in brackets (the lexer at the opening one): its items rewritten,
 * joined by sep; how many in *n. */
static char *list(struct parser *P, int close, const char *sep, int *n)
{
	struct pmt_buf b = {0};
	int start, end;
	char *item;

	*n = 0;
	if (next(P))
		return NULL;
	if (P->lx.tok.kind == close)
		return strdup("");
	for (;;) {
		if (span(P, close, &start, &end) || !(item = rewrite(P, start, end))) {
			pmt_buf__free(&b);
			return NULL;
		}
		pmt_buf__printf(&b, "%s%s", (*n)++ ? sep : "", item);
		free(item);
		if (P->lx.tok.kind == close)
			break;
		if (next(P)) {
			pmt_buf__free(&b);
			return NULL;
		}
	}
	pmt_buf__cstr(&b);
	return b.p; /* its memory the caller's */
}

/* --- statements ------------------------------------------------------------ */

static const char *const fns[] = {"count", "sum", "avg", "min", "max", "stats", "hist", "lhist"};

static void update_free(struct update *u)
{
	free(u->map);
	free(u->fn);
	free(u->value);
	free(u->keys);
	memset(u, 0, sizeof(*u));
}

static int value_text(struct parser *P, char **text);

/* @NAME[KEYS] = FN(ARGS), @NAME[KEYS]++, or @NAME[KEYS] = VALUE (the
 * lexer at '@') */
static int map_update(struct parser *P, struct update *u)
{
	const char *s = P->src;
	int at = P->lx.tok.pos, nargs, nkeys = 0, fpos, flen;
	size_t i;

	if (next(P))
		return -EINVAL;
	if (P->lx.tok.kind == PMT_TOK_NAME && P->lx.tok.pos == at + 1) {
		u->map = strndup(s + P->lx.tok.pos, (size_t)P->lx.tok.len);
		if (next(P))
			return -EINVAL;
	} else {
		u->map = strdup("");
	}
	if (P->lx.tok.kind == '[') {
		if (!(u->keys = list(P, ']', ",", &nkeys)))
			return -EINVAL;
		if (!nkeys)
			return perr(P, P->lx.tok.pos, 1, "a map's [keys] hold at least one key");
		if (next(P))
			return -EINVAL;
	}
	u->tend = P->lx.tok.pos;
	if (P->lx.tok.kind == '+') {
		if (next(P) || P->lx.tok.kind != '+')
			return perr(P, P->lx.tok.pos, 1, "expected '++' or '= FUNCTION(...)'");
		u->fn = strdup("count");
		u->incr = true;
		return next(P);
	}
	if (P->lx.tok.kind != '=')
		return perr(P, P->lx.tok.pos, P->lx.tok.len ? P->lx.tok.len : 1,
			    "expected '= FUNCTION(...)' or '++' after the map");
	if (next(P))
		return -EINVAL;
	fpos = P->lx.tok.pos;
	flen = P->lx.tok.len;
	if (!P->no_lat && P->lx.tok.kind == PMT_TOK_NAME && flen == 5 &&
	    !strncmp(s + fpos, "nsecs", 5)) {
		u->fn = strdup("nsecs"); /* a start time (start_store) */
		return next(P);
	}
	for (i = 0; P->lx.tok.kind == PMT_TOK_NAME && i < sizeof(fns) / sizeof(fns[0]); i++)
		if ((int)strlen(fns[i]) == flen && !strncmp(s + fpos, fns[i], (size_t)flen))
			break;
	if (P->lx.tok.kind != PMT_TOK_NAME || i == sizeof(fns) / sizeof(fns[0])) {
		/* a value saved (save_value) */
		u->fn = strdup("=");
		if (value_text(P, &u->value))
			return -EINVAL;
		return u->value ? 0
				: perr(P, fpos, 1, "expected a value: @%s[KEY] = VALUE", u->map);
	}
	u->fn = strdup(fns[i]);
	if (next(P))
		return -EINVAL;
	if (P->lx.tok.kind != '(')
		return perr(P, P->lx.tok.pos, 1, "expected '(' after %s", fns[i]);
	if (!(u->value = list(P, ')', i == 7 ? ":" : ",", &nargs)))
		return -EINVAL;
	if (nargs != (i == 0 ? 0 : i == 7 ? 4 : 1))
		return perr(P, fpos, P->lx.tok.pos + 1 - fpos, "%s() takes %s", fns[i],
			    i == 0   ? "no argument"
			    : i == 7 ? "four arguments: (VALUE, MIN, MAX, STEP)"
				     : "one argument");
	if (!nargs) {
		free(u->value);
		u->value = NULL;
	}
	return next(P);
}

/* printf's literal arguments: strings and integers */
struct lit {
	bool str;
	long long num;
	char *s;
};

#define MAX_LITS 16

/* fmt (decoded) with its arguments, as C's printf: into out */
static int format_literals(struct parser *P, const char *fmt, size_t n, const struct lit *a, int na,
			   int pos, int len, struct pmt_buf *out)
{
	char spec[32], conv;
	size_t i, k;
	int used = 0;
	long w;

	for (i = 0; i < n; i++) {
		if (fmt[i] != '%') {
			pmt_buf__putc(out, fmt[i]);
			continue;
		}
		if (fmt[i + 1] == '%') {
			pmt_buf__putc(out, '%');
			i++;
			continue;
		}
		for (k = 0, w = 0;
		     i < n && k < sizeof(spec) - 4 && (k == 0 || strchr("-+ #0123456789.", fmt[i]));
		     i++) {
			/* a width or precision past 1000: a line of megabytes */
			w = fmt[i] >= '0' && fmt[i] <= '9' ? w * 10 + (fmt[i] - '0') : 0;
			if (w > 1000)
				return perr(P, pos, len,
					    "printf's widths and precisions are at most 1000");
			spec[k++] = fmt[i];
		}
		while (i < n && strchr("hlLqjzt", fmt[i]))
			i++;
		conv = i < n ? fmt[i] : '\0';
		if (!conv || !strchr("diuxXocs", conv))
			return perr(P, pos, len, "printf's conversion %%%c is not supported",
				    conv ? conv : ' ');
		if (used == na)
			return perr(P, pos, len, "printf has more conversions than arguments");
		if ((conv == 's') != a[used].str)
			return perr(P, pos, len, "printf's argument %d is a %s, its %%%c a %s",
				    used + 1, a[used].str ? "string" : "number", conv,
				    conv == 's' ? "string" : "number");
		if (conv == 's' || conv == 'c') {
			spec[k++] = conv;
			spec[k] = '\0';
		} else {
			spec[k++] = 'l';
			spec[k++] = 'l';
			spec[k++] = conv;
			spec[k] = '\0';
		}
		if (conv == 's')
			pmt_buf__printf(out, spec, a[used].s);
		else if (conv == 'c')
			pmt_buf__printf(out, spec, (int)a[used].num);
		else
			pmt_buf__printf(out, spec, a[used].num);
		used++;
	}
	if (used < na)
		return perr(P, pos, len, "printf has more arguments than conversions");
	return 0;
}

/* BEGIN's or END's printf("format", literals...): its text appended
 * to *to */
static int literal_printf(struct parser *P, char **to)
{
	struct pmt_buf fmt = {0}, b = {0};
	struct lit a[MAX_LITS] = {0};
	int na = 0, pos, len, ret, i;
	char *all;
	bool neg;

	if (next(P) || P->lx.tok.kind != '(' || next(P) || P->lx.tok.kind != PMT_TOK_STR)
		return perr(P, P->lx.tok.pos, P->lx.tok.len ? P->lx.tok.len : 1,
			    "BEGIN's and END's printf take a format string here");
	pos = P->lx.tok.pos;
	len = P->lx.tok.len;
	pmt_lex__string(&P->lx, &P->lx.tok, &fmt);
	for (ret = next(P); !ret && P->lx.tok.kind == ','; na++) {
		if (na == MAX_LITS) {
			ret = perr(P, P->lx.tok.pos, 1, "printf takes at most %d arguments",
				   MAX_LITS);
			break;
		}
		if ((ret = next(P)))
			break;
		neg = P->lx.tok.kind == '-';
		if (neg && (ret = next(P)))
			break;
		if (P->lx.tok.kind == PMT_TOK_STR && !neg) {
			struct pmt_buf sb = {0};

			pmt_lex__string(&P->lx, &P->lx.tok, &sb);
			a[na].str = true;
			pmt_buf__cstr(&sb);
			a[na].s = sb.p;
		} else if (P->lx.tok.kind == PMT_TOK_INT) {
			a[na].num = neg ? -(long long)P->lx.tok.num : (long long)P->lx.tok.num;
		} else {
			ret = perr(
				P, P->lx.tok.pos, P->lx.tok.len ? P->lx.tok.len : 1,
				"BEGIN's and END's printf take literal strings and numbers here");
			break;
		}
		ret = next(P);
	}
	if (!ret && P->lx.tok.kind != ')')
		ret = perr(P, P->lx.tok.pos, P->lx.tok.len ? P->lx.tok.len : 1, "expected ')'");
	if (!ret)
		ret = format_literals(P, fmt.p ? fmt.p : "", fmt.len, a, na, pos, len, &b);
	for (i = 0; i < na; i++)
		free(a[i].s);
	pmt_buf__free(&fmt);
	if (ret) {
		pmt_buf__free(&b);
		return ret;
	}
	/* several printfs: one text, in order */
	if (asprintf(&all, "%s%s", *to ? *to : "", pmt_buf__cstr(&b)) < 0)
		all = NULL;
	pmt_buf__free(&b);
	free(*to);
	*to = all;
	if (!all)
		return pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	return next(P);
}

/* END's next step; NULL when out of memory */
static struct pmt_prog_end *end_step(struct parser *P)
{
	struct pmt_program *p = P->p;
	struct pmt_prog_end *e = realloc(p->ends, (p->nends + 1) * sizeof(*e));

	if (!e)
		return NULL;
	p->ends = e;
	e = &p->ends[p->nends++];
	memset(e, 0, sizeof(*e));
	return e;
}

/* END's printf of literals: its text after END's text before (the
 * lexer at printf) */
static int end_printf(struct parser *P)
{
	struct pmt_program *p = P->p;
	struct pmt_prog_end *e = p->nends ? &p->ends[p->nends - 1] : NULL;

	if ((!e || !e->text) && !(e = end_step(P)))
		return pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	return literal_printf(P, &e->text);
}

/* A call's "(@NAME" (the lexer at the function's name, pos): where its
 * '@' is (*at) and the name (*name, "" for @; the lexer after it), or
 * -EINVAL said as usage (len: the caret's) */
static int map_arg(struct parser *P, int pos, int len, const char *usage, int *at, char **name)
{
	if (next(P) || P->lx.tok.kind != '(' || next(P) || P->lx.tok.kind != '@')
		return perr(P, pos, len, "%s", usage);
	*at = P->lx.tok.pos;
	if (next(P))
		return -EINVAL;
	*name = P->lx.tok.kind == PMT_TOK_NAME && P->lx.tok.pos == *at + 1
			? strndup(P->src + *at + 1, (size_t)P->lx.tok.len)
			: strdup("");
	return *name ? 0 : pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
}

/* END's print(@MAP) or print(@MAP, N): the map, its top N entries alone
 * (the lexer at print) */
static int end_print(struct parser *P)
{
	struct pmt_prog_end *e;
	int pos = P->lx.tok.pos, at, top = 0;
	char *name;

	if (map_arg(P, pos, 5, "expected print(@MAP) or print(@MAP, N)", &at, &name))
		return -EINVAL;
	if ((*name && next(P)) ||
	    (P->lx.tok.kind == ',' && (next(P) || P->lx.tok.kind != PMT_TOK_INT ||
				       (top = (int)P->lx.tok.num) <= 0 || next(P))) ||
	    P->lx.tok.kind != ')') {
		free(name);
		return perr(
			P, P->lx.tok.pos, P->lx.tok.len ? P->lx.tok.len : 1,
			"expected print(@MAP) or print(@MAP, N): N a number of entries above 0");
	}
	if (!(e = end_step(P))) {
		free(name);
		return pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	}
	e->map = name;
	e->top = top;
	return next(P);
}

/* Does text name map @name (not @name2)? */
static bool names_map(const char *text, const char *name)
{
	size_t n = strlen(name);
	const char *at;

	for (at = text ? strchr(text, '@') : NULL; at; at = strchr(at + 1, '@'))
		if (!strncmp(at + 1, name, n) && !pmt_lex__name_char(at[1 + n], false))
			return true;
	return false;
}

/* Is name in list (" NAME NAME ")? */
static bool listed(const struct pmt_buf *list, const char *name)
{
	return pmt_words__has(list->p, name);
}

/* name into list, once */
static void list_add(struct pmt_buf *list, const char *name)
{
	if (!list->len) {
		pmt_buf__putc(list, ' ');
		pmt_buf__cstr(list);
	}
	if (!listed(list, name))
		pmt_buf__printf(list, "%s ", name);
	pmt_buf__cstr(list);
}

/* BEGIN's table named name (len bytes), made if new: NULL when out of
 * memory */
static struct pmt_prog_table *table_of(struct parser *P, const char *name, int len)
{
	struct pmt_program *p = P->p;
	struct pmt_prog_table *t;
	size_t i;

	for (i = 0; i < p->ntables; i++)
		if ((int)strlen(p->tables[i].map) == len &&
		    !strncmp(p->tables[i].map, name, (size_t)len))
			return &p->tables[i];
	t = realloc(p->tables, (p->ntables + 1) * sizeof(*t));
	if (!t)
		return NULL;
	p->tables = t;
	t = &t[p->ntables];
	memset(t, 0, sizeof(*t));
	if (!(t->map = strndup(name, (size_t)len)))
		return NULL;
	p->ntables++;
	return t;
}

/* A literal number, maybe negative, into *v (the lexer past it) */
static int literal(struct parser *P, int64_t *v, const char *what)
{
	bool neg = P->lx.tok.kind == '-';

	if (neg && next(P))
		return -EINVAL;
	if (P->lx.tok.kind != PMT_TOK_INT)
		return perr(P, P->lx.tok.pos, P->lx.tok.len ? P->lx.tok.len : 1,
			    "BEGIN's maps take %s here", what);
	*v = neg ? -(int64_t)P->lx.tok.num : (int64_t)P->lx.tok.num;
	return next(P);
}

/* key = value into t, keys kept sorted (a key given again: the new value) */
static int table_put(struct pmt_prog_table *t, int64_t key, char *str, int64_t num)
{
	size_t i, j;

	for (i = 0; i < t->n && t->keys[i] < key; i++)
		;
	if (i < t->n && t->keys[i] == key) {
		if (t->strs) {
			free(t->str[i]);
			t->str[i] = str;
		} else {
			t->num[i] = num;
		}
		return 0;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		int64_t *k = realloc(t->keys, cap * sizeof(*k)), *n;
		char **s;

		if (k)
			t->keys = k;
		n = k ? realloc(t->num, cap * sizeof(*n)) : NULL;
		if (n)
			t->num = n;
		s = n ? realloc(t->str, cap * sizeof(*s)) : NULL;
		if (!s)
			return -ENOMEM;
		t->str = s;
		t->cap = cap;
	}
	for (j = t->n; j > i; j--) {
		t->keys[j] = t->keys[j - 1];
		t->str[j] = t->str[j - 1];
		t->num[j] = t->num[j - 1];
	}
	t->keys[i] = key;
	t->str[i] = str;
	t->num[i] = num;
	t->n++;
	return 0;
}

/* @NAME[KEY] = "TEXT" or = NUMBER in BEGIN (the lexer at '@'): a
 * constant of the program's, KEY a number */
static int begin_table(struct parser *P)
{
	struct pmt_prog_table *t;
	int pos = P->lx.tok.pos, len = 0;
	int64_t key = 0, num = 0;
	bool keyed = false;
	char *str = NULL;

	if (next(P))
		return -EINVAL;
	if (P->lx.tok.kind == PMT_TOK_NAME && P->lx.tok.pos == pos + 1) {
		len = P->lx.tok.len;
		if (next(P))
			return -EINVAL;
	}
	if (P->lx.tok.kind == '[') {
		keyed = true;
		if (next(P) || literal(P, &key, "a number as the key"))
			return -EINVAL;
		if (P->lx.tok.kind != ']')
			return perr(P, P->lx.tok.pos, 1, "expected ']': BEGIN's maps take one key");
		if (next(P))
			return -EINVAL;
	}
	if (P->lx.tok.kind != '=' || next(P))
		return perr(P, P->lx.tok.pos, 1, "expected '=': @%.*s[KEY] = \"TEXT\" or NUMBER",
			    len, P->src + pos + 1);
	if (P->lx.tok.kind == PMT_TOK_STR) {
		struct pmt_buf b = {0};

		pmt_lex__string(&P->lx, &P->lx.tok, &b);
		pmt_buf__cstr(&b);
		str = b.p;
		if (!str || next(P)) {
			free(str);
			return str ? -EINVAL
				   : pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory",
							P->name);
		}
	} else if (literal(P, &num, "a string or a number as the value")) {
		return -EINVAL;
	}
	if (!(t = table_of(P, P->src + pos + 1, len))) {
		free(str);
		return pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	}
	if (t->n && (t->strs != !!str || t->keyed != keyed)) {
		free(str);
		return perr(P, pos, len + 1, "@%s holds %s: not %s", t->map,
			    t->strs ? "strings" : "numbers",
			    t->keyed != keyed ? "a key more or less"
			    : str	      ? "a string"
					      : "a number");
	}
	t->strs = str != NULL;
	t->keyed = keyed;
	list_add(&P->saved, t->map);
	if (table_put(t, key, str, num)) {
		free(str);
		return pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	}
	return 0;
}

/* piece (what a printf's parentheses hold; freed) appended to *text, the
 * block's prints ('; ' between two), under the if it is in; the lexer
 * moved past its ')' */
static int add_print(struct parser *P, char **text, char *piece)
{
	char *all;

	if (!piece || asprintf(&all, "%s%s%s%s%s%s", *text ? *text : "", *text ? "; " : "",
			       P->guard ? "if (" : "", P->guard ? P->guard : "",
			       P->guard ? ") " : "", piece) < 0)
		all = NULL;
	free(piece);
	free(*text);
	*text = all;
	if (!all)
		return pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	return next(P);
}

/* printf(FORMAT, ARGS...) in a probe's block (the lexer at printf): its
 * arguments' text appended to *text ('; ' between two printfs), checked
 * as --printf reads it. */
static int probe_printf(struct parser *P, char **text)
{
	struct pmt_printf_text t;
	struct pmt_error e = {0};
	int pos = P->lx.tok.pos, n;
	char *args;

	if (next(P) || P->lx.tok.kind != '(')
		return perr(P, P->lx.tok.pos, P->lx.tok.len ? P->lx.tok.len : 1,
			    "expected '(' after printf");
	if (!(args = list(P, ')', ", ", &n)))
		return -EINVAL;
	if (pmt_printf__split(args, "printf", &t, &e)) {
		free(args);
		return perr(P, pos, P->lx.tok.pos + 1 - pos, "%s",
			    strncmp(e.msg, "printf: ", 8) ? e.msg : e.msg + 8);
	}
	pmt_printf__free(&t);
	return add_print(P, text, args);
}

/* time("FORMAT") or time() in a probe's block (the lexer at time): the
 * event's time on the wall clock, printed as printf("%s",
 * strftime("FORMAT", nsecs)) would (bpftrace's default "%H:%M:%S\n"). */
static int probe_time(struct parser *P, char **text)
{
	int pos = P->lx.tok.pos, fpos, flen;
	char *piece;

	if (next(P) || P->lx.tok.kind != '(' || next(P))
		return perr(P, pos, 4, "expected time(\"FORMAT\") or time()");
	fpos = P->lx.tok.pos;
	flen = P->lx.tok.kind == PMT_TOK_STR ? P->lx.tok.len : 0;
	if ((flen && next(P)) || P->lx.tok.kind != ')')
		return perr(P, P->lx.tok.pos, 1,
			    "expected ')': time() takes one format string at most");
	if (asprintf(&piece, "\"%%s\", strftime(%.*s, nsecs)", flen ? flen : 12,
		     flen ? P->src + fpos : "\"%H:%M:%S\\n\"") < 0)
		piece = NULL;
	return add_print(P, text, piece);
}

/* cat("FILE") in a probe's block (the lexer at cat): the file's text,
 * read when the event is printed, as printf("%s", cat("FILE")) prints
 * it (oomkill.bt's /proc/loadavg). */
static int probe_cat(struct parser *P, char **text)
{
	int pos = P->lx.tok.pos, fpos, flen;
	char *piece;

	if (next(P) || P->lx.tok.kind != '(' || next(P) || P->lx.tok.kind != PMT_TOK_STR)
		return perr(P, pos, 3, "expected cat(\"FILE\")");
	fpos = P->lx.tok.pos;
	flen = P->lx.tok.len;
	if (next(P) || P->lx.tok.kind != ')')
		return perr(P, pos, P->lx.tok.pos + 1 - pos,
			    "cat() of a formatted name (cat(\"FORMAT\", ARGS)) is not supported "
			    "yet: cat(\"FILE\")");
	if (asprintf(&piece, "\"%%s\", cat(%.*s)", flen, P->src + fpos) < 0)
		piece = NULL;
	return add_print(P, text, piece);
}

/* join(ARRAY) or join(ARRAY, "DELIMITER") in a probe's block (the lexer
 * at join): the strings of a NULL-ended array of pointers (execsnoop's
 * args->argv) on a line, as printf("%s\n", join(...)) prints them. */
static int probe_join(struct parser *P, char **text)
{
	int pos = P->lx.tok.pos, n;
	char *args, *piece;

	if (next(P) || P->lx.tok.kind != '(')
		return perr(P, pos, 4, "expected join(ARRAY) or join(ARRAY, \"DELIMITER\")");
	if (!(args = list(P, ')', ", ", &n)))
		return -EINVAL;
	if (n != 1 && n != 2) {
		free(args);
		return perr(P, pos, P->lx.tok.pos + 1 - pos,
			    "join() takes an array and, maybe, a delimiter string");
	}
	if (asprintf(&piece, "\"%%s\\n\", join(%s)", args) < 0)
		piece = NULL;
	free(args);
	return add_print(P, text, piece);
}

/* The statement a construct the engine does not run yet begins. */
static int unsupported(struct parser *P, bool begin)
{
	const struct pmt_tok *t = &P->lx.tok;

	return perr(P, t->pos, t->len ? t->len : 1,
		    "'%.*s' is not supported yet%s: a program's blocks printf, or update one "
		    "map with count(), sum(), avg(), min(), max(), stats(), hist() or lhist() "
		    "(and BEGIN prints literals)",
		    t->len ? t->len : 1, P->src + t->pos, begin ? " in BEGIN" : "");
}

int pmt_program__map(const struct pmt_program *p, const char *name)
{
	int i;

	for (i = 0; i < p->nmaps; i++)
		if (!strcmp(p->maps[i].name, name))
			return i;
	return -1;
}

/* The keys in a list "A,B,(C,D)": its commas outside brackets and
 * strings, plus one; 0 for none */
static int count_keys(const char *keys)
{
	int n = 1, depth = 0;
	bool quoted = false;

	if (!keys || !*keys)
		return 0;
	for (; *keys; keys++) {
		if (*keys == '"' && (!quoted || keys[-1] != '\\'))
			quoted = !quoted;
		else if (!quoted)
			depth += (*keys == '(' || *keys == '[') - (*keys == ')' || *keys == ']'),
				n += *keys == ',' && !depth;
	}
	return n;
}

/* lhist's "E:MIN:MAX:STEP": where ":MIN:MAX:STEP" starts (its value's
 * end) */
static const char *lhist_bounds(const char *v)
{
	const char *at = v + strlen(v);
	int colons = 0;

	while (at > v && (colons += *--at == ':') < 3)
		;
	return at;
}

/* The update u of map m, another block's than its first: of the same
 * function, keys as many; its keys and value into *keys, *value where
 * they are not the map's (lhist: its bounds the same, its E alone) */
static int another_update(struct parser *P, struct update *u, const struct pmt_prog_map *m, int pos,
			  char **keys, char **value)
{
	bool lhist = !strcmp(m->fn, "lhist");
	const char *mb = lhist ? lhist_bounds(m->value) : NULL;
	const char *ub = lhist ? lhist_bounds(u->value) : NULL;

	if (strcmp(m->fn, u->fn))
		return perr(P, pos, 1, "@%s is %s() here and %s() at line %d: one function a map",
			    m->name, u->fn, m->fn, m->line);
	if (count_keys(m->keys) != count_keys(u->keys))
		return perr(P, pos, 1, "@%s has %d keys here and %d at line %d", m->name,
			    count_keys(u->keys), count_keys(m->keys), m->line);
	if (lhist && strcmp(mb, ub))
		return perr(P, pos, 1, "@%s's lhist() has other bounds at line %d (%s there)",
			    m->name, m->line, mb + 1);
	if (strcmp(m->keys ? m->keys : "", u->keys ? u->keys : "")) {
		*keys = u->keys;
		u->keys = NULL;
	}
	if (strcmp(m->value ? m->value : "", u->value ? u->value : "")) {
		*value = lhist ? strndup(u->value, (size_t)(ub - u->value)) : u->value;
		if (!lhist)
			u->value = NULL;
		if (!*value)
			return pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	}
	return 0;
}

/* A map's update: its index in *idx (a new map's added); another block's
 * keys and value where they are not the map's first update's (*keys,
 * *value; NULL: those) */
static int take_update(struct parser *P, struct update *u, int pos, int *idx, char **keys,
		       char **value)
{
	struct pmt_program *p = P->p;
	struct pmt_prog_map *m;
	int i;

	if (!u->map || !u->fn)
		return pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	if ((i = pmt_program__map(p, u->map)) < 0) {
		if (p->nmaps == PMT_PROG_MAPS)
			return perr(P, pos, 1, "a program updates %d maps at most", PMT_PROG_MAPS);
		m = &p->maps[ *idx = p->nmaps++];
		m->incr = u->incr;
		m->name = u->map;
		m->fn = u->fn;
		m->value = u->value;
		m->keys = u->keys;
		memset(u, 0, sizeof(*u));
		m->line = line_of(P, pos);
		return 0;
	}
	m = &p->maps[ *idx = i];
	if (m->incr != u->incr)
		return perr(P, pos, 1,
			    "@%s is counted with ++ and with count(): bpftrace refuses the mix (an "
			    "integer map and a count)",
			    u->map);
	return another_update(P, u, m, pos, keys, value);
}

/* What a block is. */
enum blk { BLK_PROBE, BLK_BEGIN, BLK_END, BLK_INTERVAL };

/* One block's state while its statements are read. */
struct blk_state {
	enum blk kind;
	char *printed; /* its printf calls' arguments */
	int got;       /* map statements */
	int role;      /* PMT_PROG_START, PMT_PROG_END, or 0 */
	char *stmts;   /* its values saved and forgotten (pmt_prog_probe's) */
	/* the condition its printf calls are under (||; if); print_always:
	 * a printf under none */
	char *print_guard;
	/* the maps it updates, each under its condition (if) or none, with
	 * keys and value of its own (NULL: the map's) */
	int upd[PMT_PROG_UPDATES];
	char *upd_guard[PMT_PROG_UPDATES];
	char *upd_keys[PMT_PROG_UPDATES], *upd_value[PMT_PROG_UPDATES];
	int nupd;
	char *print_last; /* the condition of the printf before */
	bool print_always;
	/* the maps it saved or forgot so far, " NAME NAME " */
	struct pmt_buf touched;
};

/* text without its spaces (malloc'd) */
static char *squeezed(const char *text)
{
	char *v = malloc(strlen(text) + 1), *o = v;

	for (; v && *text; text++)
		if (*text != ' ' && *text != '\t' && *text != '\n')
			*o++ = *text;
	if (v)
		*o = '\0';
	return v;
}

/* "@MAP[" at v for the start-time map: the key up to the matching ']'
 * into *key, *rest past it; false if v is not that. */
static bool start_ref(const struct parser *P, const char *v, char **key, const char **rest)
{
	const char *m = P->p->lat_map, *k;
	size_t n = m ? strlen(m) : 0;
	int depth = 1;

	if (!m || v[0] != '@' || strncmp(v + 1, m, n) || v[1 + n] != '[')
		return false;
	for (k = v + n + 2; *k && (depth += (*k == '[') - (*k == ']')); k++)
		;
	if (!*k || k == v + n + 2)
		return false;
	*key = strndup(v + n + 2, (size_t)(k - (v + n + 2)));
	*rest = k + 1;
	return *key != NULL;
}

/* The key the start time is read back under: the same everywhere. */
static int end_key(struct parser *P, char *key, int pos)
{
	if (P->end_key && strcmp(P->end_key, key)) {
		int r = lat_perr(P, pos, 1,
				 "the start time is read back under [%s] here and [%s] before", key,
				 P->end_key);

		free(key);
		return r;
	}
	free(P->end_key);
	P->end_key = key;
	return 0;
}

/* /@MAP[KEY]/: the start time is there (what --latency matches); the
 * probe is its END. Other predicates reading a map are refused. */
static int start_predicate(struct parser *P, char **filter, struct blk_state *b, int pos)
{
	char *v = squeezed(*filter), *key = NULL;
	const char *rest = "";
	int ret = 0;

	if (!v)
		return pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	if (start_ref(P, v, &key, &rest) && !*rest) {
		ret = end_key(P, key, pos);
		b->role = PMT_PROG_END;
		free(*filter);
		*filter = NULL;
	} else if (P->p->lat_map && names_map(v, P->p->lat_map)) {
		free(key);
		free(*filter);
		*filter = NULL;
		ret = lat_perr(P, pos, 1,
			       "a predicate reads a start time only as /@%s[KEY]/, for now",
			       P->p->lat_map);
	} else {
		free(key); /* a saved value's map, read where the filter runs */
	}
	free(v);
	return ret;
}

/* The update's value read back from the start time, (nsecs -
 * @MAP[KEY]) / N or nsecs - @MAP[KEY]: what --latency measures, in the
 * unit N says (lhist's bounds kept). Not a map's: left as it is. */
static int latency_value(struct parser *P, struct update *u, struct blk_state *b, int pos)
{
	static const char *const divs[][2] = {
		{"", "ns"},	{"/1000", "us"},      {"/1e3", "us"}, {"/1000000", "ms"},
		{"/1e6", "ms"}, {"/1000000000", "s"}, {"/1e9", "s"},
	};
	char *v = u->value ? squeezed(u->value) : NULL, *key = NULL, *tail, *lh;
	const char *rest = NULL;
	size_t i = sizeof(divs) / sizeof(divs[0]), n;
	bool paren;

	if (!v || !P->p->lat_map || !names_map(v, P->p->lat_map)) {
		free(v); /* not the start time's: maybe a saved value's */
		return 0;
	}
	tail = strchr(v, ':'); /* lhist's MIN:MAX:STEP */
	n = tail ? (size_t)(tail - v) : strlen(v);
	paren = !strncmp(v, "(nsecs-", 7);
	if ((paren || !strncmp(v, "nsecs-", 6)) && start_ref(P, v + (paren ? 7 : 6), &key, &rest) &&
	    (!paren || *rest++ == ')'))
		for (i = 0; i < sizeof(divs) / sizeof(divs[0]); i++)
			if ((paren || !i) && strlen(divs[i][0]) == n - (size_t)(rest - v) &&
			    !strncmp(rest, divs[i][0], strlen(divs[i][0])))
				break;
	if (!key || !rest || i == sizeof(divs) / sizeof(divs[0])) {
		free(key);
		free(v);
		return lat_perr(
			P, pos, 1,
			"a start time is read back as (nsecs - @%s[KEY]) / 1000 (or 1000000, "
			"1e6, 1e9, or no division), for now",
			P->p->lat_map ? P->p->lat_map : "start");
	}
	if (P->guard)
		return lat_perr(P, pos, 1, "a start time read back inside an if");
	P->p->lat_unit = divs[i][1];
	b->role = PMT_PROG_END;
	if (!tail || asprintf(&lh, "latency%s", tail) < 0)
		lh = NULL;
	free(v);
	free(u->value);
	u->value = lh; /* --latency's own value */
	return end_key(P, key, pos);
}

/* Is the text [pos, pos + len) the name? */
static bool is_word(const struct parser *P, const struct pmt_tok *t, const char *name)
{
	return t->kind == PMT_TOK_NAME && t->len == (int)strlen(name) &&
	       !strncmp(P->src + t->pos, name, (size_t)t->len);
}

/* @MAP[KEY] = nsecs: the start time (u read by map_update). */
static int start_store(struct parser *P, struct update *u, struct blk_state *b, int pos)
{
	struct pmt_program *p = P->p;

	if (b->got || b->printed)
		return lat_perr(P, pos, 1,
				"a start time's block stores it alone, for now (@%s[KEY] = nsecs)",
				u->map);
	if (p->lat_map && strcmp(p->lat_map, u->map))
		return lat_perr(P, pos, 1, "one start-time map a program, for now: this is @%s's",
				p->lat_map);
	if (!u->keys || strchr(u->keys, ','))
		return lat_perr(P, pos, 1, "a start time is kept under one key: @%s[tid] = nsecs",
				u->map);
	if (!p->lat_map) {
		p->lat_map = u->map;
		p->lat_key = u->keys;
		u->map = u->keys = NULL;
	}
	b->role = PMT_PROG_START;
	b->got++;
	return 0;
}

/* stmt appended to the block's statements; the source [from, to) is
 * what it writes, @NAME[KEY] */
static int add_stmt(struct parser *P, struct blk_state *b, int from, int to, const char *stmt)
{
	char *all, *target = strndup(P->src + from, (size_t)(to - from)), *t;

	t = target ? squeezed(target) : NULL;
	free(target);
	if (!t)
		return pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	list_add(&b->touched, t);
	free(t);

	if (asprintf(&all, "%s%s%s%s%s%s", b->stmts ? b->stmts : "", b->stmts ? "; " : "",
		     P->guard ? "if (" : "", P->guard ? P->guard : "", P->guard ? ") " : "",
		     stmt) < 0)
		return pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	free(b->stmts);
	b->stmts = all;
	return 0;
}

/* The block wrote @NAME[KEYS] (now, in pmtrace's terms: $variables
 * given their values; [from, to) where it stands): value where the guard
 * holds, value NULL a delete. A read after of the same map and key, as
 * pmtrace's terms give them, gets (GUARD) ? (VALUE) : (BEFORE). */
static int note_write(struct parser *P, int from, int to, const char *now, const char *value)
{
	char *t = squeezed(now), *text; /* as reads are matched: written_read */
	const char *before = now;
	int i;

	if (!t)
		return pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	for (i = 0; i < P->nw && strcmp(P->w[i].target, t); i++)
		;
	if (i < P->nw)
		before = P->w[i].text;
	else if (P->nw == (int)(sizeof(P->w) / sizeof(P->w[0]))) {
		free(t);
		return perr(P, from, to - from, "a block saves more than %d values",
			    (int)(sizeof(P->w) / sizeof(P->w[0])));
	}
	if ((P->guard ? asprintf(&text, "((%s) ? (%s) : (%s))", P->guard, value ? value : "0",
				 before)
		      : asprintf(&text, "(%s)", value ? value : "0")) < 0) {
		free(t);
		return pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	}
	if (i < P->nw) {
		free(t);
		free(P->w[i].text);
	} else {
		P->w[P->nw++].target = t;
	}
	P->w[i].text = text;
	return 0;
}

/* @MAP[KEY] = VALUE: a value saved, read back elsewhere as @MAP[KEY] (u
 * read by map_update) */
static int save_value(struct parser *P, struct update *u, struct blk_state *b, int pos)
{
	char *stmt;
	int r;

	if (P->p->lat_map && !strcmp(P->p->lat_map, u->map))
		return perr(P, pos, 1, "@%s holds a start time (= nsecs): not another value",
			    u->map);
	if (asprintf(&stmt, "@%s%s%s%s = %s", u->map, u->keys ? "[" : "", u->keys ? u->keys : "",
		     u->keys ? "]" : "", u->value) < 0)
		return pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	r = add_stmt(P, b, pos, u->tend, stmt);
	free(stmt);
	if (!r) {
		char *now = NULL;

		if (asprintf(&now, "@%s%s%s%s", u->map, u->keys ? "[" : "", u->keys ? u->keys : "",
			     u->keys ? "]" : "") < 0)
			return pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
		r = note_write(P, pos, u->tend, now, u->value);
		free(now);
	}
	list_add(&P->saved, u->map);
	if (!strcmp(u->value, "func") || !strcmp(u->value, "probe"))
		list_add(u->value[0] == 'f' ? &P->funcs : &P->probes, u->map);
	if (!strcmp(u->value, "kstack"))
		list_add(&P->kstacks, u->map);
	return r;
}

/* delete(@MAP[KEY]) or delete(@MAP, KEY) in a probe's block, clear(@MAP) in END's (the lexer
 * at the name): a saved value forgotten; the start-time map's entries
 * are --latency's own, and a map cleared at the end is not printed. */
static int forget(struct parser *P, struct blk_state *b)
{
	int pos = P->lx.tok.pos, depth = 0, at, end;
	char *name, *text, *stmt;
	int r = 0;

	if (map_arg(P, pos, 1, "expected delete(@map[key]) or clear(@map)", &at, &name))
		return -EINVAL;
	for (end = at + 1; depth || P->lx.tok.kind != ')';) {
		if (P->lx.tok.kind == PMT_TOK_END) {
			free(name);
			return perr(P, pos, 1, "expected ')'");
		}
		depth += (P->lx.tok.kind == '[' || P->lx.tok.kind == '(') -
			 (P->lx.tok.kind == ']' || P->lx.tok.kind == ')');
		end = P->lx.tok.pos + P->lx.tok.len;
		if (next(P)) {
			free(name);
			return -EINVAL;
		}
	}
	if (b->kind == BLK_END && !listed(&P->saved, name) &&
	    !(P->p->lat_map && !strcmp(name, P->p->lat_map)) && pmt_program__map(P->p, name) < 0) {
		free(name);
		return perr(P, at, end - at,
			    "END clears the start time, saved values or the map updated before "
			    "it, for now");
	}
	if (b->kind == BLK_END || (P->p->lat_map && !strcmp(name, P->p->lat_map))) {
		if (b->kind == BLK_END)
			list_add(&P->cleared, name);
		free(name);
		return next(P);
	}
	P->maps_as_written = true;
	text = rewrite(P, at, end);
	P->maps_as_written = false;
	/* delete(@MAP, KEY) as delete(@MAP[KEY]): one text for a write */
	if (text && text[strlen(name) + 1] == ',') {
		char *k = NULL;

		if (asprintf(&k, "@%s[%s]", name,
			     text + strlen(name) + 2 + strspn(text + strlen(name) + 2, " ")) < 0)
			k = NULL;
		free(text);
		text = k;
	}
	if (!text || asprintf(&stmt, "delete(%s)", text) < 0)
		stmt = NULL;
	if (stmt)
		r = add_stmt(P, b, at, end, stmt) || note_write(P, at, end, text, NULL);
	free(text);
	free(stmt);
	free(name);
	if (!stmt)
		return P->failed
			       ? -EINVAL
			       : pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	return r ? r : next(P);
}

/* The block's update of map idx, under the condition now (if) */
static int block_update(struct parser *P, struct blk_state *b, int idx, int pos, char *keys,
			char *value)
{
	int i;

	for (i = 0; i < b->nupd; i++)
		if (b->upd[i] == idx) {
			free(keys);
			free(value);
			return perr(P, pos, 1, "@%s is updated twice in one block, for now",
				    P->p->maps[idx].name);
		}
	if (b->nupd == PMT_PROG_UPDATES) {
		free(keys);
		free(value);
		return perr(P, pos, 1, "a block updates %d maps at most", PMT_PROG_UPDATES);
	}
	b->upd_keys[b->nupd] = keys;
	b->upd_value[b->nupd] = value;
	if (P->guard && !(b->upd_guard[b->nupd] = strdup(P->guard))) {
		free(keys);
		free(value);
		b->upd_keys[b->nupd] = b->upd_value[b->nupd] = NULL;
		return pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	}
	b->upd[b->nupd++] = idx;
	return 0;
}

/* A map statement: a value saved, the start time's store, or an
 * update. */
static int map_statement(struct parser *P, struct blk_state *b, int pos)
{
	struct update u = {0};
	char *keys = NULL, *value = NULL;
	bool saving;
	int ret, idx = -1;

	ret = map_update(P, &u);
	saving = !ret && !strcmp(u.fn, "=");
	if (!ret && P->guard && !saving && !strcmp(u.fn, "nsecs"))
		ret = lat_perr(P, pos, 1, "a start time stored inside an if");
	else if (saving)
		ret = save_value(P, &u, b, pos);
	else if (!ret && b->role == PMT_PROG_START)
		ret = lat_perr(P, pos, 1, "a start time's block updates no other map, for now");
	else if (!ret && !strcmp(u.fn, "nsecs"))
		ret = start_store(P, &u, b, pos);
	else if (!ret && !(ret = latency_value(P, &u, b, pos)) &&
		 !(ret = take_update(P, &u, pos, &idx, &keys, &value)))
		ret = block_update(P, b, idx, pos, keys, value);
	else {
		free(keys);
		free(value);
	}
	if (!ret && b->role == PMT_PROG_END && b->nupd > 1)
		ret = lat_perr(P, pos, 1, "a start time read back into one map of several");
	if (!ret && b->role != PMT_PROG_START && !saving)
		b->got++;
	update_free(&u); /* what was kept was taken */
	return ret;
}

/* The statement's value from the lexer's token up to its ';' or '}'
 * (the lexer left there), rewritten into *text; NULL there if it is
 * empty. 0, or -EINVAL (said). */
static int value_text(struct parser *P, char **text)
{
	int start, end, depth = 0, k;

	start = end = P->lx.tok.pos;
	while ((k = P->lx.tok.kind) != PMT_TOK_END && (depth || (k != ';' && k != '}'))) {
		depth += (k == '(' || k == '[') - (k == ')' || k == ']');
		end = P->lx.tok.pos + P->lx.tok.len;
		if (next(P))
			return -EINVAL;
	}
	*text = end > start ? rewrite(P, start, end) : NULL;
	return end > start && !*text && P->failed ? -EINVAL : 0;
}

/* Is text (a value's, in pmtrace's terms) a string: a literal, comm,
 * func, probe, or what str() ntop() usym() ksym() kstack ustack
 * strftime() cat() join() make? Its parentheses looked through; a ?:
 * choosing between texts is a string where either is. */
static int string_end(const char *s, int i);

bool pmt_printf__is_str_text(const char *text)
{
	static const char *const words[] = {"comm", "func", "probe", "kstack", "ustack"};
	static const char *const calls[] = {"str(",    "ntop(",	    "usym(", "ksym(", "kstack(",
					    "ustack(", "strftime(", "cat(",  "join("};
	const char *s = text, *e;
	size_t i, n;
	int depth;

	while (*s == ' ' || *s == '(')
		s++;
	if (*s == '"')
		return true;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		n = strlen(words[i]);
		if (!strncmp(s, words[i], n) && !pmt_lex__name_char(s[n], false))
			return true;
	}
	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (!strncmp(s, calls[i], strlen(calls[i])))
			return true;
	/* ((COND) ? (A) : (B)), as a $variable given a value inside an if */
	for (s = text, depth = 0; *s; s++) {
		if (*s == '"') {
			s += string_end(s, 0); /* its closing quote */
			if (!*s)
				break;
			continue;
		}
		depth += (*s == '(') - (*s == ')');
		if (*s == '?' && depth <= 1 && (e = strstr(s, ") : (")))
			return pmt_printf__is_str_text(s + 1) || pmt_printf__is_str_text(e + 4);
	}
	return false;
}

/* $name = text inside an if (both taken): from here on the variable is
 * text where the if's condition held, and what it was before elsewhere
 * (0 where it had no value, as bpftrace's variables start) */
static int guarded_var(struct parser *P, int pos, char *name, char *text)
{
	struct var *v = NULL;
	char *choice, *before, *guard;
	int i;

	for (i = P->nvars - 1; i >= 0 && !v; i--)
		if (!strcmp(P->vars[i].name, name))
			v = &P->vars[i];
	if (!v && P->nvars == (int)(sizeof(P->vars) / sizeof(P->vars[0]))) {
		free(name);
		free(text);
		return perr(P, pos, 1, "more than 32 variables in one block");
	}
	if (!v) {
		v = &P->vars[P->nvars++];
		memset(v, 0, sizeof(*v));
		v->name = name;
	} else {
		free(name);
	}
	/* given again under the same condition: what it was before that */
	before = strdup(v->guard && !strcmp(v->guard, P->guard) ? v->before
			: v->text				? v->text
								: "0");
	guard = strdup(P->guard);
	if (!before || !guard ||
	    asprintf(&choice, "(%s) ? (%s) : (%s)", P->guard, text, before) < 0) {
		free(before);
		free(guard);
		free(text);
		return pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	}
	free(v->text);
	free(v->guard);
	free(v->given);
	free(v->before);
	v->text = choice;
	v->guard = guard;
	v->given = text;
	v->before = before;
	return 0;
}

/* $NAME = EXPR (the lexer at '$'): the block's variable, its value's
 * text (rewritten: earlier variables in it are theirs) used from here on. */
static int assign_var(struct parser *P)
{
	int pos = P->lx.tok.pos, start;
	char *name, *text;

	if (next(P) || P->lx.tok.kind != PMT_TOK_NAME || P->lx.tok.pos != pos + 1)
		return perr(P, pos, 1, "expected a variable's name after '$'");
	if (!(name = strndup(P->src + P->lx.tok.pos, (size_t)P->lx.tok.len)))
		return pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	if (next(P) || P->lx.tok.kind != '=') {
		int r = perr(P, P->lx.tok.pos, 1, "expected '=': $%s = VALUE", name);

		free(name);
		return r;
	}
	if (next(P)) {
		free(name);
		return -EINVAL;
	}
	start = P->lx.tok.pos;
	if (value_text(P, &text)) {
		free(name);
		return -EINVAL;
	}
	if (text && P->guard)
		return guarded_var(P, pos, name, text);
	if (!text || P->nvars == (int)(sizeof(P->vars) / sizeof(P->vars[0]))) {
		free(name);
		free(text);
		return P->failed ? -EINVAL
		       : text	 ? perr(P, pos, 1, "more than 32 variables in one block")
				 : perr(P, start, 1, "expected a value: $VAR = VALUE");
	}
	memset(&P->vars[P->nvars], 0, sizeof(P->vars[0]));
	P->vars[P->nvars].name = name;
	P->vars[P->nvars++].text = text;
	return 0;
}

static void forget_vars(struct parser *P)
{
	while (P->nvars > 0) {
		P->nvars--;
		free(P->vars[P->nvars].name);
		free(P->vars[P->nvars].text);
		free(P->vars[P->nvars].guard);
		free(P->vars[P->nvars].given);
		free(P->vars[P->nvars].before);
	}
}

/* The printf just read: the block's record is streamed where any of its
 * printf's conditions holds (print_guard, their ||), or always where
 * one has none (print_always) */
static int print_under(struct parser *P, struct blk_state *b)
{
	char *any;

	if (!P->guard) {
		b->print_always = true;
		return 0;
	}
	if (b->print_last && !strcmp(b->print_last, P->guard))
		return 0; /* the same condition as the printf before */
	free(b->print_last);
	if (!(b->print_last = strdup(P->guard)))
		return pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	if (asprintf(&any, "%s%s(%s)", b->print_guard ? b->print_guard : "",
		     b->print_guard ? " || " : "", P->guard) < 0)
		return pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	free(b->print_guard);
	b->print_guard = any;
	return 0;
}

static int statement(struct parser *P, struct blk_state *b);
static int statements(struct parser *P, struct blk_state *b);
static int interval_statement(struct parser *P);

/* One branch of an if (the lexer at its '{'): its statements under
 * cond (NULL: else's, under P->guard alone), within what the if is
 * under; the lexer past its '}' */
static int branch(struct parser *P, struct blk_state *b, const char *cond)
{
	char *outer = P->guard, *g;
	int ret;

	if (P->lx.tok.kind != '{')
		return perr(P, P->lx.tok.pos, P->lx.tok.len ? P->lx.tok.len : 1,
			    "expected '{': if (CONDITION) { ... }");
	if (!cond ? !(g = strdup(outer))
		  : asprintf(&g, outer ? "(%s) && %s" : "%s%s", outer ? outer : "", cond) < 0)
		return pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	P->guard = g;
	ret = next(P) || statements(P, b) || next(P);
	P->guard = outer;
	free(g);
	return ret ? -EINVAL : 0;
}

/* if (CONDITION) { ... } [else { ... } | else if ...] (the lexer at if):
 * the statements inside done where the condition holds */
static int if_statement(struct parser *P, struct blk_state *b)
{
	int pos = P->lx.tok.pos, start, end, depth = 0, ret;
	char *cond, *text, *neg;

	if (next(P) || P->lx.tok.kind != '(')
		return perr(P, P->lx.tok.pos, 1, "expected '(' after if: if (CONDITION) { ... }");
	start = P->lx.tok.pos + 1;
	for (;;) {
		if (P->lx.tok.kind == PMT_TOK_END)
			return perr(P, pos, 2, "if's condition is not closed: ')' is missing");
		depth += (P->lx.tok.kind == '(') - (P->lx.tok.kind == ')');
		if (!depth)
			break; /* at its ')' */
		if (next(P))
			return -EINVAL;
	}
	end = P->lx.tok.pos;
	if (end <= start || !(text = rewrite(P, start, end)))
		return P->failed ? -EINVAL
				 : perr(P, pos, 2, "expected a condition: if (CONDITION)");
	if (asprintf(&cond, "(%s)", text) < 0 || asprintf(&neg, "!(%s)", text) < 0) {
		free(text);
		return pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	}
	free(text);
	ret = next(P) || branch(P, b, cond);
	if (!ret && is_word(P, &P->lx.tok, "else")) {
		char *outer = P->guard, *g = NULL;

		/* else: what the if is under, and not its condition */
		if (next(P) ||
		    asprintf(&g, outer ? "(%s) && %s" : "%s%s", outer ? outer : "", neg) < 0)
			ret = -EINVAL;
		P->guard = g;
		if (!ret && is_word(P, &P->lx.tok, "if"))
			ret = if_statement(P, b);
		else if (!ret)
			ret = branch(P, b, NULL);
		P->guard = outer;
		free(g);
	}
	free(cond);
	free(neg);
	P->closed = true;
	return ret ? -EINVAL : 0;
}

/* One statement of block b (the lexer at its first token). */
static int statement(struct parser *P, struct blk_state *b)
{
	const struct pmt_tok *t = &P->lx.tok;
	int pos = t->pos;

	if (b->kind == BLK_BEGIN && is_word(P, t, "printf"))
		return literal_printf(P, &P->p->begin);
	if (b->kind == BLK_END && is_word(P, t, "printf"))
		return end_printf(P);
	if (b->kind == BLK_END && is_word(P, t, "print"))
		return end_print(P);
	if (b->kind == BLK_BEGIN && t->kind == '@')
		return begin_table(P);
	if (b->kind == BLK_INTERVAL)
		return interval_statement(P);
	if (b->kind == BLK_PROBE && is_word(P, t, "printf"))
		return probe_printf(P, &b->printed) || print_under(P, b);
	if (b->kind == BLK_PROBE && is_word(P, t, "time"))
		return probe_time(P, &b->printed) || print_under(P, b);
	if (b->kind == BLK_PROBE && is_word(P, t, "cat"))
		return probe_cat(P, &b->printed) || print_under(P, b);
	if (b->kind == BLK_PROBE && is_word(P, t, "join"))
		return probe_join(P, &b->printed) || print_under(P, b);
	if (b->kind == BLK_PROBE && is_word(P, t, "if"))
		return if_statement(P, b);
	if (b->kind == BLK_PROBE && t->kind == '@')
		return map_statement(P, b, pos);
	if (b->kind == BLK_PROBE && t->kind == '$')
		return assign_var(P);
	if ((b->kind == BLK_PROBE && is_word(P, t, "delete")) ||
	    (b->kind == BLK_END && is_word(P, t, "clear")))
		return forget(P, b);
	return unsupported(P, b->kind == BLK_BEGIN);
}

/* Statements up to the '}' that closes them (the lexer left there) */
static int statements(struct parser *P, struct blk_state *b)
{
	while (P->lx.tok.kind != '}') {
		int pos = P->lx.tok.pos;

		if (P->lx.tok.kind == ';') {
			if (next(P))
				return -EINVAL;
			continue;
		}
		if (P->lx.tok.kind == PMT_TOK_END)
			return perr(P, pos, 1, "a block is not closed: '}' is missing");
		P->closed = false;
		if (statement(P, b))
			return -EINVAL;
		if (P->lx.tok.kind == PMT_TOK_END)
			return perr(P, P->lx.tok.pos, 1, "a block is not closed: '}' is missing");
		if (P->lx.tok.kind != ';' && P->lx.tok.kind != '}' && !P->closed)
			return perr(P, P->lx.tok.pos, P->lx.tok.len ? P->lx.tok.len : 1,
				    "expected ';' or '}' after the statement");
	}
	return 0;
}

/* { statements } (the lexer at '{') into b. */
static int block(struct parser *P, struct blk_state *b)
{
	if (next(P) || statements(P, b))
		return -EINVAL;
	if (b->kind == BLK_PROBE && !b->got && !b->printed && !b->stmts)
		return perr(
			P, P->lx.tok.pos, 1,
			"this block does nothing: a program's blocks printf, or update one map, "
			"for now");
	return 0;
}

/* --- the program ---------------------------------------------------------- */

/* Where the string opening at s[i] ('"') ends: its closing '"', or the
 * text's NUL (escapes skipped) */
static int string_end(const char *s, int i)
{
	for (i++; s[i] && s[i] != '"'; i++)
		i += s[i] == '\\' && s[i + 1];
	return i;
}

/* /PREDICATE/ from src[*at] (its '/'): as a filter, *at past it */
static int predicate(struct parser *P, int *at, char **filter)
{
	const char *s = P->src;
	int i = *at, j, end;

	for (j = i + 1; s[j] && s[j] != '{'; j++) {
		if (s[j] != '"')
			continue;
		if (!s[j = string_end(s, j)])
			break;
	}
	for (end = j - 1; end > i && (s[end] == ' ' || s[end] == '\t' || s[end] == '\n'); end--)
		;
	if (!s[j] || end == i || s[end] != '/')
		return perr(P, i, 1,
			    "a predicate is /CONDITION/ before the block's '{': its closing '/' is "
			    "missing");
	if (!(*filter = rewrite(P, i + 1, end)))
		return P->failed
			       ? -EINVAL
			       : pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	*at = skip_space(s, end + 1);
	return 0;
}

/* The probes' list from src[*at]: [start, len) of each into specs, *n;
 * *at past it. */
static int probe_list(struct parser *P, int *at, int specs[][2], int *n)
{
	const char *s = P->src;
	int i = *at;

	for (*n = 0;;) {
		int start = i;

		while (s[i] && s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r' &&
		       s[i] != ',' && s[i] != '{')
			i++;
		if (i == start)
			return perr(P, i, 1,
				    "expected a probe, e.g. tracepoint:sched:sched_switch");
		if (*n == 64)
			return perr(P, start, i - start, "more than 64 probes in one list");
		specs[*n][0] = start;
		specs[(*n)++][1] = i - start;
		i = skip_space(s, i);
		if (s[i] != ',')
			break;
		i = skip_space(s, i + 1);
	}
	*at = i;
	return 0;
}

/* interval:s:N, interval:ms:N (or i:...) at [pos, pos + len): its
 * period in seconds, or 0 (said) */
static double interval_secs(struct parser *P, int pos, int len)
{
	const char *s = P->src + pos, *u = strchr(s, ':') + 1, *nstr = strchr(u, ':');
	char *end = NULL;
	double v = nstr && nstr < s + len ? strtod(nstr + 1, &end) : 0, unit;

	unit = !strncmp(u, "s:", 2) ? 1 : !strncmp(u, "ms:", 3) ? 1e-3 : 0;
	if (!unit || !end || end != s + len || v <= 0 || v * unit * 1e9 < 1)
		return perr(P, pos, len, "expected interval:s:N or interval:ms:N"), 0;
	return v * unit;
}

/* An interval block done by pmtrace itself every period (exit(),
 * time(), print(@MAP), clear(@MAP)): one a program */
static int interval_of(struct parser *P, int pos, int len, enum blk *kind)
{
	double secs = interval_secs(P, pos, len);

	if (!secs)
		return -EINVAL;
	if (P->p->interval > 0)
		return perr(P, pos, len, "one interval probe a program, for now");
	P->p->interval = secs;
	*kind = BLK_INTERVAL;
	return 0;
}

/* Does the block opening at src[i] ('{') print or compute (printf, a
 * $variable): what only a probe in the kernel can do (loads.bt reads
 * kernel memory every second)? Strings skipped. */
static bool block_computes(const char *s, int i)
{
	int depth = 0;

	for (; s[i]; i++) {
		if (s[i] == '"') {
			if (!s[i = string_end(s, i)])
				break;
			continue;
		}
		depth += (s[i] == '{') - (s[i] == '}');
		if (!depth)
			break;
		if (s[i] == '$' ||
		    (!strncmp(s + i, "printf", 6) && !pmt_lex__name_char(s[i + 6], false) &&
		     !pmt_lex__name_char(s[i - 1], false)))
			return true;
	}
	return false;
}

/* An interval block that prints: a probe every period, its block as a
 * probe's (a list of them is refused above) */
static int interval_probe(struct parser *P, int pos, int len, const char *filter)
{
	double secs = interval_secs(P, pos, len);

	if (!secs || add_probe(P, pos, len, filter))
		return -EINVAL;
	P->p->probes[P->p->nprobes - 1].every_ns = (uint64_t)(secs * 1e9 + 0.5);
	return 0;
}

/* exit(), time("FORMAT"), print(@MAP) or clear(@MAP) in an interval's
 * block (the lexer at the name), in that order: what pmtrace does every
 * interval (-d, --interval) */
/* The map an interval's print(@MAP) or clear(@MAP) names (the lexer
 * after '@'): one for both */
static int interval_map(struct parser *P)
{
	const struct pmt_tok *t = &P->lx.tok;
	char *name = t->kind == PMT_TOK_NAME && P->src[t->pos - 1] == '@'
			     ? strndup(P->src + t->pos, (size_t)t->len)
			     : strdup("");

	if (!name)
		return pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	if (P->p->interval_map && strcmp(P->p->interval_map, name)) {
		free(name);
		return perr(P, t->pos, 1, "an interval prints and clears one map, for now");
	}
	free(P->p->interval_map);
	P->p->interval_map = name;
	return *name && next(P);
}

static int interval_statement(struct parser *P)
{
	struct pmt_program *p = P->p;
	const struct pmt_tok *t = &P->lx.tok;
	int pos = t->pos;
	bool ex = is_word(P, t, "exit"), tm = is_word(P, t, "time"), pr = is_word(P, t, "print"),
	     cl = is_word(P, t, "clear");
	struct pmt_buf f = {0};

	if (!ex && !tm && !pr && !cl)
		return perr(P, pos, t->len ? t->len : 1,
			    "an interval's block takes exit(), or time(), print(@MAP) and "
			    "clear(@MAP), for now");
	if (next(P) || P->lx.tok.kind != '(' || next(P))
		return perr(P, pos, 1, "expected '(' after the function's name");
	if (tm && P->lx.tok.kind == PMT_TOK_STR) {
		pmt_lex__string(&P->lx, &P->lx.tok, &f);
		pmt_buf__cstr(&f);
		if (next(P)) {
			pmt_buf__free(&f);
			return -EINVAL;
		}
	}
	if (tm) {
		free(p->head);
		p->head = f.p ? f.p : strdup("%H:%M:%S\n");
	}
	if ((pr || cl) && (P->lx.tok.kind != '@' || next(P)))
		return perr(P, pos, 1, "expected %s(@MAP)", pr ? "print" : "clear");
	if ((pr || cl) && interval_map(P))
		return -EINVAL;
	if (P->lx.tok.kind != ')')
		return perr(P, P->lx.tok.pos, 1, "expected ')'");
	p->exit_after |= ex;
	p->printed |= pr;
	p->cleared_each |= cl;
	return next(P);
}

/* BEGIN or END alone, or the list's probes added (with filter); body:
 * where the block's '{' is. */
static int list_kind(struct parser *P, int specs[][2], int n, const char *filter, int body,
		     enum blk *kind)
{
	const char *s = P->src;
	bool ival;
	int k;

	for (k = 0; k < n; k++) {
		bool b = specs[k][1] == 5 && !strncmp(s + specs[k][0], "BEGIN", 5);
		bool e = specs[k][1] == 3 && !strncmp(s + specs[k][0], "END", 3);

		if ((b || e) && n == 1) {
			*kind = b ? BLK_BEGIN : BLK_END;
			return filter ? perr(P, specs[k][0], specs[k][1], "%s takes no predicate",
					     b ? "BEGIN" : "END")
				      : 0;
		}
		if (b || e)
			return perr(P, specs[k][0], specs[k][1], "%.*s among other probes",
				    specs[k][1], s + specs[k][0]);
		ival = !strncmp(s + specs[k][0], "interval:", 9) ||
		       !strncmp(s + specs[k][0], "i:", 2);
		if (ival && n > 1)
			return perr(P, specs[k][0], specs[k][1],
				    "an interval probe stands alone, for now");
		if (ival && !block_computes(s, body))
			return filter ? perr(P, specs[k][0], specs[k][1],
					     "an interval block of exit(), time(), print() and "
					     "clear() takes no predicate, for now")
				      : interval_of(P, specs[k][0], specs[k][1], kind);
		if (ival ? interval_probe(P, specs[k][0], specs[k][1], filter)
			 : add_probe(P, specs[k][0], specs[k][1], filter))
			return -EINVAL;
	}
	*kind = BLK_PROBE;
	return 0;
}

/* The block's updates onto probe q; -ENOMEM */
static int upd_onto(struct pmt_prog_probe *q, const struct blk_state *b)
{
	int i;

	for (i = 0; i < b->nupd; i++) {
		q->upd[i] = b->upd[i];
		q->nupd++;
		if ((b->upd_guard[i] && !(q->upd_guard[i] = strdup(b->upd_guard[i]))) ||
		    (b->upd_keys[i] && !(q->upd_keys[i] = strdup(b->upd_keys[i]))) ||
		    (b->upd_value[i] && !(q->upd_value[i] = strdup(b->upd_value[i]))))
			return -ENOMEM;
	}
	return 0;
}

/* The block's printf and role onto its probes from first on. */
static int block_onto(struct parser *P, const struct blk_state *b, size_t first)
{
	struct pmt_program *p = P->p;
	size_t k;

	for (k = first; k < p->nprobes; k++) {
		p->probes[k].role = b->role;
		p->probes[k].stmts_only = b->stmts && !b->printed && !b->got && !b->role;
		if ((b->printed && !(p->probes[k].printf = strdup(b->printed))) ||
		    (b->stmts && !(p->probes[k].stmts = strdup(b->stmts))) ||
		    (b->print_guard && !b->print_always &&
		     !(p->probes[k].print_guard = strdup(b->print_guard))) ||
		    upd_onto(&p->probes[k], b))
			return pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	}
	if ((b->stmts || b->printed) && b->role)
		return lat_perr(
			P, P->lx.tok.pos, 1,
			"a start time's block saves no other value and prints nothing, for now");
	if (b->role && p->nprobes - first != 1)
		return lat_perr(
			P, P->lx.tok.pos, 1,
			"a start time is stored by one probe and read by one, for now: this "
			"block has %zu",
			p->nprobes - first);
	return 0;
}

/* config = { NAME = VALUE; ... } from src[*at], as newer bpftrace takes
 * it: 1 (*at left past it), 0 where src[*at] is no config, or -EINVAL */
static int config_block(struct parser *P, int *at)
{
	static const char *const missing[] = {"warn", "ignore", "error"};
	const char *s = P->src;
	int i = *at, k, name, len;
	size_t m;

	if (strncmp(s + i, "config", 6) || pmt_lex__name_char(s[i + 6], false) ||
	    s[i = skip_space(s, i + 6)] != '=')
		return 0;
	if (s[i = skip_space(s, i + 1)] != '{')
		return perr(P, i, 1, "expected '{' after config =");
	for (i = skip_space(s, i + 1); s[i] != '}'; i = skip_space(s, i)) {
		for (name = i; pmt_lex__name_char(s[i], i == name); i++)
			;
		len = i - name;
		if (!len || s[i = skip_space(s, i)] != '=')
			return perr(P, len ? i : name, 1, "expected NAME = VALUE; in config");
		for (k = i = skip_space(s, i + 1); pmt_lex__name_char(s[i], i == k); i++)
			;
		if (len != 14 || strncmp(s + name, "missing_probes", 14))
			return perr(P, name, len,
				    "config: pmtrace takes missing_probes (ignore, warn or error), "
				    "not %.*s",
				    len, s + name);
		for (m = 0; m < 3 && ((size_t)(i - k) != strlen(missing[m]) ||
				      strncmp(s + k, missing[m], strlen(missing[m])));
		     m++)
			;
		if (m == 3)
			return perr(P, k, i > k ? i - k : 1,
				    "config: missing_probes is ignore, warn or error");
		P->p->missing_probes = (int)m;
		if (s[i = skip_space(s, i)] == ';')
			i++;
		else if (s[i] != '}')
			return perr(P, i, 1, "expected ';' after a config value");
	}
	*at = i + 1;
	return 1;
}

/* PROBE[, PROBE...] [/PREDICATE/] { ... } from src[*at] */
static int probe_block(struct parser *P, int *at)
{
	struct blk_state b = {0};
	int i = *at, specs[64][2], n, ret;
	char *filter = NULL;
	size_t first = P->p->nprobes;

	if (probe_list(P, &i, specs, &n))
		return -EINVAL;
	if (P->src[i] == '/' && (predicate(P, &i, &filter) || start_predicate(P, &filter, &b, *at)))
		return -EINVAL;
	if (P->src[i] != '{') {
		free(filter);
		return perr(P, i, 1, "expected '{' to open the probes' block");
	}
	ret = list_kind(P, specs, n, filter, i, &b.kind);
	free(filter);
	if (ret)
		return ret;
	pmt_lex__skip_to(&P->lx, i);
	if (next(P))
		return -EINVAL;
	ret = block(P, &b);
	P->nblocks++;
	forget_vars(P); /* a block's own */
	if (!ret)
		ret = block_onto(P, &b, first);
	free(b.printed);
	free(b.stmts);
	free(b.print_guard);
	free(b.print_last);
	for (n = 0; n < b.nupd; n++) {
		free(b.upd_guard[n]);
		free(b.upd_keys[n]);
		free(b.upd_value[n]);
	}
	pmt_buf__free(&b.touched);
	for (n = 0; n < P->nw; n++) {
		free(P->w[n].target);
		free(P->w[n].text);
	}
	P->nw = 0;
	if (!ret)
		*at = P->lx.tok.pos + 1;
	return ret;
}

/* A start time stored by one probe and read back by another into the
 * map: --latency START,END, matched by the keys. */
static int latency_shape(struct parser *P, int at)
{
	struct pmt_program *p = P->p;
	size_t k, roles[3] = {0};

	for (k = 0; k < p->nprobes; k++)
		roles[p->probes[k].role]++;
	if (roles[PMT_PROG_START] != 1 || roles[PMT_PROG_END] != 1 || roles[0])
		return lat_perr(P, at, 1,
				"@%s, a start time, needs one probe storing it and one reading it "
				"back into the map, and no other probe, for now",
				p->lat_map);
	if (p->nmaps != 1 || !p->lat_unit)
		return lat_perr(P, at, 1, "@%s, a start time, is not read back into the one map",
				p->lat_map);
	if ((strcmp(p->lat_key, "tid") || strcmp(P->end_key, "tid")) &&
	    asprintf(&p->lat_match, "%s=%s", p->lat_key, P->end_key) < 0) {
		p->lat_match = NULL;
		return pmt_error__runtime(P->err, -ENOMEM, "%s: out of memory", P->name);
	}
	return 0;
}

/* Where @name first stands in the source (0 if nowhere) */
static int map_pos(const struct parser *P, const char *name)
{
	const char *at;

	for (at = strchr(P->src, '@'); at; at = strchr(at + 1, '@'))
		if (!strncmp(at + 1, name, strlen(name)) &&
		    !pmt_lex__name_char(at[1 + strlen(name)], false))
			return (int)(at - P->src);
	return 0;
}

/* Is each use of map name in printf text a whole argument, @NAME[KEY]? */
static bool whole_args(const char *text, const char *name)
{
	struct pmt_printf_text t;
	struct pmt_error e = {0};
	size_t n = strlen(name), len;
	bool ok = true;
	int i;

	if (pmt_printf__split(text, "printf", &t, &e))
		return true; /* told where the probe is made */
	for (i = 0; i < t.nargs && ok; i++) {
		const char *a = t.args[i];
		int depth = 0;
		size_t k;

		len = strlen(a);
		/* a $variable's value: in parentheses of its own */
		while (len > 2 && a[0] == '(' && a[len - 1] == ')') {
			for (k = 0, depth = 0; k < len - 1; k++)
				if (!(depth += (a[k] == '(') - (a[k] == ')')))
					break;
			if (k < len - 1)
				break;
			a++;
			len -= 2;
		}
		if (names_map(a, name))
			ok = a[0] == '@' && !strncmp(a + 1, name, n) && a[1 + n] == '[' &&
			     a[len - 1] == ']' && !memchr(a + 1, '@', len - 1);
	}
	pmt_printf__free(&t);
	return ok;
}

/* Every map text reads is one the program saves values in: an
 * aggregation is read at the end, not per event, for now; a table of
 * BEGIN's strings by printf alone (is_printf), as an argument of its own. */
static int maps_read(struct parser *P, const char *text, bool is_printf)
{
	const char *at;
	char name[64];
	int n;

	for (at = text ? strchr(text, '@') : NULL; at; at = strchr(at + 1, '@')) {
		for (n = 0; pmt_lex__name_char(at[1 + n], !n); n++)
			;
		snprintf(name, sizeof(name), "%.*s", n, at + 1);
		if (pmt_program__strings(P->p, name) && !(is_printf && whole_args(text, name)))
			return perr(P, map_pos(P, name), n + 1,
				    "@%s holds strings: printf shows them, @%s[KEY] as an argument "
				    "of its own, for now",
				    name, name);
		if (listed(&P->saved, name))
			continue;
		return perr(
			P, map_pos(P, name), n + 1,
			pmt_program__map(P->p, name) >= 0
				? "@%s is an aggregation: it is printed at the end, not read by "
				  "the probes, for now"
				: "@%s is read but no probe saves a value in it (@%s[KEY] = VALUE)",
			name, name);
	}
	return 0;
}

/* One reading of text into p: its start times as --latency's, or as
 * saved values (no_lat); *lat_refused: the first refused their shape. */
static int parse_as(const char *text, const char *name, struct pmt_program *p, bool no_lat,
		    bool *lat_refused, struct pmt_error *err)
{
	struct parser P = {.name = name, .orig = text, .err = err, .p = p, .no_lat = no_lat};
	int at = 0, ret = 0;

	memset(p, 0, sizeof(*p));
	P.src = strdup(text);
	if (!P.src)
		return pmt_error__runtime(err, -ENOMEM, "%s: out of memory", name);
	pmt_lex__init(&P.lx, P.src, name, 0, &P.lexerr);
	ret = blank(&P);
	while (!ret && P.src[at = skip_space(P.src, at)])
		if (!(ret = config_block(&P, &at)))
			ret = probe_block(&P, &at);
		else if (ret > 0)
			ret = 0;
	if (!ret && !p->nprobes && !p->begin && !p->nends && p->interval <= 0)
		ret = perr(&P, at, 1, "the program has no probe: nothing to trace");
	if (!ret && p->lat_map)
		ret = latency_shape(&P, at);
	for (size_t i = 0; !ret && i < p->nprobes; i++)
		ret = maps_read(&P, p->probes[i].filter, false) ||
		      maps_read(&P, p->probes[i].printf, true) ||
		      maps_read(&P, p->probes[i].stmts, false);
	for (size_t i = 0; !ret && i < p->nends; i++)
		if (p->ends[i].map && pmt_program__map(p, p->ends[i].map) < 0)
			ret = perr(&P, map_pos(&P, p->ends[i].map), 1,
				   "END prints a map the probes update (print(@%s)), for now",
				   p->ends[i].map);
	if (!ret && p->interval_map && pmt_program__map(p, p->interval_map) < 0 && p->printed)
		ret = perr(&P, map_pos(&P, p->interval_map), 1,
			   "an interval prints a map the probes update (print(@%s)), for now",
			   p->interval_map);
	forget_vars(&P);
	free(P.end_key);
	pmt_buf__free(&P.saved);
	p->cleared = P.cleared.p; /* its memory p's */
	p->funcs = P.funcs.p;
	p->probe_names = P.probes.p;
	p->kstack_maps = P.kstacks.p;
	free(P.src);
	if (ret)
		pmt_program__free(p);
	*lat_refused = P.lat_refused;
	return ret ? (pmt_error__set(err) ? -EINVAL : ret) : 0;
}

int pmt_program__parse(const char *text, const char *name, struct pmt_program *p,
		       struct pmt_error *err)
{
	bool lat_refused = false;
	int ret = parse_as(text, name, p, false, &lat_refused, err);

	/* a start time --latency cannot measure (several probes store or
	 * read it, its block saves more): a saved value like any other */
	if (ret == -EINVAL && lat_refused) {
		pmt_error__clear(err);
		ret = parse_as(text, name, p, true, &lat_refused, err);
	}
	return ret;
}

void pmt_program__free(struct pmt_program *p)
{
	size_t i;

	for (i = 0; i < p->nprobes; i++) {
		free(p->probes[i].spec);
		free(p->probes[i].filter);
		free(p->probes[i].printf);
		free(p->probes[i].where);
		free(p->probes[i].stmts);
		free(p->probes[i].print_guard);
		for (int k = 0; k < p->probes[i].nupd; k++) {
			free(p->probes[i].upd_guard[k]);
			free(p->probes[i].upd_keys[k]);
			free(p->probes[i].upd_value[k]);
		}
	}
	free(p->probes);
	for (i = 0; i < (size_t)p->nmaps; i++) {
		free(p->maps[i].name);
		free(p->maps[i].fn);
		free(p->maps[i].value);
		free(p->maps[i].keys);
	}
	free(p->begin);
	for (i = 0; i < p->nends; i++) {
		free(p->ends[i].text);
		free(p->ends[i].map);
	}
	free(p->ends);
	free(p->interval_map);
	free(p->lat_map);
	free(p->lat_key);
	free(p->lat_match);
	free(p->cleared);
	free(p->funcs);
	free(p->probe_names);
	free(p->kstack_maps);
	free(p->head);
	for (i = 0; i < p->ntables; i++) {
		for (size_t k = 0; k < p->tables[i].n; k++)
			free(p->tables[i].str[k]);
		free(p->tables[i].map);
		free(p->tables[i].keys);
		free(p->tables[i].str);
		free(p->tables[i].num);
	}
	free(p->tables);
	memset(p, 0, sizeof(*p));
}

int pmt_program__names_probe(const struct pmt_program *p, const char *map)
{
	return pmt_words__has(p->funcs, map) ? 'f' : pmt_words__has(p->probe_names, map) ? 'p' : 0;
}

const struct pmt_prog_table *pmt_program__strings(const struct pmt_program *p, const char *map)
{
	size_t i;

	for (i = 0; i < p->ntables; i++)
		if (p->tables[i].strs && !strcmp(p->tables[i].map, map))
			return &p->tables[i];
	return NULL;
}

/* --- printf's arguments ---------------------------------------------------- */

/* One argument, from the lexer's token to the ',' or ';' (or the end)
 * at depth 0: its text into t. */
static int printf_arg(struct pmt_lexer *lx, const char *text, struct pmt_printf_text *t)
{
	int start = lx->tok.pos, end = start, depth = 0, k;

	for (;;) {
		k = lx->tok.kind;
		if (k == PMT_TOK_END || (!depth && (k == ',' || k == ';')))
			break;
		depth += (k == '(' || k == '[') - (k == ')' || k == ']');
		end = lx->tok.pos + lx->tok.len;
		if (pmt_lex__next(lx))
			return -EINVAL;
	}
	if (end == start)
		return pmt_lex__error(lx, lx->tok.pos, lx->tok.len ? lx->tok.len : 1,
				      "expected an argument");
	if (t->nargs == PMT_PRINTF_ARGS)
		return pmt_lex__error(lx, start, end - start, "printf takes at most %d arguments",
				      PMT_PRINTF_ARGS);
	t->args[t->nargs] = strndup(text + start, (size_t)(end - start));
	if (!t->args[t->nargs])
		return -ENOMEM;
	t->nargs++;
	return 0;
}

/* if (COND) before a printf's format (the lexer at if): COND's text
 * into *guard, the lexer past its ')' */
static int printf_guard(struct pmt_lexer *lx, const char *text, char **guard)
{
	int start, depth = 0;

	if (pmt_lex__next(lx) || lx->tok.kind != '(')
		return pmt_lex__error(lx, lx->tok.pos, 1, "expected '(' after if");
	start = lx->tok.pos + 1;
	for (;;) {
		if (lx->tok.kind == PMT_TOK_END)
			return pmt_lex__error(lx, start - 1, 1, "if's condition: ')' is missing");
		depth += (lx->tok.kind == '(') - (lx->tok.kind == ')');
		if (!depth)
			break;
		if (pmt_lex__next(lx))
			return -EINVAL;
	}
	if (lx->tok.pos == start)
		return pmt_lex__error(lx, start, 1, "expected a condition: if (CONDITION)");
	if (!(*guard = strndup(text + start, (size_t)(lx->tok.pos - start))))
		return -ENOMEM;
	return pmt_lex__next(lx);
}

int pmt_printf__split(const char *text, const char *name, struct pmt_printf_text *t,
		      struct pmt_error *err)
{
	struct pmt_lexer lx;
	int ret = 0;

	memset(t, 0, sizeof(*t));
	pmt_lex__init(&lx, text, name, 0, err);
	if (pmt_lex__next(&lx))
		ret = -EINVAL;
	while (!ret) {
		if (t->nsegs == PMT_PRINTF_SEGS) {
			ret = pmt_lex__error(&lx, lx.tok.pos, 1, "more than %d printf calls",
					     PMT_PRINTF_SEGS);
			break;
		}
		if (lx.tok.kind == PMT_TOK_NAME && lx.tok.len == 2 &&
		    !strncmp(text + lx.tok.pos, "if", 2) &&
		    (ret = printf_guard(&lx, text, &t->segs[t->nsegs].guard)))
			break;
		if (lx.tok.kind != PMT_TOK_STR) {
			ret = pmt_lex__error(&lx, lx.tok.pos, lx.tok.len ? lx.tok.len : 1,
					     "expected a format in double quotes: '\"%%d %%s\\n\", "
					     "pid, comm'");
			break;
		}
		pmt_lex__string(&lx, &lx.tok, &t->fmt);
		if ((ret = pmt_lex__next(&lx)))
			break;
		while (!ret && lx.tok.kind == ',')
			if (!(ret = pmt_lex__next(&lx)))
				ret = printf_arg(&lx, text, t);
		t->segs[t->nsegs].fmt_end = t->fmt.len;
		t->segs[t->nsegs++].args_end = t->nargs;
		if (ret || lx.tok.kind == PMT_TOK_END)
			break;
		/* the next printf's: its format and arguments follow */
		if (lx.tok.kind != ';')
			ret = pmt_lex__error(&lx, lx.tok.pos, lx.tok.len ? lx.tok.len : 1,
					     "expected ',' or the end");
		else
			ret = pmt_lex__next(&lx);
	}
	if (ret == -ENOMEM)
		ret = pmt_error__runtime(err, -ENOMEM, "%s: out of memory", name);
	if (ret)
		pmt_printf__free(t);
	else
		pmt_buf__cstr(&t->fmt);
	return ret;
}

void pmt_printf__free(struct pmt_printf_text *t)
{
	int i;

	for (i = 0; i < t->nargs; i++)
		free(t->args[i]);
	for (i = 0; i < PMT_PRINTF_SEGS; i++)
		free(t->segs[i].guard);
	pmt_buf__free(&t->fmt);
	memset(t, 0, sizeof(*t));
}
