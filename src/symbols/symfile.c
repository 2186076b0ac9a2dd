// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>
#include <libiberty/demangle.h>
#include "elf/elfsym.h"
#include "symbols/debugfile.h"
#include "symbols/symfile.h"
#include "util/grow.h"
#include "util/strutil.h"

/* a last symbol without size reaches this far */
#define LAST_REACH 4096

struct entry {
	uint64_t off, end;
	uint32_t name; /* offset in names */
};

struct pmt_symfile {
	struct entry *v;
	size_t n;
	char *names;
	size_t names_len;
	char build_id[41];
	char *debug_path; /* the debug file its symbols came from */
	bool stripped;	  /* no .symtab here nor in a debug file */
};

static size_t underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* Does a make a better name than b for the same address (perf's choice)? */
static bool better(const struct pmt_elf_sym *a, const struct pmt_elf_sym *b)
{
	size_t ua, ub, la, lb;

	if (!a->size != !b->size)
		return a->size;
	if ((a->bind == STB_WEAK) != (b->bind == STB_WEAK))
		return b->bind == STB_WEAK;
	if ((a->bind == STB_GLOBAL) != (b->bind == STB_GLOBAL))
		return a->bind == STB_GLOBAL;
	ua = underscores(a->name);
	ub = underscores(b->name);
	if (ua != ub)
		return ua < ub;
	la = strlen(a->name);
	lb = strlen(b->name);
	if (la != lb)
		return la > lb;
	return strcmp(a->name, b->name) < 0;
}

static int cmp_off(const void *a, const void *b)
{
	const struct pmt_elf_sym *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	/* the best first, so every run of one address starts with it */
	return better(x, y) ? -1 : better(y, x);
}

char *pmt_symfile__demangle(const char *name)
{
	/* C++ (Itanium ABI) and Rust (legacy _ZN...17h<hash>E, v0 _R...);
	 * libiberty's automatic style tries Rust first, and without
	 * DMGL_VERBOSE drops a legacy name's hash, as perf shows it. Without
	 * DMGL_PARAMS the function's own parameter list is left out (the
	 * types inside template arguments stay), as perf script prints. */
	if ((name[0] != '_' || (name[1] != 'Z' && name[1] != 'R')) || strchr(name, '@'))
		return NULL;
	return cplus_demangle(name, DMGL_NO_OPTS);
}

/* The best symbol of each address into f: one name block, one table. */
static int build(struct pmt_symfile *f, struct pmt_elf_syms *s, bool demangle)
{
	size_t i, n = 0, len = 0;
	char *d;

	if (s->n)
		pmt_sort(s->v, s->n, sizeof(*s->v), cmp_off);
	for (i = 0; i < s->n; i++)
		if (!i || s->v[i].off != s->v[i - 1].off) {
			if (demangle && (d = pmt_symfile__demangle(s->v[i].name))) {
				free(s->v[i].name);
				s->v[i].name = d;
			}
			s->v[n++] = s->v[i];
			len += strlen(s->v[i].name) + 1;
		} else {
			free(s->v[i].name);
		}
	s->n = n;
	f->v = calloc(n ? n : 1, sizeof(*f->v));
	f->names = malloc(len ? len : 1);
	if (!f->v || !f->names)
		return -1;
	for (i = 0; i < n; i++) {
		const struct pmt_elf_sym *e = &s->v[i];
		size_t nl = strlen(e->name) + 1;

		f->v[i].off = e->off;
		f->v[i].end = e->size	  ? e->off + e->size
			      : i + 1 < n ? s->v[i + 1].off
					  : e->off + LAST_REACH;
		f->v[i].name = (uint32_t)f->names_len;
		memcpy(f->names + f->names_len, e->name, nl);
		f->names_len += nl;
	}
	f->n = n;
	return 0;
}

/* A stripped file's .symtab lives in its debug file: debug's (a path
 * known to hold it), else the one found as debugfile.h finds them. 1
 * when it was read, 0 when there is none, -ENOMEM. */
static int add_debug_syms(struct pmt_symfile *f, Elf *elf, const char *path, const char *debug,
			  struct pmt_elf_syms *s)
{
	char *found = NULL;
	int fd = debug ? open(debug, O_RDONLY | O_CLOEXEC) : pmt_debugfile__open(elf, path, &found);
	int ret = 0;
	Elf *dbg;

	if (fd < 0)
		return 0;
	dbg = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (dbg && elf_kind(dbg) == ELF_K_ELF && pmt_elf__has_table(dbg, SHT_SYMTAB))
		ret = pmt_elf__collect(dbg, elf, SHT_SYMTAB, s) ?: 1;
	if (dbg)
		elf_end(dbg);
	close(fd);
	if (ret == 1 && !(f->debug_path = found ? found : strdup(debug)))
		ret = -ENOMEM;
	else if (ret != 1)
		free(found);
	return ret;
}

static void read_build_id(struct pmt_symfile *f, Elf *elf)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *bits;
	ssize_t n = dwelf_elf_gnu_build_id(elf, (const void **)&bits);
	ssize_t i;

	for (i = 0; i < n && i < 20; i++) {
		f->build_id[2 * i] = hex[bits[i] >> 4];
		f->build_id[2 * i + 1] = hex[bits[i] & 15];
	}
}

