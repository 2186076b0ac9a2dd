// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: a Python process's memory as pmtrace reads it. The
 * input is a memory image: its first 8 bytes the qualname pointer the
 * kernel saw, the rest the code object and what it points at, placed in
 * this process; any 8-byte word below the image's size is an offset in
 * it, made an address, so the fuzzer builds strings, tuples and line
 * tables the reader follows (process_vm_readv of this process). Then the
 * line table alone, as the frames' lines are read from it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "python/cpython.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pmt_py_code code;
	uint64_t *img, qualname;
	size_t words, i;
	uint32_t lasti;

	if (size < 16)
		return 0;
	words = (size + 7) / 8;
	img = calloc(words, 8);
	memcpy(img, data, size);
	for (i = 0; i < words; i++)
		if (img[i] && img[i] < size)
			img[i] += (uint64_t)(uintptr_t)img;
	qualname = img[0];
	if (!pmt_py__read_code((uint32_t)getpid(), (uint64_t)(uintptr_t)(img + 1), qualname, &code))
		pmt_py__code_free(&code);
	memcpy(&lasti, data, 4);
	pmt_py__line(data + 8, size - 8, (int)data[4] - 128, lasti % 4096);
	free(img);
	return 0;
}
