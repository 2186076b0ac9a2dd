/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The kernel's BTF as the loader reads it (kernel_btf_bpf.c). */
#ifndef PMT_KERNEL_BTF_H
#define PMT_KERNEL_BTF_H

#include <stddef.h>

/* The kernel's types the BPF object obj (ELF bytes) relocates against,
 * made from the kernel's BTF (btf/corebtf.h) into a file of their own:
 * its path in path, for libbpf's btf_custom_path, until
 * pmt_kernel_btf__core_done(). 0, or -1 where libbpf's own path is
 * taken (the session holds the whole parse already, the object has a
 * relocation not made here, PMT_CORE_BTF=0; -v says which). */
int pmt_kernel_btf__core(const void *obj, size_t len, char *path, size_t path_len);
/* The file made closed (libbpf has read it: the object is loaded). */
void pmt_kernel_btf__core_done(void);

#endif
