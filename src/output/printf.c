// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bpftrace's printf over a streamed record (printf.h). Conversions are
 * C's, length modifiers included, as bpftrace passes its 64-bit values
 * to C's printf: %d and %u show the low 32 bits, %hd 16, %hhu 8, %ld
 * and %lld all 64.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "abi.h"
#include "output/record.h"
#include "output/printf.h"
#include "symbols/named.h"
#include "symbols/symbols.h"

/* One conversion of a format: spec is "%-16" without its length
 * modifiers or letter; conv its letter; *end past it. */
struct conv {
	char spec[24];
	char conv;
	int bits; /* what the length modifiers leave of a number: 8 .. 64 */
	size_t end;
};

/* Widths and precisions are at most this: a line is not megabytes. */
#define WIDTH_MAX 1000

/* The conversion at fmt[i] (a '%', not "%%"): false if it is cut short,
 * too long, or wider than WIDTH_MAX. */
static bool read_conv(const char *fmt, size_t len, size_t i, struct conv *c)
{
	size_t k = 0;
	long n = 0;

	c->spec[k++] = '%';
	for (i++; i < len && fmt[i] && strchr("-+ #0123456789.", fmt[i]); i++) {
		if (k + 4 >= sizeof(c->spec))
			return false;
		n = fmt[i] >= '0' && fmt[i] <= '9' ? n * 10 + (fmt[i] - '0') : 0;
		if (n > WIDTH_MAX)
			return false;
		c->spec[k++] = fmt[i];
	}
	c->bits = 32;
	for (; i < len && fmt[i] && strchr("hlLqjzt", fmt[i]); i++)
		c->bits = fmt[i] != 'h' ? 64 : c->bits == 16 ? 8 : 16;
	c->spec[k] = '\0';
	c->conv = i < len ? fmt[i] : '\0';
	c->end = i + 1;
	return c->conv != '\0';
}

bool pmt_parg__is_str(const struct pmt_print_arg *a)
{
	return a->kind == PMT_PARG_STR || a->kind == PMT_PARG_COMM || a->kind == PMT_PARG_PROBE ||
	       a->kind == PMT_PARG_FUNC || a->kind == PMT_PARG_JOIN || a->kind == PMT_PARG_TIME ||
	       a->kind == PMT_PARG_TABLE || a->kind == PMT_PARG_USYM || a->kind == PMT_PARG_KSYM ||
	       a->kind == PMT_PARG_PROBE_OF || a->kind == PMT_PARG_FUNC_OF ||
	       a->kind == PMT_PARG_CAT || a->kind == PMT_PARG_LIT || a->kind == PMT_PARG_NTOP4 ||
	       a->kind == PMT_PARG_NTOP6 || a->kind == PMT_PARG_KSTACK ||
	       (a->kind == PMT_PARG_FIELD && a->str);
}

const struct pmt_print_arg *pmt_print__chosen(const struct pmt_print *p,
					      const struct pmt_print_arg *a,
					      const struct pmt_record *r)
{
	uint64_t v;
	int n;

	for (n = 0; a->when && a->alt && a->alt <= PMT_PRINT_ARGS && n < PMT_PRINT_ARGS; n++) {
		v = 0;
		if (a->when - 1 < (int)r->nvals)
			memcpy(&v, r->vals + (size_t)(a->when - 1) * 8, sizeof(v));
		if (v)
			break;
		a = &p->args[a->alt - 1];
	}
	return a;
}

bool pmt_print__names(const struct pmt_print *p, bool user)
{
	int i;

	for (i = 0; p && i < (p->nall > p->nargs ? p->nall : p->nargs) && i < PMT_PRINT_ARGS; i++)
		if (p->args[i].kind == (user ? PMT_PARG_USYM : PMT_PARG_KSYM) ||
		    (!user && p->args[i].kind == PMT_PARG_KSTACK))
			return true;
	return false;
}

char pmt_print__conv(const char *fmt, size_t len, int n)
{
	struct conv c;
	size_t i;

	for (i = 0; i < len; i++) {
		if (fmt[i] != '%')
			continue;
		if (i + 1 < len && fmt[i + 1] == '%') {
			i++;
			continue;
		}
		if (!read_conv(fmt, len, i, &c))
			return 0;
		if (!n--)
			return c.conv;
		i = c.end - 1;
	}
	return 0;
}

