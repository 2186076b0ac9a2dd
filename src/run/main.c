// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pmtrace: stream and aggregate kernel events with BPF.
 *
 * Order of a trace run, chosen so a bad input leaves nothing in the kernel:
 * parse options -> check privileges and BTF -> resolve probes (tracefs)
 * -> open output -> fork the command (held before exec) -> load
 * -> open perf buffers -> attach -> release the command -> loop -> detach
 * -> drain -> summary.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include "run/aggmaps.h"
#include "run/evloop.h"
#include "util/log.h"
#include "options/opts.h"
#include "events/pmu.h"
#include "run/session.h"
#include "run/signals.h"
#include "util/strutil.h"
#include "events/tracefs.h"

#ifndef PMT_VERSION
#define PMT_VERSION "0.1.0"
#endif

#define CAP_PERFMON_BIT 38
#define CAP_BPF_BIT 39
#define CAP_SYS_ADMIN_BIT 21

static int check_privileges(void)
{
	unsigned long long eff = 0;
	char *status, *p;

	if (geteuid() == 0)
		return 0;
	if (!pmt_read_file("/proc/self/status", &status, NULL)) {
		p = strstr(status, "CapEff:");
		if (p)
			eff = strtoull(p + 7, NULL, 16);
		free(status);
	}
	if ((eff & (1ULL << CAP_SYS_ADMIN_BIT)) ||
	    ((eff & (1ULL << CAP_BPF_BIT)) && (eff & (1ULL << CAP_PERFMON_BIT))))
		return 0;
	pmt_err("permission denied: tracing needs root, or CAP_BPF and CAP_PERFMON");
	pmt_hint("run it as root (sudo pmtrace ...), or grant the capabilities: "
		 "setcap cap_bpf,cap_perfmon+ep pmtrace");
	return -EPERM;
}

static int check_btf(void)
{
	if (!access("/sys/kernel/btf/vmlinux", R_OK))
		return 0;
	pmt_err("kernel BTF not found at /sys/kernel/btf/vmlinux: %s", strerror(errno));
	pmt_hint("pmtrace needs a kernel built with CONFIG_DEBUG_INFO_BTF=y (most distribution kernels are)");
	return -ENOENT;
}

/* tracepoint:CAT:NAME, then event:NAME for -e: the software events, the
 * hardware ones when this machine has a CPU PMU, and sysfs PMU events. */
static int do_list(const struct pmt_opts *o)
{
	struct pmt_names tps = {0}, evs = {0}, hits = {0};
	struct pmt_buf b = {0};
	size_t i;
	int err;

	err = pmt_tracefs__events(&tps);
	if (err)
		return PMT_EXIT_FAIL;
	for (i = 0; i < tps.n; i++) {
		pmt_buf__puts(&b, "tracepoint:");
		pmt_buf__puts(&b, tps.v[i]);
		pmt_names__add(&evs, pmt_buf__cstr(&b));
		b.len = 0;
	}
	{
		struct pmt_names pmu = {0};

		pmt_pmu__known(&pmu, pmt_pmu__has_hardware(PMT_PMU_SYSFS));
		pmt_pmu__sysfs_events(PMT_PMU_SYSFS, &pmu);
		for (i = 0; i < pmu.n; i++) {
			pmt_buf__puts(&b, "event:");
			pmt_buf__puts(&b, pmu.v[i]);
			pmt_names__add(&evs, pmt_buf__cstr(&b));
			b.len = 0;
		}
		pmt_names__free(&pmu);
	}
	if (o->list_glob) {
		char pat[512];

		/* a glob matches the name with or without its kind prefix */
		snprintf(pat, sizeof(pat), "*:%s", o->list_glob);
		pmt_names__match(&evs, !strncmp(o->list_glob, "tracepoint:", 11) ?
				 o->list_glob : pat, &hits);
		/* a bare word lists names that contain it */
		if (!hits.n && !strpbrk(o->list_glob, "*?[")) {
			snprintf(pat, sizeof(pat), "*%s*", o->list_glob);
			pmt_names__match(&evs, pat, &hits);
		}
	}
	for (i = 0; i < (o->list_glob ? hits.n : evs.n); i++) {
		pmt_buf__puts(&b, o->list_glob ? hits.v[i] : evs.v[i]);
		pmt_buf__putc(&b, '\n');
	}
	if (fwrite(b.p, 1, b.len, stdout) != b.len)
		err = -EIO;
	pmt_buf__free(&b);
	if (o->list_glob && !hits.n) {
		pmt_err("no tracepoint or event matches '%s'", o->list_glob);
		err = -ENOENT;
	}
	pmt_names__free(&tps);
	pmt_names__free(&evs);
	pmt_names__free(&hits);
	return err ? PMT_EXIT_USAGE : PMT_EXIT_OK;
}

