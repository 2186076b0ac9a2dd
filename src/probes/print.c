// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A probe's --printf made (print.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lang/program.h"
#include "output/printf.h"
#include "probes/print.h"

_Static_assert(PMT_PRINT_SLOTS == PMT_STREAM_VALS, "a print's slots are the record's");

/* What the header and the run bring, by bpftrace's names. */
static const struct {
	const char *name;
	enum pmt_parg_kind kind;
} builtins[] = {
	{"comm", PMT_PARG_COMM},   {"pid", PMT_PARG_PID},     {"tid", PMT_PARG_TID},
	{"cpu", PMT_PARG_CPU},	   {"nsecs", PMT_PARG_NSECS}, {"elapsed", PMT_PARG_ELAPSED},
	{"probe", PMT_PARG_PROBE}, {"func", PMT_PARG_FUNC},   {"kstack", PMT_PARG_KSTACK},
};

/* The streamed record has the field: decoded in user space. */
static bool record_field(const struct pmt_opinfo *info)
{
	return info->field && (info->o.src == PMT_FSRC_FIELD || info->o.src == PMT_FSRC_FIELD_STR ||
			       info->o.src == PMT_FSRC_FIELD_DSTR);
}

/* x's operand: str(F) of a field F as the field's (what it points at),
 * anything else compiled into mine */
static int compile(struct pmt_probe *p, const char *x, struct pmt_opinfo *info,
		   struct pmt_exprs *mine, const struct pmt_typesys *types, bool want_str,
		   struct pmt_error *err)
{
	char inner[256];
	int r;

	if (pmt_operand__call_arg(x, "str", inner, sizeof(inner)) &&
	    !pmt_expr__is_expression(inner)) {
		r = pmt_operand__resolve(p->fmt, x, info);
		if (!r && info->o.src == PMT_FSRC_PTR_STR)
			return 0;
		if (r == PMT_OPERAND_UNKNOWN) {
			struct pmt_buf b = {0};

			r = pmt_error__usage(err, "printf's %s: %s has no field %s", x, p->name,
					     inner);
			pmt_operand__hint(&b, p->fmt, p->name, inner);
			pmt_error__hint(err, "%s", pmt_buf__cstr(&b));
			pmt_buf__free(&b);
			return r;
		}
		return pmt_error__usage(err, "printf's %s: %s holds no address (in %s)", x, inner,
					p->name);
	}
	/* a field by its name: a string field too (a char array) */
	if (!pmt_expr__is_expression(x) && !pmt_operand__resolve(p->fmt, x, info))
		return 0;
	return (want_str ? pmt_expr__compile_str : pmt_expr__compile)(mine, x, p->fmt, p->name,
								      "printf", types, info, err);
}

/* A string made here from a literal: strftime("FORMAT", nsecs), the
 * record's time on the wall clock in FORMAT (kind TIME), or cat("FILE"),
 * the file's text when printed, as bpftrace reads it (CAT); 1 if x is
 * not fn() */
static int literal_call(const char *x, const char *fn, enum pmt_parg_kind kind,
			struct pmt_print_arg *a, struct pmt_error *err)
{
	struct pmt_printf_text t;
	char inner[512];
	bool bad;

	if (!pmt_operand__call_arg(x, fn, inner, sizeof(inner)))
		return 1;
	if (pmt_printf__split(inner, fn, &t, err))
		return -EINVAL;
	bad = kind == PMT_PARG_TIME ? t.nargs != 1 || strcmp(t.args[0], "nsecs")
				    : t.nargs || strchr(t.fmt.p, '%');
	if (bad) {
		pmt_printf__free(&t);
		return pmt_error__usage(
			err, "printf's %s: %s", x,
			kind == PMT_PARG_TIME
				? "strftime takes (\"FORMAT\", nsecs): the event's time"
				: "cat() of a formatted name is not supported yet: cat(\"FILE\")");
	}
	a->kind = (uint8_t)kind;
	a->tfmt = strdup(t.fmt.p);
	pmt_printf__free(&t);
	return a->tfmt ? 0 : pmt_error__runtime(err, -ENOMEM, "out of memory for --printf");
}

/* A number slot of p's for operand o (x: the argument, for messages):
 * its index, or -EINVAL (said) */
static int num_slot(struct pmt_probe *p, const char *x, const struct pmt_operand *o,
		    struct pmt_error *err)
{
	uint32_t i;

