/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Private to src/symbols/: the state behind struct pmt_syms and what its
 * files call of each other. */
#ifndef PMT_SYMBOLS_INTERNAL_H
#define PMT_SYMBOLS_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "symbols/cgroups.h"
#include "elf/elfsym.h"
#include "symbols/debugcache.h"
#include "symbols/debuginfod.h"
#include "symbols/jitmap.h"
#include "symbols/ksyms.h"
#include "symbols/symbols.h"
#include "symbols/srcline.h"
#include "symbols/symfile.h"
#include "python/codes.h"

/* Exited processes kept for samples not yet printed; beyond this the
 * oldest are forgotten (and counted). */
#define MAX_DEAD PMT_SYMS_MAX_DEAD
/* Files no process maps any more, kept for the next one that does. */
#define MAX_IDLE_FILES 64
/* Descriptors held for files not yet read (so replaced or deleted files
 * still resolve); beyond this, files are opened by path when read. */
#define MAX_HELD_FDS 128
/* Files whose DWARF is kept open for inlined frames and lines; the one
 * used longest ago is closed beyond this (and opened again by path when
 * needed). */
#define MAX_SRC_FILES 8
/* A file's DWARF is opened when a name first needs it, not when its
 * symbols are read, where its path leads back to it (the same device and
 * inode): else then, while the process's reference is at hand. */

/* One executable file, shared by every process mapping it. */
struct file {
	uint64_t dev, ino; /* the key; 0, 0: the vDSO */
	char *path;
	int fd;			 /* held until read, else -1 */
	struct pmt_symfile *tab; /* read on first use */
	bool tried;		 /* read once, even if that failed */
	struct pmt_srcfile *src; /* its DWARF, when it has some: open or asleep */
	bool src_tried;
	uint64_t src_used_ns; /* when src last answered (CLOCK_MONOTONIC ns) */
	uint32_t refs;	      /* mappings naming it (and a pin) */
	uint32_t pin;	      /* 1 + its index in pmt_syms.pinned; 0: none */
	uint64_t idle_since;  /* refs 0: when (a sequence number) */
	/* stripped: its debug file asked of debuginfod, not come yet; the
	 * fetches' generation when last looked */
	bool fetching;
	uint64_t fetch_gen;
	/* its PT_LOAD segments, read at the first Python code object met
	 * past its mapping (syms_file_loads) */
	struct pmt_elf_loads *loads;
	bool loads_tried;
};

struct map {
	uint64_t start, end, pgoff;
	struct file *f;
};

struct proc {
	uint32_t pid;
	bool dead;
	uint64_t exit_ts;
	struct map *maps; /* sorted by start, disjoint */
	size_t n, cap;
	/* its perf map (JIT code), opened when an address in no file is
	 * first named; looked for again at most every JIT_RETRY_NS */
	struct pmt_jitmap *jit;
	uint64_t jit_looked_ns;
	uint32_t uid; /* its user (/proc/PID's owner) when first met; -1: gone */
};

/* A process without a perf map when first asked may write one later (a
 * runtime starting up, or after an exec): looked for again this often
 * (a failed open, a microsecond, each time an address in no file of such
 * a process is named). */
#define JIT_RETRY_NS (100 * 1000 * 1000ULL)

struct dead {
	uint32_t pid;
	uint64_t ts;
};

/* Kernel stacks repeat: the last lookups, direct-mapped by address
 * (binary searches of ~150,000 symbols were a tenth of a streamed
 * stack's cost). The table is read once, so entries never go stale. */
#define KCACHE 1024

struct kcached {
	uint64_t addr; /* 0: empty (no kernel address is 0) */
	struct pmt_ksym_found sym;
	bool found;
};

/* The last process whose Python code came before its maps
 * (py_static_queried): its maps kept open for queries, and the mappings
 * they gave, file or anonymous (a churn's interpreter asks of its
 * deep-frozen data and its heap, again and again); closed and forgotten
 * at its exec and exit, or when another's code comes. */
#define PYQ_RANGES 4
struct pmt_pyquery {
	uint32_t pid;
	int fd; /* its /proc/PID/maps; -1: none */
	struct pyq_range {
		uint64_t start, end, pgoff, dev, ino; /* ino 0: anonymous */
		char *path;			      /* a file's */
	} r[PYQ_RANGES];
	unsigned int n, next; /* ranges held; the next to give way */
	char path[PATH_MAX];  /* a query's */
};

