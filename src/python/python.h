/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CPython in the unwinder, the kernel-facing half (python_bpf.c): the
 * files found to be interpreters are told to the kernel (pmt_py_files:
 * their eval loop and _PyRuntime), which then writes the Python frames of
 * their processes' stacks (bpf/python.bpf.h); the code objects it meets
 * first in a process are read while the process lives (pmt_py_new, into
 * symbols/, which names them by python/codes.h).
 *
 * The unwinder (unwind/tables_bpf.c) calls these as it reads each file's
 * tables, polls, and gives back what no process maps. A second
 * interpreter would be a folder of its own behind the same calls.
 */
#ifndef PMT_PYTHON_H
#define PMT_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include "abi.h"
#include "python/cpython.h"

struct pmtrace_bpf;
struct pmt_syms;

/* What a file is, found as its tables are read (no map touched). */
struct pmt_py_found {
	enum pmt_py_probe py;
	struct pmt_py_file file;
	char version[32];
};

/* The Python maps' sizes and the kernel's switch (before load). */
void pmt_python__size(struct pmtrace_bpf *skel, bool on);
/* Is the file open at fd a CPython (a few symbols: quick beside its
 * tables)? Nothing found when Python frames are off (!on). */
void pmt_python__find(int fd, bool on, struct pmt_py_found *f);
/* A CPython found: told to the kernel (or, another version, said to be
 * unsupported), once: f->py is PMT_PY_NONE after. */
void pmt_python__commit(struct pmtrace_bpf *skel, const struct pmt_cfi_file_key *key,
			struct pmt_py_found *f, const char *name);
/* The interpreter of file key, if it is one the kernel knows. */
bool pmt_python__file(struct pmtrace_bpf *skel, const struct pmt_cfi_file_key *key,
		      struct pmt_py_file *out);
/* The code objects the kernel met first in a process, read into syms
 * while the process lives. */
void pmt_python__poll(struct pmtrace_bpf *skel, struct pmt_syms *syms);
/* The interpreters of the files gone(ctx, key) says no process maps (key:
 * a struct pmt_cfi_file_key) are forgotten: a process that maps one
 * again finds it again. */
void pmt_python__forget(struct pmtrace_bpf *skel, bool (*gone)(void *ctx, const void *key),
			void *ctx);

#endif
