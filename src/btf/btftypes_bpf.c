// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kernel's types for member chains (curtask->real_parent->comm): the
 * struct pmt_typesys of filter/expr.h over the kernel's BTF, read by
 * libbpf. Offsets come from the running kernel, as CO-RE relocations
 * take theirs: one binary, every kernel's layout.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/btf.h>
#include "btf/btftypes.h"

static const struct btf_type *resolved(const struct btf *btf, int id, int *rid)
{
	int r = btf__resolve_type(btf, (__u32)id);

	if (r < 0)
		return NULL;
	*rid = r;
	return btf__type_by_id(btf, (__u32)r);
}

static int find_struct(void *ctx, const char *name, int *id)
{
	struct pmt_btftypes *t = ctx;
	int r = btf__find_by_name_kind(t->btf, name, BTF_KIND_STRUCT);

	if (r <= 0)
		return -ENOENT;
	*id = r;
	return 0;
}

static void type_name(const struct btf *btf, const struct btf_type *bt, char *out, size_t len)
{
	const char *n = btf__name_by_offset(btf, bt->name_off);

	if (btf_is_struct(bt) || btf_is_union(bt))
		snprintf(out, len, "%s %s", btf_is_struct(bt) ? "struct" : "union",
			 n && *n ? n : "(anonymous)");
	else if (btf_is_ptr(bt))
		snprintf(out, len, "a pointer");
	else if (btf_is_array(bt))
		snprintf(out, len, "an array");
	else
		snprintf(out, len, "%s", n && *n ? n : "a type without a name");
}

static int describe(void *ctx, int id, struct pmt_tinfo *out)
{
	struct pmt_btftypes *t = ctx;
	const struct btf_type *bt;
	__s64 size;
	int rid;

	memset(out, 0, sizeof(*out));
	if (!(bt = resolved(t->btf, id, &rid)))
		return -ENOENT;
	type_name(t->btf, bt, out->name, sizeof(out->name));
	size = btf__resolve_size(t->btf, (__u32)rid);
	out->size = size > 0 ? (uint32_t)size : 0;
	if (btf_is_int(bt)) {
		out->kind = PMT_TK_INT;
		out->is_signed = btf_int_encoding(bt) & BTF_INT_SIGNED;
	} else if (btf_is_enum(bt) || btf_is_enum64(bt)) {
		out->kind = PMT_TK_INT;
		out->is_signed = btf_kflag(bt);
	} else if (btf_is_ptr(bt)) {
		out->kind = PMT_TK_PTR;
		out->size = 8;
		out->target = (int)bt->type;
	} else if (btf_is_struct(bt) || btf_is_union(bt)) {
		out->kind = PMT_TK_STRUCT;
	} else if (btf_is_array(bt)) {
		out->kind = PMT_TK_ARRAY;
		out->target = (int)btf_array(bt)->type;
		out->nelem = btf_array(bt)->nelems;
	}
	return 0;
}

/* member name of struct or union id, anonymous members searched; its
 * offset added to base */
static int find_member(const struct btf *btf, int id, const char *name, uint32_t base,
		       uint32_t *off, int *type, int depth)
{
	const struct btf_type *bt;
	const struct btf_member *m;
	int rid, i, r;

	if (depth > 8 || !(bt = resolved(btf, id, &rid)) || !btf_is_composite(bt))
		return -ENOENT;
	m = btf_members(bt);
	for (i = 0; i < btf_vlen(bt); i++, m++) {
		const char *n = btf__name_by_offset(btf, m->name_off);
		uint32_t at = base + btf_member_bit_offset(bt, (__u32)i) / 8;

		if (n && *n && !strcmp(n, name)) {
			if (btf_member_bitfield_size(bt, (__u32)i))
				return -EOPNOTSUPP;
			*off = at;
			*type = (int)m->type;
			return 0;
		}
		if ((!n || !*n) &&
		    (r = find_member(btf, (int)m->type, name, at, off, type, depth + 1)) != -ENOENT)
			return r;
	}
	return -ENOENT;
}

static int member(void *ctx, int id, const char *name, uint32_t *off, int *type)
{
	struct pmt_btftypes *t = ctx;

	return find_member(t->btf, id, name, 0, off, type, 0);
}

static size_t names_of(const struct btf *btf, int id, const char **names, size_t n, size_t max,
		       int depth)
{
	const struct btf_type *bt;
	const struct btf_member *m;
	int rid, i;

	if (depth > 8 || !(bt = resolved(btf, id, &rid)) || !btf_is_composite(bt))
		return n;
	m = btf_members(bt);
	for (i = 0; i < btf_vlen(bt) && n < max; i++, m++) {
		const char *s = btf__name_by_offset(btf, m->name_off);

		if (s && *s)
			names[n++] = s;
		else
			n = names_of(btf, (int)m->type, names, n, max, depth + 1);
	}
	return n;
}

static size_t member_names(void *ctx, int id, const char **names, size_t max)
{
	struct pmt_btftypes *t = ctx;

	return names_of(t->btf, id, names, 0, max, 0);
}

/* The first address /proc/kallsyms gives name (root sees them);
 * -ENODATA when it is not there and the file lists no variables but
 * section markers (a kernel built without CONFIG_KALLSYMS_ALL lists some
 * tens; with it, tens of thousands). */
static int ksym(void *ctx, const char *name, uint64_t *addr)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512], sym[256], type;
	unsigned long long a;
	size_t data = 0;
	int r = -ENOENT;

	(void)ctx;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &type, sym) != 3)
			continue;
		data += strchr("dDbB", type) != NULL;
		if (!strcmp(sym, name)) {
			*addr = a;
			r = a ? 0 : -EPERM;
			break;
		}
	}
	fclose(f);
	return r == -ENOENT && data < 1000 ? -ENODATA : r;
}

/* Enumerator name of any enum of the kernel's BTF, as C names it
 * unqualified: its value (signed as its enum's) */
static int enumerator(void *ctx, const char *name, int64_t *value)
{
	struct pmt_btftypes *t = ctx;
	__u32 id, n = btf__type_cnt(t->btf), i;

	for (id = 1; id < n; id++) {
		const struct btf_type *bt = btf__type_by_id(t->btf, id);

		if (btf_is_enum(bt)) {
			const struct btf_enum *e = btf_enum(bt);

			for (i = 0; i < btf_vlen(bt); i++)
				if (!strcmp(btf__name_by_offset(t->btf, e[i].name_off), name)) {
					*value = btf_kflag(bt) ? (int64_t)e[i].val
							       : (int64_t)(uint32_t)e[i].val;
					return 0;
				}
		} else if (btf_is_enum64(bt)) {
			const struct btf_enum64 *e = btf_enum64(bt);

			for (i = 0; i < btf_vlen(bt); i++)
				if (!strcmp(btf__name_by_offset(t->btf, e[i].name_off), name)) {
					*value = (int64_t)btf_enum64_value(&e[i]);
					return 0;
				}
		}
	}
	return -ENOENT;
}

int pmt_btftypes__open(struct pmt_btftypes *t)
{
	memset(t, 0, sizeof(*t));
	t->btf = btf__load_vmlinux_btf();
	if (!t->btf) {
		t->btf = NULL;
		return -errno ? -errno : -ENOENT;
	}
	t->sys = (struct pmt_typesys){.ctx = t,
				      .find_struct = find_struct,
				      .describe = describe,
				      .member = member,
				      .member_names = member_names,
				      .ksym = ksym,
				      .enumerator = enumerator};
	return 0;
}

void pmt_btftypes__close(struct pmt_btftypes *t)
{
	btf__free(t->btf);
	t->btf = NULL;
}
