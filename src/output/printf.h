/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A probe's printf (--printf, a program's printf): bpftrace's format,
 * rendered from a streamed record: its header (comm, pid, tid, cpu, the
 * time), the numbers the kernel computed for it (--printf's slots) and
 * the strings it read (str()). Checked once, when the probe is made: a
 * conversion and its argument agree, as bpftrace checks them.
 */
#ifndef PMT_PRINTF_H
#define PMT_PRINTF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tracefs/format.h"
#include "util/strutil.h"

struct pmt_record;
struct pmt_syms;

#define PMT_PRINT_ARGS 16
#define PMT_PRINT_SEGS 16
#define PMT_PRINT_SLOTS 16 /* the record's number slots (PMT_STREAM_VALS) */
#define PMT_BUF_MAX 64	   /* bytes a buf() shows at most, as bpftrace's */

/* Where an argument's value is. */
enum pmt_parg_kind {
	PMT_PARG_FIELD,	   /* a field of the record, decoded here */
	PMT_PARG_NUM,	   /* the record's number slot */
	PMT_PARG_STR,	   /* the record's string slot */
	PMT_PARG_COMM,	   /* the header's */
	PMT_PARG_PID,	   /* the header's tgid */
	PMT_PARG_TID,	   /* the header's */
	PMT_PARG_CPU,	   /* the ring's */
	PMT_PARG_NSECS,	   /* the record's time (CLOCK_MONOTONIC ns) */
	PMT_PARG_ELAPSED,  /* ... since the session began */
	PMT_PARG_PROBE,	   /* the probe's name, as bpftrace spells it */
	PMT_PARG_FUNC,	   /* its function: the name's last part */
	PMT_PARG_JOIN,	   /* join(E)'s strings (the record's), tfmt between them */
	PMT_PARG_TIME,	   /* the record's time on the wall clock, by strftime(tfmt) */
	PMT_PARG_TABLE,	   /* a program's constant string, keyed by the number slot's value */
	PMT_PARG_USYM,	   /* usym(E): the number slot's address named in the event's process */
	PMT_PARG_KSYM,	   /* ksym(E): ... in the kernel */
	PMT_PARG_PROBE_OF, /* the name of the probe whose id the number slot holds */
	PMT_PARG_FUNC_OF,  /* ... its function */
	PMT_PARG_CAT,	   /* cat("FILE"): the file's text, read when printed (tfmt: FILE) */
	PMT_PARG_LIT,	   /* a string literal (tfmt: its text) */
	PMT_PARG_NTOP4,	   /* ntop(): the number slot's 4 bytes, an IPv4 address */
	PMT_PARG_NTOP6,	   /* ntop(): the string slot's 16 bytes, an IPv6 address */
	PMT_PARG_KSTACK,   /* kstack: the record's kernel frames, as bpftrace prints them */
	PMT_PARG_BUF,	   /* buf(A, N): string slot's bytes, N (number slot len_slot - 1) */
};

struct pmt_print_arg {
	uint8_t kind;		       /* enum pmt_parg_kind */
	uint8_t slot;		       /* NUM, STR: which */
	bool str;		       /* a string (FIELD: a char array or __data_loc string) */
	const struct pmt_field *field; /* FIELD: of the probe's format */
	char *tfmt;		       /* TIME: strftime's format; CAT: the file (the print's) */
	/* TABLE: the strings (tn), by their sorted keys; a key not there
	 * shows "" (the program's, which outlives the print) */
	const int64_t *tkeys;
	char *const *tstrs;
	size_t tn;
	/* a choice ($variable given a string inside an if): 1 + the number
	 * slot of the condition under which this argument is shown, else the
	 * argument alt - 1 of args[] (past nargs: the choices' own); 0: none */
	uint8_t when, alt;
	uint8_t len_slot; /* BUF: 1 + the number slot holding its length */
};

struct pmt_print {
	char *fmt; /* decoded (escapes done), NUL-terminated */
	size_t len;
	struct pmt_print_arg args[PMT_PRINT_ARGS];
	int nargs, nall; /* the format's; and the choices' alternatives after them */
	/* each number slot's text, where making the print gave it one: a
	 * text given twice (a condition, an address) takes one slot */
	char *slot_text[PMT_PRINT_SLOTS];
	char *probe;	   /* PROBE's text: "tracepoint:syscalls:sys_enter_openat" */
	size_t str_max;	   /* bytes of a string shown at most (str()'s length - 1) */
	uint64_t start_ns; /* ELAPSED's origin */
	int64_t wall_ns;   /* TIME: CLOCK_REALTIME less CLOCK_MONOTONIC */
	/* USYM, KSYM: the session's symbolizer (NULL: addresses shown) */
	struct pmt_syms *syms;
	/* PROBE_OF, FUNC_OF: probe id's name as bpftrace spells it, into
	 * buf (NULL: no such probe) */
	const char *(*probe_name)(const void *ctx, uint32_t id, char *buf, size_t len);
	const void *probe_ctx;
	/* a program's printf calls (0: one, the whole format): where each
	 * ends in fmt and in args, and 1 + the number slot that says whether
	 * it prints (inside an if: non-zero), or 0 for always */
	struct pmt_print_seg {
		size_t fmt_end;
		int args_end;
		uint8_t guard;
	} segs[PMT_PRINT_SEGS];
	int nsegs;
};

/* Is the argument a string (comm, str(), probe, a string field)? */
bool pmt_parg__is_str(const struct pmt_print_arg *a);
/* Does p name addresses (usym(), ksym())? Then p->syms must be set, and
 * usym()'s processes followed, so they are named after they ended. */
bool pmt_print__names(const struct pmt_print *p, bool user);

/* The argument shown for a of p in record r: a itself, or where a is a
 * choice whose condition is 0 there, its alternative (in turn). */
const struct pmt_print_arg *pmt_print__chosen(const struct pmt_print *p,
					      const struct pmt_print_arg *a,
					      const struct pmt_record *r);

/* Do p's format's conversions agree with its arguments, in number and
 * kind? 0, or -EINVAL with why (what is wrong, and where in the format). */
int pmt_print__check(const struct pmt_print *p, char *why, size_t len);
/* The conversion character of fmt's conversion n (from 0; %% is none),
 * or 0 past the last or at one printf cannot read. */
char pmt_print__conv(const char *fmt, size_t len, int n);

/* p's text for record r (whose vals and strs it reads) into b. */
void pmt_print__render(struct pmt_buf *b, const struct pmt_print *p, const struct pmt_record *r);

void pmt_print__free(struct pmt_print *p);

#endif