int pmt_print__check(const struct pmt_print *p, char *why, size_t len)
{
	struct conv c;
	size_t i;
	int used = 0;
	bool str;

	for (i = 0; i < p->len; i++) {
		if (p->fmt[i] != '%')
			continue;
		if (i + 1 < p->len && p->fmt[i + 1] == '%') {
			i++;
			continue;
		}
		if (!read_conv(p->fmt, p->len, i, &c) || !c.conv || !strchr("diouxXcspr", c.conv)) {
			snprintf(
				why, len,
				"the conversion at byte %zu is not one printf takes: %%[flags][width]"
				"[.precision][length]d i o u x X c s p, or r for a buf(), widths up "
				"to %d",
				i, WIDTH_MAX);
			return -EINVAL;
		}
		if (used == p->nargs) {
			snprintf(why, len, "the format has more conversions than arguments (%d)",
				 p->nargs);
			return -EINVAL;
		}
		if ((c.conv == 'r') != (p->args[used].kind == PMT_PARG_BUF)) {
			snprintf(why, len, "argument %d: %s", used + 1,
				 c.conv == 'r' ? "%r shows a buf(), not this"
					       : "a buf() is shown by %r");
			return -EINVAL;
		}
		str = pmt_parg__is_str(&p->args[used]) || c.conv == 'r';
		if ((c.conv == 's' || c.conv == 'r') != str) {
			snprintf(why, len, "argument %d is a %s, its conversion %%%c a %s",
				 used + 1, str ? "string" : "number", c.conv,
				 c.conv == 's' ? "string's" : "number's");
			return -EINVAL;
		}
		used++;
		i = c.end - 1;
	}
	if (used < p->nargs) {
		snprintf(why, len, "%d arguments, but the format has %d conversions", p->nargs,
			 used);
		return -EINVAL;
	}
	return 0;
}

/* A number argument's value (0 where the record lacks it). */
static uint64_t num_of(const struct pmt_print *p, const struct pmt_print_arg *a,
		       const struct pmt_record *r)
{
	struct pmt_value fv;
	uint64_t v = 0;

	switch ((enum pmt_parg_kind)a->kind) {
	case PMT_PARG_FIELD:
		pmt_field__value(a->field, r->data, r->len, &fv);
		return fv.kind == PMT_V_STR || fv.kind == PMT_V_ARRAY ? 0 : fv.u;
	case PMT_PARG_NUM:
	case PMT_PARG_USYM:
	case PMT_PARG_KSYM:
	case PMT_PARG_PROBE_OF:
	case PMT_PARG_FUNC_OF:
		if (a->slot < r->nvals)
			memcpy(&v, r->vals + (size_t)a->slot * 8, sizeof(v));
		return v;
	case PMT_PARG_PID: return r->pid;
	case PMT_PARG_TID: return r->tid;
	case PMT_PARG_CPU: return r->cpu;
	case PMT_PARG_NSECS: return r->ts;
	case PMT_PARG_ELAPSED: return r->ts > p->start_ns ? r->ts - p->start_ns : 0;
	default: return 0;
	}
}

/* The record's time on the wall clock, as strftime(a->tfmt) says, into
 * buf (the local time zone's, as bpftrace's). */
static const char *time_of(const struct pmt_print *p, const struct pmt_print_arg *a,
			   const struct pmt_record *r, char *buf, size_t len)
{
	time_t t = (time_t)(((int64_t)r->ts + p->wall_ns) / 1000000000);
	struct tm tm;

	buf[0] = '\0';
	if (a->tfmt && localtime_r(&t, &tm) && !strftime(buf, len, a->tfmt, &tm))
		buf[0] = '\0';
	return buf;
}

