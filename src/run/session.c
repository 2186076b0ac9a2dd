// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Session lifecycle, libbpf-tools style: open -> configure rodata and
 * autoload -> load -> fill maps -> attach. Probes are resolved (names
 * checked, formats parsed) before anything touches the kernel, so a usage
 * error leaves nothing behind.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <stddef.h>
#include <fcntl.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "util/log.h"
#include "filter/filter.h"
#include "run/aggmaps.h"
#include "run/session.h"
#include "util/strutil.h"
#include "output/symbols.h"
#include "pmtrace.skel.h"

static int compile_filter(struct pmt_probe *p, const char *expr)
{
	struct pmt_filter_error ferr;
	struct pmt_buf b = {0};

	p->filter = calloc(1, sizeof(*p->filter));
	if (!p->filter)
		return -ENOMEM;
	if (!pmt_filter__compile(expr, p->fmt, p->name, p->filter, &ferr)) {
		if (pmt_verbose) {
			pmt_filter__dump(&b, p->filter);
			pmt_eprintf("pmtrace: %s: filter program:\n%s", p->name, pmt_buf__cstr(&b));
			pmt_buf__free(&b);
		}
		return 0;
	}
	pmt_filter__format_error(&b, expr, &ferr);
	pmt_eprintf("pmtrace: %s", pmt_buf__cstr(&b));
	pmt_buf__free(&b);
	return -EINVAL;
}

int pmt_session__add_probe(struct pmt_session *s, const struct pmt_provider *prov, const char *name,
			   struct pmt_format *fmt, const char *filter)
{
	struct pmt_probe *p;
	uint32_t i;

	char label[512];
	int dup = 1;

	/* The same probe twice with the same filter is traced once; with
	 * another filter it is a second probe, shown as name#2. */
	for (i = 0; i < s->nr_probes; i++) {
		if (strcmp(s->probes[i].base, name))
			continue;
		if ((!filter && !s->probes[i].filter_expr) ||
		    (filter && s->probes[i].filter_expr &&
		     !strcmp(filter, s->probes[i].filter_expr))) {
			pmt_format__free(fmt);
			return 0;
		}
		dup++;
	}
	if (dup > PMT_TP_INSTANCES) {
		pmt_err("%s given %d times: at most %d (join filters with ||)", name, dup,
			PMT_TP_INSTANCES);
		pmt_format__free(fmt);
		return -EINVAL;
	}
	if (dup > 1)
		snprintf(label, sizeof(label), "%s#%d", name, dup);
	else
		snprintf(label, sizeof(label), "%s", name);
	if (s->nr_probes >= PMT_MAX_PROBES) {
		pmt_err("too many probes: at most %d", PMT_MAX_PROBES);
		pmt_format__free(fmt);
		return -E2BIG;
	}
	p = realloc(s->probes, (s->nr_probes + 1) * sizeof(*p));
	if (!p) {
		pmt_format__free(fmt);
		return -ENOMEM;
	}
	s->probes = p;
	p = &s->probes[s->nr_probes];
	memset(p, 0, sizeof(*p));
	p->id = s->nr_probes++; /* from here on pmt_session__free frees it */
	p->prov = prov;
	p->fmt = fmt;
	p->name = strdup(label);
	p->base = strdup(name);
	p->filter_expr = filter;
	p->instance = dup - 1;
	if (!p->name || !p->base)
		return -ENOMEM;
	return filter ? compile_filter(p, filter) : 0;
}

int pmt_online_cpus(uint64_t *mask)
{
	char *text, err[128];
	int ret;

	ret = pmt_read_file("/sys/devices/system/cpu/online", &text, NULL);
	if (ret)
		return ret;
	text[strcspn(text, "\n")] = '\0';
	ret = pmt_parse_cpulist(text, mask, PMT_MAX_CPUS, err, sizeof(err));
	free(text);
	return ret;
}

int pmt_first_online_cpu(void)
{
	uint64_t mask[PMT_MAX_CPUS / 64];
	int i;

	if (pmt_online_cpus(mask))
		return 0;
	for (i = 0; i < PMT_MAX_CPUS; i++)
		if (mask[i / 64] & (1ULL << (i % 64)))
			return i;
	return 0;
}

