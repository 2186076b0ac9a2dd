// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include "elf/elfsym.h"
#include "python/cpython.h"

/* CPython 3.11 on x86-64 (Include/cpython/pystate.h, code.h,
 * unicodeobject.h, bytesobject.h; Include/internal/pycore_frame.h,
 * pycore_runtime.h, pycore_interp.h): tests/unit/test_python.c checks
 * each against offsetof() over the installed headers. */
static const struct pmt_py_layout py311 = {
	.k =
		{
			.rt_tstate = 576,  /* _PyRuntime.gilstate.tstate_current */
			.rt_interp = 40,   /* _PyRuntime.interpreters.head */
			.is_threads = 16,  /* PyInterpreterState.threads.head */
			.ts_next = 8,	   /* PyThreadState.next */
			.ts_cframe = 56,   /* PyThreadState.cframe */
			.ts_tid = 160,	   /* PyThreadState.native_thread_id */
			.cf_frame = 8,	   /* _PyCFrame.current_frame */
			.fr_code = 32,	   /* _PyInterpreterFrame.f_code */
			.fr_previous = 48, /* _PyInterpreterFrame.previous */
			.fr_instr = 56,	   /* _PyInterpreterFrame.prev_instr */
			.fr_entry = 68,	   /* _PyInterpreterFrame.is_entry */
			.co_code = 184,	   /* PyCodeObject.co_code_adaptive */
			.co_qualname = 128,
		},
	.co_firstlineno = 72,
	.co_filename = 112,
	.co_linetable = 136,
	.str_length = 16,	/* PyASCIIObject.length */
	.str_state = 32,	/* PyASCIIObject.state */
	.str_ascii_data = 48,	/* sizeof(PyASCIIObject) */
	.str_compact_data = 72, /* sizeof(PyCompactUnicodeObject) */
	.bytes_size = 16,	/* PyVarObject.ob_size */
	.bytes_data = 32,	/* PyBytesObject.ob_sval */
};

const struct pmt_py_layout *pmt_py__layout311(void)
{
	return &py311;
}

struct py_syms {
	GElf_Sym runtime, eval, version;
	bool has_runtime, has_eval, has_version;
};

static void find_syms(Elf *elf, struct py_syms *ps)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf_Data *d;
	GElf_Sym sym;
	const char *name;
	size_t i;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    !(name = elf_strptr(elf, sh.sh_link, sym.st_name)))
				continue;
			if (!strcmp(name, "_PyRuntime"))
				ps->runtime = sym, ps->has_runtime = true;
			else if (!strcmp(name, "_PyEval_EvalFrameDefault"))
				ps->eval = sym, ps->has_eval = true;
			else if (!strcmp(name, "Py_Version"))
				ps->version = sym, ps->has_version = true;
		}
	}
}

/* 4 bytes at vaddr va of a section holding data (Py_Version). */
static bool read_u32(Elf *elf, uint64_t va, uint32_t *out)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf_Data *d;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || va < sh.sh_addr ||
		    va + 4 > sh.sh_addr + sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || va - sh.sh_addr + 4 > d->d_size)
			return false;
		memcpy(out, (const char *)d->d_buf + (va - sh.sh_addr), 4);
		return true;
	}
	return false;
}

/* Where the kernel puts a process's mm->start_code, less the load bias:
 * the lowest start of an executable PT_LOAD segment (binfmt_elf). */
static bool code_vaddr(Elf *elf, uint64_t *out)
{
	size_t i, n;
	GElf_Phdr ph;
	bool found = false;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (!found || ph.p_vaddr < *out)
			*out = ph.p_vaddr;
		found = true;
	}
	return found;
}

static enum pmt_py_probe probe_elf(Elf *elf, struct pmt_py_file *out, char *version, size_t len)
{
	struct py_syms ps = {0};
	uint64_t start, code = 0;
	uint32_t v = 0;