static struct pmt_symfile *from_elf(Elf *elf, const char *path, const char *debug,
				    bool find_debug_file, bool demangle)
{
	struct pmt_elf_syms s = {0};
	struct pmt_symfile *f;
	int err;

	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	read_build_id(f, elf);
	/* as perf: the full table where there is one, else the dynamic */
	if (pmt_elf__has_table(elf, SHT_SYMTAB))
		err = pmt_elf__collect(elf, NULL, SHT_SYMTAB, &s);
	else if (!find_debug_file || !(err = add_debug_syms(f, elf, path, debug, &s))) {
		f->stripped = true;
		err = pmt_elf__collect(elf, NULL, SHT_DYNSYM, &s);
	}
	if (err >= 0)
		err = pmt_elf__plt(elf, &s);
	if (err < 0 || build(f, &s, demangle)) {
		pmt_symfile__free(f);
		f = NULL;
	}
	pmt_elf__free(&s);
	return f;
}

struct pmt_symfile *pmt_symfile__read(int fd, const char *path, const char *debug, bool demangle)
{
	struct pmt_symfile *f;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	f = from_elf(elf, path, debug, true, demangle);
	if (elf)
		elf_end(elf);
	return f;
}

struct pmt_symfile *pmt_symfile__vdso(void)
{
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct pmt_symfile *f;
	Elf *elf;

	if (!eh || elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	/* the image ends with its section headers */
	elf = elf_memory((char *)eh, eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize);
	f = from_elf(elf, NULL, NULL, false, false);
	if (elf)
		elf_end(elf);
	return f;
}

void pmt_symfile__free(struct pmt_symfile *f)
{
	if (!f)
		return;
	free(f->v);
	free(f->names);
	free(f->debug_path);
	free(f);
}

const char *pmt_symfile__name(const struct pmt_symfile *f, uint64_t off, uint64_t *delta)
{
	/* the last symbol starting at or below off */
	size_t lo = pmt_count_le(f->v, f->n, sizeof(*f->v), offsetof(struct entry, off), 8, off);

	if (!lo || off >= f->v[lo - 1].end)
		return NULL;
	*delta = off - f->v[lo - 1].off;
	return f->names + f->v[lo - 1].name;
}

const char *pmt_symfile__build_id(const struct pmt_symfile *f)
{
	return f->build_id;
}

const char *pmt_symfile__debug_path(const struct pmt_symfile *f)
{
	return f->debug_path;
}

bool pmt_symfile__stripped(const struct pmt_symfile *f)
{
	return f->stripped;
}

size_t pmt_symfile__bytes(const struct pmt_symfile *f)
{
	return sizeof(*f) + f->n * sizeof(*f->v) + f->names_len;
}
