/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CPython interpreters, for Python frames in user stacks: which ELF files
 * are interpreters whose frames can be read (CPython 3.11: its
 * structures' layout below, checked against the interpreter's own headers
 * by a unit test), and code objects read from a process's memory (names,
 * first line, line table) and their lines.
 *
 * Other versions need their own layout: 3.12 moved the current frame from
 * _PyCFrame to PyThreadState (and added shim frames owned by the C
 * stack), 3.13 dropped _PyCFrame and publishes _Py_DebugOffsets in
 * _PyRuntime for tools such as this one. They are recognised (their
 * Py_Version) and said to be unsupported.
 */
#ifndef PMT_CPYTHON_H
#define PMT_CPYTHON_H

#include <stddef.h>
#include <stdint.h>
#include "abi.h"

/* The 3.11 layout: what the kernel reads (struct pmt_py_file's offsets)
 * and what is read here of code, string and bytes objects. */
struct pmt_py_layout {
	struct pmt_py_file k;				    /* runtime, eval_start/end unset */
	uint16_t co_firstlineno, co_filename, co_linetable; /* co_qualname: k's */
	uint16_t str_length, str_state, str_ascii_data, str_compact_data;
	uint16_t bytes_size, bytes_data;
};
const struct pmt_py_layout *pmt_py__layout311(void);

enum pmt_py_probe {
	PMT_PY_NONE,	    /* no CPython in the file */
	PMT_PY_SUPPORTED,   /* a 3.11 interpreter: *out filled */
	PMT_PY_UNSUPPORTED, /* a CPython of another version: *version says which */
};
/* The ELF file open at fd: a CPython interpreter (it exports _PyRuntime
 * and _PyEval_EvalFrameDefault; its Py_Version says the version)? */
enum pmt_py_probe pmt_py__probe(int fd, struct pmt_py_file *out, char *version, size_t len);

struct pmt_py_code {
	char *qualname, *filename;
	int firstlineno;
	uint8_t *linetable;
	size_t nlinetable;
};
/* The code object at addr in process pid's memory, if its qualname is
 * still the object qualname (else it is another code object now: -ESTALE).
 * 0 or -errno. */
int pmt_py__read_code(uint32_t pid, uint64_t addr, uint64_t qualname, struct pmt_py_code *out);
void pmt_py__code_free(struct pmt_py_code *c);
/* The line instruction lasti (in code units) is on, from the line table
 * (3.11's location table, as PyCode_Addr2Line reads it); 0: unknown. */
int pmt_py__line(const uint8_t *table, size_t n, int firstlineno, uint32_t lasti);

#endif
