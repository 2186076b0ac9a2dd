/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Source lines and inlined functions of one ELF file, from its DWARF
 * (its own .debug_info, else its separate debug file: symbols/debugfile.h) through elfutils' libdw: the scopes holding an
 * address, each inlined call's call site
 * (DW_AT_call_file/line) and the line table (dwarf_getsrc_die).
 *
 * The file stays open (mapped) while its owner keeps the object: a
 * symbolizer keeps a few of them (symbols/symbols.c). Answers are cached
 * per address in a fixed table of PMT_SRC_CACHE slots (a slot keeps the
 * last address that fell in it); the scopes of a CU are indexed by
 * address at its first address (one walk of its DIEs, where
 * dwarf_getscopes walks them for every address), a bounded number at
 * once. libdw holds every CU's line table it read until the DWARF ends:
 * past a budget of lines the answers are kept and the DWARF begun again.
 * Memory is bounded however long the run.
 */
#ifndef PMT_SRCLINE_H
#define PMT_SRCLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PMT_SRC_CACHE 1024
/* answers kept per file while its DWARF is closed */
#define PMT_SRC_KEPT 4096
/* inlined calls kept at one address, innermost first; deeper ones are
 * left out (the outermost kept then stands for them) */
#define PMT_SRC_INLINE 8

struct pmt_srcfile;
struct pmt_debugcache;

/* One frame at an address: an inlined function (name from its linkage
 * name, demangled as symbols are, else its DWARF name), or the function
 * holding the address (name NULL: the symbol table names it). file is
 * the source file ("" when unknown), line 0 when unknown. */
struct pmt_srcframe {
	const char *name;
	const char *file;
	uint32_t line;
};

/* The DWARF of the file open at fd (not closed here; the object keeps
 * its own descriptor), found at path (NULL: unknown), else of its debug
 * file: the one at debug (fetched), or the one found (debug NULL).
 * Either read from its copy in dc (NULL: none) where its sections are
 * compressed (symbols/debugcache.h). NULL when neither has DWARF, or
 * memory ran out. */
struct pmt_srcfile *pmt_srcfile__open(int fd, const char *path, const char *debug, bool demangle,
				      struct pmt_debugcache *dc);
void pmt_srcfile__free(struct pmt_srcfile *f);
/* The frames at file offset off, innermost first: the inlined calls,
 * then the function itself (name NULL). Valid until the next call on f.
 * Returns how many (0 when the DWARF does not cover off; -1 when f is
 * asleep and kept no answer for off). */
int pmt_srcfile__frames(struct pmt_srcfile *f, uint64_t off, const struct pmt_srcframe **frames);
/* Close the DWARF and the files, keeping the answers given so far (up to
 * PMT_SRC_KEPT): __frames then gives those, and -1 for any other offset
 * until __wake opens the file at fd again (false: it has no DWARF now).
 * A print of a long run names the same addresses again and again; a
 * debug file's sections decompressed are megabytes. */
void pmt_srcfile__sleep(struct pmt_srcfile *f);
bool pmt_srcfile__wake(struct pmt_srcfile *f, int fd, const char *path, const char *debug);
bool pmt_srcfile__asleep(const struct pmt_srcfile *f);
/* Bytes held by the cache and the index, for the owner's budget. */
size_t pmt_srcfile__bytes(const struct pmt_srcfile *f);
/* For tests: every address by dwarf_getscopes, no index. */
void pmt_srcfile__no_index(struct pmt_srcfile *f);
/* For tests: the lines of line tables libdw may hold before the DWARF
 * is begun again (its answers kept); returns how many times it was. */
unsigned long pmt_srcfile__line_budget(struct pmt_srcfile *f, size_t lines);

#endif
