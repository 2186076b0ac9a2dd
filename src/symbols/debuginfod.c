// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <elfutils/debuginfod.h>
#include "symbols/debuginfod.h"
#include "util/log.h"
#include "util/strutil.h"

struct job {
	char id[41];
	enum pmt_fetch_state state;
	char *path;
};

/* the library's calls this uses, opened at run time */
struct lib {
	void *h;
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int, char **);
	void (*set_progressfn)(debuginfod_client *, debuginfod_progressfn_t);
};

struct pmt_debuginfod {
	struct lib lib;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	struct job jobs[PMT_DEBUGINFOD_MAX];
	size_t n, next; /* asked; the next to fetch */
	uint64_t generation, refused;
	bool stop;
	uint64_t deadline_ns; /* of the fetch under way (the thread's) */
};

/* false with why in *err */
static bool load(struct lib *l, const char **err)
{
	l->h = dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_LOCAL);
	*err = "a call is missing";
	if (!l->h) {
		*err = dlerror();
		return false;
	}
	*(void **)&l->begin = dlsym(l->h, "debuginfod_begin");
	*(void **)&l->end = dlsym(l->h, "debuginfod_end");
	*(void **)&l->find_debuginfo = dlsym(l->h, "debuginfod_find_debuginfo");
	*(void **)&l->set_progressfn = dlsym(l->h, "debuginfod_set_progressfn");
	if (l->begin && l->end && l->find_debuginfo && l->set_progressfn)
		return true;
	dlclose(l->h);
	return false;
}

/* the object whose fetcher this thread is */
static __thread struct pmt_debuginfod *self;

/* Called by the library as a transfer goes on (at least every second):
 * nonzero abandons it. */
static int progress(debuginfod_client *c, long a, long b)
{
	bool stop;

	(void)c;
	(void)a;
	(void)b;
	pthread_mutex_lock(&self->lock);
	stop = self->stop || pmt_now_ns() > self->deadline_ns;
	pthread_mutex_unlock(&self->lock);
	return stop;
}

static void *fetcher(void *arg)
{
	struct pmt_debuginfod *d = arg;
	debuginfod_client *c = d->lib.begin();
	char id[41], *path;
	size_t at;
	int fd;

	self = d;
	if (c)
		d->lib.set_progressfn(c, progress);
	pthread_mutex_lock(&d->lock);
	for (;;) {
		while (!d->stop && d->next == d->n)
			pthread_cond_wait(&d->work, &d->lock);
		if (d->stop)
			break;
		at = d->next++;
		memcpy(id, d->jobs[at].id, sizeof(id));
		d->deadline_ns = pmt_now_ns() + PMT_DEBUGINFOD_FILE_MS * 1000000ULL;
		pthread_mutex_unlock(&d->lock);
		path = NULL;
		fd = c ? d->lib.find_debuginfo(c, (const unsigned char *)id, 0, &path) : -ENOMEM;
		if (fd >= 0)
			close(fd);
		pthread_mutex_lock(&d->lock);
		d->jobs[at].state = fd >= 0 && path ? PMT_FETCH_DONE : PMT_FETCH_FAILED;
		d->jobs[at].path = fd >= 0 ? path : NULL;
		if (fd < 0)
			free(path);
		d->generation++;
		pthread_cond_broadcast(&d->done);
	}
	pthread_mutex_unlock(&d->lock);
	if (c)
		d->lib.end(c);
	return NULL;
}

bool pmt_debuginfod__named(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	return urls && urls[strspn(urls, " \t")];
}

struct pmt_debuginfod *pmt_debuginfod__new(void)
{
	struct pmt_debuginfod *d;
	const char *err;

	if (!pmt_debuginfod__named())
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	if (!load(&d->lib, &err)) {
		pmt_warn("DEBUGINFOD_URLS is set but %s cannot be loaded (%s): stripped files' "
			 "frames stay unnamed; install libdebuginfod1",
			 DEBUGINFOD_SONAME, err ? err : "?");
		free(d);
		return NULL;
	}
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->work, NULL);
	pthread_cond_init(&d->done, NULL);
	if (pthread_create(&d->thread, NULL, fetcher, d)) {
		pmt_warn(
			"cannot start the debuginfod fetcher: stripped files' frames stay unnamed");
		dlclose(d->lib.h);
		free(d);
		return NULL;
	}
	return d;
}

void pmt_debuginfod__free(struct pmt_debuginfod *d)
{
	size_t i;

	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	d->stop = true;
	pthread_cond_broadcast(&d->work);
	pthread_mutex_unlock(&d->lock);
	pthread_join(d->thread, NULL);
	for (i = 0; i < d->n; i++)
		free(d->jobs[i].path);
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->work);
	pthread_cond_destroy(&d->done);
	/* libcurl's and the library's state stay mapped: unloading them
	 * while their atexit handlers are registered is not safe */
	free(d);
}

static struct job *find(struct pmt_debuginfod *d, const char *build_id)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (!strcmp(d->jobs[i].id, build_id))
			return &d->jobs[i];
	return NULL;
}

bool pmt_debuginfod__ask(struct pmt_debuginfod *d, const char *build_id)
{
	bool ok = true;

	if (!d || !build_id[0] || strlen(build_id) >= sizeof(d->jobs[0].id))
		return false;
	pthread_mutex_lock(&d->lock);
	if (find(d, build_id)) {
		/* asked already */
	} else if (d->n == PMT_DEBUGINFOD_MAX) {
		d->refused++;
		ok = false;
	} else {
		strcpy(d->jobs[d->n].id, build_id);
		d->jobs[d->n++].state = PMT_FETCH_PENDING;
		pthread_cond_signal(&d->work);
	}
	pthread_mutex_unlock(&d->lock);
	return ok;
}

enum pmt_fetch_state pmt_debuginfod__state(struct pmt_debuginfod *d, const char *build_id,
					   const char **path)
{
	enum pmt_fetch_state st = PMT_FETCH_NONE;
	struct job *j;

	if (!d)
		return st;
	pthread_mutex_lock(&d->lock);
	if ((j = find(d, build_id))) {
		st = j->state;
		*path = j->path;
	}
	pthread_mutex_unlock(&d->lock);
	return st;
}

uint64_t pmt_debuginfod__generation(struct pmt_debuginfod *d)
{
	uint64_t g;

	if (!d)
		return 0;
	pthread_mutex_lock(&d->lock);
	g = d->generation;
	pthread_mutex_unlock(&d->lock);
	return g;
}

bool pmt_debuginfod__wait(struct pmt_debuginfod *d, int ms)
{
	struct timespec until;
	bool idle;

	if (!d)
		return true;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&d->lock);
	while (d->generation < d->n &&
	       pthread_cond_timedwait(&d->done, &d->lock, &until) != ETIMEDOUT)
		;
	idle = d->generation == d->n;
	pthread_mutex_unlock(&d->lock);
	return idle;
}

void pmt_debuginfod__stats(struct pmt_debuginfod *d, struct pmt_debuginfod_stats *st)
{
	size_t i;

	memset(st, 0, sizeof(*st));
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	for (i = 0; i < d->n; i++) {
		st->fetched += d->jobs[i].state == PMT_FETCH_DONE;
		st->failed += d->jobs[i].state == PMT_FETCH_FAILED;
		st->pending += d->jobs[i].state == PMT_FETCH_PENDING;
	}
	st->refused = d->refused;
	pthread_mutex_unlock(&d->lock);
}
