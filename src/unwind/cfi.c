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

/*
 * The registers the unwinder follows, by DWARF number, for the file's
 * machine: the return address column, the frame pointer, the stack
 * pointer, and x86-64's rbx (the loader's lazy binding trampoline keeps
 * the CFA there). arm64's return address column is the link register,
 * x30: a function that has not saved it yet returns through it (lr), and
 * the row keeps where it is saved in the slot x86-64 keeps rbx's.
 */
struct cfi_abi {
	uint64_t ra, fp, sp, bx;
	bool lr;
};
static const struct cfi_abi abi_x86_64 = {.ra = 16, .fp = 6, .sp = 7, .bx = 3};
static const struct cfi_abi abi_aarch64 = {
	.ra = 30, .fp = 29, .sp = 31, .bx = UINT64_MAX, .lr = true};
/* arm64's DW_CFA_AARCH64_negate_ra_state (pointer authentication: the
 * kernel strips the code from every return address) */
#define CFA_NEGATE_RA_STATE 0x2d

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
			*starts = NULL; /* the caller frees what it is given */
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

/* The .eh_frame section's data (its header in *sh), or NULL. */
/* .eh_frame's bytes, or NULL where there are none to read (a NOBITS
 * section has a size and no data: libdw would read from NULL) */
static Elf_Data *eh_frame(Elf *elf, GElf_Shdr *sh)
{
	Elf_Scn *scn = pmt_elf__section(elf, ".eh_frame", sh);
	Elf_Data *d = scn && sh->sh_type != SHT_NOBITS ? elf_getdata(scn, NULL) : NULL;

	return d && d->d_buf && d->d_size ? d : NULL;
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
	size_t ncies = 0, cap = 0, starts_cap = *n;
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	Dwarf_Off off = 0, next;
	Elf_Data *data;
	Dwarf_CFI_Entry e;
	GElf_Shdr sh;
	int ret = 0;

	*starts = NULL;
	*n = 0;
	if (!ident)
		return -EINVAL;
	if (!(data = eh_frame(elf, &sh)))
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
		pmt_sort(*starts, *n, sizeof(**starts), cmp_u64);
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

/* A register's rule, as libdw's frames and this file's interpreter both
 * say it: unchanged, undefined, saved at CFA + an offset, or another. */
enum { RULE_SAME, RULE_UNDEF, RULE_OFFSET, RULE_OTHER };

/* Where is register reg: RULE_OFFSET (at CFA + *off), RULE_SAME,
 * RULE_UNDEF or RULE_OTHER. */
static int reg_rule(Dwarf_Frame *fr, int reg, int64_t *off)
{
	Dwarf_Op mem[3], *ops;
	size_t n;

	if (dwarf_frame_register(fr, reg, mem, &ops, &n))
		return RULE_OTHER;
	if (n == 0)
		return ops ? RULE_UNDEF : RULE_SAME;
	/* a location: the register is saved at CFA (+ N) */
	if (n == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		*off = 0;
		return RULE_OFFSET;
	}
	if (n == 2 && ops[0].atom == DW_OP_call_frame_cfa &&
	    (ops[1].atom == DW_OP_plus_uconst || ops[1].atom == DW_OP_consts)) {
		*off = (int64_t)ops[1].number;
		return RULE_OFFSET;
	}
	return RULE_OTHER;
}

/* The row's rule for a CFA of register reg plus an offset: PMT_CFA_NONE
 * for a register the unwinder does not track. */
static uint8_t cfa_rule(const struct cfi_abi *abi, uint64_t reg)
{
	return reg == abi->sp	? PMT_CFA_SP
	       : reg == abi->fp ? PMT_CFA_FP
	       : reg == abi->bx ? PMT_CFA_BX
				: PMT_CFA_NONE;
}

/* A register saved at CFA + off (where saved), as a row keeps it. */
static void saved_rule(bool saved, int64_t off, uint8_t *rule, int16_t *at)
{
	if (saved && off == (int16_t)off) {
		*rule = PMT_FP_SAVED;
		*at = (int16_t)off;
	}
}

/* The return address's rule (a RULE_ kind, off where RULE_OFFSET) into
 * the row: false where the unwinder cannot follow it. x86-64's is always
 * at CFA - 8; arm64's is saved anywhere (bx_off) or still in x30. */
static bool ra_rule(const struct cfi_abi *abi, int rule, int64_t off, struct pmt_cfi_row *r)
{
	if (rule == RULE_UNDEF) {
		r->cfa = PMT_CFA_END;
		return true;
	}
	if (!abi->lr)
		return rule == RULE_OFFSET && off == -8;
	if (rule == RULE_OFFSET && off != (int16_t)off)
		return false;
	saved_rule(rule == RULE_OFFSET, off, &r->bx, &r->bx_off);
	return rule == RULE_SAME || rule == RULE_OFFSET;
}

/* The rules of one row: false when the unwinder cannot follow them. */
static bool row_rules(const struct cfi_abi *abi, Dwarf_Frame *fr, struct pmt_cfi_row *r)
{
	Dwarf_Op *ops;
	int64_t off = 0;
	int32_t k;
	size_t n;
	int rule;

	r->cfa = PMT_CFA_NONE;
	r->fp = PMT_FP_SAME;
	r->bx = PMT_FP_SAME;
	rule = reg_rule(fr, (int)abi->ra, &off);
	if (!ra_rule(abi, rule, off, r))
		return false;
	if (r->cfa == PMT_CFA_END)
		return true;
	if (dwarf_frame_cfa(fr, &ops, &n) || n < 1)
		return false;
	if (n == 1 && ops[0].atom == DW_OP_bregx && cfa_rule(abi, ops[0].number) != PMT_CFA_NONE) {
		if ((int64_t)ops[0].number2 != (int32_t)ops[0].number2)
			return false;
		r->cfa = cfa_rule(abi, ops[0].number);
		r->cfa_off = (int32_t)ops[0].number2;
	} else if (!abi->lr && plt_expr(ops, n, &k)) {
		r->cfa = PMT_CFA_PLT;
		r->cfa_off = k;
	} else {
		return false;
	}
	/* the frame pointer and rbx not recoverable: callers that need
	 * them stop there */
	rule = reg_rule(fr, (int)abi->fp, &off);
	saved_rule(rule == RULE_OFFSET, off, &r->fp, &r->fp_off);
	if (abi->lr)
		return true;
	rule = reg_rule(fr, (int)abi->bx, &off);
	saved_rule(rule == RULE_OFFSET, off, &r->bx, &r->bx_off);
	return true;
}

static bool same_rules(const struct pmt_cfi_row *a, const struct pmt_cfi_row *b)
{
	return a->cfa == b->cfa && a->cfa_off == b->cfa_off && a->fp == b->fp &&
	       a->fp_off == b->fp_off && a->bx == b->bx && a->bx_off == b->bx_off;
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

static const struct pmt_cfi_row none_row = {.cfa = PMT_CFA_NONE};

/* The rows of the FDE at start, by libdw, up to next: one lookup a row,
 * each running the FDE's program from its start. 0 or -ENOMEM. */
static int fde_rows_libdw(const struct cfi_abi *abi, struct pmt_cfi *out, size_t *cap, Elf *elf,
			  Dwarf_CFI *cfi, uint64_t start, uint64_t next)
{
	uint64_t addr = start;
	int ret = 0;

	while (addr < next && !ret) {
		struct pmt_cfi_row r = {0};
		Dwarf_Addr s, e;
		Dwarf_Frame *fr;

		if (!cfi || dwarf_cfi_addrframe(cfi, addr, &fr))
			break;
		if (dwarf_frame_info(fr, &s, &e, NULL) < 0 || e <= addr) {
			free(fr);
			break;
		}
		if (!row_rules(abi, fr, &r)) {
			r.cfa = PMT_CFA_NONE;
			out->unsupported++;
		}
		free(fr);
		ret = add_row(out, cap, elf, addr, &r);
		addr = e;
	}
	/* up to the next FDE, nothing is known */
	if (!ret && addr < next)
		ret = add_row(out, cap, elf, addr, &none_row);
	return ret;
}

/*
 * The same rows in one pass over each FDE's program (libdw's lookups run
 * it again from the start for every row: O(rows^2) in a function, 0.3 s
 * for gcc's cc1). Only the rules the unwinder uses are kept: the CFA as
 * a register plus an offset, the return address's and rbp's; anything
 * else (a CFA expression, set_loc, an opcode not known) leaves the FDE
 * to libdw, so the rows are libdw's either way (tests/unit/test_cfi.c).
 */

struct rule {
	int kind;
	int64_t off;
};

struct frame_state {
	bool cfa_ok; /* a register-plus-offset CFA is defined */
	uint64_t cfa_reg;
	int64_t cfa_off;
	struct rule ra, fp, bx;
};

struct cie {
	const struct cfi_abi *abi;
	Dwarf_Off off;
	Dwarf_CIE c;
	int enc;		 /* its FDEs' pointer encoding, -1 unknown */
	bool ok;		 /* this reader follows its initial instructions */
	struct frame_state init; /* after them */
};

struct fde {
	uint64_t start, end;
	const uint8_t *ins, *ins_end;
	const struct cie *cie;
};

struct fdes {
	struct fde *v;
	size_t n, cap;
	struct cie *cies;
	size_t ncies;
};

static bool uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	int shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

static bool sleb(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	uint64_t u = 0;
	int shift = 0;
	uint8_t b = 0x80;

	while (*p < end && shift < 64 && (b & 0x80)) {
		b = *(*p)++;
		u |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	}
	if (b & 0x80)
		return false;
	if (shift < 64 && (b & 0x40))
		u |= ~0ULL << shift;
	*v = (int64_t)u;
	return true;
}

#define STATE_STACK 16

struct interp {
	const struct cfi_abi *abi;
	const Dwarf_CIE *cie;
	const struct frame_state *init; /* DW_CFA_restore's */
	struct frame_state st, saved[STATE_STACK];
	int depth;
	uint64_t loc;
};

static void set_rule(struct interp *in, uint64_t reg, int kind, int64_t off)
{
	struct frame_state *st = &in->st;
	struct rule *r = reg == in->abi->ra   ? &st->ra
			 : reg == in->abi->fp ? &st->fp
			 : reg == in->abi->bx ? &st->bx
					      : NULL;

	if (r)
		*r = (struct rule){kind, off};
}

static void restore(struct interp *in, uint64_t reg)
{
	if (reg == in->abi->ra)
		in->st.ra = in->init->ra;
	else if (reg == in->abi->fp)
		in->st.fp = in->init->fp;
	else if (reg == in->abi->bx)
		in->st.bx = in->init->bx;
}

/* A register's rule at *p: 1 followed, 0 not, -1 not such an opcode. */
static int step_reg(struct interp *in, uint8_t op, const uint8_t **p, const uint8_t *end)
{
	int64_t daf = in->cie->data_alignment_factor, so;
	uint64_t reg, v;

	switch (op) {
	case DW_CFA_offset_extended:
	case DW_CFA_GNU_negative_offset_extended:
		if (!uleb(p, end, &reg) || !uleb(p, end, &v))
			return 0;
		so = (int64_t)v * daf;
		set_rule(in, reg, RULE_OFFSET, op == DW_CFA_offset_extended ? so : -so);
		return 1;
	case DW_CFA_offset_extended_sf:
		if (!uleb(p, end, &reg) || !sleb(p, end, &so))
			return 0;
		set_rule(in, reg, RULE_OFFSET, so * daf);
		return 1;
	case DW_CFA_restore_extended:
		if (!uleb(p, end, &reg))
			return 0;
		restore(in, reg);
		return 1;
	case DW_CFA_undefined:
	case DW_CFA_same_value:
		if (!uleb(p, end, &reg))
			return 0;
		set_rule(in, reg, op == DW_CFA_undefined ? RULE_UNDEF : RULE_SAME, 0);
		return 1;
	case DW_CFA_register:
	case DW_CFA_val_offset:
		if (!uleb(p, end, &reg) || !uleb(p, end, &v))
			return 0;
		set_rule(in, reg, RULE_OTHER, 0);
		return 1;
	case DW_CFA_val_offset_sf:
		if (!uleb(p, end, &reg) || !sleb(p, end, &so))
			return 0;
		set_rule(in, reg, RULE_OTHER, 0);
		return 1;
	case DW_CFA_expression:
	case DW_CFA_val_expression:
		if (!uleb(p, end, &reg) || !uleb(p, end, &v) || v > (uint64_t)(end - *p))
			return 0;
		*p += v;
		set_rule(in, reg, RULE_OTHER, 0);
		return 1;
	default: return -1;
	}
}

/* The CFA's rule or the state stack at *p: as step_reg. */
static int step_cfa(struct interp *in, uint8_t op, const uint8_t **p, const uint8_t *end)
{
	int64_t daf = in->cie->data_alignment_factor, so;
	uint64_t reg = in->st.cfa_reg, v;

	switch (op) {
	case DW_CFA_remember_state:
		if (in->depth == STATE_STACK)
			return 0;
		in->saved[in->depth++] = in->st;
		return 1;
	case DW_CFA_restore_state:
		if (!in->depth)
			return 0;
		in->st = in->saved[--in->depth];
		return 1;
	case DW_CFA_def_cfa:
	case DW_CFA_def_cfa_sf:
		if (!uleb(p, end, &reg))
			return 0;
		if (op == DW_CFA_def_cfa_sf ? !sleb(p, end, &so) : !uleb(p, end, &v))
			return 0;
		in->st.cfa_ok = true;
		in->st.cfa_reg = reg;
		in->st.cfa_off = op == DW_CFA_def_cfa_sf ? so * daf : (int64_t)v;
		return 1;
	case DW_CFA_def_cfa_register:
		if (!in->st.cfa_ok || !uleb(p, end, &reg))
			return 0;
		in->st.cfa_reg = reg;
		return 1;
	case DW_CFA_def_cfa_offset:
		if (!in->st.cfa_ok || !uleb(p, end, &v))
			return 0;
		in->st.cfa_off = (int64_t)v;
		return 1;
	case DW_CFA_def_cfa_offset_sf:
		if (!in->st.cfa_ok || !sleb(p, end, &so))
			return 0;
		in->st.cfa_off = so * daf;
		return 1;
	default: return -1;
	}
}

/* One instruction at *p that is not an advance (those are the caller's):
 * false where this reader does not follow it (set_loc, a CFA
 * expression, an opcode not known). */
static bool step(struct interp *in, uint8_t op, const uint8_t **p, const uint8_t *end)
{
	uint64_t v;
	int r;

	switch (op & 0xc0) {
	case DW_CFA_offset:
		if (!uleb(p, end, &v))
			return false;
		set_rule(in, op & 0x3f, RULE_OFFSET, (int64_t)v * in->cie->data_alignment_factor);
		return true;
	case DW_CFA_restore: restore(in, op & 0x3f); return true;
	}
	if (op == DW_CFA_nop || (op == CFA_NEGATE_RA_STATE && in->abi->lr))
		return true;
	if (op == DW_CFA_GNU_args_size)
		return uleb(p, end, &v);
	if ((r = step_reg(in, op, p, end)) < 0)
		r = step_cfa(in, op, p, end);
	return r > 0;
}

/* An advance at *p (its delta in *d), or 0 for another instruction. */
static int advance(uint8_t op, const uint8_t **p, const uint8_t *end, uint64_t *d)
{
	size_t sz;

	if ((op & 0xc0) == DW_CFA_advance_loc) {
		*d = op & 0x3f;
		return 1;
	}
	sz = op == DW_CFA_advance_loc1	 ? 1
	     : op == DW_CFA_advance_loc2 ? 2
	     : op == DW_CFA_advance_loc4 ? 4
					 : 0;
	if (!sz)
		return 0;
	if ((size_t)(end - *p) < sz)
		return -1;
	*d = 0;
	memcpy(d, *p, sz); /* little-endian */
	*p += sz;
	return 1;
}

/* The row of a state, as row_rules reads it from libdw's frame. */
static bool state_row(const struct cfi_abi *abi, const struct frame_state *st,
		      struct pmt_cfi_row *r)
{
	r->cfa = PMT_CFA_NONE;
	r->fp = PMT_FP_SAME;
	r->bx = PMT_FP_SAME;
	if (!ra_rule(abi, st->ra.kind, st->ra.off, r))
		return false;
	if (r->cfa == PMT_CFA_END)
		return true;
	if (!st->cfa_ok || cfa_rule(abi, st->cfa_reg) == PMT_CFA_NONE ||
	    st->cfa_off != (int32_t)st->cfa_off)
		return false;
	r->cfa = cfa_rule(abi, st->cfa_reg);
	r->cfa_off = (int32_t)st->cfa_off;
	saved_rule(st->fp.kind == RULE_OFFSET, st->fp.off, &r->fp, &r->fp_off);
	if (!abi->lr)
		saved_rule(st->bx.kind == RULE_OFFSET, st->bx.off, &r->bx, &r->bx_off);
	return true;
}

static int emit(struct pmt_cfi *out, size_t *cap, Elf *elf, uint64_t loc, const struct interp *in)
{
	const struct frame_state *st = &in->st;
	struct pmt_cfi_row r = {0};

	if (!state_row(in->abi, st, &r)) {
		r.cfa = PMT_CFA_NONE;
		out->unsupported++;
	}
	return add_row(out, cap, elf, loc, &r);
}

/* A program's rows from f->start up to next: 0, -ENOMEM, or 1 where this
 * reader cannot follow the program (nothing added then). */
static int fde_rows(struct pmt_cfi *out, size_t *cap, Elf *elf, const struct fde *f, uint64_t next)
{
	struct interp in = {.abi = f->cie->abi,
			    .cie = &f->cie->c,
			    .init = &f->cie->init,
			    .st = f->cie->init,
			    .loc = f->start};
	size_t n0 = out->n, u0 = out->unsupported;
	const uint8_t *p = f->ins;
	uint64_t d;
	int ret = 0, a;

	while (p < f->ins_end && !ret) {
		uint8_t op = *p++;

		a = advance(op, &p, f->ins_end, &d);
		if (a < 0 || (!a && !step(&in, op, &p, f->ins_end)))
			goto libdw;
		if (!a || !d)
			continue;
		d *= f->cie->c.code_alignment_factor;
		if (in.loc < next && in.loc < f->end)
			ret = emit(out, cap, elf, in.loc, &in);
		in.loc += d;
	}
	if (in.loc > f->end)
		goto libdw;
	if (!ret && in.loc < next && in.loc < f->end)
		ret = emit(out, cap, elf, in.loc, &in);
	if (!ret && f->end < next)
		ret = add_row(out, cap, elf, f->end, &none_row);
	return ret;
libdw:
	/* add_row only appends: dropping what this FDE added undoes it */
	out->n = n0;
	out->unsupported = u0;
	return 1;
}

/* A CIE's state after its initial instructions, from the ABI's (libdw's
 * x86-64 backend: rbp and the return address keep their values). */
static void cie_init(struct cie *c)
{
	struct frame_state abi = {.ra = {RULE_SAME, 0}, .fp = {RULE_SAME, 0}, .bx = {RULE_SAME, 0}};
	struct interp in = {.abi = c->abi, .cie = &c->c, .init = &abi, .st = abi};
	const uint8_t *p = c->c.initial_instructions, *end = c->c.initial_instructions_end;
	uint64_t d;

	c->ok = c->enc >= 0 && c->c.return_address_register == c->abi->ra;
	while (c->ok && p < end) {
		uint8_t op = *p++;

		c->ok = !advance(op, &p, end, &d) && step(&in, op, &p, end);
	}
	c->init = in.st;
}

/* One FDE of .eh_frame (e, of CIE c; vaddr: where its initial location
 * lies), into f: false when this reader cannot read it. */
static bool fde_parse(const Dwarf_CFI_Entry *e, const struct cie *c, uint64_t vaddr, struct fde *f)
{
	const uint8_t *p = e->fde.start;
	uint64_t range, alen;

	if (!c->ok || read_enc(&p, e->fde.end, (uint8_t)c->enc, vaddr, 0, &f->start) ||
	    read_enc(&p, e->fde.end, (uint8_t)(c->enc & 0x0f), 0, 0, &range))
		return false;
	if (c->c.augmentation[0] == 'z') {
		if (!uleb(&p, e->fde.end, &alen) || alen > (uint64_t)(e->fde.end - p))
			return false;
		p += alen;
	}
	f->end = f->start + range;
	f->ins = p;
	f->ins_end = e->fde.end;
	f->cie = c;
	return true;
}

static int cmp_fde(const void *a, const void *b)
{
	uint64_t x = ((const struct fde *)a)->start, y = ((const struct fde *)b)->start;

	return x < y ? -1 : x > y;
}

/* Every FDE of .eh_frame this reader can follow, sorted by start (none
 * where the file has no section table). */
static void fdes_read(Elf *elf, const struct cfi_abi *abi, struct fdes *t)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	size_t i, ccap = 0;
	Elf_Data *data;
	GElf_Shdr sh;

	if (!ident || !(data = eh_frame(elf, &sh)))
		return;
	/* CIEs first (FDEs point at them by offset), then FDEs */
	for (off = 0; dwarf_next_cfi(ident, data, true, off, &next, &e) == 0; off = next) {
		struct cie *nc;

		if (!dwarf_cfi_cie_p(&e))
			continue;
		if (!(nc = pmt_grow(t->cies, &ccap, t->ncies, sizeof(*nc), 16)))
			return;
		t->cies = nc;
		nc[t->ncies] = (struct cie){
			.abi = abi, .off = off, .c = e.cie, .enc = cie_fde_enc(&e.cie)};
		cie_init(&nc[t->ncies++]);
	}
	for (off = 0; dwarf_next_cfi(ident, data, true, off, &next, &e) == 0; off = next) {
		struct fde f, *nf;

		if (dwarf_cfi_cie_p(&e))
			continue;
		for (i = 0; i < t->ncies && t->cies[i].off != e.fde.CIE_pointer; i++)
			;
		if (i == t->ncies ||
		    !fde_parse(&e, &t->cies[i],
			       sh.sh_addr + (uint64_t)(e.fde.start - (const uint8_t *)data->d_buf),
			       &f))
			continue;
		if (!(nf = pmt_grow(t->v, &t->cap, t->n, sizeof(*nf), 1024)))
			return;
		(t->v = nf)[t->n++] = f;
	}
	pmt_sort(t->v, t->n, sizeof(*t->v), cmp_fde);
}

/* The FDE starting at start, if exactly one does. */
static const struct fde *fde_at(const struct fdes *t, uint64_t start)
{
	size_t le = pmt_count_le(t->v, t->n, sizeof(*t->v), offsetof(struct fde, start),
				 sizeof(t->v->start), start);

	if (!le || t->v[le - 1].start != start || (le > 1 && t->v[le - 2].start == start))
		return NULL;
	return &t->v[le - 1];
}

int pmt_cfi__read_with(int fd, struct pmt_cfi *out, bool libdw_only, struct pmt_error *err)
{
	const struct cfi_abi *abi;
	struct fdes fdes = {0};
	GElf_Ehdr eh = {0};
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
	if (!gelf_getehdr(elf, &eh) || !(abi = eh.e_machine == EM_X86_64    ? &abi_x86_64
					       : eh.e_machine == EM_AARCH64 ? &abi_aarch64
									    : NULL)) {
		pmt_error__runtime(err, -EINVAL,
				   "CFI of ELF machine %u not read (x86-64, arm64 only)",
				   eh.e_machine);
		elf_end(elf);
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
	if (!libdw_only)
		fdes_read(elf, abi, &fdes);
	for (i = 0; i < n && !ret; i++) {
		uint64_t next = i + 1 < n ? starts[i + 1] : UINT64_MAX;
		const struct fde *f = fde_at(&fdes, starts[i]);
		int r = f ? fde_rows(out, &cap, elf, f, next) : 1;

		/* what this reader does not follow, libdw does */
		ret = r > 0 ? fde_rows_libdw(abi, out, &cap, elf, cfi, starts[i], next) : r;
	}
	free(fdes.v);
	free(fdes.cies);
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

int pmt_cfi__read(int fd, struct pmt_cfi *out, struct pmt_error *err)
{
	return pmt_cfi__read_with(fd, out, false, err);
}
