// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What each probe puts in the key and value of the aggregation maps, from
 * the options and the probe's record format; and how large the maps are.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "aggregate/aggregate_internal.h"
#include "probes/stackrec.h"
#include "filter/expr.h"
#include "filter/operand.h"
#include "util/log.h"

/* --- compiling ----------------------------------------------------------- */

/* A str() key part's bytes: --str-len in whole words, or a char array
 * member's length where shorter (curtask->comm: 16) */
static uint8_t pmt_key_pstr_len(const struct pmt_agg_opts *o, const struct pmt_operand *op)
{
	int n = o->str_len > 0 ? o->str_len : PMT_DEFAULT_STR_LEN;

	if ((op->flags & PMT_FFLAG_XADDR) && op->size && op->size < n)
		n = op->size;
	return (uint8_t)((n + 7) & ~7);
}

static int resolve_num(struct pmt_error *err, struct pmt_agg_probe *p, const char *name,
		       const char *what, struct pmt_operand *o, bool *is_signed)
{
	struct pmt_opinfo info;
	struct pmt_buf b = {0};
	int r = pmt_operand__resolve(p->fmt, name, &info);

	if (!r && !info.is_str) {
		*o = info.o;
		if (is_signed)
			*is_signed = info.is_signed;
		return 0;
	}
	if (!r)
		pmt_error__usage(err, "%s: '%s' is a string: %s needs a number", p->name, name,
				 what);
	else if (r == PMT_OPERAND_ARRAY)
		pmt_error__usage(err, "%s: '%s' is an array: %s needs a number", p->name, name,
				 what);
	else if (r == PMT_OPERAND_NOT_PTR) {
		pmt_operand__not_ptr(&b, name, &info);
		pmt_error__usage(err, "%s: %s", p->name, pmt_buf__cstr(&b));
		pmt_buf__free(&b);
		return -EINVAL;
	} else
		pmt_error__usage(err, "%s: unknown field '%s' in %s", p->name, name, what);
	pmt_operand__hint(&b, p->fmt, p->name, r == PMT_OPERAND_UNKNOWN ? name : NULL);
	pmt_error__hint(err, "%s", pmt_buf__cstr(&b));
	pmt_buf__free(&b);
	return -EINVAL;
}

/* FIELD [ ('*'|'/') NUMBER ]: a scale done without the expression
 * machine (and as C would do it: a division truncates toward 0) */
static bool is_scaled_field(const char *expr)
{
	size_t n = strcspn(expr, "*/ "), i;
	const char *rest = expr + n;
	uint64_t k;

	for (i = 0; i < n; i++)
		if (!(expr[i] == '_' || (expr[i] >= 'a' && expr[i] <= 'z') ||
		      (expr[i] >= 'A' && expr[i] <= 'Z') ||
		      (i && expr[i] >= '0' && expr[i] <= '9')))
			return false;
	while (*rest == ' ')
		rest++;
	if (!n || !*rest)
		return n > 0;
	if (*rest != '*' && *rest != '/')
		return false;
	for (rest++; *rest == ' '; rest++)
		;
	return !pmt_parse_u64(rest, &k) && k;
}

/* The aggregated value: FIELD, FIELD*N, FIELD/N, or any expression */
static int compile_value(struct pmt_agg *ag, struct pmt_agg_probe *p, const char *expr,
			 struct pmt_agg_cfg *a, bool *is_signed)
{
	struct pmt_error *err = ag->err;
	char name[128];
	size_t n = strcspn(expr, "*/ ");
	const char *rest = expr + n;
	uint64_t k = 0;

	if (!is_scaled_field(expr) && pmt_expr__is_expression(expr)) {
		struct pmt_opinfo info;
		char opt[32];

		snprintf(opt, sizeof(opt), "--%s", pmt_agg_fn__name(ag->opts->fn));
		if (pmt_expr__compile(ag->probe_exprs, expr, p->fmt, p->name, opt, ag->types, &info,
				      err))
			return -EINVAL;
		if (info.is_str)
			return pmt_error__usage(err, "%s: '%s' is a string: %s needs a number",
						p->name, expr, opt);
		a->value = info.o;
		*is_signed = info.is_signed;
		return 0;
	}

