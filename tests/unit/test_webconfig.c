// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --web-config's reader (run/webconfig.h): exporter-toolkit's keys, files
 * relative to the config's directory, and each mistake told by line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "run/webconfig.h"
#include "util/error.h"
#include "test.h"

#define HASH "$2y$10$X0h1gDsPszWURQaxFh.zoubFi6DXncSjhoQNJgRrnGs7EsimhC7zG"
#define PEM "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"

static int parse(struct pmt_webcfg *c, const char *text, struct pmt_error *e)
{
	pmt_error__clear(e);
	return pmt_webcfg__parse(c, text, strlen(text), "web.yml", NULL, e);
}

TEST(webconfig_keys_as_exporter_toolkit)
{
	struct pmt_webcfg c;
	struct pmt_error e = {0};
	char prio[128];

	ASSERT_EQ(parse(&c, "", &e), 0); /* an empty file: plain HTTP, no auth */
	ASSERT_TRUE(!c.cert && !c.nusers);
	ASSERT_EQ(parse(&c,
			"tls_server_config:\n"
			"  cert_file: server.crt\n"
			"  key_file: server.key\n"
			"  client_auth_type: RequireAndVerifyClientCert\n"
			"  client_ca_file: ca.crt\n"
			"  min_version: TLS13\n"
			"http_server_config:\n"
			"  http2: false\n"
			"  headers:\n"
			"    X-Frame-Options: deny\n"
			"    Strict-Transport-Security: max-age=31536000\n"
			"basic_auth_users:\n"
			"  alice: " HASH "\n"
			"  bob: '" HASH "'\n",
			&e),
		  0);
	/* names checked, files not read (no directory given) */
	ASSERT_TRUE(c.cert && c.key && c.client_ca);
	ASSERT_EQ(c.client_auth, PMT_CLIENT_REQUIRE);
	ASSERT_EQ(c.min_tls, 3);
	ASSERT_EQ(c.nusers, 2);
	ASSERT_STREQ(c.users[1].name, "bob");
	ASSERT_STREQ(c.users[1].hash, HASH);
	ASSERT_EQ(c.nheaders, 2);
	ASSERT_STREQ(c.headers[0].name, "X-Frame-Options");
	ASSERT_STREQ(c.headers[1].value, "max-age=31536000");
	pmt_webcfg__priorities(&c, prio, sizeof(prio));
	ASSERT_STREQ(prio, "NORMAL:-VERS-ALL:+VERS-TLS1.3");
	pmt_webcfg__free(&c);
	/* inline PEM (a block scalar); defaults TLS 1.2 to 1.3 */
	ASSERT_EQ(parse(&c,
			"tls_server_config:\n  cert: |\n    -----BEGIN CERTIFICATE-----\n"
			"    AAAA\n    -----END CERTIFICATE-----\n  key: \"" PEM "\"\n",
			&e),
		  0);
	ASSERT_STREQ(c.cert, PEM);
	pmt_webcfg__priorities(&c, prio, sizeof(prio));
	ASSERT_STREQ(prio, "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2");
	pmt_webcfg__free(&c);
}

