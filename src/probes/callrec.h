/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Record formats of function probes (struct pmt_call in bpf/abi.h): the
 * argument slots and the return value, named arg0..arg5 and retval, or by
 * the parameter names BTF gives a kernel function (fentry/fexit) or a
 * tracepoint's arguments (tp_btf).
 */
#ifndef PMT_CALLREC_H
#define PMT_CALLREC_H

#include <stdbool.h>
#include <stddef.h>
#include "util/error.h"
#include "tracefs/format.h"

struct btf;

/* kprobes and uprobes: arg0..arg5 at entry, retval at a return. */
struct pmt_format *pmt_callrec__regs_format(const char *name, bool ret);
/* fentry/fexit of BTF function func_id: its parameters by name and type
 * (and arg0..argN, hidden, so filters read the same in either mode), and
 * retval at a return. NULL with a message in err. */
struct pmt_format *pmt_callrec__btf_format(const char *name, const struct btf *btf, int func_id,
					   bool ret, struct pmt_error *err);
/* A typed raw tracepoint (tp_btf) whose arguments BTF prototype proto_id
 * types, its first (void *__data) left out: each argument a slot, named
 * as the prototype names them (arg0..argN where it does not). */
struct pmt_format *pmt_callrec__rawtp_format(const char *name, const struct btf *btf, int proto_id,
					     struct pmt_error *err);

#endif
