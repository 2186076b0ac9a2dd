// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --listen: the aggregation served at /metrics, read from the maps at
 * each scrape; an aggregation by stack served as profiles instead, at
 * /debug/pprof/profile?seconds=N as Go's net/http/pprof serves CPU
 * profiles (what Parca, Pyroscope's scrapers and go tool pprof fetch):
 * the samples of the next N seconds, each request its own window.
 * libmicrohttpd runs a thread per connection (started with the signals
 * blocked, so they still reach the main loop): a client that is slow,
 * silent, malformed or gone, or a profile being taken, holds its own
 * thread, never the event loop or another scrape; a scrape reads the
 * maps while the kernel keeps updating them.
 */
#include <dlfcn.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <signal.h>
#include <arpa/inet.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <crypt.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include "output/exposition.h"
#include "aggregate/maps.h"
#include "run/listen.h"
#include "run/webconfig.h"
#include "symbols/symbols.h"
#include "util/log.h"

#ifndef PMT_VERSION
#define PMT_VERSION "unknown"
#endif

#ifndef PMT_MHD_SONAME
#define PMT_MHD_SONAME "libmicrohttpd.so.12"
#endif

/*
 * libmicrohttpd is loaded by --listen alone: linked in, it and the TLS
 * stack it brings (gnutls, p11-kit, nettle, gmp, ...) would cost every
 * run 2.4 MB of memory and their constructors' time at start-up. The
 * calls go through this table, typed by the library's own header.
 */
#define MHD_CALLS(X)                            \
	X(MHD_start_daemon)                     \
	X(MHD_stop_daemon)                      \
	X(MHD_create_response_from_buffer)      \
	X(MHD_add_response_header)              \
	X(MHD_queue_response)                   \
	X(MHD_destroy_response)                 \
	X(MHD_lookup_connection_value)          \
	X(MHD_set_connection_option)            \
	X(MHD_get_connection_info)              \
	X(MHD_basic_auth_get_username_password) \
	X(MHD_queue_basic_auth_fail_response)   \
	X(MHD_free)
/* --web-config's: client certificates checked with the GnuTLS that
 * libmicrohttpd brings, passwords with libcrypt's bcrypt */
#define TLS_CALLS(X)                               \
	X(gnutls_certificate_get_peers)            \
	X(gnutls_certificate_verify_peers2)        \
	X(gnutls_certificate_allocate_credentials) \
	X(gnutls_certificate_free_credentials)     \
	X(gnutls_certificate_set_x509_key_mem2)    \
	X(gnutls_certificate_set_x509_trust_mem)   \
	X(gnutls_strerror)
#define CRYPT_CALLS(X) X(crypt_rn)
#define LIB_FIELD(name) __typeof__(name) *name;
static struct {
	MHD_CALLS(LIB_FIELD)
	TLS_CALLS(LIB_FIELD)
	CRYPT_CALLS(LIB_FIELD)
} mhd;
#undef LIB_FIELD

static int load_lib(const char *soname, const char *what, struct pmt_error *err, void **lib)
{
	*lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!*lib)
		return pmt_error__runtime(err, -ENOENT, "%s needs %s: %s", what, soname, dlerror());
	return 0;
}

