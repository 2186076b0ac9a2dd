// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kernel's BTF, parsed from a mapping of /sys/kernel/btf/vmlinux.
 *
 * Every run's CO-RE relocations need it, and libbpf 1.1 reads the file a
 * page per read() (sysfs hands out no more) into a buffer that it then
 * copies: on 6.18, 1,350 calls for 5.5 MB, 5 ms of the start and 5.5 MB
 * more at its peak. From 6.16 on the kernel lets the file be mapped, so
 * this definition of libbpf's btf__load_vmlinux_btf() parses the mapping
 * instead. libbpf's own calls reach it: they go through its PLT, as a
 * shared library's calls to the functions it exports do, and the
 * executable's definition comes first. Where the file cannot be mapped
 * (older kernels), libbpf's own function is called, unchanged.
 *
 * The parse is made once a run and shared: libbpf loads the kernel's
 * BTF for each object it loads, and frees it after, while the session
 * keeps its own for field offsets; two parses were two 5.5 MB copies at
 * the peak and their indexing, 5 ms. btf__free() is replaced as well, to
 * let the shared parse go with its last holder.
 *
 * tests/runtime/cli.sh (kernel_btf_mapped, kernel_btf_once) checks the
 * file is not read where it can be mapped, and opened once a run: a
 * libbpf that stops calling through its PLT makes those tests fail, not
 * the tracer (a btf__free() libbpf called within itself would free the
 * shared parse under the session: the sanitizer runs would show it).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <bpf/btf.h>
#include "btf/corebtf.h"
#include "btf/kernel_btf.h"
#include "util/log.h"

#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"

/* The kernel's raw BTF in place: mapped where the kernel lets it (6.16
 * on; MAP_POPULATE, a fault a page otherwise), else read whole; given
 * back by raw_btf_done. NULL and errno when it cannot be read. */
