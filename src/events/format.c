// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "events/format.h"

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
	free(fmt->text);
	free(fmt->sys);
	free(fmt);
}

const struct pmt_field *pmt_format__field(const struct pmt_format *fmt, const char *name)
{
	int i;

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
	struct pmt_field *fields = realloc(f->fields, (size_t)(f->nr_fields + 1) * sizeof(*fields));
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

/* Size in bytes of an integer element type; 0 if unknown. */
static uint32_t elem_type_size(const char *t)
{
	static const struct {
		const char *name;
		uint32_t size;
	} types[] = {
		{"char", 1},
		{"signed char", 1},
		{"unsigned char", 1},
		{"u8", 1},
		{"s8", 1},
		{"__u8", 1},
		{"__s8", 1},
		{"bool", 1},
		{"short", 2},
		{"unsigned short", 2},
		{"u16", 2},
		{"s16", 2},
		{"__u16", 2},
		{"__s16", 2},
		{"__be16", 2},
		{"__le16", 2},
		{"int", 4},
		{"unsigned int", 4},
		{"unsigned", 4},
		{"u32", 4},
		{"s32", 4},
		{"__u32", 4},
		{"__s32", 4},
		{"pid_t", 4},
		{"__be32", 4},
		{"__le32", 4},
		{"long", 8},
		{"unsigned long", 8},
		{"long long", 8},
		{"unsigned long long", 8},
		{"u64", 8},
		{"s64", 8},
		{"__u64", 8},
		{"__s64", 8},
		{"size_t", 8},
		{"loff_t", 8},
	};
	size_t i;

	if (!strncmp(t, "const ", 6))
		t += 6;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(t, types[i].name))
			return types[i].size;
	return 0;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* "key:value;" starting at *p; returns value as a number or -1. */
static long long field_attr(const char *line, const char *key)
{
	const char *p = strstr(line, key);
	char *end;
	long long v;

	if (!p)
		return -1;
	p += strlen(key);
	v = strtoll(p, &end, 10);
	if (end == p || *end != ';')
		return -1;
	return v;
}

/*
 * Split a declaration such as "unsigned long args[6]" or
 * "__data_loc char[] filename" into field f.
 */
static int parse_decl(char *decl, struct pmt_field *f)
{
	char *name_end, *name, *bracket, *type;
	bool array = false, dyn = false;
	uint32_t esz;

	decl = trim(decl);
	if (!strncmp(decl, "__data_loc ", 11)) {
		dyn = true;
		decl += 11;
	} else if (!strncmp(decl, "__rel_loc ", 10)) {
		dyn = true;
		f->rel_loc = true;
		decl += 10;
	}
	name_end = decl + strlen(decl);
	if (name_end > decl && name_end[-1] == ']') {
		bracket = strrchr(decl, '[');
		if (!bracket)
			return -EINVAL;
		array = true;
		*bracket = '\0';
		name_end = bracket;
		while (name_end > decl && isspace((unsigned char)name_end[-1]))
			*--name_end = '\0';
	}
	name = name_end;
	while (name > decl && (isalnum((unsigned char)name[-1]) || name[-1] == '_'))
		name--;
	if (name == name_end)
		return -EINVAL;
	f->name = strdup(name);
	*name = '\0';
	type = trim(decl);
	/* "__data_loc char[] name": the [] sits on the type */
	if (dyn) {
		size_t tl = strlen(type);

		if (tl >= 2 && !strcmp(type + tl - 2, "[]"))
			type[tl - 2] = '\0';
		type = trim(type);
	}
	if (!f->name)
		return -ENOMEM;
	if (asprintf(&f->type, "%s%s%s", dyn ? (f->rel_loc ? "__rel_loc " : "__data_loc ") : "",
		     type, dyn || array ? "[]" : "") < 0)
		return -ENOMEM;

	if (strchr(type, '*')) {
		f->kind = PMT_F_PTR;
		return 0;
	}
	esz = elem_type_size(type);
	if (dyn) {
		bool is_char = !strcmp(type, "char") || !strcmp(type, "const char");

		f->kind = is_char ? PMT_F_DSTR : PMT_F_DARRAY;
		f->elem_size = esz ? esz : 1;
		return 0;
	}
	if (array) {
		f->kind = !strcmp(type, "char") ? PMT_F_STR : PMT_F_ARRAY;
		f->elem_size = esz && f->size % esz == 0 ? esz : 1;
		return 0;
	}
	f->kind = PMT_F_INT;
	return 0;
}

int pmt_format__parse(const char *text, struct pmt_format **out, char *err, size_t errlen)
{
	struct pmt_format *fmt = calloc(1, sizeof(*fmt));
	char *copy = strdup(text), *line, *save = NULL;
	int lineno = 0, cap = 0;

	if (!fmt || !copy) {
		free(fmt);
		free(copy);
		return -ENOMEM;
	}
	fmt->id = -1;
	fmt->raw_ctx = true; /* format files are tracepoints' */
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *s = trim(line), *decl, *semi;
		struct pmt_field *f;
		long long off, size, sign;

		lineno++;
		if (!strncmp(s, "name:", 5)) {
			free(fmt->name);
			fmt->name = strdup(trim(s + 5));
			continue;
		}
		if (!strncmp(s, "ID:", 3)) {
			fmt->id = atoi(s + 3);
			continue;
		}
		if (!strncmp(s, "print fmt:", 10))
			break;
		if (strncmp(s, "field:", 6))
			continue;
		decl = s + 6;
		semi = strchr(decl, ';');
		off = field_attr(s, "offset:");
		size = field_attr(s, "size:");
		sign = field_attr(s, "signed:");
		if (!semi || off < 0 || size <= 0 || off > 65535 || size > 65535) {
			snprintf(err, errlen, "line %d: malformed field: %s", lineno, s);
			goto fail;
		}
		*semi = '\0';
		if (fmt->nr_fields == cap) {
			struct pmt_field *nf;

			cap = cap ? cap * 2 : 16;
			nf = realloc(fmt->fields, (size_t)cap * sizeof(*nf));
			if (!nf)
				goto fail;
			fmt->fields = nf;
		}
		f = &fmt->fields[fmt->nr_fields++];
		memset(f, 0, sizeof(*f));
		f->offset = (uint32_t)off;
		f->size = (uint32_t)size;
		f->is_signed = sign == 1;
		if (parse_decl(decl, f)) {
			snprintf(err, errlen, "line %d: cannot parse field declaration", lineno);
			goto fail;
		}
		if ((f->kind == PMT_F_DSTR || f->kind == PMT_F_DARRAY) && f->size != 4) {
			snprintf(err, errlen, "line %d: %s: dynamic field of size %u, expected 4",
				 lineno, f->name, f->size);
			goto fail;
		}
		if (f->kind == PMT_F_INT && f->size != 1 && f->size != 2 && f->size != 4 &&
		    f->size != 8)
			f->kind = PMT_F_ARRAY, f->elem_size = 1;
		f->is_common = !strncmp(f->name, "common_", 7);
		if (f->offset + f->size > fmt->fixed_size)
			fmt->fixed_size = f->offset + f->size;
	}
	free(copy);
	if (!fmt->name || fmt->nr_fields == 0) {
		snprintf(err, errlen, "no %s found", fmt->name ? "fields" : "name");
		pmt_format__free(fmt);
		return -EINVAL;
	}
	*out = fmt;
	return 0;
fail:
	free(copy);
	pmt_format__free(fmt);
	return -EINVAL;
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