static const char *kind_name(enum pmt_field_kind k)
{
	switch (k) {
	case PMT_F_INT: return "int";
	case PMT_F_PTR: return "pointer";
	case PMT_F_STR: return "string";
	case PMT_F_ARRAY: return "array";
	case PMT_F_DSTR: return "dynamic string";
	case PMT_F_DARRAY: return "dynamic array";
	}
	return "?";
}

static int do_info(const struct pmt_opts *o)
{
	struct pmt_session s = {0};
	struct pmt_probe_arg arg = { PMT_PROBE_TRACEPOINT, o->info_spec, NULL };
	struct pmt_opts one = *o;
	const struct pmt_format *f;
	uint32_t i;
	int j;

	one.probes = &arg;
	one.nr_probes = 1;
	one.cpus = NULL;
	if (pmt_session__resolve(&s, &one)) {
		pmt_session__free(&s);
		return PMT_EXIT_USAGE;
	}
	for (i = 0; i < s.nr_probes; i++) {
		f = s.probes[i].fmt;
		printf("tracepoint:%s (id %d), %u bytes of fixed fields\n",
		       s.probes[i].name, f->id, f->fixed_size);
		printf("    %-24s %-28s %6s %5s %-6s %s\n",
		       "FIELD", "TYPE", "OFFSET", "SIZE", "SIGNED", "DECODED AS");
		for (j = 0; j < f->nr_fields; j++) {
			const struct pmt_field *fl = &f->fields[j];

			printf("    %-24s %-28s %6u %5u %-6s %s%s\n", fl->name, fl->type,
			       fl->offset, fl->size, fl->is_signed ? "yes" : "no",
			       kind_name(fl->kind), fl->is_common ? " (common)" : "");
		}
	}
	pmt_session__free(&s);
	return PMT_EXIT_OK;
}

static void print_summary(struct pmt_evloop *l, struct pmt_session *s)
{
	uint64_t *full = pmt_session__stat_cpus(s, PMT_STAT_RING_FULL);
	uint64_t lost, st[PMT_STAT__MAX];
	uint64_t filtered = 0, *pf;
	uint32_t i, silent = 0;
	int cpu;

	/* the programs' own count of full rings is exact; the rings' lost
	 * records may still hold some back */
	for (cpu = 0; full && cpu < s->ncpus; cpu++)
		if (full[cpu] > l->lost[cpu])
			l->lost[cpu] = full[cpu];
	free(full);
	lost = pmt_evloop__lost(l);

	/* each is a per-CPU map lookup: read them once */
	for (i = 0; i < PMT_STAT__MAX; i++)
		st[i] = pmt_session__stat(s, (enum pmt_stat)i);

	if (lost) {
		pmt_warn("lost %llu events: the perf buffers were full", (unsigned long long)lost);
		for (cpu = 0; cpu < s->ncpus; cpu++)
			if (l->lost[cpu])
				fprintf(stderr, "    CPU %d: %llu lost\n", cpu,
					(unsigned long long)l->lost[cpu]);
		pmt_hint("a larger --buffer-pages (now %d) or fewer probes", s->opts->buffer_pages);
	}
	if (st[PMT_STAT_OUTPUT_ERR])
		pmt_warn("%llu events could not be written to a perf buffer",
			 (unsigned long long)st[PMT_STAT_OUTPUT_ERR]);
	if (st[PMT_STAT_TARGET_FULL])
		pmt_warn("%llu child processes of the command were not traced: target map full",
			 (unsigned long long)st[PMT_STAT_TARGET_FULL]);
	if (st[PMT_STAT_FILTER_ABORT])
		pmt_warn("%llu events rejected because a filter walk did not end (a bug)",
			 (unsigned long long)st[PMT_STAT_FILTER_ABORT]);
	if (st[PMT_STAT_AGG_FULL])
		pmt_warn("%llu aggregation updates dropped: --max-keys %d is full",
			 (unsigned long long)st[PMT_STAT_AGG_FULL], s->opts->agg.max_keys);
	if (st[PMT_STAT_LAT_FULL])
		pmt_warn("%llu latency starts could not be stored",
			 (unsigned long long)st[PMT_STAT_LAT_FULL]);
	if (l->malformed)
		pmt_warn("%llu malformed records skipped", (unsigned long long)l->malformed);
	if (pmt_quiet)
		return;
	if (s->opts->agg.fn) {
		for (i = 0; i < s->nr_probes; i++)
			filtered += pmt_session__filtered(s, i);
		if (filtered)
			fprintf(stderr, "pmtrace: %llu events filtered out in the kernel\n",
				(unsigned long long)filtered);
		if (s->opts->agg.lat_start && st[PMT_STAT_LAT_NOSTART])
			fprintf(stderr, "pmtrace: %llu end events had no start (begun before tracing, or not matched)\n",
				(unsigned long long)st[PMT_STAT_LAT_NOSTART]);
		return;
	}
	pf = calloc(s->nr_probes ? s->nr_probes : 1, sizeof(*pf));
	for (i = 0; pf && i < s->nr_probes; i++)
		filtered += pf[i] = pmt_session__filtered(s, i);
	fprintf(stderr, "pmtrace: %llu events, %llu lost", (unsigned long long)l->events,
		(unsigned long long)lost);
	if (filtered)
		fprintf(stderr, ", %llu filtered out in the kernel", (unsigned long long)filtered);
	fputc('\n', stderr);
	for (i = 0; i < s->nr_probes; i++) {
		if (!s->probes[i].events && s->nr_probes > 20) {
			silent++;
			continue;
		}
		fprintf(stderr, "%12llu  %s", (unsigned long long)s->probes[i].events,
			s->probes[i].name);
		if (pf && s->probes[i].filter)
			fprintf(stderr, "  (%llu filtered)", (unsigned long long)pf[i]);
		fputc('\n', stderr);
	}
	free(pf);
	if (silent)
		fprintf(stderr, "%12s  (%u more probes had no events)\n", "", silent);
}

