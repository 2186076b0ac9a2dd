// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include "util/error.h"
#include "tracefs/format.h"
#include "tracefs/render.h"
#include "test.h"

/* a fresh error value for each call (the first error set wins) */
#define TERR(e) (pmt_error__clear(&(e)), &(e))

TEST(format_sched_switch)
{
	struct pmt_format *fmt = pmt_test__format("sched_switch.format");
	const struct pmt_field *f;

	ASSERT_TRUE(fmt);
	ASSERT_STREQ(fmt->name, "sched_switch");
	ASSERT_EQ(fmt->id, 372);
	ASSERT_EQ(fmt->nr_fields, 11);
	ASSERT_EQ(fmt->fixed_size, 64);
	f = pmt_format__field(fmt, "prev_comm");
	ASSERT_TRUE(f);
	ASSERT_EQ(f->kind, PMT_F_STR);
	ASSERT_EQ(f->offset, 8);
	ASSERT_EQ(f->size, 16);
	ASSERT_STREQ(f->type, "char[16]");
	f = pmt_format__field(fmt, "prev_state");
	ASSERT_EQ(f->kind, PMT_F_INT);
	ASSERT_EQ(f->size, 8);
	ASSERT_TRUE(f->is_signed);
	f = pmt_format__field(fmt, "common_pid");
	ASSERT_TRUE(f->is_common);
	ASSERT_STREQ(f->type, "int");
	ASSERT_TRUE(!pmt_format__field(fmt, "nope"));
	pmt_format__free(fmt);
}

TEST(format_data_loc)
{
	struct pmt_format *fmt = pmt_test__format("sched_process_exec.format");
	const struct pmt_field *f;

	ASSERT_TRUE(fmt);
	f = pmt_format__field(fmt, "filename");
	ASSERT_TRUE(f);
	ASSERT_EQ(f->kind, PMT_F_DSTR);
	ASSERT_EQ(f->offset, 8);
	ASSERT_EQ(f->size, 4);
	ASSERT_STREQ(f->type, "__data_loc char[]");
	ASSERT_EQ(fmt->fixed_size, 20);
	pmt_format__free(fmt);
}

TEST(format_syscall_pointer)
{
	struct pmt_format *fmt = pmt_test__format("sys_enter_openat.format");
	const struct pmt_field *f;

	ASSERT_TRUE(fmt);
	f = pmt_format__field(fmt, "filename");
	ASSERT_EQ(f->kind, PMT_F_PTR);
	ASSERT_STREQ(f->type, "const char *");
	f = pmt_format__field(fmt, "dfd");
	/* "int" declared with size 8: the size wins */
	ASSERT_EQ(f->kind, PMT_F_INT);
	ASSERT_EQ(f->size, 8);
	ASSERT_EQ(fmt->fixed_size, 48);
	pmt_format__free(fmt);
}

static const char synthetic[] =
	"name: synth\n"
	"ID: 7\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:s8 small;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield:u16 half;\toffset:10;\tsize:2;\tsigned:0;\n"
	"\tfield:__u8 mac[6];\toffset:12;\tsize:6;\tsigned:0;\n"
	"\tfield:int vals[2];\toffset:20;\tsize:8;\tsigned:1;\n"
	"\tfield:__data_loc u64[] addrs;\toffset:28;\tsize:4;\tsigned:0;\n"
	"\tfield:__rel_loc char[] rel;\toffset:32;\tsize:4;\tsigned:0;\n"
	"\n"
	"print fmt: \"\"\n";

