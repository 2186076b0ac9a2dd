// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dwarf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <elfutils/libdw.h>
#include "symbols/debugcache.h"
#include "symbols/debugfile.h"
#include "symbols/srcline.h"
#include "symbols/symfile.h"
#include "util/grow.h"
#include "util/strutil.h"
#include "util/machine.h"

#define MAX_LOADS 16
/* The pages of files a file's lookups may map (2 MB) before its mapped
 * images are given back to the page cache */
#define DROP_PAGES 512
/* Inlined calls kept from one address to its function (the call site of
 * the outermost is the function's line however many there are). */
#define MAX_CHAIN 64
/* Scopes indexed at once per file (56 bytes each), and CUs: beyond
 * either, the least recently used CU's index goes; a CU with more scopes
 * is walked per address, as without an index. */
#define SCOPE_BUDGET 32768
#define MAX_CUIDX 256
/* Lines of the CUs' line tables libdw may hold for a file (it keeps each
 * CU's table, over 100 bytes a line as it reads it, until the DWARF
 * ends): beyond, the answers are kept and the DWARF begun again. A
 * served profile of a python built with -g (CUs of 71,000 lines) held
 * 16 MB of them, most of an always-on run's peak. */
#define LINE_BUDGET 49152

struct slot {
	uint64_t key; /* offset + 1; 0: empty */
	int n;
	struct pmt_srcframe fr[PMT_SRC_INLINE + 1];
	char *owned[PMT_SRC_INLINE];	 /* demangled names */
	char *paths[PMT_SRC_INLINE + 1]; /* files made absolute */
};

struct load {
	uint64_t off, size, vaddr;
};

/* An answer kept while the DWARF is closed: its strings its own. */
struct kept {
	uint64_t off;
	int n;
	struct pmt_srcframe fr[PMT_SRC_INLINE + 1];
};

/* A function's or inlined call's range, at its depth in the DIE tree. */
struct scope {
	uint64_t lo, hi;
	uint32_t depth;
	bool sub; /* a function; else an inlined call */
	Dwarf_Die die;
};

/* A CU's scopes by lo, with the largest hi up to each: its DIEs walked
 * once, not once an address as dwarf_getscopes walks them. */
struct cuidx {
	Dwarf_Off cu;
	struct scope *v;
	uint64_t *maxhi;
	size_t n;
	uint64_t used; /* the file's tick at its last use */
};

/* A CU's address range (ranges of one CU next to each other merged). */
struct curange {
	uint64_t lo, hi;
	Dwarf_Off cu; /* the CU DIE's offset */
};

struct pmt_srcfile {
	int fd, dfd; /* the file, and its separate debug file (or -1) */
	Elf *elf, *delf;
	Dwarf *dw;
	bool demangle;
	struct pmt_debugcache *dc; /* the owner's, or NULL */
	struct load loads[MAX_LOADS];
	int nloads;
	struct slot *cache; /* PMT_SRC_CACHE slots */
	struct cuidx idx[MAX_CUIDX];
	size_t nidx, scopes;
	uint64_t tick;
	bool no_index;
	/* The CUs by address, made from their own ranges at the first
	 * address dwarf_addrdie places in none: it reads .debug_aranges
	 * alone (elfutils 0.188), which clang does not emit by default.
	 * Only where the file has no .debug_aranges: gcc's list every CU,
	 * and an address they do not hold is in none (a PLT entry,
	 * libgcc's soft float in libc), where a walk of libc's 4,126 CUs
	 * read every CU's DIE and abbreviations (megabytes a print). */
	struct curange *cur;
	size_t ncur;
	bool cur_made;
	/* the CUs whose line tables libdw holds (sorted offsets) and their
	 * lines in all, against LINE_BUDGET */
	Dwarf_Off *lcu;
	size_t nlcu, lcucap, lines, line_budget;
	unsigned long restarts;
	/* The answers of the slots, by offset, kept when the DWARF is
	 * closed (pmt_srcfile__sleep): a print names the addresses it named
	 * before without opening it again (decompressing a debug file's
	 * sections is most of a print's CPU and memory). At most
	 * PMT_SRC_KEPT. */
	struct kept *kept;
	size_t nkept;
	/* the pages of files the lookups mapped since the images were last
	 * given back (the kernel maps more than a fault's page: fault-around,
	 * a large folio), and which images are mapped files */
	long mapped;
	bool elf_mapped, delf_mapped;
};

