/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What this machine has: CPU lists (-C, /sys's online CPUs) and a
 * process's threads. */
#ifndef PMT_MACHINE_H
#define PMT_MACHINE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "util/error.h"

/*
 * Parse a CPU list ("0-3,6") into a bitmap of nbits bits.
 * -EINVAL with a message in err.
 */
int pmt_parse_cpulist(const char *s, uint64_t *mask, int nbits, struct pmt_error *err);
/* The online CPUs as a PMT_MAX_CPUS-bit mask; -errno. */
int pmt_online_cpus(uint64_t *mask);
/* Lowest online CPU (0 if that cannot be read). */
int pmt_first_online_cpu(void);
/* The threads process pid has now (-p), *tids malloc'd; -errno. */
int pmt_thread_ids(pid_t pid, pid_t **tids, size_t *n);
/* This process's effective capabilities (CapEff), bit n for CAP n; 0
 * when unknown. */
uint64_t pmt_caps_effective(void);
#define PMT_CAP_SYS_PTRACE 19
#define PMT_CAP_SYS_ADMIN 21
#define PMT_CAP_SYSLOG 34
#define PMT_CAP_PERFMON 38
#define PMT_CAP_BPF 39

/* The whole pages of [p, p + n) given back to the page cache
 * (MADV_DONTNEED): they leave this process's RSS, and a later read maps
 * them again from the file. Only for a file's read-only mapping (never
 * written: no page of it is this process's own). */
void pmt_pages_give_back(const void *p, size_t n);

/* The machine pmtrace is built for: Debian's multiarch directory and the
 * dynamic loader's name */
#if defined(__aarch64__)
#define PMT_MULTIARCH "aarch64-linux-gnu"
#define PMT_LD_SO "ld-linux-aarch64.so.1"
#else
#define PMT_MULTIARCH "x86_64-linux-gnu"
#define PMT_LD_SO "ld-linux-x86-64.so.2"
#endif

#endif
