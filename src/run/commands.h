/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* --list and --info (commands.c). */
#ifndef PMT_COMMANDS_H
#define PMT_COMMANDS_H

#include "options/opts.h"

/* --list [GLOB] and --info CAT:NAME; return the exit status. */
int pmt_cmd__list(const struct pmt_opts *o);
int pmt_cmd__info(const struct pmt_opts *o);

#endif
