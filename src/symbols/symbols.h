/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Addresses to names. Kernel addresses from /proc/kallsyms. User
 * addresses through each process's executable mappings to the file
 * mapped there, whose symbols are read once and shared by every process
 * that maps it (symbols/symfile.c); the vDSO from pmtrace's own.
 *
 * A process's mappings come from what the kernel reports as it runs
 * (fork, exec, mmap, exit: symbols/sideband_bpf.c), or from /proc for a process
 * met before that (pmt_syms__note_pid, pmt_syms__note_all). An exited
 * process is kept until its samples are printed (pmt_syms__reap), so it
 * resolves like a live one; at most 8192 exited ones wait, the oldest
 * beyond that are forgotten and counted. An aggregation by stack does
 * not wait for the print: the stacks of exited processes are rebased
 * onto their files (pmt_syms__rebase: a frame becomes a pinned file and
 * an offset, named without the process) and the processes go, so what
 * is kept grows with the files named, not with the processes that
 * exited (run/evloop_bpf.c settles them). A file is opened when it is
 * first mapped (so a replaced or deleted one still resolves), read on
 * first use, then closed; files no process maps stay a while (64 of
 * them) for the next process that maps them.
 *
 * Every call takes the object's lock; pmt_syms__lock holds it across
 * several (names from pmt_syms__module stay valid while it is held).
 */
#ifndef PMT_SYMBOLS_H
#define PMT_SYMBOLS_H

#include <stdbool.h>
#include <stdint.h>
#include "abi.h"
#include "symbols/cgroups.h"
#include "symbols/srcline.h"
#include "util/strutil.h"

struct pmt_syms;
/* Exited processes kept for samples not yet named, at most (fewer when
 * the environment's PMT_MAX_DEAD says so: tests of what lies past it) */
#define PMT_SYMS_MAX_DEAD 8192

/* demangle: C++ and Rust names as perf shows them (pmt_symfile__read).
 * inlines: inlined frames and source lines from the files' DWARF
 * (pmt_syms__srcframes; symbols/srcline.h). */
struct pmt_syms *pmt_syms__new(bool demangle, bool inlines);
void pmt_syms__free(struct pmt_syms *s);
/* Compressed debug sections read from uncompressed copies kept in dir
 * (NULL: the default; symbols/debugcache.h), not inflated in memory at
 * each open. Without this call, inflated in memory. false: no memory. */
bool pmt_syms__debug_cache(struct pmt_syms *s, const char *dir);
void pmt_syms__lock(struct pmt_syms *s);
void pmt_syms__unlock(struct pmt_syms *s);
/* Read pid's mappings from /proc now, if it is not known yet. */
void pmt_syms__note_pid(struct pmt_syms *s, uint32_t pid);
/* ... and of every process there is. */
void pmt_syms__note_all(struct pmt_syms *s);
/* pid runs JIT code (the kernel met it in a stack): its perf map opened
 * now, while /proc/PID/root and its pid in its namespace lead to it, and
 * kept open so that it names frames after the process is gone (an
 * aggregation's, named at the end). */
void pmt_syms__jit_seen(struct pmt_syms *s, uint32_t pid);

/* What the kernel reports, in the order it happened. */
struct pmt_mmap {
	uint32_t pid;
	uint64_t start, len, pgoff;
	uint64_t dev, ino; /* dev as makedev() makes it */
	const char *path;
};
void pmt_syms__fork(struct pmt_syms *s, uint32_t pid, uint32_t ppid);
/* ts: the exec's time (CLOCK_MONOTONIC) */
void pmt_syms__exec(struct pmt_syms *s, uint32_t pid, uint64_t ts);
void pmt_syms__mmap(struct pmt_syms *s, const struct pmt_mmap *m);
/* ts: CLOCK_MONOTONIC, as the samples' */
void pmt_syms__exit(struct pmt_syms *s, uint32_t pid, uint64_t ts);
/* Forget the processes that exited before ts: every sample of theirs
 * has been printed. */
