// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Python frames named by the code objects they ran (python/codes.h). */
#include <stdlib.h>
#include <string.h>
#include "python/codes.h"

static struct pmt_pycode *slot_of(struct pmt_pycodes *t, uint32_t id)
{
	if (!t->slots && !(t->slots = calloc(PMT_PYCODES, sizeof(*t->slots))))
		return NULL;
	return &t->slots[(id * 0x9e3779b1u) >> 20 & (PMT_PYCODES - 1)];
}

/* The code object the kernel calls id, if it was read. */
static struct pmt_pycode *code_of(struct pmt_pycodes *t, uint32_t id)
{
	struct pmt_pycode *slot = slot_of(t, id);

	return slot && slot->id == id ? slot : NULL;
}

static struct pmt_pystatic *static_of(struct pmt_pycodes *t, const struct pmt_pystatic_key *k)
{
	uint64_t h = (k->vaddr ^ k->ino * 0x9e3779b97f4a7c15ull) * 0xff51afd7ed558ccdull;

	if (!t->statics && !(t->statics = calloc(PMT_PYSTATICS, sizeof(*t->statics))))
		return NULL;
	return &t->statics[h >> 54 & (PMT_PYSTATICS - 1)];
}

static void body_put(struct pmt_pybody *b)
{
	if (b && !--b->refs) {
		pmt_py__code_free(&b->c);
		free(b);
	}
}

static struct pmt_pybody *body_get(struct pmt_pybody *b)
{
	b->refs++;
	return b;
}

void pmt_pycodes__learn(struct pmt_pycodes *t, uint32_t pid, uint32_t id, uint64_t addr,
			uint64_t qualname, const struct pmt_pystatic_key *sk)
{
	struct pmt_pycode *slot = slot_of(t, id);
	struct pmt_pystatic *st = sk ? static_of(t, sk) : NULL;
	struct pmt_pybody *b;

	if (!slot)
		return;
	body_put(slot->b);
	*slot = (struct pmt_pycode){0};
	if (st && st->b && !memcmp(&st->k, sk, sizeof(*sk))) {
		*slot = (struct pmt_pycode){id, addr, body_get(st->b)};
		t->copies++;
		return;
	}
	t->reads++;
	if (!(b = calloc(1, sizeof(*b))))
		return;
	if (pmt_py__read_code(pid, addr, qualname, &b->c)) {
		free(b);
		return;
	}
	b->refs = 1;
	*slot = (struct pmt_pycode){id, addr, b};
	if (st) {
		body_put(st->b);
		st->b = body_get(b);
		st->k = *sk;
	}
}

uint64_t pmt_pycodes__addr(struct pmt_pycodes *t, uint64_t v)
{
	struct pmt_pycode *p = code_of(t, PMT_PY_ID(v));

	return p ? p->addr : 0;
}

bool pmt_pycodes__frame(struct pmt_pycodes *t, uint64_t v, struct pmt_pyframe *out)
{
	struct pmt_pycode *p = code_of(t, PMT_PY_ID(v));
	const struct pmt_py_code *c;
	int line;

	if (!p)
		return false;
	c = &p->b->c;
	line = pmt_py__line(c->linetable, c->nlinetable, c->firstlineno, PMT_PY_INSTR(v));
	*out = (struct pmt_pyframe){c->qualname, c->filename, (uint32_t)(line > 0 ? line : 0)};
	return true;
}

bool pmt_pycodes__name(struct pmt_pycodes *t, uint64_t v, struct pmt_buf *b)
{
	struct pmt_pyframe f;

	if (!pmt_pycodes__frame(t, v, &f)) {
		pmt_buf__puts(b, "[python]");
		return false;
	}
	pmt_buf__printf(b, f.line ? "%s (%s:%u)" : "%s (%s)", f.name, f.file, f.line);
	return true;
}

void pmt_pycodes__free(struct pmt_pycodes *t)
{
	size_t i;

	if (t->slots)
		for (i = 0; i < PMT_PYCODES; i++)
			body_put(t->slots[i].b);
	free(t->slots);
	t->slots = NULL;
	if (t->statics)
		for (i = 0; i < PMT_PYSTATICS; i++)
			body_put(t->statics[i].b);
	free(t->statics);
	t->statics = NULL;
}