/* Loaded once and kept: the server's threads run until the end */
static int load_mhd(struct pmt_error *err)
{
	static bool loaded;
	void *lib, *tls, *cr;

	if (loaded)
		return 0;
	if (load_lib(PMT_MHD_SONAME, "--listen (Debian: libmicrohttpd12)", err, &lib) ||
	    load_lib("libgnutls.so.30", "--listen", err, &tls) ||
	    load_lib("libcrypt.so.1", "--listen", err, &cr))
		return -ENOENT;
#define LIB_LOAD(h, name)                             \
	if (!(*(void **)&mhd.name = dlsym(h, #name))) \
		return pmt_error__runtime(err, -ENOENT, "no %s in the library", #name);
#define MHD_LOAD(name) LIB_LOAD(lib, name)
#define TLS_LOAD(name) LIB_LOAD(tls, name)
#define CRYPT_LOAD(name) LIB_LOAD(cr, name)
	MHD_CALLS(MHD_LOAD)
	TLS_CALLS(TLS_LOAD)
	CRYPT_CALLS(CRYPT_LOAD)
#undef CRYPT_LOAD
#undef TLS_LOAD
#undef MHD_LOAD
#undef LIB_LOAD
	loaded = true;
	return 0;
}

#define MAX_CLIENTS 128
#define CLIENT_TIMEOUT_S 10
/* each connection's thread: what a request needs is on the heap */
#define THREAD_STACK (256 * 1024)
/* /debug/pprof/profile?seconds=N: Go's default, and a bound */
#define PROFILE_DEFAULT_S 30
#define PROFILE_MAX_S 3600
#define PROFILE_TYPE "application/octet-stream"

/* basic auth: the users whose password matched lately (a bcrypt check
 * takes tens of ms: Prometheus' scrapes would pay it each time) */
#define AUTH_SEEN 16
#define AUTH_REALM "pmtrace"

enum admission { BAD_PASSWORD, BAD_CLIENT_CERT, ADMITTED };

struct pmt_listen {
	int fd;
	struct MHD_Daemon *mhd;
	struct pmt_webcfg web; /* --web-config's, or all empty */
	char mhd_said[256];    /* libmicrohttpd's last message */
	/* set by pmt_listen__start under lock; requests wait for it */
	struct pmt_session *s;
	struct pmt_syms *syms; /* the session's, fetched by the main thread */
	double start_time;     /* Unix seconds */
	bool started;
	bool profiles; /* the aggregation is by stack: served as profiles */
	/* profiles being taken and requests before the start wait on this;
	 * stopping ends them early */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stopping;
	int answering; /* profile requests not yet answered to the end */
	/* under lock: SHA-256 crypts of "user:password" under this run's
	 * salt, of passwords that matched (the passwords are not kept) */
	char auth_salt[40];
	char *auth_seen[AUTH_SEEN];
	unsigned auth_next;
	uint64_t auth_failed[ADMITTED]; /* by enum admission; atomic */
};

/* A request's state: its headers seen, or a profile being answered */
static int seen, profiling;
/* At the stop, how long profile requests may take to be answered */
#define STOP_ANSWER_MS 2000

static int start_daemon(struct pmt_listen *l, const struct pmt_listen_opts *lo,
			struct pmt_error *err);

/* A SHA-256 crypt setting with a salt of this run's (the key of the
 * passwords that matched: see password_ok) */
static int auth_salt(char *out, size_t len)
{
	static const char b64[] =
		"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
	unsigned char r[16];
	size_t i, n;

	if (getrandom(r, sizeof(r), 0) != sizeof(r))
		return -1;
	n = (size_t)snprintf(out, len, "$5$rounds=1000$");
	for (i = 0; i < sizeof(r) && n + 2 < len; i++)
		out[n++] = b64[r[i] & 63];
	out[n++] = '$';
	out[n] = 0;
	return 0;
}

/* Where the server answers, on stderr (port 0: the one the kernel gave) */
static void announce(const struct pmt_listen *l, const struct sockaddr_storage *sa)
{
	const char *scheme = l->web.cert ? "https" : "http";
	char shown[INET6_ADDRSTRLEN + 2];
	int port;

	if (sa->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)sa;

		inet_ntop(AF_INET6, &a6->sin6_addr, shown + 1, sizeof(shown) - 2);
		shown[0] = '[';
		strcat(shown, "]");
		port = ntohs(a6->sin6_port);
	} else {
		const struct sockaddr_in *a4 = (const struct sockaddr_in *)sa;

		inet_ntop(AF_INET, &a4->sin_addr, shown, sizeof(shown));
		port = ntohs(a4->sin_port);
	}
	pmt_info("serving metrics at %s://%s:%d/metrics%s", scheme, shown, port,
		 l->web.nusers ? " (basic auth)" : "");
	if (l->profiles)
		pmt_info("serving profiles at %s://%s:%d/debug/pprof/profile?seconds=N", scheme,
			 shown, port);
}

int pmt_listen__bind(struct pmt_listen **out, const struct pmt_listen_opts *lo, bool profiles,
		     struct pmt_error *err)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV},
			*ai = NULL;
	const char *host = *lo->host ? lo->host : "127.0.0.1";
	struct sockaddr_storage sa;
	socklen_t salen = sizeof(sa);
	char port[16];
	pthread_condattr_t ca;
	struct pmt_webcfg web = {0};
	struct pmt_listen *l;
	int fd = -1, one = 1, r;

	*out = NULL;
	if ((r = load_mhd(err)) ||
	    (lo->web_config && (r = pmt_webcfg__read(&web, lo->web_config, err))))
		return r;
	snprintf(port, sizeof(port), "%d", lo->port);
	r = getaddrinfo(host, port, &hints, &ai);
	if (r) {
		pmt_webcfg__free(&web);
		return pmt_error__usage(err, "--listen %s: cannot resolve '%s': %s", lo->addr, host,
					gai_strerror(r));
	}
	/* non-blocking: the server accepts until EAGAIN, and a blocking
	 * accept would hold its thread until the next client */
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 64) ||
	    getsockname(fd, (struct sockaddr *)&sa, &salen)) {
		r = -errno;
		/* an address this machine does not have is the user's */
		if (r == -EADDRNOTAVAIL || r == -EACCES)
			pmt_error__usage(err, "--listen %s: %s", lo->addr, strerror(-r));
		else
			pmt_error__runtime(err, r, "--listen %s: %s", lo->addr, strerror(-r));
		if (r == -EADDRINUSE)
			pmt_error__hint(
				err,
				"another program serves that port: pick another, or 0 for any");
		freeaddrinfo(ai);
		if (fd >= 0)
			close(fd);
		pmt_webcfg__free(&web);
		return r;
	}
	freeaddrinfo(ai);
	l = calloc(1, sizeof(*l));
	if (!l) {
		close(fd);
		pmt_webcfg__free(&web);
		return -ENOMEM;
	}
	l->fd = fd;
	l->web = web;
	l->profiles = profiles;
	pthread_mutex_init(&l->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (web.nusers && auth_salt(l->auth_salt, sizeof(l->auth_salt))) {
		pmt_listen__free(l);
		return pmt_error__runtime(err, -EIO, "--web-config: no random bytes: %s",
					  strerror(errno));
	}
	if (start_daemon(l, lo, err)) {
		pmt_listen__free(l);
		return -EINVAL;
	}
	announce(l, &sa);
	*out = l;
	return 0;
}

