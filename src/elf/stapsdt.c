// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * .note.stapsdt readers (see usdt.h). A note (owner "stapsdt", type 3)
 * holds the probe's address, the link-time address of .stapsdt.base, the
 * semaphore's address (4 bytes each on ELF32, 8 on ELF64), then three
 * NUL-terminated strings: provider, name, arguments.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util/grow.h"
#include "elf/stapsdt.h"

#define NT_STAPSDT 3

/* Can libbpf 1.1 read this operand? It takes %REG, OFF(%REG), (%REG) and
 * $IMM; base+index (SIB) and symbol-relative forms came later. */
static bool operand_readable(const char *op, size_t len)
{
	const char *paren = memchr(op, '(', len);
	size_t i;

	if (memchr(op, ',', len))
		return false;
	for (i = 0; paren && op + i < paren; i++)
		if (!(op[i] == '-' || (op[i] >= '0' && op[i] <= '9')))
			return false;
	return len > 0;
}

int pmt_usdt__parse_args(const char *spec, struct pmt_usdt_arg *args, int max)
{
	const char *s = spec;
	int n = 0;

	while (*s) {
		const char *at, *end, *op;
		char *num_end;
		long sz;

		while (*s == ' ')
			s++;
		if (!*s)
			break;
		end = strchr(s, ' ');
		if (!end)
			end = s + strlen(s);
		if (n >= max)
			return -EINVAL;
		at = memchr(s, '@', (size_t)(end - s));
		/* "N@OP"; an operand alone (old notes) is a long */
		sz = at ? strtol(s, &num_end, 10) : 8;
		if (at && num_end != at)
			return -EINVAL;
		if (sz != 1 && sz != 2 && sz != 4 && sz != 8 && sz != -1 && sz != -2 && sz != -4 &&
		    sz != -8)
			return -EINVAL;
		op = at ? at + 1 : s;
		args[n].is_signed = sz < 0;
		args[n].size = (uint8_t)(sz < 0 ? -sz : sz);
		args[n].readable = operand_readable(op, (size_t)(end - op));
		snprintf(args[n].spec, sizeof(args[n].spec), "%.*s", (int)(end - s), s);
		n++;
		s = end;
	}
	return n;
}

const char *pmt_usdt__type(const struct pmt_usdt_arg *a)
{
	static const char *const names[2][9] = {
		{[1] = "u8", [2] = "u16", [4] = "u32", [8] = "u64"},
		{[1] = "s8", [2] = "s16", [4] = "s32", [8] = "s64"},
	};
	const char *t = a->size <= 8 ? names[a->is_signed][a->size] : NULL;

	return t ? t : "?";
}

static int cmp_note(const void *a, const void *b)
{
	const struct pmt_usdt_note *x = a, *y = b;
	int c = strcmp(x->provider, y->provider);

	return c ? c : strcmp(x->name, y->name);
}

/* One note's descriptor into out (its strings copied). 0, 1 (not a probe
 * this reader can use: skipped), or -ENOMEM. */
static int parse_note(const uint8_t *d, size_t len, int cls, struct pmt_usdt_note *out)
{
	size_t w = cls == ELFCLASS32 ? 4 : 8, plen, nlen;
	const char *prov, *name, *args;
	uint64_t v[3] = {0};
	int i, n;

	if (len < 3 * w + 3)
		return 1;
	for (i = 0; i < 3; i++) {
		uint32_t v32;

		if (w == 4) {
			memcpy(&v32, d + i * w, 4);
			v[i] = v32;
		} else {
			memcpy(&v[i], d + i * w, 8);
		}
	}
	prov = (const char *)d + 3 * w;
	plen = strnlen(prov, len - 3 * w);
	if (3 * w + plen + 1 >= len)
		return 1;
	name = prov + plen + 1;
	nlen = strnlen(name, len - 3 * w - plen - 1);
	if (3 * w + plen + nlen + 2 > len)
		return 1;
	args = 3 * w + plen + nlen + 2 < len ? name + nlen + 1 : "";
	if (strnlen(args, len - 3 * w - plen - nlen - 2) == len - 3 * w - plen - nlen - 2)
		args = ""; /* not terminated */
	n = pmt_usdt__parse_args(args, out->args, PMT_USDT_MAX_ARGS);
	if (n < 0)
		return 1;
	out->nargs = n;
	out->unreadable = -1;
	for (i = 0; i < n && out->unreadable < 0; i++)
		if (!out->args[i].readable)
			out->unreadable = i;
	out->pc = v[0];
	out->semaphore = v[2];
	out->sites = 1;
	out->provider = strdup(prov);
	out->name = strdup(name);
	if (!out->provider || !out->name) {
		free(out->provider);
		free(out->name);
		return -ENOMEM;
	}
	return 0;
}

