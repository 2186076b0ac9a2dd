/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The probes of a run, as every provider makes them and the session drives
 * them: a name, a record format, a compiled filter, what is done with each
 * event, and the links. What only one kind needs stays in priv, the
 * provider's own.
 */
#ifndef PMT_PROBE_H
#define PMT_PROBE_H

#include <stdbool.h>
#include <stdint.h>
#include "abi.h"
#include "tracefs/format.h"
#include "filter/operand.h"
#include "util/error.h"

struct bpf_link;
struct pmt_probe_arg;
struct pmt_provider;
struct pmt_exprs;
struct pmt_print;

struct pmt_probe {
	uint32_t id; /* attach cookie, index in the list */
	const struct pmt_provider *prov;
	char *name;		   /* "sched:sched_switch", "...#2" */
	char *base;		   /* "sched:sched_switch" */
	const char *filter_expr;   /* as given, or NULL */
	int instance;		   /* 0, or n-1 for the n-th copy of base */
	int block;		   /* a program's block it runs (-1: options') */
	uint8_t action;		   /* enum pmt_action */
	struct pmt_agg_cfg agg;	   /* action != STREAM */
	struct pmt_format *fmt;	   /* record layout; NULL: no fields */
	struct pmt_filter *filter; /* compiled --filter, or NULL */
	/* --str: each string's place (PMT_FSRC_PTR_STR), or src 0 where the
	 * probe lacks the field */
	struct pmt_operand strs[PMT_STREAM_STRS];
	/* --printf: its text (the options'), what it prints (print.h), and
	 * the slots it uses: numbers (vals), strings (strs) */
	const char *printf_text;
	const char *where; /* a program's "FILE:LINE" of it, or NULL */
	struct pmt_print *print;
	struct pmt_operand vals[PMT_STREAM_VALS];
	uint32_t nvals, nstrs_print;
	uint8_t join_slot;  /* join(E): 1 + the number slot holding E, or 0 */
	uint16_t str_xprog; /* their expressions' program, or PMT_XPROG_NONE */
	/* a program's block's statements (the options'), all it does where
	 * stmts_only (PMT_ACT_NONE), and their program (PMT_XPROG_NONE) */
	const char *stmts_text;
	bool stmts_only;
	bool stmts_record; /* they read the record's fields */
	uint16_t sprog;
	/* a program's: the condition its printf is under (if), and 1 +
	 * which number slot holds it (0: none) */
	const char *print_guard_text;
	uint8_t print_guard;
	/* a program's block's map updates (the options'), and 1 + the entry
	 * of pmt_probes holding its second map's update (0: none) */
	const struct pmt_probe_arg *arg;
	uint16_t next_agg;
	struct bpf_link *link;
	struct bpf_link **links; /* probes attached many times (PMU) */
	int nlinks;
	size_t links_cap;
	void *priv;	 /* the provider's, freed with free() */
	uint64_t events; /* received */
};

struct pmt_probes {
	struct pmt_probe *v;
	uint32_t n;
	size_t cap;
	/* the session's expressions, where filters' operands written as
	 * expressions go (NULL: refused) */
	struct pmt_exprs *exprs;
	/* a program's probes: bpftrace's builtin names first (their formats'
	 * builtins_first) */
	bool builtins_first;
	/* the program's block the probes added now run (-1: none): the same
	 * probe in another block is a copy of its own, as bpftrace runs
	 * every block on the event */
	int block;
};

/* Add a probe to the list; takes fmt and compiles the filter expr (may
 * be NULL) against it. The same name with the same filter (in the same
 * block) is traced once (0, nothing added); with another filter (or in
 * another block) it is a copy, name#2. 0, or -errno with err set. */
int pmt_probes__add(struct pmt_probes *l, const struct pmt_provider *prov, const char *name,
		    struct pmt_format *fmt, const char *filter, struct pmt_error *err);
/* Let go of every link (the kernel-side teardown may go on elsewhere). */
void pmt_probes__unlink(struct pmt_probes *l);
/* Does a probe hold a single link (tracepoints, functions: their release
 * waits for the kernel, see spawn_closer() in src/run/session_bpf.c)? */
bool pmt_probes__linked(const struct pmt_probes *l);
/* Room in p->links for one more link (false: out of memory). */
bool pmt_probe__link_room(struct pmt_probe *p);
void pmt_probes__free(struct pmt_probes *l);

/* What the probes' filters and aggregations use (filter/operand.h). */
void pmt_probes__uses(const struct pmt_probes *l, struct pmt_uses *u);

#endif
