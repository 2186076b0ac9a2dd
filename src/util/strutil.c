// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "util/grow.h"
#include "util/strutil.h"

void pmt_buf__free(struct pmt_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

void pmt_buf__reserve(struct pmt_buf *b, size_t n)
{
	char *p;

	if (b->len + n <= b->cap)
		return;
	p = pmt_grow_to(b->p, &b->cap, b->len + n, 1, 256);
	if (!p) {
		fputs("pmtrace: out of memory\n", stderr);
		abort();
	}
	b->p = p;
}

void pmt_buf__add(struct pmt_buf *b, const void *s, size_t n)
{
	if (!n)
		return; /* an empty buffer may have no memory yet */
	pmt_buf__reserve(b, n);
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

void pmt_buf__puts(struct pmt_buf *b, const char *s)
{
	pmt_buf__add(b, s, strlen(s));
}

void pmt_buf__printf(struct pmt_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	pmt_buf__reserve(b, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void pmt_buf__u64(struct pmt_buf *b, uint64_t v)
{
	char tmp[20];
	int i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	pmt_buf__add(b, tmp + i, sizeof(tmp) - (size_t)i);
}

void pmt_buf__s64(struct pmt_buf *b, int64_t v)
{
	if (v < 0) {
		pmt_buf__putc(b, '-');
		pmt_buf__u64(b, -(uint64_t)v);
	} else {
		pmt_buf__u64(b, (uint64_t)v);
	}
}

/* v's hex digits at the end of tmp[18]; returns where they start */
static int hex_digits(char *tmp, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	int i = 18;

	do {
		tmp[--i] = digits[v & 15];
		v >>= 4;
	} while (v);
	return i;
}

void pmt_buf__hex(struct pmt_buf *b, uint64_t v)
{
	char tmp[18];
	int i = hex_digits(tmp, v);

	tmp[--i] = 'x';
	tmp[--i] = '0';
	pmt_buf__add(b, tmp + i, sizeof(tmp) - (size_t)i);
}

void pmt_buf__hexw(struct pmt_buf *b, uint64_t v, int width)
{
	char tmp[18];
	int i = hex_digits(tmp, v);

	if (width > 18)
		width = 18;
	while (18 - i < width)
		tmp[--i] = ' ';
	pmt_buf__add(b, tmp + i, sizeof(tmp) - (size_t)i);
}

void pmt_buf__u64w(struct pmt_buf *b, uint64_t v, int width)
{
	char tmp[20];
	int i;

	if (width > 20)
		width = 20;
	for (i = width - 1; i >= 0; i--) {
		tmp[i] = (char)('0' + v % 10);
		v /= 10;
	}
	pmt_buf__add(b, tmp, (size_t)width);
}

const char *pmt_buf__cstr(struct pmt_buf *b)
{
	pmt_buf__reserve(b, 1);
	b->p[b->len] = '\0';
	return b->p;
}

static const char hexd[] = "0123456789abcdef";

void pmt_buf__text_str(struct pmt_buf *b, const char *s, size_t n)
{
	bool quote = n == 0;
	size_t i;

	for (i = 0; i < n && !quote; i++)
		quote = s[i] == ' ' || s[i] == '"' || s[i] == '=';
	pmt_buf__reserve(b, n * 4 + 2);
	if (quote)
		b->p[b->len++] = '"';
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\\' || c == '"') {
			b->p[b->len++] = '\\';
			b->p[b->len++] = (char)c;
		} else if (c < 0x20 || c >= 0x7f) {
			b->p[b->len++] = '\\';
			b->p[b->len++] = 'x';
			b->p[b->len++] = hexd[c >> 4];
			b->p[b->len++] = hexd[c & 15];
		} else {
			b->p[b->len++] = (char)c;
		}
	}
	if (quote)
		b->p[b->len++] = '"';
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* overlong, surrogates, beyond U+10FFFF */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

void pmt_buf__json_str(struct pmt_buf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, k;

	pmt_buf__reserve(b, n * 6 + 2);
	b->p[b->len++] = '"';
	while (i < n) {
		unsigned char c = u[i];

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			b->p[b->len++] = (char)c;
			i++;
			continue;
		}
		if (c == '"' || c == '\\') {
			b->p[b->len++] = '\\';
			b->p[b->len++] = (char)c;
			i++;
			continue;
		}
		if (c == '\n' || c == '\t' || c == '\r') {
			b->p[b->len++] = '\\';
			b->p[b->len++] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
			i++;
			continue;
		}
		k = c >= 0x80 ? utf8_seq(u + i, n - i) : 0;
		if (k) {
			memcpy(b->p + b->len, u + i, k);
			b->len += k;
			i += k;
			continue;
		}
		memcpy(b->p + b->len, "\\u00", 4);
		b->len += 4;
		b->p[b->len++] = hexd[c >> 4];
		b->p[b->len++] = hexd[c & 15];
		i++;
	}
	b->p[b->len++] = '"';
}

bool pmt_words__has(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (; list && (list = strchr(list, ' ')); list++)
		if (!strncmp(list + 1, word, n) && list[1 + n] == ' ')
			return true;
	return false;
}

size_t pmt_strnlen(const char *s, size_t max)
{
	const char *z = memchr(s, '\0', max);

	return z ? (size_t)(z - s) : max;
}

int pmt_parse_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end || end == s)
		return -EINVAL;
	*out = v;
	return 0;
}

int pmt_parse_s64(const char *s, int64_t *out)
{
	long long v;
	char *end;

	if (!s || !*s || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end || end == s)
		return -EINVAL;
	*out = v;
	return 0;
}

int pmt_parse_int(const char *s, int min, int max, int *out)
{
	int64_t v;
	int err = pmt_parse_s64(s, &v);

	if (err)
		return err;
	if (v < min || v > max)
		return -ERANGE;
	*out = (int)v;
	return 0;
}

uint64_t pmt_hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

uint64_t pmt_hash_str(uint64_t h, const char *s)
{
	while (*s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ULL;
	return h;
}

uint64_t pmt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t pmt_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int pmt_read_file(const char *path, char **out, size_t *lenp)
{
	struct pmt_buf b = {0};
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	for (;;) {
		pmt_buf__reserve(&b, 65536);
		n = read(fd, b.p + b.len, b.cap - b.len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			pmt_buf__free(&b);
			return (int)n;
		}
		if (n == 0)
			break;
		b.len += (size_t)n;
	}
	close(fd);
	pmt_buf__cstr(&b);
	*out = b.p;
	if (lenp)
		*lenp = b.len;
	return 0;
}

size_t pmt_count_le(const void *base, size_t n, size_t size, size_t key_off, size_t key_size,
		    uint64_t k)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const char *at = (const char *)base + mid * size + key_off;
		uint64_t v;

		if (key_size == 4) {
			uint32_t v32;

			memcpy(&v32, at, 4);
			v = v32;
		} else {
			memcpy(&v, at, 8);
		}
		if (v <= k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
