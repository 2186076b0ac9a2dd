// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* CPython in the unwinder: the kernel-facing half (python/python.h). */
#include <stdio.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "python/python.h"
#include "symbols/symbols.h"
#include "util/mapkeys.h"
#include "util/log.h"
#include "pmtrace.skel.h"

#define PY_FILES 64   /* CPython interpreter files */
#define PY_SEEN 16384 /* code objects met, per process (LRU) */
#define PY_NEW 4096   /* ... not yet read by user space */

void pmt_python__size(struct pmtrace_bpf *skel, bool on)
{
	skel->rodata->pmt_python = on;
	bpf_map__set_max_entries(skel->maps.pmt_py_files, on ? PY_FILES : 1);
	bpf_map__set_max_entries(skel->maps.pmt_py_seen, on ? PY_SEEN : 1);
	bpf_map__set_max_entries(skel->maps.pmt_py_new, on ? PY_NEW : 1);
}

void pmt_python__find(int fd, bool on, struct pmt_py_found *f)
{
	f->py = on ? pmt_py__probe(fd, &f->file, f->version, sizeof(f->version)) : PMT_PY_NONE;
}

void pmt_python__commit(struct pmtrace_bpf *skel, const struct pmt_cfi_file_key *key,
			struct pmt_py_found *f, const char *name)
{
	switch (f->py) {
	case PMT_PY_SUPPORTED:
		bpf_map_update_elem(bpf_map__fd(skel->maps.pmt_py_files), key, &f->file, BPF_ANY);
		if (pmt_verbose > 1)
			pmt_info("unwind: %s: CPython %s, Python frames read", name, f->version);
		break;
	case PMT_PY_UNSUPPORTED:
		pmt_warn("%s is CPython %s: Python frames are read from 3.11 only, its stacks "
			 "show the interpreter's native frames",
			 name, f->version);
		break;
	default: break;
	}
	f->py = PMT_PY_NONE;
}

bool pmt_python__file(struct pmtrace_bpf *skel, const struct pmt_cfi_file_key *key,
		      struct pmt_py_file *out)
{
	return skel->rodata->pmt_python &&
	       !bpf_map_lookup_elem(bpf_map__fd(skel->maps.pmt_py_files), key, out);
}

/* The code objects the kernel queued, popped one a system call: a round
 * finds a few (a hash's batch read walked all its 4,096 buckets for
 * them: 21 us, 28 rounds a second beside a churn of Python processes).
 * The loader's thread alone polls. */
void pmt_python__poll(struct pmtrace_bpf *skel, struct pmt_syms *syms)
{
	int fd = bpf_map__fd(skel->maps.pmt_py_new);
	struct pmt_py_new c;
	int i;

	if (!skel->rodata->pmt_python)
		return;
	for (i = 0; i < PY_NEW && !bpf_map_lookup_and_delete_elem(fd, NULL, &c); i++)
		pmt_syms__python_code(syms, c.tgid, c.id, c.code, c.qualname);
}

void pmt_python__forget(struct pmtrace_bpf *skel, bool (*gone)(void *ctx, const void *key),
			void *ctx)
{
	int fd = bpf_map__fd(skel->maps.pmt_py_files);
	struct pmt_cfi_file_key *v;
	size_t n, i;

	if (!skel->rodata->pmt_python)
		return;
	n = pmt_mapkeys__pick(fd, sizeof(*v), gone, ctx, (void **)&v);
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &v[i]);
	free(v);
}
