/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Per-CPU u64 counters of a BPF map, read from userspace. */
#ifndef PMT_PERCPU_H
#define PMT_PERCPU_H

#include <stdint.h>

struct bpf_map;

/* Each possible CPU's value of key (malloc'd), or NULL. */
uint64_t *pmt_percpu__vals(const struct bpf_map *map, uint32_t key);
/* Their sum (0 when unreadable). */
uint64_t pmt_percpu__sum(const struct bpf_map *map, uint32_t key);

#endif
