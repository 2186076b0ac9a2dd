// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kernel's types a CO-RE object relocates against, made from the
 * kernel's raw BTF read in place (corebtf.h). Every read of the inputs
 * is bounded and unaligned-safe (an embedded object's bytes have no
 * alignment).
 *
 * What libbpf does with a field relocation (its spec): the access string
 * "0:i:j..." walks from the root type, a struct or union, through member
 * i (a named member is matched by name in the target, anonymous ones
 * are looked through on both sides), then j of that member's type, or an
 * element where the type is an array; typedefs and qualifiers are skipped
 * at each step. The candidates for the root are the target's types of its
 * kind and essential name (the name up to a "___" flavour). So the BTF
 * made here has, for each candidate, the members the walks name, each at
 * its offset from the candidate (flattened out of anonymous members), of
 * the type the next step walks, or, at the end, of a type of the same
 * shape as the kernel's (ints, enums and floats as they are, pointers to
 * void, arrays of the same length, structs and unions of the same size).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/btf.h>
#include "btf/corebtf.h"
#include "util/grow.h"

#define BTF_MAGIC_LE 0xeB9F
/* the last field relocation kind, and the local type id's (no target) */
#define RELO_FIELD_LAST 5
#define RELO_TYPE_ID_LOCAL 6
#define MAX_ACCESS 64
/* the encodings libbpf's headers give (linux/btf.h has the readers) */
#define INFO(kind, kflag, vlen) \
	((uint32_t)(kflag) << 31 | (uint32_t)(kind) << 24 | (uint32_t)(vlen))
#define MEMBER_OFFSET(bits, bit) ((uint32_t)(bits) << 24 | (uint32_t)(bit))
#define MAX_MODS 64

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint16_t rd16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* ---- a raw BTF, read in place ------------------------------------------ */

struct rbtf {
	const uint8_t *types;
	uint32_t types_len;
	const char *strs;
	uint32_t strs_len;
	uint32_t *off; /* off[id]: where type id starts in types (id >= 1) */
	uint32_t n;    /* ids 1..n */
};

struct ty {
	uint32_t name_off, kind, vlen, kflag, size_type; /* size or type */
	const uint8_t *extra;				 /* what follows the common part */
};

static uint32_t extra_len(uint32_t kind, uint32_t vlen, int *ok)
{
	*ok = 1;
	switch (kind) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG: return 4;
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG: return 0;
	case BTF_KIND_ARRAY: return 12;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_DATASEC:
	case BTF_KIND_ENUM64: return vlen * 12;
	case BTF_KIND_ENUM:
	case BTF_KIND_FUNC_PROTO: return vlen * 8;
	default: *ok = 0; return 0;
	}
}

static int rbtf_parse(struct rbtf *b, const void *data, size_t len, const char *what, char *why,
		      size_t why_len)
{
	const uint8_t *d = data;
	uint32_t hdr_len, type_off, type_len, str_off, str_len, p = 0;
	size_t cap = 0;

	memset(b, 0, sizeof(*b));
	if (len < 24 || rd16(d) != BTF_MAGIC_LE) {
		snprintf(why, why_len, "%s: not BTF of this machine's byte order", what);
		return -1;
	}
	hdr_len = rd32(d + 4);
	type_off = rd32(d + 8);
	type_len = rd32(d + 12);
	str_off = rd32(d + 16);
	str_len = rd32(d + 20);
	if (hdr_len < 24 || hdr_len > len || (uint64_t)type_off + type_len > len - hdr_len ||
	    (uint64_t)str_off + str_len > len - hdr_len ||
	    (str_len && d[hdr_len + str_off + str_len - 1])) {
		snprintf(why, why_len, "%s: a section past the BTF's end", what);
		return -1;
	}
	b->types = d + hdr_len + type_off;
	b->types_len = type_len;
	b->strs = (const char *)d + hdr_len + str_off;
	b->strs_len = str_len;
	while (p < type_len) {
		uint32_t info, ex;
		int ok;

		if (type_len - p < 12)
			goto bad;
		info = rd32(b->types + p + 4);
		ex = extra_len(BTF_INFO_KIND(info), BTF_INFO_VLEN(info), &ok);
		if (!ok || ex > type_len - p - 12)
			goto bad;
		uint32_t *off = pmt_grow(b->off, &cap, b->n + 1, sizeof(*b->off), 1024);

		if (!off) {
			snprintf(why, why_len, "%s: %s", what, strerror(ENOMEM));
			free(b->off);
			b->off = NULL;
			return -1;
		}
		b->off = off;
		if (!b->n)
			b->off[b->n++] = 0; /* id 0: void */
		b->off[b->n++] = p;
		p += 12 + ex;
	}
	if (b->n)
		b->n--; /* ids 1..n */
	return 0;
bad:
	snprintf(why, why_len, "%s: type %u malformed", what, b->n ? b->n : 1);
	free(b->off);
	b->off = NULL;
	return -1;
}

