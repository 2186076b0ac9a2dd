// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * profile.proto by hand: each message is a run of (field << 3 | wire
 * type) tags, varints and length-prefixed bytes. Repeated messages are
 * encoded as they are interned, into one buffer per Profile field, and
 * the Profile is those buffers and the string table one after another.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "util/grow.h"
#include "output/pprof.h"
#include "util/strutil.h"

/* Profile's fields */
enum {
	PF_SAMPLE_TYPE = 1,
	PF_SAMPLE = 2,
	PF_MAPPING = 3,
	PF_LOCATION = 4,
	PF_FUNCTION = 5,
	PF_STRING = 6,
	PF_TIME = 9,
	PF_DURATION = 10,
	PF_PERIOD_TYPE = 11,
	PF_PERIOD = 12,
};

/* (a, b) -> v, open addressing; v 0 means empty */
struct slot {
	uint64_t a, b, v;
};
struct table {
	struct slot *s;
	size_t cap, n;
};

struct pmt_pprof {
	char **strs;
	size_t nstrs, capstrs;
	struct table str_ids; /* (hash, 0) -> string index + 1, chained by probing */
	struct table fn_ids;  /* (string index, 0) -> function id */
	struct table map_ids; /* (key, start) -> mapping id */
	struct table loc_ids; /* (key, addr) -> location id */
	struct pmt_buf samples, mappings, locations, functions;
	uint64_t nfn, nmap, nloc;
	int64_t type, unit, period, time_ns, duration_ns;
	bool oom;
};

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL + (a << 6));

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 29);
}

/* The slot of (a, b): found, or empty where it would go. NULL: no memory. */
static struct slot *lookup(struct table *t, uint64_t a, uint64_t b)
{
	size_t i;

	if ((t->n + 1) * 2 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256, j;
		struct slot *s = calloc(cap, sizeof(*s)), *old = t->s;

		if (!s)
			return NULL;
		for (j = 0; j < t->cap; j++) {
			if (!old[j].v)
				continue;
			for (i = mix(old[j].a, old[j].b) & (cap - 1); s[i].v;
			     i = (i + 1) & (cap - 1))
				;
			s[i] = old[j];
		}
		free(old);
		t->s = s;
		t->cap = cap;
	}
	for (i = mix(a, b) & (t->cap - 1); t->s[i].v; i = (i + 1) & (t->cap - 1))
		if (t->s[i].a == a && t->s[i].b == b)
			break;
	return &t->s[i];
}

static void put(struct table *t, struct slot *s, uint64_t a, uint64_t b, uint64_t v)
{
	*s = (struct slot){a, b, v};
	t->n++;
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* The string table index of s ("" is 0). */
static int64_t intern(struct pmt_pprof *p, const char *s)
{
	uint64_t h, probe;
	struct slot *sl;
	char *copy, **v;

	if (!s || !*s)
		return 0;
	h = str_hash(s);
	/* equal hashes of different strings: probe on with b = 1, 2, ... */
	for (probe = 0;; probe++) {
		sl = lookup(&p->str_ids, h, probe);
		if (!sl)
			goto oom;
		if (!sl->v)
			break;
		if (!strcmp(p->strs[sl->v - 1], s))
			return (int64_t)sl->v - 1;
	}
	v = pmt_grow(p->strs, &p->capstrs, p->nstrs, sizeof(*v), 64);
	if (!v)
		goto oom;
	p->strs = v;
	copy = strdup(s);
	if (!copy)
		goto oom;
	p->strs[p->nstrs++] = copy;
	put(&p->str_ids, sl, h, probe, p->nstrs);
	return (int64_t)p->nstrs - 1;
oom:
	p->oom = true;
	return 0;
}

/* --- encoding ------------------------------------------------------------ */

static void varint(struct pmt_buf *b, uint64_t v)
{
	while (v >= 0x80) {
		pmt_buf__putc(b, (char)(v | 0x80));
		v >>= 7;
	}
	pmt_buf__putc(b, (char)v);
}

/* a varint field; zero is the default and is left out */
static void field(struct pmt_buf *b, int num, uint64_t v)
{
	if (!v)
		return;
	varint(b, (uint64_t)num << 3);
	varint(b, v);
}

static void bytes_field(struct pmt_buf *b, int num, const void *p, size_t n)
{
	varint(b, (uint64_t)num << 3 | 2);
	varint(b, n);
	pmt_buf__add(b, p, n);
}

static void message(struct pmt_buf *b, int num, const struct pmt_buf *m)
{
	bytes_field(b, num, m->p, m->len);
}

static void value_type(struct pmt_buf *b, int num, int64_t type, int64_t unit)
{
	struct pmt_buf m = {0};

	field(&m, 1, (uint64_t)type);
	field(&m, 2, (uint64_t)unit);
	message(b, num, &m);
	pmt_buf__free(&m);
}

struct pmt_pprof *pmt_pprof__new(const char *type, const char *unit, int64_t period)
{
	struct pmt_pprof *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->capstrs = 64;
	p->strs = calloc(p->capstrs, sizeof(*p->strs));
	if (!p->strs || !(p->strs[0] = strdup(""))) {
		pmt_pprof__free(p);
		return NULL;
	}
	p->nstrs = 1;
	if (type && unit) {
		p->type = intern(p, type);
		p->unit = intern(p, unit);
		p->period = period;
	}
	return p;
}

void pmt_pprof__free(struct pmt_pprof *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nstrs; i++)
		free(p->strs[i]);
	free(p->strs);
	free(p->str_ids.s);
	free(p->fn_ids.s);
	free(p->map_ids.s);
	free(p->loc_ids.s);
	pmt_buf__free(&p->samples);
	pmt_buf__free(&p->mappings);
	pmt_buf__free(&p->locations);
	pmt_buf__free(&p->functions);
	free(p);
}