	/* the same text again (a choice's condition, an address): its slot */
	for (i = 0; p->print && i < p->nvals && i < PMT_PRINT_SLOTS; i++)
		if (p->print->slot_text[i] && !strcmp(p->print->slot_text[i], x))
			return (int)i;
	if (p->print && p->nvals < PMT_PRINT_SLOTS && !(p->print->slot_text[p->nvals] = strdup(x)))
		return pmt_error__runtime(err, -ENOMEM, "out of memory for --printf");
	if (p->nvals == PMT_STREAM_VALS)
		return pmt_error__usage(err,
					"printf's %s: a probe's printf has %u numbers computed in "
					"the kernel at most (in %s)",
					x, PMT_STREAM_VALS, p->name);
	p->vals[p->nvals] = *o;
	return (int)p->nvals++;
}

/* Argument x as a number slot of p's holding operand o, shown as kind */
static int slot_arg(struct pmt_probe *p, const char *x, const struct pmt_operand *o,
		    enum pmt_parg_kind kind, struct pmt_print_arg *a, struct pmt_error *err)
{
	int slot = num_slot(p, x, o, err);

	if (slot < 0)
		return slot;
	a->kind = (uint8_t)kind;
	a->slot = (uint8_t)slot;
	return 0;
}

/* Is x a program's map read whole, @NAME[KEY]? Then NAME into name. */
static bool map_read(const char *x, char *name, size_t len)
{
	size_t n = strcspn(x + 1, "[");

	if (x[0] != '@' || x[1 + n] != '[' || x[strlen(x) - 1] != ']' || n >= len ||
	    strchr(x + 1, '@'))
		return false;
	snprintf(name, len, "%.*s", (int)n, x + 1);
	return true;
}

/* A condition of a program's printf (if): a number slot of the record,
 * *out 1 + its index (the kernel streams the record where the block's
 * is non-zero; each printf prints where its own is) */
static int guard_slot(struct pmt_probe *p, const char *cond, uint8_t *out, struct pmt_exprs *mine,
		      const struct pmt_typesys *types, struct pmt_error *err)
{
	struct pmt_opinfo info;
	int slot;

	if (pmt_expr__compile(mine, cond, p->fmt, p->name, "if", types, &info, err))
		return -EINVAL;
	if (info.is_str)
		return pmt_error__usage(err, "%s: if (%s): a string, not a condition", p->name,
					cond);
	if ((slot = num_slot(p, cond, &info.o, err)) < 0)
		return slot;
	*out = (uint8_t)(slot + 1);
	return 0;
}

/* @NAME[KEY] of a program's table of strings (1 if x is not one): the
 * key computed in the kernel, the string found here */
static int table_arg(struct pmt_probe *p, const char *x, struct pmt_print_arg *a,
		     struct pmt_exprs *mine, const struct pmt_typesys *types,
		     const struct pmt_program *prog, struct pmt_error *err)
{
	const struct pmt_prog_table *t;
	struct pmt_opinfo info;
	char name[64], key[256];
	size_t n;
	int r;

	if (!prog || !map_read(x, name, sizeof(name)) || !(t = pmt_program__strings(prog, name)))
		return 1;
	n = strlen(name);
	snprintf(key, sizeof(key), "%.*s", (int)(strlen(x) - n - 3), x + n + 2);
	if (pmt_expr__compile(mine, key, p->fmt, p->name, "printf", types, &info, err))
		return -EINVAL;
	if (info.is_str)
		return pmt_error__usage(err, "printf's %s: @%s's key is a number (in %s)", x, name,
					p->name);
	if ((r = slot_arg(p, x, &info.o, PMT_PARG_TABLE, a, err)))
		return r;
	a->tkeys = t->keys;
	a->tstrs = t->str;
	a->tn = t->n;
	return 0;
}

/* join(E) or join(E, "DELIM") (1 if x is not one): the strings of the
 * NULL-ended array of pointers at address E (argv), read in the kernel,
 * printed with DELIM (" ") between them; one a probe. */
static int join_arg(struct pmt_probe *p, const char *x, struct pmt_print_arg *a,
		    struct pmt_exprs *mine, const struct pmt_typesys *types, struct pmt_error *err)
{
	struct pmt_opinfo info;
	char inner[256], *delim;
	size_t n;
	int slot;