struct pmt_probe *pmt_session__probe(struct pmt_session *s, uint32_t id)
{
	return id < s->nr_probes ? &s->probes[id] : NULL;
}

/* --pprof's value beside the sample count: CPU time for the CPU clocks
 * (each sample stands for one period, 1/freq s when sampling by rate),
 * events for others sampled by --period; nothing else is known. */
static void profile_info(struct pmt_session *s)
{
	const struct pmt_opts *o = s->opts;
	const char *ev = o->nr_probes ? o->probes[0].spec : "";
	int i;

	for (i = 0; i < o->nr_probes; i++)
		if (o->probes[i].kind != PMT_PROBE_PERF || strcmp(o->probes[i].spec, ev))
			return;
	if (!strcmp(ev, "cpu-clock") || !strcmp(ev, "task-clock"))
		pmt_agg__profile_info(s->agg, "cpu", "nanoseconds",
				      o->period
					      ? (int64_t)o->period
					      : (int64_t)(1000000000ULL / (o->freq ? o->freq : 1)));
	else if (o->period)
		pmt_agg__profile_info(s->agg, ev, "count", (int64_t)o->period);
	else
		pmt_agg__profile_info(s->agg, NULL, NULL, 0);
}

/* The aggregation sees the probes' names and formats, and sets what each
 * does with its events. */
static int compile_aggregation(struct pmt_session *s)
{
	struct pmt_agg_probe *ap = calloc(s->nr_probes ? s->nr_probes : 1, sizeof(*ap));
	uint32_t i;
	int err;

	if (!ap)
		return -ENOMEM;
	for (i = 0; i < s->nr_probes; i++) {
		ap[i].name = s->probes[i].name;
		ap[i].fmt = s->probes[i].fmt;
	}
	err = pmt_agg__compile(&s->opts->agg, ap, s->nr_probes, &s->stack, &s->agg);
	for (i = 0; !err && s->agg && i < s->nr_probes; i++) {
		s->probes[i].action = ap[i].action;
		s->probes[i].agg = ap[i].cfg;
	}
	free(ap);
	if (!err && s->agg && s->opts->agg.pprof)
		profile_info(s);
	return err;
}

int pmt_session__resolve(struct pmt_session *s, const struct pmt_opts *opts)
{
	char err[256];
	int i, ret;

	s->opts = opts;
	s->stack = opts->stack;
	s->ncpus = libbpf_num_possible_cpus();
	if (s->ncpus <= 0) {
		pmt_err("cannot read the possible CPUs: %s", strerror(-s->ncpus));
		return -EINVAL;
	}
	if (s->ncpus > PMT_MAX_CPUS)
		s->ncpus = PMT_MAX_CPUS;
	if (opts->cpus) {
		if (pmt_parse_cpulist(opts->cpus, s->cpu_mask, s->ncpus, err, sizeof(err))) {
			pmt_err("%s", err);
			pmt_hint("this machine has CPUs 0-%d", s->ncpus - 1);
			return -EINVAL;
		}
		s->filter_cpu = true;
	}
	for (i = 0; i < opts->nr_probes; i++) {
		const struct pmt_provider *prov = pmt_provider__get(opts->probes[i].kind);

		ret = prov->resolve(s, &opts->probes[i]);
		if (ret)
			return ret;
	}
	if (opts->agg.lat_start) {
		/* probe 0 starts the measurement, probe 1 ends it; a
		 * function alone is measured from its entry to its return */
		struct pmt_probe_arg ends[2] = {{0}};

		ends[0].kind = pmt_probe_kind_of(opts->agg.lat_start, &ends[0].spec);
		if (opts->agg.lat_end) {
			ends[1].kind = pmt_probe_kind_of(opts->agg.lat_end, &ends[1].spec);
		} else {
			ends[1].kind = ends[0].kind == PMT_PROBE_KPROBE ? PMT_PROBE_KRETPROBE
									: PMT_PROBE_URETPROBE;
			ends[1].spec = ends[0].spec;
		}
		for (i = 0; i < 2; i++) {
			if (strpbrk(ends[i].spec, "*?[")) {
				pmt_err("--latency: '%s': name one probe, not a glob",
					ends[i].spec);
				return -EINVAL;
			}
			ret = pmt_provider__get(ends[i].kind)->resolve(s, &ends[i]);
			if (ret)
				return ret;
		}
		if (s->nr_probes != 2) {
			pmt_err("--latency: START and END must be different probes");
			return -EINVAL;
		}
	}
	return compile_aggregation(s);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && pmt_verbose < 2)
		return 0;
	if (level == LIBBPF_INFO && pmt_verbose < 1)
		return 0;
	if (level == LIBBPF_WARN && pmt_verbose < 1)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static bool prov_used(const struct pmt_session *s, const struct pmt_provider *prov)
{
	uint32_t i;

	for (i = 0; i < s->nr_probes; i++)
		if (s->probes[i].prov == prov)
			return true;
	return false;
}