static const char *rbtf_name(const struct rbtf *b, uint32_t off)
{
	return off < b->strs_len ? b->strs + off : NULL;
}

/* type id of b; false for void and ids past the last */
static bool rbtf_type(const struct rbtf *b, uint32_t id, struct ty *t)
{
	const uint8_t *p;
	uint32_t info;

	if (!id || id > b->n)
		return false;
	p = b->types + b->off[id];
	info = rd32(p + 4);
	t->name_off = rd32(p);
	t->kind = BTF_INFO_KIND(info);
	t->vlen = BTF_INFO_VLEN(info);
	t->kflag = BTF_INFO_KFLAG(info);
	t->size_type = rd32(p + 8);
	t->extra = p + 12;
	return true;
}

/* id with typedefs and qualifiers skipped (0 for void or a loop) */
static uint32_t rbtf_skip(const struct rbtf *b, uint32_t id)
{
	struct ty t;
	int i;

	for (i = 0; i < MAX_MODS && rbtf_type(b, id, &t); i++) {
		switch (t.kind) {
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_TYPE_TAG: id = t.size_type; break;
		default: return id;
		}
	}
	return 0;
}

static bool composite(const struct ty *t)
{
	return t->kind == BTF_KIND_STRUCT || t->kind == BTF_KIND_UNION;
}

/* member i of composite t: name, type, bit offset, bitfield size */
static void member(const struct ty *t, uint32_t i, uint32_t *name, uint32_t *type, uint32_t *bit,
		   uint32_t *bits)
{
	const uint8_t *m = t->extra + 12 * i;
	uint32_t off = rd32(m + 8);

	*name = rd32(m);
	*type = rd32(m + 4);
	*bit = t->kflag ? BTF_MEMBER_BIT_OFFSET(off) : off;
	*bits = t->kflag ? BTF_MEMBER_BITFIELD_SIZE(off) : 0;
}

/* the length of name without a "___flavour" suffix, as libbpf's */
static size_t essential_len(const char *name)
{
	size_t n = strlen(name);
	int i;

	for (i = (int)n - 4; i > 0; i--)
		if (name[i] == '_' && name[i + 1] == '_' && name[i + 2] == '_')
			return (size_t)i;
	return n;
}

/* ---- what the relocations need ----------------------------------------- */

struct need_member {
	uint32_t name_off;	  /* the kernel's */
	uint32_t bit, bits, type; /* type: the kernel's, skipped */
};

/* a kernel type the BTF made has: a root candidate or a type walked */
struct node {
	uint32_t kid;
	struct need_member *m;
	size_t n, cap;
};

struct root {
	const char *name; /* the local root's, essential_len long */
	size_t len;
	uint32_t kind;
	uint32_t *cands; /* the kernel's */
	size_t n, cap;
};

struct make {
	struct rbtf k, l;
	struct root *roots;
	size_t nroots, roots_cap;
	struct node *nodes;
	size_t nnodes, nodes_cap;
	char *why;
	size_t why_len;
};

static int nomem(struct make *mk)
{
	snprintf(mk->why, mk->why_len, "%s", strerror(ENOMEM));
	return -1;
}

static struct root *root_of(struct make *mk, const char *name, uint32_t kind, bool add)
{
	size_t len = essential_len(name), i;
	struct root *r;