	if (!pmt_operand__call_arg(x, "join", inner, sizeof(inner)))
		return 1;
	if ((delim = strstr(inner, ", \""))) {
		n = strlen(delim);
		if (delim[n - 1] != '"' || n < 4)
			return pmt_error__usage(err, "printf's %s: join(ARRAY, \"DELIMITER\")", x);
		delim[n - 1] = '\0';
		*delim = '\0';
		delim += 3;
	}
	if (p->join_slot)
		return pmt_error__usage(err, "printf's %s: one join() a probe, for now (in %s)", x,
					p->name);
	if (compile(p, inner, &info, mine, types, false, err))
		return -EINVAL;
	if (info.is_str)
		return pmt_error__usage(err,
					"printf's %s: join() reads an array of pointers to strings "
					"(argv), not a string (in %s)",
					x, p->name);
	if ((slot = num_slot(p, x, &info.o, err)) < 0)
		return slot;
	p->join_slot = (uint8_t)(slot + 1);
	a->kind = PMT_PARG_JOIN;
	if (delim && !(a->tfmt = strdup(delim)))
		return pmt_error__runtime(err, -ENOMEM, "out of memory for --printf");
	return 0;
}

/* usym(E) or ksym(E) (1 if x is neither): E computed in the kernel, the
 * symbol at that address named here, in the event's process for usym */
static int sym_arg(struct pmt_probe *p, const char *x, struct pmt_print_arg *a,
		   struct pmt_exprs *mine, const struct pmt_typesys *types, struct pmt_error *err)
{
	struct pmt_opinfo info;
	char inner[256];
	bool user = pmt_operand__call_arg(x, "usym", inner, sizeof(inner));

	if (!user && !pmt_operand__call_arg(x, "ksym", inner, sizeof(inner)))
		return 1;
	if (compile(p, inner, &info, mine, types, false, err))
		return -EINVAL;
	if (info.is_str)
		return pmt_error__usage(err,
					"printf's %s: %s names an address, not a string (in %s)", x,
					user ? "usym" : "ksym", p->name);
	return slot_arg(p, x, &info.o, user ? PMT_PARG_USYM : PMT_PARG_KSYM, a, err);
}

/* @MAP[KEY] of a program's map saving func or probe (1 if x is not
 * one): the probe's id read back in the kernel, its name here */
static int probe_arg(struct pmt_probe *p, const char *x, struct pmt_print_arg *a,
		     struct pmt_exprs *mine, const struct pmt_typesys *types,
		     const struct pmt_program *prog, struct pmt_error *err)
{
	struct pmt_opinfo info;
	char name[64];
	int kind;

	if (!prog || !map_read(x, name, sizeof(name)) ||
	    !(kind = pmt_program__names_probe(prog, name)))
		return 1;
	if (pmt_expr__compile(mine, x, p->fmt, p->name, "printf", types, &info, err))
		return -EINVAL;
	return slot_arg(p, x, &info.o, kind == 'f' ? PMT_PARG_FUNC_OF : PMT_PARG_PROBE_OF, a, err);
}

/* A string literal (1 if x is not one): its text */
static int literal_arg(const char *x, struct pmt_print_arg *a, struct pmt_error *err)
{
	struct pmt_printf_text t;

	if (x[0] != '"')
		return 1;
	if (pmt_printf__split(x, "printf", &t, err))
		return -EINVAL;
	if (t.nargs) {
		pmt_printf__free(&t);
		return pmt_error__usage(err, "printf's %s: one string literal expected", x);
	}
	a->kind = PMT_PARG_LIT;
	a->tfmt = strdup(t.fmt.p);
	pmt_printf__free(&t);
	return a->tfmt ? 0 : pmt_error__runtime(err, -ENOMEM, "out of memory for --printf");
}

/* x with its outer parentheses (those around the whole) taken off, into
 * buf */
static const char *unwrapped(const char *x, char *buf, size_t len)
{
	size_t n = strlen(x), i;
	int depth;

	while (n >= 2 && x[0] == '(' && x[n - 1] == ')') {
		for (i = 0, depth = 0; i < n; i++) {
			depth += (x[i] == '(') - (x[i] == ')');
			if (!depth && i < n - 1)
				break;
		}
		if (i < n - 1)
			break; /* (a) + (b) */
		x++;
		n -= 2;
	}
	snprintf(buf, len, "%.*s", (int)n, x);
	return buf;
}

static int place(struct pmt_probe *p, const char *x, struct pmt_print_arg *a,
		 struct pmt_exprs *mine, const struct pmt_typesys *types,
		 const struct pmt_program *prog, bool want_str, struct pmt_error *err);

