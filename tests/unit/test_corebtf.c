// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kernel's types a CO-RE object relocates against (src/btf/corebtf.c),
 * made from a kernel BTF and an object's BTF and relocations encoded
 * here: members named through anonymous unions and structs at their
 * offsets from the candidate, bitfields, arrays walked into, flavours,
 * members and types the kernel lacks left out, a candidate of another
 * kind not taken; and what it refuses. The runtime suite compares the
 * real objects' against bpftool gen min_core_btf on the running kernel.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/btf.h>
#include "btf/corebtf.h"
#include "test.h"

struct enc {
	uint8_t t[4096];
	size_t tl;
	char s[1024];
	size_t sl;
	uint32_t n;
};

static void u32(struct enc *e, uint32_t v)
{
	memcpy(e->t + e->tl, &v, 4);
	e->tl += 4;
}

static uint32_t str(struct enc *e, const char *s)
{
	size_t at = e->sl;

	if (!*s)
		return 0;
	memcpy(e->s + at, s, strlen(s) + 1);
	e->sl += strlen(s) + 1;
	return (uint32_t)at;
}

static uint32_t ty(struct enc *e, const char *name, uint32_t kind, uint32_t kflag, uint32_t vlen,
		   uint32_t size_type)
{
	u32(e, str(e, name));
	u32(e, kflag << 31 | kind << 24 | vlen);
	u32(e, size_type);
	return ++e->n;
}

static void mem(struct enc *e, const char *name, uint32_t type, uint32_t off)
{
	u32(e, str(e, name));
	u32(e, type);
	u32(e, off);
}

static void init(struct enc *e)
{
	memset(e, 0, sizeof(*e));
	e->sl = 1;
}

/* the raw BTF: header, types, strings */
static uint8_t *raw(const struct enc *e, size_t *len)
{
	uint32_t hdr[6] = {0xeB9F | 1u << 16, 24, 0, (uint32_t)e->tl, (uint32_t)e->tl,
			   (uint32_t)e->sl};
	uint8_t *b;

	*len = 24 + e->tl + e->sl;
	b = malloc(*len);
	memcpy(b, hdr, 24);
	memcpy(b + 24, e->t, e->tl);
	memcpy(b + 24 + e->tl, e->s, e->sl);
	return b;
}

/* A kernel of: task_struct { int state; union { int x; struct { int tgid;
 * pid_t pid; }; }; char comm[16]; unsigned flags:3; } (bitfield at 256),
 * a union task_struct (another kind), pt_regs { unsigned long sp, ip; } */
static uint8_t *kernel(size_t *len)
{
	struct enc e;
	uint8_t *b;

	init(&e);
	ty(&e, "int", BTF_KIND_INT, 0, 0, 4); /* 1 */
	u32(&e, BTF_INT_SIGNED << 24 | 32);
	ty(&e, "pid_t", BTF_KIND_TYPEDEF, 0, 0, 1); /* 2 */
	ty(&e, "char", BTF_KIND_INT, 0, 0, 1);	    /* 3 */
	u32(&e, 8);
	ty(&e, "", BTF_KIND_ARRAY, 0, 0, 0); /* 4: char[16] */
	u32(&e, 3);
	u32(&e, 1);
	u32(&e, 16);
	ty(&e, "task_struct", BTF_KIND_STRUCT, 1, 4, 64); /* 5 */
	mem(&e, "state", 1, 0);
	mem(&e, "", 6, 32);
	mem(&e, "comm", 4, 128);
	mem(&e, "flags", 1, 3u << 24 | 256);
	ty(&e, "", BTF_KIND_UNION, 0, 2, 8); /* 6 */
	mem(&e, "x", 1, 0);
	mem(&e, "", 7, 0);
	ty(&e, "", BTF_KIND_STRUCT, 0, 2, 8); /* 7 */
	mem(&e, "tgid", 1, 0);
	mem(&e, "pid", 2, 32);
	ty(&e, "task_struct", BTF_KIND_UNION, 0, 1, 4); /* 8: not a candidate */
	mem(&e, "pid", 1, 0);
	ty(&e, "long unsigned int", BTF_KIND_INT, 0, 0, 8); /* 9 */
	u32(&e, 64);
	ty(&e, "pt_regs", BTF_KIND_STRUCT, 0, 2, 16); /* 10 */
	mem(&e, "sp", 9, 0);
	mem(&e, "ip", 9, 64);
	b = raw(&e, len);
	return b;
}

/* The object: its types and the access strings of its relocations */
struct obj {
	uint8_t *btf, *ext;
	size_t btf_len, ext_len;
};

struct relo {
	uint32_t type;
	const char *access;
	uint32_t kind;
};