	find_syms(elf, &ps);
	if (!ps.has_runtime || !ps.has_eval)
		return PMT_PY_NONE;
	if (!ps.has_version || !read_u32(elf, ps.version.st_value, &v)) {
		snprintf(version, len, "3.10 or older");
		return PMT_PY_UNSUPPORTED;
	}
	snprintf(version, len, "%u.%u", v >> 24, v >> 16 & 0xff);
	if (v >> 16 != 0x030b || pmt_elf__vaddr_to_off(elf, ps.eval.st_value, &start) ||
	    !ps.eval.st_size || !code_vaddr(elf, &code))
		return PMT_PY_UNSUPPORTED;
	*out = py311.k;
	out->eval_start = (uint32_t)start;
	out->eval_end = (uint32_t)(start + ps.eval.st_size);
	/* _PyRuntime at the load bias plus its vaddr; the kernel knows the
	 * text mapping's start and file offset: bias = start - offset -
	 * (vaddr - offset of the text segment) */
	out->runtime = ps.runtime.st_value - (ps.eval.st_value - start);
	out->runtime_code = (int64_t)(ps.runtime.st_value - code);
	return PMT_PY_SUPPORTED;
}

enum pmt_py_probe pmt_py__probe(int fd, struct pmt_py_file *out, char *version, size_t len)
{
	enum pmt_py_probe r = PMT_PY_NONE;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return PMT_PY_NONE;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		r = probe_elf(elf, out, version, len);
	if (elf)
		elf_end(elf);
	return r;
}

/* len bytes at addr of process pid. */
static int peek(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
	ssize_t n = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/* At least need bytes at addr of process pid, and as many more up to
 * len as lie in need's last page (a page mapped is mapped whole, so the
 * read cannot fail for them): an object's header and what follows it in
 * one system call. The bytes read, or -errno. */
static ssize_t peek_more(uint32_t pid, uint64_t addr, void *buf, size_t need, size_t len)
{
	uint64_t page_end = ((addr + need - 1) | 4095) + 1;
	size_t n = addr + len <= page_end ? len : (size_t)(page_end - addr);
	struct iovec local = {buf, n}, remote = {(void *)(uintptr_t)addr, n};
	ssize_t got = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);

	if (got < 0)
		return -errno;
	return (size_t)got >= need ? got : -EIO;
}

/* The n bytes at addr + off of process pid into out: from buf, which
 * holds got bytes read at addr, and read for what it lacks. */
static int copy_or_peek(uint32_t pid, uint64_t addr, const uint8_t *buf, size_t got, size_t off,
			void *out, size_t n)
{
	if (off + n <= got) {
		memcpy(out, buf + off, n);
		return 0;
	}
	return peek(pid, addr + off, out, n);
}

