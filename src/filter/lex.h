/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one lexer of pmtrace's languages: filters, expressions, and what
 * reads their text ahead. It knows every token any of them has; each
 * language takes the tokens it has and words the others itself.
 *
 * A token is its text's span in the source, and for a number its value:
 * a lexer is a small value, so a copy of one reads ahead and leaves the
 * original where it was. Strings stay text until asked for
 * (pmt_lex__string): the lexer has checked their escapes already.
 */
#ifndef PMT_LEX_H
#define PMT_LEX_H

#include <stdbool.h>
#include <stdint.h>
#include "util/error.h"
#include "util/strutil.h"

/* Kinds: a one-character operator or punctuation is its character ('('
 * '+' '~' '{' '@' ...); the rest are these. */
enum pmt_tok_kind {
	PMT_TOK_END = 256,
	PMT_TOK_INT,
	PMT_TOK_NAME, /* a name, or str(NAME) as one */
	PMT_TOK_STR,  /* "..." */
	/* two-character operators */
	PMT_TOK_SHL = 300, /* << */
	PMT_TOK_SHR,	   /* >> */
	PMT_TOK_LE,	   /* <= */
	PMT_TOK_GE,	   /* >= */
	PMT_TOK_EQ,	   /* == */
	PMT_TOK_NE,	   /* != */
	PMT_TOK_LAND,	   /* && */
	PMT_TOK_LOR,	   /* || */
	PMT_TOK_ARROW,	   /* -> */
};

struct pmt_tok {
	int kind; /* enum pmt_tok_kind or a character */
	int pos, len;
	uint64_t num; /* PMT_TOK_INT */
	bool hex;     /* PMT_TOK_INT written in hex or octal: C types it another way */
};

enum {
	PMT_LEX_SIZES = 1, /* numbers take a k, M or G suffix (powers of 1024) */
};

struct pmt_lexer {
	const char *src;
	const char *what;      /* the option whose text this is: "--filter" */
	struct pmt_error *err; /* NULL: a lookahead, which reports nothing */
	unsigned flags;	       /* PMT_LEX_* */
	struct pmt_tok tok;    /* the current token */
	bool failed;	       /* an error was reported: the first one stands */
};

/* A lexer over src before its first token (pmt_lex__next reads it). */
void pmt_lex__init(struct pmt_lexer *lx, const char *src, const char *what, unsigned flags,
		   struct pmt_error *err);
/* The token after the current one; -EINVAL (reported) on a bad one. */
int pmt_lex__next(struct pmt_lexer *lx);
/* Go on after [pos, pos + len): the next token read starts there. */
void pmt_lex__skip_to(struct pmt_lexer *lx, int pos);
/* Report "WHAT: MSG" with a caret under [pos, pos + len), once: the
 * first error of a text stands. Returns -EINVAL. */
int pmt_lex__error(struct pmt_lexer *lx, int pos, int len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The bytes a string token stands for, escapes decoded (glob escapes
 * \* \? \[ \] kept as written, for the glob parser). */
void pmt_lex__string(const struct pmt_lexer *lx, const struct pmt_tok *t, struct pmt_buf *out);
/* Is c a name's character (first: its first)? */
bool pmt_lex__name_char(char c, bool first);

#endif