/* Whether libelf mapped e's file (ELF_C_READ_MMAP falls back to reading
 * it into memory where it cannot): its image starts a mapping of fd's
 * file in /proc/self/maps. Only such an image is given back. */
static bool image_mapped(Elf *e, int fd)
{
	char line[512], *p;
	size_t n;
	unsigned long lo, ino;
	struct stat st;
	bool yes = false;
	FILE *m;

	p = e && fd >= 0 ? elf_rawfile(e, &n) : NULL;
	if (!p || fstat(fd, &st) || !(m = fopen("/proc/self/maps", "re")))
		return false;
	while (!yes && fgets(line, sizeof(line), m))
		yes = sscanf(line, "%lx-%*x %*s %*s %*s %lu", &lo, &ino) == 2 &&
		      lo == (uintptr_t)p && ino == st.st_ino;
	fclose(m);
	return yes;
}

static bool read_loads(struct pmt_srcfile *f)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(f->elf, &n))
		return false;
	for (i = 0; i < n && f->nloads < MAX_LOADS; i++)
		if (gelf_getphdr(f->elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			f->loads[f->nloads++] = (struct load){ph.p_offset, ph.p_filesz, ph.p_vaddr};
	return f->nloads > 0;
}

/* The file at *fd (ELF *elf) swapped for its copy with its sections
 * uncompressed (symbols/debugcache.h), where there is one: libdw then
 * maps them, where it would inflate them all into memory. */
static void uncompressed(struct pmt_srcfile *f, int *fd, Elf **elf)
{
	int cfd = pmt_debugcache__open(f->dc, *fd, *elf);
	Elf *e;

	if (cfd < 0)
		return;
	e = elf_begin(cfd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		close(cfd);
		return;
	}
	elf_end(*elf);
	close(*fd);
	*elf = e;
	*fd = cfd;
}

/* The DWARF of the debug file at debug, else of the one found for the
 * file at path. */
static Dwarf *debug_file(struct pmt_srcfile *f, const char *path, const char *debug)
{
	char *found = NULL;

	f->dfd = debug ? open(debug, O_RDONLY | O_CLOEXEC)
		       : pmt_debugfile__open(f->elf, path, &found);
	free(found);
	if (f->dfd < 0)
		return NULL;
	f->delf = elf_begin(f->dfd, ELF_C_READ_MMAP, NULL);
	if (f->delf)
		uncompressed(f, &f->dfd, &f->delf);
	return f->delf ? dwarf_begin_elf(f->delf, DWARF_C_READ, NULL) : NULL;
}

/* The file at fd (duplicated) and its DWARF, into f; false if none. */
static bool open_dwarf(struct pmt_srcfile *f, int fd, const char *path, const char *debug)
{
	f->dfd = -1;
	f->nloads = 0;
	f->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (f->fd >= 0)
		f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (f->elf && elf_kind(f->elf) == ELF_K_ELF && read_loads(f)) {
		uncompressed(f, &f->fd, &f->elf);
		f->dw = dwarf_begin_elf(f->elf, DWARF_C_READ, NULL);
		if (!f->dw)
			f->dw = debug_file(f, path, debug);
	}
	if (f->dw)
		f->cache = calloc(PMT_SRC_CACHE, sizeof(*f->cache));
	f->mapped = 0;
	f->elf_mapped = f->cache && image_mapped(f->elf, f->fd);
	f->delf_mapped = f->cache && image_mapped(f->delf, f->dfd);
	return f->cache != NULL;
}

struct pmt_srcfile *pmt_srcfile__open(int fd, const char *path, const char *debug, bool demangle,
				      struct pmt_debugcache *dc)
{
	struct pmt_srcfile *f;

	if (elf_version(EV_CURRENT) == EV_NONE || !(f = calloc(1, sizeof(*f))))
		return NULL;
	f->demangle = demangle;
	f->dc = dc;
	f->line_budget = LINE_BUDGET;
	if (!open_dwarf(f, fd, path, debug)) {
		pmt_srcfile__free(f);
		return NULL;
	}
	return f;
}

static void slot_clear(struct slot *s)
{
	int i;

	for (i = 0; i < PMT_SRC_INLINE; i++) {
		free(s->owned[i]);
		s->owned[i] = NULL;
	}
	for (i = 0; i <= PMT_SRC_INLINE; i++) {
		free(s->paths[i]);
		s->paths[i] = NULL;
	}
	s->key = 0;
	s->n = 0;
}

static void kept_free(struct pmt_srcfile *f)
{
	size_t i;
	int k;

	for (i = 0; i < f->nkept; i++)
		for (k = 0; k < f->kept[i].n; k++) {
			free((char *)f->kept[i].fr[k].name);
			free((char *)f->kept[i].fr[k].file);
		}
	free(f->kept);
	f->kept = NULL;
	f->nkept = 0;
}

static void cuidx_free(struct cuidx *c)
{
	free(c->v);
	free(c->maxhi);
	*c = (struct cuidx){0};
}

/* What points into the DWARF: the slots, the CUs' indexes and ranges,
 * the line tables counted; then the DWARF itself. */
static void end_dwarf(struct pmt_srcfile *f)
{
	size_t i;

	for (i = 0; i < f->nidx; i++)
		cuidx_free(&f->idx[i]);
	f->nidx = f->scopes = 0;
	if (f->cache)
		for (i = 0; i < PMT_SRC_CACHE; i++)
			slot_clear(&f->cache[i]);
	free(f->cur);
	f->cur = NULL;
	f->ncur = 0;
	f->cur_made = false;
	free(f->lcu);
	f->lcu = NULL;
	f->nlcu = f->lcucap = f->lines = 0;
	if (f->dw)
		dwarf_end(f->dw);
	f->dw = NULL;
}

/* Everything but the answers kept: the DWARF, the ELF, the files. */
static void close_dwarf(struct pmt_srcfile *f)
{
	end_dwarf(f);
	free(f->cache);
	f->cache = NULL;
	if (f->delf)
		elf_end(f->delf);
	if (f->elf)
		elf_end(f->elf);
	if (f->dfd >= 0)
		close(f->dfd);
	if (f->fd >= 0)
		close(f->fd);
	f->delf = f->elf = NULL;
	f->fd = f->dfd = -1;
}

void pmt_srcfile__free(struct pmt_srcfile *f)
{
	if (!f)
		return;
	close_dwarf(f);
	kept_free(f);
	free(f);
}

/* An inlined function's name: its linkage name (demangled as symbols
 * are, or as it is with --no-demangle), else its DWARF name. */
static const char *inline_name(const struct pmt_srcfile *f, Dwarf_Die *d, char **owned)
{
	Dwarf_Attribute a;
	const char *ln = dwarf_formstring(dwarf_attr_integrate(d, DW_AT_linkage_name, &a));
	const char *name;

	if (!ln)
		ln = dwarf_formstring(dwarf_attr_integrate(d, DW_AT_MIPS_linkage_name, &a));
	if (ln && !f->demangle)
		return ln;
	if (ln && (*owned = pmt_symfile__demangle(ln)))
		return *owned;
	name = dwarf_formstring(dwarf_attr_integrate(d, DW_AT_name, &a));
	return name ? name : ln ? ln : "[unknown]";
}

/* A source file's path: relative ones under the unit's directory, as
 * addr2line shows them. */
static const char *path_of(Dwarf_Die *cu, const char *name, char **owned)
{
	Dwarf_Attribute a;
	const char *dir;

	if (!name)
		return "";
	if (name[0] == '/' || !(dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a))) ||
	    asprintf(owned, "%s/%s", dir, name) < 0)
		return name;
	return *owned;
}