	if (n == 0 || n >= sizeof(name)) {
		return pmt_error__usage(
			err, "'%s': expected FIELD, FIELD/N or FIELD*N, e.g. len/1024", expr);
	}
	memcpy(name, expr, n);
	name[n] = '\0';
	while (*rest == ' ')
		rest++;
	if (*rest) {
		/* FIELD*N or FIELD/N, N > 0: is_scaled_field said so */
		a->scale = *rest == '*' ? PMT_SCALE_MUL : PMT_SCALE_DIV;
		for (rest++; *rest == ' '; rest++)
			;
		pmt_parse_u64(rest, &k);
		a->k = k;
	}
	return resolve_num(err, p, name, "the aggregated value", &a->value, is_signed);
}

/* A --by name as key parts: sample keys of PMU events expand to fields
 * of struct pmt_sample shown another way (see enum pmt_key_disp). */
struct key_spec {
	const char *name;  /* shown */
	const char *field; /* resolved */
	uint8_t disp;
};

/* "stack" is the user and the kernel stack, or the one --stack (asked)
 * names alone. */
static int expand_key(const char *name, const struct pmt_format *fmt, uint8_t asked,
		      struct key_spec *out, char *inner, size_t inner_len)
{
	bool stacks = pmt_stackrec__has(fmt);

	/* ntop(F): an IPv4 address (4 bytes, as the kernel keeps it) */
	if (pmt_operand__call_arg(name, "ntop", inner, inner_len)) {
		out[0] = (struct key_spec){name, inner, PMT_DISP_NTOP};
		return 1;
	}
	/* usym(E), ksym(E): the value named as the symbol at that address
	 * (in the process the pid before it names; kernel addresses in the
	 * kernel), as "sym" names a sample's ip */
	if (pmt_operand__call_arg(name, "usym", inner, inner_len) ||
	    pmt_operand__call_arg(name, "ksym", inner, inner_len)) {
		out[0] = (struct key_spec){"", "pid", PMT_DISP_HIDDEN};
		out[1] = (struct key_spec){name, inner, PMT_DISP_SYM};
		return 2;
	}
	/* a cgroup by its path, or by what the path names (unless the
	 * event has a field of that name) */
	if ((!strcmp(name, "cgroup") || !strcmp(name, "container") || !strcmp(name, "unit")) &&
	    !(fmt && pmt_format__field(fmt, name))) {
		out[0] = (struct key_spec){name, "cgroup",
					   name[1] == 'g'   ? PMT_DISP_CGROUP
					   : name[0] == 'c' ? PMT_DISP_CONTAINER
							    : PMT_DISP_UNIT};
		return 1;
	}
	/* bpftrace's func: the probe's function, keyed by the probe */
	if (!strcmp(name, "func") && !(fmt && pmt_format__field(fmt, name))) {
		out[0] = (struct key_spec){name, "probe", PMT_DISP_FUNC};
		return 1;
	}
	if (stacks && pmt_format__field(fmt, "ip") && !strcmp(name, "sym")) {
		out[0] = (struct key_spec){"", "pid", PMT_DISP_HIDDEN};
		out[1] = (struct key_spec){name, "ip", PMT_DISP_SYM};
		return 2;
	}
	if (stacks && !strcmp(name, "stack") && asked == PMT_STACK_USER) {
		out[0] = (struct key_spec){name, "ustack", PMT_DISP_USTACK};
		return 1;
	}
	if (stacks && !strcmp(name, "stack") && asked == PMT_STACK_KERNEL) {
		out[0] = (struct key_spec){name, "kstack", PMT_DISP_KSTACK};
		return 1;
	}
	if (stacks && !strcmp(name, "stack")) {
		out[0] = (struct key_spec){name, "ustack", PMT_DISP_USTACK};
		out[1] = (struct key_spec){"", "kstack", PMT_DISP_KSTACK};
		return 2;
	}
	out[0] = (struct key_spec){name, name, PMT_DISP_PLAIN};
	if (stacks && !strcmp(name, "kstack"))
		out[0].disp = PMT_DISP_KSTACK;
	else if (stacks && !strcmp(name, "ustack"))
		out[0].disp = PMT_DISP_USTACK;
	return 1;
}

