// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event-parse.h>
#include "abi/record.h"
#include "util/error.h"
#include "util/grow.h"
#include "tracefs/format.h"
#include "tracefs/tep.h"

void pmt_format__free(struct pmt_format *fmt)
{
	int i;

	if (!fmt)
		return;
	for (i = 0; i < fmt->nr_fields; i++) {
		free(fmt->fields[i].name);
		free(fmt->fields[i].type);
	}
	free(fmt->fields);
	free(fmt->name);
	pmt_tep__put(fmt->tep_ev);
	free(fmt);
}

const struct pmt_field *pmt_format__field(const struct pmt_format *fmt, const char *name)
{
	static const char *const builtins[] = {"pid", "tid", "comm", "cpu", "uid", "gid", "cgroup"};
	size_t b;
	int i;

	if (!strncmp(name, "args.", 5))
		name += 5;
	else if (fmt->builtins_first)
		for (b = 0; b < sizeof(builtins) / sizeof(builtins[0]); b++)
			if (!strcmp(name, builtins[b]))
				return NULL;
	for (i = 0; i < fmt->nr_fields; i++)
		if (!strcmp(fmt->fields[i].name, name))
			return &fmt->fields[i];
	return NULL;
}

struct pmt_format *pmt_format__new(const char *name, uint32_t fixed_size)
{
	struct pmt_format *f = calloc(1, sizeof(*f));

	if (!f || !(f->name = strdup(name))) {
		free(f);
		return NULL;
	}
	f->id = -1;
	f->fixed_size = fixed_size;
	return f;
}

struct pmt_field *pmt_format__add(struct pmt_format *f, const char *name, const char *type,
				  uint32_t offset, uint32_t size, enum pmt_field_kind kind)
{
	struct pmt_field *fields =
		pmt_grow(f->fields, &f->fields_cap, (size_t)f->nr_fields, sizeof(*fields), 16);
	struct pmt_field *fl;

	if (!fields)
		return NULL;
	f->fields = fields;
	fl = &fields[f->nr_fields];
	memset(fl, 0, sizeof(*fl));
	fl->name = strdup(name);
	fl->type = strdup(type);
	if (!fl->name || !fl->type) {
		free(fl->name);
		free(fl->type);
		return NULL;
	}
	fl->offset = offset;
	fl->size = size;
	fl->kind = kind;
	f->nr_fields++;
	return fl;
}

/* char[] and const char[] (also dynamic) are strings; other arrays of
 * bytes (u8, unsigned char) are arrays of numbers. */
static bool char_type(const char *t)
{
	if (!strncmp(t, "__data_loc ", 11))
		t += 11;
	else if (!strncmp(t, "__rel_loc ", 10))
		t += 10;
	if (!strncmp(t, "const ", 6))
		t += 6;
	return !strncmp(t, "char", 4) && (t[4] == '[' || t[4] == ' ' || !t[4]);
}

/* Bytes per element of a dynamic array whose type libtraceevent does not
 * size (it knows u8..s64 and char): by the C type's last word. */
static uint32_t c_type_size(const char *t)
{
	static const struct {
		const char *word;
		uint32_t size;
	} words[] = {{"char[]", 1}, {"short[]", 2}, {"int[]", 4}, {"long[]", sizeof(long)}};
	const char *w = strrchr(t, ' ');
	size_t i;

	w = w ? w + 1 : t;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(w, words[i].word))
			return words[i].size;
	return 1;
}

/* Field f as libtraceevent read it from the format file (tf). */
static int take_field(const struct tep_format_field *tf, bool common, struct pmt_field *f,
		      struct pmt_error *err)
{
	unsigned long fl = tf->flags;
	uint32_t elem;

	if (tf->offset < 0 || tf->size <= 0 || tf->offset > 65535 || tf->size > 65535) {
		pmt_error__runtime(err, -EINVAL, "field %s: offset %d, size %d", tf->name,
				   tf->offset, tf->size);
		return -EINVAL;
	}
	f->name = strdup(tf->name);
	f->type = strdup(tf->type);
	if (!f->name || !f->type)
		return -ENOMEM;
	f->offset = (uint32_t)tf->offset;
	f->size = (uint32_t)tf->size;
	f->is_signed = fl & TEP_FIELD_IS_SIGNED;
	f->is_common = common;
	elem = tf->elementsize ? tf->elementsize : c_type_size(tf->type);
	if (fl & TEP_FIELD_IS_DYNAMIC) {
		if (f->size != 4) {
			pmt_error__runtime(err, -EINVAL, "%s: dynamic field of size %u, expected 4",
					   f->name, f->size);
			return -EINVAL;
		}
		f->kind = char_type(f->type) ? PMT_F_DSTR : PMT_F_DARRAY;
		f->rel_loc = fl & TEP_FIELD_IS_RELATIVE;
		f->elem_size = elem;
	} else if (fl & TEP_FIELD_IS_ARRAY) {
		f->kind = char_type(f->type) && elem == 1 ? PMT_F_STR : PMT_F_ARRAY;
		f->elem_size = f->size % elem ? 1 : elem;
	} else if (fl & TEP_FIELD_IS_POINTER) {
		f->kind = PMT_F_PTR;
	} else if (f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8) {
		f->kind = PMT_F_INT;
	} else {
		f->kind = PMT_F_ARRAY;
		f->elem_size = 1;
	}
	return 0;
}