static void counter(struct pmt_buf *b, const char *name, const char *help, bool om)
{
	pmt_expo__family(b, name, "counter", NULL, help, om);
}

static void probe_sample(struct pmt_buf *b, const char *name, const char *probe, uint64_t v)
{
	pmt_buf__printf(b, "%s{probe=\"", name);
	pmt_expo__label_value(b, probe, strlen(probe));
	pmt_buf__printf(b, "\"} %llu\n", (unsigned long long)v);
}

/* Every loss the summary reports, as a metric: a family (a counter) and
 * the label that tells its causes apart. */
enum loss_src { FROM_STAT, LOST_KEYS, KEY_CONFLICT, MISSED, FORGOTTEN, STACK_END, COPY_SHORT };
static const struct loss {
	const char *family, *label, *help;
	enum loss_src src;
	enum pmt_stat stat;
} losses[] = {
	{"pmtrace_dropped_updates_total", "reason=\"max_keys\"",
	 "aggregation updates dropped: --max-keys full (max_keys), the totals' bound (totals), "
	 "latency starts not stored (latency_start), switches off the CPU not timed "
	 "(offcpu_threads), a generated program's return to its update failed "
	 "(generated_return)",
	 FROM_STAT, PMT_STAT_AGG_FULL},
	{"pmtrace_dropped_updates_total", "reason=\"totals\"", NULL, LOST_KEYS, 0},
	{"pmtrace_dropped_updates_total", "reason=\"latency_start\"", NULL, FROM_STAT,
	 PMT_STAT_LAT_FULL},
	{"pmtrace_dropped_updates_total", "reason=\"offcpu_threads\"", NULL, FROM_STAT,
	 PMT_STAT_OFFCPU_FULL},
	{"pmtrace_dropped_updates_total", "reason=\"generated_return\"", NULL, FROM_STAT,
	 PMT_STAT_XGEN_BACK},
	{"pmtrace_lost_stacks_total", "reason=\"table_full\"",
	 "samples whose stack was lost: the stack table full (table_full), its slots held by "
	 "other stacks (collision), the kernel's memory (kernel), a key the kernel gave two "
	 "stacks between two drains (key_conflict)",
	 FROM_STAT, PMT_STAT_STACK_FULL},
	{"pmtrace_lost_stacks_total", "reason=\"collision\"", NULL, FROM_STAT,
	 PMT_STAT_STACK_COLLISION},
	{"pmtrace_lost_stacks_total", "reason=\"kernel\"", NULL, FROM_STAT, PMT_STAT_STACK_ERR},
	{"pmtrace_lost_stacks_total", "reason=\"key_conflict\"", NULL, KEY_CONFLICT, 0},
	{"pmtrace_short_stacks_total", "reason=\"no_text_mapping\"",
	 "user stacks that end short of their outermost frame: a frame-pointer caller in no "
	 "text mapping (no_text_mapping), a file whose unwind tables were still being read "
	 "(tables_pending), a copy to finish in user space the rings had no room for "
	 "(rings_full), more frames than a stack keeps (depth), a process exiting, its memory "
	 "gone (exiting), stack memory not readable or a rule that led nowhere (unreadable), "
	 "a stack deeper than the copy it was finished from (copy_short)",
	 STACK_END, PMT_STAT_UNWIND_ENDED},
	{"pmtrace_short_stacks_total", "reason=\"tables_pending\"", NULL, FROM_STAT,
	 PMT_STAT_UNWIND_PENDING},
	{"pmtrace_short_stacks_total", "reason=\"rings_full\"", NULL, FROM_STAT,
	 PMT_STAT_DEFER_CUT},
	{"pmtrace_short_stacks_total", "reason=\"depth\"", NULL, STACK_END, PMT_STAT_UNWIND_DEPTH},
	{"pmtrace_short_stacks_total", "reason=\"exiting\"", NULL, FROM_STAT,
	 PMT_STAT_UNWIND_EXITING},
	{"pmtrace_short_stacks_total", "reason=\"unreadable\"", NULL, STACK_END,
	 PMT_STAT_UNWIND_UNREAD},
	{"pmtrace_short_stacks_total", "reason=\"copy_short\"", NULL, COPY_SHORT, 0},
	{"pmtrace_failed_reads_total", "what=\"string\"",
	 "reads the kernel could not do: str() strings (string), struct members (member), "
	 "--counter counters (counter)",
	 FROM_STAT, PMT_STAT_STR_FAULT},
	{"pmtrace_failed_reads_total", "what=\"member\"", NULL, FROM_STAT, PMT_STAT_MEMBER_FAULT},
	{"pmtrace_failed_reads_total", "what=\"counter\"", NULL, FROM_STAT, PMT_STAT_COUNTER_READ},
	{"pmtrace_missed_events_total", NULL,
	 "events the kernel ran no program for (another ran on the same CPU)", MISSED, 0},
	{"pmtrace_output_errors_total", NULL, "events that could not be written to a perf buffer",
	 FROM_STAT, PMT_STAT_OUTPUT_ERR},
	{"pmtrace_untraced_children_total", NULL,
	 "children of the command not traced: the target map was full", FROM_STAT,
	 PMT_STAT_TARGET_FULL},
	{"pmtrace_python_code_unread_total", NULL,
	 "Python code objects not read while their process lived (frames may show as [python])",
	 FROM_STAT, PMT_STAT_PY_NEW_FULL},
	{"pmtrace_python_frames_unread_total", NULL,
	 "user stacks through a Python eval loop with no Python frame read there", FROM_STAT,
	 PMT_STAT_PY_NOFRAME},
	{"pmtrace_filter_aborts_total", NULL,
	 "events rejected because a filter walk did not end (a bug)", FROM_STAT,
	 PMT_STAT_FILTER_ABORT},
	{"pmtrace_forgotten_processes_total", NULL,
	 "exited processes forgotten before their samples were named (their user frames show "
	 "as [unknown])",
	 FORGOTTEN, 0},
};

