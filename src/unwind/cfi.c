// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elfutils/libdw.h>
#include "util/error.h"
#include "util/grow.h"
#include "unwind/cfi.h"
#include "elf/elfsym.h"
#include "util/strutil.h"

/* DWARF register numbers, x86-64 */
enum { REG_RBP = 6, REG_RSP = 7, REG_RA = 16 };

void pmt_cfi__free(struct pmt_cfi *c)
{
	free(c->rows);
	memset(c, 0, sizeof(*c));
}

const struct pmt_cfi_row *pmt_cfi__find(const struct pmt_cfi *c, uint32_t pc)
{
	size_t lo = pmt_count_le(c->rows, c->n, sizeof(*c->rows), offsetof(struct pmt_cfi_row, pc),
				 sizeof(c->rows->pc), pc);

	return lo ? &c->rows[lo - 1] : NULL;
}

/* Read a pointer of .eh_frame_hdr encoding enc at p (vaddr at p: pv,
 * of the header: hv). Only what linkers write: (s|u)data4/8, absolute,
 * pc- or data-relative. */
static int read_enc(const unsigned char **p, const unsigned char *end, uint8_t enc, uint64_t pv,
		    uint64_t hv, uint64_t *out)
{
	uint64_t v;
	size_t sz;

	switch (enc & 0x0f) {
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4: sz = 4; break;
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
	case DW_EH_PE_absptr: sz = 8; break;
	default: return -1;
	}
	if ((size_t)(end - *p) < sz)
		return -1;
	if (sz == 4) {
		uint32_t w;

		memcpy(&w, *p, 4);
		v = (enc & 0x0f) == DW_EH_PE_sdata4 ? (uint64_t)(int64_t)(int32_t)w : w;
	} else {
		memcpy(&v, *p, 8);
	}
	*p += sz;
	switch (enc & 0x70) {
	case DW_EH_PE_absptr: break;
	case DW_EH_PE_pcrel: v += pv; break;
	case DW_EH_PE_datarel: v += hv; break;
	default: return -1;
	}
	*out = v;
	return 0;
}

/* The FDE start addresses of .eh_frame_hdr (PT_GNU_EH_FRAME), sorted. */
static int fde_starts(Elf *elf, uint64_t **starts, size_t *n)
{
	const unsigned char *p = NULL, *q, *end = NULL;
	size_t i, nph, size;
	uint64_t hv = 0, v, count;
	GElf_Phdr ph;
	char *raw;

	if (elf_getphdrnum(elf, &nph))
		return -EINVAL;
	for (i = 0; i < nph && !p; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME)
			continue;
		raw = elf_rawfile(elf, &size);
		if (!raw || ph.p_offset > size || ph.p_filesz > size - ph.p_offset)
			return -EINVAL;
		p = (const unsigned char *)raw + ph.p_offset;
		end = p + ph.p_filesz;
		hv = ph.p_vaddr;
	}
	if (!p)
		return -ENOENT;
	/* version 1, three encodings, eh_frame_ptr, fde_count, then pairs
	 * (start, fde) in the table's encoding */
	if (end - p < 4 || p[0] != 1 || p[3] == DW_EH_PE_omit)
		return -EINVAL;
	q = p + 4;
	if (read_enc(&q, end, p[1], hv + 4, hv, &v) ||
	    read_enc(&q, end, p[2], hv + (uint64_t)(q - p), hv, &count) ||
	    count > (uint64_t)(end - q) / 8)
		return -EINVAL;
	*starts = malloc((count ? count : 1) * sizeof(**starts));
	if (!*starts)
		return -ENOMEM;
	for (i = 0; i < count; i++)
		if (read_enc(&q, end, p[3], hv + (uint64_t)(q - p), hv, &(*starts)[i]) ||
		    read_enc(&q, end, p[3], hv + (uint64_t)(q - p), hv, &v)) {
			free(*starts);
			return -EINVAL;
		}
	*n = count;
	return 0;
}

/* The FDE pointer encoding a CIE's augmentation gives ('R'), or -1 for
 * one this reader does not know. */