void pmt_syms__reap(struct pmt_syms *s, uint64_t ts);
/* A stack of process pid's frames rebased onto the files mapped there:
 * each user address becomes its file and offset (a value naming calls
 * take without the process), so the process may be reaped before the
 * stack is printed. Memory then grows with the files named, not the
 * processes. A frame in no file (JIT code) is unknown from then on.
 * Returns how many frames were rebased. */
size_t pmt_syms__rebase(struct pmt_syms *s, uint32_t pid, uint64_t *ips, uint32_t n);
/* Are debuginfod servers named (DEBUGINFOD_URLS)? A stripped file's
 * debug file is then asked for when its symbols are first read
 * (symbols/debuginfod.h), and names it once it comes. */
bool pmt_syms__debuginfod(const struct pmt_syms *s);
/* Read the symbols of the file holding addr of process pid now (asking
 * for its debug file), as naming it would, without the name. */
void pmt_syms__touch(struct pmt_syms *s, uint32_t pid, uint64_t addr);
/* The file mapped at user address addr of process pid (at the time of
 * the records applied so far), or the vDSO (ino 0): false if none (JIT
 * code). */
struct pmt_mapped {
	uint64_t start, end; /* the mapping */
	uint64_t pgoff;	     /* the file offset of start */
	uint64_t dev, ino;   /* dev as makedev() makes it */
	char path[4096];
};
bool pmt_syms__mapped(struct pmt_syms *s, uint32_t pid, uint64_t addr, struct pmt_mapped *out);
/* Await the debug files asked of debuginfod, at most ms, and say what
 * did not come (before the last names are printed). */
void pmt_syms__await_debug(struct pmt_syms *s, int ms);
/* Forget the n processes that exited first (and wait still). */
void pmt_syms__reap_oldest(struct pmt_syms *s, size_t n);
/* Exited processes waiting to be reaped; *bound: how many may (past it
 * the oldest are forgotten). */
size_t pmt_syms__waiting(struct pmt_syms *s, size_t *bound);
/* Has pid exited (and not been reaped yet)? */
bool pmt_syms__exited(struct pmt_syms *s, uint32_t pid);
/* Called, without the lock, when an exit would find the bound of those
 * waiting reached, before the oldest is forgotten: its owner settles
 * what it can of theirs (an aggregation rebases their stacks onto their
 * files) and reaps them. NULL: none. */
void pmt_syms__on_bound(struct pmt_syms *s, void (*settle)(void *ctx), void *ctx);
/* Exited processes forgotten before being reaped (too many waited)
 * since the last call. */
uint64_t pmt_syms__forgotten(struct pmt_syms *s);
struct pmt_syms_stats {
	size_t procs, exited, files, fds, bytes;
	uint64_t forgotten; /* exited processes forgotten, in all */
	/* processes of other users whose maps this user may not read
	 * (CAP_SYS_PTRACE; the first one's pid) */
	uint64_t denied;
	uint32_t denied_pid;
	bool ksyms_hidden; /* /proc/kallsyms gave only zeros (CAP_SYSLOG) */
	/* processes whose perf map another user owns: not read (the first
	 * one's pid and the file's owner) */
	uint64_t jit_refused;
	uint32_t jit_refused_pid, jit_refused_uid;
	/* Python code objects read from processes, and copied from one read
	 * before (an interpreter file's own: python/codes.h) */
	uint64_t py_read, py_copied;
	/* debug files' uncompressed copies made and used (debugcache.h) */
	uint64_t debug_made, debug_used;
};
void pmt_syms__stats(struct pmt_syms *s, struct pmt_syms_stats *st);

/* Append what show asks of cgroup v2 id (symbols/cgroups.h): a path
 * (the id itself for a cgroup gone before it was named), a container id
 * or a unit (empty when there is none). */
void pmt_syms__cgroup(struct pmt_syms *s, uint64_t id, enum pmt_cgroup_show show,
		      struct pmt_buf *b);