static uint64_t loss_count(struct pmt_listen *l, const struct loss *x)
{
	struct pmt_syms_stats st;

	switch (x->src) {
	case FROM_STAT: return pmt_session__stat(l->s, x->stat);
	case LOST_KEYS: return pmt_aggmaps__lost_keys(l->s->aggmaps);
	case KEY_CONFLICT: return pmt_aggmaps__lost_stacks(l->s->aggmaps);
	case MISSED: return pmt_session__missed(l->s);
	case FORGOTTEN: pmt_syms__stats(l->syms, &st); return st.forgotten;
	case STACK_END:
		return pmt_session__stat(l->s, x->stat) +
		       pmt_unwinder__ended_as(&l->s->unwind, x->stat);
	case COPY_SHORT: return pmt_unwinder__beyond_copy(&l->s->unwind);
	}
	return 0;
}

static void loss_metrics(struct pmt_listen *l, struct pmt_buf *b, bool om)
{
	size_t i;

	for (i = 0; i < sizeof(losses) / sizeof(losses[0]); i++) {
		const struct loss *x = &losses[i];

		if (x->help)
			counter(b, x->family, x->help, om);
		pmt_buf__printf(b, "%s%s%s%s %llu\n", x->family, x->label ? "{" : "",
				x->label ? x->label : "", x->label ? "}" : "",
				(unsigned long long)loss_count(l, x));
	}
}

/* The tracer's own: build, start, and what it counted, lost or dropped. */
static void self_metrics(struct pmt_listen *l, struct pmt_buf *b, bool om)
{
	struct pmt_session *s = l->s;
	uint32_t i;

	pmt_expo__family(b, "pmtrace_build_info", "gauge", NULL, "pmtrace's version", om);
	pmt_buf__puts(b, "pmtrace_build_info{version=\"" PMT_VERSION "\"} 1\n");
	pmt_expo__family(b, "pmtrace_start_time_seconds", "gauge", "seconds",
			 "when tracing started, in seconds since the Unix epoch", om);
	pmt_buf__printf(b, "pmtrace_start_time_seconds %.3f\n", l->start_time);
	counter(b, "pmtrace_events_total", "events that reached the aggregation, per probe", om);
	for (i = 0; i < s->probes.n; i++)
		probe_sample(b, "pmtrace_events_total", s->probes.v[i].name,
			     pmt_session__hits(s, i));
	counter(b, "pmtrace_filtered_events_total", "events a --filter rejected in the kernel", om);
	for (i = 0; i < s->probes.n; i++)
		if (s->probes.v[i].filter)
			probe_sample(b, "pmtrace_filtered_events_total", s->probes.v[i].name,
				     pmt_session__filtered(s, i));
	loss_metrics(l, b, om);
	counter(b, "pmtrace_lost_events_total", "events lost because a perf buffer was full", om);
	pmt_buf__printf(b, "pmtrace_lost_events_total %llu\n",
			(unsigned long long)pmt_session__stat(s, PMT_STAT_RING_FULL));
	if (l->web.nusers || l->web.client_auth != PMT_CLIENT_NONE) {
		counter(b, "pmtrace_http_refused_total",
			"requests refused by --web-config: a wrong or missing password (password), "
			"a client certificate missing or not signed by the client CA (client_cert)",
			om);
		pmt_buf__printf(b, "pmtrace_http_refused_total{reason=\"password\"} %llu\n",
				(unsigned long long)__atomic_load_n(&l->auth_failed[BAD_PASSWORD],
								    __ATOMIC_RELAXED));
		pmt_buf__printf(b, "pmtrace_http_refused_total{reason=\"client_cert\"} %llu\n",
				(unsigned long long)__atomic_load_n(
					&l->auth_failed[BAD_CLIENT_CERT], __ATOMIC_RELAXED));
	}
	if (s->opts->agg.lat_start) {
		counter(b, "pmtrace_latency_unmatched_ends_total",
			"latency end events without a start", om);
		pmt_buf__printf(b, "pmtrace_latency_unmatched_ends_total %llu\n",
				(unsigned long long)pmt_session__stat(s, PMT_STAT_LAT_NOSTART));
	}
}