/* Is x a string the kernel computes the address of ((C) ? (comm) :
 * (@saved[k]) among them)? Then one string slot shows it, chosen there. */
static bool kernel_string(struct pmt_probe *p, const char *x, struct pmt_exprs *mine,
			  const struct pmt_typesys *types)
{
	struct pmt_error e = {0};
	struct pmt_opinfo info;

	if (pmt_expr__compile_str(mine, x, p->fmt, p->name, "printf", types, &info, &e)) {
		pmt_error__clear(&e);
		return false;
	}
	return info.o.src == PMT_FSRC_PTR_STR;
}

/* (COND) ? (A) : (B) choosing a string (a $variable given one inside an
 * if; 1 if x is none): A where COND holds in the record, else B, each
 * placed as an argument of its own (B's past the format's) */
static int choice_arg(struct pmt_probe *p, const char *x, struct pmt_print_arg *a,
		      struct pmt_exprs *mine, const struct pmt_typesys *types,
		      const struct pmt_program *prog, bool want_str, struct pmt_error *err)
{
	char in[1024], cond[1024], *q, *yes, *no;
	struct pmt_print *pr = p->print;
	struct pmt_print_arg *alt;
	int depth = 0, r;
	uint8_t when;

	unwrapped(x, in, sizeof(in));
	if (in[0] != '(' || !pmt_printf__is_str_text(x) || kernel_string(p, x, mine, types))
		return 1;
	for (q = in; *q; q++) {
		if (*q == '"')
			while (*++q && *q != '"')
				q += *q == '\\' && q[1];
		depth += (*q == '(') - (*q == ')');
		if (!depth && !strncmp(q, ") ? (", 5))
			break;
	}
	if (!*q || !(no = strstr(q + 5, ") : (")))
		return 1;
	snprintf(cond, sizeof(cond), "%.*s", (int)(q + 1 - in), in);
	yes = q + 4; /* "(A) : (B)": A's ')' ends it */
	no[1] = '\0';
	no += 4;
	if (pr->nall >= PMT_PRINT_ARGS)
		return pmt_error__usage(err,
					"printf's %s: its strings chosen by ifs take more than %d "
					"arguments (in %s)",
					x, PMT_PRINT_ARGS, p->name);
	if ((r = guard_slot(p, cond, &when, mine, types, err)))
		return r;
	alt = &pr->args[pr->nall];
	a->alt = (uint8_t)(++pr->nall);
	alt->kind = PMT_PARG_NUM;
	/* "0": no value before the if, bpftrace's empty string */
	if (!strcmp(unwrapped(no, cond, sizeof(cond)), "0"))
		r = literal_arg("\"\"", alt, err);
	else
		r = place(p, no, alt, mine, types, prog, want_str, err);
	if (r || (r = place(p, yes, a, mine, types, prog, want_str, err)))
		return r;
	if (a->when)
		return pmt_error__usage(err,
					"printf's %s: a choice within a choice's value: not "
					"supported yet (in %s)",
					x, p->name);
	a->when = when;
	if (pmt_parg__is_str(a) != pmt_parg__is_str(alt))
		return pmt_error__usage(
			err,
			"printf's %s: a string where its if's condition holds and a "
			"number where not, or the other way (in %s)",
			x, p->name);
	return 0;
}

/* fn(A) or fn(A, B) (false if x is not fn()): A into inner, and B's
 * place in it (cut at the comma between them at depth 0), or NULL */
static bool call_args(const char *x, const char *fn, char *inner, size_t len, char **second)
{
	int depth = 0;
	char *c;

	if (!pmt_operand__call_arg(x, fn, inner, len))
		return false;
	for (c = inner; *c; c++) {
		depth += (*c == '(') - (*c == ')');
		if (!depth && *c == ',')
			break;
	}
	*second = NULL;
	if (*c) {
		*c = '\0';
		*second = c + 1 + strspn(c + 1, " ");
	}
	return true;
}

/* size bytes at address addr, read in the kernel as they are into a
 * string slot of p's, shown as kind (ntop()'s IPv6 address, buf()) */
