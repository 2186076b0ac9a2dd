/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A streamed record's addresses named, as data: the event loop fills it
 * before any output sees the record, and output only lays it out (perf
 * script's "sym" of a sample's ip, and its -g stack: inlined frames
 * first, each frame's file and line and the file its code lies in).
 * Strings are offsets into text, which owns them; one is reused from
 * record to record.
 */
#ifndef PMT_NAMED_H
#define PMT_NAMED_H

#include <stdbool.h>
#include <stdint.h>
#include "util/strutil.h"

struct pmt_syms;

#define PMT_NAMED_NONE UINT32_MAX /* no such string */

struct pmt_named_frame {
	uint64_t addr; /* as shown (a Python frame's: its code object's) */
	uint32_t name; /* offset in text */
	uint32_t dso;  /* the file its code lies in, or PMT_NAMED_NONE */
	uint32_t file; /* its source file, or PMT_NAMED_NONE */
	uint32_t line; /* 0: unknown */
	bool inlined;  /* a function inlined at the next frame's address */
	bool kernel;   /* a kernel frame */
};

struct pmt_named {
	struct pmt_buf text; /* the strings, each NUL-terminated */
	uint32_t sym;	     /* the record's address by name, or PMT_NAMED_NONE */
	bool stack;	     /* a stack was asked for (JSON shows an empty one) */
	struct pmt_named_frame *v;
	size_t n, cap;
};

/* Empty it for the next record (its memory kept). */
void pmt_named__reset(struct pmt_named *nm);
/* Name addr of process pid as the record's "sym". */
void pmt_named__sym(struct pmt_named *nm, struct pmt_syms *syms, uint32_t pid, uint64_t addr);
/* Name n frames of process pid, innermost first, the first nkernel the
 * kernel's; where: each frame's file, source file and line too (what
 * JSON shows). */
void pmt_named__frames(struct pmt_named *nm, struct pmt_syms *syms, uint32_t pid,
		       const uint64_t *frames, uint32_t n, uint32_t nkernel, bool where);
/* The string at an offset (NULL for PMT_NAMED_NONE). */
static inline const char *pmt_named__str(const struct pmt_named *nm, uint32_t off)
{
	return off == PMT_NAMED_NONE ? NULL : nm->text.p + off;
}
void pmt_named__free(struct pmt_named *nm);

#endif