TEST(webconfig_mistakes_named_by_line)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{"tls_server_config:\n  cert_file: a\n  keyfile: b\n",
		 "web.yml:3: tls_server_config: unknown key 'keyfile'"},
		{"tls_server_config:\n  cert_file: a\n", "key_file (or key) is missing"},
		{"tls_server_config:\n  key_file: a\n", "cert_file (or cert) is missing"},
		{"tls_server_config:\n  cert_file: a\n  cert: x\n", "cert and cert_file are both"},
		{"tls_server_config:\n  cert_file: a\n  key_file: b\n  client_ca_file: c\n",
		 "client_auth_type NoClientCert"},
		{"tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: "
		 "RequireAndVerifyClientCert\n",
		 "against client_ca_file: add it"},
		{"tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: "
		 "RequireAnyClientCert\n",
		 "RequireAnyClientCert is not supported"},
		{"tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS13\n"
		 "  max_version: TLS12\n",
		 "min_version TLS13 is above max_version TLS12"},
		{"tls_server_config:\n  min_version: SSL3\n", "'SSL3' is not TLS10"},
		{"tls_server_config:\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n",
		 "cipher_suites is not supported"},
		{"basic_auth_users:\n  alice: secret\n", "web.yml:2: basic_auth_users: alice's "
							 "password is not a bcrypt hash"},
		{"basic_auth_users:\n  alice: " HASH "\n  alice: " HASH "\n",
		 "'alice' is given twice"},
		{"basic_auth_users:\n  'a:b': " HASH "\n", "has no ':'"},
		{"basic_auth_users: [alice]\n", "basic_auth_users: expected a mapping"},
		{"rate_limit:\n  burst: 2\n", "rate_limit is not supported"},
		{"tls_config:\n", "web.yml:1: unknown key 'tls_config'"},
		{"http_server_config:\n  headers:\n    X-Frame-Options: allow\n",
		 "'allow' is not deny or sameorigin"},
		{"http_server_config:\n  headers:\n    Server: x\n", "'Server' is not one of"},
		{"http_server_config:\n  http2: maybe\n", "'maybe' is not true or false"},
		{"tls_server_config: [\n", "web.yml:2: not YAML"},
		{"- a\n- b\n", "the file: expected a mapping"},
		{"tls_server_config:\n  cert: \"no pem\"\n", "cert: not PEM"},
	};
	struct pmt_webcfg c;
	struct pmt_error e = {0};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = parse(&c, cases[i].text, &e);

		if (r != -EINVAL || !strstr(e.msg, cases[i].msg)) {
			fprintf(stderr, "    case %zu: %d '%s', expected '%s'\n", i, r, e.msg,
				cases[i].msg);
			ASSERT_TRUE(0);
		}
		ASSERT_EQ(pmt_error__exit_status(&e), 2);
		ASSERT_TRUE(!c.cert && !c.users); /* nothing kept of a refused file */
	}
}

TEST(webconfig_files_beside_the_config)
{
	char dir[] = "/tmp/pmt-webcfg-XXXXXX", path[128];
	struct pmt_webcfg c;
	struct pmt_error e = {0};
	FILE *f;

	ASSERT_TRUE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/server.crt", dir);
	f = fopen(path, "w");
	fputs(PEM, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/web.yml", dir);
	f = fopen(path, "w");
	fputs("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n", f);
	fclose(f);
	/* the key is not there: named with its path, a usage error */
	ASSERT_EQ(pmt_webcfg__read(&c, path, &e), -EINVAL);
	ASSERT_TRUE(strstr(e.msg, "web.yml:3: key_file '") != NULL);
	ASSERT_TRUE(strstr(e.msg, "/server.key': No such file or directory") != NULL);
	pmt_error__clear(&e);
	snprintf(path, sizeof(path), "%s/server.key", dir);
	f = fopen(path, "w");
	fputs("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/web.yml", dir);
	ASSERT_EQ(pmt_webcfg__read(&c, path, &e), 0);
	ASSERT_STREQ(c.cert, PEM);
	ASSERT_TRUE(strstr(c.key, "PRIVATE KEY") != NULL);
	pmt_webcfg__free(&c);
	/* a directory is not a key */
	f = fopen(path, "w");
	fprintf(f, "tls_server_config:\n  cert_file: server.crt\n  key_file: %s\n", dir);
	fclose(f);
	ASSERT_EQ(pmt_webcfg__read(&c, path, &e), -EINVAL);
	ASSERT_TRUE(strstr(e.msg, "not a regular file") != NULL);
	pmt_error__clear(&e);
	/* the config itself missing */
	snprintf(path, sizeof(path), "%s/nothere.yml", dir);
	ASSERT_EQ(pmt_webcfg__read(&c, path, &e), -EINVAL);
	ASSERT_TRUE(strstr(e.msg, "nothere.yml: No such file") != NULL);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	ASSERT_EQ(system(path), 0);
}
