// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The one error value (error.h). */
#include <unistd.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "util/error.h"
#include "util/log.h"

static void vset(struct pmt_error *e, enum pmt_err_class cls, int code, const char *fmt, va_list ap)
{
	/* a later error's hints must not join the first one's */
	e->muted = e->cls != PMT_ERR_NONE;
	if (e->muted)
		return;
	e->cls = cls;
	e->code = code;
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	e->hint[0] = e->src[0] = '\0';
	e->pos = e->len = 0;
}

int pmt_error__attach(struct pmt_error *e, int code, const char *spec, const char *kind,
		      const char *reason)
{
	int r = pmt_error__runtime(e, code, "%s: cannot attach %s: %s", spec, kind, reason);

	/* measured: the uprobe and kprobe PMUs refuse CAP_PERFMON alone */
	if ((code == -EACCES || code == -EPERM) && geteuid() != 0)
		pmt_error__hint(e,
				"without root, the kernel gives uprobes, USDT probes and kprobes "
				"only to CAP_SYS_ADMIN (pmtrace(8), PRIVILEGES)");
	return r;
}

void pmt_error__prefix(struct pmt_error *e, const char *fmt, ...)
{
	char msg[sizeof(e->msg)];
	size_t n;
	va_list ap;

	if (e->cls == PMT_ERR_NONE || e->muted)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = strlen(msg);
	/* the message's end is cut if both do not fit */
	memcpy(msg + n, e->msg, sizeof(msg) - n - 1);
	msg[sizeof(msg) - 1] = '\0';
	memcpy(e->msg, msg, sizeof(msg));
}

int pmt_error__usage(struct pmt_error *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset(e, PMT_ERR_USAGE, -EINVAL, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int pmt_error__runtime(struct pmt_error *e, int code, const char *fmt, ...)
{
	va_list ap;

	if (code >= 0)
		code = -EIO;
	va_start(ap, fmt);
	vset(e, PMT_ERR_RUNTIME, code, fmt, ap);
	va_end(ap);
	return code;
}

void pmt_error__hint(struct pmt_error *e, const char *fmt, ...)
{
	size_t n = strlen(e->hint);
	va_list ap;

	if (e->cls == PMT_ERR_NONE || e->muted || n + 2 >= sizeof(e->hint))
		return;
	if (n)
		e->hint[n++] = '\n';
	va_start(ap, fmt);
	vsnprintf(e->hint + n, sizeof(e->hint) - n, fmt, ap);
	va_end(ap);
}

void pmt_error__caret(struct pmt_error *e, const char *src, int pos, int len)
{
	snprintf(e->src, sizeof(e->src), "%s", src);
	e->pos = pos;
	e->len = len > 0 ? len : 1;
}

void pmt_error__format(struct pmt_buf *b, const struct pmt_error *e)
{
	const char *h = e->hint, *nl;
	int i;

	pmt_buf__printf(b, "%s\n", e->msg);
	if (e->len) { /* a caret was set, even under an empty input */
		pmt_buf__puts(b, "  ");
		for (i = 0; e->src[i]; i++)
			pmt_buf__putc(b, e->src[i] == '\t' || e->src[i] == '\n' ? ' ' : e->src[i]);
		pmt_buf__puts(b, "\n  ");
		for (i = 0; i < e->pos; i++)
			pmt_buf__putc(b, ' ');
		pmt_buf__putc(b, '^');
		for (i = 1; i < e->len; i++)
			pmt_buf__putc(b, '~');
		pmt_buf__putc(b, '\n');
	}
	while (*h) {
		nl = strchr(h, '\n');
		pmt_buf__printf(b, "hint: %.*s\n", nl ? (int)(nl - h) : (int)strlen(h), h);
		h = nl ? nl + 1 : h + strlen(h);
	}
}

void pmt_error__print(const struct pmt_error *e)
{
	struct pmt_buf b = {0};

	if (e->cls == PMT_ERR_NONE)
		return;
	pmt_error__format(&b, e);
	pmt_eprintf("pmtrace: %s", pmt_buf__cstr(&b));
	pmt_buf__free(&b);
}

int pmt_error__exit_status(const struct pmt_error *e)
{
	switch (e->cls) {
	case PMT_ERR_USAGE: return PMT_EXIT_USAGE;
	case PMT_ERR_RUNTIME: return PMT_EXIT_FAIL;
	default: return PMT_EXIT_OK;
	}
}

void pmt_error__clear(struct pmt_error *e)
{
	memset(e, 0, sizeof(*e));
}