void pmt_pprof__times(struct pmt_pprof *p, int64_t time_ns, int64_t duration_ns)
{
	p->time_ns = time_ns;
	p->duration_ns = duration_ns;
}

/* The id of (a, b) in t: the one it has (*fresh false), or the next of
 * *last (*fresh true: the caller encodes it). 0 when out of memory. */
static uint64_t id_of(struct pmt_pprof *p, struct table *t, uint64_t a, uint64_t b, uint64_t *last,
		      bool *fresh)
{
	struct slot *s = lookup(t, a, b);

	*fresh = false;
	if (!s) {
		p->oom = true;
		return 0;
	}
	if (!s->v) {
		put(t, s, a, b, ++*last);
		*fresh = true;
	}
	return s->v;
}

uint64_t pmt_pprof__mapping(struct pmt_pprof *p, uint64_t key, uint64_t start, uint64_t limit,
			    uint64_t offset, const char *file, const char *build_id)
{
	struct pmt_buf m = {0};
	bool fresh;
	uint64_t id = id_of(p, &p->map_ids, key, start, &p->nmap, &fresh);

	if (!fresh)
		return id;
	field(&m, 1, p->nmap);
	field(&m, 2, start);
	field(&m, 3, limit);
	field(&m, 4, offset);
	field(&m, 5, (uint64_t)intern(p, file));
	field(&m, 6, (uint64_t)intern(p, build_id));
	field(&m, 7, 1); /* has_functions: the names are here */
	message(&p->mappings, PF_MAPPING, &m);
	pmt_buf__free(&m);
	return p->nmap;
}

static uint64_t function(struct pmt_pprof *p, const char *name, const char *file)
{
	int64_t str = intern(p, name), fstr = intern(p, file && *file ? file : NULL);
	struct pmt_buf m = {0};
	bool fresh;
	uint64_t id = id_of(p, &p->fn_ids, (uint64_t)str, (uint64_t)fstr, &p->nfn, &fresh);

	if (!fresh)
		return id;
	field(&m, 1, p->nfn);
	field(&m, 2, (uint64_t)str);
	field(&m, 3, (uint64_t)str);
	if (fstr)
		field(&m, 4, (uint64_t)fstr);
	message(&p->functions, PF_FUNCTION, &m);
	pmt_buf__free(&m);
	return p->nfn;
}

uint64_t pmt_pprof__location_id(struct pmt_pprof *p, uint64_t key, uint64_t addr)
{
	struct slot *s = lookup(&p->loc_ids, key, addr);

	if (!s)
		p->oom = true;
	return s ? s->v : 0;
}

uint64_t pmt_pprof__location(struct pmt_pprof *p, uint64_t key, uint64_t addr, uint64_t shown,
			     uint64_t mapping, const struct pmt_pprof_line *lines, int nlines)
{
	struct pmt_buf m = {0}, line = {0};
	bool fresh;
	uint64_t id = id_of(p, &p->loc_ids, key, addr, &p->nloc, &fresh);
	int i;

	if (!fresh)
		return id;
	field(&m, 1, p->nloc);
	field(&m, 2, mapping);
	field(&m, 3, shown);
	for (i = 0; i < nlines; i++) {
		line.len = 0;
		field(&line, 1, function(p, lines[i].name, lines[i].file));
		if (lines[i].line)
			field(&line, 2, (uint64_t)lines[i].line);
		message(&m, 4, &line);
	}
	message(&p->locations, PF_LOCATION, &m);
	pmt_buf__free(&m);
	pmt_buf__free(&line);
	return p->nloc;
}

