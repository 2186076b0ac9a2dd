// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include "abi.h"
#include "output/output.h"
#include "output/printf.h"
#include "util/strutil.h"
#include "test.h"

static const char *esc_text(struct pmt_buf *b, const char *s, size_t n)
{
	b->len = 0;
	pmt_buf__text_str(b, s, n);
	return pmt_buf__cstr(b);
}

static const char *esc_json(struct pmt_buf *b, const char *s, size_t n)
{
	b->len = 0;
	pmt_buf__json_str(b, s, n);
	return pmt_buf__cstr(b);
}

TEST(escape_text)
{
	struct pmt_buf b = {0};

	ASSERT_STREQ(esc_text(&b, "bash", 4), "bash");
	ASSERT_STREQ(esc_text(&b, "", 0), "\"\"");
	ASSERT_STREQ(esc_text(&b, "a b", 3), "\"a b\"");
	ASSERT_STREQ(esc_text(&b, "x=1", 3), "\"x=1\"");
	ASSERT_STREQ(esc_text(&b, "\x1b[31m", 5), "\\x1b[31m");
	ASSERT_STREQ(esc_text(&b, "a\\b\n", 4), "a\\\\b\\x0a");
	ASSERT_STREQ(esc_text(&b, "\xc3\xa9", 2), "\\xc3\\xa9");
	pmt_buf__free(&b);
}

TEST(escape_json)
{
	struct pmt_buf b = {0};

	ASSERT_STREQ(esc_json(&b, "plain", 5), "\"plain\"");
	ASSERT_STREQ(esc_json(&b, "q\"b\\", 4), "\"q\\\"b\\\\\"");
	ASSERT_STREQ(esc_json(&b, "\n\t\r\x01\x7f", 5), "\"\\n\\t\\r\\u0001\\u007f\"");
	/* valid UTF-8 passes through, invalid bytes become \u00XX */
	ASSERT_STREQ(esc_json(&b, "\xc3\xa9", 2), "\"\xc3\xa9\"");
	ASSERT_STREQ(esc_json(&b, "\xff\xc3", 2), "\"\\u00ff\\u00c3\"");
	ASSERT_STREQ(esc_json(&b, "\xe2\x82", 2), "\"\\u00e2\\u0082\"");
	/* overlong encoding of '/' and a UTF-16 surrogate are rejected */
	ASSERT_STREQ(esc_json(&b, "\xc0\xaf", 2), "\"\\u00c0\\u00af\"");
	ASSERT_STREQ(esc_json(&b, "\xed\xa0\x80", 3), "\"\\u00ed\\u00a0\\u0080\"");
	ASSERT_STREQ(esc_json(&b, "a\0b", 3), "\"a\\u0000b\"");
	pmt_buf__free(&b);
}

TEST(buf_numbers)
{
	struct pmt_buf b = {0};

	pmt_buf__u64(&b, 0);
	pmt_buf__putc(&b, ' ');
	pmt_buf__u64(&b, UINT64_MAX);
	pmt_buf__putc(&b, ' ');
	pmt_buf__s64(&b, INT64_MIN);
	pmt_buf__putc(&b, ' ');
	pmt_buf__hex(&b, 0);
	pmt_buf__putc(&b, ' ');
	pmt_buf__hex(&b, 0xdeadbeefULL);
	pmt_buf__putc(&b, ' ');
	pmt_buf__u64w(&b, 42, 6);
	pmt_buf__putc(&b, '|');
	pmt_buf__hexw(&b, 0xffffffff81000000ULL, 16);
	pmt_buf__putc(&b, '|');
	pmt_buf__hexw(&b, 0x7f12ab, 16);
	pmt_buf__putc(&b, '|');
	pmt_buf__hexw(&b, 0, 4);
	pmt_buf__putc(&b, '|');
	ASSERT_STREQ(pmt_buf__cstr(&b),
		     "0 18446744073709551615 -9223372036854775808 0x0 0xdeadbeef "
		     "000042|ffffffff81000000|          7f12ab|   0|");
	pmt_buf__free(&b);
}

