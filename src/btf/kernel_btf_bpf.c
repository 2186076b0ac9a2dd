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
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <bpf/btf.h>

#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"

static struct btf *mapped(void)
{
	struct btf *btf = NULL;
	struct stat st;
	void *m;
	int fd;

	fd = open(VMLINUX_BTF, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && st.st_size > 0) {
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m != MAP_FAILED) {
			btf = btf__new(m, (__u32)st.st_size); /* copies what it keeps */
			munmap(m, (size_t)st.st_size);
		}
	}
	close(fd);
	return btf;
}

/* The one parse of the run: its users (the session's types, libbpf's
 * CO-RE, kprobe and raw tracepoint resolution) each hold a reference */
static struct btf *shared;
static unsigned int shared_refs;

static struct btf *load(void)
{
	static struct btf *(*libbpfs)(void);
	struct btf *btf = mapped();

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