int pmt_pprof__sample(struct pmt_pprof *p, const uint64_t *locs, int n, uint64_t count,
		      uint64_t value, const struct pmt_pprof_label *labels, int nlabels)
{
	struct pmt_buf m = {0}, packed = {0}, l = {0};
	int i;

	for (i = 0; i < n; i++)
		varint(&packed, locs[i]);
	bytes_field(&m, 1, packed.p, packed.len);
	packed.len = 0;
	varint(&packed, count);
	if (p->unit)
		varint(&packed, p->period ? count * (uint64_t)p->period : value);
	bytes_field(&m, 2, packed.p, packed.len);
	for (i = 0; i < nlabels; i++) {
		l.len = 0;
		field(&l, 1, (uint64_t)intern(p, labels[i].key));
		if (labels[i].str)
			field(&l, 2, (uint64_t)intern(p, labels[i].str));
		else
			field(&l, 3, (uint64_t)labels[i].num);
		message(&m, 3, &l);
	}
	message(&p->samples, PF_SAMPLE, &m);
	pmt_buf__free(&m);
	pmt_buf__free(&packed);
	pmt_buf__free(&l);
	return p->oom ? -ENOMEM : 0;
}

int pmt_pprof__encode(struct pmt_pprof *p, uint8_t **out, size_t *len)
{
	struct pmt_buf b = {0};
	size_t i;

	if (p->oom)
		return -ENOMEM;
	value_type(&b, PF_SAMPLE_TYPE, intern(p, "samples"), intern(p, "count"));
	if (p->unit)
		value_type(&b, PF_SAMPLE_TYPE, p->type, p->unit);
	pmt_buf__add(&b, p->samples.p, p->samples.len);
	pmt_buf__add(&b, p->mappings.p, p->mappings.len);
	pmt_buf__add(&b, p->locations.p, p->locations.len);
	pmt_buf__add(&b, p->functions.p, p->functions.len);
	field(&b, PF_TIME, (uint64_t)p->time_ns);
	field(&b, PF_DURATION, (uint64_t)p->duration_ns);
	if (p->unit) {
		value_type(&b, PF_PERIOD_TYPE, p->type, p->unit);
		field(&b, PF_PERIOD, (uint64_t)p->period);
	}
	/* last: the fields above may still intern strings */
	for (i = 0; i < p->nstrs; i++)
		bytes_field(&b, PF_STRING, p->strs[i], strlen(p->strs[i]));
	if (p->oom) {
		pmt_buf__free(&b);
		return -ENOMEM;
	}
	*out = (uint8_t *)b.p;
	*len = b.len;
	return 0;
}

/* gzip (deflate with a gzip header: windowBits 15 + 16) into out, at the
 * fastest level, as Go's runtime/pprof writes its profiles: a served
 * profile is made every minute of an always-on run, and level 6 was a
 * twentieth of pmtrace's CPU there, for a profile 8% smaller */
static int gzip(const uint8_t *data, size_t len, struct pmt_buf *out)
{
	z_stream z = {0};
	int zr;

	if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY))
		return -ENOMEM;
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)len;
	do {
		pmt_buf__reserve(out, 65536);
		z.next_out = (Bytef *)out->p + out->len;
		z.avail_out = (uInt)(out->cap - out->len);
		zr = deflate(&z, Z_FINISH);
		out->len = out->cap - z.avail_out;
	} while (zr == Z_OK);
	deflateEnd(&z);
	return zr == Z_STREAM_END ? 0 : -EIO;
}

int pmt_pprof__gzip(struct pmt_pprof *p, uint8_t **out, size_t *len)
{
	struct pmt_buf b = {0};
	uint8_t *data = NULL;
	size_t n = 0;
	int err = pmt_pprof__encode(p, &data, &n);

	if (!err)
		err = gzip(data, n, &b);
	free(data);
	if (err) {
		pmt_buf__free(&b);
		return err;
	}
	*out = (uint8_t *)b.p;
	*len = b.len;
	return 0;
}

int pmt_pprof__write(struct pmt_pprof *p, const char *path)
{
	uint8_t *data = NULL;
	size_t len = 0, off = 0;
	int fd, err = pmt_pprof__gzip(p, &data, &len);

	if (err)
		return err;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
	} else {
		while (off < len && !err) {
			ssize_t w = write(fd, data + off, len - off);

			if (w < 0 && errno != EINTR)
				err = -errno;
			else if (w > 0)
				off += (size_t)w;
		}
		if (close(fd) && !err)
			err = -errno;
	}
	free(data);
	return err;
}
