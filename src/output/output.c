// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include "util/grow.h"
#include "util/log.h"
#include "tracefs/render.h"
#include "output/output.h"
#include "output/printf.h"
#include "output/stacks.h"
#include "abi.h"

/* Write out when this much is buffered: few, large write()s. */
#define OUT_FLUSH_AT (256 * 1024)

/* procfs and sysfs files take writes as commands (/proc/self/mem,
 * /sys/...): they open, then fail or do something else at the first
 * write, after tracing has started. */
static bool is_kernel_file(int fd)
{
	struct statfs sfs;

	return !fstatfs(fd, &sfs) && (sfs.f_type == PROC_SUPER_MAGIC || sfs.f_type == SYSFS_MAGIC);
}

/* A reader can stop reading a pipe, a socket or a terminal (^S): get a
 * way to write to them that never blocks (see struct pmt_output). */
static void nonblocking_writes(struct pmt_output *o)
{
	char path[64];
	struct stat st;

	o->wfd = -1;
	if (fstat(o->fd, &st))
		return;
	if (S_ISSOCK(st.st_mode)) {
		o->sock = true;
		return;
	}
	if (!S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode))
		return;
	/* a new open of the same pipe or device: its O_NONBLOCK is ours
	 * alone (ENXIO: a pipe without a reader, where write() fails fast) */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", o->fd);
	o->wfd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
}

int pmt_output__open(struct pmt_output *o, const char *path, enum pmt_out_mode mode,
		     struct pmt_error *err)
{
	memset(o, 0, sizeof(*o));
	o->wfd = -1;
	o->mode = mode;
	if (!path || !strcmp(path, "-")) {
		o->fd = STDOUT_FILENO;
		o->path = "stdout";
		nonblocking_writes(o);
		return 0;
	}
	o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (o->fd < 0) {
		return pmt_error__usage(err, "cannot open output file '%s': %s", path,
					strerror(errno));
	}
	if (is_kernel_file(o->fd)) {
		pmt_error__usage(
			err,
			"cannot write events to '%s': a kernel interface file of /proc or /sys",
			path);
		pmt_error__hint(err,
				"-o takes a regular file, a pipe or a device such as /dev/null");
		close(o->fd);
		o->fd = -1;
		return -EINVAL;
	}
	o->own_fd = true;
	o->path = path;
	nonblocking_writes(o);
	return 0;
}

void pmt_output__interruptible(struct pmt_output *o, const volatile sig_atomic_t *stop,
			       const sigset_t *wait_mask)
{
	o->stop = stop;
	o->wait_mask = wait_mask;
}

static void text_value(struct pmt_buf *b, const struct pmt_value *v)
{
	size_t i;

	switch (v->kind) {
	case PMT_V_S64: pmt_buf__s64(b, v->s); break;
	case PMT_V_U64: pmt_buf__u64(b, v->u); break;
	case PMT_V_HEX: pmt_buf__hex(b, v->u); break;
	case PMT_V_STR: pmt_buf__text_str(b, v->str, v->len); break;
	case PMT_V_ARRAY:
		pmt_buf__putc(b, '[');
		for (i = 0; i < v->len; i++) {
			if (i)
				pmt_buf__putc(b, ',');
			if (v->elem_signed)
				pmt_buf__s64(b, (int64_t)pmt_value__elem(v, i));
			else
				pmt_buf__u64(b, pmt_value__elem(v, i));
		}
		pmt_buf__putc(b, ']');
		break;
	}
}

/* The name of an integer with named values, or NULL. */
static const char *symbol_of(const struct pmt_field *f, const struct pmt_value *v)
{
	uint64_t i;

	if (!f->symbols || (v->kind != PMT_V_U64 && v->kind != PMT_V_S64))
		return NULL;
	for (i = 0; f->symbols[i]; i++)
		if (i == v->u)
			return f->symbols[i];
	return NULL;
}

/* Pointers and hex values as "0x..." strings; arrays as [1,2,3]. */
static void json_value(struct pmt_json *j, const struct pmt_value *v)
{
	size_t i;

	switch (v->kind) {
	case PMT_V_S64: pmt_json__s64(j, v->s); break;
	case PMT_V_U64: pmt_json__u64(j, v->u); break;
	case PMT_V_HEX: pmt_json__hex(j, v->u); break;
	case PMT_V_STR: pmt_json__strn(j, v->str, v->len); break;
	case PMT_V_ARRAY:
		pmt_json__array(j);
		for (i = 0; i < v->len; i++) {
			if (v->elem_signed)
				pmt_json__s64(j, (int64_t)pmt_value__elem(v, i));
			else
				pmt_json__u64(j, pmt_value__elem(v, i));
		}
		pmt_json__end(j);
		break;
	}
}

/* --str's string i of r, or <fault> */
static void stream_str(const struct pmt_record *r, int i, struct pmt_value *v)
{
	const char *s = r->strs + (size_t)i * PMT_STREAM_STR_LEN;

	memset(v, 0, sizeof(*v));
	v->kind = PMT_V_STR;
	v->str = !s[0] && s[1] == 1 ? "<fault>" : s;
	v->len = pmt_strnlen(v->str, PMT_STREAM_STR_LEN);
}