static int cie_fde_enc(const Dwarf_CIE *cie)
{
	const unsigned char *d = cie->augmentation_data;
	const unsigned char *end = d + cie->augmentation_data_size;
	const char *a = cie->augmentation;

	if (a[0] != 'z')
		return DW_EH_PE_absptr;
	for (a++; *a && d < end; a++) {
		switch (*a) {
		case 'R': return *d;
		case 'L': d++; break;
		case 'P': {
			/* personality: its encoding, then a pointer in it */
			uint8_t enc = *d++;
			uint64_t v;

			if ((enc & 0x0f) == DW_EH_PE_uleb128 || (enc & 0x0f) == DW_EH_PE_sleb128) {
				while (d < end && (*d++ & 0x80))
					;
			} else if (read_enc(&d, end, enc, 0, 0, &v)) {
				return -1;
			}
			break;
		}
		case 'S':
		case 'B': break;
		default: return -1;
		}
	}
	return -1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Without .eh_frame_hdr (static executables: the linker adds it only
 * with --eh-frame-hdr, which gcc passes for dynamic links): the FDE
 * starts from the .eh_frame section itself, each CIE's encoding applied
 * to its FDEs, sorted. */
static int fde_starts_section(Elf *elf, uint64_t **starts, size_t *n)
{
	struct cie_enc {
		Dwarf_Off off;
		int enc;
	} *cies = NULL, *nc;
	size_t shstrndx, ncies = 0, cap = 0, starts_cap = *n;
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	Dwarf_Off off = 0, next;
	Elf_Scn *scn = NULL;
	Elf_Data *data = NULL;
	Dwarf_CFI_Entry e;
	GElf_Shdr sh;
	int ret = 0;

	*starts = NULL;
	*n = 0;
	if (!ident || elf_getshdrstrndx(elf, &shstrndx))
		return -EINVAL;
	while ((scn = elf_nextscn(elf, scn)) && !data) {
		const char *name;

		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(name, ".eh_frame"))
			data = elf_getdata(scn, NULL);
	}
	if (!data)
		return -ENOENT;
	while (!ret && dwarf_next_cfi(ident, data, true, off, &next, &e) == 0) {
		if (dwarf_cfi_cie_p(&e)) {
			if (!(nc = pmt_grow(cies, &cap, ncies, sizeof(*cies), 16))) {
				ret = -ENOMEM;
				break;
			}
			cies = nc;
			cies[ncies].off = off;
			cies[ncies++].enc = cie_fde_enc(&e.cie);
		} else {
			const unsigned char *p = e.fde.start;
			uint64_t pc, *ns;
			size_t i;

			for (i = 0; i < ncies && cies[i].off != e.fde.CIE_pointer; i++)
				;
			if (i < ncies && cies[i].enc >= 0 &&
			    !read_enc(&p, e.fde.end, (uint8_t)cies[i].enc,
				      sh.sh_addr + (uint64_t)(e.fde.start -
							      (const uint8_t *)data->d_buf),
				      0, &pc)) {
				ns = pmt_grow(*starts, &starts_cap, *n, sizeof(**starts), 256);
				if (!ns)
					ret = -ENOMEM;
				else
					(*starts = ns)[(*n)++] = pc;
			}
		}
		off = next;
	}
	free(cies);
	if (!ret && *n)
		qsort(*starts, *n, sizeof(**starts), cmp_u64);
	if (ret || !*n) {
		free(*starts);
		*starts = NULL;
		return ret ? ret : -ENOENT;
	}
	return 0;
}

/* Is the expression rsp + 8 + ((rip & 15) >= K) * 8, the PLT's? K in *k. */
static bool plt_expr(const Dwarf_Op *ops, size_t n, int32_t *k)
{
	static const uint8_t shape[] = {DW_OP_breg7, DW_OP_breg16, DW_OP_lit15, DW_OP_and, 0,
					DW_OP_ge,    DW_OP_lit3,   DW_OP_shl,	DW_OP_plus};
	size_t i;

	if (n != sizeof(shape) || ops[0].number != 8)
		return false;
	for (i = 0; i < n; i++)
		if (shape[i] && ops[i].atom != shape[i])
			return false;
	if (ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit31)
		return false;
	*k = ops[4].atom - DW_OP_lit0;
	return true;
}

/* Where is register reg: saved at CFA + *off (1), unchanged (0),
 * undefined (2); -1: another rule. */
static int reg_rule(Dwarf_Frame *fr, int reg, int64_t *off)
{
	Dwarf_Op mem[3], *ops;
	size_t n;

	if (dwarf_frame_register(fr, reg, mem, &ops, &n))
		return -1;
	if (n == 0)
		return ops ? 2 /* undefined */ : 0 /* same value */;
	/* a location: the register is saved at CFA (+ N) */
	if (n == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		*off = 0;
		return 1;
	}
	if (n == 2 && ops[0].atom == DW_OP_call_frame_cfa &&
	    (ops[1].atom == DW_OP_plus_uconst || ops[1].atom == DW_OP_consts)) {
		*off = (int64_t)ops[1].number;
		return 1;
	}
	return -1;
}

