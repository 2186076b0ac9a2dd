// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <glob.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util/error.h"
#include "util/grow.h"
#include "elf/elfsym.h"
#include "util/machine.h"
#include "util/strutil.h"

static int cmp_sym(const void *a, const void *b)
{
	const struct pmt_elf_sym *x = a, *y = b;

	return strcmp(x->name, y->name);
}

int pmt_elf__vaddr_to_off(Elf *elf, uint64_t va, uint64_t *off)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return -1;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (va >= ph.p_vaddr && va < ph.p_vaddr + ph.p_memsz) {
			*off = va - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -1;
}

/* Append a symbol named name (allocated; NULL: out of memory). */
static int push(struct pmt_elf_syms *out, char *name, uint64_t off, uint64_t size, uint8_t bind)
{
	if (!name)
		return -ENOMEM;
	struct pmt_elf_sym *v = pmt_grow(out->v, &out->cap, out->n, sizeof(*v), 256);

	if (!v) {
		free(name);
		return -ENOMEM;
	}
	out->v = v;
	out->v[out->n++] = (struct pmt_elf_sym){name, off, size, bind};
	return 0;
}

/* A label in code (an assembler entry such as ld.so's _start): named
 * like a function, as perf does. */
static bool is_code_label(Elf *elf, const GElf_Sym *sym)
{
	GElf_Shdr sh;

	return sym->st_name && sym->st_value && sym->st_shndx != SHN_UNDEF &&
	       sym->st_shndx < SHN_LORESERVE && gelf_getshdr(elf_getscn(elf, sym->st_shndx), &sh) &&
	       (sh.sh_flags & SHF_EXECINSTR);
}

static int add_syms(Elf *elf, Elf *phdrs, Elf_Scn *scn, const GElf_Shdr *sh,
		    struct pmt_elf_syms *out)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	GElf_Sym sym;

	for (i = 0; data && i < n; i++) {
		const char *name;
		uint64_t off;
		int type;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if (type == STT_NOTYPE ? !is_code_label(elf, &sym)
				       : (type != STT_FUNC && type != STT_GNU_IFUNC) ||
						 sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		/* '$': ARM's mapping symbols, not names */
		if (!name || !*name || *name == '$' ||
		    pmt_elf__vaddr_to_off(phdrs, sym.st_value, &off))
			continue;
		if (push(out, strdup(name), off, sym.st_size, (uint8_t)GELF_ST_BIND(sym.st_info)))
			return -ENOMEM;
	}
	return 0;
}

static bool is_table(const GElf_Shdr *sh, unsigned int sht)
{
	return sht ? sh->sh_type == sht : sh->sh_type == SHT_SYMTAB || sh->sh_type == SHT_DYNSYM;
}

int pmt_elf__collect(Elf *elf, Elf *phdrs, unsigned int sht, struct pmt_elf_syms *out)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int ret = 0;

	while (!ret && (scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && is_table(&sh, sht))
			ret = add_syms(elf, phdrs ? phdrs : elf, scn, &sh, out);
	return ret;
}

Elf_Scn *pmt_elf__section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t strndx;
	const char *n;

	if (elf_getshdrstrndx(elf, &strndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, sh) && (n = elf_strptr(elf, strndx, sh->sh_name)) &&
		    !strcmp(n, name))
			return scn;
	return NULL;
}

/* x86-64's and arm64's PLT stubs: 16 bytes each, after a header of 16
 * and 32 */
#define PLT_ENTRY 16

int pmt_elf__plt(Elf *elf, struct pmt_elf_syms *out)
{
	GElf_Shdr rsh, psh, dsh;
	Elf_Scn *rela = pmt_elf__section(elf, ".rela.plt", &rsh), *plt, *dyn;
	Elf_Data *rd, *dd;
	uint64_t first, off;
	GElf_Ehdr eh;
	GElf_Rela r;
	GElf_Sym sym;
	size_t i, n;
	char *name;

	if (!gelf_getehdr(elf, &eh) || (eh.e_machine != EM_X86_64 && eh.e_machine != EM_AARCH64) ||
	    !rela || !rsh.sh_entsize)
		return 0;
	/* with IBT the stubs called are in .plt.sec; else .plt, after its
	 * header entry */
	if ((plt = pmt_elf__section(elf, ".plt.sec", &psh)))
		first = psh.sh_addr;
	else if ((plt = pmt_elf__section(elf, ".plt", &psh)))
		first = psh.sh_addr + (eh.e_machine == EM_AARCH64 ? 2 : 1) * PLT_ENTRY;
	else
		return 0;
	dyn = elf_getscn(elf, rsh.sh_link);
	rd = elf_getdata(rela, NULL);
	dd = dyn ? elf_getdata(dyn, NULL) : NULL;
	if (!rd || !dd || !gelf_getshdr(dyn, &dsh) || psh.sh_type != SHT_PROGBITS)
		return 0;
	n = rsh.sh_size / rsh.sh_entsize;
	/* one stub per relocation, in order; IRELATIVE ones have no name */
	for (i = 0; i < n && first + (i + 1) * PLT_ENTRY <= psh.sh_addr + psh.sh_size; i++) {
		const char *sn;

		if (!gelf_getrela(rd, (int)i, &r) || !GELF_R_SYM(r.r_info) ||
		    !gelf_getsym(dd, (int)GELF_R_SYM(r.r_info), &sym) ||
		    !(sn = elf_strptr(elf, dsh.sh_link, sym.st_name)) || !*sn ||
		    pmt_elf__vaddr_to_off(elf, first + i * PLT_ENTRY, &off))
			continue;
		if (asprintf(&name, "%s@plt", sn) < 0 ||
		    push(out, name, off, PLT_ENTRY, STB_GLOBAL))
			return -ENOMEM;
	}
	return 0;
}