/* ntop(F): F a 4-byte array (__u8 daddr[4]) or a 4-byte number (an
 * expression too): its bytes as they lie in memory, an IPv4 address; a
 * 16-byte array (__u8 daddr_v6[16]): an IPv6 address */
static int ntop_operand(struct pmt_agg *ag, struct pmt_agg_probe *p, const struct key_spec *spec,
			struct pmt_opinfo *info)
{
	const struct pmt_field *f = p->fmt ? pmt_format__field(p->fmt, spec->field) : NULL;

	if (f && (f->kind == PMT_F_ARRAY || f->kind == PMT_F_INT) && f->size == 4) {
		memset(info, 0, sizeof(*info));
		info->o.src = PMT_FSRC_FIELD;
		info->o.size = 4;
		info->o.off = (uint16_t)f->offset;
		return PMT_KEY_NUM;
	}
	if (f && f->kind == PMT_F_ARRAY && f->size == 16) {
		memset(info, 0, sizeof(*info));
		info->o.src = PMT_FSRC_FIELD;
		info->o.size = 8;
		info->o.off = (uint16_t)f->offset;
		return PMT_KEY_ADDR6;
	}
	if (f)
		return pmt_error__usage(
			ag->err,
			"--by %s: ntop() shows an IPv4 address (4 bytes) or an IPv6 "
			"one (16): '%s' is %s (%u bytes)",
			spec->name, spec->field, f->type, f->size);
	if (!pmt_expr__compile(ag->probe_exprs, spec->field, p->fmt, p->name, "--by", ag->types,
			       info, ag->err) &&
	    !info->is_str)
		return PMT_KEY_NUM;
	if (!pmt_error__set(ag->err))
		pmt_error__usage(ag->err, "--by %s: ntop() shows an IPv4 address, not a string",
				 spec->name);
	return -EINVAL;
}

/* The kind of a key part (enum pmt_key_kind), its operand in *info;
 * -EINVAL with the error set for a name probe p has not. */
static int key_kind(struct pmt_agg *ag, struct pmt_agg_probe *p, const struct key_spec *spec,
		    struct pmt_opinfo *info)
{
	bool stacks = pmt_stackrec__has(p->fmt);
	struct pmt_buf b = {0};
	int r;

	if (!strcmp(spec->field, "probe"))
		return PMT_KEY_PROBE;
	if (spec->disp == PMT_DISP_COUNTER)
		return PMT_KEY_COUNTER;
	if (spec->disp == PMT_DISP_NTOP)
		return ntop_operand(ag, p, spec, info);
	if (pmt_expr__is_expression(spec->field))
		return pmt_expr__compile(ag->probe_exprs, spec->field, p->fmt, p->name, "--by",
					 ag->types, info, ag->err)
			       ? -EINVAL
		       : info->is_str ? PMT_KEY_STRING
				      : PMT_KEY_NUM;
	r = pmt_operand__resolve(p->fmt, spec->field, info);
	if (!r)
		return info->is_str ? PMT_KEY_STRING : PMT_KEY_NUM;
	if (r == PMT_OPERAND_NOT_PTR) {
		pmt_operand__not_ptr(&b, spec->field, info);
		pmt_error__usage(ag->err, "--by: %s", pmt_buf__cstr(&b));
		pmt_buf__free(&b);
		return -EINVAL;
	}
	pmt_error__usage(ag->err, "--by: %s '%s' for %s",
			 r == PMT_OPERAND_ARRAY ? "cannot key by the array" : "unknown key",
			 spec->field, p->name);
	pmt_operand__hint(&b, p->fmt, p->name, r == PMT_OPERAND_UNKNOWN ? spec->field : NULL);
	pmt_error__hint(ag->err, "%s; and 'probe'%s", pmt_buf__cstr(&b),
			!stacks				  ? ""
			: pmt_format__field(p->fmt, "ip") ? ", sym, kstack, ustack, stack"
							  : ", kstack, ustack, stack");
	pmt_buf__free(&b);
	return -EINVAL;
}

/* Key part i of probe p (--by word tok) at byte *at: the first probe fixes
 * each part's kind, display and place; the others must agree. */
