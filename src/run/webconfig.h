/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --web-config FILE: TLS and basic authentication for --listen, in the
 * format of Prometheus' exporter-toolkit (--web.config.file), so that one
 * file serves node_exporter, Parca's agent and pmtrace alike. Read and
 * checked once, before anything is loaded: what is wrong in it is a usage
 * error naming the file, the line and the key.
 *
 * tls_server_config: cert_file/key_file (or cert/key inline), client_ca_file
 * (or client_ca), client_auth_type NoClientCert, VerifyClientCertIfGiven
 * or RequireAndVerifyClientCert, min_version/max_version TLS10..TLS13.
 * http_server_config: headers (the five exporter-toolkit allows), http2.
 * basic_auth_users: NAME: bcrypt hash. What exporter-toolkit has and
 * pmtrace does not (cipher_suites, curve_preferences, client_allowed_sans,
 * rate_limit, the client auth types that verify nothing) is refused by
 * name: a security setting is never ignored.
 */
#ifndef PMT_WEBCONFIG_H
#define PMT_WEBCONFIG_H

#include <stdbool.h>
#include <stddef.h>

struct pmt_error;

enum pmt_client_auth {
	PMT_CLIENT_NONE,	    /* NoClientCert */
	PMT_CLIENT_VERIFY_IF_GIVEN, /* VerifyClientCertIfGiven */
	PMT_CLIENT_REQUIRE,	    /* RequireAndVerifyClientCert */
};

#define PMT_WEB_HEADERS 5

struct pmt_webuser {
	char *name;
	char *hash; /* bcrypt: $2a$, $2b$ or $2y$, 60 characters */
};

struct pmt_webcfg {
	/* PEM text; cert NULL: plain HTTP */
	char *cert, *key, *client_ca;
	enum pmt_client_auth client_auth;
	int min_tls, max_tls; /* minor version: 0 (TLS 1.0) .. 3 (TLS 1.3) */
	struct pmt_webuser *users;
	size_t nusers;
	struct {
		const char *name; /* one of exporter-toolkit's five */
		char *value;
	} headers[PMT_WEB_HEADERS];
	size_t nheaders;
};

/* Read FILE (its relative paths are the file's directory's) into c.
 * Returns 0, or -errno with a usage error set. */
int pmt_webcfg__read(struct pmt_webcfg *c, const char *path, struct pmt_error *e);
/* The same from text (len bytes); files named in it are read relative to
 * dir, or not at all when dir is NULL (their names are checked only). */
int pmt_webcfg__parse(struct pmt_webcfg *c, const char *text, size_t len, const char *path,
		      const char *dir, struct pmt_error *e);
/* GnuTLS's priority string for the versions allowed */
void pmt_webcfg__priorities(const struct pmt_webcfg *c, char *buf, size_t len);
void pmt_webcfg__free(struct pmt_webcfg *c);

/* A request's seconds=N (/debug/pprof/profile): decimal, 1 to max, as
 * Go's net/http/pprof reads it; 0, or -EINVAL. */
int pmt_web__seconds(const char *arg, long max, long *out);

#endif