/* The source file of an inlined call's call site. */
static const char *call_file(Dwarf_Die *cu, Dwarf_Die *d, char **owned)
{
	Dwarf_Attribute a;
	Dwarf_Files *files;
	Dwarf_Word idx;
	size_t n;

	if (dwarf_formudata(dwarf_attr(d, DW_AT_call_file, &a), &idx) ||
	    dwarf_getsrcfiles(cu, &files, &n) || idx >= n)
		return "";
	return path_of(cu, dwarf_filesrc(files, idx, NULL, NULL), owned);
}

struct walk {
	struct scope *v;
	size_t n, cap;
	bool failed;
};

static void add_ranges(struct walk *w, Dwarf_Die *d, uint32_t depth, bool sub)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	struct scope *g;

	while (!w->failed && (off = dwarf_ranges(d, off, &base, &lo, &hi)) > 0) {
		if (w->n >= SCOPE_BUDGET || !(g = pmt_grow(w->v, &w->cap, w->n, sizeof(*g), 256))) {
			w->failed = true;
			return;
		}
		w->v = g;
		w->v[w->n++] = (struct scope){lo, hi, depth, sub, *d};
	}
}

/* Every function and inlined call under parent, imported units too. */
static void walk_dies(struct walk *w, Dwarf_Die *parent, uint32_t depth)
{
	Dwarf_Attribute a;
	Dwarf_Die d, imp;
	int tag;

	if (depth > 64 || dwarf_child(parent, &d) != 0)
		return;
	do {
		tag = dwarf_tag(&d);
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine)
			add_ranges(w, &d, depth, tag == DW_TAG_subprogram);
		if (tag == DW_TAG_imported_unit) {
			if (dwarf_formref_die(dwarf_attr(&d, DW_AT_import, &a), &imp))
				walk_dies(w, &imp, depth + 1);
		} else if (dwarf_haschildren(&d) > 0) {
			walk_dies(w, &d, depth + 1);
		}
	} while (!w->failed && dwarf_siblingof(&d, &d) == 0);
}