/* s may be NULL (out of memory): every name is then unknown. */
/* Append the name of addr in process pid (kernel addresses need no pid):
 * "func", or "func+0x1a" with offset; in a file no symbol of which holds
 * it, "FILE+0xOFFSET" (the file's base name and the file offset, as
 * addr2line -e FILE takes it: one code stays one frame, the same in
 * every process); "[unknown]" when nothing is known (with " 0x..." the
 * address when with_addr_if_unknown). Returns whether a symbol was
 * found. */
bool pmt_syms__name(struct pmt_syms *s, uint32_t pid, uint64_t addr, bool offset,
		    bool with_addr_if_unknown, struct pmt_buf *b);
/* A name pmt_syms__name gave with its offset ("func+0x1a", or "func" at
 * offset 0) appended to b as bpftrace prints a stack's frame, the offset
 * in decimal: "func+26", "func+0". */
void pmt_syms__offset_decimal(const char *name, size_t len, struct pmt_buf *b);
/* What the DWARF says of a user address of process pid, innermost
 * first: the functions inlined there ("(inlined)" frames as perf shows
 * them), then the function holding it (name NULL: pmt_syms__name names
 * it), each with its source file and line. 0 when nothing is known (no
 * DWARF, a kernel address, inlines off). A Python frame (PMT_PY_FRAME)
 * is one frame named by its function (qualname), file and line. The frames stay valid while the
 * caller holds the lock (pmt_syms__lock), until its next call. */
int pmt_syms__srcframes(struct pmt_syms *s, uint32_t pid, uint64_t addr,
			const struct pmt_srcframe **frames);
/* Files' DWARF no name needed for idle_ns closed, where their paths lead
 * back to them (opened again when a name needs it: a print's DWARF,
 * tens of MB for a big library, is not held between prints); the number
 * closed. */
size_t pmt_syms__let_go(struct pmt_syms *s, uint64_t idle_ns);
/* Python frames (PMT_PY_FRAME values among user frames) name the code
 * object they run: the kernel's id for it, read from process pid's memory
 * at addr when the kernel first meets it (this call: while the process
 * lives; qualname: its qualname object then, checked), kept in a bounded
 * table. */
void pmt_syms__python_code(struct pmt_syms *s, uint32_t pid, uint32_t id, uint64_t addr,
			   uint64_t qualname);
/* A frame's address as shown: a Python frame's is its code object's (0
 * when unknown). */
uint64_t pmt_syms__frame_addr(struct pmt_syms *s, uint64_t v);
/* Append addr's frames as folded stacks show them, outermost first: its
 * function, then the functions inlined at addr, each marked
 * " (inlined)" as perf marks them, separated by ';'. */
void pmt_syms__folded(struct pmt_syms *s, uint32_t pid, uint64_t addr, struct pmt_buf *b);
/* The names addr's frame shows as, innermost first, each to fn (built
 * in scratch): the functions inlined there, marked " (inlined)" as perf
 * marks them, then its own (pmt_syms__name, the address if unknown). */
void pmt_syms__names(struct pmt_syms *s, uint32_t pid, uint64_t addr, struct pmt_buf *scratch,
		     void (*fn)(void *ctx, const char *name, size_t len), void *ctx);
/* The file addr of process pid lies in (kernel addresses: the kernel). */
struct pmt_module {
	const char *file;    /* valid until the next call; "[kernel.kallsyms]" */
	char build_id[41];   /* hex, "" when unknown */
	uint64_t start, end; /* where it is mapped */
	uint64_t pgoff;	     /* the file offset mapped at start */
};
/* false when addr is in no known file. */
bool pmt_syms__module(struct pmt_syms *s, uint32_t pid, uint64_t addr, struct pmt_module *m);
/* Is addr in the kernel half of the address space? */
static inline bool pmt_is_kernel_addr(uint64_t addr)
{
	return addr >= 0xffff800000000000ULL;
}

/* A frame rebased onto a file (pmt_syms__rebase): named alike in every
 * process. */
static inline bool pmt_is_file_frame(uint64_t v)
{
	return (v >> 62) == 1;
}

#endif