	for (i = 0; i < mk->nroots; i++)
		if (mk->roots[i].kind == kind && mk->roots[i].len == len &&
		    !memcmp(mk->roots[i].name, name, len))
			return &mk->roots[i];
	if (!add)
		return NULL;
	if (!(r = pmt_grow(mk->roots, &mk->roots_cap, mk->nroots, sizeof(*mk->roots), 16)))
		return NULL;
	mk->roots = r;
	r = &mk->roots[mk->nroots++];
	memset(r, 0, sizeof(*r));
	r->name = name;
	r->len = len;
	r->kind = kind;
	return r;
}

static struct node *node_of(struct make *mk, uint32_t kid)
{
	size_t i;

	for (i = 0; i < mk->nnodes; i++)
		if (mk->nodes[i].kid == kid)
			return &mk->nodes[i];
	struct node *v = pmt_grow(mk->nodes, &mk->nodes_cap, mk->nnodes, sizeof(*mk->nodes), 64);

	if (!v)
		return NULL;
	mk->nodes = v;
	memset(&mk->nodes[mk->nnodes], 0, sizeof(*mk->nodes));
	mk->nodes[mk->nnodes].kid = kid;
	return &mk->nodes[mk->nnodes++];
}

static int add_member(struct make *mk, uint32_t kid, const struct need_member *m)
{
	struct node *nd = node_of(mk, kid);
	size_t i;

	if (!nd)
		return nomem(mk);
	for (i = 0; i < nd->n; i++)
		if (nd->m[i].name_off == m->name_off && nd->m[i].bit == m->bit)
			return 0;
	struct need_member *v = pmt_grow(nd->m, &nd->cap, nd->n, sizeof(*nd->m), 4);

	if (!v)
		return nomem(mk);
	nd->m = v;
	nd->m[nd->n++] = *m;
	return 0;
}

/* The member named name in kernel composite kid, looked for through its
 * anonymous members (depth bounded), its offset from kid's start */
static bool find_member(const struct rbtf *k, uint32_t kid, const char *name, uint32_t base,
			int depth, struct need_member *out)
{
	struct ty t;
	uint32_t i, mn, mt, bit, bits;
	const char *s;

	if (depth > 8 || !rbtf_type(k, kid, &t) || !composite(&t))
		return false;
	for (i = 0; i < t.vlen; i++) {
		member(&t, i, &mn, &mt, &bit, &bits);
		s = rbtf_name(k, mn);
		if (!s)
			continue;
		if (*s && !strcmp(s, name)) {
			out->name_off = mn;
			out->bit = base + bit;
			out->bits = bits;
			out->type = rbtf_skip(k, mt);
			return true;
		}
		if (!*s && find_member(k, rbtf_skip(k, mt), name, base + bit, depth + 1, out))
			return true;
	}
	return false;
}

/* One relocation's walk from kernel candidate kid: its members needed */
static int walk(struct make *mk, uint32_t lid, uint32_t kid, const uint32_t *acc, int nacc)
{
	struct ty lt, kt;
	int i;

	if (!node_of(mk, kid))
		return nomem(mk);
	for (i = 1; i < nacc; i++) {
		if (!rbtf_type(&mk->l, lid, &lt) || !rbtf_type(&mk->k, kid, &kt))
			return 0; /* void: nothing further (as libbpf: no match) */
		if (composite(&lt)) {
			uint32_t mn, mt, bit, bits;
			struct need_member m;
			const char *name;

			if (acc[i] >= lt.vlen) {
				snprintf(mk->why, mk->why_len,
					 "a relocation past its type's members");
				return -1;
			}
			member(&lt, acc[i], &mn, &mt, &bit, &bits);
			name = rbtf_name(&mk->l, mn);
			lid = rbtf_skip(&mk->l, mt);
			if (!name || !*name)
				continue; /* anonymous: looked through in the kernel's */
			if (!composite(&kt) || !find_member(&mk->k, kid, name, 0, 0, &m))
				return 0; /* not in this kernel: as libbpf finds it */
			if (add_member(mk, kid, &m))
				return -1;
			kid = m.type;
		} else if (lt.kind == BTF_KIND_ARRAY) {
			if (kt.kind != BTF_KIND_ARRAY)
				return 0;
			if (!node_of(mk, kid))
				return nomem(mk);
			lid = rbtf_skip(&mk->l, rd32(lt.extra));
			kid = rbtf_skip(&mk->k, rd32(kt.extra));
		} else {
			snprintf(mk->why, mk->why_len, "a relocation through a %s",
				 lt.kind == BTF_KIND_PTR ? "pointer" : "scalar");
			return -1;
		}
		if (kid && i + 1 < nacc && !node_of(mk, kid))
			return nomem(mk);
	}
	return 0;
}

