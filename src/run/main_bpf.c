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
#include <malloc.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "aggregate/maps.h"
#include "run/commands.h"
#include "run/summary.h"
#include "run/evloop.h"
#include "run/listen.h"
#include "util/log.h"
#include "util/machine.h"
#include "options/opts.h"
#include "pmu/pmu.h"
#include "run/session.h"
#include "target/signals.h"
#include "counting/stat.h"
#include "symbols/debuginfod.h"
#include "symbols/symbols.h"
#include "util/strutil.h"
#include "tracefs/tracefs.h"

#ifndef PMT_VERSION
#define PMT_VERSION "unknown" /* the Makefile sets it */
#endif

static int check_privileges(struct pmt_error *e)
{
	uint64_t eff;

	if (geteuid() == 0)
		return 0;
	eff = pmt_caps_effective();
	if ((eff & (1ULL << PMT_CAP_SYS_ADMIN)) ||
	    ((eff & (1ULL << PMT_CAP_BPF)) && (eff & (1ULL << PMT_CAP_PERFMON))))
		return 0;
	pmt_error__usage(e, "permission denied: tracing needs root, or CAP_BPF and CAP_PERFMON");
	pmt_error__hint(e, "run it as root (sudo pmtrace ...), or grant the capabilities: "
			   "setcap cap_bpf,cap_perfmon+ep pmtrace");
	return -EPERM;
}

static int check_btf(struct pmt_error *e)
{
	if (!access("/sys/kernel/btf/vmlinux", R_OK))
		return 0;
	pmt_error__usage(e, "kernel BTF not found at /sys/kernel/btf/vmlinux: %s", strerror(errno));
	pmt_error__hint(
		e,
		"pmtrace needs a kernel built with CONFIG_DEBUG_INFO_BTF=y (most distribution kernels are)");
	return -ENOENT;
}

/* Files written at exit: find out now that they cannot be. */
static int check_writable(struct pmt_error *err, const char *path, const char *what)
{
	int fd = path ? open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644) : -2;

	if (fd == -1)
		return pmt_error__usage(err, "cannot write the %s to '%s': %s", what, path,
					strerror(errno));
	if (fd >= 0)
		close(fd);
	return 0;
}

static uint64_t mem_available(void)
{
	unsigned long long kb = 0;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return (uint64_t)kb * 1024;
}

/* The kernel fills an aggregation's maps when it creates them: say what a
 * large --max-keys costs before paying it, and refuse what the machine
 * does not have. */
#define MAP_COST_WARN (256ULL << 20)
static int check_map_cost(struct pmt_session *s)
{
	int cpus = libbpf_num_possible_cpus();
	uint64_t bytes = s->agg ? pmt_agg__kernel_bytes(s->agg, cpus) : 0, avail;

	/* keyed by stack: two stored stacks a key (src/run/session_bpf.c) */
	if (s->agg && s->stack)
		bytes += 2ULL * (uint64_t)s->opts->agg.max_keys * (PMT_STACK_DEPTH * 8 + 8 + 64);

	if (bytes < MAP_COST_WARN)
		return 0;
	avail = mem_available();
	if (avail && bytes > avail / 10 * 8) {
		pmt_error__usage(&s->err,
				 "--max-keys %d needs about %llu MiB of kernel memory (%d CPUs); "
				 "%llu MiB are available",
				 s->opts->agg.max_keys, (unsigned long long)(bytes >> 20), cpus,
				 (unsigned long long)(avail >> 20));
		pmt_error__hint(&s->err, "a smaller --max-keys; the kernel allocates every key's "
					 "room up front");
		return -EINVAL;
	}
	pmt_warn("--max-keys %d takes about %llu MiB of kernel memory (%d CPUs), allocated "
		 "up front: start-up may take a while (Ctrl-C stops it)",
		 s->opts->agg.max_keys, (unsigned long long)(bytes >> 20), cpus);
	return 0;
}

/* --listen: metrics of this aggregation, on a socket bound before any
 * loading. */
static int start_listening(struct pmt_session *s, struct pmt_listen **srv)
{
	return pmt_listen__bind(srv, &s->opts->listen, pmt_agg__is_profile(s->agg), &s->err);
}

/* Everything the user gave, checked before anything is loaded; then the
 * output opened and the command forked (held before its exec). */
static int prepare(struct pmt_session *s, const struct pmt_opts *o, struct pmt_output *out,
		   struct pmt_listen **srv)
{
	if (pmt_session__resolve(s, o) || (o->pid && pmt_pid__check(o->pid, &s->err)) ||
	    check_map_cost(s))
		return -1;
	if (o->cmd && pmt_child__check(o->cmd, &s->err)) {
		if (o->cmd_after_stack)
			pmt_error__hint(&s->err,
					"'%s' follows --stack, which takes kernel, user or both "
					"(--stack=WHICH); the COMMAND came from there",
					o->cmd[0]);
		return -1;
	}
	if ((o->listen.addr && start_listening(s, srv)) ||
	    check_writable(&s->err, o->agg.flamegraph, "flame graph") ||
	    check_writable(&s->err, o->agg.pprof, "profile") ||
	    pmt_output__open(out, o->output, o->json ? PMT_OUT_JSON : PMT_OUT_TEXT, &s->err))
		return -1;
	/* a reader that stopped reading does not keep a signal from ending
	 * the run */
	pmt_output__interruptible(out, &pmt_signalled, pmt_signals__wait_mask());
	if (o->cmd && pmt_child__spawn(&s->child, o->cmd, &s->err))
		return -1;
	return 0;
}

