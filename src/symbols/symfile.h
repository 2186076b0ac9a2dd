/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The function symbols of one ELF file, for naming the addresses of every
 * process that maps it. Read once: the file's .symtab (else the one of
 * its separate debug file, found by build-id under /usr/lib/debug) and
 * .dynsym, kept as one table sorted by file offset; the file itself is
 * not kept open. Of the functions at one address, the one perf would show
 * is kept: a sized one, then non-weak, then global, then the one with
 * fewer leading underscores, then the longer name. A symbol without a
 * size reaches the next one; an address past a symbol's end has no name.
 */
#ifndef PMT_SYMFILE_H
#define PMT_SYMFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pmt_symfile;

/* The file open at fd (not closed here), found at path (NULL when
 * unknown: its debuglink is then not followed); debug: its debug file
 * (fetched), NULL to look for one. NULL when it is no ELF file or
 * memory ran out. demangle: C++ and Rust names as perf shows them
 * (libiberty's cplus_demangle without parameter lists; Rust's hash
 * suffix dropped), else as the file has them. */
struct pmt_symfile *pmt_symfile__read(int fd, const char *path, const char *debug, bool demangle);
/* name demangled as above, malloc'd; NULL when it is no C++ or Rust name
 * (or memory ran out). */
char *pmt_symfile__demangle(const char *name);
/* The vDSO, from this process's own image: the kernel maps the same one
 * into every process. NULL when there is none. */
struct pmt_symfile *pmt_symfile__vdso(void);
void pmt_symfile__free(struct pmt_symfile *f);
/* The function holding file offset off, and off's distance from its
 * start; NULL when none does. */
const char *pmt_symfile__name(const struct pmt_symfile *f, uint64_t off, uint64_t *delta);
/* The debug file the symbols were read from; NULL when none was. */
const char *pmt_symfile__debug_path(const struct pmt_symfile *f);
/* Without a .symtab here or in a debug file: only .dynsym names it (a
 * debuginfod server may have the rest). */
bool pmt_symfile__stripped(const struct pmt_symfile *f);
/* The GNU build-id as hex, "" when the file has none. */
const char *pmt_symfile__build_id(const struct pmt_symfile *f);
/* Bytes held, for the owner's budget. */
size_t pmt_symfile__bytes(const struct pmt_symfile *f);

#endif
