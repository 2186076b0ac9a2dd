/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The code objects the kernel's walker met (bpf/python.bpf.h), read from
 * their processes while they live (python/cpython.c), and the Python
 * frames the kernel wrote named by them: "qualname (file:line)".
 *
 * A frame value (PMT_PY_FRAME in abi.h) carries the code object's id and
 * the instruction; the table keeps PMT_PYCODES objects by id, one that
 * falls on a taken slot replacing it. Its owner (symbols/) locks around
 * every call.
 */
#ifndef PMT_PYCODES_H
#define PMT_PYCODES_H

#include <stdbool.h>
#include <stdint.h>
#include "python/cpython.h"
#include "util/strutil.h"

#define PMT_PYCODES 4096

/* A code object's names and line table, shared by the slots of every
 * process that runs it (an interpreter file's own, below: read once) */
struct pmt_pybody {
	uint32_t refs;
	struct pmt_py_code c;
};

struct pmt_pycode {
	uint32_t id; /* the kernel's (abi.h); 0: empty */
	uint64_t addr;
	struct pmt_pybody *b;
};

/* A code object in the interpreter file's own initialized data: one
 * deep-frozen when CPython was built (3.11 freezes importlib and the
 * modules its start-up imports), immutable, at the same virtual
 * address of the file in every process that runs it. The file and that
 * address, and its qualname object's, which must match too. */
struct pmt_pystatic_key {
	uint64_t dev, ino, vaddr, qualname;
};

#define PMT_PYSTATICS 1024

struct pmt_pystatic {
	struct pmt_pystatic_key k;
	struct pmt_pybody *b; /* NULL: none */
};

struct pmt_pycodes {
	struct pmt_pycode *slots; /* PMT_PYCODES, made at first use */
	/* PMT_PYSTATICS code objects of interpreter files, by key: read
	 * from the first process met, shared by every other (a short
	 * python3 run meets a dozen, each read with a few system calls) */
	struct pmt_pystatic *statics;
	uint64_t reads, copies; /* code objects read from processes; shared */
};

/* A named Python frame: pointers into the table, valid until its next
 * change. */
struct pmt_pyframe {
	const char *name, *file;
	uint32_t line; /* 0: unknown */
};

/* The code object the kernel calls id, at addr in process pid (its
 * qualname object at qualname), read now; or shared, when sk (NULL:
 * none) says it is an interpreter file's own and it was read before. */
void pmt_pycodes__learn(struct pmt_pycodes *t, uint32_t pid, uint32_t id, uint64_t addr,
			uint64_t qualname, const struct pmt_pystatic_key *sk);
/* The code object's address of a frame value, 0 when it was not read. */
uint64_t pmt_pycodes__addr(struct pmt_pycodes *t, uint64_t v);
/* The frame value's function, file and line; false when its code object
 * was not read. */
bool pmt_pycodes__frame(struct pmt_pycodes *t, uint64_t v, struct pmt_pyframe *out);
/* "qualname (file:line)", or "[python]" (false) when not read. */
bool pmt_pycodes__name(struct pmt_pycodes *t, uint64_t v, struct pmt_buf *b);
void pmt_pycodes__free(struct pmt_pycodes *t);

#endif