/* The rules of one row: false when the unwinder cannot follow them. */
static bool row_rules(Dwarf_Frame *fr, struct pmt_cfi_row *r)
{
	Dwarf_Op *ops;
	int64_t off = 0;
	int32_t k;
	size_t n;
	int rule;

	r->cfa = PMT_CFA_NONE;
	r->fp = PMT_FP_SAME;
	rule = reg_rule(fr, REG_RA, &off);
	if (rule == 2) {
		r->cfa = PMT_CFA_END;
		return true;
	}
	if (rule != 1 || off != -8 || dwarf_frame_cfa(fr, &ops, &n) || n < 1)
		return false;
	if (n == 1 && ops[0].atom == DW_OP_bregx &&
	    (ops[0].number == REG_RSP || ops[0].number == REG_RBP)) {
		if ((int64_t)ops[0].number2 != (int32_t)ops[0].number2)
			return false;
		r->cfa = ops[0].number == REG_RSP ? PMT_CFA_SP : PMT_CFA_FP;
		r->cfa_off = (int32_t)ops[0].number2;
	} else if (plt_expr(ops, n, &k)) {
		r->cfa = PMT_CFA_PLT;
		r->cfa_off = k;
	} else {
		return false;
	}
	rule = reg_rule(fr, REG_RBP, &off);
	if (rule == 1 && off == (int16_t)off) {
		r->fp = PMT_FP_SAVED;
		r->fp_off = (int16_t)off;
	} else if (rule != 0) {
		/* rbp not recoverable: callers that need it stop there */
		r->fp = PMT_FP_SAME;
	}
	return true;
}

static bool same_rules(const struct pmt_cfi_row *a, const struct pmt_cfi_row *b)
{
	return a->cfa == b->cfa && a->cfa_off == b->cfa_off && a->fp == b->fp &&
	       a->fp_off == b->fp_off;
}

static int add_row(struct pmt_cfi *c, size_t *cap, Elf *elf, uint64_t vaddr,
		   const struct pmt_cfi_row *r)
{
	struct pmt_cfi_row *nr;
	uint64_t off;

	if (pmt_elf__vaddr_to_off(elf, vaddr, &off) || off > UINT32_MAX)
		return 0; /* not in an executable segment: never a pc */
	if (c->n && same_rules(&c->rows[c->n - 1], r))
		return 0;
	if (c->n && c->rows[c->n - 1].pc >= off)
		return 0; /* overlapping FDEs: the first one wins */
	if (!(nr = pmt_grow(c->rows, cap, c->n, sizeof(*nr), 4096)))
		return -ENOMEM;
	c->rows = nr;
	c->rows[c->n] = *r;
	c->rows[c->n].pc = (uint32_t)off;
	c->n++;
	return 0;
}

int pmt_cfi__read(int fd, struct pmt_cfi *out, struct pmt_error *err)
{
	static const struct pmt_cfi_row none = {.cfa = PMT_CFA_NONE};
	Elf *elf;
	Dwarf_CFI *cfi = NULL;
	uint64_t *starts = NULL;
	size_t i, n = 0, cap = 0;
	int ret;

	memset(out, 0, sizeof(*out));
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		pmt_error__runtime(err, -EINVAL, "not an ELF file: %s", elf_errmsg(-1));
		return -EINVAL;
	}
	ret = fde_starts(elf, &starts, &n);
	if (ret == -ENOENT)
		ret = fde_starts_section(elf, &starts, &n);
	if (ret) {
		pmt_error__runtime(err, -EINVAL, "%s",
				   ret == -ENOENT ? "no .eh_frame_hdr, no .eh_frame"
						  : "bad .eh_frame(_hdr)");
		goto out;
	}
	cfi = dwarf_getcfi_elf(elf);
	if (!cfi) {
		pmt_error__runtime(err, -EINVAL, "no CFI: %s", dwarf_errmsg(-1));
		ret = -ENOENT;
		goto out;
	}
	for (i = 0; i < n && !ret; i++) {
		uint64_t addr = starts[i], next = i + 1 < n ? starts[i + 1] : UINT64_MAX;

		while (addr < next && !ret) {
			struct pmt_cfi_row r = {0};
			Dwarf_Addr s, e;
			Dwarf_Frame *fr;

			if (dwarf_cfi_addrframe(cfi, addr, &fr))
				break;
			if (dwarf_frame_info(fr, &s, &e, NULL) < 0 || e <= addr) {
				free(fr);
				break;
			}
			if (!row_rules(fr, &r)) {
				r.cfa = PMT_CFA_NONE;
				out->unsupported++;
			}
			free(fr);
			ret = add_row(out, &cap, elf, addr, &r);
			addr = e;
		}
		/* up to the next FDE, nothing is known */
		if (!ret && addr < next)
			ret = add_row(out, &cap, elf, addr, &none);
	}
	if (ret)
		pmt_error__runtime(err, -EINVAL, "out of memory");
out:
	free(starts);
	if (cfi)
		dwarf_cfi_end(cfi);
	elf_end(elf);
	if (ret)
		pmt_cfi__free(out);
	return ret;
}