static int scope_cmp(const void *a, const void *b)
{
	const struct scope *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Room for n more scopes: the least recently used indexes go. */
static void cuidx_room(struct pmt_srcfile *f, size_t n)
{
	size_t i, old;

	while (f->nidx && (f->nidx == MAX_CUIDX || f->scopes + n > SCOPE_BUDGET)) {
		for (old = 0, i = 1; i < f->nidx; i++)
			if (f->idx[i].used < f->idx[old].used)
				old = i;
		f->scopes -= f->idx[old].n;
		cuidx_free(&f->idx[old]);
		f->idx[old] = f->idx[--f->nidx];
		f->idx[f->nidx] = (struct cuidx){0};
	}
}

/* The index of cu, made at its first use; NULL: walk per address. */
static struct cuidx *cuidx_of(struct pmt_srcfile *f, Dwarf_Die *cu)
{
	Dwarf_Off key = dwarf_dieoffset(cu);
	struct walk w = {0};
	struct cuidx *c;
	size_t i;

	if (f->no_index)
		return NULL;
	for (i = 0; i < f->nidx; i++)
		if (f->idx[i].cu == key) {
			f->idx[i].used = ++f->tick;
			return &f->idx[i];
		}
	walk_dies(&w, cu, 1);
	if (w.failed || !w.n) {
		free(w.v);
		return NULL;
	}
	cuidx_room(f, w.n);
	c = &f->idx[f->nidx];
	if (!(c->maxhi = malloc(w.n * sizeof(*c->maxhi)))) {
		free(w.v);
		return NULL;
	}
	pmt_sort(w.v, w.n, sizeof(*w.v), scope_cmp);
	for (i = 0; i < w.n; i++)
		c->maxhi[i] = i && c->maxhi[i - 1] > w.v[i].hi ? c->maxhi[i - 1] : w.v[i].hi;
	c->v = w.v;
	c->n = w.n;
	c->cu = key;
	c->used = ++f->tick;
	f->scopes += w.n;
	f->nidx++;
	return c;
}

static int depth_cmp(const void *a, const void *b)
{
	const struct scope *x = *(struct scope *const *)a, *y = *(struct scope *const *)b;

	return x->depth > y->depth ? -1 : x->depth < y->depth;
}

/* The inlined calls at addr, innermost first, up to its function, by
 * the index: the scopes holding addr, deepest first. */
static int chain_indexed(const struct cuidx *c, uint64_t addr, Dwarf_Die *out)
{
	struct scope *hold[MAX_CHAIN];
	size_t lo = 0, hi = c->n, mid, i;
	int n = 0, k = 0;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (c->v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i-- > 0 && c->maxhi[i] > addr && n < MAX_CHAIN;)
		if (c->v[i].hi > addr)
			hold[n++] = &c->v[i];
	pmt_sort(hold, (size_t)n, sizeof(*hold), depth_cmp);
	for (i = 0; i < (size_t)n && !hold[i]->sub; i++)
		out[k++] = hold[i]->die;
	return k;
}

/* The same by dwarf_getscopes: the innermost scope, then its parents as
 * the tree nests them (dwarf_getscopes would go on through an inlined
 * function's abstract definition instead, as eu-addr2line -i knows). */
static int chain_walked(Dwarf_Die *cu, uint64_t addr, Dwarf_Die *out)
{
	Dwarf_Die *scopes = NULL;
	int n, i, k = 0, tag;

	n = dwarf_getscopes(cu, addr, &scopes);
	if (n > 0) {
		Dwarf_Die inner = scopes[0];

		free(scopes);
		scopes = NULL;
		n = dwarf_getscopes_die(&inner, &scopes);
	}
	for (i = 0; i < n && k < MAX_CHAIN; i++) {
		tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_subprogram)
			break;
		if (tag == DW_TAG_inlined_subroutine)
			out[k++] = scopes[i];
	}
	free(scopes);
	return k;
}

