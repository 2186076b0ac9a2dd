// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Texts kept as shared pieces (util/pieces.h). */
#include <stdlib.h>
#include <string.h>
#include "util/grow.h"
#include "util/pieces.h"

static const char *piece(const struct pmt_pieces *p, uint32_t id)
{
	return p->chars.p + p->at[id];
}

/* (pmt_hash_str and pmt_hash_bytes agree: FNV-1a over the same bytes) */
static bool grow_index(struct pmt_pieces *p)
{
	size_t cap = p->icap ? 2 * p->icap : 1024, i, j;
	uint32_t *x = calloc(cap, sizeof(*x));

	if (!x)
		return false;
	for (i = 0; i < p->n; i++) {
		for (j = pmt_hash_str(PMT_HASH_SEED, piece(p, (uint32_t)i)) & (cap - 1); x[j];
		     j = (j + 1) & (cap - 1))
			;
		x[j] = (uint32_t)i + 1;
	}
	free(p->index);
	p->index = x;
	p->icap = cap;
	return true;
}

/* The id of the n bytes at s, made if new; -1 when memory ran out */
static int64_t intern(struct pmt_pieces *p, const char *s, size_t n)
{
	uint32_t *at;
	uint64_t h;
	size_t j;

	if (2 * (p->n + 1) > p->icap && !grow_index(p))
		return -1;
	h = pmt_hash_bytes(PMT_HASH_SEED, s, n);
	for (j = h & (p->icap - 1); p->index[j]; j = (j + 1) & (p->icap - 1)) {
		const char *have = piece(p, p->index[j] - 1);

		if (!strncmp(have, s, n) && !have[n])
			return p->index[j] - 1;
	}
	if (!(at = pmt_grow(p->at, &p->cap, p->n, sizeof(*at), 1024)))
		return -1;
	p->at = at;
	p->at[p->n] = (uint32_t)p->chars.len;
	pmt_buf__add(&p->chars, s, n);
	pmt_buf__putc(&p->chars, '\0');
	p->index[j] = (uint32_t)++p->n;
	return (int64_t)p->n - 1;
}

uint32_t *pmt_pieces__add(struct pmt_pieces *p, const char *text)
{
	size_t n = 1, k = 1, len;
	const char *s;
	uint32_t *t;
	int64_t id;

	for (s = text; *s; s++)
		n += *s == '\n' || *s == ';';
	if (!(t = malloc((n + 1) * sizeof(*t))))
		return NULL;
	for (s = text; *s; s += len) {
		len = strcspn(s, "\n;");
		len += s[len] != '\0';
		if ((id = intern(p, s, len)) < 0) {
			free(t);
			return NULL;
		}
		t[k++] = (uint32_t)id;
	}
	t[0] = (uint32_t)(k - 1);
	return t;
}

void pmt_pieces__join(const struct pmt_pieces *p, const uint32_t *t, struct pmt_buf *b)
{
	uint32_t i;

	for (i = 1; i <= t[0]; i++)
		pmt_buf__puts(b, piece(p, t[i]));
}

bool pmt_pieces__same(const uint32_t *a, const uint32_t *b)
{
	return a[0] == b[0] && !memcmp(a + 1, b + 1, a[0] * sizeof(*a));
}

uint64_t pmt_pieces__hash(const uint32_t *t)
{
	return pmt_hash_bytes(PMT_HASH_SEED, t, (t[0] + 1) * sizeof(*t));
}

/* Each piece but a text's last ends with its '\n' or ';', found nowhere
 * else in it: the first pieces that differ compare as the texts do. */
int pmt_pieces__cmp(const struct pmt_pieces *p, const uint32_t *a, const uint32_t *b)
{
	uint32_t i;
	int d;

	for (i = 1; i <= a[0] && i <= b[0]; i++)
		if (a[i] != b[i] && (d = strcmp(piece(p, a[i]), piece(p, b[i]))))
			return d;
	return (a[0] > b[0]) - (a[0] < b[0]);
}

void pmt_pieces__free(struct pmt_pieces *p)
{
	pmt_buf__free(&p->chars);
	free(p->at);
	free(p->index);
	memset(p, 0, sizeof(*p));
}
