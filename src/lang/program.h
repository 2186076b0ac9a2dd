/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * bpftrace's programs (`pmtrace FILE.bt`, `pmtrace -e 'PROGRAM'`) read
 * into what the engine runs: probes with their predicates as filters,
 * and the maps they update as aggregations (each its function, value
 * and keys in pmtrace's expression language). What the engine cannot
 * run yet is refused here, naming the construct and its line, before
 * anything is attached.
 *
 * The subset today: probe lists of tracepoint, kprobe/kretprobe,
 * kfunc/kretfunc, uprobe/uretprobe, usdt and rawtracepoint (and their
 * one-letter forms), a /predicate/, and in every block either printf
 * calls (streamed: --printf) or map updates, each map's the same
 * wherever it is, @map[keys] = count() | sum(E) | avg(E) | min(E) |
 * max(E) | stats(E) | hist(E) | lhist(E, MIN, MAX, STEP), or
 * @map[keys]++; a start time (@start[K] = nsecs in one
 * probe's block, read back as (nsecs - @start[K]) / N into the map in
 * another's: --latency); values saved (@name[K] = V, a number under one
 * key) and read back (@name[K] anywhere a value is read), or forgotten
 * (delete); if/else (what is inside done under its condition); BEGIN's
 * constants (@name[N] = "TEXT" or NUMBER); $variables (their values' text in their
 * place; a number given inside an if, (GUARD) ? (VALUE) : (BEFORE)); interval blocks (exit(), time(), print(@MAP) and clear(@MAP)
 * done by pmtrace, or a block that prints or computes as a probe every
 * interval: every_ns); cat("FILE") (printed as printf's "%s" of it);
 * BEGIN's and END's printf of literals, END's print(@MAP[, N]) and
 * clear(@MAP); casts; #include lines and
 * #ifndef BPFTRACE_HAVE_BTF sections (types come from BTF), and
 * comments.
 */
#ifndef PMT_PROGRAM_H
#define PMT_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util/error.h"
#include "util/strutil.h"

/* maps a program updates; updates a block makes */
#define PMT_PROG_MAPS 16
#define PMT_PROG_UPDATES 8

/* A map the program aggregates into, updated the same way in every
 * block: @name[keys] = fn(value) */
struct pmt_prog_map {
	char *name;  /* after '@' ("" for @) */
	char *fn;    /* "count", "sum", ... "hist", "lhist" */
	char *value; /* its argument (lhist: "E:MIN:MAX:STEP"), or NULL */
	char *keys;  /* "comm,pid", or NULL */
	bool incr;   /* @name++: printed as count()'s */
	int line;    /* of its first update */
};

/* What END does, in order: print text, or print map (its name after
 * '@') with its top entries alone (print(@MAP, N); 0: all) */
struct pmt_prog_end {
	char *text, *map;
	int top;
};

struct pmt_program;
/* The index in p->maps of the map named name, or -1 */
int pmt_program__map(const struct pmt_program *p, const char *name);

struct pmt_prog_probe {
	char *spec;   /* "kprobe:vfs_read": pmtrace's kind prefix and the rest */
	char *filter; /* its block's predicate as a filter, or NULL */
	/* its block's printf calls' arguments, '"FMT", A, B; "FMT2"' (as
	 * --printf takes them), or NULL */
	char *printf;
	char *where; /* "FILE:LINE" of the probe, for what is refused later */
	int block;   /* its block's number: a list's probes share it */
	/* a start time's probes (@start[K] = nsecs, read back as nsecs -
	 * @start[K]): PMT_PROG_START, PMT_PROG_END; else 0 */
	int role;
	/* its block's values saved and forgotten, "@M[K] = V; delete(@M[K])"
	 * (filter/expr.h's statements), or NULL; stmts_only: its block does
	 * nothing else */
	char *stmts;
	bool stmts_only;
	/* the condition its block's printf is under (if), or NULL */
	char *print_guard;
	/* the maps its block updates (indices in maps[]), in order, each
	 * under its condition (if; NULL: none), with keys and value of its
	 * own where they are not the map's first update's (NULL: those;
	 * the value lhist's E alone) */
	int upd[PMT_PROG_UPDATES];
	char *upd_guard[PMT_PROG_UPDATES];
	char *upd_keys[PMT_PROG_UPDATES], *upd_value[PMT_PROG_UPDATES];
	int nupd;
	/* interval:s:N whose block prints or computes ($variables): run
	 * every every_ns in the kernel (a perf event on one CPU, as bpftrace
	 * runs it); 0: any other probe */
	uint64_t every_ns;
};

enum { PMT_PROG_START = 1, PMT_PROG_END = 2 };

struct pmt_program {
	struct pmt_prog_probe *probes;
	size_t nprobes, cap;
	struct pmt_prog_map maps[PMT_PROG_MAPS];
	int nmaps;
	char *begin; /* what BEGIN prints, or NULL */
	/* what END does before the maps left are printed */
	struct pmt_prog_end *ends;
	size_t nends;
	/* the start time's map (NULL: none), as --latency measures it: the
	 * map's value is the time from the START probe's event to the END
	 * probe's, matched by lat_match ("K1=K2"; NULL: by thread), in
	 * lat_unit ("ns" "us" "ms" "s") */
	char *lat_map, *lat_key, *lat_match;
	const char *lat_unit;
	/* the maps END clears, " NAME NAME " (not printed at the end), or NULL */
	char *cleared;
	/* the maps saving the probe's func, or its probe (name), " NAME NAME "
	 * or NULL: a probe's number in the kernel, its name where printed */
	char *funcs, *probe_names;
	/* the maps saving the kernel's stack (@reqstack[k] = kstack), " NAME
	 * NAME " or NULL: its key in the session's stacks, a stack where it
	 * keys a map */
	char *kstack_maps;
	struct pmt_prog_table *tables; /* BEGIN's */
	size_t ntables;
	/* interval:s:N (or ms:N) blocks: every interval seconds, exit()
	 * (exit_after), or time("FORMAT") (head: what it prints first,
	 * strftime's format; NULL without time()), print(@MAP) and maybe
	 * clear(@MAP) (printed: the map; cleared: what it counts starts again) */
	double interval;
	bool exit_after, printed, cleared_each;
	char *head;
	char *interval_map; /* the name print(@MAP) and clear(@MAP) give */
	/* config = { missing_probes = ignore | warn | error; } (newer
	 * bpftrace's): a probe of a list that is not there, or that cannot
	 * be attached, skipped without a word, with a warning (the default),
	 * or refused */
	enum { PMT_MISSING_WARN, PMT_MISSING_IGNORE, PMT_MISSING_ERROR } missing_probes;
	/* its kernel function probes as bpftrace names them: kprobe: or
	 * kretprobe: (kprobes in bpftrace), kfunc: or fentry: (trampolines) */
	bool kprobes, kfuncs;
};

/* Does map save a probe's func ('f') or probe ('p'), or neither (0)? */
int pmt_program__names_probe(const struct pmt_program *p, const char *map);

/* Program p's table of strings named map, or NULL */
const struct pmt_prog_table *pmt_program__strings(const struct pmt_program *p, const char *map);

/* BEGIN's constants, @NAME[KEY] = "TEXT" or = NUMBER (bpftrace's name
 * tables: @cap[0] = "CAP_CHOWN"): strings printf shows by key, numbers
 * saved values before the probes are attached. */
struct pmt_prog_table {
	char *map;
	bool strs;  /* "TEXT"s (str[]), else numbers (num[]) */
	bool keyed; /* @NAME[KEY], else @NAME (key 0) */
	size_t n, cap;
	int64_t *keys; /* sorted: the last of a key given twice counts */
	char **str;
	int64_t *num;
};

#define PMT_PRINTF_ARGS 16

#define PMT_PRINTF_SEGS 16

/* --printf's text, '"FORMAT", ARG, ...' and more such separated by ';',
 * each maybe under a condition, 'if (COND) "FORMAT", ...' (a program's
 * printf inside an if): the formats decoded and joined into fmt, the
 * arguments' texts (in the expression language) into args; each
 * printf's end in both, and its condition (NULL: none), in segs. */
struct pmt_printf_text {
	struct pmt_buf fmt;
	char *args[PMT_PRINTF_ARGS];
	int nargs;
	struct pmt_printf_seg {
		size_t fmt_end;
		int args_end;
		char *guard;
	} segs[PMT_PRINTF_SEGS];
	int nsegs;
};

/* Read the program text (name: its file, or "-e" for the option's) into
 * p. 0, or -EINVAL with err saying what and where ("NAME:LINE: ..." and
 * the line with a caret). */
int pmt_program__parse(const char *text, const char *name, struct pmt_program *p,
		       struct pmt_error *err);
void pmt_program__free(struct pmt_program *p);

/* Read text (name: what to call it in messages, "--printf") into t. 0,
 * or -EINVAL with err saying what, with a caret. */
int pmt_printf__split(const char *text, const char *name, struct pmt_printf_text *t,
		      struct pmt_error *err);
void pmt_printf__free(struct pmt_printf_text *t);

/* Is text (an argument's or a $variable's value, in pmtrace's terms) a
 * string: a literal, comm, str(), ntop(), ... or a ?: choosing one? */
bool pmt_printf__is_str_text(const char *text);

#endif