static int compile_key_part(struct pmt_agg *ag, struct pmt_agg_probe *p, uint8_t *stack, int i,
			    int *at, const char *tok, const struct key_spec *spec)
{
	struct pmt_agg_cfg *a = &p->cfg;
	struct pmt_keylayout *kl = &ag->keys;
	struct pmt_opinfo info = {0};
	uint8_t kind;
	int ret;

	if (i >= PMT_AGG_KEYS) {
		return pmt_error__usage(ag->err,
					"--by: at most %d keys (sym and stack count as two)",
					PMT_AGG_KEYS);
	}
	if ((ret = key_kind(ag, p, spec, &info)) < 0)
		return ret;
	kind = (uint8_t)ret;
	if (kl->n > i && (kl->kind[i] != kind || kl->disp[i] != spec->disp)) {
		return pmt_error__usage(ag->err,
					"--by %s: means different things for different probes (%s)",
					tok, p->name);
	}
	if (kl->n <= i) {
		kl->names[i] = strdup(spec->name);
		kl->kind[i] = kind;
		kl->disp[i] = spec->disp;
		kl->at[i] = (uint8_t)*at;
		kl->is_signed[i] = info.is_signed;
		kl->n = i + 1;
	}
	if (spec->disp == PMT_DISP_KSTACK)
		*stack |= PMT_STACK_KERNEL;
	if (spec->disp == PMT_DISP_USTACK)
		*stack |= PMT_STACK_USER;
	a->keys[i].o = info.o;
	a->keys[i].kind = kind;
	a->keys[i].at = (uint8_t)*at;
	if (pmt_exprs__needs_record(ag->probe_exprs, &info.o))
		a->needs_record = 1;
	/* strings: their own size (comm 16), at most PMT_KEY_STR */
	a->keys[i].len = kind == PMT_KEY_ADDR6		  ? 16
			 : kind != PMT_KEY_STRING	  ? 8
			 : info.o.src == PMT_FSRC_PTR_STR ? pmt_key_pstr_len(ag->opts, &info.o)
			 : info.o.src == PMT_FSRC_FIELD_DSTR || info.o.size > PMT_KEY_STR
				 ? PMT_KEY_STR
				 : (uint8_t)((info.o.size + 7) & ~7);
	if (kl->n > i && kl->at[i] != *at) {
		return pmt_error__usage(ag->err, "--by %s: differs in size between probes (%s)",
					tok, p->name);
	}
	if (kl->n == i + 1 && !kl->len[i])
		kl->len[i] = a->keys[i].len;
	*at += a->keys[i].len;
	if (*at > ag->key_bytes)
		ag->key_bytes = *at;
	if (*at > PMT_KEY_MAX) {
		return pmt_error__usage(
			ag->err,
			"--by %s: keys too large: at most %d bytes (strings take %d, numbers 8)",
			ag->opts->by, PMT_KEY_MAX, PMT_KEY_STR);
	}
	return 0;
}

/* --by: each word is one or two key parts (see expand_key). */
/* Is s, after a map's name, its key alone ("[K]" or nothing), no more
 * of an expression? */
static bool read_alone(const char *s)
{
	int depth = 0;

	if (*s == '[')
		for (; *s; s++)
			if (!(depth += (*s == '[') - (*s == ']')))
				break;
	s += *s == ']';
	return !s[strspn(s, " ")];
}

/* A key read from a program's map saving func or probe (@f[tid]): the
 * session's probe id, shown by its function or name (1 spec); 0 if tok
 * is none */
static int saved_probe_key(const struct pmt_agg_opts *ao, const char *tok, struct key_spec *out)
{
	char name[64];
	size_t n;

	while (*tok == ' ')
		tok++;
	if (tok[0] != '@')
		return 0;
	n = strcspn(tok + 1, "[ ");
	if (n >= sizeof(name) || !read_alone(tok + 1 + n))
		return 0;
	snprintf(name, sizeof(name), "%.*s", (int)n, tok + 1);
	if (pmt_words__has(ao->func_maps, name))
		out[0] = (struct key_spec){tok, tok, PMT_DISP_FUNC_OF};
	else if (pmt_words__has(ao->kstack_maps, name))
		out[0] = (struct key_spec){tok, tok, PMT_DISP_KSTACK};
	else if (pmt_words__has(ao->probe_maps, name))
		out[0] = (struct key_spec){tok, tok, PMT_DISP_PROBE_OF};
	else
		return 0;
	return 1;
}