static int curange_cmp(const void *a, const void *b)
{
	const struct curange *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* f->cur: every compile unit's ranges by address, those of one CU that
 * follow each other once sorted made one (clang gives a CU a range a
 * function); none where the file has .debug_aranges. Out of memory:
 * what was read so far. */
static void curanges_make(struct pmt_srcfile *f)
{
	Dwarf_Addr base, lo, hi;
	Dwarf_CU *unit = NULL;
	Dwarf_Die cu;
	uint8_t type;
	size_t cap = 0, i, n;
	struct curange *g;
	ptrdiff_t off;
	Dwarf_Aranges *ar;
	size_t nar = 0;

	f->cur_made = true;
	if (dwarf_getaranges(f->dw, &ar, &nar) == 0 && nar > 0)
		return;
	while (dwarf_get_units(f->dw, unit, &unit, NULL, &type, &cu, NULL) == 0) {
		if (type != DW_UT_compile)
			continue;
		for (off = 0; (off = dwarf_ranges(&cu, off, &base, &lo, &hi)) > 0;) {
			if (hi <= lo)
				continue;
			if (!(g = pmt_grow(f->cur, &cap, f->ncur, sizeof(*g), 64)))
				goto sort;
			f->cur = g;
			f->cur[f->ncur++] = (struct curange){lo, hi, dwarf_dieoffset(&cu)};
		}
	}
sort:
	pmt_sort(f->cur, f->ncur, sizeof(*f->cur), curange_cmp);
	for (n = 0, i = 0; i < f->ncur; i++) {
		struct curange *last = n ? &f->cur[n - 1] : NULL;

		if (last && last->cu == f->cur[i].cu)
			last->hi = last->hi > f->cur[i].hi ? last->hi : f->cur[i].hi;
		else
			f->cur[n++] = f->cur[i];
	}
	f->ncur = n;
}

/* The CU whose ranges hold addr, as dwarf_addrdie finds it where the
 * file has .debug_aranges. */
static bool cu_of(struct pmt_srcfile *f, uint64_t addr, Dwarf_Die *cu)
{
	size_t lo = 0, hi, mid;

	if (dwarf_addrdie(f->dw, addr, cu))
		return true;
	if (!f->cur_made)
		curanges_make(f);
	for (hi = f->ncur; lo < hi;) {
		mid = lo + (hi - lo) / 2;
		if (f->cur[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < f->cur[lo - 1].hi && dwarf_offdie(f->dw, f->cur[lo - 1].cu, cu);
}

/* The file's mapped image given back to the page cache: what a lookup
 * touched (libdw reads every CU's header before the one it looks for:
 * megabytes of libc's debug file) leaves this process's RSS; a later
 * lookup maps again what it reads. The image is a read-only private
 * mapping (ELF_C_READ_MMAP): every pointer into it stays good. */
static void drop_image(Elf *e)
{
	size_t n;
	char *p = elf_rawfile(e, &n);

	pmt_pages_give_back(p, n);
}

/* This process's resident pages of files (statm's third field), read
 * through a descriptor held for the process's life; -1 if unknown */
static long file_pages(void)
{
	static int held = -1;
	int fd = __atomic_load_n(&held, __ATOMIC_ACQUIRE), none = -1, i;
	char buf[128], *p = buf, *end;
	long shared = -1;
	ssize_t n;

	if (fd < 0) {
		if ((fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)) < 0)
			return -1;
		/* (another thread's, where it opened one first) */
		if (!__atomic_compare_exchange_n(&held, &none, fd, false, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE)) {
			close(fd);
			fd = none;
		}
	}
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* (size, resident, shared: parsed by hand, at each lookup) */
	for (i = 0; i < 3; i++, p = end)
		if ((shared = strtol(p, &end, 10)) < 0 || end == p)
			return -1;
	return shared;
}

/* cu's line table counted against LINE_BUDGET, once (libdw read it for
 * dwarf_getsrc_die, and holds it) */
static void count_lines(struct pmt_srcfile *f, Dwarf_Die *cu)
{
	Dwarf_Off off = dwarf_dieoffset(cu);
	Dwarf_Lines *lines;
	size_t lo = pmt_count_le(f->lcu, f->nlcu, sizeof(*f->lcu), 0, sizeof(*f->lcu), off), n;

	if (lo && f->lcu[lo - 1] == off)
		return;
	if (dwarf_getsrclines(cu, &lines, &n) != 0)
		n = 0;
	/* (unrecorded when out of memory: counted again, never less) */
	if (pmt_grow_insert((void **)&f->lcu, &f->nlcu, &f->lcucap, sizeof(*f->lcu), lo, 64))
		f->lcu[lo] = off;
	f->lines += n;
}

/* Fill s for address addr (in the DWARF's terms). */
static void lookup(struct pmt_srcfile *f, uint64_t addr, struct slot *s)
{
	Dwarf_Die cu, chain[MAX_CHAIN];
	struct cuidx *c;
	Dwarf_Line *line;
	Dwarf_Attribute a;
	Dwarf_Word ln;
	const char *file = "";
	uint32_t lineno = 0;
	int n, i, k = 0;

	if (!cu_of(f, addr, &cu))
		return;
	line = dwarf_getsrc_die(&cu, addr);
	count_lines(f, &cu);
	if (line) {
		int l = 0;

		file = path_of(&cu, dwarf_linesrc(line, NULL, NULL), &s->paths[0]);
		dwarf_lineno(line, &l);
		lineno = l > 0 ? (uint32_t)l : 0;
	}
	c = cuidx_of(f, &cu);
	n = c ? chain_indexed(c, addr, chain) : chain_walked(&cu, addr, chain);
	for (i = 0; i < n; i++) {
		/* the innermost are kept; the function's line below is still
		 * the outermost call's */
		if (k < PMT_SRC_INLINE) {
			s->fr[k].name = inline_name(f, &chain[i], &s->owned[k]);
			s->fr[k].file = file;
			s->fr[k].line = lineno;
			k++;
		}
		/* the caller is at this call's site */
		free(s->paths[k]);
		s->paths[k] = NULL;
		file = call_file(&cu, &chain[i], &s->paths[k]);
		lineno = dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_line, &a), &ln)
				 ? 0
				 : (uint32_t)ln;
	}
	s->fr[k].name = NULL;
	s->fr[k].file = file;
	s->fr[k].line = lineno;
	s->n = k + 1;
}

static int cmp_kept(const void *a, const void *b)
{
	const struct kept *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

static const struct kept *kept_find(const struct pmt_srcfile *f, uint64_t off)
{
	struct kept key = {.off = off};

	return f->nkept ? bsearch(&key, f->kept, f->nkept, sizeof(*f->kept), cmp_kept) : NULL;
}

/* A slot's answer as a kept one, its strings copied (false: no memory) */
static bool keep_slot(const struct slot *s, struct kept *k)
{
	int i;

	*k = (struct kept){.off = s->key - 1, .n = s->n};
	for (i = 0; i < s->n; i++) {
		k->fr[i].line = s->fr[i].line;
		k->fr[i].name = s->fr[i].name ? strdup(s->fr[i].name) : NULL;
		k->fr[i].file = strdup(s->fr[i].file ? s->fr[i].file : "");
		if ((s->fr[i].name && !k->fr[i].name) || !k->fr[i].file) {
			free((char *)k->fr[i].name);
			free((char *)k->fr[i].file);
			k->n = i;
			return false;
		}
	}
	return true;
}

/* The slots' answers added to those kept (up to PMT_SRC_KEPT) */
static void keep_answers(struct pmt_srcfile *f)
{
	struct kept *v;
	size_t i, n = f->nkept;

	v = realloc(f->kept, (f->nkept + PMT_SRC_CACHE) * sizeof(*v));
	if (v) {
		f->kept = v;
		for (i = 0; i < PMT_SRC_CACHE && n < PMT_SRC_KEPT; i++) {
			const struct slot *s = &f->cache[i];

			if (!s->key || kept_find(f, s->key - 1))
				continue;
			if (!keep_slot(s, &v[n++]))
				break;
		}
		f->nkept = n;
		pmt_sort(f->kept, f->nkept, sizeof(*f->kept), cmp_kept);
		/* room made for a whole cache, given back: kept is what stays */
		if (n && (v = realloc(f->kept, n * sizeof(*v))))
			f->kept = v;
	}
}

/* The line tables past LINE_BUDGET: the answers kept, the DWARF begun
 * again from the same ELF (its files stay open and mapped). False when
 * it cannot be: f is asleep then. */
static bool restart_dwarf(struct pmt_srcfile *f)
{
	keep_answers(f);
	end_dwarf(f);
	f->restarts++;
	f->dw = dwarf_begin_elf(f->delf ? f->delf : f->elf, DWARF_C_READ, NULL);
	if (!f->dw)
		close_dwarf(f);
	return f->dw != NULL;
}

int pmt_srcfile__frames(struct pmt_srcfile *f, uint64_t off, const struct pmt_srcframe **frames)
{
	const struct kept *kp = kept_find(f, off);
	struct slot *s;
	int i;

	if (kp) {
		*frames = kp->fr;
		return kp->n;
	}
	if (!f->dw)
		return -1;
	s = &f->cache[(off * 0x9e3779b97f4a7c15ULL) >> 54 & (PMT_SRC_CACHE - 1)];
	_Static_assert(!(PMT_SRC_CACHE & (PMT_SRC_CACHE - 1)), "slots are masked");
	if (s->key != off + 1) {
		if (f->lines >= f->line_budget && !restart_dwarf(f))
			return -1;
		slot_clear(s);
		s->key = off + 1;
		for (i = 0; i < f->nloads; i++)
			if (off >= f->loads[i].off && off - f->loads[i].off < f->loads[i].size) {
				long pages = file_pages(), now;

				lookup(f, off - f->loads[i].off + f->loads[i].vaddr, s);
				now = file_pages();
				if (pages >= 0 && now > pages)
					f->mapped += now - pages;
				if (f->mapped >= DROP_PAGES) {
					f->mapped = 0;
					if (f->elf_mapped)
						drop_image(f->elf);
					if (f->delf_mapped)
						drop_image(f->delf);
				}
				break;
			}
	}
	*frames = s->fr;
	return s->n;
}

void pmt_srcfile__sleep(struct pmt_srcfile *f)
{
	if (!f->dw)
		return;
	keep_answers(f);
	close_dwarf(f);
}

bool pmt_srcfile__wake(struct pmt_srcfile *f, int fd, const char *path, const char *debug)
{
	if (f->dw)
		return true;
	if (open_dwarf(f, fd, path, debug))
		return true;
	close_dwarf(f);
	return false;
}

bool pmt_srcfile__asleep(const struct pmt_srcfile *f)
{
	return !f->dw;
}

size_t pmt_srcfile__bytes(const struct pmt_srcfile *f)
{
	return sizeof(*f) + (f->cache ? PMT_SRC_CACHE * sizeof(*f->cache) : 0) +
	       f->nkept * sizeof(*f->kept) + f->scopes * (sizeof(struct scope) + sizeof(uint64_t)) +
	       f->ncur * sizeof(*f->cur);
}

void pmt_srcfile__no_index(struct pmt_srcfile *f)
{
	f->no_index = true;
}

unsigned long pmt_srcfile__line_budget(struct pmt_srcfile *f, size_t lines)
{
	f->line_budget = lines;
	return f->restarts;
}