/* --web-config's headers, on every answer (one server a process) */
static const struct pmt_webcfg *web_headers;

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, char *body, size_t len,
			     const char *type)
{
	struct MHD_Response *r =
		mhd.MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (!r) {
		free(body);
		return MHD_NO;
	}
	for (size_t i = 0; web_headers && i < web_headers->nheaders; i++)
		if (strcmp(web_headers->headers[i].name, "X-Content-Type-Options")) /* below */
			mhd.MHD_add_response_header(r, web_headers->headers[i].name,
						    web_headers->headers[i].value);
	mhd.MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		mhd.MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (!strcmp(type, PROFILE_TYPE)) { /* as Go's net/http/pprof answers */
		mhd.MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_DISPOSITION,
					    "attachment; filename=\"profile\"");
		mhd.MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	}
	ret = mhd.MHD_queue_response(c, status, r);
	mhd.MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result text_reply(struct MHD_Connection *c, unsigned status, const char *text)
{
	char *body = strdup(text);

	return body ? reply(c, status, body, strlen(body), "text/plain; charset=utf-8") : MHD_NO;
}

/* Wait until deadline (CLOCK_MONOTONIC) or until pmtrace stops; false
 * when it stops. */
static bool wait_until(struct pmt_listen *l, const struct timespec *deadline)
{
	bool stopping;

	pthread_mutex_lock(&l->lock);
	while (!l->stopping && pthread_cond_timedwait(&l->wake, &l->lock, deadline) != ETIMEDOUT)
		;
	stopping = l->stopping;
	pthread_mutex_unlock(&l->lock);
	return !stopping;
}

/* GET /debug/pprof/profile?seconds=N: the samples of the next N seconds
 * as a gzip'd profile.proto, from a window of the aggregation's own. */
static enum MHD_Result serve_profile(struct pmt_listen *l, struct MHD_Connection *c, void **state)
{
	const char *arg = mhd.MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "seconds");
	long secs = PROFILE_DEFAULT_S;
	struct timespec deadline;
	uint8_t *gz = NULL;
	size_t len = 0;
	int w;

	if (!l->profiles)
		return text_reply(c, MHD_HTTP_NOT_FOUND,
				  "no profile: this pmtrace aggregates no stacks; run it with -e "
				  "EVENT --stack (or --offcpu) to serve profiles\n");
	if (arg && pmt_web__seconds(arg, PROFILE_MAX_S, &secs))
		return text_reply(c, MHD_HTTP_BAD_REQUEST,
				  "seconds: expected a whole number of seconds from 1 to 3600\n");
	w = pmt_aggmaps__window_open(l->s->aggmaps);
	if (w == -EBUSY)
		return text_reply(c, MHD_HTTP_TOO_MANY_REQUESTS,
				  "as many profiles as pmtrace takes at once are being taken: ask "
				  "again when one is done\n");
	if (w < 0)
		return text_reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				  "reading the aggregation failed\n");
	pthread_mutex_lock(&l->lock); /* answered: see on_completed */
	l->answering++;
	pthread_mutex_unlock(&l->lock);
	*state = &profiling;
	/* the connection is quiet while the profile is taken */
	mhd.MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT,
				      (unsigned)(secs + CLIENT_TIMEOUT_S));
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += secs;
	if (!wait_until(l, &deadline)) {
		pmt_aggmaps__window_close(l->s->aggmaps, w, l->syms, &gz, &len);
		free(gz);
		return text_reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "pmtrace is stopping\n");
	}
	if (pmt_aggmaps__window_close(l->s->aggmaps, w, l->syms, &gz, &len))
		return text_reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "making the profile failed\n");
	return reply(c, MHD_HTTP_OK, (char *)gz, len, PROFILE_TYPE);
}