/* The next of the keys at *s, "A,B[C,D],(E,F)": up to a comma outside
 * brackets and strings, cut there (*s past it); NULL after the last */
static char *next_key(char **s)
{
	char *tok = *s, *c;
	int depth = 0;
	bool quoted = false;

	if (!tok)
		return NULL;
	for (c = tok; *c; c++) {
		if (*c == '"' && (c == tok || c[-1] != '\\'))
			quoted = !quoted;
		else if (!quoted && (*c == '(' || *c == '['))
			depth++;
		else if (!quoted && (*c == ')' || *c == ']'))
			depth--;
		else if (!quoted && !depth && *c == ',')
			break;
	}
	*s = *c ? c + 1 : NULL;
	*c = '\0';
	return tok;
}

static int compile_keys(struct pmt_agg *ag, struct pmt_agg_probe *p, uint8_t *stack)
{
	struct pmt_agg_cfg *a = &p->cfg;
	char *copy, *tok, *save = NULL, inner[128];
	int i = 0, at = 0, ret = 0, nspec, j;
	struct key_spec specs[2];
	uint8_t asked = *stack;

	/* several --counter: which one leads the key */
	if (ag->opts->ncounters > 1) {
		const struct key_spec cs = {"counter", "counter", PMT_DISP_COUNTER};

		if ((ret = compile_key_part(ag, p, stack, i, &at, "counter", &cs)))
			return ret;
		a->nkeys = (uint8_t)++i;
	}
	if (!(p->by ? p->by : ag->opts->by))
		return 0;
	copy = strdup(p->by ? p->by : ag->opts->by);
	if (!copy)
		return pmt_error__runtime(ag->err, -ENOMEM, "out of memory for the aggregation");
	for (save = copy; (tok = next_key(&save)) && !ret;) {
		nspec = saved_probe_key(ag->opts, tok, specs);
		if (!nspec)
			nspec = expand_key(tok, p->fmt, asked, specs, inner, sizeof(inner));
		for (j = 0; j < nspec && !ret; j++)
			if (!(ret = compile_key_part(ag, p, stack, i, &at, tok, &specs[j])))
				i++;
	}
	a->nkeys = (uint8_t)i;
	free(copy);
	return ret;
}

static uint32_t unit_div(const char *unit)
{
	if (!unit || !strcmp(unit, "us"))
		return 1000;
	if (!strcmp(unit, "ns"))
		return 1;
	if (!strcmp(unit, "ms"))
		return 1000000;
	return 1000000000;
}

/* A program's update inside an if: its condition into a->match, the
 * guard (PMT_ACT_AGG updates only where it is non-zero) */
static int compile_guard(struct pmt_agg *ag, struct pmt_agg_probe *p, struct pmt_agg_cfg *a)
{
	struct pmt_opinfo info;

	if (pmt_expr__compile(ag->probe_exprs, p->guard, p->fmt, p->name, "if", ag->types, &info,
			      ag->err))
		return -EINVAL;
	if (info.is_str)
		return pmt_error__usage(ag->err, "%s: if (%s): a string, not a condition", p->name,
					p->guard);
	a->match = info.o;
	a->guarded = 1;
	return 0;
}

