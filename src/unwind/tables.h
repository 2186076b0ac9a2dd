/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The user side of --unwind dwarf (bpf/unwind.bpf.h): the kernel's
 * unwinder notes each file it meets without rows in pmt_cfi_wanted; here
 * that file is opened through a process mapping it (/proc/PID/map_files,
 * so a deleted or replaced file still reads), its CFI flattened
 * (unwind/cfi.h) into pmt_cfi_rows and the file entered in pmt_cfi_files.
 * Rows are shared by every process mapping the file; a file is asked for
 * as soon as a process maps it (bpf/unwind.bpf.c). The row array and the
 * file map have fixed sizes: when a file does not fit, the files no
 * process maps any more give their rows and entries back (rows taken
 * again once ripe, unwind/rowspace.h); if it still does not fit, it is
 * walked by frame pointers and that is said once.
 */
#ifndef PMT_UNWIND_TABLES_H
#define PMT_UNWIND_TABLES_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "util/error.h"
#include "unwind/rereads.h"
#include "unwind/resume.h"
#include "unwind/rowspace.h"
#include "unwind/rules.h"
#include "abi.h"

struct ring_buffer;

struct pmtrace_bpf;

#define PMT_UNWIND_REST 64
#define PMT_UNWIND_REFUSED 64

/* rows found for stacks finished in user space, by file and offset */
#define PMT_ROW_MEMO_BITS 10
struct pmt_row_memo {
	uint32_t first, at;
	struct pmt_cfi_row row;
	bool used, found;
};

struct pmt_unwinder {
	struct pmtrace_bpf *skel;
	struct pmt_syms *syms; /* names Python frames: code objects read into it */
	/* rows_used and the file entries: the loader thread and the main
	 * one (which reads a file itself to finish a stack) */
	pthread_mutex_t lock;
	pthread_mutex_t read_lock; /* one file read at a time (load_file) */
	struct pmt_rowspace rows;
	struct pmt_cfi_rules rules; /* what the rows index, under lock */
	bool warned_full, warned_files, warned_rules;
	/* given back: counted up (atomically) before any file's entry is
	 * deleted, so a reader of rows that saw it unchanged after reading
	 * read rows still the file's */
	uint64_t gen;
	uint64_t reclaimed_ns;		     /* the last time, and */
	bool reclaim_freed;		     /* whether it gave any back */
	uint64_t files_given_back, reclaims; /* for -v's summary */
	/* files read again: held longer each time before they may go */
	struct pmt_rereads rereads;
	uint64_t gone_not_reread; /* files of processes gone not read again */
	/* files with no room when read (walked by frame pointers): asked
	 * for again once files no process maps gave rows back */
	struct {
		struct pmt_cfi_file_key key;
		uint32_t rows;
	} refused[PMT_UNWIND_REFUSED];
	uint32_t nrefused;
	struct pmt_row_memo *memo; /* 1 << PMT_ROW_MEMO_BITS, made at first use */
	uint64_t memo_gen;	   /* ... of rows read in this generation */
	uint64_t resume_read_ns;   /* CPU the main thread spent reading tables
				  * for stacks it finished */
	/* pmt_queued as last scanned (the loader and the main thread both
	 * scan: atomic) */
	uint64_t queued_seen[PMT_QUEUES];
	/* stacks finished, by where they ended (the --listen thread reads
	 * them: atomic) */
	uint64_t resume_ends[PMT_RESUME__MAX];
	/* processes whose other files are read after the wanted ones */
	uint32_t rest[PMT_UNWIND_REST], nrest;
	/* the loader thread: tables arrive while the main loop prints */
	pthread_t thread;
	int wake_fd; /* written to stop it, or to have it read, at once */
	/* the kernel's word that a queue moved (pmt_queue_wake): the loader
	 * sleeps until then, not a round every few ms (NULL: it polls) */
	struct ring_buffer *queue_wake;
	bool woken; /* written, and the loader has not yet read it */
	bool running;
	volatile bool stop;
	/* libc, the loader and the command, read while the programs load */
	struct prefetch *pre;
	pthread_t pre_thread;
	bool prefetching;
};

/* Can this kernel unwind in BPF (bpf_find_vma, bpf_loop)? 0, or
 * -EOPNOTSUPP with err saying why not. */
int pmt_unwind__supported(struct pmt_error *err);
/* Before load: size the maps and set the rodata for on (dwarf) or off;
 * python: CPython frames among user frames (bpf/python.bpf.h). */
void pmt_unwind__size(struct pmtrace_bpf *skel, bool on, bool python);
/* Before load, after every program's autoload was cleared: the mapping
 * tracking programs (bpf/unwind.bpf.c) load with dwarf unwinding. */
void pmt_unwind__autoload(struct pmtrace_bpf *skel);
void pmt_unwinder__init(struct pmt_unwinder *u, struct pmtrace_bpf *skel);
/* Before load: read the tables of libc, the loader and cmd (-- CMD's
 * program, or NULL) in a thread while the programs load; running (a
 * system-wide session): those of the processes on a CPU now too. */
void pmt_unwinder__prefetch(struct pmt_unwinder *u, const char *cmd, bool running);
/* At attach, before the probes: the mapping tracking programs are
 * attached, the prefetched tables given to the kernel, then a thread loads
 * the files the kernel asks for, every few ms (the main loop may be busy
 * printing for longer). -errno. */
int pmt_unwinder__start(struct pmt_unwinder *u, struct pmt_error *e);
/* Read the code objects the kernel queued now, not at the thread's next
 * round: before printing records whose Python frames name them; and open
 * the perf maps of the processes it met in JIT code, while they live (the
 * thread may be reading a large file's tables for a second or more, and
 * a container's map is gone with its root). */
void pmt_unwinder__poll_queues(struct pmt_unwinder *u);
/* Finish a streamed user stack of process pid that the kernel left at a
 * file without rows (its dump d, the stack copied after it and its
 * d->npy Python frames py): up to max frames into out. A file not read
 * yet is read now. */
struct pmt_resume pmt_unwinder__resume(struct pmt_unwinder *u, uint32_t pid,
				       const struct pmt_ustack_dump *d, const void *stack,
				       const uint64_t *py, uint64_t *out, uint32_t max);
/* The stacks finished from their copy that ended as the kernel's walks
 * counted in stat end (PMT_STAT_UNWIND_ENDED, _DEPTH, _UNREAD; 0 for
 * any other stat): the two are one reason, told apart only by where the
 * walk ran. Safe from any thread. */
uint64_t pmt_unwinder__ended_as(const struct pmt_unwinder *u, enum pmt_stat stat);
/* ... and those that ran past their full copy (no kernel stat). */
uint64_t pmt_unwinder__beyond_copy(const struct pmt_unwinder *u);
/* Have the loader thread read the files the kernel asked for now, not
 * at its next round. */
void pmt_unwinder__wake(struct pmt_unwinder *u);
/* Stop and join the threads (idempotent). */
void pmt_unwinder__stop(struct pmt_unwinder *u);
/* After the last stack is finished: what the unwinder holds (idempotent). */
void pmt_unwinder__free(struct pmt_unwinder *u);

#endif