static enum MHD_Result serve_index(struct pmt_listen *l, struct MHD_Connection *c)
{
	char *body;

	if (asprintf(&body,
		     "<html><head><title>/debug/pprof/</title></head><body>\n"
		     "/debug/pprof/<br>\n<br>\n%s"
		     "</body></html>\n",
		     l->profiles ? "<a href=\"profile?seconds=30\">profile</a>: the samples of "
				   "the next N seconds (seconds=N, default 30), as a gzip'd "
				   "profile.proto<br>\n"
				 : "no profiles: this pmtrace aggregates no stacks (-e EVENT "
				   "--stack, or --offcpu, serve them)<br>\n") < 0)
		return MHD_NO;
	return reply(c, MHD_HTTP_OK, body, strlen(body), "text/html; charset=utf-8");
}

/* Does the scraper ask for OpenMetrics (Prometheus does, first)? */
static bool wants_openmetrics(struct MHD_Connection *c)
{
	const char *accept = mhd.MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");

	return accept && strstr(accept, "application/openmetrics-text");
}

/* Requests that come before the session is attached wait for it */
static bool wait_started(struct pmt_listen *l)
{
	bool started;

	pthread_mutex_lock(&l->lock);
	while (!l->started && !l->stopping)
		pthread_cond_wait(&l->wake, &l->lock);
	started = l->started && !l->stopping;
	pthread_mutex_unlock(&l->lock);
	return started;
}

/* A user's password against the bcrypt hash --web-config gives: matches
 * are kept (as a salted SHA-256 crypt of "user:password"), so a scraper
 * pays bcrypt once, not each scrape. An unknown user costs a bcrypt as
 * well: the time does not tell which users exist. */
static bool password_ok(struct pmt_listen *l, const char *user, const char *pass)
{
	const struct pmt_webuser *u = NULL;
	char *seen = NULL, *phrase = NULL, *got;
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	bool ok = false;
	size_t i;

	for (i = 0; i < l->web.nusers; i++)
		if (!strcmp(l->web.users[i].name, user))
			u = &l->web.users[i];
	if (!cd || asprintf(&phrase, "%s:%s", user, pass) < 0)
		goto out;
	if (u && (got = mhd.crypt_rn(phrase, l->auth_salt, cd, sizeof(*cd))) && *got != '*')
		seen = strdup(got);
	pthread_mutex_lock(&l->lock);
	for (i = 0; seen && i < AUTH_SEEN && !ok; i++)
		ok = l->auth_seen[i] && !strcmp(l->auth_seen[i], seen);
	pthread_mutex_unlock(&l->lock);
	if (ok)
		goto out;
	got = mhd.crypt_rn(pass, u ? u->hash : l->web.users[0].hash, cd, sizeof(*cd));
	if (!u || !got || *got == '*' || strlen(got) != strlen(u->hash))
		goto out;
	{ /* every byte compared: the time does not tell how many matched */
		unsigned char diff = 0;

		for (i = 0; got[i]; i++)
			diff |= (unsigned char)(got[i] ^ u->hash[i]);
		ok = !diff;
	}
	if (ok && seen) {
		pthread_mutex_lock(&l->lock);
		free(l->auth_seen[l->auth_next]);
		l->auth_seen[l->auth_next] = seen;
		l->auth_next = (l->auth_next + 1) % AUTH_SEEN;
		pthread_mutex_unlock(&l->lock);
		seen = NULL;
	}
out:
	if (phrase)
		explicit_bzero(phrase, strlen(phrase));
	free(phrase);
	free(seen);
	free(cd);
	return ok;
}

/* What --web-config asks of a client: a certificate its client CA
 * signed, a user's password. Counted when refused. */
static enum admission admit(struct pmt_listen *l, struct MHD_Connection *c)
{
	char *user, *pass = NULL;
	bool ok;

	if (l->web.client_auth != PMT_CLIENT_NONE) {
		const union MHD_ConnectionInfo *ci =
			mhd.MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
		gnutls_session_t ts = ci ? (gnutls_session_t)ci->tls_session : NULL;
		unsigned n = 0, status = ~0u;

		if (!ts)
			ok = false;
		else if (!mhd.gnutls_certificate_get_peers(ts, &n) || !n)
			ok = l->web.client_auth == PMT_CLIENT_VERIFY_IF_GIVEN;
		else
			ok = !mhd.gnutls_certificate_verify_peers2(ts, &status) && !status;
		if (!ok) {
			__atomic_add_fetch(&l->auth_failed[BAD_CLIENT_CERT], 1, __ATOMIC_RELAXED);
			return BAD_CLIENT_CERT;
		}
	}
	if (!l->web.nusers)
		return ADMITTED;
	user = mhd.MHD_basic_auth_get_username_password(c, &pass);
	ok = user && pass && password_ok(l, user, pass);
	if (pass) {
		explicit_bzero(pass, strlen(pass));
		mhd.MHD_free(pass);
	}
	if (user)
		mhd.MHD_free(user);
	if (ok)
		return ADMITTED;
	__atomic_add_fetch(&l->auth_failed[BAD_PASSWORD], 1, __ATOMIC_RELAXED);
	return BAD_PASSWORD;
}

