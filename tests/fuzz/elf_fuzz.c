// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: what pmtrace reads of an ELF file another user wrote
 * (any program it profiles, any debug file a server sends): the function
 * symbols (.symtab, .dynsym, the PLT), the USDT notes (.note.stapsdt),
 * the unwind rows (.eh_frame, .eh_frame_hdr, .debug_frame) and the
 * CPython probe. The input is the file, put in a memfd.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include "util/error.h"
#include "elf/elfsym.h"
#include "elf/stapsdt.h"
#include "unwind/cfi.h"
#include "python/cpython.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct pmt_elf_syms syms = {0};
	struct pmt_usdt_notes notes = {0};
	struct pmt_cfi cfi = {0};
	struct pmt_py_file py;
	struct pmt_error err = {0};
	char path[64], version[32];
	size_t i;

	if (fd < 0 && (fd = memfd_create("elf_fuzz", MFD_CLOEXEC)) < 0)
		return 0;
	if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (!pmt_elf__funcs(path, &syms, &err)) {
		pmt_elf__find(&syms, "main");
		pmt_elf__free(&syms);
	}
	pmt_error__clear(&err);
	if (!pmt_usdt__read(path, &notes, &err))
		pmt_usdt__free(&notes);
	pmt_error__clear(&err);
	if (!pmt_cfi__read(fd, &cfi, &err)) {
		for (i = 0; i < 64; i++)
			pmt_cfi__find(&cfi, (uint32_t)(i * 4099));
		pmt_cfi__free(&cfi);
	}
	pmt_py__probe(fd, &py, version, sizeof(version));
	return 0;
}
