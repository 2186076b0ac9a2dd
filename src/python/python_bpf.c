// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* CPython in the unwinder: the kernel-facing half (python/python.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "python/python.h"
#include "symbols/symbols.h"
#include "util/grow.h"
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

/* Code objects taken from the kernel's queue a system call at a time
 * (PY_BATCH each), as long as the kernel takes batches (5.6 on); false
 * when it refuses them (the queue walked one by one then). The loader's
 * thread alone polls. */
#define PY_BATCH 256

static bool poll_batches(int fd, struct pmt_syms *syms)
{
	static struct pmt_py_id keys[PY_BATCH];
	static struct pmt_py_new vals[PY_BATCH];
	static bool refused;
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 token, n, i, done = 0;
	bool first = true;
	int err;

	if (refused)
		return false;
	do {
		n = PY_BATCH;
		err = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &token, &token, keys, vals,
						      &n, &opts);
		if (err && errno != ENOENT && first && !n) {
			/* not for this map, for good (524: the kernel's ENOTSUPP) */
			refused = errno == EINVAL || errno == EOPNOTSUPP || errno == 524;
			return false;
		}
		/* what a failed call took is named still */
		for (i = 0; i < n; i++)
			pmt_syms__python_code(syms, keys[i].tgid, keys[i].id, vals[i].code,
					      vals[i].qualname);
		first = false;
		done += n;
	} while (!err && done < PY_NEW);
	return true;
}

void pmt_python__poll(struct pmtrace_bpf *skel, struct pmt_syms *syms)
{
	int fd = bpf_map__fd(skel->maps.pmt_py_new);
	struct pmt_py_id key, next;
	struct pmt_py_new code;
	bool first = true;
	int i;

	if (!skel->rodata->pmt_python || poll_batches(fd, syms))
		return;
	/* a deleted key starts the walk again: the queue empties */
	for (i = 0; i < PY_NEW && !bpf_map_get_next_key(fd, first ? NULL : &key, &next); i++) {
		first = false;
		key = next;
		if (!bpf_map_lookup_elem(fd, &key, &code))
			pmt_syms__python_code(syms, key.tgid, key.id, code.code, code.qualname);
		bpf_map_delete_elem(fd, &key);
	}
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
