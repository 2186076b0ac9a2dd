/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Function symbols of an ELF file (executable or shared library), with
 * the file offsets uprobes attach at. */
#ifndef PMT_ELFSYM_H
#define PMT_ELFSYM_H

#include "util/error.h"
#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

struct pmt_elf_sym {
	char *name;
	uint64_t off;  /* file offset of the first instruction */
	uint64_t size; /* bytes of code, 0 when the symbol does not say */
	uint8_t bind;  /* STB_LOCAL, STB_GLOBAL, STB_WEAK */
};

struct pmt_elf_syms {
	struct pmt_elf_sym *v; /* pmt_elf__funcs: sorted by name, one each */
	size_t n, cap;
};

/* Defined functions of .symtab and .dynsym. -errno with a message in err. */
int pmt_elf__funcs(const char *path, struct pmt_elf_syms *out, struct pmt_error *err);
const struct pmt_elf_sym *pmt_elf__find(const struct pmt_elf_syms *s, const char *name);
void pmt_elf__free(struct pmt_elf_syms *s);

/* Defined functions of elf's symbol tables of type sht (SHT_SYMTAB,
 * SHT_DYNSYM; 0: both, a function of both twice) appended to out (not
 * sorted), at the file offsets the program headers of phdrs give (a
 * separate debug file's symbols with the file's own headers). 0 or
 * -ENOMEM. */
int pmt_elf__collect(Elf *elf, Elf *phdrs, unsigned int sht, struct pmt_elf_syms *out);
/* The PLT stubs of elf (x86-64) as perf names them, "func@plt", appended
 * to out. 0 or -ENOMEM. */
int pmt_elf__plt(Elf *elf, struct pmt_elf_syms *out);
/* The section named name, with its header into sh; NULL if none. */
Elf_Scn *pmt_elf__section(Elf *elf, const char *name, GElf_Shdr *sh);
/* Has elf a table of type sht? */
int pmt_elf__has_table(Elf *elf, unsigned int sht);

/* vaddr -> file offset through the executable PT_LOAD segment holding
 * it; -1 when none does. */
int pmt_elf__vaddr_to_off(Elf *elf, uint64_t va, uint64_t *off);

/* Where a file's PT_LOAD segments' initialized bytes lie */
#define PMT_ELF_LOADS 8
struct pmt_elf_loads {
	int n;
	struct {
		uint64_t off, vaddr, filesz;
	} v[PMT_ELF_LOADS];
};
/* The ELF file open at fd's first PT_LOAD segments. -errno. */
int pmt_elf__loads(int fd, struct pmt_elf_loads *out);
/* addr, in a process that maps the file's offset pgoff at start: the
 * file's virtual address there (*vaddr), when it lies in the bytes a
 * PT_LOAD segment maps from the file (its p_filesz, not the memory the
 * process has beyond them). */
bool pmt_elf__vaddr_in_file(const struct pmt_elf_loads *l, uint64_t start, uint64_t pgoff,
			    uint64_t addr, uint64_t *vaddr);

/* A binary named without a '/': found in $PATH, or (a library) in the
 * usual library directories, NAME.so... for a bare NAME (libc: libc.so.6)
 * as bpftrace finds it. Fills out; -ENOENT. */
int pmt_elf__locate(const char *name, char *out, size_t len);
/* The libraries file path needs (DT_NEEDED), each as the dynamic loader
 * finds it (its DT_RUNPATH or DT_RPATH, $ORIGIN expanded, then the usual
 * library directories): fn(ctx, found path) for each found. -errno when
 * the file cannot be read. */
typedef void (*pmt_elf_needed_fn)(void *ctx, const char *path);
int pmt_elf__needed(const char *path, pmt_elf_needed_fn fn, void *ctx);
/* The file a user names (--uprobe, --usdt, --list usdt:): a path, or a
 * name located as above; made absolute, links resolved. -errno. */
int pmt_elf__resolve(const char *file, char *path, size_t len);

#endif
