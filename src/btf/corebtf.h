/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The part of the kernel's BTF a BPF object's CO-RE relocations read:
 * each type a field relocation starts from or passes through, with the
 * members it names at the kernel's offsets, and the shapes of the fields
 * it ends on (libbpf's btf_custom_path then relocates against it as it
 * would against the whole of /sys/kernel/btf/vmlinux: the same
 * candidates, members and sizes). libbpf's own path parses all of the
 * kernel's 5.5 MB each start (a copy, an index of 150,000 types and the
 * search of them for each type relocated); this reads it in place, once,
 * and keeps a few hundred bytes. bpftool gen min_core_btf makes the same
 * from a file, ahead of time (the runtime tests compare the two).
 */
#ifndef PMT_COREBTF_H
#define PMT_COREBTF_H

#include <stddef.h>

struct pmt_corebtf_stats {
	unsigned int relos;	   /* the object's CO-RE relocations */
	unsigned int types;	   /* types in the BTF made */
	unsigned int kernel_types; /* types in the kernel's */
};

/* The .BTF and .BTF.ext sections of an ELF64 object in memory (a
 * skeleton's bytes): 0, or -1 (not such an object; no .BTF; a section
 * past its end). A missing .BTF.ext is *ext NULL. */
int pmt_corebtf__sections(const void *elf, size_t len, const void **btf, size_t *btf_len,
			  const void **ext, size_t *ext_len);

/* The BTF an object with .BTF obtf and .BTF.ext oext needs of the kernel
 * BTF kbtf (raw, as /sys/kernel/btf/vmlinux): malloc'd, *len bytes; or
 * NULL, why said: malformed input, a relocation other than a field's or
 * a local type id's (libbpf's own path is for those), none at all. */
void *pmt_corebtf__make(const void *kbtf, size_t klen, const void *obtf, size_t olen,
			const void *oext, size_t oext_len, size_t *len,
			struct pmt_corebtf_stats *st, char *why, size_t why_len);

#endif