static int parse_access(const char *s, uint32_t *acc, int *nacc)
{
	char *end;
	unsigned long v;

	*nacc = 0;
	for (;;) {
		if (*s < '0' || *s > '9' || *nacc == MAX_ACCESS)
			return -1;
		v = strtoul(s, &end, 10);
		if (v > UINT32_MAX)
			return -1;
		acc[(*nacc)++] = (uint32_t)v;
		if (!*end)
			return 0;
		if (*end != ':')
			return -1;
		s = end + 1;
	}
}

/* Each relocation: f(mk, root local id, access) */
typedef int (*relo_fn)(struct make *mk, uint32_t lid, const uint32_t *acc, int nacc);

static int each_relo(struct make *mk, const uint8_t *ext, size_t ext_len, relo_fn f,
		     unsigned int *count)
{
	uint32_t hdr_len, off, len, rec, p, end;

	if (ext_len < 8 || rd16(ext) != BTF_MAGIC_LE) {
		snprintf(mk->why, mk->why_len, ".BTF.ext: not of this machine's byte order");
		return -1;
	}
	hdr_len = rd32(ext + 4);
	if (hdr_len < 32 || hdr_len > ext_len) {
		snprintf(mk->why, mk->why_len, "no CO-RE relocations");
		return -1;
	}
	off = rd32(ext + 24);
	len = rd32(ext + 28);
	if ((uint64_t)hdr_len + off + len > ext_len || (len && len < 4)) {
		snprintf(mk->why, mk->why_len, ".BTF.ext: relocations past its end");
		return -1;
	}
	*count = 0;
	if (!len) {
		snprintf(mk->why, mk->why_len, "no CO-RE relocations");
		return -1;
	}
	p = hdr_len + off;
	end = p + len;
	rec = rd32(ext + p);
	p += 4;
	if (rec < 16) {
		snprintf(mk->why, mk->why_len, ".BTF.ext: relocation records of %u bytes", rec);
		return -1;
	}
	while (p < end) {
		uint32_t n, i;

		if (end - p < 8)
			goto bad;
		n = rd32(ext + p + 4);
		p += 8;
		if ((uint64_t)n * rec > end - p)
			goto bad;
		for (i = 0; i < n; i++, p += rec) {
			uint32_t lid = rd32(ext + p + 4), kind = rd32(ext + p + 12),
				 acc[MAX_ACCESS];
			const char *s = rbtf_name(&mk->l, rd32(ext + p + 8));
			int nacc;

			(*count)++;
			if (kind == RELO_TYPE_ID_LOCAL)
				continue;
			if (kind > RELO_FIELD_LAST) {
				snprintf(mk->why, mk->why_len,
					 "a relocation of kind %u (only fields' are made here)",
					 kind);
				return -1;
			}
			if (!s || parse_access(s, acc, &nacc)) {
				snprintf(mk->why, mk->why_len,
					 "a relocation's access string malformed");
				return -1;
			}
			if (f(mk, lid, acc, nacc))
				return -1;
		}
	}
	return 0;
bad:
	snprintf(mk->why, mk->why_len, ".BTF.ext: relocations past its end");
	return -1;
}

/* the root a relocation starts from (the local type, a struct or union) */
static bool local_root(struct make *mk, uint32_t lid, struct ty *t, const char **name)
{
	lid = rbtf_skip(&mk->l, lid);
	if (!rbtf_type(&mk->l, lid, t) || !composite(t))
		return false;
	*name = rbtf_name(&mk->l, t->name_off);
	return *name && **name;
}

static int collect_root(struct make *mk, uint32_t lid, const uint32_t *acc, int nacc)
{
	const char *name;
	struct ty t;

	(void)acc;
	(void)nacc;
	if (!local_root(mk, lid, &t, &name)) {
		snprintf(mk->why, mk->why_len, "a relocation of an anonymous or non-struct type");
		return -1;
	}
	return root_of(mk, name, t.kind, true) ? 0 : nomem(mk);
}

