// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Cgroups by name (see cgroups.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "symbols/cgroups.h"

int pmt_cgroup__mount(char *buf, size_t len)
{
	FILE *f = setmntent("/proc/self/mounts", "r");
	struct mntent *m;
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while ((m = getmntent(f)))
		if (!strcmp(m->mnt_type, "cgroup2") && strlen(m->mnt_dir) < len) {
			strcpy(buf, m->mnt_dir);
			ret = 0;
			break;
		}
	endmntent(f);
	return ret;
}

struct cgname {
	uint64_t id; /* 0: empty */
	char *path;  /* NULL: no cgroup has the id */
};

struct pmt_cgnames {
	int root_fd; /* the hierarchy's root; -1 when there is none */
	char root[256];
	size_t root_len;
	struct cgname slot[PMT_CGROUP_NAMES];
};

struct pmt_cgnames *pmt_cgnames__new(void)
{
	struct pmt_cgnames *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->root_fd = -1;
	if (!pmt_cgroup__mount(c->root, sizeof(c->root))) {
		c->root_fd = open(c->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		c->root_len = strlen(c->root);
	}
	return c;
}

void pmt_cgnames__free(struct pmt_cgnames *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < PMT_CGROUP_NAMES; i++)
		free(c->slot[i].path);
	if (c->root_fd >= 0)
		close(c->root_fd);
	free(c);
}

/* The kernel's own answer: a cgroup's file handle is its id (kernfs's
 * FILEID_KERNFS), and the descriptor it opens names the directory. */
static char *lookup(struct pmt_cgnames *c, uint64_t id)
{
	struct {
		struct file_handle h;
		uint64_t id;
	} fh = {.h = {.handle_bytes = sizeof(uint64_t), .handle_type = 0xfe}, .id = id};
	char link[64], path[4096];
	ssize_t n;
	int fd;

	if (c->root_fd < 0)
		return NULL;
	fd = open_by_handle_at(c->root_fd, &fh.h, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	close(fd);
	if (n < (ssize_t)c->root_len || memcmp(path, c->root, c->root_len))
		return NULL;
	path[n] = '\0';
	return strdup(n == (ssize_t)c->root_len ? "/" : path + c->root_len);
}

const char *pmt_cgnames__path(struct pmt_cgnames *c, uint64_t id)
{
	struct cgname *s;

	if (!c || !id)
		return NULL;
	s = &c->slot[(id * 0x9e3779b97f4a7c15ULL) >> 54 & (PMT_CGROUP_NAMES - 1)];
	if (s->id != id) {
		free(s->path);
		s->id = id;
		s->path = lookup(c, id);
	}
	return s->path;
}

static bool is_hex64(const char *p, size_t n)
{
	size_t i;

	if (n != 64)
		return false;
	for (i = 0; i < n; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
			return false;
	return true;
}

/* A component's container id: PREFIX-ID.scope or ID alone. */
static const char *component_id(const char *p, size_t n)
{
	if (is_hex64(p, n))
		return p;
	if (n > 6 + 64 && !memcmp(p + n - 6, ".scope", 6) && p[n - 6 - 64 - 1] == '-' &&
	    is_hex64(p + n - 6 - 64, 64) && !memmem(p, n, "conmon", 6))
		return p + n - 6 - 64;
	return NULL;
}

const char *pmt_cgroup__container(const char *path, size_t *len)
{
	const char *end = path + strlen(path), *start, *id;

	while (end > path) {
		for (start = end; start > path && start[-1] != '/'; start--)
			;
		if ((id = component_id(start, (size_t)(end - start)))) {
			*len = 64;
			return id;
		}
		end = start > path ? start - 1 : path;
	}
	*len = 0;
	return NULL;
}

static bool has_suffix(const char *p, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n > k && !memcmp(p + n - k, suffix, k);
}

static bool is_unit(const char *p, size_t n)
{
	static const char *const kinds[] = {".service", ".scope",    ".socket", ".mount",
					    ".swap",	".target",   ".timer",	".path",
					    ".device",	".automount"};
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (has_suffix(p, n, kinds[i]))
			return true;
	return false;
}

const char *pmt_cgroup__unit(const char *path, size_t *len)
{
	const char *p = path, *slice = NULL;
	size_t slice_len = 0;

	while (*p) {
		size_t n;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (n && is_unit(p, n)) {
			*len = n;
			return p;
		}
		if (n && has_suffix(p, n, ".slice")) {
			slice = p;
			slice_len = n;
		} else if (n) {
			break; /* not systemd's: the unit is the slice above */
		}
		p += n;
	}
	if (!slice) {
		*len = strlen("-.slice");
		return "-.slice";
	}
	*len = slice_len;
	return slice;
}

/* Up to 5 cgroups under dir, for a hint. */
static void children(const char *dir, char *out, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t at = 0;
	int n = 0;

	out[0] = '\0';
	while (d && (e = readdir(d)) && n < 5) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		at += (size_t)snprintf(out + at, at < len ? len - at : 0, "%s%s", n ? ", " : "",
				       e->d_name);
		n++;
	}
	if (d)
		closedir(d);
}

int pmt_cgroup__open(const char *arg, int *fd, char *shown, size_t len, struct pmt_error *err)
{
	char root[256], path[4096], near[512];
	size_t rl;
	char *slash;

	*fd = -1;
	if (pmt_cgroup__mount(root, sizeof(root)))
		return pmt_error__usage(err, "--cgroup %s: no cgroup v2 hierarchy is mounted", arg);
	rl = strlen(root);
	if (!strncmp(arg, root, rl) && (arg[rl] == '/' || !arg[rl]))
		snprintf(path, sizeof(path), "%s", arg);
	else
		snprintf(path, sizeof(path), "%s%s%s", root, *arg == '/' ? "" : "/", arg);
	*fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*fd >= 0) {
		snprintf(shown, len, "%s", path[rl] ? path + rl : "/");
		return 0;
	}
	pmt_error__usage(err, "--cgroup %s: no cgroup %s under the cgroup v2 hierarchy at %s", arg,
			 path + rl, root);
	/* what the nearest existing parent holds */
	while ((slash = strrchr(path + rl, '/'))) {
		*slash = '\0';
		if (!faccessat(AT_FDCWD, path[rl] ? path : root, F_OK, AT_EACCESS))
			break;
	}
	children(path[rl] ? path : root, near, sizeof(near));
	if (*near)
		pmt_error__hint(err, "%s holds %s", path[rl] ? path + rl : "/", near);
	return -EINVAL;
}
