// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elfutils/libdwfl.h>
#include "output/symbols.h"

struct ksym {
	uint64_t addr;
	size_t name; /* offset in pmt_syms.knames */
};

struct proc {
	uint32_t pid;
	Dwfl *dwfl; /* NULL: the process could not be read */
};

struct pmt_syms {
	struct ksym *ksyms;
	size_t nksyms;
	bool ksyms_read;
	char *knames;	    /* one block holding every kernel name */
	struct proc *procs; /* sorted by pid */
	size_t nprocs, cap;
};

static char *debuginfo_path;
static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

struct pmt_syms *pmt_syms__new(void)
{
	return calloc(1, sizeof(struct pmt_syms));
}

void pmt_syms__free(struct pmt_syms *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nprocs; i++)
		if (s->procs[i].dwfl)
			dwfl_end(s->procs[i].dwfl);
	free(s->procs);
	free(s->ksyms);
	free(s->knames);
	free(s);
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Text symbols of /proc/kallsyms ("ffffffff81000000 T _stext [mod]"). */
static void read_kallsyms(struct pmt_syms *s)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	size_t cap = 0, used = 0, kcap = 0;
	char line[512], type, name[256];
	unsigned long long addr;

	s->ksyms_read = true;
	if (!f)
		return;
	/* names into one growing block, found by offset */
	while (fgets(line, sizeof(line), f)) {
		size_t n;

		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 || !addr)
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (s->nksyms == cap) {
			struct ksym *k =
				realloc(s->ksyms, (cap = cap ? cap * 2 : 65536) * sizeof(*k));

			if (!k)
				break;
			s->ksyms = k;
		}
		n = strlen(name) + 1;
		if (used + n > kcap) {
			char *p = realloc(s->knames, kcap = (kcap + n) * 2);

			if (!p)
				break;
			s->knames = p;
		}
		memcpy(s->knames + used, name, n);
		s->ksyms[s->nksyms].addr = addr;
		s->ksyms[s->nksyms].name = used;
		s->nksyms++;
		used += n;
	}
	fclose(f);
	if (s->nksyms > 1)
		qsort(s->ksyms, s->nksyms, sizeof(*s->ksyms), cmp_ksym);
}

static const struct ksym *ksym_find(struct pmt_syms *s, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!s->ksyms_read)
		read_kallsyms(s);
	hi = s->nksyms;
	/* the last symbol at or below addr */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->ksyms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &s->ksyms[lo - 1] : NULL;
}

static struct proc *proc_find(struct pmt_syms *s, uint32_t pid, size_t *at)
{
	size_t lo = 0, hi = s->nprocs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->procs[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return lo < s->nprocs && s->procs[lo].pid == pid ? &s->procs[lo] : NULL;
}

static struct proc *proc_get(struct pmt_syms *s, uint32_t pid)
{
	struct proc *p;
	size_t at;

	p = proc_find(s, pid, &at);
	if (p)
		return p;
	if (s->nprocs == s->cap) {
		p = realloc(s->procs, (s->cap = s->cap ? s->cap * 2 : 64) * sizeof(*p));
		if (!p)
			return NULL;
		s->procs = p;
	}
	memmove(&s->procs[at + 1], &s->procs[at], (s->nprocs - at) * sizeof(*p));
	s->nprocs++;
	p = &s->procs[at];
	p->pid = pid;
	p->dwfl = dwfl_begin(&proc_callbacks);
	if (p->dwfl) {
		dwfl_report_begin(p->dwfl);
		/* reads /proc/PID/maps now; the files are opened on first use */
		if (dwfl_linux_proc_report(p->dwfl, (pid_t)pid) ||
		    dwfl_report_end(p->dwfl, NULL, NULL)) {
			dwfl_end(p->dwfl);
			p->dwfl = NULL;
		}
	}
	return p;
}

void pmt_syms__note_pid(struct pmt_syms *s, uint32_t pid)
{
	if (s && pid)
		proc_get(s, pid);
}

static void unknown(struct pmt_buf *b, uint64_t addr, bool with_addr)
{
	pmt_buf__puts(b, "[unknown]");
	if (with_addr) {
		pmt_buf__putc(b, ' ');
		pmt_buf__hex(b, addr);
	}
}

bool pmt_syms__name(struct pmt_syms *s, uint32_t pid, uint64_t addr, bool offset,
		    bool with_addr_if_unknown, struct pmt_buf *b)
{
	const char *name = NULL;
	GElf_Off off = 0;
	GElf_Sym sym;
	struct proc *p;

	if (!s) {
		unknown(b, addr, with_addr_if_unknown);
		return false;
	}
	if (pmt_is_kernel_addr(addr)) {
		const struct ksym *k = ksym_find(s, addr);

		if (k) {
			name = s->knames + k->name;
			off = addr - k->addr;
		}
	} else if (pid && (p = proc_get(s, pid)) && p->dwfl) {
		Dwfl_Module *m = dwfl_addrmodule(p->dwfl, addr);

		if (m)
			name = dwfl_module_addrinfo(m, addr, &off, &sym, NULL, NULL, NULL);
	}
	if (!name) {
		unknown(b, addr, with_addr_if_unknown);
		return false;
	}
	pmt_buf__puts(b, name);
	if (offset && off) {
		pmt_buf__puts(b, "+");
		pmt_buf__hex(b, off);
	}
	return true;
}

bool pmt_syms__module(struct pmt_syms *s, uint32_t pid, uint64_t addr, struct pmt_module *m)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *bits;
	Dwarf_Addr start, end, vaddr;
	Dwfl_Module *mod;
	struct proc *p;
	int n, i;

	memset(m, 0, sizeof(*m));
	if (pmt_is_kernel_addr(addr)) {
		m->file = "[kernel.kallsyms]";
		m->start = 0xffff800000000000ULL;
		m->end = UINT64_MAX;
		return true;
	}
	if (!s || !pid || !(p = proc_get(s, pid)) || !p->dwfl ||
	    !(mod = dwfl_addrmodule(p->dwfl, addr)))
		return false;
	m->file = dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, NULL, NULL);
	m->start = start;
	m->end = end;
	dwfl_module_getelf(mod, &vaddr); /* the build-id is read with the ELF */
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	for (i = 0; i < n && i < 20; i++) {
		m->build_id[2 * i] = hex[bits[i] >> 4];
		m->build_id[2 * i + 1] = hex[bits[i] & 15];
	}
	return m->file != NULL;
}