int pmt_elf__has_table(Elf *elf, unsigned int sht)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == sht)
			return 1;
	return 0;
}

int pmt_elf__funcs(const char *path, struct pmt_elf_syms *out, struct pmt_error *err)
{
	size_t i, j;
	int fd, ret = 0;
	Elf *elf;

	memset(out, 0, sizeof(*out));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return pmt_error__runtime(err, -EINVAL, "libelf: %s", elf_errmsg(-1));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		pmt_error__usage(err, "cannot open %s: %s", path, strerror(errno));
		return ret;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		pmt_error__usage(err, "%s is not an ELF file (an executable or shared library)",
				 path);
		ret = -EINVAL;
		goto out;
	}
	ret = pmt_elf__collect(elf, NULL, 0, out);
	if (ret) {
		pmt_error__usage(err, "out of memory reading %s", path);
		goto out;
	}
	pmt_sort(out->v, out->n, sizeof(*out->v), cmp_sym);
	for (i = j = 0; i < out->n; i++) {
		if (j && !strcmp(out->v[j - 1].name, out->v[i].name))
			free(out->v[i].name);
		else
			out->v[j++] = out->v[i];
	}
	out->n = j;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	if (ret)
		pmt_elf__free(out);
	return ret;
}

const struct pmt_elf_sym *pmt_elf__find(const struct pmt_elf_syms *s, const char *name)
{
	struct pmt_elf_sym key = {.name = (char *)name};

	return s->n ? bsearch(&key, s->v, s->n, sizeof(key), cmp_sym) : NULL;
}

void pmt_elf__free(struct pmt_elf_syms *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i].name);
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

