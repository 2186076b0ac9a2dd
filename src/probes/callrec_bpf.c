// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/btf.h>
#include "util/error.h"
#include "abi.h"
#include "probes/callrec.h"
#include "probes/stackrec.h"
#include "util/strutil.h"

#define SLOT(i) ((uint32_t)((i) * sizeof(__u64)))
#define RET_OFF ((uint32_t)offsetof(struct pmt_call, ret))

static struct pmt_format *finish(struct pmt_format *f)
{
	if (f && !pmt_stackrec__add_fields(f))
		return f;
	pmt_format__free(f);
	return NULL;
}

static bool add_arg_aliases(struct pmt_format *f, int n, bool hidden)
{
	char name[16];
	int i;

	for (i = 0; i < n; i++) {
		struct pmt_field *fl;

		snprintf(name, sizeof(name), "arg%d", i);
		if (pmt_format__field(f, name))
			continue; /* a parameter has that name */
		/* signed, as retval: a register holds a C int or long as
		 * often as a pointer, and -5 must read, compare, sum and
		 * order as -5 everywhere (pointers are below 2^63 in user
		 * space; kernel ones read negative, --filter takes 0x...) */
		fl = pmt_format__add(f, name, "s64", SLOT(i), 8, PMT_F_INT);
		if (!fl)
			return false;
		fl->is_signed = true;
		fl->is_common = hidden;
	}
	return true;
}

struct pmt_format *pmt_callrec__regs_format(const char *name, bool ret)
{
	struct pmt_format *f = pmt_format__new(name, sizeof(struct pmt_call));
	struct pmt_field *fl;

	if (!f)
		return NULL;
	if (!ret) {
		if (!add_arg_aliases(f, 6, false))
			goto nomem;
	} else {
		/* signed: errors are negative */
		if (!(fl = pmt_format__add(f, "retval", "s64", RET_OFF, 8, PMT_F_INT)))
			goto nomem;
		fl->is_signed = true;
	}
	return finish(f);
nomem:
	pmt_format__free(f);
	return NULL;
}

/* C spelling of a BTF type, e.g. "const char *", "struct file *". */
static void type_name(const struct btf *btf, __u32 id, struct pmt_buf *b, int depth)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	const char *n;

	if (!t || depth > 8 || !id) {
		pmt_buf__puts(b, "void");
		return;
	}
	n = btf__name_by_offset(btf, t->name_off);
	switch (btf_kind(t)) {
	case BTF_KIND_PTR:
		type_name(btf, t->type, b, depth + 1);
		pmt_buf__puts(b, " *");
		return;
	case BTF_KIND_CONST:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
		if (btf_kind(t) == BTF_KIND_CONST)
			pmt_buf__puts(b, "const ");
		type_name(btf, t->type, b, depth + 1);
		return;
	case BTF_KIND_STRUCT: pmt_buf__printf(b, "struct %s", n); return;
	case BTF_KIND_UNION: pmt_buf__printf(b, "union %s", n); return;
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64: pmt_buf__printf(b, "enum %s", n); return;
	case BTF_KIND_FUNC_PROTO: pmt_buf__puts(b, "void (*)()"); return;
	default: pmt_buf__puts(b, n && *n ? n : "?");
	}
}

/* How a value of type id sits in its slot(s): kind, size, sign, slots. */
static int classify(const struct btf *btf, __u32 id, enum pmt_field_kind *kind, uint32_t *size,
		    bool *is_signed)
{
	const struct btf_type *t = btf__type_by_id(
		btf, btf__resolve_type(btf, id) > 0 ? (__u32)btf__resolve_type(btf, id) : id);
	__s64 sz;

	*kind = PMT_F_INT;
	*is_signed = false;
	*size = 8;
	if (!t)
		return 1;
	switch (btf_kind(t)) {
	case BTF_KIND_PTR: *kind = PMT_F_PTR; return 1;
	case BTF_KIND_INT:
		*size = t->size;
		*is_signed = btf_int_encoding(t) & BTF_INT_SIGNED;
		return *size <= 8 ? 1 : 2;
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		*size = t->size;
		*is_signed = btf_kflag(t);
		return 1;
	default:
		/* structs by value: as many slots as 8-byte words, no field */
		sz = btf__resolve_size(btf, id);
		*size = 0;
		return sz > 8 ? 2 : 1;
	}
}

static struct pmt_field *add_typed(struct pmt_format *f, const struct btf *btf, __u32 type,
				   const char *name, uint32_t off, int *slots)
{
	struct pmt_buf tn = {0};
	enum pmt_field_kind kind;
	struct pmt_field *fl;
	uint32_t size;
	bool sign;

	*slots = classify(btf, type, &kind, &size, &sign);
	if (!size || *slots > 1)
		return (struct pmt_field *)f; /* not shown, not an error */
	type_name(btf, type, &tn, 0);
	fl = pmt_format__add(f, name, pmt_buf__cstr(&tn), off, size, kind);
	pmt_buf__free(&tn);
	if (fl) {
		fl->is_signed = sign;
		fl->btf_type = (int)type;
	}
	return fl;
}

/* The parameters of BTF prototype proto past the first skip, one slot
 * each (tracepoints pass each argument as a u64) or as many as their
 * size takes (fentry's slots). */
static struct pmt_format *proto_format(const char *name, const struct btf *btf,
				       const struct btf_type *proto, int skip, bool one_slot,
				       bool ret, struct pmt_error *err)
{
	const struct btf_param *prm;
	struct pmt_format *f;
	int i, n, slot = 0, used;

	if (!proto || !btf_is_func_proto(proto)) {
		pmt_error__usage(err, "%s: no function prototype in BTF", name);
		return NULL;
	}
	f = pmt_format__new(name, sizeof(struct pmt_call));
	if (!f)
		return NULL;
	prm = btf_params(proto);
	n = btf_vlen(proto);
	for (i = skip; i < n && slot < PMT_CALL_SLOTS; i++, slot += one_slot ? 1 : used) {
		const char *pn = btf__name_by_offset(btf, prm[i].name_off);
		char alias[16];

		if (!prm[i].type)
			break; /* varargs */
		snprintf(alias, sizeof(alias), "arg%d", slot);
		if (!add_typed(f, btf, prm[i].type, pn && *pn ? pn : alias, SLOT(slot), &used))
			goto nomem;
	}
	if (!add_arg_aliases(f, slot < 6 ? slot : 6, true))
		goto nomem;
	if (ret && proto->type && !add_typed(f, btf, proto->type, "retval", RET_OFF, &used))
		goto nomem;
	return finish(f);
nomem:
	pmt_format__free(f);
	return NULL;
}

struct pmt_format *pmt_callrec__btf_format(const char *name, const struct btf *btf, int func_id,
					   bool ret, struct pmt_error *err)
{
	const struct btf_type *fn = btf__type_by_id(btf, (__u32)func_id);

	return proto_format(name, btf, fn ? btf__type_by_id(btf, fn->type) : NULL, 0, false, ret,
			    err);
}

struct pmt_format *pmt_callrec__rawtp_format(const char *name, const struct btf *btf, int proto_id,
					     struct pmt_error *err)
{
	return proto_format(name, btf, btf__type_by_id(btf, (__u32)proto_id), 1, true, false, err);
}