static void *raw_btf(size_t *len, bool *is_mapped)
{
	struct stat st;
	size_t got = 0;
	ssize_t r;
	char *b;
	void *m;
	int fd;

	*is_mapped = false;
	fd = open(VMLINUX_BTF, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || st.st_size <= 0) {
		close(fd);
		return NULL;
	}
	*len = (size_t)st.st_size;
	m = mmap(NULL, *len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (m != MAP_FAILED) {
		close(fd);
		*is_mapped = true;
		return m;
	}
	if (!(b = malloc(*len))) {
		close(fd);
		return NULL;
	}
	while (got < *len && (r = read(fd, b + got, *len - got)) > 0)
		got += (size_t)r;
	close(fd);
	if (got != *len) {
		free(b);
		return NULL;
	}
	return b;
}

static void raw_btf_done(void *p, size_t len, bool is_mapped)
{
	if (is_mapped)
		munmap(p, len);
	else
		free(p);
}

/* The kernel's BTF parsed from it in place (libbpf copies what it keeps) */
static struct btf *parsed(void)
{
	struct btf *btf;
	bool is_mapped;
	size_t len;
	void *p = raw_btf(&len, &is_mapped);

	if (!p)
		return NULL;
	btf = btf__new(p, (__u32)len);
	raw_btf_done(p, len, is_mapped);
	return btf;
}

/* The one parse of the run: its users (the session's types, libbpf's
 * CO-RE, kprobe and raw tracepoint resolution) each hold a reference */
static struct btf *shared;
static unsigned int shared_refs;

static struct btf *load(void)
{
	static struct btf *(*libbpfs)(void);
	struct btf *btf = parsed();

	if (btf)
		return btf;
	if (!libbpfs)
		*(void **)&libbpfs = dlsym(RTLD_NEXT, "btf__load_vmlinux_btf");
	if (!libbpfs) {
		errno = ENOSYS;
		return NULL;
	}
	return libbpfs();
}

struct btf *btf__load_vmlinux_btf(void)
{
	struct btf *btf;

	if (shared) {
		shared_refs++;
		return shared;
	}
	btf = load();
	if (btf) {
		shared = btf;
		shared_refs = 1;
	}
	return btf;
}

/* libbpf's btf__free(), but the shared parse is let go by its last
 * holder (libbpf frees its object's copy after each load, through its
 * PLT as above) */
void btf__free(struct btf *btf)
{
	static void (*libbpfs)(struct btf *);

	if (btf && btf == shared) {
		if (--shared_refs)
			return;
		shared = NULL;
	}
	if (!libbpfs)
		*(void **)&libbpfs = dlsym(RTLD_NEXT, "btf__free");
	if (libbpfs)
		libbpfs(btf);
}

/*
 * CO-RE against the part of the kernel's BTF an object relocates with
 * (btf/corebtf.h): libbpf's btf_custom_path, a memfd. libbpf then never
 * loads the kernel's BTF for the object (it needs it for CO-RE alone
 * where a custom path is given, and for programs attached by BTF id:
 * fentry and typed raw tracepoints, which load it as before), read in
 * place (raw_btf).
 */
static int core_fd = -1;

static bool write_all(int fd, const void *p, size_t len)
{
	ssize_t r;

	while (len) {
		if ((r = write(fd, p, len)) <= 0)
			return false;
		p = (const char *)p + r;
		len -= (size_t)r;
	}
	return true;
}

int pmt_kernel_btf__core(const void *obj, size_t len, char *path, size_t path_len)
{
	const char *off = getenv("PMT_CORE_BTF"), *dump = getenv("PMT_CORE_BTF_DUMP");
	const void *obtf, *oext;
	size_t olen, elen, klen, made_len;
	struct pmt_corebtf_stats st;
	struct timespec t0, t1;
	bool is_mapped;
	char why[160];
	void *k, *made;
	int fd;

	pmt_kernel_btf__core_done();
	if (off && !strcmp(off, "0"))
		return -1;
	if (shared) {
		if (pmt_verbose)
			pmt_info(
				"CO-RE: against the kernel's whole BTF (the session's types read it)");
		return -1;
	}
	if (pmt_corebtf__sections(obj, len, &obtf, &olen, &oext, &elen))
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!(k = raw_btf(&klen, &is_mapped))) {
		if (pmt_verbose)
			pmt_info("CO-RE: cannot read %s: %s", VMLINUX_BTF, strerror(errno));
		return -1;
	}
	made = pmt_corebtf__make(k, klen, obtf, olen, oext, elen, &made_len, &st, why, sizeof(why));
	raw_btf_done(k, klen, is_mapped);
	if (!made) {
		if (pmt_verbose)
			pmt_info("CO-RE: against the kernel's whole BTF (%s)", why);
		return -1;
	}
	fd = memfd_create("pmtrace-core-btf", MFD_CLOEXEC);
	if (fd >= 0 && write_all(fd, made, made_len)) {
		snprintf(path, path_len, "/proc/self/fd/%d", fd);
		/* (libbpf opens it by that path: /proc must show it) */
		if (access(path, R_OK)) {
			close(fd);
			fd = -1;
		}
	} else if (fd >= 0) {
		close(fd);
		fd = -1;
	}
	if (dump && *dump) {
		FILE *f = fopen(dump, "we");

		if (!f || fwrite(made, 1, made_len, f) != made_len)
			pmt_warn("PMT_CORE_BTF_DUMP %s: %s", dump, strerror(errno));
		if (f)
			fclose(f);
	}
	free(made);
	if (fd < 0) {
		if (pmt_verbose)
			pmt_info("CO-RE: against the kernel's whole BTF (no file for its part: %s)",
				 strerror(errno));
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (pmt_verbose)
		pmt_info("CO-RE: %u relocations against %u types made from the kernel's %u "
			 "in %.1f ms",
			 st.relos, st.types, st.kernel_types,
			 (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
				 (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	core_fd = fd;
	return fd;
}

void pmt_kernel_btf__core_done(void)
{
	if (core_fd >= 0)
		close(core_fd);
	core_fd = -1;
}
