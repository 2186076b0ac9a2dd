/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Names of JIT code from a process's perf map: the file perf reads,
 * /tmp/perf-PID.map, one "START SIZE NAME" line a function, START and
 * SIZE in hex with or without 0x (node --perf-basic-prof, the JVM's
 * Compiler.perfmap, .NET's DOTNET_PerfMapEnabled). A process in its own
 * PID and mount namespaces writes it under its own root and pid
 * (/proc/PID/root/tmp/perf-NSPID.map). The file is read as it grows:
 * lines appended later are read at the next lookup that misses, at most
 * every PMT_JITMAP_RECHECK_NS (a runtime writes a function's line before
 * running it: a streamed sample is named after it within that time); a
 * later line for the same address wins.
 */
#ifndef PMT_JITMAP_H
#define PMT_JITMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PMT_JITMAP_RECHECK_NS (1000 * 1000ULL)
/* functions kept a process (a runtime rewrites hot code, and each
 * version is a line): beyond this, further lines are not read */
#define PMT_JITMAP_MAX (1u << 20)

struct pmt_jitmap;

/* pid's perf map, opened now (its descriptor is kept, so the file is
 * still read after the process has gone); NULL when it has none, or
 * (errno EPERM, the file's owner in *refused) when another user than the
 * process's (uid, -1 when not known) or root owns it. */
struct pmt_jitmap *pmt_jitmap__open(uint32_t pid, uint32_t uid, uid_t *refused);
/* The map read from an open descriptor (taken over), for tests. */
struct pmt_jitmap *pmt_jitmap__from_fd(int fd);
void pmt_jitmap__free(struct pmt_jitmap *j);
/* The function at addr and addr's offset in it, or NULL; now_ns: the
 * monotonic time, to read lines added since, on a miss. */
const char *pmt_jitmap__name(struct pmt_jitmap *j, uint64_t addr, uint64_t *off, uint64_t now_ns);
/* Functions read so far, and lines skipped (malformed, or past the bound). */
size_t pmt_jitmap__count(const struct pmt_jitmap *j);
size_t pmt_jitmap__skipped(const struct pmt_jitmap *j);

#endif