/* The answer to a client admit() refused */
static enum MHD_Result refuse(struct MHD_Connection *c, enum admission why)
{
	static const char auth[] = "unauthorized\n";
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (why == BAD_CLIENT_CERT)
		return text_reply(c, MHD_HTTP_FORBIDDEN,
				  "a client certificate signed by the server's client CA is "
				  "needed\n");
	r = mhd.MHD_create_response_from_buffer(sizeof(auth) - 1, (void *)auth,
						MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	ret = mhd.MHD_queue_basic_auth_fail_response(c, AUTH_REALM, r);
	mhd.MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **state)
{
	struct pmt_listen *l = cls;
	struct pmt_buf b = {0};
	enum admission why;
	bool om;

	(void)version;
	(void)upload;
	if (!*state) { /* headers only so far: answer on the next call */
		*state = &seen;
		return MHD_YES;
	}
	if (*upload_size) { /* a body we do not want */
		*upload_size = 0;
		return MHD_YES;
	}
	if ((why = admit(l, c)) != ADMITTED)
		return refuse(c, why);
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return text_reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
	if (!wait_started(l))
		return text_reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "pmtrace is stopping\n");
	if (!strcmp(url, "/"))
		return text_reply(c, MHD_HTTP_OK,
				  l->profiles ? "pmtrace: metrics at /metrics, profiles at "
						"/debug/pprof/profile?seconds=N\n"
					      : "pmtrace: metrics at /metrics\n");
	if (!strcmp(url, "/debug/pprof/profile"))
		return serve_profile(l, c, state);
	if (!strcmp(url, "/debug/pprof/") || !strcmp(url, "/debug/pprof"))
		return serve_index(l, c);
	if (strcmp(url, "/metrics"))
		return text_reply(c, MHD_HTTP_NOT_FOUND,
				  "not found: metrics are at /metrics, profiles at "
				  "/debug/pprof/profile\n");
	om = wants_openmetrics(c);
	/* stacks make no labels: a profile's /metrics is pmtrace's own */
	if (!l->profiles &&
	    pmt_aggmaps__metrics(l->s->aggmaps, l->syms, l->s->opts->listen.metric, om, &b)) {
		pmt_buf__free(&b);
		return text_reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				  "reading the aggregation failed\n");
	}
	self_metrics(l, &b, om);
	if (om)
		pmt_buf__puts(&b, "# EOF\n");
	return reply(c, MHD_HTTP_OK, b.p ? b.p : calloc(1, 1), b.len,
		     om ? PMT_EXPO_OM_CONTENT_TYPE : PMT_EXPO_CONTENT_TYPE);
}

/* A request's end (its answer sent, or the connection gone) */
static void on_completed(void *cls, struct MHD_Connection *c, void **state,
			 enum MHD_RequestTerminationCode how)
{
	struct pmt_listen *l = cls;

	(void)c;
	(void)how;
	if (*state != &profiling)
		return;
	pthread_mutex_lock(&l->lock);
	l->answering--;
	pthread_cond_broadcast(&l->wake);
	pthread_mutex_unlock(&l->lock);
}

/* libmicrohttpd's messages: the last kept, to tell why it did not start */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct pmt_listen *l = cls;
	size_t n;

	pthread_mutex_lock(&l->lock);
	vsnprintf(l->mhd_said, sizeof(l->mhd_said), fmt, ap);
	n = strlen(l->mhd_said);
	while (n && (l->mhd_said[n - 1] == '\n' || l->mhd_said[n - 1] == '.'))
		l->mhd_said[--n] = 0;
	pthread_mutex_unlock(&l->lock);
}

/* The key and certificates as GnuTLS reads them: its own words when it
 * refuses them (libmicrohttpd's say only that TLS did not start) */
static int check_tls(const struct pmt_webcfg *w, const char *path, struct pmt_error *err)
{
	gnutls_certificate_credentials_t cred;
	gnutls_datum_t cert = {(unsigned char *)w->cert, (unsigned)strlen(w->cert)},
		       key = {(unsigned char *)w->key, (unsigned)strlen(w->key)},
		       ca = {(unsigned char *)w->client_ca,
			     w->client_ca ? (unsigned)strlen(w->client_ca) : 0};
	int r;

	if (mhd.gnutls_certificate_allocate_credentials(&cred) < 0)
		return -ENOMEM;
	r = mhd.gnutls_certificate_set_x509_key_mem2(cred, &cert, &key, GNUTLS_X509_FMT_PEM, NULL,
						     0);
	if (r < 0)
		pmt_error__usage(err, "--web-config %s: its key and certificate: %s", path,
				 mhd.gnutls_strerror(r));
	else if (w->client_ca && (r = mhd.gnutls_certificate_set_x509_trust_mem(
					  cred, &ca, GNUTLS_X509_FMT_PEM)) <= 0)
		pmt_error__usage(err, "--web-config %s: its client CA: %s", path,
				 r < 0 ? mhd.gnutls_strerror(r) : "no certificate in it");
	mhd.gnutls_certificate_free_credentials(cred);
	return r < 0 || (w->client_ca && !r) ? -EINVAL : 0;
}