static int add_targets(struct pmt_session *s)
{
	int fd = bpf_map__fd(s->skel->maps.pmt_targets);
	__u32 key;
	__u8 val;

	if (s->opts->pid) {
		key = (__u32)s->opts->pid;
		val = PMT_TARGET_ACTIVE;
	} else {
		key = (__u32)s->child.pid;
		val = PMT_TARGET_PENDING;
	}
	if (bpf_map_update_elem(fd, &key, &val, BPF_ANY)) {
		int err = -errno;

		pmt_err("cannot add the target process to the BPF map: %s", strerror(-err));
		return err;
	}
	return 0;
}

/* User stacks from CFI where the kernel can, else frame pointers. */
static void size_unwinder(struct pmt_session *s)
{
	bool on = (s->stack & PMT_STACK_USER) && !s->opts->unwind_fp;
	const char *why;

	if (on && !pmt_unwind__supported(&why)) {
		pmt_warn("user stacks by frame pointers (as --unwind fp): %s", why);
		on = false;
	}
	pmt_unwind__size(s->skel, on, s->agg != NULL);
	pmt_unwinder__init(&s->unwind, s->skel);
}

int pmt_session__load(struct pmt_session *s)
{
	const struct pmt_provider *prov;
	struct bpf_program *prog;
	bool targeted = !s->opts->system_wide;
	bool follow = targeted && s->opts->cmd;
	uint32_t i;
	int err;

	libbpf_set_print(libbpf_print);
	s->skel = pmtrace_bpf__open();
	if (!s->skel) {
		err = -errno;
		pmt_err("cannot open the BPF object: %s", strerror(errno));
		return err;
	}
	s->skel->rodata->pmt_filter_target = targeted;
	s->skel->rodata->pmt_follow_forks = follow;
	s->skel->rodata->pmt_filter_cpu = s->filter_cpu;
	s->skel->rodata->pmt_only_probe = s->nr_probes == 1 ? 0 : -1;
	s->skel->rodata->pmt_use_filter = false;
	s->skel->rodata->pmt_use_agg = false;
	s->skel->rodata->pmt_ctx_words = PMT_CTX_DIRECT / 4;
	for (i = 0; i < s->nr_probes; i++) {
		const struct pmt_format *fmt = s->probes[i].fmt;

		/* PMT_FFLAG_CTX loads: no further than the shortest record */
		if (fmt && fmt->raw_ctx && fmt->fixed_size / 4 < s->skel->rodata->pmt_ctx_words)
			s->skel->rodata->pmt_ctx_words = fmt->fixed_size / 4;
		if (s->probes[i].filter)
			s->skel->rodata->pmt_use_filter = true;
		if (s->probes[i].action != PMT_ACT_STREAM)
			s->skel->rodata->pmt_use_agg = true;
	}
	memcpy((void *)s->skel->rodata->pmt_cpu_mask, s->cpu_mask, sizeof(s->cpu_mask));
	bpf_map__set_max_entries(s->skel->maps.pmt_probes, s->nr_probes ? s->nr_probes : 1);
	bpf_map__set_max_entries(s->skel->maps.pmt_filtered, s->nr_probes ? s->nr_probes : 1);
	bpf_map__set_max_entries(s->skel->maps.pmt_hits, s->agg && s->nr_probes ? s->nr_probes : 1);
	pmt_aggmaps__size(s->skel, s->agg);
	bpf_map__set_max_entries(s->skel->maps.pmt_stacks, 1); /* see perf_event.c */
	size_unwinder(s);
	if (!targeted)
		bpf_map__set_max_entries(s->skel->maps.pmt_targets, 1);

	/* load only what this session uses */
	bpf_object__for_each_program(prog, s->skel->obj)
		bpf_program__set_autoload(prog, false);
	bpf_program__set_autoload(s->skel->progs.pmt_fork, follow);
	bpf_program__set_autoload(s->skel->progs.pmt_exec, follow);
	bpf_program__set_autoload(s->skel->progs.pmt_exit, follow);
	pmt_unwind__autoload(s->skel);
	for (i = 0; (prov = pmt_provider__nth(i)); i++)
		if (prov->prepare && prov_used(s, prov))
			prov->prepare(s);

	err = pmtrace_bpf__load(s->skel);
	if (err) {
		pmt_err("failed to load BPF programs: %s", strerror(-err));
		if (!pmt_verbose)
			pmt_hint("-v shows libbpf's and the verifier's messages");
		return err;
	}
	return 0;
}