static int walk_relo(struct make *mk, uint32_t lid, const uint32_t *acc, int nacc)
{
	const char *name;
	struct root *r;
	struct ty t;
	size_t i;

	if (!local_root(mk, lid, &t, &name) || !(r = root_of(mk, name, t.kind, false)))
		return -1;
	for (i = 0; i < r->n; i++)
		if (walk(mk, rbtf_skip(&mk->l, lid), r->cands[i], acc, nacc))
			return -1;
	return 0;
}

/* the kernel's candidates for each root: its structs and unions of the
 * root's kind and essential name */
static int find_candidates(struct make *mk)
{
	struct ty t;
	uint32_t id;
	struct root *r;

	for (id = 1; id <= mk->k.n; id++) {
		const char *name;

		rbtf_type(&mk->k, id, &t);
		if (!composite(&t) || !(name = rbtf_name(&mk->k, t.name_off)) || !*name)
			continue;
		if (!(r = root_of(mk, name, t.kind, false)))
			continue;
		uint32_t *c = pmt_grow(r->cands, &r->cap, r->n, sizeof(*r->cands), 2);

		if (!c)
			return nomem(mk);
		r->cands = c;
		r->cands[r->n++] = id;
	}
	return 0;
}

/* ---- the BTF made ------------------------------------------------------ */

struct out {
	uint8_t *types;
	size_t types_len, types_cap;
	char *strs;
	size_t strs_len, strs_cap;
	uint32_t *kids; /* kids[i]: the kernel id of type i + 1 */
	size_t n, cap;
	bool oom;
};

static void put(struct out *o, const void *p, size_t len)
{
	uint8_t *t;

	if (o->oom || !(t = pmt_grow_to(o->types, &o->types_cap, o->types_len + len, 1, 256))) {
		o->oom = true;
		return;
	}
	o->types = t;
	memcpy(o->types + o->types_len, p, len);
	o->types_len += len;
}

static void put32(struct out *o, uint32_t v)
{
	put(o, &v, sizeof(v));
}

static uint32_t str(struct out *o, const char *s)
{
	size_t n = strlen(s) + 1, at = o->strs_len;
	char *t;

	if (!*s)
		return 0;
	if (o->oom || !(t = pmt_grow_to(o->strs, &o->strs_cap, o->strs_len + n, 1, 256))) {
		o->oom = true;
		return 0;
	}
	o->strs = t;
	memcpy(o->strs + at, s, n);
	o->strs_len += n;
	return (uint32_t)at;
}

/* the made id of kernel type kid (skipped), listed if new */
static uint32_t id_of(struct out *o, uint32_t kid)
{
	size_t i;

	if (!kid)
		return 0;
	for (i = 0; i < o->n; i++)
		if (o->kids[i] == kid)
			return (uint32_t)i + 1;
	uint32_t *k = pmt_grow(o->kids, &o->cap, o->n, sizeof(*o->kids), 64);

	if (!k) {
		o->oom = true;
		return 0;
	}
	o->kids = k;
	o->kids[o->n++] = kid;
	return (uint32_t)o->n;
}

static int by_bit(const void *a, const void *b)
{
	const struct need_member *x = a, *y = b;

	return x->bit < y->bit ? -1 : x->bit > y->bit;
}

/* a struct or union: the members its node needs, by offset; a bitfield
 * among them sets kflag */
static int emit_composite(struct make *mk, struct out *o, const struct ty *t, struct node *nd,
			  uint32_t name)
{
	size_t n = nd ? nd->n : 0, i;
	bool kflag = false;

	if (n > 0xffff) {
		snprintf(mk->why, mk->why_len, "a struct of too many members");
		return -1;
	}
	for (i = 0; i < n; i++)
		kflag |= nd->m[i].bits != 0;
	if (nd)
		pmt_sort(nd->m, nd->n, sizeof(*nd->m), by_bit);
	put32(o, name);
	put32(o, INFO(t->kind, kflag, (uint32_t)n));
	put32(o, t->size_type);
	for (i = 0; i < n; i++) {
		const struct need_member *m = &nd->m[i];

		if (kflag && (m->bit > 0xffffff || m->bits > 0xff)) {
			snprintf(mk->why, mk->why_len, "a bitfield past what BTF encodes");
			return -1;
		}
		put32(o, str(o, rbtf_name(&mk->k, m->name_off)));
		put32(o, id_of(o, m->type));
		put32(o, kflag ? MEMBER_OFFSET(m->bits, m->bit) : m->bit);
	}
	return 0;
}