/* Every stapsdt note of section scn appended to *v. 0 or -ENOMEM. */
static int read_section(Elf_Scn *scn, int cls, struct pmt_usdt_note **v, size_t *n, size_t *cap)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *owner = (const char *)data->d_buf + name_off;
		int r;

		if (nh.n_type != NT_STAPSDT || nh.n_namesz != 8 || memcmp(owner, "stapsdt", 8))
			continue;
		struct pmt_usdt_note *nv = pmt_grow(*v, cap, *n, sizeof(**v), 16);

		if (!nv)
			return -ENOMEM;
		*v = nv;
		memset(&(*v)[*n], 0, sizeof(**v));
		r = parse_note((const uint8_t *)data->d_buf + desc_off, nh.n_descsz, cls,
			       &(*v)[*n]);
		if (r < 0)
			return r;
		if (!r)
			(*n)++;
	}
	return 0;
}

/* Sorted by provider:name, one entry each, its sites counted. */
static void merge_sites(struct pmt_usdt_notes *out)
{
	size_t i, j;

	pmt_sort(out->v, out->n, sizeof(*out->v), cmp_note);
	for (i = j = 0; i < out->n; i++) {
		if (j && !cmp_note(&out->v[j - 1], &out->v[i])) {
			out->v[j - 1].sites++;
			if (out->v[j - 1].unreadable < 0 && out->v[i].unreadable >= 0) {
				out->v[j - 1].unreadable = out->v[i].unreadable;
				memcpy(out->v[j - 1].args, out->v[i].args, sizeof(out->v[i].args));
			}
			free(out->v[i].provider);
			free(out->v[i].name);
		} else {
			out->v[j++] = out->v[i];
		}
	}
	out->n = j;
}

static int read_elf(Elf *elf, struct pmt_usdt_notes *out)
{
	int cls = gelf_getclass(elf);
	size_t shstrndx, cap = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int r = 0;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while (!r && (scn = elf_nextscn(elf, scn))) {
		const char *sname;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		sname = elf_strptr(elf, shstrndx, sh.sh_name);
		if (sname && !strcmp(sname, ".note.stapsdt"))
			r = read_section(scn, cls, &out->v, &out->n, &cap);
	}
	return r;
}

int pmt_usdt__read(const char *path, struct pmt_usdt_notes *out, struct pmt_error *err)
{
	Elf *elf = NULL;
	int fd, r;

	memset(out, 0, sizeof(*out));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return pmt_error__runtime(err, -EIO, "libelf: %s", elf_errmsg(-1));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pmt_error__usage(err, "cannot open %s: %s", path, strerror(errno));
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		r = pmt_error__usage(err, "%s is not an ELF file (an executable or shared library)",
				     path);
	} else if ((r = read_elf(elf, out))) {
		pmt_error__runtime(err, r, "out of memory reading the notes of %s", path);
	}
	if (elf)
		elf_end(elf);
	close(fd);
	if (r)
		pmt_usdt__free(out);
	else
		merge_sites(out);
	return r;
}

void pmt_usdt__free(struct pmt_usdt_notes *n)
{
	size_t i;

	for (i = 0; i < n->n; i++) {
		free(n->v[i].provider);
		free(n->v[i].name);
	}
	free(n->v);
	memset(n, 0, sizeof(*n));
}
