// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The languages' one lexer (lex.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "filter/lex.h"

void pmt_lex__init(struct pmt_lexer *lx, const char *src, const char *what, unsigned flags,
		   struct pmt_error *err)
{
	*lx = (struct pmt_lexer){.src = src, .what = what, .flags = flags, .err = err};
}

int pmt_lex__error(struct pmt_lexer *lx, int pos, int len, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	if (lx->failed)
		return -EINVAL;
	lx->failed = true;
	if (!lx->err)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pmt_error__usage(lx->err, "%s: %s", lx->what, msg);
	pmt_error__caret(lx->err, lx->src, pos, len);
	return -EINVAL;
}

bool pmt_lex__name_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       (!first && c >= '0' && c <= '9');
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The string opening at start: its decoded bytes into out (NULL: only
 * checked); the index of its closing quote, or -EINVAL (reported). */
static int string_at(struct pmt_lexer *lx, int start, struct pmt_buf *out)
{
	const char *s = lx->src;
	int i = start + 1, h1, h2;
	char c;

	for (; (c = s[i]) != '"'; i++) {
		if (!c || (c == '\\' && !s[i + 1]))
			return pmt_lex__error(lx, start, (int)strlen(s + start),
					      "unterminated string: a closing \" is missing");
		if (c != '\\') {
			if (out)
				pmt_buf__putc(out, c);
			continue;
		}
		switch (s[i + 1]) {
		case 'n': c = '\n'; break;
		case 't': c = '\t'; break;
		case 'r': c = '\r'; break;
		case '0': c = '\0'; break;
		case '\\': c = '\\'; break;
		case '"': c = '"'; break;
		/* glob metacharacters stay escaped for the glob parser */
		case '*':
		case '?':
		case '[':
		case ']':
			if (out)
				pmt_buf__putc(out, '\\');
			c = s[i + 1];
			break;
		case 'x':
			h1 = hexval(s[i + 2]);
			h2 = h1 >= 0 ? hexval(s[i + 3]) : -1;
			if (h2 < 0)
				return pmt_lex__error(lx, i, 2,
						      "bad escape: \\x needs two hex digits");
			c = (char)(h1 * 16 + h2);
			i += 2;
			break;
		default:
			return pmt_lex__error(
				lx, i, 2,
				"unknown escape '\\%c'; known: \\n \\t \\r \\0 \\\\ \\\" \\xNN \\* \\? \\[ \\]",
				s[i + 1] ? s[i + 1] : ' ');
		}
		i++;
		if (out)
			pmt_buf__putc(out, c);
	}
	return i;
}

void pmt_lex__string(const struct pmt_lexer *lx, const struct pmt_tok *t, struct pmt_buf *out)
{
	struct pmt_lexer quiet = *lx;

	quiet.err = NULL;
	string_at(&quiet, t->pos, out);
}

static int number_at(struct pmt_lexer *lx, int start)
{
	const char *s = lx->src;
	struct pmt_tok *t = &lx->tok;
	unsigned long long v;
	uint64_t mul = 1;
	char *end;

	errno = 0;
	v = strtoull(s + start, &end, 0);
	if (errno == ERANGE)
		return pmt_lex__error(lx, start, (int)(end - s) - start,
				      "number too large for 64 bits");
	t->hex = s[start] == '0' && end - s > start + 1;
	if (lx->flags & PMT_LEX_SIZES) {
		switch (*end) {
		case 'k':
		case 'K': mul = 1ULL << 10; break;
		case 'm':
		case 'M': mul = 1ULL << 20; break;
		case 'g':
		case 'G': mul = 1ULL << 30; break;
		}
		end += mul > 1;
	}
	/* bpftrace's integers in scientific notation: 1e6 */
	if (!t->hex && mul == 1 && (*end == 'e' || *end == 'E') && end[1] >= '0' && end[1] <= '9') {
		unsigned long e = strtoul(end + 1, &end, 10);

		for (; e && mul <= UINT64_MAX / 10; e--)
			mul *= 10;
		if (e)
			return pmt_lex__error(lx, start, (int)(end - s) - start,
					      "number too large for 64 bits");
	}
	if (pmt_lex__name_char(*end, false))
		return pmt_lex__error(
			lx, start, (int)(end - s) - start + 1,
			lx->flags & PMT_LEX_SIZES
				? "bad number: expected digits, 0x hex, or a k/M/G suffix"
				: "bad number: expected digits or 0x hex");
	if (mul > 1 && v > UINT64_MAX / mul)
		return pmt_lex__error(lx, start, (int)(end - s) - start,
				      "number too large for 64 bits");
	t->kind = PMT_TOK_INT;
	t->num = v * mul;
	t->len = (int)(end - s) - start;
	return 0;
}

/* A name; str(NAME) is one name (a string operand of its own). */
static void name_at(struct pmt_lexer *lx, int start)
{
	const char *s = lx->src;
	int j = start, k;

	while (pmt_lex__name_char(s[j], false))
		j++;
	if (j - start == 3 && !strncmp(s + start, "str", 3) && s[j] == '(' &&
	    pmt_lex__name_char(s[j + 1], true)) {
		for (k = j + 1; pmt_lex__name_char(s[k], false); k++)
			;
		if (s[k] == ')')
			j = k + 1;
	}
	lx->tok.kind = PMT_TOK_NAME;
	lx->tok.len = j - start;
}

void pmt_lex__skip_to(struct pmt_lexer *lx, int pos)
{
	lx->tok.pos = pos;
	lx->tok.len = 0;
}

int pmt_lex__next(struct pmt_lexer *lx)
{
	static const struct {
		char text[3];
		int kind;
	} two[] = {
		{"<<", PMT_TOK_SHL},  {">>", PMT_TOK_SHR}, {"<=", PMT_TOK_LE},
		{">=", PMT_TOK_GE},   {"==", PMT_TOK_EQ},  {"!=", PMT_TOK_NE},
		{"&&", PMT_TOK_LAND}, {"||", PMT_TOK_LOR}, {"->", PMT_TOK_ARROW},
	};
	const char *s = lx->src;
	int i = lx->tok.pos + lx->tok.len, r;
	size_t k;

	while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')
		i++;
	lx->tok = (struct pmt_tok){.pos = i, .len = 1};
	if (!s[i]) {
		lx->tok.kind = PMT_TOK_END;
		lx->tok.len = 0;
		return 0;
	}
	for (k = 0; k < sizeof(two) / sizeof(two[0]); k++) {
		if (s[i] == two[k].text[0] && s[i + 1] == two[k].text[1]) {
			lx->tok.kind = two[k].kind;
			lx->tok.len = 2;
			return 0;
		}
	}
	if (strchr("+-*/%&|^~!<>().[]={};,@$:?", s[i])) {
		lx->tok.kind = (unsigned char)s[i];
		return 0;
	}
	if (s[i] == '"') {
		r = string_at(lx, i, NULL);
		if (r < 0)
			return r;
		lx->tok.kind = PMT_TOK_STR;
		lx->tok.len = r + 1 - i;
		return 0;
	}
	if (s[i] >= '0' && s[i] <= '9')
		return number_at(lx, i);
	if (pmt_lex__name_char(s[i], true)) {
		name_at(lx, i);
		return 0;
	}
	if (s[i] == '\'')
		return pmt_lex__error(lx, i, 1, "strings take double quotes: \"...\"");
	return pmt_lex__error(lx, i, 1, "unexpected character '%c'", s[i]);
}
