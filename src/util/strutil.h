/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Growable byte buffer with fast number formatting, escaping, parsing. */
#ifndef PMT_STRUTIL_H
#define PMT_STRUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pmt_buf {
	char *p;
	size_t len, cap;
};

void pmt_buf__free(struct pmt_buf *b);
/* Make room for n more bytes; aborts on out of memory. */
void pmt_buf__reserve(struct pmt_buf *b, size_t n);
void pmt_buf__add(struct pmt_buf *b, const void *s, size_t n);
void pmt_buf__puts(struct pmt_buf *b, const char *s);
void pmt_buf__printf(struct pmt_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pmt_buf__u64(struct pmt_buf *b, uint64_t v);
void pmt_buf__s64(struct pmt_buf *b, int64_t v);
void pmt_buf__hex(struct pmt_buf *b, uint64_t v); /* 0x... */
/* lowercase hex, no prefix, right-aligned in width columns (printf's %*llx) */
void pmt_buf__hexw(struct pmt_buf *b, uint64_t v, int width);
/* zero-padded decimal of exactly width digits */
void pmt_buf__u64w(struct pmt_buf *b, uint64_t v, int width);
/* NUL-terminate without counting the NUL in len */
const char *pmt_buf__cstr(struct pmt_buf *b);

static inline void pmt_buf__putc(struct pmt_buf *b, char c)
{
	if (b->len + 1 > b->cap)
		pmt_buf__reserve(b, 1);
	b->p[b->len++] = c;
}

/*
 * Text-output string: bytes that are not printable ASCII become \xNN,
 * backslash and quote are escaped; the whole is quoted when it is empty or
 * holds a space, quote or '=' so "field=value" stays unambiguous.
 */
void pmt_buf__text_str(struct pmt_buf *b, const char *s, size_t n);
/* JSON string literal, quotes included; always valid JSON (bytes >= 0x80
 * that are not valid UTF-8 are written as \u00XX). */
void pmt_buf__json_str(struct pmt_buf *b, const char *s, size_t n);

/* Is word in list, words each between spaces (" A B ")? NULL: none */
bool pmt_words__has(const char *list, const char *word);

/* strnlen that is safe for non-terminated arrays */
size_t pmt_strnlen(const char *s, size_t max);

/*
 * Parse a whole string as an integer (base 0: 10, 0x16, 0 8).
 * Returns 0 or -EINVAL (not a number, trailing junk) / -ERANGE.
 */
int pmt_parse_u64(const char *s, uint64_t *out);
int pmt_parse_s64(const char *s, int64_t *out);
int pmt_parse_int(const char *s, int min, int max, int *out);

/* FNV-1a: h (PMT_HASH_SEED to begin with) carried on over the n bytes
 * at p, or over the string s */
#define PMT_HASH_SEED 0xcbf29ce484222325ULL
uint64_t pmt_hash_bytes(uint64_t h, const void *p, size_t n);
uint64_t pmt_hash_str(uint64_t h, const char *s);

/* CLOCK_MONOTONIC in ns: the clock of BPF's timestamps. */
uint64_t pmt_now_ns(void);
/* The calling thread's CPU time in ns. */
uint64_t pmt_thread_cpu_ns(void);

/* In base[0..n), elements of size bytes sorted by an unsigned key of
 * key_size bytes (4 or 8) at byte key_off: how many have a key <= k (the
 * last of them is at the result - 1). */
size_t pmt_count_le(const void *base, size_t n, size_t size, size_t key_off, size_t key_size,
		    uint64_t k);

/* Read a whole file into a NUL-terminated malloc'd buffer; -errno. */
int pmt_read_file(const char *path, char **out, size_t *len);

#endif
