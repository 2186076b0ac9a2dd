/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Record layouts: a tracepoint's, as libtraceevent reads its tracefs
 * events/<sys>/<name>/format file, or one a provider builds for the
 * records its program makes; and typed access to the fields of a record.
 */
#ifndef PMT_FORMAT_H
#define PMT_FORMAT_H

#include "util/error.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tep_event;

enum pmt_field_kind {
	PMT_F_INT,    /* integer of 1, 2, 4 or 8 bytes */
	PMT_F_PTR,    /* pointer, shown in hex */
	PMT_F_STR,    /* char[N]: NUL-terminated within N */
	PMT_F_ARRAY,  /* fixed array of integers */
	PMT_F_DSTR,   /* __data_loc / __rel_loc char[] */
	PMT_F_DARRAY, /* __data_loc / __rel_loc array of integers */
};

struct pmt_field {
	char *name;
	char *type; /* as written, e.g. "__data_loc char[]" */
	uint32_t offset, size;
	uint32_t elem_size; /* arrays: bytes per element */
	enum pmt_field_kind kind;
	bool is_signed;
	bool is_common; /* common_type, common_pid, ... */
	bool rel_loc;	/* __rel_loc rather than __data_loc */
	/* integers with named values (PMU sample mode: kernel, user):
	 * symbols[v] names v; NULL-terminated. Filters accept the names. */
	const char *const *symbols;
	/* a function parameter's (or return value's) type in the kernel's
	 * BTF (fentry/fexit): member chains start from it; 0 unknown */
	int btf_type;
};

/* Does the field's data lie after the fixed fields (__data_loc or
 * __rel_loc)? The BPF side copies up to the end of the last such area. */
static inline bool pmt_field__dynamic(const struct pmt_field *f)
{
	return f->kind == PMT_F_DSTR || f->kind == PMT_F_DARRAY;
}

struct pmt_format {
	char *name; /* "sched_switch" */
	int id;
	uint32_t fixed_size; /* end of the last fixed field */
	bool raw_ctx;	     /* a tracepoint's: the BPF context is the record */
	int nr_fields;
	size_t fields_cap;
	struct pmt_field *fields;
	/* A field this record lacks here, and why (static strings), for the
	 * message that refuses it; NULL: none. */
	const char *absent, *absent_why;
	/* A tracepoint's: its event in libtraceevent's handle, and whether
	 * its text lines print as its print fmt says (tracefs/render.h). */
	struct tep_event *tep_ev;
	bool render;
	/* A program's probe (bpftrace's names): pid, tid, comm, cpu, uid,
	 * gid and cgroup are the builtins, never fields of this record; a
	 * field of any name is args.NAME (pmtrace's options: a bare name is
	 * the field where the record has one, args.NAME too). */
	bool builtins_first;
};

/*
 * Parse the text of a format file of category sys (through libtraceevent;
 * only the kinds the BPF side and the filters need are added here). On
 * error returns -errno and writes a message into err.
 */
int pmt_format__parse(const char *text, const char *sys, struct pmt_format **out,
		      struct pmt_error *err);
void pmt_format__free(struct pmt_format *fmt);
/* The __data_loc/__rel_loc fields of a record, at most PMT_MAX_DYN (the
 * tracepoint program follows no more). */
uint32_t pmt_format__ndyn(const struct pmt_format *fmt);
/* The field name names (NAME, or args.NAME: the field whatever the name),
 * or NULL; a program's bare builtin names none (builtins_first). */
const struct pmt_field *pmt_format__field(const struct pmt_format *fmt, const char *name);

/* A format built by a provider for a record its program makes (PMU
 * samples, calls): fields are added one by one. NULL when out of memory. */
struct pmt_format *pmt_format__new(const char *name, uint32_t fixed_size);
/* The new field (zeroed but for these), or NULL when out of memory. */
struct pmt_field *pmt_format__add(struct pmt_format *f, const char *name, const char *type,
				  uint32_t offset, uint32_t size, enum pmt_field_kind kind);

enum pmt_value_kind {
	PMT_V_S64,
	PMT_V_U64,
	PMT_V_HEX,   /* pointer */
	PMT_V_STR,   /* str/len, not NUL-terminated */
	PMT_V_ARRAY, /* arr/count of elem_size-byte integers */
};

struct pmt_value {
	enum pmt_value_kind kind;
	bool truncated; /* record ended before the field did */
	union {
		int64_t s;
		uint64_t u;
	};
	const char *str; /* PMT_V_STR */
	const void *arr; /* PMT_V_ARRAY */
	size_t len;	 /* string bytes, or array elements */
	uint32_t elem_size;
	bool elem_signed;
};

/* Decode field f of a record of reclen bytes. Never reads past reclen. */
void pmt_field__value(const struct pmt_field *f, const void *rec, size_t reclen,
		      struct pmt_value *v);
/* Element i of a PMT_V_ARRAY value, sign-extended when signed. */
uint64_t pmt_value__elem(const struct pmt_value *v, size_t i);
/* Load an integer of size 1/2/4/8 at p (unaligned ok), sign-extended. */
uint64_t pmt_load_int(const void *p, uint32_t size, bool is_signed);

#endif
