// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --web-config FILE: exporter-toolkit's web configuration, read with
 * libyaml's document loader (aliases are references, never copies). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "run/webconfig.h"
#include "util/error.h"
#include "util/log.h"

/* a certificate chain or key bigger than this is not one */
#define PEM_MAX (1 << 20)

struct ctx {
	yaml_document_t *d;
	const char *path, *dir;
	struct pmt_webcfg *c;
	struct pmt_error *e;
};

__attribute__((format(printf, 3, 4))) static int bad(struct ctx *x, const yaml_node_t *n,
						     const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return pmt_error__usage(x->e, "--web-config %s:%lu: %s", x->path,
				(unsigned long)(n ? n->start_mark.line + 1 : 1), msg);
}

static yaml_node_t *node(struct ctx *x, int id)
{
	return yaml_document_get_node(x->d, id);
}

static bool is_null(const yaml_node_t *n)
{
	const char *v;

	if (n->type != YAML_SCALAR_NODE)
		return false;
	if (n->tag && !strcmp((const char *)n->tag, YAML_NULL_TAG) &&
	    n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
		v = (const char *)n->data.scalar.value;
	else if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	else
		v = (const char *)n->data.scalar.value;
	return !*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
	       !strcmp(v, "NULL");
}

/* A scalar's text (the document's own), or NULL with the error set */
static const char *scalar(struct ctx *x, const yaml_node_t *n, const char *key)
{
	if (n->type != YAML_SCALAR_NODE) {
		bad(x, n, "%s: expected a string, not a %s", key,
		    n->type == YAML_MAPPING_NODE ? "mapping" : "list");
		return NULL;
	}
	if (strlen((const char *)n->data.scalar.value) != n->data.scalar.length) {
		bad(x, n, "%s: holds a NUL byte", key);
		return NULL;
	}
	return (const char *)n->data.scalar.value;
}

static int boolean(struct ctx *x, const yaml_node_t *n, const char *key, bool *out)
{
	const char *v = scalar(x, n, key);

	if (!v)
		return -EINVAL;
	if (!strcmp(v, "true") || !strcmp(v, "True") || !strcmp(v, "TRUE"))
		*out = true;
	else if (!strcmp(v, "false") || !strcmp(v, "False") || !strcmp(v, "FALSE"))
		*out = false;
	else
		return bad(x, n, "%s: '%s' is not true or false", key, v);
	return 0;
}

/* A mapping's pairs: each key a string, none twice. Calls fn(key, value). */
static int pairs(struct ctx *x, const yaml_node_t *map, const char *what,
		 int (*fn)(struct ctx *x, const yaml_node_t *k, const char *key,
			   const yaml_node_t *v))
{
	yaml_node_pair_t *p, *q;
	int r;

	if (map->type != YAML_MAPPING_NODE)
		return bad(x, map, "%s: expected a mapping (KEY: VALUE lines)", what);
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = node(x, p->key), *v = node(x, p->value);
		const char *key;

		if (!k || !v)
			return bad(x, map, "%s: a broken pair", what);
		if (!(key = scalar(x, k, what)))
			return -EINVAL;
		for (q = map->data.mapping.pairs.start; q < p; q++) {
			const yaml_node_t *k2 = node(x, q->key);

			if (k2 && k2->type == YAML_SCALAR_NODE &&
			    !strcmp((const char *)k2->data.scalar.value, key))
				return bad(x, k, "%s: '%s' is given twice", what, key);
		}
		if ((r = fn(x, k, key, v)))
			return r;
	}
	return 0;
}