/* A TABLE argument's string: its key's, "" where none */
static const char *table_of(const struct pmt_print_arg *a, const struct pmt_record *r)
{
	size_t lo = 0, hi = a->tn;
	int64_t key = 0;

	if (a->slot < r->nvals)
		memcpy(&key, r->vals + (size_t)a->slot * 8, sizeof(key));
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a->tkeys[mid] == key)
			return a->tstrs[mid];
		if (a->tkeys[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return "";
}

/* A JOIN argument's text: the record's strings, a->tfmt between them,
 * into buf (len bytes); an empty one ends them, as bpftrace's join()
 * ends there */
static const char *join_of(const struct pmt_print_arg *a, const struct pmt_record *r, char *buf,
			   size_t len)
{
	const char *delim = a->tfmt ? a->tfmt : " ";
	size_t at = 0, n;
	uint32_t i;

	buf[0] = '\0';
	for (i = 0; r->join && i < r->join->n && i < PMT_JOIN_ARGS; i++) {
		n = pmt_strnlen(r->join->arg[i], PMT_JOIN_ARG_LEN);
		if (!n)
			break;
		at += (size_t)snprintf(buf + at, len - at, "%s%.*s", i ? delim : "", (int)n,
				       r->join->arg[i]);
		if (at >= len)
			return buf;
	}
	return buf;
}

/* usym(E), ksym(E): the symbol at the address, as bpftrace names it (the
 * function alone; the address in hex where none holds it), into buf */
static const char *sym_of(const struct pmt_print *p, const struct pmt_print_arg *a,
			  const struct pmt_record *r, char *buf, size_t len)
{
	uint64_t addr = num_of(p, a, r);
	struct pmt_buf b = {0};

	if (p->syms &&
	    pmt_syms__name(p->syms, a->kind == PMT_PARG_USYM ? r->pid : 0, addr, false, false, &b))
		snprintf(buf, len, "%s", pmt_buf__cstr(&b));
	else
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
	pmt_buf__free(&b);
	return buf;
}

/* A saved probe's name, or its function (the name's last part); "" for
 * no such probe */
static const char *probe_of(const struct pmt_print *p, const struct pmt_print_arg *a,
			    const struct pmt_record *r, char *buf, size_t len)
{
	const char *s = p->probe_name
				? p->probe_name(p->probe_ctx, (uint32_t)num_of(p, a, r), buf, len)
				: NULL;

	if (!s)
		return "";
	return a->kind == PMT_PARG_FUNC_OF && strrchr(s, ':') ? strrchr(s, ':') + 1 : s;
}

/* cat("FILE"): the file's text now (at most len - 1 bytes, as bpftrace
 * reads at most its own bound), into buf; "" and a word on stderr where
 * it cannot be read, as bpftrace says it */
static const char *cat_of(const struct pmt_print_arg *a, char *buf, size_t len)
{
	FILE *f = a->tfmt ? fopen(a->tfmt, "re") : NULL;
	size_t n;

	buf[0] = '\0';
	if (!f) {
		fprintf(stderr, "pmtrace: cat(\"%s\"): %s\n", a->tfmt ? a->tfmt : "",
			strerror(errno));
		return buf;
	}
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	if (ferror(f))
		fprintf(stderr, "pmtrace: cat(\"%s\"): %s\n", a->tfmt, strerror(errno));
	fclose(f);
	return buf;
}

/* ntop(): the address as inet_ntop writes it, into buf: IPv4's 4 bytes
 * as the kernel keeps them (the number slot's low bytes, little-endian),
 * IPv6's 16 read into a string slot */
static const char *ntop_of(const struct pmt_print_arg *a, const struct pmt_record *r, char *buf,
			   size_t len)
{
	uint8_t v4[4] = {0};
	uint64_t v = 0;

	buf[0] = '\0';
	if (a->kind == PMT_PARG_NTOP6) {
		if (a->slot < r->nstrs)
			inet_ntop(AF_INET6, r->strs + (size_t)a->slot * PMT_STREAM_STR_LEN, buf,
				  (socklen_t)len);
		return buf;
	}
	if (a->slot < r->nvals)
		memcpy(&v, r->vals + (size_t)a->slot * 8, sizeof(v));
	memcpy(v4, &v, sizeof(v4));
	inet_ntop(AF_INET, v4, buf, (socklen_t)len);
	return buf;
}

/* kstack: the record's kernel frames (named by the event loop), a line
 * each after a newline, "        FUNCTION+OFFSET" in decimal, as bpftrace
 * prints a stack; into buf */
static const char *kstack_of(const struct pmt_print *p, const struct pmt_record *r, char *buf,
			     size_t len)
{
	struct pmt_buf b = {0}, name = {0};
	size_t i;

	pmt_buf__putc(&b, '\n');
	for (i = 0; r->named && i < r->named->n; i++) {
		if (!r->named->v[i].kernel)
			continue;
		name.len = 0;
		pmt_syms__name(p->syms, 0, r->named->v[i].addr, true, true, &name);
		pmt_buf__puts(&b, "        ");
		pmt_syms__offset_decimal(pmt_buf__cstr(&name), name.len, &b);
		pmt_buf__putc(&b, '\n');
	}
	snprintf(buf, len, "%s", pmt_buf__cstr(&b));
	pmt_buf__free(&b);
	pmt_buf__free(&name);
	return buf;
}

/* A string argument's bytes (a faulted read is empty, as bpftrace's).
 * buf: room for a time's text, or join()'s. */
static const char *str_of(const struct pmt_print *p, const struct pmt_print_arg *a,
			  const struct pmt_record *r, int *n, char *buf, size_t len)
{
	const char *s = "";
	size_t most = p->str_max;
	struct pmt_value fv;

	if (a->kind == PMT_PARG_FIELD) {
		pmt_field__value(a->field, r->data, r->len, &fv);
		if (fv.kind == PMT_V_STR) {
			s = fv.str;
			most = fv.len;
		}
	} else if (a->kind == PMT_PARG_STR && a->slot < r->nstrs) {
		s = r->strs + (size_t)a->slot * PMT_STREAM_STR_LEN;
		if (most > PMT_STREAM_STR_LEN - 1)
			most = PMT_STREAM_STR_LEN - 1;
	} else if (a->kind == PMT_PARG_COMM) {
		s = r->comm;
		most = r->comm_len;
	} else if ((a->kind == PMT_PARG_PROBE || a->kind == PMT_PARG_FUNC) && p->probe) {
		s = a->kind == PMT_PARG_FUNC && strrchr(p->probe, ':') ? strrchr(p->probe, ':') + 1
								       : p->probe;
		most = strlen(s);
	} else if (a->kind == PMT_PARG_TIME) {
		s = time_of(p, a, r, buf, len);
		most = len;
	} else if (a->kind == PMT_PARG_TABLE) {
		s = table_of(a, r);
		most = strlen(s);
	} else if (a->kind == PMT_PARG_JOIN) {
		s = join_of(a, r, buf, len);
		most = strlen(s);
	} else if (a->kind == PMT_PARG_USYM || a->kind == PMT_PARG_KSYM) {
		s = sym_of(p, a, r, buf, len);
		most = strlen(s);
	} else if (a->kind == PMT_PARG_PROBE_OF || a->kind == PMT_PARG_FUNC_OF) {
		s = probe_of(p, a, r, buf, len);
		most = strlen(s);
	} else if (a->kind == PMT_PARG_CAT) {
		s = cat_of(a, buf, len);
		most = strlen(s);
	} else if (a->kind == PMT_PARG_LIT) {
		s = a->tfmt ? a->tfmt : "";
		most = strlen(s);
	} else if (a->kind == PMT_PARG_KSTACK) {
		s = kstack_of(p, r, buf, len);
		most = strlen(s);
	} else if (a->kind == PMT_PARG_NTOP4 || a->kind == PMT_PARG_NTOP6) {
		s = ntop_of(a, r, buf, len);
		most = strlen(s);
	}
	*n = (int)pmt_strnlen(s, most);
	return s;
}

/* buf()'s bytes by %r, as bpftrace shows them: printable ones as they
 * are, the others \xNN; its length as the kernel said, at most what it
 * read (bpftrace's 64) */
static void render_buf(struct pmt_buf *b, const struct pmt_print_arg *a, const struct pmt_record *r)
{
	const unsigned char *s;
	uint64_t n = 0, i;

	if (a->slot >= r->nstrs)
		return;
	if (a->len_slot && a->len_slot - 1 < (int)r->nvals)
		memcpy(&n, r->vals + (size_t)(a->len_slot - 1) * 8, sizeof(n));
	if (n > PMT_BUF_MAX)
		n = PMT_BUF_MAX;
	s = (const unsigned char *)r->strs + (size_t)a->slot * PMT_STREAM_STR_LEN;
	for (i = 0; i < n; i++)
		if (s[i] >= 0x20 && s[i] < 0x7f)
			pmt_buf__putc(b, (char)s[i]);
		else
			pmt_buf__printf(b, "\\x%02x", s[i]);
}

/* One conversion of argument a, as C's printf does it. */
static void render_conv(struct pmt_buf *b, const struct pmt_print *p, const struct conv *c,
			const struct pmt_print_arg *a, const struct pmt_record *r)
{
	char spec[sizeof(c->spec) + 4];
	uint64_t v;
	int n;

	if (c->conv == 'r') {
		render_buf(b, a, r);
		return;
	}
	if (c->conv == 's') {
		char tbuf[PMT_JOIN_ARGS * (PMT_JOIN_ARG_LEN + 8)]; /* 8.3 KiB */
		const char *s = str_of(p, a, r, &n, tbuf, sizeof(tbuf));
		char *copy;

		if (!strchr(c->spec, '.')) {
			/* the string's length as its precision: no copy */
			snprintf(spec, sizeof(spec), "%s.*s", c->spec);
			pmt_buf__printf(b, spec, n, s);
			return;
		}
		copy = strndup(s, (size_t)n); /* a precision of the format's own */
		snprintf(spec, sizeof(spec), "%ss", c->spec);
		pmt_buf__printf(b, spec, copy ? copy : "");
		free(copy);
		return;
	}
	v = num_of(p, a, r);
	/* what C's printf reads of the 64-bit value bpftrace gives it */
	if (c->bits < 64 && strchr("diouxX", c->conv)) {
		v &= (1ULL << c->bits) - 1;
		if ((c->conv == 'd' || c->conv == 'i') && (v >> (c->bits - 1)))
			v |= ~0ULL << c->bits; /* negative: sign-extended */
	}
	if (c->conv == 'c') {
		snprintf(spec, sizeof(spec), "%sc", c->spec);
		pmt_buf__printf(b, spec, (int)(unsigned char)v);
	} else if (c->conv == 'p') {
		snprintf(spec, sizeof(spec), "%s#llx", c->spec); /* 0x..., as glibc's %p */
		pmt_buf__printf(b, spec, (unsigned long long)v);
	} else if (c->conv == 'd' || c->conv == 'i') {
		snprintf(spec, sizeof(spec), "%sll%c", c->spec, c->conv);
		pmt_buf__printf(b, spec, (long long)v);
	} else {
		snprintf(spec, sizeof(spec), "%sll%c", c->spec, c->conv);
		pmt_buf__printf(b, spec, (unsigned long long)v);
	}
}

/* The format's [from, to) with its arguments from *used on into b */
static void render_part(struct pmt_buf *b, const struct pmt_print *p, const struct pmt_record *r,
			size_t from, size_t to, int *used)
{
	size_t i;
	struct conv c;

	for (i = from; i < to; i++) {
		if (p->fmt[i] != '%')
			continue;
		pmt_buf__add(b, p->fmt + from, i - from);
		if (i + 1 < to && p->fmt[i + 1] == '%') {
			pmt_buf__putc(b, '%');
			from = ++i + 1;
			continue;
		}
		/* checked when the probe was made: each has its argument */
		if (!read_conv(p->fmt, to, i, &c) || *used == p->nargs)
			return;
		render_conv(b, p, &c, pmt_print__chosen(p, &p->args[(*used)++], r), r);
		i = c.end - 1;
		from = c.end;
	}
	pmt_buf__add(b, p->fmt + from, to - from);
}

/* Does segment s print for r (its condition's number non-zero)? */
static bool seg_prints(const struct pmt_print_seg *s, const struct pmt_record *r)
{
	uint64_t v = 0;

	if (!s->guard)
		return true;
	if ((size_t)(s->guard - 1) < r->nvals)
		memcpy(&v, r->vals + (size_t)(s->guard - 1) * 8, sizeof(v));
	return v != 0;
}

void pmt_print__render(struct pmt_buf *b, const struct pmt_print *p, const struct pmt_record *r)
{
	size_t from = 0;
	int i, used = 0;

	if (!p->nsegs) {
		render_part(b, p, r, 0, p->len, &used);
		return;
	}
	for (i = 0; i < p->nsegs; i++) {
		if (seg_prints(&p->segs[i], r))
			render_part(b, p, r, from, p->segs[i].fmt_end, &used);
		from = p->segs[i].fmt_end;
		used = p->segs[i].args_end; /* a segment left out: its arguments too */
	}
}

void pmt_print__free(struct pmt_print *p)
{
	int i;

	if (!p)
		return;
	for (i = 0; i < (p->nall > p->nargs ? p->nall : p->nargs) && i < PMT_PRINT_ARGS; i++)
		free(p->args[i].tfmt);
	for (i = 0; i < PMT_PRINT_SLOTS; i++)
		free(p->slot_text[i]);
	free(p->fmt);
	free(p->probe);
	memset(p, 0, sizeof(*p));
}