/* The server, started at the bind: a key or certificate GnuTLS refuses
 * is told before anything is loaded. Its threads block pmtrace's
 * signals, which the main loop waits for. Requests wait for the start. */
static int start_daemon(struct pmt_listen *l, const struct pmt_listen_opts *lo,
			struct pmt_error *err)
{
	struct MHD_OptionItem o[16];
	char prio[128];
	sigset_t all, old;
	size_t n = 0;
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			 MHD_USE_POLL | MHD_USE_ERROR_LOG;

#define MHD_OPT(opt, v, p) o[n++] = (struct MHD_OptionItem){(opt), (intptr_t)(v), (void *)(p)}
	MHD_OPT(MHD_OPTION_EXTERNAL_LOGGER, mhd_log, l);
	MHD_OPT(MHD_OPTION_LISTEN_SOCKET, l->fd, NULL);
	MHD_OPT(MHD_OPTION_CONNECTION_LIMIT, MAX_CLIENTS, NULL);
	MHD_OPT(MHD_OPTION_CONNECTION_TIMEOUT, CLIENT_TIMEOUT_S, NULL);
	MHD_OPT(MHD_OPTION_THREAD_STACK_SIZE, THREAD_STACK, NULL);
	MHD_OPT(MHD_OPTION_NOTIFY_COMPLETED, on_completed, l);
	if (l->web.cert && check_tls(&l->web, lo->web_config, err))
		return -EINVAL;
	if (l->web.cert) {
		flags |= MHD_USE_TLS;
		pmt_webcfg__priorities(&l->web, prio, sizeof(prio));
		MHD_OPT(MHD_OPTION_HTTPS_MEM_CERT, 0, l->web.cert);
		MHD_OPT(MHD_OPTION_HTTPS_MEM_KEY, 0, l->web.key);
		MHD_OPT(MHD_OPTION_HTTPS_PRIORITIES, 0, prio);
		if (l->web.client_ca)
			MHD_OPT(MHD_OPTION_HTTPS_MEM_TRUST, 0, l->web.client_ca);
	}
	MHD_OPT(MHD_OPTION_END, 0, NULL);
#undef MHD_OPT
	web_headers = &l->web;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	l->mhd = mhd.MHD_start_daemon(flags, 0, NULL, NULL, on_request, l, MHD_OPTION_ARRAY, o,
				      MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (l->mhd)
		return 0;
	if (l->web.cert)
		return pmt_error__usage(err, "--web-config %s: the HTTPS server did not start: %s",
					lo->web_config,
					*l->mhd_said ? l->mhd_said : "its key or certificate");
	return pmt_error__runtime(err, -EIO, "cannot start the metrics server: %s",
				  *l->mhd_said ? l->mhd_said : strerror(errno ? errno : EIO));
}

int pmt_listen__start(struct pmt_listen *l, struct pmt_session *s, struct pmt_error *err)
{
	(void)err;
	pthread_mutex_lock(&l->lock);
	l->s = s;
	l->syms = pmt_session__syms(s); /* made now: not lazily, by two threads */
	l->start_time = (double)time(NULL);
	l->started = true;
	pthread_cond_broadcast(&l->wake);
	pthread_mutex_unlock(&l->lock);
	return 0;
}

void pmt_listen__free(struct pmt_listen *l)
{
	struct timespec until;

	if (!l)
		return;
	/* profiles being taken end now, and are told so before the
	 * server stops (a bounded wait: a client may not read) */
	pthread_mutex_lock(&l->lock);
	l->stopping = true;
	pthread_cond_broadcast(&l->wake);
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_nsec += (STOP_ANSWER_MS % 1000) * 1000000L;
	until.tv_sec += STOP_ANSWER_MS / 1000 + until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	while (l->answering > 0 && pthread_cond_timedwait(&l->wake, &l->lock, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&l->lock);
	if (l->mhd)
		mhd.MHD_stop_daemon(l->mhd); /* joins its threads; closes the socket */
	else
		close(l->fd);
	pthread_cond_destroy(&l->wake);
	pthread_mutex_destroy(&l->lock);
	for (unsigned i = 0; i < AUTH_SEEN; i++)
		free(l->auth_seen[i]);
	pmt_webcfg__free(&l->web);
	free(l);
}