struct pmt_syms {
	pthread_mutex_t lock; /* recursive: spans hold it around calls */
	struct pmt_ksyms ktab;
	struct kcached kcache[KCACHE];
	bool ksyms_read;
	bool demangle;		     /* C++/Rust names as perf shows them */
	bool inlines;		     /* inlined frames and source lines from DWARF */
	size_t nsrc;		     /* files with src open */
	struct pmt_pycodes py;	     /* the code objects read (python/codes.h) */
	struct pmt_srcframe pyframe; /* the last Python frame's, for srcframes */
	struct pmt_pyquery pyquery;
	/* sorted by pid, each beside its process: a search reads one
	 * array, not a process a step (the sideband's records, Python's
	 * codes and a profile's locations each look one up) */
	struct proc_at {
		uint32_t pid;
		struct proc *p;
	} * procs;
	size_t nprocs, cap;
	struct file **files; /* sorted by (dev, ino) */
	size_t nfiles, fcap, idle, held;
	uint64_t seq;
	struct dead *dead; /* exits in order: a ring of MAX_DEAD */
	size_t dead_head, ndead;
	uint64_t forgotten, forgotten_total; /* since the last call; in all */
	/* processes whose maps this user may not read (CAP_SYS_PTRACE) */
	uint64_t denied;
	uint32_t denied_pid;
	/* kallsyms' addresses hidden (CAP_SYSLOG) */
	bool ksyms_hidden;
	/* perf maps not read: another user's (the first's file and owner) */
	uint64_t jit_refused;
	uint32_t jit_refused_pid, jit_refused_uid;
	size_t max_dead;	     /* MAX_DEAD, or PMT_MAX_DEAD's */
	void (*on_bound)(void *ctx); /* pmt_syms__on_bound */
	void *on_bound_ctx;
	bool settling; /* on_bound under way */
	/* files frames were rebased onto (pmt_syms__rebase), by index:
	 * kept, with a reference, for the stacks that name them */
	struct file **pinned;
	size_t npinned, pincap;
	uint64_t unrebased; /* frames in no file (JIT's, or too many files) */
	/* JIT functions' names of rebased frames, interned */
	char *jit_names;
	size_t jit_len, jit_cap;
	uint32_t *jit_at; /* offsets in jit_names */
	size_t njit, jit_atcap;
	uint32_t *jit_index; /* open addressing: 1 + index in jit_at, 0 empty */
	size_t jit_icap;
	struct pmt_cgnames *cg;	       /* cgroup names, made at first use */
	struct pmt_debuginfod *dbgd;   /* made at the first stripped file */
	struct pmt_debugcache *dcache; /* pmt_syms__debug_cache's, or NULL */
	bool dbgd_tried;
};

/* files.c */
struct file *syms_file_get(struct pmt_syms *s, uint64_t dev, uint64_t ino, const char *path,
			   bool hold, uint32_t pid, uint64_t start, uint64_t end);
void syms_file_ref(struct pmt_syms *s, struct file *f);
void syms_file_unref(struct pmt_syms *s, struct file *f);
int syms_file_open(struct pmt_syms *s, struct file *f, uint32_t pid, const struct map *m);
/* Its PT_LOAD segments, read once; NULL when they cannot be. */
const struct pmt_elf_loads *syms_file_loads(struct pmt_syms *s, struct file *f, uint32_t pid,
					    const struct map *m);
bool syms_file_src(struct pmt_syms *s, struct file *f, int fd);
/* f's DWARF is open now (what nsrc counts) */
static inline bool syms_src_open(const struct file *f)
{
	return f->src && !pmt_srcfile__asleep(f->src);
}
const struct pmt_symfile *syms_file_table(struct pmt_syms *s, struct file *f, uint32_t pid,
					  const struct map *m);
void syms_file_free(struct pmt_syms *s, struct file *f);

/* procs.c */
struct proc *syms_proc_find(const struct pmt_syms *s, uint32_t pid, size_t *at);
/* the Python query's process forgotten, its maps closed (pid 0: any) */
void syms_pyquery_drop(struct pmt_syms *s, uint32_t pid);
struct proc *syms_proc_get(struct pmt_syms *s, uint32_t pid);
void syms_proc_free(struct pmt_syms *s, struct proc *p);
struct map *syms_map_find(struct proc *p, uint64_t addr);

/* A frame rebased onto a file: PMT_FILE_FRAME | index << 36 | offset */
#define FILE_FRAME_SHIFT 36
#define MAX_PINNED (1u << 20)
/* JIT functions' names kept for rebased frames; past this, unknown */
#define MAX_JIT_NAMES (1u << 22)
static inline bool syms_is_file_frame(uint64_t v)
{
	return pmt_is_file_frame(v);
}

static inline bool syms_is_py_frame(uint64_t v)
{
	return (v & PMT_PY_FRAME) && !pmt_is_kernel_addr(v);
}

#endif