/* One probe's value, match and keys. */
static int compile_probe(struct pmt_agg *ag, struct pmt_agg_probe *p, size_t i, uint8_t *stack)
{
	static const uint8_t kinds[] = {
		[PMT_FN_COUNT] = PMT_AGG_COUNT, [PMT_FN_SUM] = PMT_AGG_VALUE,
		[PMT_FN_AVG] = PMT_AGG_VALUE,	[PMT_FN_MIN] = PMT_AGG_VALUE,
		[PMT_FN_MAX] = PMT_AGG_VALUE,	[PMT_FN_STATS] = PMT_AGG_VALUE,
		[PMT_FN_HIST] = PMT_AGG_HIST,	[PMT_FN_LHIST] = PMT_AGG_LHIST,
	};
	const struct pmt_agg_opts *ao = ag->opts;
	struct pmt_agg_cfg *a = &p->cfg;
	char sf[128] = "", *ef = NULL;

	if (ao->match) {
		snprintf(sf, sizeof(sf), "%s", ao->match);
		ef = strchr(sf, '=');
		*ef++ = '\0';
	}
	memset(a, 0, sizeof(*a));
	a->kind = kinds[ao->fn];
	p->action = PMT_ACT_AGG;
	if (ao->lat_start) {
		/* probe 0 starts, probe 1 ends (see pmt_session__resolve) */
		p->action = i == 0 ? PMT_ACT_LAT_START : PMT_ACT_LAT_END;
		/* a counter's deltas are counts: no unit */
		a->lat_div = ag->lat_unit_ns = ao->counter ? 1 : unit_div(ao->unit);
		if (ao->counter)
			ag->lat_unit_ns = 0;
		if (ef ? resolve_num(ag->err, p, i == 0 ? sf : ef, "--match", &a->match, NULL) : 0)
			return -EINVAL;
		if (!ef)
			a->match.src = PMT_FSRC_TID;
	} else if (p->expr || ao->expr) {
		bool is_signed = false;

		if (compile_value(ag, p, p->expr ? p->expr : ao->expr, a, &is_signed))
			return -EINVAL;
		ag->value_signed |= is_signed;
	}
	if (p->guard && !ao->lat_start && compile_guard(ag, p, a))
		return -EINVAL;
	if (ao->fn == PMT_FN_LHIST) {
		a->lmin = ao->lmin;
		a->lstep = ao->lstep;
		a->lbuckets = ao->lbuckets;
	}
	/* latency keys come from the end event, the start keeping none; or
	 * from the start (keys_at_start), the end then keeping none */
	if ((ag->lat_start_keys ? p->action == PMT_ACT_LAT_START
				: p->action != PMT_ACT_LAT_START) &&
	    compile_keys(ag, p, stack))
		return -EINVAL;
	if (pmt_exprs__needs_record(ag->probe_exprs, &a->value) && a->kind != PMT_AGG_COUNT &&
	    !ao->lat_start)
		a->needs_record = 1;
	if ((ao->lat_start && pmt_operand__needs_record(&a->match)) ||
	    (a->guarded && pmt_exprs__needs_record(ag->probe_exprs, &a->match)))
		a->needs_record = 1;
	return 0;
}

/* Is an identifier at s a member's name (after '.' or "->")? */
static bool member_name(const char *by, const char *s)
{
	while (s > by && (s[-1] == ' ' || s[-1] == '\t'))
		s--;
	return s > by && (s[-1] == '.' || (s[-1] == '>' && s - 1 > by && s[-2] == '-'));
}

/* --latency: are its keys the start's? When a key names a field the end
 * event lacks and the start has (a function's arguments, gone at its
 * return: gethostlatency's host), the start builds the key and the end
 * adds its time to that key. */
static bool keys_at_start(const struct pmt_agg_opts *ao, const struct pmt_agg_probe *probes,
			  size_t n)
{
	const char *s = ao->by;
	char id[64];
	size_t len;

	if (!ao->lat_start || n != 2 || !s)
		return false;
	while (*s) {
		if (*s == '"') { /* a literal: kaddr("avenrun") */
			s += 1 + strcspn(s + 1, "\"");
			s += *s == '"';
			continue;
		}
		len = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789");
		if (!len) {
			s++;
			continue;
		}
		snprintf(id, sizeof(id), "%.*s", (int)len, s);
		if (!(id[0] >= '0' && id[0] <= '9') && !member_name(ao->by, s) &&
		    !pmt_format__field(probes[1].fmt, id) && pmt_format__field(probes[0].fmt, id))
			return true;
		s += len;
	}
	return false;
}

/* Probe p's keys and value, its expressions made one program of the
 * session's (abi/expr.h) */
static int compile_probe_exprs(struct pmt_agg *ag, struct pmt_agg_probe *p, size_t i,
			       uint8_t *stack)
{
	struct pmt_agg_cfg *a = &p->cfg;
	struct pmt_operand *ops[PMT_AGG_KEYS + 2];
	struct pmt_exprs mine = {.vars = ag->exprs->vars};
	size_t n = 0, k;
	int r;

	ag->probe_exprs = &mine;
	r = compile_probe(ag, p, i, stack);
	ag->probe_exprs = NULL;
	a->xprog = PMT_XPROG_NONE;
	if (!r && mine.n) {
		ops[n++] = &a->value;
		ops[n++] = &a->match; /* a guard's */
		for (k = 0; k < a->nkeys && k < PMT_AGG_KEYS; k++)
			ops[n++] = &a->keys[k].o;
		r = pmt_exprs__program(ag->exprs, &mine, ops, n, &a->xprog, p->name, ag->err);
	}
	pmt_exprs__free(&mine);
	return r;
}