int pmt_format__parse(const char *text, const char *sys, struct pmt_format **out,
		      struct pmt_error *err)
{
	const struct tep_format_field *tf;
	struct pmt_format *fmt;
	struct tep_event *ev;
	int ret, n, k;

	ret = pmt_tep__parse(text, sys, &ev, err);
	if (ret)
		return ret;
	n = ev->format.nr_common + ev->format.nr_fields;
	fmt = pmt_format__new(ev->name, 0);
	if (!fmt || !(fmt->fields = calloc((size_t)n, sizeof(*fmt->fields)))) {
		pmt_format__free(fmt);
		pmt_tep__put(ev);
		return -ENOMEM;
	}
	fmt->fields_cap = (size_t)n;
	fmt->tep_ev = ev;
	fmt->id = ev->id;
	fmt->raw_ctx = true; /* format files are tracepoints' */
	/* the common fields, then the event's own */
	for (k = 0; k < 2 && !ret; k++)
		for (tf = k ? ev->format.fields : ev->format.common_fields;
		     tf && !ret && fmt->nr_fields < n; tf = tf->next)
			ret = take_field(tf, !k, &fmt->fields[fmt->nr_fields++], err);
	if (ret)
		goto fail;
	for (n = 0; n < fmt->nr_fields; n++)
		if (fmt->fields[n].offset + fmt->fields[n].size > fmt->fixed_size)
			fmt->fixed_size = fmt->fields[n].offset + fmt->fields[n].size;
	if (!fmt->nr_fields) {
		pmt_error__runtime(err, -EINVAL, "%s: no fields", fmt->name);
		ret = -EINVAL;
		goto fail;
	}
	*out = fmt;
	return 0;
fail:
	pmt_format__free(fmt);
	return ret;
}

uint64_t pmt_load_int(const void *p, uint32_t size, bool is_signed)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (size) {
	case 1: memcpy(&u8, p, 1); return is_signed ? (uint64_t)(int64_t)(int8_t)u8 : u8;
	case 2: memcpy(&u16, p, 2); return is_signed ? (uint64_t)(int64_t)(int16_t)u16 : u16;
	case 4: memcpy(&u32, p, 4); return is_signed ? (uint64_t)(int64_t)(int32_t)u32 : u32;
	default: memcpy(&u64, p, 8); return u64;
	}
}

uint64_t pmt_value__elem(const struct pmt_value *v, size_t i)
{
	return pmt_load_int((const char *)v->arr + i * v->elem_size, v->elem_size, v->elem_signed);
}

void pmt_field__value(const struct pmt_field *f, const void *rec, size_t reclen,
		      struct pmt_value *v)
{
	const char *r = rec;
	size_t avail, start = 0, len = 0;
	uint32_t w;

	memset(v, 0, sizeof(*v));
	avail = f->offset < reclen ? reclen - f->offset : 0;
	if (avail < f->size) {
		/* The record ended before this field: show what there is. */
		v->truncated = true;
		if (f->kind == PMT_F_INT || f->kind == PMT_F_PTR || f->kind == PMT_F_DSTR ||
		    f->kind == PMT_F_DARRAY) {
			v->kind = PMT_V_STR;
			return;
		}
	}
	switch (f->kind) {
	case PMT_F_INT:
		v->u = pmt_load_int(r + f->offset, f->size, f->is_signed);
		v->kind = f->is_signed ? PMT_V_S64 : PMT_V_U64;
		return;
	case PMT_F_PTR:
		v->u = pmt_load_int(r + f->offset, f->size, false);
		v->kind = PMT_V_HEX;
		return;
	case PMT_F_STR:
		len = avail < f->size ? avail : f->size;
		v->kind = PMT_V_STR;
		v->str = r + f->offset;
		v->len = strnlen(v->str, len);
		return;
	case PMT_F_ARRAY:
		len = avail < f->size ? avail : f->size;
		v->kind = PMT_V_ARRAY;
		v->arr = r + f->offset;
		v->elem_size = f->elem_size;
		v->elem_signed = f->is_signed;
		v->len = len / f->elem_size;
		return;
	case PMT_F_DSTR:
	case PMT_F_DARRAY:
		memcpy(&w, r + f->offset, 4);
		start = w & 0xffff;
		len = w >> 16;
		if (f->rel_loc)
			start += f->offset + 4;
		if (start > reclen) {
			start = reclen;
			len = 0;
			v->truncated = true;
		} else if (len > reclen - start) {
			len = reclen - start;
			v->truncated = true;
		}
		if (f->kind == PMT_F_DSTR) {
			v->kind = PMT_V_STR;
			v->str = r + start;
			v->len = strnlen(v->str, len);
		} else {
			v->kind = PMT_V_ARRAY;
			v->arr = r + start;
			v->elem_size = f->elem_size;
			v->elem_signed = f->is_signed;
			v->len = len / f->elem_size;
		}
		return;
	}
}

uint32_t pmt_format__ndyn(const struct pmt_format *fmt)
{
	uint32_t n = 0;
	int i;

	for (i = 0; fmt && i < fmt->nr_fields; i++)
		n += pmt_field__dynamic(&fmt->fields[i]);
	return n < PMT_MAX_DYN ? n : PMT_MAX_DYN;
}
