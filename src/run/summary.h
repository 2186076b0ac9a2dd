/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef PMT_SUMMARY_H
#define PMT_SUMMARY_H

#include "run/evloop.h"

/* Losses, warnings and per-probe counts on stderr after a run. */
void pmt_summary__print(struct pmt_evloop *l, struct pmt_session *s);

#endif