static size_t comm_len(const struct pmt_record *r)
{
	return pmt_strnlen(r->comm, r->comm_len);
}

void pmt_format_text(struct pmt_buf *b, const struct pmt_record *r)
{
	size_t cl = comm_len(r), start = b->len, w;
	struct pmt_value v;
	const char *sym;
	int i;

	if (r->print) {
		/* what the format says, nothing more (bpftrace's printf) */
		pmt_print__render(b, r->print, r);
		return;
	}
	/* right-align comm in 16 columns, as perf script does */
	pmt_buf__reserve(b, 16);
	pmt_buf__text_str(b, r->comm, cl);
	w = b->len - start;
	if (w < 16) {
		memmove(b->p + start + 16 - w, b->p + start, w);
		memset(b->p + start, ' ', 16 - w);
		b->len = start + 16;
	}
	pmt_buf__putc(b, ' ');
	pmt_buf__u64(b, r->pid);
	pmt_buf__putc(b, '/');
	pmt_buf__u64(b, r->tid);
	pmt_buf__add(b, " [", 2);
	pmt_buf__u64w(b, r->cpu, r->cpu < 1000 ? 3 : r->cpu < 10000 ? 4 : 6);
	pmt_buf__add(b, "] ", 2);
	pmt_buf__u64(b, r->ts / 1000000000);
	pmt_buf__putc(b, '.');
	pmt_buf__u64w(b, (r->ts % 1000000000) / 1000, 6);
	pmt_buf__add(b, ": ", 2);
	pmt_buf__puts(b, r->event);
	pmt_buf__putc(b, ':');
	/* the kernel's print fmt, as perf script shows it; a record cut
	 * short may lack what its dynamic fields point at: its fields */
	if (r->fmt && r->fmt->render && !r->truncated) {
		pmt_buf__putc(b, ' ');
		pmt_render__info(r->fmt, r->data, r->len, b);
		i = r->fmt->nr_fields;
	} else {
		i = 0;
	}
	for (; r->fmt && i < r->fmt->nr_fields; i++) {
		const struct pmt_field *f = &r->fmt->fields[i];

		if (f->is_common)
			continue;
		pmt_buf__putc(b, ' ');
		pmt_buf__puts(b, f->name);
		pmt_buf__putc(b, '=');
		pmt_field__value(f, r->data, r->len, &v);
		sym = symbol_of(f, &v);
		if (sym)
			pmt_buf__puts(b, sym);
		else
			text_value(b, &v);
	}
	for (i = 0; i < (int)r->nstrs; i++) {
		if (!(r->str_mask & (1u << i)))
			continue;
		pmt_buf__printf(b, " %s=", r->str_names[i]);
		stream_str(r, i, &v);
		text_value(b, &v);
	}
	for (i = 0; i < (int)r->ncounters; i++) {
		uint64_t vd[2];

		memcpy(vd, (const char *)r->counts + 16 * i, sizeof(vd));
		pmt_buf__printf(b, " %s=%llu (+%llu)", r->counters[i], (unsigned long long)vd[0],
				(unsigned long long)vd[1]);
	}
	if (r->named)
		pmt_stacks__text(r->named, b);
	if (r->truncated)
		pmt_buf__puts(b, " [truncated]");
	pmt_buf__putc(b, '\n');
}

void pmt_format_json(struct pmt_buf *b, const struct pmt_record *r)
{
	struct pmt_value v;
	struct pmt_json j;
	const char *sym;
	int i;

	pmt_json__init(&j, b);
	pmt_json__object(&j);
	if (r->print) {
		/* bpftrace -f json's shape for printf */
		struct pmt_buf text = {0};

		pmt_print__render(&text, r->print, r);
		pmt_json__field_str(&j, "type", "printf");
		pmt_json__field_strn(&j, "data", text.p ? text.p : "", text.len);
		pmt_buf__free(&text);
		pmt_json__end(&j);
		pmt_buf__putc(b, '\n');
		return;
	}
	pmt_json__field_u64(&j, "ts", r->ts);
	pmt_json__field_u64(&j, "cpu", r->cpu);
	pmt_json__field_strn(&j, "comm", r->comm, comm_len(r));
	pmt_json__field_u64(&j, "pid", r->pid);
	pmt_json__field_u64(&j, "tid", r->tid);
	pmt_json__field_str(&j, "event", r->event);
	if (r->truncated)
		pmt_json__field_bool(&j, "truncated", true);
	pmt_json__key(&j, "fields");
	pmt_json__object(&j);
	for (i = 0; r->fmt && i < r->fmt->nr_fields; i++) {
		const struct pmt_field *f = &r->fmt->fields[i];

		if (f->is_common)
			continue;
		pmt_json__key(&j, f->name);
		pmt_field__value(f, r->data, r->len, &v);
		sym = symbol_of(f, &v);
		if (sym)
			pmt_json__str(&j, sym);
		else
			json_value(&j, &v);
	}
	for (i = 0; i < (int)r->nstrs; i++) {
		if (!(r->str_mask & (1u << i)))
			continue;
		pmt_json__key(&j, r->str_names[i]);
		stream_str(r, i, &v);
		json_value(&j, &v);
	}
	pmt_json__end(&j);
	if (r->ncounters) {
		pmt_json__key(&j, "counters");
		pmt_json__array(&j);
		for (i = 0; i < (int)r->ncounters; i++) {
			uint64_t vd[2];

			memcpy(vd, (const char *)r->counts + 16 * i, sizeof(vd));
			pmt_json__object(&j);
			pmt_json__field_str(&j, "event", r->counters[i]);
			pmt_json__field_u64(&j, "value", vd[0]);
			pmt_json__field_u64(&j, "delta", vd[1]);
			pmt_json__end(&j);
		}
		pmt_json__end(&j);
	}
	if (r->named)
		pmt_stacks__json(r->named, &j);
	pmt_json__end(&j);
	pmt_buf__putc(b, '\n');
}

