// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --listen: the aggregation served at /metrics, read from the maps at
 * each scrape. libmicrohttpd runs its own thread (started with the
 * signals blocked, so they still reach the main loop) and polls its
 * sockets without blocking: a client that is slow, silent, malformed or
 * gone costs that thread a socket until the connection timeout, never an
 * event; a scrape reads the maps while the kernel keeps updating them.
 */
#include <dlfcn.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include "output/exposition.h"
#include "run/aggmaps.h"
#include "run/listen.h"
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
#define MHD_CALLS(X)                       \
	X(MHD_start_daemon)                \
	X(MHD_stop_daemon)                 \
	X(MHD_create_response_from_buffer) \
	X(MHD_add_response_header)         \
	X(MHD_queue_response)              \
	X(MHD_destroy_response)            \
	X(MHD_lookup_connection_value)
#define MHD_FIELD(name) __typeof__(name) *name;
static struct {
	MHD_CALLS(MHD_FIELD)
} mhd;
#undef MHD_FIELD

static int load_mhd(struct pmt_error *err)
{
	static bool loaded;
	void *lib;

	if (loaded)
		return 0;
	lib = dlopen(PMT_MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return pmt_error__runtime(
			err, -ENOENT, "--listen needs libmicrohttpd (Debian: libmicrohttpd12): %s",
			dlerror());
#define MHD_LOAD(name)                                  \
	if (!(*(void **)&mhd.name = dlsym(lib, #name))) \
		return pmt_error__runtime(err, -ENOENT, "%s: no %s", PMT_MHD_SONAME, #name);
	MHD_CALLS(MHD_LOAD)
#undef MHD_LOAD
	loaded = true; /* and kept loaded: its thread runs until the end */
	return 0;
}

#define MAX_CLIENTS 128
#define CLIENT_TIMEOUT_S 10

struct pmt_listen {
	int fd;
	struct MHD_Daemon *mhd;
	struct pmt_session *s;
	struct pmt_syms *syms; /* the session's, fetched by the main thread */
	double start_time;     /* Unix seconds */
};

int pmt_listen__bind(struct pmt_listen **out, const struct pmt_listen_opts *lo,
		     struct pmt_error *err)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV},
			*ai = NULL;
	const char *host = *lo->host ? lo->host : "127.0.0.1";
	struct sockaddr_storage sa;
	socklen_t salen = sizeof(sa);
	char port[16], shown[INET6_ADDRSTRLEN];
	struct pmt_listen *l;
	int fd = -1, one = 1, r;

	*out = NULL;
	if ((r = load_mhd(err)))
		return r;
	snprintf(port, sizeof(port), "%d", lo->port);
	r = getaddrinfo(host, port, &hints, &ai);
	if (r) {
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
		return r;
	}
	freeaddrinfo(ai);
	l = calloc(1, sizeof(*l));
	if (!l) {
		close(fd);
		return -ENOMEM;
	}
	l->fd = fd;
	if (sa.ss_family == AF_INET6) {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&sa;

		inet_ntop(AF_INET6, &a6->sin6_addr, shown, sizeof(shown));
		pmt_info("serving metrics at http://[%s]:%d/metrics", shown, ntohs(a6->sin6_port));
	} else {
		struct sockaddr_in *a4 = (struct sockaddr_in *)&sa;

		inet_ntop(AF_INET, &a4->sin_addr, shown, sizeof(shown));
		pmt_info("serving metrics at http://%s:%d/metrics", shown, ntohs(a4->sin_port));
	}
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
	counter(b, "pmtrace_dropped_updates_total",
		"aggregation updates dropped: --max-keys full (max_keys) or latency starts "
		"not stored (latency_start)",
		om);
	pmt_buf__printf(b, "pmtrace_dropped_updates_total{reason=\"max_keys\"} %llu\n",
			(unsigned long long)pmt_session__stat(s, PMT_STAT_AGG_FULL));
	pmt_buf__printf(b, "pmtrace_dropped_updates_total{reason=\"latency_start\"} %llu\n",
			(unsigned long long)pmt_session__stat(s, PMT_STAT_LAT_FULL));
	counter(b, "pmtrace_lost_events_total", "events lost because a perf buffer was full", om);
	pmt_buf__printf(b, "pmtrace_lost_events_total %llu\n",
			(unsigned long long)(pmt_session__stat(s, PMT_STAT_RING_FULL) +
					     pmt_session__stat(s, PMT_STAT_OUTPUT_ERR)));
	if (s->opts->agg.lat_start) {
		counter(b, "pmtrace_latency_unmatched_ends_total",
			"latency end events without a start", om);
		pmt_buf__printf(b, "pmtrace_latency_unmatched_ends_total %llu\n",
				(unsigned long long)pmt_session__stat(s, PMT_STAT_LAT_NOSTART));
	}
}

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
	mhd.MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		mhd.MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = mhd.MHD_queue_response(c, status, r);
	mhd.MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result text_reply(struct MHD_Connection *c, unsigned status, const char *text)
{
	char *body = strdup(text);

	return body ? reply(c, status, body, strlen(body), "text/plain; charset=utf-8") : MHD_NO;
}

/* Does the scraper ask for OpenMetrics (Prometheus does, first)? */
static bool wants_openmetrics(struct MHD_Connection *c)
{
	const char *accept = mhd.MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");

	return accept && strstr(accept, "application/openmetrics-text");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **state)
{
	static int seen;
	struct pmt_listen *l = cls;
	struct pmt_buf b = {0};
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
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return text_reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
	if (!strcmp(url, "/"))
		return text_reply(c, MHD_HTTP_OK, "pmtrace: metrics at /metrics\n");
	if (strcmp(url, "/metrics"))
		return text_reply(c, MHD_HTTP_NOT_FOUND, "not found: metrics are at /metrics\n");
	om = wants_openmetrics(c);
	if (pmt_aggmaps__metrics(l->s->aggmaps, l->syms, l->s->opts->listen.metric, om, &b)) {
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

int pmt_listen__start(struct pmt_listen *l, struct pmt_session *s, struct pmt_error *err)
{
	l->s = s;
	l->syms = pmt_session__syms(s); /* made now: not lazily, by two threads */
	l->start_time = (double)time(NULL);
	l->mhd = mhd.MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, NULL, NULL, on_request, l,
		MHD_OPTION_LISTEN_SOCKET, l->fd, MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CLIENTS,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CLIENT_TIMEOUT_S, MHD_OPTION_END);
	if (!l->mhd) {
		return pmt_error__runtime(err, -EIO, "cannot start the metrics server: %s",
					  strerror(errno ? errno : EIO));
	}
	return 0;
}

void pmt_listen__free(struct pmt_listen *l)
{
	if (!l)
		return;
	if (l->mhd)
		mhd.MHD_stop_daemon(l->mhd); /* joins its thread; closes the socket */
	else
		close(l->fd);
	free(l);
}
