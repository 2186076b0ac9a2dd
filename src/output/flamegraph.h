/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Flame graphs: folded stacks ("comm;outer;inner", count) drawn as one
 * self-contained interactive SVG: hover shows a frame's name, samples and
 * share; click zooms into a frame; a search box highlights matches.
 */
#ifndef PMT_FLAMEGRAPH_H
#define PMT_FLAMEGRAPH_H

#include <stddef.h>
#include <stdint.h>
#include "util/strutil.h"

struct pmt_flame_stack {
	const char *folded; /* frames, root first, separated by ';' */
	uint64_t count;
};

/* Append the SVG document to b. Pure: unit-tested. -ENOMEM. */
int pmt_flame__svg(struct pmt_buf *b, const struct pmt_flame_stack *st, size_t n,
		   const char *title);
/* Write it to path. -errno. */
int pmt_flame__write_file(const char *path, const struct pmt_flame_stack *st, size_t n,
			  const char *title);

#endif
