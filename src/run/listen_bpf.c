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
#include <arpa/inet.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include "output/exposition.h"
#include "aggregate/maps.h"
#include "run/listen.h"
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
#define MHD_CALLS(X)                       \
	X(MHD_start_daemon)                \
	X(MHD_stop_daemon)                 \
	X(MHD_create_response_from_buffer) \
	X(MHD_add_response_header)         \
	X(MHD_queue_response)              \
	X(MHD_destroy_response)            \
	X(MHD_lookup_connection_value)     \
	X(MHD_set_connection_option)
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
/* each connection's thread: what a request needs is on the heap */
#define THREAD_STACK (256 * 1024)
/* /debug/pprof/profile?seconds=N: Go's default, and a bound */
#define PROFILE_DEFAULT_S 30
#define PROFILE_MAX_S 3600
#define PROFILE_TYPE "application/octet-stream"

struct pmt_listen {
	int fd;
	struct MHD_Daemon *mhd;
	struct pmt_session *s;
	struct pmt_syms *syms; /* the session's, fetched by the main thread */
	double start_time;     /* Unix seconds */
	bool profiles;	       /* the aggregation is by stack: served as profiles */
	/* profiles being taken wait on this; stopping ends them early */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stopping;
	int answering; /* profile requests not yet answered to the end */
};

/* A request's state: its headers seen, or a profile being answered */
static int seen, profiling;
/* At the stop, how long profile requests may take to be answered */
#define STOP_ANSWER_MS 2000

int pmt_listen__bind(struct pmt_listen **out, const struct pmt_listen_opts *lo, bool profiles,
		     struct pmt_error *err)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV},
			*ai = NULL;
	const char *host = *lo->host ? lo->host : "127.0.0.1";
	struct sockaddr_storage sa;
	socklen_t salen = sizeof(sa);
	char port[16], shown[INET6_ADDRSTRLEN + 2];
	pthread_condattr_t ca;
	int port_no;
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
	l->profiles = profiles;
	pthread_mutex_init(&l->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (sa.ss_family == AF_INET6) {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&sa;

		inet_ntop(AF_INET6, &a6->sin6_addr, shown + 1, sizeof(shown) - 2);
		shown[0] = '[';
		strcat(shown, "]");
		port_no = ntohs(a6->sin6_port);
	} else {
		struct sockaddr_in *a4 = (struct sockaddr_in *)&sa;

		inet_ntop(AF_INET, &a4->sin_addr, shown, sizeof(shown));
		port_no = ntohs(a4->sin_port);
	}
	pmt_info("serving metrics at http://%s:%d/metrics", shown, port_no);
	if (profiles)
		pmt_info("serving profiles at http://%s:%d/debug/pprof/profile?seconds=N", shown,
			 port_no);
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
enum loss_src { FROM_STAT, LOST_KEYS, KEY_CONFLICT, MISSED, FORGOTTEN };
static const struct loss {
	const char *family, *label, *help;
	enum loss_src src;
	enum pmt_stat stat;
} losses[] = {
	{"pmtrace_dropped_updates_total", "reason=\"max_keys\"",
	 "aggregation updates dropped: --max-keys full (max_keys), the totals' bound (totals), "
	 "latency starts not stored (latency_start), switches off the CPU not timed "
	 "(offcpu_threads)",
	 FROM_STAT, PMT_STAT_AGG_FULL},
	{"pmtrace_dropped_updates_total", "reason=\"totals\"", NULL, LOST_KEYS, 0},
	{"pmtrace_dropped_updates_total", "reason=\"latency_start\"", NULL, FROM_STAT,
	 PMT_STAT_LAT_FULL},
	{"pmtrace_dropped_updates_total", "reason=\"offcpu_threads\"", NULL, FROM_STAT,
	 PMT_STAT_OFFCPU_FULL},
	{"pmtrace_lost_stacks_total", "reason=\"table_full\"",
	 "samples whose stack was lost: the stack table full (table_full), another stack's hash "
	 "(collision), the kernel's memory (kernel), another stack's key while draining "
	 "(key_conflict)",
	 FROM_STAT, PMT_STAT_STACK_FULL},
	{"pmtrace_lost_stacks_total", "reason=\"collision\"", NULL, FROM_STAT,
	 PMT_STAT_STACK_COLLISION},
	{"pmtrace_lost_stacks_total", "reason=\"kernel\"", NULL, FROM_STAT, PMT_STAT_STACK_ERR},
	{"pmtrace_lost_stacks_total", "reason=\"key_conflict\"", NULL, KEY_CONFLICT, 0},
	{"pmtrace_short_stacks_total", "reason=\"no_text_mapping\"",
	 "user stacks that may end early: a frame-pointer caller in no text mapping "
	 "(no_text_mapping), a file whose unwind tables were still being read "
	 "(tables_pending), a copy to finish in user space the rings had no room for "
	 "(rings_full)",
	 FROM_STAT, PMT_STAT_UNWIND_ENDED},
	{"pmtrace_short_stacks_total", "reason=\"tables_pending\"", NULL, FROM_STAT,
	 PMT_STAT_UNWIND_PENDING},
	{"pmtrace_short_stacks_total", "reason=\"rings_full\"", NULL, FROM_STAT,
	 PMT_STAT_DEFER_CUT},
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
	char *end;
	int w;

	if (!l->profiles)
		return text_reply(c, MHD_HTTP_NOT_FOUND,
				  "no profile: this pmtrace aggregates no stacks; run it with -e "
				  "EVENT --stack (or --offcpu) to serve profiles\n");
	if (arg) {
		secs = strtol(arg, &end, 10);
		if (!*arg || *end || secs < 1 || secs > PROFILE_MAX_S)
			return text_reply(c, MHD_HTTP_BAD_REQUEST,
					  "seconds: expected a whole number of seconds from 1 to "
					  "3600\n");
	}
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

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **state)
{
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

int pmt_listen__start(struct pmt_listen *l, struct pmt_session *s, struct pmt_error *err)
{
	l->s = s;
	l->syms = pmt_session__syms(s); /* made now: not lazily, by two threads */
	l->start_time = (double)time(NULL);
	l->mhd = mhd.MHD_start_daemon(
		MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0,
		NULL, NULL, on_request, l, MHD_OPTION_LISTEN_SOCKET, l->fd,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CLIENTS, MHD_OPTION_CONNECTION_TIMEOUT,
		(unsigned)CLIENT_TIMEOUT_S, MHD_OPTION_THREAD_STACK_SIZE, (size_t)THREAD_STACK,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, l, MHD_OPTION_END);
	if (!l->mhd) {
		return pmt_error__runtime(err, -EIO, "cannot start the metrics server: %s",
					  strerror(errno ? errno : EIO));
	}
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
	free(l);
}