static void object(struct obj *o, const struct relo *r, int n)
{
	uint32_t acc[16];
	struct enc e;
	size_t at = 0;
	int i;

	init(&e);
	ty(&e, "int", BTF_KIND_INT, 0, 0, 4); /* 1 */
	u32(&e, BTF_INT_SIGNED << 24 | 32);
	ty(&e, "char", BTF_KIND_INT, 0, 0, 1); /* 2 */
	u32(&e, 8);
	ty(&e, "", BTF_KIND_ARRAY, 0, 0, 0); /* 3 */
	u32(&e, 2);
	u32(&e, 1);
	u32(&e, 16);
	ty(&e, "task_struct", BTF_KIND_STRUCT, 0, 4, 32); /* 4 */
	mem(&e, "pid", 1, 0);
	mem(&e, "comm", 3, 32);
	mem(&e, "flags", 1, 160);
	mem(&e, "missing", 1, 192);
	ty(&e, "task_struct___old", BTF_KIND_STRUCT, 0, 1, 4); /* 5 */
	mem(&e, "tgid", 1, 0);
	ty(&e, "unsigned long", BTF_KIND_INT, 0, 0, 8); /* 6 */
	u32(&e, 64);
	ty(&e, "pt_regs", BTF_KIND_STRUCT, 0, 1, 8); /* 7 */
	mem(&e, "ip", 6, 0);
	ty(&e, "nothere", BTF_KIND_STRUCT, 0, 1, 4); /* 8 */
	mem(&e, "a", 1, 0);
	for (i = 0; i < n; i++)
		acc[i] = str(&e, r[i].access);
	o->btf = raw(&e, &o->btf_len);
	/* .BTF.ext: header, then the relocations of one section */
	o->ext_len = 32 + 4 + 8 + 16 * (size_t)n;
	o->ext = calloc(1, o->ext_len);
	{
		uint32_t h[8] = {0xeB9F | 1u << 16, 32, 0, 0, 0, 0, 0, (uint32_t)(4 + 8 + 16 * n)};

		memcpy(o->ext, h, 32);
	}
	at = 32;
	memcpy(o->ext + at, &(uint32_t){16}, 4);
	memcpy(o->ext + at + 4, &(uint32_t){0}, 4);
	memcpy(o->ext + at + 8, &(uint32_t){(uint32_t)n}, 4);
	at += 12;
	for (i = 0; i < n; i++, at += 16) {
		uint32_t rec[4] = {8u * (uint32_t)i, r[i].type, acc[i], r[i].kind};

		memcpy(o->ext + at, rec, 16);
	}
}

/* A member of the made BTF's struct name: its offset, bitfield size and
 * type's kind and size (or nelems for an array) */
struct got {
	int found;
	uint32_t bit, bits, kind, size;
};

static const uint8_t *type_at(const uint8_t *b, uint32_t id)
{
	const uint8_t *t = b + 24, *end = b + 24 + ((const uint32_t *)b)[3];
	uint32_t i;

	for (i = 1; t < end; i++) {
		uint32_t info, kind, vlen, ex = 0;

		memcpy(&info, t + 4, 4);
		kind = BTF_INFO_KIND(info);
		vlen = BTF_INFO_VLEN(info);
		if (i == id)
			return t;
		if (kind == BTF_KIND_INT)
			ex = 4;
		else if (kind == BTF_KIND_ARRAY)
			ex = 12;
		else if (kind == BTF_KIND_STRUCT || kind == BTF_KIND_UNION)
			ex = 12 * vlen;
		t += 12 + ex;
	}
	return NULL;
}

static int count_named(const uint8_t *b, uint32_t kind, const char *name)
{
	const char *s = (const char *)b + 24 + ((const uint32_t *)b)[4];
	const uint8_t *t;
	uint32_t id, info, n = 0;

	for (id = 1; (t = type_at(b, id)); id++) {
		memcpy(&info, t + 4, 4);
		if (BTF_INFO_KIND(info) == kind && !strcmp(s + *(const uint32_t *)t, name))
			n++;
	}
	return (int)n;
}

static struct got member_of(const uint8_t *b, const char *sname, const char *mname)
{
	const char *s = (const char *)b + 24 + ((const uint32_t *)b)[4];
	struct got g = {0};
	const uint8_t *t, *mt;
	uint32_t id, info, i, m[3];

	for (id = 1; (t = type_at(b, id)); id++) {
		memcpy(&info, t + 4, 4);
		if (BTF_INFO_KIND(info) != BTF_KIND_STRUCT ||
		    strcmp(s + *(const uint32_t *)t, sname))
			continue;
		for (i = 0; i < BTF_INFO_VLEN(info); i++) {
			memcpy(m, t + 12 + 12 * i, 12);
			if (strcmp(s + m[0], mname))
				continue;
			g.found = 1;
			g.bit = BTF_INFO_KFLAG(info) ? BTF_MEMBER_BIT_OFFSET(m[2]) : m[2];
			g.bits = BTF_INFO_KFLAG(info) ? BTF_MEMBER_BITFIELD_SIZE(m[2]) : 0;
			if ((mt = type_at(b, m[1]))) {
				memcpy(&info, mt + 4, 4);
				g.kind = BTF_INFO_KIND(info);
				memcpy(&g.size, mt + (g.kind == BTF_KIND_ARRAY ? 20 : 8), 4);
			}
		}
	}
	return g;
}

