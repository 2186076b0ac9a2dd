// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>
#include "filter/operand.h"
#include "util/suggest.h"

static const struct {
	const char *name;
	enum pmt_filter_src src;
	uint8_t size;
	bool is_str;
} commons[] = {
	{"pid", PMT_FSRC_PID, 4, false},
	{"tid", PMT_FSRC_TID, 4, false},
	{"comm", PMT_FSRC_COMM, PMT_COMM_LEN, true},
	{"cpu", PMT_FSRC_CPU, 4, false},
	{"uid", PMT_FSRC_UID, 4, false},
	{"gid", PMT_FSRC_GID, 4, false},
	{"cgroup", PMT_FSRC_CGROUP, 8, false},
	{"cpid", PMT_FSRC_CPID, 4, false},
};

#define NCOMMONS (sizeof(commons) / sizeof(commons[0]))

/* Can the BPF program load the field from its context (PMT_FFLAG_CTX)? */
static bool in_ctx(const struct pmt_format *fmt, const struct pmt_field *f)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return fmt->raw_ctx && (f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8) &&
	       f->offset % f->size == 0 && f->offset >= 8 && f->offset + f->size <= PMT_CTX_DIRECT;
#else
	(void)fmt;
	(void)f;
	return false;
#endif
}

bool pmt_operand__needs_record(const struct pmt_operand *o)
{
	return ((o->src == PMT_FSRC_FIELD ||
		 (o->src == PMT_FSRC_PTR_STR && !(o->flags & PMT_FFLAG_XADDR))) &&
		!(o->flags & PMT_FFLAG_CTX)) ||
	       o->src == PMT_FSRC_FIELD_STR || o->src == PMT_FSRC_FIELD_DSTR;
}

bool pmt_operand__call_arg(const char *name, const char *fn, char *arg, size_t len)
{
	size_t n = name ? strlen(name) : 0, f = strlen(fn);

	if (n < f + 3 || strncmp(name, fn, f) || name[f] != '(' || name[n - 1] != ')' ||
	    n - f - 2 >= len)
		return false;
	memcpy(arg, name + f + 1, n - f - 2);
	arg[n - f - 2] = '\0';
	return true;
}

/* str(NAME): the string at the address field NAME holds, where the
 * probe has no field of that name itself (USDT's str(argN) are fields) */
static int resolve_ptr_str(const struct pmt_format *fmt, const char *name, struct pmt_opinfo *out)
{
	char inner[128];
	int r;

	if (!pmt_operand__call_arg(name, "str", inner, sizeof(inner)))
		return PMT_OPERAND_UNKNOWN;
	r = pmt_operand__resolve(fmt, inner, out);
	if (r)
		return r;
	if (out->is_str || !out->field || out->field->size != 8)
		return PMT_OPERAND_NOT_PTR;
	out->o.src = PMT_FSRC_PTR_STR;
	out->o.flags &= (uint8_t)~PMT_FFLAG_SIGNED;
	out->is_str = true;
	out->is_signed = false;
	return 0;
}

int pmt_operand__resolve(const struct pmt_format *fmt, const char *name, struct pmt_opinfo *out)
{
	const struct pmt_field *f = fmt ? pmt_format__field(fmt, name) : NULL;
	size_t i;

	if (!f && !strncmp(name, "str(", 4))
		return resolve_ptr_str(fmt, name, out);
	memset(out, 0, sizeof(*out));
	if (f) {
		out->field = f;
		out->o.off = (uint16_t)f->offset;
		out->o.size = (uint8_t)(f->size > 255 ? 255 : f->size);
		switch (f->kind) {
		case PMT_F_INT:
			out->is_signed = f->is_signed;
			out->o.flags = f->is_signed ? PMT_FFLAG_SIGNED : 0;
			/* fallthrough */
		case PMT_F_PTR:
			out->o.src = PMT_FSRC_FIELD;
			if (in_ctx(fmt, f))
				out->o.flags |= PMT_FFLAG_CTX;
			return 0;
		case PMT_F_STR:
			out->o.src = PMT_FSRC_FIELD_STR;
			out->is_str = true;
			return 0;
		case PMT_F_DSTR:
			out->o.src = PMT_FSRC_FIELD_DSTR;
			out->o.flags = f->rel_loc ? PMT_FFLAG_REL : 0;
			out->is_str = true;
			return 0;
		case PMT_F_ARRAY:
		case PMT_F_DARRAY: return PMT_OPERAND_ARRAY;
		}
	}
	for (i = 0; i < NCOMMONS; i++) {
		if (strcmp(name, commons[i].name))
			continue;
		out->o.src = (uint8_t)commons[i].src;
		out->o.size = commons[i].size;
		out->is_str = commons[i].is_str;
		return 0;
	}
	return PMT_OPERAND_UNKNOWN;
}