/* Read the whole of name (relative to the config's directory) */
static int read_pem(struct ctx *x, const yaml_node_t *n, const char *key, const char *name,
		    char **out)
{
	char path[4096];
	const char *why;
	struct stat st;
	ssize_t got;
	char *buf;
	int fd;

	if (!*name)
		return bad(x, n, "%s: an empty file name", key);
	if (!x->dir) { /* names checked, files not read */
		*out = strdup("");
		return 0;
	}
	if (name[0] == '/' || !*x->dir)
		snprintf(path, sizeof(path), "%s", name);
	else
		snprintf(path, sizeof(path), "%s/%s", x->dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return bad(x, n, "%s '%s': %s", key, path, strerror(errno));
	why = fstat(fd, &st)	     ? strerror(errno)
	      : !S_ISREG(st.st_mode) ? "not a regular file"
	      : st.st_size > PEM_MAX ? "bigger than 1 MiB"
				     : NULL;
	if (why) {
		close(fd);
		return bad(x, n, "%s '%s': %s", key, path, why);
	}
	buf = malloc(st.st_size + 1);
	got = buf ? read(fd, buf, st.st_size) : -1;
	close(fd);
	if (got != st.st_size) {
		free(buf);
		return bad(x, n, "%s '%s': cannot read it", key, path);
	}
	buf[got] = 0;
	if (!strstr(buf, "-----BEGIN ")) {
		free(buf);
		return bad(x, n, "%s '%s': not PEM (no -----BEGIN line)", key, path);
	}
	*out = buf;
	return 0;
}

static int tls_version(struct ctx *x, const yaml_node_t *n, const char *key, int *out)
{
	static const char *const names[] = {"TLS10", "TLS11", "TLS12", "TLS13"};
	const char *v = scalar(x, n, key);
	int i;

	if (!v)
		return -EINVAL;
	for (i = 0; i < 4; i++)
		if (!strcmp(v, names[i])) {
			*out = i;
			return 0;
		}
	return bad(x, n, "%s: '%s' is not TLS10, TLS11, TLS12 or TLS13", key, v);
}

/* PEM given inline (KEY) or by file (KEY_file): one of them */
static int pem(struct ctx *x, const yaml_node_t *n, const char *key, bool file, char **slot)
{
	const char *v = scalar(x, n, key);

	if (!v)
		return -EINVAL;
	if (*slot) {
		int len = (int)(strlen(key) - (file ? 5 : 0));

		return bad(x, n, "%s: %.*s and %.*s_file are both given: keep one", key, len, key,
			   len, key);
	}
	if (file)
		return read_pem(x, n, key, v, slot);
	if (!strstr(v, "-----BEGIN "))
		return bad(x, n, "%s: not PEM (no -----BEGIN line)", key);
	*slot = strdup(v);
	return *slot ? 0 : -ENOMEM;
}

static int tls_key(struct ctx *x, const yaml_node_t *k, const char *key, const yaml_node_t *v)
{
	static const struct {
		const char *name, *user;
	} auths[] = {
		{"NoClientCert", NULL},
		{"VerifyClientCertIfGiven", NULL},
		{"RequireAndVerifyClientCert", NULL},
		{"RequestClientCert", "it asks for a certificate and verifies nothing"},
		{"RequireAnyClientCert", "it takes any certificate, verified or not"},
	};
	struct pmt_webcfg *c = x->c;
	const char *s;
	size_t i;

	if (is_null(v))
		return 0;
	if (!strcmp(key, "cert") || !strcmp(key, "cert_file"))
		return pem(x, v, key, key[4] == '_', &c->cert);
	if (!strcmp(key, "key") || !strcmp(key, "key_file"))
		return pem(x, v, key, key[3] == '_', &c->key);
	if (!strcmp(key, "client_ca") || !strcmp(key, "client_ca_file"))
		return pem(x, v, key, key[9] == '_', &c->client_ca);
	if (!strcmp(key, "min_version"))
		return tls_version(x, v, key, &c->min_tls);
	if (!strcmp(key, "max_version"))
		return tls_version(x, v, key, &c->max_tls);
	if (!strcmp(key, "client_auth_type")) {
		if (!(s = scalar(x, v, key)))
			return -EINVAL;
		for (i = 0; i < sizeof(auths) / sizeof(auths[0]); i++) {
			if (strcmp(s, auths[i].name))
				continue;
			if (auths[i].user)
				return bad(x, v,
					   "client_auth_type %s is not supported: %s; "
					   "RequireAndVerifyClientCert is the one that "
					   "authenticates clients",
					   s, auths[i].user);
			c->client_auth = (enum pmt_client_auth)i;
			return 0;
		}
		return bad(x, v,
			   "client_auth_type: '%s' is not NoClientCert, VerifyClientCertIfGiven "
			   "or RequireAndVerifyClientCert",
			   s);
	}
	if (!strcmp(key, "prefer_server_cipher_suites")) {
		bool b;

		if (boolean(x, v, key, &b))
			return -EINVAL;
		return b ? 0
			 : bad(x, v,
			       "prefer_server_cipher_suites: false is not supported (GnuTLS "
			       "chooses by the server's order)");
	}
	if (!strcmp(key, "cipher_suites") || !strcmp(key, "curve_preferences") ||
	    !strcmp(key, "client_allowed_sans"))
		return bad(x, k,
			   "tls_server_config: %s is not supported by pmtrace (GnuTLS's "
			   "defaults are used): remove it",
			   key);
	return bad(x, k,
		   "tls_server_config: unknown key '%s' (known: cert_file, key_file, "
		   "client_ca_file, client_auth_type, min_version, max_version, cert, key, "
		   "client_ca)",
		   key);
}

static int header_key(struct ctx *x, const yaml_node_t *k, const char *key, const yaml_node_t *v)
{
	static const char *const names[PMT_WEB_HEADERS] = {
		"Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options",
		"X-XSS-Protection", "Strict-Transport-Security"};
	struct pmt_webcfg *c = x->c;
	const char *s;
	size_t i, j;

	for (i = 0; i < PMT_WEB_HEADERS; i++)
		if (!strcasecmp(key, names[i]))
			break;
	if (i == PMT_WEB_HEADERS)
		return bad(x, k,
			   "headers: '%s' is not one of Content-Security-Policy, "
			   "X-Frame-Options, X-Content-Type-Options, X-XSS-Protection, "
			   "Strict-Transport-Security",
			   key);
	if (is_null(v))
		return 0;
	if (!(s = scalar(x, v, key)))
		return -EINVAL;
	for (j = 0; s[j]; j++)
		if ((unsigned char)s[j] < 0x20 || s[j] == 0x7f)
			return bad(x, v, "%s: a control character in the value", names[i]);
	if (i == 1 && strcasecmp(s, "deny") && strcasecmp(s, "sameorigin"))
		return bad(x, v, "X-Frame-Options: '%s' is not deny or sameorigin", s);
	if (i == 2 && strcasecmp(s, "nosniff"))
		return bad(x, v, "X-Content-Type-Options: '%s' is not nosniff", s);
	for (j = 0; j < c->nheaders; j++)
		if (c->headers[j].name == names[i])
			return bad(x, k, "headers: %s is given twice", names[i]);
	if (!*s)
		return 0; /* blank: unset */
	c->headers[c->nheaders].name = names[i];
	if (!(c->headers[c->nheaders].value = strdup(s)))
		return -ENOMEM;
	c->nheaders++;
	return 0;
}

static int http_key(struct ctx *x, const yaml_node_t *k, const char *key, const yaml_node_t *v)
{
	bool b;

	if (!strcmp(key, "http2"))
		/* pmtrace's server speaks HTTP/1.1: "true" allows HTTP/2,
		 * which clients then do not get */
		return is_null(v) ? 0 : boolean(x, v, key, &b);
	if (!strcmp(key, "headers"))
		return is_null(v) ? 0 : pairs(x, v, "headers", header_key);
	return bad(x, k, "http_server_config: unknown key '%s' (known: headers, http2)", key);
}

static bool bcrypt_hash(const char *h)
{
	size_t i;

	if (strlen(h) != 60 || h[0] != '$' || h[1] != '2' || !strchr("aby", h[2]) || h[3] != '$' ||
	    h[4] < '0' || h[4] > '3' || h[5] < '0' || h[5] > '9' ||
	    (h[4] - '0') * 10 + (h[5] - '0') < 4 || (h[4] - '0') * 10 + (h[5] - '0') > 31 ||
	    h[6] != '$')
		return false;
	for (i = 7; i < 60; i++)
		if (!strchr("./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
			    h[i]))
			return false;
	return true;
}

static int user_key(struct ctx *x, const yaml_node_t *k, const char *key, const yaml_node_t *v)
{
	struct pmt_webcfg *c = x->c;
	struct pmt_webuser *u;
	const char *h;

	if (!*key || strchr(key, ':'))
		return bad(x, k, "basic_auth_users: '%s': a user name is not empty and has no ':'",
			   key);
	if (!(h = scalar(x, v, key)))
		return -EINVAL;
	if (!bcrypt_hash(h))
		return bad(x, v,
			   "basic_auth_users: %s's password is not a bcrypt hash ($2y$10$ and 53 "
			   "characters: htpasswd -nBC 10 \"\" | tr -d ':\\n' makes one)",
			   key);
	u = realloc(c->users, (c->nusers + 1) * sizeof(*u));
	if (!u)
		return -ENOMEM;
	c->users = u;
	u[c->nusers].name = strdup(key);
	u[c->nusers].hash = strdup(h);
	c->nusers++;
	return u[c->nusers - 1].name && u[c->nusers - 1].hash ? 0 : -ENOMEM;
}

static int top_key(struct ctx *x, const yaml_node_t *k, const char *key, const yaml_node_t *v)
{
	if (!strcmp(key, "tls_server_config"))
		return is_null(v) ? 0 : pairs(x, v, key, tls_key);
	if (!strcmp(key, "http_server_config"))
		return is_null(v) ? 0 : pairs(x, v, key, http_key);
	if (!strcmp(key, "basic_auth_users"))
		return is_null(v) ? 0 : pairs(x, v, key, user_key);
	if (!strcmp(key, "rate_limit"))
		return bad(x, k, "rate_limit is not supported by pmtrace: remove it");
	return bad(x, k,
		   "unknown key '%s' (known: tls_server_config, http_server_config, "
		   "basic_auth_users)",
		   key);
}

/* What the keys say together */
static int check(struct ctx *x, const yaml_node_t *root)
{
	struct pmt_webcfg *c = x->c;

	if ((c->key || c->client_ca) && !c->cert)
		return bad(x, root, "tls_server_config: cert_file (or cert) is missing");
	if (c->cert && !c->key)
		return bad(x, root, "tls_server_config: key_file (or key) is missing");
	if (c->client_ca && c->client_auth == PMT_CLIENT_NONE)
		return bad(x, root,
			   "tls_server_config: client_ca_file is given with client_auth_type "
			   "NoClientCert: add client_auth_type: RequireAndVerifyClientCert");
	if (c->client_auth != PMT_CLIENT_NONE && !c->client_ca)
		return bad(x, root,
			   "tls_server_config: client_auth_type verifies client certificates "
			   "against client_ca_file: add it");
	if (c->min_tls > c->max_tls)
		return bad(x, root,
			   "tls_server_config: min_version TLS1%d is above max_version TLS1%d",
			   c->min_tls, c->max_tls);
	return 0;
}

int pmt_webcfg__parse(struct pmt_webcfg *c, const char *text, size_t len, const char *path,
		      const char *dir, struct pmt_error *e)
{
	struct ctx x = {.path = path, .dir = dir, .c = c, .e = e};
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	int r = 0;

	memset(c, 0, sizeof(*c));
	c->min_tls = 2;
	c->max_tls = 3;
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		r = pmt_error__usage(e, "--web-config %s:%lu: not YAML: %s%s%s", path,
				     (unsigned long)parser.problem_mark.line + 1,
				     parser.problem ? parser.problem : "unreadable",
				     parser.context ? " " : "",
				     parser.context ? parser.context : "");
		yaml_parser_delete(&parser);
		return r;
	}
	x.d = &doc;
	root = yaml_document_get_root_node(&doc);
	if (root && !is_null(root))
		r = pairs(&x, root, "the file", top_key);
	if (!r)
		r = check(&x, root);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (r)
		pmt_webcfg__free(c);
	else if (c->nusers && !c->cert)
		pmt_warn("--web-config %s: basic_auth_users without tls_server_config: "
			 "passwords cross the network in the clear",
			 path);
	return r;
}