/* type i of the list (kernel kid): written; the types it refers to
 * listed after it (arrays' index type is patched in after: the list's
 * end is not known yet) */
static int emit(struct make *mk, struct out *o, uint32_t kid)
{
	struct node *nd = NULL;
	uint32_t name;
	struct ty t;
	size_t i;

	if (!rbtf_type(&mk->k, kid, &t)) {
		snprintf(mk->why, mk->why_len, "kernel type %u missing", kid);
		return -1;
	}
	name = str(o, rbtf_name(&mk->k, t.name_off) ? rbtf_name(&mk->k, t.name_off) : "");
	for (i = 0; i < mk->nnodes && !nd; i++)
		if (mk->nodes[i].kid == kid)
			nd = &mk->nodes[i];
	switch (t.kind) {
	case BTF_KIND_INT:
		put32(o, name);
		put32(o, INFO(BTF_KIND_INT, 0, 0));
		put32(o, t.size_type);
		put32(o, rd32(t.extra));
		return 0;
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
	case BTF_KIND_FLOAT:
		put32(o, name);
		put32(o, INFO(t.kind, t.kflag, 0));
		put32(o, t.size_type);
		return 0;
	case BTF_KIND_FWD:
		put32(o, name);
		put32(o, INFO(BTF_KIND_FWD, t.kflag, 0));
		put32(o, 0);
		return 0;
	case BTF_KIND_PTR: /* to void: fields' pointers are alike to libbpf */
		put32(o, 0);
		put32(o, INFO(BTF_KIND_PTR, 0, 0));
		put32(o, 0);
		return 0;
	case BTF_KIND_ARRAY:
		put32(o, 0);
		put32(o, INFO(BTF_KIND_ARRAY, 0, 0));
		put32(o, 0);
		put32(o, id_of(o, rbtf_skip(&mk->k, rd32(t.extra))));
		put32(o, 0);
		put32(o, rd32(t.extra + 8));
		return 0;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION: return emit_composite(mk, o, &t, nd, name);
	default:
		snprintf(mk->why, mk->why_len, "a field of kernel type %u, kind %u", kid, t.kind);
		return -1;
	}
}

static void *write_btf(struct make *mk, size_t *len, unsigned int *ntypes)
{
	struct out o = {0};
	uint32_t index_id, hdr[6];
	uint8_t *b = NULL;
	size_t i;

	o.strs = malloc(1);
	if (!o.strs) {
		nomem(mk);
		return NULL;
	}
	o.strs[0] = 0;
	o.strs_len = o.strs_cap = 1;
	/* the roots' candidates and the walks' types first, in their order */
	for (i = 0; i < mk->nroots; i++) {
		size_t c;

		for (c = 0; c < mk->roots[i].n; c++)
			id_of(&o, mk->roots[i].cands[c]);
	}
	for (i = 0; i < mk->nnodes; i++)
		id_of(&o, mk->nodes[i].kid);
	for (i = 0; i < o.n && !o.oom; i++)
		if (emit(mk, &o, o.kids[i]))
			goto out;
	/* arrays' index: a type of its own, past those of the list */
	index_id = (uint32_t)o.n + 1;
	put32(&o, str(&o, "unsigned int"));
	put32(&o, INFO(BTF_KIND_INT, 0, 0));
	put32(&o, 4);
	put32(&o, 32);
	if (o.oom) {
		nomem(mk);
		goto out;
	}
	/* the arrays' index ids: patched now that it is known */
	{
		size_t p = 0;

		while (p < o.types_len) {
			uint32_t info = rd32(o.types + p + 4);
			int ok;

			if (BTF_INFO_KIND(info) == BTF_KIND_ARRAY)
				memcpy(o.types + p + 16, &index_id, 4);
			p += 12 + extra_len(BTF_INFO_KIND(info), BTF_INFO_VLEN(info), &ok);
		}
	}
	*len = 24 + o.types_len + o.strs_len;
	if (!(b = malloc(*len))) {
		nomem(mk);
		goto out;
	}
	hdr[0] = BTF_MAGIC_LE | (1u << 16); /* magic, version 1, flags 0 */
	hdr[1] = 24;
	hdr[2] = 0;
	hdr[3] = (uint32_t)o.types_len;
	hdr[4] = (uint32_t)o.types_len;
	hdr[5] = (uint32_t)o.strs_len;
	memcpy(b, hdr, 24);
	memcpy(b + 24, o.types, o.types_len);
	memcpy(b + 24 + o.types_len, o.strs, o.strs_len);
	*ntypes = (unsigned int)o.n + 1;
out:
	free(o.types);
	free(o.strs);
	free(o.kids);
	return b;
}