/* Load, open the rings, attach, let the command go, run the loop. */
static int run(struct pmt_session *s, struct pmt_evloop *loop, struct pmt_output *out,
	       struct pmt_listen *srv, bool *loop_ready)
{
	const struct pmt_opts *o = s->opts;

	if (pmt_session__load(s) || pmt_evloop__init(loop, s, out))
		return -1;
	*loop_ready = true;
	if (pmt_session__attach(s))
		return -1;
	/* from here on a signal ends the run through the event loop: the
	 * drain, the detach and the summary */
	pmt_signals__startup(false);
	pmt_info("%s %u probe%s%s; Ctrl-C to stop", o->agg.fn ? "aggregating" : "tracing",
		 s->probes.n, s->probes.n == 1 ? "" : "s",
		 o->cmd	  ? " while the command runs"
		 : o->pid ? " of one process"
			  : "");
	/* a program's BEGIN, once its probes are attached */
	if (o->begin) {
		pmt_output__line(out, o->begin, strlen(o->begin));
		pmt_output__flush(out);
	}
	if ((srv && pmt_listen__start(srv, s, &s->err)) ||
	    (s->child.pid && pmt_child__release(&s->child, o->cmd[0], &s->err)))
		return -1;
	return pmt_evloop__run(loop) ? -1 : 0;
}

/* Every path: detach first so nothing new arrives, then drain, print
 * what was aggregated and the summary. Returns the exit status. */
static int finish(struct pmt_session *s, struct pmt_evloop *loop, bool loop_ready,
		  struct pmt_output *out, int ret)
{
	struct pmt_error e = {0}; /* the last print's */

	pmt_session__detach(s);
	if (loop_ready) {
		pmt_evloop__drain(loop);
		/* the debug files of stripped files come before the last
		 * names, when servers are named */
		if (s->agg && pmt_syms__debuginfod(s->syms))
			pmt_aggmaps__touch_files(s->aggmaps, s->syms);
		pmt_syms__await_debug(s->syms, PMT_DEBUGINFOD_END_MS);
		if (pmt_session__print_end(s, out, &e)) {
			pmt_error__print(&e);
			ret = PMT_EXIT_FAIL;
		}
		pmt_summary__print(loop, s);
	}
	pmt_error__clear(&e);
	if (pmt_output__close(out, &e))
		ret = PMT_EXIT_FAIL;
	if (out->unwritten)
		pmt_warn("%llu events not written: the output's reader stopped reading, and "
			 "the run was stopped",
			 (unsigned long long)out->unwritten);
	if (out->summary_cut)
		pmt_warn("the summary was cut short: the output's reader stopped reading");
	pmt_error__print(&e);
	if (s->child.pid) {
		pmt_child__kill(&s->child);
		/* the command's status, unless pmtrace itself failed */
		if (ret == PMT_EXIT_OK)
			ret = pmt_child__exit_code(&s->child);
	}
	if (loop_ready)
		pmt_evloop__free(loop);
	return ret;
}

static int do_trace(const struct pmt_opts *o)
{
	struct pmt_session s = {0};
	struct pmt_output out = {.fd = -1, .wfd = -1};
	struct pmt_evloop loop = {0};
	struct pmt_listen *srv = NULL;
	bool loop_ready = false;
	int ret = PMT_EXIT_OK;

	if (check_privileges(&s.err) || (!o->stat && check_btf(&s.err))) {
		pmt_error__print(&s.err);
		return PMT_EXIT_USAGE;
	}
	if (o->stat) /* counters: no BPF */
		return pmt_stat__run(o);
	pmt_signals__install();
	pmt_signals__startup(true);
	/* a failure is told once, where it stops the run; its class gives
	 * the exit status (usage 2, runtime 1) */
	if (prepare(&s, o, &out, &srv) || run(&s, &loop, &out, srv, &loop_ready))
		ret = pmt_session__fail(&s);
	pmt_listen__free(srv); /* no scrape reads what is torn down next */
	ret = finish(&s, &loop, loop_ready, &out, ret);
	pmt_session__free(&s);
	return ret;
}

int main(int argc, char **argv)
{
	struct pmt_opts o;
	struct pmt_error err = {0};
	int ret;

	/* fixed thresholds: glibc otherwise raises both after a big block
	 * (a file's tables, the kernel's BTF) is freed, up to 32 MB, and a
	 * thread's arena then keeps that much freed memory for good */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	mallopt(M_TRIM_THRESHOLD, 1024 * 1024);
	if (pmt_opts__parse(argc, argv, &o, &err)) {
		pmt_error__print(&err);
		fputs("Try 'pmtrace --help' for more information.\n", stderr);
		pmt_opts__free(&o);
		return PMT_EXIT_USAGE;
	}
	pmt_verbose = o.verbose;
	pmt_quiet = o.quiet;
	switch (o.mode) {
	case PMT_MODE_HELP:
		fputs(pmt_usage(), stdout);
		ret = PMT_EXIT_OK;
		break;
	case PMT_MODE_VERSION:
		puts("pmtrace " PMT_VERSION);
		ret = PMT_EXIT_OK;
		break;
	case PMT_MODE_LIST: ret = pmt_cmd__list(&o); break;
	case PMT_MODE_INFO: ret = pmt_cmd__info(&o); break;
	default: ret = do_trace(&o); break;
	}
	pmt_opts__free(&o);
	return ret;
}