static bool is_elf(const char *path)
{
	char magic[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool yes = fd >= 0 && read(fd, magic, 4) == 4 && !memcmp(magic, "\177ELF", 4);

	if (fd >= 0)
		close(fd);
	return yes;
}

int pmt_elf__locate(const char *name, char *out, size_t len)
{
	static const char *const libdirs[] = {
		"/lib/" PMT_MULTIARCH,
		"/usr/lib/" PMT_MULTIARCH,
		"/lib64",
		"/usr/lib64",
		"/lib",
		"/usr/lib",
		"/usr/local/lib",
	};
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL;
	size_t i;

	if (strstr(name, ".so")) {
		for (i = 0; i < sizeof(libdirs) / sizeof(libdirs[0]); i++) {
			snprintf(out, len, "%s/%s", libdirs[i], name);
			if (!faccessat(AT_FDCWD, out, R_OK, AT_EACCESS))
				return 0;
		}
		return -ENOENT;
	}
	copy = strdup(path ? path : "/usr/bin:/bin");
	for (dir = copy ? strtok_r(copy, ":", &save) : NULL; dir;
	     dir = strtok_r(NULL, ":", &save)) {
		snprintf(out, len, "%s/%s", dir, name);
		/* scripts (a pyenv shim) are passed over for the ELF file */
		if (!faccessat(AT_FDCWD, out, X_OK, AT_EACCESS) && is_elf(out)) {
			free(copy);
			return 0;
		}
	}
	free(copy);
	/* a library by its name alone, as bpftrace takes uprobe:libc:...:
	 * NAME.so's ELF file (libc.so is a linker script), or NAME.so.N's */
	for (i = 0; i < sizeof(libdirs) / sizeof(libdirs[0]); i++) {
		glob_t g;
		size_t k;
		bool hit = false;

		snprintf(out, len, "%s/%s.so*", libdirs[i], name);
		if (glob(out, 0, NULL, &g))
			continue;
		for (k = 0; k < g.gl_pathc && !hit; k++)
			if ((hit = is_elf(g.gl_pathv[k])))
				snprintf(out, len, "%s", g.gl_pathv[k]);
		globfree(&g);
		if (hit)
			return 0;
	}
	return -ENOENT;
}

/* dir with $ORIGIN (or ${ORIGIN}) made the directory of the file */
static void expand_origin(const char *dir, const char *file, char *out, size_t len)
{
	const char *slash = strrchr(file, '/');
	int olen = slash ? (int)(slash - file) : 1;
	const char *o = slash ? file : ".";

	if (!strncmp(dir, "$ORIGIN", 7))
		snprintf(out, len, "%.*s%s", olen, o, dir + 7);
	else if (!strncmp(dir, "${ORIGIN}", 9))
		snprintf(out, len, "%.*s%s", olen, o, dir + 9);
	else
		snprintf(out, len, "%s", dir);
}

int pmt_elf__needed(const char *path, pmt_elf_needed_fn fn, void *ctx)
{
	char runpath[1024] = "", found[2 * PATH_MAX], dir[PATH_MAX];
	const char *needed[64];
	size_t nneeded = 0, i, k;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf *elf;
	int fd;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		GElf_Dyn dyn;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (k = 0; gelf_getdyn(d, (int)k, &dyn); k++) {
			const char *str = dyn.d_tag == DT_NEEDED || dyn.d_tag == DT_RUNPATH ||
							  dyn.d_tag == DT_RPATH
						  ? elf_strptr(elf, sh.sh_link, dyn.d_un.d_val)
						  : NULL;

			if (!str)
				continue;
			if (dyn.d_tag == DT_NEEDED && nneeded < sizeof(needed) / sizeof(needed[0]))
				needed[nneeded++] = str;
			else if (dyn.d_tag != DT_NEEDED && !runpath[0])
				snprintf(runpath, sizeof(runpath), "%s", str);
		}
	}
	/* each as the loader finds it: the file's run path, then the
	 * usual directories (ld.so.cache holds the same on Debian) */
	for (i = 0; i < nneeded; i++) {
		char *copy = strdup(runpath), *d, *save = NULL;
		bool done = false;

		for (d = copy ? strtok_r(copy, ":", &save) : NULL; d && !done;
		     d = strtok_r(NULL, ":", &save)) {
			expand_origin(d, path, dir, sizeof(dir));
			snprintf(found, sizeof(found), "%s/%s", dir, needed[i]);
			if (!faccessat(AT_FDCWD, found, R_OK, AT_EACCESS))
				done = true;
		}
		free(copy);
		if (done ||
		    (!strchr(needed[i], '/') && !pmt_elf__locate(needed[i], found, sizeof(found))))
			fn(ctx, found);
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return 0;
}

int pmt_elf__resolve(const char *file, char *path, size_t len)
{
	char found[PATH_MAX], real[PATH_MAX];

	if (!strchr(file, '/')) {
		if (pmt_elf__locate(file, found, sizeof(found)))
			return -ENOENT;
		file = found;
	}
	if (!realpath(file, real))
		return -errno;
	if (strlen(real) >= len)
		return -ENAMETOOLONG;
	strcpy(path, real);
	return 0;
}

int pmt_elf__loads(int fd, struct pmt_elf_loads *out)
{
	Elf *elf;
	size_t i, n;
	GElf_Phdr ph;

	out->n = 0;
	if (elf_version(EV_CURRENT) == EV_NONE || !(elf = elf_begin(fd, ELF_C_READ_MMAP, NULL)))
		return -EINVAL;
	if (elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &n)) {
		elf_end(elf);
		return -EINVAL;
	}
	for (i = 0; i < n && out->n < PMT_ELF_LOADS; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
			out->v[out->n].off = ph.p_offset;
			out->v[out->n].vaddr = ph.p_vaddr;
			out->v[out->n++].filesz = ph.p_filesz;
		}
	elf_end(elf);
	return 0;
}

bool pmt_elf__vaddr_in_file(const struct pmt_elf_loads *l, uint64_t start, uint64_t pgoff,
			    uint64_t addr, uint64_t *vaddr)
{
	uint64_t bias, va;
	int i, at = -1;

	for (i = 0; i < l->n && at < 0; i++)
		if (pgoff >= l->v[i].off && pgoff - l->v[i].off < l->v[i].filesz)
			at = i;
	if (at < 0)
		return false;
	/* the address of file offset pgoff less its virtual address */
	bias = start - (l->v[at].vaddr + (pgoff - l->v[at].off));
	va = addr - bias;
	for (i = 0; i < l->n; i++)
		if (va >= l->v[i].vaddr && va - l->v[i].vaddr < l->v[i].filesz) {
			*vaddr = va;
			return true;
		}
	return false;
}