void *pmt_corebtf__make(const void *kbtf, size_t klen, const void *obtf, size_t olen,
			const void *oext, size_t oext_len, size_t *len,
			struct pmt_corebtf_stats *st, char *why, size_t why_len)
{
	struct make mk = {.why = why, .why_len = why_len};
	void *b = NULL;
	size_t i;

	memset(st, 0, sizeof(*st));
	*len = 0;
	if (!oext) {
		snprintf(why, why_len, "no CO-RE relocations");
		return NULL;
	}
	if (rbtf_parse(&mk.l, obtf, olen, "the object's BTF", why, why_len))
		return NULL;
	if (each_relo(&mk, oext, oext_len, collect_root, &st->relos))
		goto out;
	if (!mk.nroots) {
		snprintf(why, why_len, "no CO-RE relocations");
		goto out;
	}
	if (rbtf_parse(&mk.k, kbtf, klen, "the kernel's BTF", why, why_len))
		goto out;
	st->kernel_types = mk.k.n;
	if (find_candidates(&mk) || each_relo(&mk, oext, oext_len, walk_relo, &st->relos))
		goto out;
	b = write_btf(&mk, len, &st->types);
out:
	for (i = 0; i < mk.nroots; i++)
		free(mk.roots[i].cands);
	for (i = 0; i < mk.nnodes; i++)
		free(mk.nodes[i].m);
	free(mk.roots);
	free(mk.nodes);
	free(mk.k.off);
	free(mk.l.off);
	return b;
}

/* ---- the sections of an object ----------------------------------------- */

int pmt_corebtf__sections(const void *elf, size_t len, const void **btf, size_t *btf_len,
			  const void **ext, size_t *ext_len)
{
	const uint8_t *e = elf;
	uint64_t shoff, stroff, strsize;
	uint16_t shentsize, shnum, shstrndx, i;

	*btf = *ext = NULL;
	*btf_len = *ext_len = 0;
	/* ELF64 (EI_CLASS 2) of this machine's byte order */
	if (len < 64 || memcmp(e, "\177ELF", 4) || e[4] != 2 ||
	    e[5] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 1 : 2))
		return -1;
	memcpy(&shoff, e + 0x28, 8);
	shentsize = rd16(e + 0x3a);
	shnum = rd16(e + 0x3c);
	shstrndx = rd16(e + 0x3e);
	if (shentsize < 64 || shstrndx >= shnum || shoff > len ||
	    (uint64_t)shnum * shentsize > len - shoff)
		return -1;
	memcpy(&stroff, e + shoff + (uint64_t)shstrndx * shentsize + 24, 8);
	memcpy(&strsize, e + shoff + (uint64_t)shstrndx * shentsize + 32, 8);
	if (stroff > len || strsize > len - stroff)
		return -1;
	for (i = 0; i < shnum; i++) {
		const uint8_t *sh = e + shoff + (uint64_t)i * shentsize;
		uint32_t name = rd32(sh);
		uint64_t off, size;
		const char *n;

		memcpy(&off, sh + 24, 8);
		memcpy(&size, sh + 32, 8);
		if (name >= strsize || !memchr(e + stroff + name, 0, strsize - name))
			continue;
		n = (const char *)e + stroff + name;
		if (strcmp(n, ".BTF") && strcmp(n, ".BTF.ext"))
			continue;
		if (off > len || size > len - off)
			return -1;
		if (!strcmp(n, ".BTF")) {
			*btf = e + off;
			*btf_len = size;
		} else {
			*ext = e + off;
			*ext_len = size;
		}
	}
	return *btf ? 0 : -1;
}