/* A sched_process_exec record: filename "/bin/t\x01 x" at offset 20. */
static void exec_record(unsigned char *rec, size_t len)
{
	uint32_t loc = (10u << 16) | 20;
	int32_t pid = 4242, old = 4242;

	memset(rec, 0, len);
	memcpy(rec + 8, &loc, 4);
	memcpy(rec + 12, &pid, 4);
	memcpy(rec + 16, &old, 4);
	memcpy(rec + 20, "/bin/t\x01 x", 10);
}

TEST(record_text_and_json)
{
	struct pmt_format *fmt = pmt_test__format("sched_process_exec.format");
	unsigned char rec[32];
	struct pmt_buf b = {0};
	struct pmt_record r = {
		.ts = 12345678901234ULL,
		.cpu = 1,
		.pid = 4242,
		.tid = 4243,
		.comm = "tr\"ue",
		.comm_len = 16,
		.event = "sched:sched_process_exec",
		.data = rec,
		.len = sizeof(rec),
	};

	ASSERT_TRUE(fmt);
	r.fmt = fmt;
	exec_record(rec, sizeof(rec));
	pmt_format_text(&b, &r);
	ASSERT_STREQ(pmt_buf__cstr(&b),
		     "        \"tr\\\"ue\" 4242/4243 [001] 12345.678901: sched:sched_process_exec: "
		     "filename=\"/bin/t\\x01 x\" pid=4242 old_pid=4242\n");
	b.len = 0;
	pmt_format_json(&b, &r);
	ASSERT_STREQ(
		pmt_buf__cstr(&b),
		"{\"ts\":12345678901234,\"cpu\":1,\"comm\":\"tr\\\"ue\",\"pid\":4242,\"tid\":4243,"
		"\"event\":\"sched:sched_process_exec\",\"fields\":{\"filename\":\"/bin/t\\u0001 x\","
		"\"pid\":4242,\"old_pid\":4242}}\n");
	pmt_buf__free(&b);
	pmt_format__free(fmt);
}

static const struct pmt_field *field_named(const struct pmt_format *f, const char *name)
{
	int i;

	for (i = 0; i < f->nr_fields; i++)
		if (!strcmp(f->fields[i].name, name))
			return &f->fields[i];
	return NULL;
}

/* --printf over the same record: its field (a __data_loc string, an
 * integer), the header's, a number slot (negative, as %d, %lu, and %u
 * and %hhd, which keep 32 and 8 bits, as C's printf does), a
 * string slot (cut at str()'s length; a faulted read empty) and
 * bpftrace's JSON shape. */
static const char *probe_255(const void *ctx, uint32_t id, char *buf, size_t len)
{
	(void)ctx;
	if (id != 255)
		return NULL;
	snprintf(buf, len, "uprobe:/x:SSL_read");
	return buf;
}

