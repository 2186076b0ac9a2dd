/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef PMT_PY311_HEADERS_H
#define PMT_PY311_HEADERS_H

struct pmt_py_layout;
/* CPython 3.11's offsets, from its headers (py311_headers.c). */
void pmt_py311_from_headers(struct pmt_py_layout *l);

#endif