static int bytes_arg(struct pmt_probe *p, const char *x, const char *addr, uint8_t size,
		     enum pmt_parg_kind kind, struct pmt_print_arg *a, struct pmt_exprs *mine,
		     const struct pmt_typesys *types, struct pmt_error *err)
{
	struct pmt_opinfo info;
	char at[600];

	snprintf(at, sizeof(at), "str(%s)", addr);
	if (pmt_expr__compile(mine, at, p->fmt, p->name, "printf", types, &info, err))
		return -EINVAL;
	if (info.o.src != PMT_FSRC_PTR_STR ||
	    (kind == PMT_PARG_NTOP6 && !(info.o.flags & PMT_FFLAG_XADDR)))
		return pmt_error__usage(
			err,
			kind == PMT_PARG_NTOP6
				? "printf's %s: ntop() shows an IPv4 address (a "
				  "number) or an IPv6 address (a 16-byte array) (in %s)"
				: "printf's %s: buf() reads at an address (in %s)",
			x, p->name);
	if (p->nstrs_print == PMT_STREAM_STRS)
		return pmt_error__usage(err,
					"printf's %s: a probe's printf has %u strings read in the "
					"kernel at most (in %s)",
					x, PMT_STREAM_STRS, p->name);
	info.o.flags |= PMT_FFLAG_BYTES;
	info.o.size = size;
	a->kind = (uint8_t)kind;
	a->slot = (uint8_t)p->nstrs_print;
	p->strs[p->nstrs_print++] = info.o;
	return 0;
}

/* ntop(ADDR) or ntop(FAMILY, ADDR) (1 if x is neither): an IPv4
 * address, a number (4 bytes as the kernel keeps them), or an IPv6
 * address, a 16-byte array (read in the kernel as bytes) */
static int ntop_arg(struct pmt_probe *p, const char *x, struct pmt_print_arg *a,
		    struct pmt_exprs *mine, const struct pmt_typesys *types, struct pmt_error *err)
{
	char inner[512], *addr = inner, *second;
	struct pmt_opinfo info;
	int fam = 0;

	if (!call_args(x, "ntop", inner, sizeof(inner), &second))
		return 1;
	if (second) {
		addr = second;
		if (!strcmp(inner, "2") || !strcmp(inner, "AF_INET"))
			fam = 4;
		else if (!strcmp(inner, "10") || !strcmp(inner, "AF_INET6"))
			fam = 6;
		else
			return pmt_error__usage(
				err,
				"printf's %s: ntop(FAMILY, ADDRESS) takes AF_INET or "
				"AF_INET6 (in %s)",
				x, p->name);
	}
	if (fam != 6) {
		/* a number: IPv4 (the kernel's __be32, or a constant) */
		struct pmt_error e = {0};

		if (!pmt_expr__compile(mine, addr, p->fmt, p->name, "printf", types, &info, &e) &&
		    !info.is_str) {
			pmt_error__clear(&e);
			return slot_arg(p, x, &info.o, PMT_PARG_NTOP4, a, err);
		}
		if (fam == 4) {
			*err = e;
			return -EINVAL;
		}
		pmt_error__clear(&e);
	}
	/* an array: IPv6's 16 bytes, read where the array is */
	return bytes_arg(p, x, addr, 16, PMT_PARG_NTOP6, a, mine, types, err);
}

/* buf(ADDRESS, LENGTH) (1 if x is not one): PMT_BUF_MAX bytes at the
 * address read in the kernel into a string slot, as they are, and the
 * length, a number; %r shows the first LENGTH of them */
static int buf_arg(struct pmt_probe *p, const char *x, struct pmt_print_arg *a,
		   struct pmt_exprs *mine, const struct pmt_typesys *types, struct pmt_error *err)
{
	char inner[512], *len;
	struct pmt_opinfo info;
	int slot;

	if (!call_args(x, "buf", inner, sizeof(inner), &len))
		return 1;
	if (!len)
		return pmt_error__usage(err, "printf's %s: buf(ADDRESS, LENGTH) (in %s)", x,
					p->name);
	if (pmt_expr__compile(mine, len, p->fmt, p->name, "printf", types, &info, err))
		return -EINVAL;
	if (info.is_str)
		return pmt_error__usage(err, "printf's %s: buf()'s length is a number (in %s)", x,
					p->name);
	if ((slot = num_slot(p, len, &info.o, err)) < 0)
		return slot;
	a->len_slot = (uint8_t)(slot + 1);
	return bytes_arg(p, x, inner, PMT_BUF_MAX, PMT_PARG_BUF, a, mine, types, err);
}