TEST(record_printf)
{
	struct pmt_format *fmt = pmt_test__format("sched_process_exec.format");
	unsigned char rec[32];
	char strs[2 * PMT_STREAM_STR_LEN] = "/etc/hostname-and-more";
	uint64_t vals[2] = {(uint64_t)-5, 255};
	struct pmt_buf b = {0};
	struct pmt_print p = {.str_max = 13, .start_ns = 12345000000000ULL};
	struct pmt_record r = {
		.ts = 12345678901234ULL,
		.cpu = 1,
		.pid = 4242,
		.tid = 4243,
		.comm = "true",
		.comm_len = 16,
		.event = "sched:sched_process_exec",
		.data = rec,
		.len = sizeof(rec),
		.strs = strs,
		.nstrs = 2,
		.vals = (const char *)vals,
		.nvals = 2,
		.print = &p,
	};
	const struct pmt_field *fname, *fpid;
	char why[256];

	ASSERT_TRUE(fmt);
	fname = field_named(fmt, "filename");
	fpid = field_named(fmt, "pid");
	ASSERT_TRUE(fname && fpid);
	r.fmt = fmt;
	exec_record(rec, sizeof(rec));
	strs[PMT_STREAM_STR_LEN + 1] = 1; /* slot 1: a read that faulted */
	p.fmt = "%-6d|%s|%d %lu %u %hhd|%04x|%s|%s|%-5s|%d %d %llu%%\n";
	p.len = strlen(p.fmt);
	p.args[0] = (struct pmt_print_arg){.kind = PMT_PARG_PID};
	p.args[1] = (struct pmt_print_arg){.kind = PMT_PARG_FIELD, .str = true, .field = fname};
	p.args[2] = (struct pmt_print_arg){.kind = PMT_PARG_NUM, .slot = 0};
	p.args[3] = (struct pmt_print_arg){.kind = PMT_PARG_NUM, .slot = 0};
	p.args[4] = (struct pmt_print_arg){.kind = PMT_PARG_NUM, .slot = 0};
	p.args[5] = (struct pmt_print_arg){.kind = PMT_PARG_NUM, .slot = 1};
	p.args[6] = (struct pmt_print_arg){.kind = PMT_PARG_NUM, .slot = 1};
	p.args[7] = (struct pmt_print_arg){.kind = PMT_PARG_STR, .slot = 0};
	p.args[8] = (struct pmt_print_arg){.kind = PMT_PARG_STR, .slot = 1};
	p.args[9] = (struct pmt_print_arg){.kind = PMT_PARG_COMM};
	p.args[10] = (struct pmt_print_arg){.kind = PMT_PARG_FIELD, .field = fpid};
	p.args[11] = (struct pmt_print_arg){.kind = PMT_PARG_TID};
	p.args[12] = (struct pmt_print_arg){.kind = PMT_PARG_ELAPSED};
	p.nargs = 13;
	ASSERT_EQ(pmt_print__check(&p, why, sizeof(why)), 0);
	pmt_format_text(&b, &r);
	ASSERT_STREQ(pmt_buf__cstr(&b),
		     "4242  |/bin/t\x01 x|-5 18446744073709551611 4294967291 -1|00ff|"
		     "/etc/hostname||true |4242 4243 678901234%\n");
	b.len = 0;
	pmt_format_json(&b, &r);
	ASSERT_STREQ(pmt_buf__cstr(&b),
		     "{\"type\":\"printf\",\"data\":\"4242  |/bin/t\\u0001 "
		     "x|-5 18446744073709551611 4294967291 -1|00ff|/etc/hostname||true |4242 4243 "
		     "678901234%\\n\"}\n");
	/* a conversion and its argument disagree; one too many */
	p.args[0] = (struct pmt_print_arg){.kind = PMT_PARG_COMM};
	ASSERT_EQ(pmt_print__check(&p, why, sizeof(why)), -EINVAL);
	ASSERT_STREQ(why, "argument 1 is a string, its conversion %d a number's");
	p.args[0] = (struct pmt_print_arg){.kind = PMT_PARG_PID};
	p.nargs = 14;
	ASSERT_EQ(pmt_print__check(&p, why, sizeof(why)), -EINVAL);
	ASSERT_STREQ(why, "14 arguments, but the format has 13 conversions");
	/* strftime(FORMAT, nsecs): the record's time on the wall clock
	 * (1,700,000,000 s: in 2023, in any time zone) */
	p.fmt = "%s|%-6s|\n";
	p.len = strlen(p.fmt);
	p.wall_ns = 1700000000000000000LL - (int64_t)r.ts;
	p.args[0] = (struct pmt_print_arg){.kind = PMT_PARG_TIME, .tfmt = "%Y"};
	p.args[1] = (struct pmt_print_arg){.kind = PMT_PARG_TIME, .tfmt = "%y"};
	p.nargs = 2;
	ASSERT_EQ(pmt_print__check(&p, why, sizeof(why)), 0);
	b.len = 0;
	pmt_format_text(&b, &r);
	ASSERT_STREQ(pmt_buf__cstr(&b), "2023|23    |\n");
	/* a program's table of strings, by the number slot's value: slot 1
	 * holds 255, slot 0 -5 (none: "") */
	{
		static const int64_t keys[] = {-1, 255};
		static char *const strs[] = {"minus", "ff"};

		p.fmt = "%s|%-4s|%.1s|\n";
		p.len = strlen(p.fmt);
		p.args[0] = (struct pmt_print_arg){
			.kind = PMT_PARG_TABLE, .slot = 1, .tkeys = keys, .tstrs = strs, .tn = 2};
		p.args[1] = p.args[0];
		p.args[1].slot = 0;
		p.args[2] = p.args[0];
		p.nargs = 3;
		ASSERT_EQ(pmt_print__check(&p, why, sizeof(why)), 0);
		b.len = 0;
		pmt_format_text(&b, &r);
		ASSERT_STREQ(pmt_buf__cstr(&b), "ff|    |f|\n");
		/* three printf calls, the first two under conditions (slots 1
		 * and 0: 255 and -5, both non-zero, then slot 0 as 0) */
		p.fmt = "a%d|b%s|c\n";
		p.len = strlen(p.fmt);
		p.args[0] = (struct pmt_print_arg){.kind = PMT_PARG_PID};
		p.args[1] = p.args[2]; /* the table, by slot 1 */
		p.nargs = 2;
		p.segs[0] = (struct pmt_print_seg){.fmt_end = 3, .args_end = 1, .guard = 2};
		p.segs[1] = (struct pmt_print_seg){.fmt_end = 7, .args_end = 2, .guard = 1};
		p.segs[2] = (struct pmt_print_seg){.fmt_end = p.len, .args_end = 2};
		p.nsegs = 3;
		ASSERT_EQ(pmt_print__check(&p, why, sizeof(why)), 0);
		b.len = 0;
		pmt_format_text(&b, &r);
		ASSERT_STREQ(pmt_buf__cstr(&b), "a4242|bff|c\n");
		vals[0] = 0;
		b.len = 0;
		pmt_format_text(&b, &r);
		ASSERT_STREQ(pmt_buf__cstr(&b), "a4242|c\n");
		p.nsegs = 0;
	}
	/* usym(), ksym() of a number slot: strings; with no symbolizer the
	 * address in hex, as bpftrace shows one no symbol holds */
	p.fmt = "%s|%-8s|\n";
	p.len = strlen(p.fmt);
	p.args[0] = (struct pmt_print_arg){.kind = PMT_PARG_USYM, .slot = 1};
	p.args[1] = (struct pmt_print_arg){.kind = PMT_PARG_KSYM, .slot = 1};
	p.nargs = 2;
	ASSERT_EQ(pmt_print__check(&p, why, sizeof(why)), 0);
	ASSERT_TRUE(pmt_print__names(&p, true) && pmt_print__names(&p, false));
	b.len = 0;
	pmt_format_text(&b, &r);
	ASSERT_STREQ(pmt_buf__cstr(&b), "0xff|0xff    |\n");
	/* a saved probe's number (slot 1: 255; slot 0: -5, no such probe)
	 * as its name and its function */
	p.fmt = "%s|%s|%s|\n";
	p.len = strlen(p.fmt);
	p.probe_name = probe_255;
	p.args[0] = (struct pmt_print_arg){.kind = PMT_PARG_PROBE_OF, .slot = 1};
	p.args[1] = (struct pmt_print_arg){.kind = PMT_PARG_FUNC_OF, .slot = 1};
	p.args[2] = (struct pmt_print_arg){.kind = PMT_PARG_FUNC_OF, .slot = 0};
	p.nargs = 3;
	ASSERT_EQ(pmt_print__check(&p, why, sizeof(why)), 0);
	b.len = 0;
	pmt_format_text(&b, &r);
	ASSERT_STREQ(pmt_buf__cstr(&b), "uprobe:/x:SSL_read|SSL_read||\n");
	/* ntop(): slot 1's 4 bytes (255, little-endian: as the kernel keeps
	 * an address), string slot 0's 16; a literal; a choice (a $variable
	 * given a string inside an if): slot 1 (255) holds, slot 2 (none in
	 * the record) does not, so its alternative (past nargs) shows */
	p.fmt = "%s|%s|%s|%s|%s|\n";
	p.len = strlen(p.fmt);
	p.args[0] = (struct pmt_print_arg){.kind = PMT_PARG_NTOP4, .slot = 1};
	p.args[1] = (struct pmt_print_arg){.kind = PMT_PARG_NTOP6, .slot = 0};
	p.args[2] = (struct pmt_print_arg){.kind = PMT_PARG_LIT, .tfmt = "lit"};
	p.args[3] =
		(struct pmt_print_arg){.kind = PMT_PARG_LIT, .tfmt = "yes", .when = 2, .alt = 6};
	p.args[4] =
		(struct pmt_print_arg){.kind = PMT_PARG_LIT, .tfmt = "yes", .when = 3, .alt = 6};
	p.args[5] = (struct pmt_print_arg){.kind = PMT_PARG_COMM};
	p.nargs = 5;
	p.nall = 6;
	ASSERT_EQ(pmt_print__check(&p, why, sizeof(why)), 0);
	b.len = 0;
	pmt_format_text(&b, &r);
	ASSERT_STREQ(pmt_buf__cstr(&b),
		     "255.0.0.0|2f65:7463:2f68:6f73:746e:616d:652d:616e|lit|yes|true|\n");
	p.args[2].tfmt = p.args[3].tfmt = p.args[4].tfmt = NULL; /* not the print's to free */
	p.nall = 0;
	{
		/* cat("FILE"): the file's text when printed, each time; a
		 * file that cannot be read prints nothing */
		char path[] = "/tmp/pmt_cat_XXXXXX";
		int fd = mkstemp(path);
		FILE *f;

		ASSERT_TRUE(fd >= 0);
		ASSERT_TRUE((f = fdopen(fd, "w")) != NULL);
		fputs("0.50 0.40 1/83 42\n", f);
		fclose(f);
		p.fmt = "<%s>%s|\n";
		p.len = strlen(p.fmt);
		p.args[0] = (struct pmt_print_arg){.kind = PMT_PARG_CAT, .tfmt = path};
		p.args[1] = (struct pmt_print_arg){.kind = PMT_PARG_CAT, .tfmt = "/nonexistent"};
		p.nargs = 2;
		ASSERT_EQ(pmt_print__check(&p, why, sizeof(why)), 0);
		b.len = 0;
		pmt_format_text(&b, &r);
		ASSERT_STREQ(pmt_buf__cstr(&b), "<0.50 0.40 1/83 42\n>|\n");
		ASSERT_TRUE((f = fopen(path, "w")) != NULL);
		fputs("again", f);
		fclose(f);
		b.len = 0;
		pmt_format_text(&b, &r);
		ASSERT_STREQ(pmt_buf__cstr(&b), "<again>|\n");
		unlink(path);
		p.args[0].tfmt = p.args[1].tfmt = NULL; /* not the print's to free */
	}
	p.fmt = NULL; /* not the test's to free */
	p.nargs = 0;
	pmt_buf__free(&b);
	pmt_format__free(fmt);
}