int pmt_webcfg__read(struct pmt_webcfg *c, const char *path, struct pmt_error *e)
{
	char *text, *dir, *slash;
	size_t len;
	int r;

	memset(c, 0, sizeof(*c));
	if ((r = pmt_read_file(path, &text, &len)))
		return pmt_error__usage(e, "--web-config %s: %s", path, strerror(-r));
	dir = strdup(path);
	if (!dir) {
		free(text);
		return -ENOMEM;
	}
	slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir ? 1 : 0] = 0;
	else
		dir[0] = 0;
	r = pmt_webcfg__parse(c, text, len, path, dir, e);
	free(dir);
	free(text);
	return r;
}

void pmt_webcfg__priorities(const struct pmt_webcfg *c, char *buf, size_t len)
{
	size_t n;
	int v;

	n = (size_t)snprintf(buf, len, "NORMAL:-VERS-ALL");
	for (v = c->max_tls; v >= c->min_tls && n < len; v--)
		n += (size_t)snprintf(buf + n, len - n, ":+VERS-TLS1.%d", v);
}

void pmt_webcfg__free(struct pmt_webcfg *c)
{
	size_t i;

	free(c->cert);
	free(c->key);
	free(c->client_ca);
	for (i = 0; i < c->nusers; i++) {
		free(c->users[i].name);
		free(c->users[i].hash);
	}
	free(c->users);
	for (i = 0; i < c->nheaders; i++)
		free(c->headers[i].value);
	memset(c, 0, sizeof(*c));
}

int pmt_web__seconds(const char *arg, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (!*arg || *end || errno || v < 1 || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}