static int do_trace(const struct pmt_opts *o)
{
	struct pmt_session s = {0};
	struct pmt_output out = { .fd = -1 };
	struct pmt_evloop loop = {0};
	bool loop_ready = false;
	int ret = PMT_EXIT_USAGE, err;

	if (check_privileges() || check_btf())
		return PMT_EXIT_USAGE;
	pmt_signals__install();
	if (pmt_session__resolve(&s, o))
		goto out;
	if (o->pid && pmt_pid__check(o->pid))
		goto out;
	if (o->cmd && pmt_child__check(o->cmd))
		goto out;
	if (pmt_output__open(&out, o->output, o->json ? PMT_OUT_JSON : PMT_OUT_TEXT))
		goto out;
	if (o->agg.flamegraph) {
		/* written at exit: find out now that it cannot be */
		int fd = open(o->agg.flamegraph, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

		if (fd < 0) {
			pmt_err("cannot write the flame graph to '%s': %s", o->agg.flamegraph, strerror(errno));
			goto out;
		}
		close(fd);
	}
	if (o->cmd && pmt_child__spawn(&s.child, o->cmd)) {
		ret = PMT_EXIT_FAIL;
		goto out;
	}

	ret = PMT_EXIT_FAIL;
	if (pmt_session__load(&s))
		goto out;
	if (pmt_evloop__init(&loop, &s, &out))
		goto out;
	loop_ready = true;
	if (pmt_session__attach(&s))
		goto out;
	pmt_info("%s %u probe%s%s; Ctrl-C to stop", o->agg.fn ? "aggregating" : "tracing",
		 s.nr_probes, s.nr_probes == 1 ? "" : "s",
		 o->cmd ? " while the command runs" : o->pid ? " of one process" : "");
	if (s.child.pid && pmt_child__release(&s.child, o->cmd[0])) {
		ret = PMT_EXIT_USAGE;
		goto out;
	}
	err = pmt_evloop__run(&loop);
	ret = err ? PMT_EXIT_FAIL : PMT_EXIT_OK;
out:
	/* every path: detach first so nothing new arrives, then drain */
	pmt_session__detach(&s);
	if (loop_ready) {
		pmt_evloop__drain(&loop);
		if (s.agg && pmt_aggmaps__print(s.skel, s.agg, pmt_session__syms(&s), &out, pmt_now_ns()))
			ret = PMT_EXIT_FAIL;
		print_summary(&loop, &s);
	}
	pmt_output__close(&out);
	if (out.err && out.err != -EPIPE) {
		pmt_err("writing to %s failed: %s", out.path, strerror(-out.err));
		ret = PMT_EXIT_FAIL;
	}
	if (s.child.pid) {
		pmt_child__kill(&s.child);
		/* the command's status, unless pmtrace itself failed */
		if (ret == PMT_EXIT_OK)
			ret = pmt_child__exit_code(&s.child);
	}
	if (loop_ready)
		pmt_evloop__free(&loop);
	pmt_session__free(&s);
	return ret;
}

int main(int argc, char **argv)
{
	struct pmt_opts o;
	char err[512];
	int ret;

	if (pmt_opts__parse(argc, argv, &o, err, sizeof(err))) {
		pmt_err("%s", err);
		fputs("Try 'pmtrace --help' for more information.\n", stderr);
		pmt_opts__free(&o);
		return PMT_EXIT_USAGE;
	}
	pmt_verbose = o.verbose;
	pmt_quiet = o.quiet;
	switch (o.mode) {
	case PMT_MODE_HELP:
		fputs(pmt_usage, stdout);
		ret = PMT_EXIT_OK;
		break;
	case PMT_MODE_VERSION:
		puts("pmtrace " PMT_VERSION);
		ret = PMT_EXIT_OK;
		break;
	case PMT_MODE_LIST:
		ret = do_list(&o);
		break;
	case PMT_MODE_INFO:
		ret = do_info(&o);
		break;
	default:
		ret = do_trace(&o);
		break;
	}
	pmt_opts__free(&o);
	return ret;
}