/* A pipe nobody reads: once stopped, a flush gives up after the grace
 * period and counts the records it could not write; those written are
 * whole lines up to where the pipe filled. */
TEST(blocked_pipe_drops_and_counts)
{
	static volatile sig_atomic_t stop = 1;
	struct pmt_record r = {.comm = "t", .comm_len = 1, .event = "x:y"};
	struct pmt_output o;
	struct pmt_error err = {0};
	char path[64], *buf = malloc(1 << 20);
	int p[2], i, n = 20000;
	ssize_t got;

	ASSERT_TRUE(buf && !pipe(p));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p[1]);
	ASSERT_EQ(pmt_output__open(&o, path, PMT_OUT_TEXT, &err), 0);
	ASSERT_TRUE(o.wfd >= 0);
	pmt_output__interruptible(&o, &stop, NULL);
	for (i = 0; i < n; i++)
		pmt_output__record(&o, &r);
	ASSERT_EQ(pmt_output__flush(&o), 0);
	ASSERT_EQ(o.buf.len, 0);
	ASSERT_TRUE(o.unwritten > 0 && o.unwritten < (uint64_t)n);
	ASSERT_EQ(pmt_output__close(&o, &err), 0); /* a reader gone is no failure */
	close(p[1]);
	got = read(p[0], buf, 1 << 20);
	/* what was written and what was dropped add up to every record */
	for (i = 0; got > 0 && i < got; i++)
		if (buf[i] == '\n')
			n--;
	ASSERT_TRUE((uint64_t)n == o.unwritten || (uint64_t)n + 1 == o.unwritten);
	close(p[0]);
	free(buf);
}

/* A write that fails is told when the output closes, naming the file. */
TEST(output_write_failure_told)
{
	struct pmt_record r = {.comm = "t", .comm_len = 1, .event = "x:y"};
	struct pmt_error err = {0};
	struct pmt_output o;

	ASSERT_EQ(pmt_output__open(&o, "/dev/full", PMT_OUT_TEXT, &err), 0);
	pmt_output__record(&o, &r);
	ASSERT_EQ(pmt_output__close(&o, &err), -ENOSPC);
	ASSERT_STREQ(err.msg, "writing to /dev/full failed: No space left on device");
}
