/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef PMT_COMMANDS_H
#define PMT_COMMANDS_H

#include "options/opts.h"
#include "run/evloop.h"

/* --list [GLOB] and --info CAT:NAME; return the exit status. */
int pmt_cmd__list(const struct pmt_opts *o);
int pmt_cmd__info(const struct pmt_opts *o);
/* Losses, warnings and per-probe counts on stderr after a run. */
void pmt_summary__print(struct pmt_evloop *l, struct pmt_session *s);

#endif
