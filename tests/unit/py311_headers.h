/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef PMT_PY311_HEADERS_H
#define PMT_PY311_HEADERS_H

#include <stddef.h>
#include <stdint.h>

struct pmt_py_layout;
/* CPython 3.11's offsets, from its headers (py311_headers.c). */
void pmt_py311_from_headers(struct pmt_py_layout *l);

/* Room for a code object, an ASCII file name and a UCS-4 qualname. */
struct pmt_py311_fake {
	_Alignas(16) unsigned char code[256];
	struct {
		_Alignas(16) unsigned char o[48]; /* PyASCIIObject */
		char data[16];
	} ascii;
	struct {
		_Alignas(16) unsigned char o[72]; /* PyCompactUnicodeObject */
		uint32_t data[8];
	} ucs4;
};
/* A code object in f whose qualname is the UCS-4 str of the n (at most
 * 8) characters name, file name "a.py", first line 7: its address. */
uint64_t pmt_py311_fake_code(struct pmt_py311_fake *f, const uint32_t *name, size_t n);

#endif