static uint64_t word(const uint8_t *b, uint16_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

/* A str object as UTF-8: compact ASCII, or compact Latin-1/UCS-2/UCS-4
 * (3.11's PyASCIIObject state: interned:2 kind:3 compact:1 ascii:1). */
static char *read_str(uint32_t pid, uint64_t addr)
{
	uint8_t h[256], *raw;
	uint32_t state, kind, i;
	uint64_t n;
	ssize_t got;
	char *s, *o;

	if (!addr || (got = peek_more(pid, addr, h, 48, sizeof(h))) < 0)
		return NULL;
	n = word(h, py311.str_length);
	memcpy(&state, h + py311.str_state, 4);
	kind = state >> 2 & 7;
	/* compact, a kind, ASCII only of kind 1: else no str (the object
	 * was freed and its memory reused since the kernel met it) */
	if (!(state >> 5 & 1) || n > 1024 || (kind != 1 && kind != 2 && kind != 4) ||
	    (state >> 6 & 1 && kind != 1))
		return NULL;
	raw = malloc(n * kind + 1);
	s = malloc(n * 4 + 1);
	if (!raw || !s ||
	    copy_or_peek(pid, addr, h, (size_t)got,
			 state >> 6 & 1 ? py311.str_ascii_data : py311.str_compact_data, raw,
			 n * kind)) {
		free(raw);
		free(s);
		return NULL;
	}
	for (o = s, i = 0; i < n; i++) {
		uint32_t c = kind == 1	 ? raw[i]
			     : kind == 2 ? ((uint16_t *)raw)[i]
					 : ((uint32_t *)raw)[i];

		/* no character a str holds: not one (as above) */
		if (!c || c > 0x10ffff || (c >= 0xd800 && c < 0xe000) ||
		    (c >= 0x80 && state >> 6 & 1)) {
			free(raw);
			free(s);
			return NULL;
		}
		if (c < 0x80) {
			*o++ = (char)c;
		} else if (c < 0x800) {
			*o++ = (char)(0xc0 | c >> 6);
			*o++ = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			*o++ = (char)(0xe0 | c >> 12);
			*o++ = (char)(0x80 | (c >> 6 & 0x3f));
			*o++ = (char)(0x80 | (c & 0x3f));
		} else {
			*o++ = (char)(0xf0 | (c >> 18 & 7));
			*o++ = (char)(0x80 | (c >> 12 & 0x3f));
			*o++ = (char)(0x80 | (c >> 6 & 0x3f));
			*o++ = (char)(0x80 | (c & 0x3f));
		}
	}
	*o = 0;
	free(raw);
	return s;
}

int pmt_py__read_code(uint32_t pid, uint64_t addr, uint64_t qualname, struct pmt_py_code *out)
{
	uint8_t co[192], b[512];
	uint64_t table, n;
	ssize_t got;
	int32_t first;
	int err;

	memset(out, 0, sizeof(*out));
	err = peek(pid, addr, co, sizeof(co));
	if (err)
		return err;
	/* freed since the kernel met it: its qualname no longer its own, or
	 * its first word pymalloc's link to the next free block (an address,
	 * or 0), not a count of references; its name, read now, would be
	 * what reused the memory ("[python]" instead) */
	if (word(co, py311.k.co_qualname) != qualname || !word(co, 0) || word(co, 0) >> 32)
		return -ESTALE;
	memcpy(&first, co + py311.co_firstlineno, 4);
	out->firstlineno = first;
	out->qualname = read_str(pid, qualname);
	out->filename = read_str(pid, word(co, py311.co_filename));
	table = word(co, py311.co_linetable);
	if (table && (got = peek_more(pid, table, b, 32, sizeof(b))) >= 0 &&
	    (n = word(b, py311.bytes_size)) < 65536 && (out->linetable = malloc(n ? n : 1)) &&
	    !copy_or_peek(pid, table, b, (size_t)got, py311.bytes_data, out->linetable, n))
		out->nlinetable = n;
	if (!out->qualname || !out->filename) {
		pmt_py__code_free(out);
		return -EINVAL;
	}
	return 0;
}

void pmt_py__code_free(struct pmt_py_code *c)
{
	free(c->qualname);
	free(c->filename);
	free(c->linetable);
	memset(c, 0, sizeof(*c));
}

/* 3.11's varints: 6 bits a byte, bit 6 says more follow. */
static uint32_t varint(const uint8_t *t, size_t n, size_t *i)
{
	uint32_t v = 0, shift = 0;
	uint8_t b;

	do {
		b = *i < n ? t[(*i)++] : 0;
		v |= (uint32_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64 && shift < 32);
	return v;
}

int pmt_py__line(const uint8_t *t, size_t n, int firstlineno, uint32_t lasti)
{
	size_t i = 0;
	uint32_t at = 0, uv;
	/* wide: the table is another process's memory, and its deltas may
	 * add up past an int; a line no int holds is unknown */
	int64_t line = firstlineno, delta;

	/* entries: a first byte with bit 7 set, code in bits 3-6, code
	 * units covered - 1 in bits 0-2, then the code's bytes */
	while (i < n) {
		uint8_t b = t[i++];
		int code = b >> 3 & 15;

		delta = 0;
		if (code == 13 || code == 14) { /* no columns; long form */
			uv = varint(t, n, &i);
			delta = uv & 1 ? -(int64_t)(uv >> 1) : (int64_t)(uv >> 1);
		} else if (code >= 10 && code <= 12) { /* one line forms */
			delta = code - 10;
		}
		line += delta;
		at += (b & 7) + 1;
		if (lasti < at) /* 15: no location */
			return code == 15 || line < INT32_MIN || line > INT32_MAX ? 0 : (int)line;
		if (line < -(1LL << 40) || line > 1LL << 40)
			return 0;
		while (i < n && !(t[i] & 0x80))
			i++;
	}
	return 0;
}