bool pmt_agg__has_stack_key(const struct pmt_agg *a)
{
	int i;

	for (i = 0; i < a->keys.n; i++)
		if (a->keys.disp[i] == PMT_DISP_KSTACK || a->keys.disp[i] == PMT_DISP_USTACK)
			return true;
	return false;
}

bool pmt_agg__names_in_process(const struct pmt_agg *a)
{
	int i;

	for (i = 0; i < a->keys.n; i++)
		if (a->keys.disp[i] == PMT_DISP_SYM)
			return true;
	return false;
}

int pmt_agg__compile(const struct pmt_agg_opts *ao, struct pmt_agg_probe *probes, size_t n,
		     struct pmt_exprs *exprs, uint8_t *stack, struct pmt_agg **out,
		     struct pmt_error *err)
{
	struct pmt_agg *ag;
	size_t i;

	*out = NULL;
	if (!ao->fn)
		return 0;
	ag = calloc(1, sizeof(*ag));
	if (!ag)
		return pmt_error__runtime(err, -ENOMEM, "out of memory for the aggregation");
	ag->opts = ao;
	ag->err = err;
	ag->exprs = exprs;
	ag->types = exprs ? exprs->types : NULL;
	ag->probe_names = calloc(n ? n : 1, sizeof(*ag->probe_names));
	ag->probe_keys = calloc(n ? n : 1, sizeof(*ag->probe_keys));
	if (!ag->probe_names || !ag->probe_keys)
		goto nomem;
	ag->lat_start_keys = keys_at_start(ao, probes, n);
	if (ag->lat_start_keys && ao->counter) {
		pmt_error__usage(err,
				 "--by '%s': a key of the start event's (the end has no such "
				 "field) goes with --latency's times, not yet with --counter",
				 ao->by);
		pmt_agg__free(ag);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		ag->probe_names[i] = strdup(probes[i].name);
		ag->probe_keys[i] = strdup(probes[i].probe ? probes[i].probe : probes[i].name);
		ag->nprobes++;
		if (!ag->probe_names[i] || !ag->probe_keys[i])
			goto nomem;
		if (compile_probe_exprs(ag, &probes[i], i, stack)) {
			pmt_agg__free(ag);
			return -EINVAL;
		}
	}
	if (ao->pprof && !pmt_agg__has_stack_key(ag)) {
		pmt_error__usage(
			err,
			"--pprof writes stacks: --by needs stack, ustack or kstack (it is '%s')",
			ao->by ? ao->by : "");
		pmt_agg__free(ag);
		return -EINVAL;
	}
	/* no keys: a per-CPU array slot per bucket (+1: bucket -1 is slot 0) */
	if (!ag->key_bytes && n)
		ag->flat_slots = ao->fn == PMT_FN_HIST	  ? 66
				 : ao->fn == PMT_FN_LHIST ? ao->lbuckets + 2
							  : 2;
	pmt_agg__sinks(ag);
	ag->err = NULL;
	ag->exprs = NULL;
	*out = ag;
	return 0;
nomem:
	pmt_agg__free(ag);
	return pmt_error__runtime(err, -ENOMEM, "out of memory for the aggregation");
}

int pmt_agg__add_map(struct pmt_agg *a, struct pmt_agg *map)
{
	if (a->nmore + 1 >= PMT_AGG_MAPS)
		return -ENOSPC;
	a->more[a->nmore++] = map;
	a->flat_slots = map->flat_slots = 0;
	return (int)a->nmore;
}

void pmt_agg__name_probes(struct pmt_agg *a, pmt_agg_probe_name_fn *fn, const void *ctx)
{
	size_t i;

	for (i = 0; a && i <= a->nmore; i++) {
		struct pmt_agg *m = i ? a->more[i - 1] : a;

		m->probe_name = fn;
		m->probe_ctx = ctx;
	}
}