TEST(corebtf_members_at_kernel_offsets)
{
	const struct relo r[] = {
		{4, "0:0", 0},	 /* pid, through an anonymous union and struct */
		{4, "0:1:3", 0}, /* comm[3] */
		{4, "0:2", 0},	 /* flags, a bitfield */
		{4, "0:3", 2},	 /* missing: exists? */
		{5, "0:0", 0},	 /* task_struct___old's tgid */
		{7, "0:0", 1},	 /* pt_regs' ip, its size */
		{8, "0:0", 2},	 /* a struct the kernel lacks */
		{4, "0", 6},	 /* a local type id: needs no kernel type */
	};
	/* what the kernel has of what they name: offsets from the struct */
	const struct {
		const char *s, *m;
		struct got g;
	} want[] = {
		{"task_struct", "pid", {1, 64, 0, BTF_KIND_INT, 4}},
		{"task_struct", "tgid", {1, 32, 0, BTF_KIND_INT, 4}},
		{"task_struct", "comm", {1, 128, 0, BTF_KIND_ARRAY, 16}},
		{"task_struct", "flags", {1, 256, 3, BTF_KIND_INT, 4}},
		{"task_struct", "missing", {0, 0, 0, 0, 0}},
		{"task_struct", "state", {0, 0, 0, 0, 0}},
		{"pt_regs", "ip", {1, 64, 0, BTF_KIND_INT, 8}},
		{"pt_regs", "sp", {0, 0, 0, 0, 0}},
	};
	struct pmt_corebtf_stats st;
	struct obj o;
	size_t klen, len, i;
	uint8_t *k = kernel(&klen), *b;
	char why[160] = "";
	struct got g;

	object(&o, r, 8);
	b = pmt_corebtf__make(k, klen, o.btf, o.btf_len, o.ext, o.ext_len, &len, &st, why,
			      sizeof(why));
	free(k);
	free(o.btf);
	free(o.ext);
	if (!b) {
		FAIL_AT("not made: %s", why);
		return;
	}
	if (st.relos != 8 || st.kernel_types != 10) {
		FAIL_AT("%u relocations, %u kernel types: not 8 and 10", st.relos, st.kernel_types);
		free(b);
		return;
	}
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		g = member_of(b, want[i].s, want[i].m);
		if (g.found != want[i].g.found || g.bit != want[i].g.bit ||
		    g.bits != want[i].g.bits ||
		    (g.found && (g.kind != want[i].g.kind || g.size != want[i].g.size))) {
			FAIL_AT("%s.%s: found %d at bit %u (%u bits), kind %u, size %u", want[i].s,
				want[i].m, g.found, g.bit, g.bits, g.kind, g.size);
			free(b);
			return;
		}
	}
	/* one candidate (the union of the name is not one), none lacking */
	int structs = count_named(b, BTF_KIND_STRUCT, "task_struct"),
	    unions = count_named(b, BTF_KIND_UNION, "task_struct"),
	    lacking = count_named(b, BTF_KIND_STRUCT, "nothere");

	free(b);
	ASSERT_EQ(structs, 1);
	ASSERT_EQ(unions, 0);
	ASSERT_EQ(lacking, 0);
}

TEST(corebtf_refusals)
{
	const struct relo type_exists[] = {{4, "0", 8}}, bad_access[] = {{4, "0:x", 0}},
			  past[] = {{4, "0:9", 0}};
	const struct {
		const struct relo *r;
		const char *why;
	} cases[] = {
		{type_exists, "a relocation of kind 8 (only fields' are made here)"},
		{bad_access, "a relocation's access string malformed"},
		{past, "a relocation past its type's members"},
	};
	struct pmt_corebtf_stats st;
	size_t klen, len, i;
	uint8_t *k = kernel(&klen);
	char why[160];
	struct obj o;
	void *b;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		object(&o, cases[i].r, 1);
		why[0] = 0;
		b = pmt_corebtf__make(k, klen, o.btf, o.btf_len, o.ext, o.ext_len, &len, &st, why,
				      sizeof(why));
		free(o.btf);
		free(o.ext);
		ASSERT_TRUE(!b);
		ASSERT_STREQ(why, cases[i].why);
	}
	/* a kernel BTF cut short, and none at all */
	object(&o, type_exists + 0, 0);
	b = pmt_corebtf__make(k, klen, o.btf, o.btf_len, o.ext, o.ext_len, &len, &st, why,
			      sizeof(why));
	ASSERT_TRUE(!b);
	ASSERT_STREQ(why, "no CO-RE relocations");
	free(o.btf);
	free(o.ext);
	{
		const struct relo pid[] = {{4, "0:0", 0}};

		object(&o, pid, 1);
		for (len = 0; len < klen; len += 7) {
			uint8_t *cut = malloc(len ? len : 1);
			void *m;

			memcpy(cut, k, len);
			m = pmt_corebtf__make(cut, len, o.btf, o.btf_len, o.ext, o.ext_len, &i, &st,
					      why, sizeof(why));
			free(cut);
			if (m && len < klen) {
				free(m);
				free(o.btf);
				free(o.ext);
				free(k);
				FAIL_AT("a kernel BTF of %zu of its %zu bytes taken", len, klen);
				return;
			}
		}
		free(o.btf);
		free(o.ext);
	}
	free(k);
}