TEST(format_kinds_and_values)
{
	struct pmt_format *fmt = NULL;
	unsigned char rec[80] = {0};
	struct pmt_value v;
	struct pmt_error terr = {0};
	uint32_t loc;
	uint64_t a[2] = {0x1122334455667788ULL, 7};
	int32_t vals[2] = {-5, 6};

	ASSERT_EQ(pmt_format__parse(synthetic, "test", &fmt, TERR(terr)), 0);
	ASSERT_EQ(fmt->nr_fields, 8);
	rec[8] = 0xfe;			/* small = -2 */
	rec[10] = 0x34, rec[11] = 0x12; /* half = 0x1234 */
	memcpy(rec + 12, "\x01\x02\x03\x04\x05\x06", 6);
	memcpy(rec + 20, vals, 8);
	loc = (16u << 16) | 40; /* 16 bytes at offset 40 */
	memcpy(rec + 28, &loc, 4);
	memcpy(rec + 40, a, 16);
	loc = (3u << 16) | 20; /* rel: 32 + 4 + 20 = 56 */
	memcpy(rec + 32, &loc, 4);
	memcpy(rec + 56, "hi", 3);

	pmt_field__value(pmt_format__field(fmt, "small"), rec, sizeof(rec), &v);
	ASSERT_EQ(v.kind, PMT_V_S64);
	ASSERT_EQ(v.s, -2);
	pmt_field__value(pmt_format__field(fmt, "half"), rec, sizeof(rec), &v);
	ASSERT_EQ(v.kind, PMT_V_U64);
	ASSERT_EQ(v.u, 0x1234);
	pmt_field__value(pmt_format__field(fmt, "mac"), rec, sizeof(rec), &v);
	ASSERT_EQ(v.kind, PMT_V_ARRAY);
	ASSERT_EQ(v.len, 6);
	ASSERT_EQ(pmt_value__elem(&v, 5), 6);
	pmt_field__value(pmt_format__field(fmt, "vals"), rec, sizeof(rec), &v);
	ASSERT_EQ(v.len, 2);
	ASSERT_EQ((int64_t)pmt_value__elem(&v, 0), -5);
	pmt_field__value(pmt_format__field(fmt, "addrs"), rec, sizeof(rec), &v);
	ASSERT_EQ(v.kind, PMT_V_ARRAY);
	ASSERT_EQ(v.elem_size, 8);
	ASSERT_EQ(v.len, 2);
	ASSERT_EQ(pmt_value__elem(&v, 0), 0x1122334455667788ULL);
	pmt_field__value(pmt_format__field(fmt, "rel"), rec, sizeof(rec), &v);
	ASSERT_EQ(v.kind, PMT_V_STR);
	ASSERT_EQ(v.len, 2);
	ASSERT_TRUE(!memcmp(v.str, "hi", 2));
	/* a record cut short: no read past its end, marked truncated */
	pmt_field__value(pmt_format__field(fmt, "addrs"), rec, 48, &v);
	ASSERT_TRUE(v.truncated);
	ASSERT_EQ(v.len, 1);
	pmt_field__value(pmt_format__field(fmt, "half"), rec, 11, &v);
	ASSERT_TRUE(v.truncated);
	pmt_format__free(fmt);
}

#define COMMON "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n"

TEST(format_errors)
{
	struct pmt_format *fmt = NULL;
	struct pmt_error terr = {0};
	char *err = terr.msg;

	ASSERT_TRUE(
		pmt_format__parse(
			"name: x\nID: 1\nformat:\n\tfield:int a;\toffset:zz;\tsize:4;\tsigned:1;\n"
			"\nprint fmt: \"\"\n",
			"test", &fmt, TERR(terr)) < 0);
	ASSERT_STREQ(err, "x: malformed field table");
	ASSERT_TRUE(pmt_format__parse("nothing here\n", "test", &fmt, TERR(terr)) < 0);
	ASSERT_TRUE(err[0] != '\0');
	ASSERT_TRUE(pmt_format__parse("name: x\nID: 2\nformat:\n" COMMON
				      "\tfield:__data_loc char[] s;"
				      "\toffset:8;\tsize:8;\tsigned:0;\n\nprint fmt: \"\"\n",
				      "test", &fmt, TERR(terr)) < 0);
	ASSERT_STREQ(err, "s: dynamic field of size 8, expected 4");
	/* a print fmt libtraceevent cannot evaluate: fields, no rendering */
	ASSERT_EQ(pmt_format__parse("name: y\nID: 3\nformat:\n" COMMON "\tfield:int a;\toffset:8;"
				    "\tsize:4;\tsigned:1;\n\nprint fmt: \"%d\", (((\n",
				    "test", &fmt, TERR(terr)),
		  0);
	ASSERT_EQ(fmt->nr_fields, 2);
	ASSERT_TRUE(pmt_render__enable(fmt) < 0);
	pmt_format__free(fmt);
}