void pmt_output__record(struct pmt_output *o, const struct pmt_record *r)
{
	if (o->mode == PMT_OUT_JSON)
		pmt_format_json(&o->buf, r);
	else
		pmt_format_text(&o->buf, r);
	size_t *ends = pmt_grow(o->ends, &o->cap_ends, o->nends, sizeof(*ends), 1024);

	if (ends)
		o->ends = ends;
	if (o->nends < o->cap_ends)
		o->ends[o->nends++] = o->buf.len;
	else
		pmt_output__flush(o); /* no memory to count it: write it now */
	if (o->buf.len >= OUT_FLUSH_AT)
		pmt_output__flush(o);
}

void pmt_output__line(struct pmt_output *o, const char *s, size_t n)
{
	pmt_buf__add(&o->buf, s, n);
	o->lines_pending = true;
	if (o->buf.len >= OUT_FLUSH_AT)
		pmt_output__flush(o);
}

static ssize_t write_some(const struct pmt_output *o, const char *p, size_t n)
{
	if (o->sock)
		return send(o->fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
	return write(o->wfd >= 0 ? o->wfd : o->fd, p, n);
}

/* The reader is not reading: wait for room, with signals let in. false
 * when it is time to give up (stopped, and the grace period is over). */
static bool wait_writable(struct pmt_output *o)
{
	struct pollfd pfd = {.fd = o->fd, .events = POLLOUT};
	struct timespec ts, *tsp = NULL;
	uint64_t now;

	if (o->stop && *o->stop) {
		now = pmt_now_ns() / 1000000;
		if (!o->give_up_ms)
			o->give_up_ms = now + PMT_OUT_GRACE_MS;
		if (now >= o->give_up_ms)
			return false;
		ts.tv_sec = (time_t)((o->give_up_ms - now) / 1000);
		ts.tv_nsec = (long)((o->give_up_ms - now) % 1000) * 1000000L;
		tsp = &ts;
	}
	/* EINTR: a signal came; the caller tries again and we look at *stop */
	ppoll(&pfd, 1, tsp, o->wait_mask);
	return true;
}

/* The first off bytes of buf went out: forget them and the records they
 * held; drop (and count) the rest if drop. */
static void consume(struct pmt_output *o, size_t off, bool drop)
{
	size_t i = 0, j;

	while (i < o->nends && o->ends[i] <= off)
		i++;
	if (drop || off == o->buf.len) {
		o->unwritten += drop ? o->nends - i : 0;
		if (drop && o->lines_pending)
			o->summary_cut = true;
		o->buf.len = 0;
		o->nends = 0;
		o->lines_pending = false;
		return;
	}
	memmove(o->buf.p, o->buf.p + off, o->buf.len - off);
	o->buf.len -= off;
	for (j = 0; i < o->nends; i++, j++)
		o->ends[j] = o->ends[i] - off;
	o->nends = j;
}

int pmt_output__flush(struct pmt_output *o)
{
	size_t off = 0;
	ssize_t n;

	if (o->err) {
		consume(o, o->buf.len, false);
		return o->err;
	}
	while (off < o->buf.len) {
		n = write_some(o, o->buf.p + off, o->buf.len - off);
		if (n >= 0) {
			off += (size_t)n;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN) {
			if (wait_writable(o))
				continue;
			consume(o, off, true);
			return 0;
		}
		o->err = -errno;
		break;
	}
	consume(o, o->buf.len, false);
	return o->err;
}

int pmt_output__close(struct pmt_output *o, struct pmt_error *err)
{
	pmt_output__flush(o);
	if (o->own_fd && o->fd >= 0) {
		if (close(o->fd) && !o->err)
			o->err = -errno;
	}
	if (o->wfd >= 0)
		close(o->wfd);
	o->fd = -1;
	o->wfd = -1;
	pmt_buf__free(&o->buf);
	free(o->ends);
	o->ends = NULL;
	o->nends = o->cap_ends = 0;
	if (!o->err || o->err == -EPIPE)
		return 0;
	return pmt_error__runtime(err, o->err, "writing to %s failed: %s", o->path,
				  strerror(-o->err));
}
