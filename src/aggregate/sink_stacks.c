// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --folded: "comm;frame;frame count" lines; --flamegraph: the picture. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "aggregate/aggregate_internal.h"
#include "output/flamegraph.h"
#include "util/log.h"

/* A stack's weight: its count, or with --offcpu its microseconds off
 * the CPU (as offcputime -f). */
static uint64_t weight(const struct pmt_agg_snap *s, const struct pmt_agg_group *g)
{
	return s->a->opts->offcpu ? (uint64_t)g->total.sum : g->total.count;
}

static int write_folded(struct pmt_agg_snap *s, struct pmt_output *out)
{
	size_t ng, i;
	const struct pmt_agg_group *g = pmt_agg_snap__groups(s, PMT_FORM_FOLDED, &ng);
	struct pmt_buf b = {0};

	if (!g)
		return -ENOMEM;
	for (i = 0; i < ng; i++) {
		pmt_buf__printf(&b, "%s %llu\n", pmt_agg_snap__text(s, &g[i]),
				(unsigned long long)weight(s, &g[i]));
		pmt_agg__spill(out, &b);
	}
	pmt_output__line(out, b.p, b.len);
	pmt_output__flush(out);
	pmt_buf__free(&b);
	return 0;
}

static int write_flamegraph(struct pmt_agg_snap *s, struct pmt_output *out)
{
	const char *path = s->a->opts->flamegraph;
	size_t ng, i;
	const struct pmt_agg_group *g = pmt_agg_snap__groups(s, PMT_FORM_FOLDED, &ng);
	struct pmt_flame_stack *st = g ? calloc(ng ? ng : 1, sizeof(*st)) : NULL;
	int err;

	(void)out;
	if (!st)
		return pmt_error__runtime(s->err, -ENOMEM, "no memory for the flame graph '%s'",
					  path);
	/* (the picture is made of all of them at once) */
	for (i = 0; i < ng; i++) {
		st[i].folded = strdup(pmt_agg_snap__text(s, &g[i]));
		st[i].count = weight(s, &g[i]);
		if (!st[i].folded) {
			ng = i;
			err = -ENOMEM;
			goto out;
		}
	}
	err = pmt_flame__write_file(path, st, ng,
				    s->a->opts->offcpu ? "Off-CPU Time (us)"
				    : s->a->nprobes    ? s->a->probe_names[0]
						       : "pmtrace");
out:
	for (i = 0; i < ng; i++)
		free((char *)st[i].folded);
	free(st);
	if (err)
		pmt_error__runtime(s->err, err, "cannot write the flame graph to '%s': %s", path,
				   strerror(-err));
	else
		pmt_info("wrote %s: %zu stacks", path, ng);
	return err;
}

const struct pmt_agg_sink pmt_agg_sink_folded = {.name = "folded", .write = write_folded};
const struct pmt_agg_sink pmt_agg_sink_flamegraph = {.name = "flamegraph",
						     .write = write_flamegraph};