size_t pmt_agg__nmaps(const struct pmt_agg *a)
{
	return a ? 1 + a->nmore : 0;
}

const char *pmt_agg__map_name(const struct pmt_agg *a, size_t index)
{
	if (!a || index > a->nmore)
		return NULL;
	return (index ? a->more[index - 1] : a)->opts->map;
}

void pmt_agg__maps(const struct pmt_agg *a, struct pmt_agg_maps *m)
{
	size_t i;

	memset(m, 0, sizeof(*m));
	m->key_size = (uint32_t)offsetof(struct pmt_agg_key, data);
	if (!a)
		return;
	m->key_size += (uint32_t)a->key_bytes;
	for (i = 0; i < a->nmore; i++)
		if (offsetof(struct pmt_agg_key, data) + (uint32_t)a->more[i]->key_bytes >
		    m->key_size)
			m->key_size = (uint32_t)(offsetof(struct pmt_agg_key, data) +
						 (uint32_t)a->more[i]->key_bytes);
	m->flat_slots = a->flat_slots;
	m->hash_entries = a->flat_slots ? 0 : (uint32_t)a->opts->max_keys;
	m->lat_entries = a->opts->lat_start ? (uint32_t)a->opts->max_keys : 0;
	m->lat_start_keys = a->lat_start_keys;
}

static uint64_t pow2_at_least(uint64_t n)
{
	uint64_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

uint32_t pmt_agg__lat_entries(const struct pmt_agg_maps *m, int cpus)
{
	uint64_t floor = (uint64_t)PMT_LAT_CPU_SHARE * (uint64_t)(cpus > 0 ? cpus : 1);

	if (!m->lat_entries)
		return 0;
	return m->lat_entries >= floor ? m->lat_entries
				       : (uint32_t)(floor < UINT32_MAX ? floor : UINT32_MAX);
}

/* The kernel preallocates every element of a hash map when it creates it:
 * an element (node, key, a pointer to its per-CPU value), the per-CPU
 * values, and a power-of-two bucket array. Measured within ~5% on 6.18
 * (4M keys of 24 bytes on 2 CPUs: 856 MB). */
uint64_t pmt_agg__kernel_bytes(const struct pmt_agg *a, int possible_cpus)
{
	struct pmt_agg_maps m;
	uint64_t bytes = 0, cpus = possible_cpus > 0 ? (uint64_t)possible_cpus : 1;

	pmt_agg__maps(a, &m);
	m.lat_entries = pmt_agg__lat_entries(&m, possible_cpus);
	if (m.hash_entries)
		bytes += (uint64_t)m.hash_entries * (64 + ((m.key_size + 7) & ~7u) +
						     cpus * (sizeof(struct pmt_agg_val) + 16)) +
			 16 * pow2_at_least(m.hash_entries);
	if (m.lat_entries)
		bytes += (uint64_t)m.lat_entries * (64 + sizeof(struct pmt_lat_key) + 8) +
			 16 * pow2_at_least(m.lat_entries);
	if (m.lat_entries && m.lat_start_keys)
		bytes += (uint64_t)m.lat_entries *
				 (64 + sizeof(struct pmt_lat_key) + sizeof(struct pmt_agg_key)) +
			 16 * pow2_at_least(m.lat_entries);
	return bytes;
}

bool pmt_agg__wants_pids(const struct pmt_agg *a)
{
	int i;

	for (i = 0; a && i < a->keys.n; i++)
		if (a->keys.disp[i] == PMT_DISP_USTACK || a->keys.disp[i] == PMT_DISP_HIDDEN)
			return true;
	return false;
}

void pmt_agg__free(struct pmt_agg *a)
{
	size_t i;

	if (!a)
		return;
	for (i = 0; i < a->nmore; i++)
		pmt_agg__free(a->more[i]);
	for (i = 0; i < (size_t)a->keys.n; i++)
		free(a->keys.names[i]);
	for (i = 0; i < a->nprobes; i++)
		free(a->probe_names[i]);
	free(a->probe_names);
	for (i = 0; a->probe_keys && i < a->nprobes; i++)
		free(a->probe_keys[i]);
	free(a->probe_keys);
	free(a);
}
