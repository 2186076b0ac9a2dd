// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The languages' one lexer (filter/lex.h): every token any of them has,
 * read the same for each, and a copy that reads ahead and says nothing. */
#include <string.h>
#include "filter/lex.h"
#include "test.h"

/* The tokens of src, each as its text (a number also as its value)
 * between spaces; a bad one as "!" and the message. */
static const char *tokens(struct pmt_buf *b, const char *src, unsigned flags)
{
	struct pmt_error err = {0};
	struct pmt_lexer lx;

	b->len = 0;
	pmt_lex__init(&lx, src, "--x", flags, &err);
	while (!pmt_lex__next(&lx) && lx.tok.kind != PMT_TOK_END) {
		pmt_buf__printf(b, "%s%.*s", b->len ? " " : "", lx.tok.len, src + lx.tok.pos);
		if (lx.tok.kind == PMT_TOK_INT)
			pmt_buf__printf(b, "=%llu%s", (unsigned long long)lx.tok.num,
					lx.tok.hex ? "h" : "");
	}
	if (lx.failed)
		pmt_buf__printf(b, " ! %s", err.msg);
	return pmt_buf__cstr(b);
}

TEST(lexer_tokens)
{
	struct pmt_buf b = {0};

	/* two-character operators first, then one; names with str(NAME) */
	ASSERT_STREQ(tokens(&b, "a->b<<2>=c!=!d&&e||f|g&h", 0),
		     "a -> b << 2=2 >= c != ! d && e || f | g & h");
	ASSERT_STREQ(tokens(&b, "str(path) str(a->b) str()", 0),
		     "str(path) str ( a -> b ) str ( )");
	ASSERT_STREQ(tokens(&b, "comm == \"a\\\"b\" \n\t 0x10 010 4k", PMT_LEX_SIZES),
		     "comm == \"a\\\"b\" 0x10=16h 010=8h 4k=4096");
	/* a size suffix is the filter's only */
	ASSERT_STREQ(tokens(&b, "4k", 0), " ! --x: bad number: expected digits or 0x hex");
	ASSERT_STREQ(
		tokens(&b, "18446744073709551615 18446744073709551616", 0),
		"18446744073709551615=18446744073709551615 ! --x: number too large for 64 bits");
	ASSERT_STREQ(tokens(&b, "16G 17179869184G", PMT_LEX_SIZES),
		     "16G=17179869184 ! --x: number too large for 64 bits");
	/* bpftrace's scientific integers */
	ASSERT_STREQ(
		tokens(&b, "1e6 2E3 1e19 1e20", 0),
		"1e6=1000000 2E3=2000 1e19=10000000000000000000 ! --x: number too large for 64 "
		"bits");
	ASSERT_STREQ(tokens(&b, "a 'b'", 0), "a ! --x: strings take double quotes: \"...\"");
	ASSERT_STREQ(tokens(&b, "a `", 0), "a ! --x: unexpected character '`'");
	ASSERT_STREQ(
		tokens(&b, "\"\\q\"", 0),
		" ! --x: unknown escape '\\q'; known: \\n \\t \\r \\0 \\\\ \\\" \\xNN \\* \\? \\[ \\]");
	pmt_buf__free(&b);
}

TEST(lexer_strings_and_lookahead)
{
	struct pmt_error err = {0};
	struct pmt_buf b = {0};
	struct pmt_lexer lx, copy;

	pmt_lex__init(&lx, "\"a\\x41\\n\\*\" x \"bad\\", "--x", 0, &err);
	ASSERT_EQ(pmt_lex__next(&lx), 0);
	ASSERT_EQ(lx.tok.kind, PMT_TOK_STR);
	pmt_lex__string(&lx, &lx.tok, &b);
	/* decoded, the glob escape kept for the glob parser */
	ASSERT_EQ(b.len, 5);
	ASSERT_TRUE(!memcmp(b.p, "aA\n\\*", 5));
	/* a copy with no error reads ahead: the original stays, and the
	 * copy's bad token is not reported */
	copy = lx;
	copy.err = NULL;
	ASSERT_EQ(pmt_lex__next(&copy), 0);
	ASSERT_EQ(copy.tok.kind, PMT_TOK_NAME);
	ASSERT_TRUE(pmt_lex__next(&copy) < 0);
	ASSERT_TRUE(!pmt_error__set(&err));
	ASSERT_EQ(lx.tok.kind, PMT_TOK_STR);
	/* skipping to a place reads on from there */
	pmt_lex__skip_to(&lx, 11);
	ASSERT_EQ(pmt_lex__next(&lx), 0);
	ASSERT_EQ(lx.tok.pos, 12);
	ASSERT_EQ(lx.tok.kind, PMT_TOK_NAME);
	ASSERT_TRUE(pmt_lex__next(&lx) < 0);
	ASSERT_STREQ(err.msg, "--x: unterminated string: a closing \" is missing");
	/* the first error stands */
	ASSERT_TRUE(pmt_lex__error(&lx, 0, 1, "later") < 0);
	ASSERT_STREQ(err.msg, "--x: unterminated string: a closing \" is missing");
	pmt_buf__free(&b);
}
