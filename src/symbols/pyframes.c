// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Python frames: the code objects the kernel's walker met
 * (bpf/python.bpf.h), read from the process (unwind/cpython.c) and named
 * "qualname (file:line)". */
#include <stdlib.h>
#include "symbols/symbols_internal.h"
#include "unwind/cpython.h"

static struct pycode *py_slot(struct pmt_syms *s, uint32_t id)
{
	if (!s->py && !(s->py = calloc(PY_CODES, sizeof(*s->py))))
		return NULL;
	return &s->py[(id * 0x9e3779b1u) >> 20 & (PY_CODES - 1)];
}

/* The code object the kernel calls id, if it was read. */
static struct pycode *py_code(struct pmt_syms *s, uint32_t id)
{
	struct pycode *slot = py_slot(s, id);

	return slot && slot->id == id ? slot : NULL;
}

void pmt_syms__python_code(struct pmt_syms *s, uint32_t pid, uint32_t id, uint64_t addr,
			   uint64_t qualname)
{
	struct pycode *slot;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	slot = py_slot(s, id);
	if (slot) {
		pmt_py__code_free(&slot->c);
		slot->id = 0;
		if (!pmt_py__read_code(pid, addr, qualname, &slot->c)) {
			slot->id = id;
			slot->addr = addr;
		}
	}
	pthread_mutex_unlock(&s->lock);
}

uint64_t pmt_syms__frame_addr(struct pmt_syms *s, uint64_t v)
{
	struct pycode *p;

	if (!s || !syms_is_py_frame(v))
		return v;
	pthread_mutex_lock(&s->lock);
	p = py_code(s, PMT_PY_ID(v));
	v = p ? p->addr : 0;
	pthread_mutex_unlock(&s->lock);
	return v;
}

/* A Python frame value (PMT_PY_FRAME) as a source frame, into
 * s->pyframe: its function, file and line. false when its code object
 * was not read. */
bool syms_py_frame(struct pmt_syms *s, uint64_t v)
{
	struct pycode *p = py_code(s, PMT_PY_ID(v));
	int line;

	if (!p)
		return false;
	line = pmt_py__line(p->c.linetable, p->c.nlinetable, p->c.firstlineno, PMT_PY_INSTR(v));
	s->pyframe = (struct pmt_srcframe){p->c.qualname, p->c.filename,
					   (uint32_t)(line > 0 ? line : 0)};
	return true;
}

/* "qualname (file:line)" of a Python frame value. */
bool syms_py_name(struct pmt_syms *s, uint64_t v, struct pmt_buf *b)
{
	const struct pmt_srcframe *f = &s->pyframe;

	if (!syms_py_frame(s, v)) {
		pmt_buf__puts(b, "[python]");
		return false;
	}
	pmt_buf__printf(b, f->line ? "%s (%s:%u)" : "%s (%s)", f->name, f->file, f->line);
	return true;
}

void syms_py_free(struct pmt_syms *s)
{
	size_t i;

	if (s->py)
		for (i = 0; i < PY_CODES; i++)
			pmt_py__code_free(&s->py[i].c);
	free(s->py);
}