int pmt_session__attach(struct pmt_session *s)
{
	bool targeted = !s->opts->system_wide;
	bool follow = targeted && s->opts->cmd;
	uint32_t i;
	int err;

	if (follow) {
		/* target tracking first, so no fork or exec slips past */
		if (!(s->skel->links.pmt_fork = bpf_program__attach(s->skel->progs.pmt_fork)) ||
		    !(s->skel->links.pmt_exec = bpf_program__attach(s->skel->progs.pmt_exec)) ||
		    !(s->skel->links.pmt_exit = bpf_program__attach(s->skel->progs.pmt_exit))) {
			err = -errno;
			pmt_err("cannot attach the process-tracking tracepoints: %s",
				strerror(errno));
			return err;
		}
	}
	if (targeted && (err = add_targets(s)))
		return err;
	if ((err = pmt_unwinder__start(&s->unwind, s->opts->cmd ? s->opts->cmd[0] : NULL)))
		return err;
	for (i = 0; i < s->nr_probes; i++) {
		struct pmt_probe *p = &s->probes[i];

		err = p->prov->attach(s, p);
		if (err)
			return err;
	}
	return 0;
}

int pmt_session__store_cfg(struct pmt_session *s, struct pmt_probe *p, struct pmt_probe_cfg *cfg)
{
	if (p->filter)
		cfg->filter = *p->filter;
	cfg->action = p->action;
	cfg->agg = p->agg;
	cfg->stack = s->stack;
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.pmt_probes), &p->id, cfg, BPF_ANY)) {
		int err = -errno;

		pmt_err("%s: cannot store the probe settings: %s", p->name, strerror(-err));
		return err;
	}
	return 0;
}

/* In the closer: keep only kernel objects (anon inodes: BPF links, maps,
 * programs, perf events), so no pipe or file stays open on our behalf. */
static void closer_keep_kernel_objects(int keep_fd)
{
	char path[64], target[128];
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fd");
	int fd, dfd = dir ? dirfd(dir) : -1;
	ssize_t n;

	while (dir && (d = readdir(dir))) {
		fd = atoi(d->d_name);
		if (d->d_name[0] == '.' || fd == keep_fd || fd == dfd)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, target, sizeof(target) - 1);
		if (n < 0 || (n >= 11 && !memcmp(target, "anon_inode:", 11)))
			continue;
		close(fd);
	}
	if (dir)
		closedir(dir);
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
}

/*
 * Closing the last perf event of a tracepoint makes the kernel wait for an
 * RCU grace period, one tracepoint at a time under a global mutex
 * (tracepoint_synchronize_unregister() in perf_trace_event_unreg()): about
 * 75 ms per tracepoint here, 25 s for syscalls:sys_enter_*. So pmtrace does
 * not wait for it: pmt_stop makes every program return at once, and a
 * forked "closer" holding copies of the links waits until pmtrace has closed
 * its own (cheaply: the closer still holds them), then exits; its exit pays
 * the grace periods in the background. Nothing stays once it is gone.
 */