void pmt_operand__not_ptr(struct pmt_buf *b, const char *name, const struct pmt_opinfo *info)
{
	if (info->is_str)
		pmt_buf__printf(b, "%s: the field is a string already: name it without str()",
				name);
	else if (info->field)
		pmt_buf__printf(b,
				"%s: the field is %s (%u byte%s), not an address: str() reads "
				"the string an 8-byte pointer field points at",
				name, info->field->type, info->field->size,
				info->field->size == 1 ? "" : "s");
	else
		pmt_buf__printf(b,
				"%s: str() reads the string a pointer field points at, not a "
				"value every probe has",
				name);
}

void pmt_operand__hint(struct pmt_buf *b, const struct pmt_format *fmt, const char *probe,
		       const char *name)
{
	char *cands[128];
	const char *close[1];
	char inner[128];
	size_t n = 0, i;

	if (fmt && fmt->absent && name && !strcmp(name, fmt->absent)) {
		pmt_buf__printf(b, "%s has no '%s' here: %s", probe, name, fmt->absent_why);
		return;
	}
	for (i = 0; fmt && i < (size_t)fmt->nr_fields && n < 120; i++)
		if (!fmt->fields[i].is_common)
			cands[n++] = fmt->fields[i].name;
	for (i = 0; i < NCOMMONS; i++)
		cands[n++] = (char *)commons[i].name;
	/* str(F): F's close names, said as str(...) */
	if (pmt_operand__call_arg(name, "str", inner, sizeof(inner))) {
		if (pmt_suggest(inner, cands, n, close, 1))
			pmt_buf__printf(b, "did you mean str(%s)? ", close[0]);
	} else if (name && pmt_suggest(name, cands, n, close, 1))
		pmt_buf__printf(b, "did you mean %s? ", close[0]);
	pmt_buf__printf(b, "%s has:", probe);
	for (i = 0; fmt && i < (size_t)fmt->nr_fields; i++)
		if (!fmt->fields[i].is_common)
			pmt_buf__printf(b, " %s", fmt->fields[i].name);
	if (fmt)
		pmt_buf__puts(b, "; every probe has:");
	/* (cpid: a run's with a command, not a probe's) */
	for (i = 0; i < NCOMMONS; i++)
		if (commons[i].src != PMT_FSRC_CPID)
			pmt_buf__printf(b, " %s", commons[i].name);
}

void pmt_uses__operand(struct pmt_uses *u, const struct pmt_operand *o)
{
	uint32_t w = o->off / 4;

	u->srcs |= 1u << o->src;
	if (o->src == PMT_FSRC_PTR_STR && (o->flags & PMT_FFLAG_XADDR)) /* an expression's */
		u->srcs |= 1u << PMT_FSRC_EXPR;
	else if (o->src == PMT_FSRC_PTR_STR) /* the address: a FIELD's load */
		u->srcs |= 1u << PMT_FSRC_FIELD;
	if ((o->src != PMT_FSRC_FIELD && o->src != PMT_FSRC_PTR_STR) ||
	    !(o->flags & PMT_FFLAG_CTX) || w >= 32)
		return;
	u->ctx_words |= 1u << w;
	if (o->size == 8 && w + 1 < 32)
		u->ctx_words |= 1u << (w + 1);
}

void pmt_uses__add(struct pmt_uses *u, const struct pmt_filter *f, uint8_t action,
		   const struct pmt_agg_cfg *a)
{
	uint32_t i;

	for (i = 0; f && i < f->n && i < PMT_FILTER_MAX; i++) {
		pmt_uses__operand(u, &f->e[i].o);
		u->fops |= 1u << f->e[i].op;
	}
	if (action == PMT_ACT_STREAM)
		return;
	u->agg_kinds |= 1u << a->kind;
	if (action == PMT_ACT_AGG && a->kind != PMT_AGG_COUNT)
		pmt_uses__operand(u, &a->value);
	/* --latency's match key; a program's guard of its update (if) */
	if (action == PMT_ACT_LAT_START || action == PMT_ACT_LAT_END ||
	    (action == PMT_ACT_AGG && a->guarded))
		pmt_uses__operand(u, &a->match);
	for (i = 0; i < a->nkeys && i < PMT_AGG_KEYS; i++) {
		pmt_uses__operand(u, &a->keys[i].o);
		u->key_kinds |= 1u << a->keys[i].kind;
	}
	if (a->nkeys > u->nparts)
		u->nparts = a->nkeys;
}
