/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Writing the Prometheus text format 0.0.4 and OpenMetrics 1.0. */
#ifndef PMT_EXPOSITION_H
#define PMT_EXPOSITION_H

#include <stdbool.h>
#include "util/strutil.h"

#define PMT_EXPO_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define PMT_EXPO_OM_CONTENT_TYPE "application/openmetrics-text; version=1.0.0; charset=utf-8"

/* A label value's bytes, escaped (without the quotes). */
void pmt_expo__label_value(struct pmt_buf *b, const char *s, size_t n);
/* HELP, TYPE (and for OpenMetrics UNIT, may be NULL) of a family. name is
 * its sample name: a counter's ends in _total, which OpenMetrics drops
 * from the family's name. om: OpenMetrics. */
void pmt_expo__family(struct pmt_buf *b, const char *name, const char *type, const char *unit,
		      const char *help, bool om);

#endif
