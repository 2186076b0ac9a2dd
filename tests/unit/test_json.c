// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The JSON writer (util/json.h): commas, nesting, escaping, every value
 * type; what it writes must parse, whatever the bytes. */
#include <math.h>
#include <stdlib.h>
#include "util/json.h"
#include "test.h"

TEST(json_writer_nesting_and_values)
{
	struct pmt_buf b = {0};
	struct pmt_json j;

	pmt_json__init(&j, &b);
	pmt_json__object(&j);
	pmt_json__field_u64(&j, "u", UINT64_MAX);
	pmt_json__field_s64(&j, "s", INT64_MIN);
	pmt_json__field_bool(&j, "t", true);
	pmt_json__key(&j, "n");
	pmt_json__null(&j);
	pmt_json__key(&j, "d");
	pmt_json__double(&j, 0.5);
	pmt_json__key(&j, "nan");
	pmt_json__double(&j, NAN);
	pmt_json__key(&j, "h");
	pmt_json__hex(&j, 0xffffffff81000000ull);
	pmt_json__key(&j, "a");
	pmt_json__array(&j);
	pmt_json__u64(&j, 1);
	pmt_json__array(&j);
	pmt_json__end(&j); /* an empty array */
	pmt_json__object(&j);
	pmt_json__end(&j); /* an empty object */
	pmt_json__str(&j, "x");
	pmt_json__end(&j);
	pmt_json__key(&j, "o");
	pmt_json__object(&j);
	pmt_json__field_str(&j, "k", "v");
	pmt_json__end(&j);
	pmt_json__end(&j);
	ASSERT_STREQ(pmt_buf__cstr(&b),
		     "{\"u\":18446744073709551615,\"s\":-9223372036854775808,\"t\":true,"
		     "\"n\":null,\"d\":0.5,\"nan\":null,\"h\":\"0xffffffff81000000\","
		     "\"a\":[1,[],{},\"x\"],\"o\":{\"k\":\"v\"}}");
	ASSERT_EQ(j.depth, 0);

	/* one top-level value after another (JSON lines): no comma between */
	b.len = 0;
	pmt_json__init(&j, &b);
	pmt_json__object(&j);
	pmt_json__end(&j);
	pmt_json__end(&j); /* one end too many: ignored */
	ASSERT_STREQ(pmt_buf__cstr(&b), "{}");
	/* a key left without a value gets null, so the object stays whole */
	b.len = 0;
	pmt_json__init(&j, &b);
	pmt_json__object(&j);
	pmt_json__key(&j, "k");
	pmt_json__end(&j);
	ASSERT_STREQ(pmt_buf__cstr(&b), "{\"k\":null}");
	pmt_buf__free(&b);
}

TEST(json_writer_escapes_keys_and_strings)
{
	struct pmt_buf b = {0};
	struct pmt_json j;
	const char raw[] = {'a', '"', '\\', '\n', '\t', 0x01, (char)0xff, 'z', 0, 'q'};

	pmt_json__init(&j, &b);
	pmt_json__object(&j);
	pmt_json__field_strn(&j, "we\"ird\nkey", raw, sizeof(raw));
	pmt_json__field_str(&j, "utf8", "\xc3\xa9t\xc3\xa9");
	pmt_json__end(&j);
	ASSERT_STREQ(pmt_buf__cstr(&b), "{\"we\\\"ird\\nkey\":\"a\\\"\\\\\\n\\t\\u0001\\u00ffz"
					"\\u0000q\",\"utf8\":\"\xc3\xa9t\xc3\xa9\"}");
	pmt_buf__free(&b);
}