static void spawn_closer(struct pmt_session *s)
{
	int p[2];
	char c;

	if (pipe(p))
		return; /* then we close them ourselves, slowly */
	s->closer = fork();
	if (s->closer == 0) {
		close(p[1]);
		closer_keep_kernel_objects(p[0]);
		setsid();
		/* EOF once pmtrace has closed everything (or died) */
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(p[0]);
	if (s->closer < 0) {
		close(p[1]);
		return;
	}
	s->closer_fd = p[1];
}

void pmt_session__detach(struct pmt_session *s)
{
	bool links = false;
	uint32_t i;

	if (!s->skel)
		return;
	pmt_unwinder__stop(&s->unwind);
	if (s->skel->bss)
		s->skel->bss->pmt_stop = true;
	for (i = 0; i < s->nr_probes; i++)
		links |= s->probes[i].link != NULL;
	links |= s->skel->links.pmt_unwind_mmap != NULL;
	if (links && !s->closer)
		spawn_closer(s);
	for (i = 0; i < s->nr_probes; i++) {
		struct pmt_probe *p = &s->probes[i];

		bpf_link__destroy(p->link);
		p->link = NULL;
		/* PMU events close quickly: no closer needed */
		while (p->nlinks > 0)
			bpf_link__destroy(p->links[--p->nlinks]);
		free(p->links);
		p->links = NULL;
	}
	pmtrace_bpf__detach(s->skel);
}

/* Each possible CPU's value of a per-CPU u64 counter (malloc'd), or NULL. */
static uint64_t *percpu_vals(struct bpf_map *map, __u32 key)
{
	int n = libbpf_num_possible_cpus();
	uint64_t *vals = n > 0 ? calloc((size_t)n, sizeof(*vals)) : NULL;

	if (vals && bpf_map_lookup_elem(bpf_map__fd(map), &key, vals)) {
		free(vals);
		return NULL;
	}
	return vals;
}

static uint64_t percpu_sum(struct bpf_map *map, __u32 key)
{
	uint64_t *vals = percpu_vals(map, key), sum = 0;
	int i, n = libbpf_num_possible_cpus();

	for (i = 0; vals && i < n; i++)
		sum += vals[i];
	free(vals);
	return sum;
}

uint64_t *pmt_session__stat_cpus(struct pmt_session *s, enum pmt_stat which)
{
	return s->skel ? percpu_vals(s->skel->maps.pmt_stats, which) : NULL;
}

uint64_t pmt_session__stat(struct pmt_session *s, enum pmt_stat which)
{
	return s->skel ? percpu_sum(s->skel->maps.pmt_stats, which) : 0;
}

struct pmt_syms *pmt_session__syms(struct pmt_session *s)
{
	if (!s->syms)
		s->syms = pmt_syms__new();
	return s->syms;
}

uint64_t pmt_session__hits(struct pmt_session *s, uint32_t id)
{
	if (!s->agg)
		return s->probes[id].events;
	return s->skel ? percpu_sum(s->skel->maps.pmt_hits, id) : 0;
}

uint64_t pmt_session__filtered(struct pmt_session *s, uint32_t id)
{
	return s->skel && s->probes[id].filter ? percpu_sum(s->skel->maps.pmt_filtered, id) : 0;
}

void pmt_session__free(struct pmt_session *s)
{
	uint32_t i;

	pmt_session__detach(s);
	pmtrace_bpf__destroy(s->skel);
	s->skel = NULL;
	for (i = 0; i < s->nr_probes; i++) {
		free(s->probes[i].name);
		free(s->probes[i].base);
		free(s->probes[i].filter);
		free(s->probes[i].pmu);
		free(s->probes[i].priv);
		pmt_format__free(s->probes[i].fmt);
	}
	free(s->probes);
	s->probes = NULL;
	s->nr_probes = 0;
	pmt_agg__free(s->agg);
	s->agg = NULL;
	pmt_syms__free(s->syms);
	s->syms = NULL;
	if (s->closer > 0) {
		close(s->closer_fd); /* the closer may go now */
		s->closer = 0;
	}
}
