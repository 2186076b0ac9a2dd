// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Every provider, one per probe kind, and what they share (provider.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "util/grow.h"
#include "elf/elfsym.h"
#include "probes/provider.h"
#include "util/strutil.h"
#include "pmtrace.skel.h"

static const struct pmt_provider *const providers[] = {
	&pmt_tracepoint_provider, &pmt_perf_provider, &pmt_kprobe_provider,
	&pmt_uprobe_provider,	  &pmt_usdt_provider,
};

const struct pmt_provider *pmt_provider__nth(size_t i)
{
	return i < sizeof(providers) / sizeof(providers[0]) ? providers[i] : NULL;
}

const struct pmt_provider *pmt_provider__get(enum pmt_probe_kind kind)
{
	const struct pmt_provider *p;
	size_t i;

	for (i = 0; (p = pmt_provider__nth(i)); i++)
		if (p->kinds & (1u << kind))
			return p;
	return NULL;
}

int pmt_prov__store_cfg(struct pmt_prov_ctx *c, struct pmt_probe *p, struct pmt_probe_cfg *cfg)
{
	if (p->filter)
		cfg->filter = *p->filter;
	cfg->action = p->action;
	cfg->agg = p->agg;
	cfg->stack = c->stack;
	if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.pmt_probes), &p->id, cfg, BPF_ANY))
		return pmt_error__runtime(c->err, -errno, "%s: cannot store the probe settings: %s",
					  p->name, strerror(errno));
	return 0;
}

int pmt_prov__binary(struct pmt_prov_ctx *c, const char *opt, const char *spec, const char *file,
		     char *path, size_t len)
{
	int r = pmt_elf__resolve(file, path, len);

	if (r == -ENOENT && !strchr(file, '/'))
		return pmt_error__usage(
			c->err,
			"--%s '%s': no executable or library named %s in $PATH or the library directories",
			opt, spec, file);
	if (r)
		return pmt_error__usage(c->err, "--%s '%s': %s: %s", opt, spec, file, strerror(-r));
	return 0;
}

int pmt_online_cpus(uint64_t *mask)
{
	struct pmt_error err = {0};
	char *text;
	int ret;

	ret = pmt_read_file("/sys/devices/system/cpu/online", &text, NULL);
	if (ret)
		return ret;
	text[strcspn(text, "\n")] = '\0';
	ret = pmt_parse_cpulist(text, mask, PMT_MAX_CPUS, &err);
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

int pmt_thread_ids(pid_t pid, pid_t **tids, size_t *n)
{
	char path[64];
	struct dirent *d;
	pid_t *v = NULL, *nv;
	size_t cnt = 0, cap = 0;
	DIR *dir;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while (!err && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		nv = pmt_grow(v, &cap, cnt, sizeof(*v), 16);
		if (!nv) {
			err = -ENOMEM;
			break;
		}
		v = nv;
		v[cnt++] = (pid_t)atoi(d->d_name);
	}
	closedir(dir);
	if (err) {
		free(v);
		return err;
	}
	*tids = v;
	*n = cnt;
	return 0;
}