/* Argument text x of p into a. */
static int place(struct pmt_probe *p, const char *x, struct pmt_print_arg *a,
		 struct pmt_exprs *mine, const struct pmt_typesys *types,
		 const struct pmt_program *prog, bool want_str, struct pmt_error *err)
{
	struct pmt_opinfo info;
	char bare[1024];
	size_t i;
	int r;

	x = unwrapped(x, bare, sizeof(bare)); /* a $variable's value: "(comm)" */
	for (i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
		if (!strcmp(x, builtins[i].name)) {
			a->kind = (uint8_t)builtins[i].kind;
			return 0;
		}
	if ((r = choice_arg(p, x, a, mine, types, prog, want_str, err)) <= 0 ||
	    (r = literal_arg(x, a, err)) <= 0 || (r = ntop_arg(p, x, a, mine, types, err)) <= 0 ||
	    (r = buf_arg(p, x, a, mine, types, err)) <= 0 ||
	    (r = literal_call(x, "strftime", PMT_PARG_TIME, a, err)) <= 0 ||
	    (r = literal_call(x, "cat", PMT_PARG_CAT, a, err)) <= 0 ||
	    (r = table_arg(p, x, a, mine, types, prog, err)) <= 0 ||
	    (r = join_arg(p, x, a, mine, types, err)) <= 0 ||
	    (r = sym_arg(p, x, a, mine, types, err)) <= 0 ||
	    (r = probe_arg(p, x, a, mine, types, prog, err)) <= 0)
		return r;
	if (compile(p, x, &info, mine, types, want_str, err))
		return -EINVAL;
	if (record_field(&info)) {
		a->kind = PMT_PARG_FIELD;
		a->field = info.field;
		a->str = info.is_str;
	} else if (info.is_str && info.o.src != PMT_FSRC_PTR_STR) {
		return pmt_error__usage(err, "printf's %s: a string printf cannot show yet (in %s)",
					x, p->name);
	} else if (info.o.src != PMT_FSRC_PTR_STR) {
		/* a number the kernel computes */
		return slot_arg(p, x, &info.o, PMT_PARG_NUM, a, err);
	} else {
		/* a string the kernel reads (str()) */
		if (p->nstrs_print == PMT_STREAM_STRS)
			return pmt_error__usage(
				err,
				"printf's %s: a probe's printf has %u strings read by "
				"str() at most (in %s)",
				x, PMT_STREAM_STRS, p->name);
		a->kind = PMT_PARG_STR;
		a->slot = (uint8_t)p->nstrs_print;
		p->strs[p->nstrs_print++] = info.o;
	}
	return 0;
}

int pmt_probe__print(struct pmt_probe *p, const char *text, const char *bt_name,
		     struct pmt_exprs *mine, const struct pmt_typesys *types, size_t str_max,
		     const struct pmt_program *prog, struct pmt_error *err)
{
	struct pmt_printf_text t;
	struct pmt_print *pr;
	char why[256];
	int i, ret = 0;

	if (pmt_printf__split(text, "printf", &t, err))
		return -EINVAL;
	pr = p->print = calloc(1, sizeof(*pr));
	if (!pr || !(pr->probe = strdup(bt_name)) || !(pr->fmt = strdup(t.fmt.p))) {
		pmt_printf__free(&t);
		return pmt_error__runtime(err, -ENOMEM, "out of memory for --printf");
	}
	pr->len = t.fmt.len;
	pr->str_max = str_max;
	pr->nargs = pr->nall = t.nargs; /* their tfmt freed with pr */
	for (i = 0; i < t.nargs && !ret; i++) {
		pr->args[i].kind = PMT_PARG_NUM;
		ret = place(p, t.args[i], &pr->args[i], mine, types, prog,
			    pmt_print__conv(pr->fmt, pr->len, i) == 's', err);
	}
	/* each printf's end, and its condition as a number slot */
	for (i = 0; i < t.nsegs && i < PMT_PRINT_SEGS && !ret; i++) {
		pr->segs[i].fmt_end = t.segs[i].fmt_end;
		pr->segs[i].args_end = t.segs[i].args_end;
		if (t.segs[i].guard)
			ret = guard_slot(p, t.segs[i].guard, &pr->segs[i].guard, mine, types, err);
	}
	pr->nsegs = i;
	pmt_printf__free(&t);
	if (!ret && pmt_print__check(pr, why, sizeof(why)))
		ret = pmt_error__usage(err, "printf for %s: %s", p->name, why);
	if (!ret && p->print_guard_text)
		ret = guard_slot(p, p->print_guard_text, &p->print_guard, mine, types, err);
	return ret;
}
