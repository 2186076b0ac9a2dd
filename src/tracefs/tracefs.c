// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fnmatch.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util/error.h"
#include "util/grow.h"
#include "util/log.h"
#include "util/strutil.h"
#include "tracefs/tracefs.h"

static char tracefs_root[256];

static int find_mount(const char *fstype, char *dir, size_t len)
{
	struct mntent *m;
	FILE *f = setmntent("/proc/mounts", "r");

	if (!f)
		return -errno;
	while ((m = getmntent(f))) {
		if (!strcmp(m->mnt_type, fstype)) {
			snprintf(dir, len, "%s", m->mnt_dir);
			endmntent(f);
			return 0;
		}
	}
	endmntent(f);
	return -ENOENT;
}

/* 0, or -errno: whether this user may read dir's events. By the
 * effective credentials and capabilities (AT_EACCESS): access() judges
 * by the real user and ignores capabilities, so it would deny the
 * CAP_DAC_READ_SEARCH a user without root was given. */
static int events_access(const char *dir)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/available_events", dir);
	return faccessat(AT_FDCWD, path, R_OK, AT_EACCESS) ? -errno : 0;
}

static bool has_events(const char *dir, bool *denied)
{
	int r = events_access(dir);

	if (r == -EACCES || r == -EPERM)
		*denied = true;
	return !r;
}

int pmt_tracefs__root(const char **root, struct pmt_error *e)
{
	bool denied = false;
	char dir[256];
	int err;

	if (tracefs_root[0]) {
		*root = tracefs_root;
		return 0;
	}
	/* the standard place first, mounted if need be: libbpf looks for
	 * tracepoint ids there (or in debugfs), not in /proc/mounts */
	snprintf(dir, sizeof(dir), "/sys/kernel/tracing");
	if (has_events(dir, &denied))
		goto found;
	/* mounted where it belongs and not ours to read: said as such */
	if (!denied && !mount("nodev", dir, "tracefs", 0, NULL) && has_events(dir, &denied))
		goto found;
	err = -errno;
	if (!find_mount("tracefs", dir, sizeof(dir)) && has_events(dir, &denied))
		goto found;
	/* old kernels: tracing lives inside debugfs */
	if (find_mount("debugfs", dir, sizeof(dir))) {
		snprintf(dir, sizeof(dir), "/sys/kernel/debug");
		mount("nodev", dir, "debugfs", 0, NULL);
	}
	strncat(dir, "/tracing", sizeof(dir) - strlen(dir) - 1);
	if (has_events(dir, &denied))
		goto found;
	if (denied) {
		pmt_error__usage(e, "permission denied: tracefs (/sys/kernel/tracing) is root's "
				    "alone; tracepoints need CAP_DAC_READ_SEARCH (or root)");
		pmt_error__hint(e,
				"grant it with the others: setcap "
				"cap_bpf,cap_perfmon,cap_dac_read_search+ep pmtrace (pmtrace(8), "
				"PRIVILEGES)");
		return -EACCES;
	}
	err = err ? err : -ENOENT;
	pmt_error__runtime(e, err,
			   "tracefs not available: cannot mount it at /sys/kernel/tracing: %s",
			   strerror(-err));
	pmt_error__hint(e, "mount it once as root: mount -t tracefs nodev /sys/kernel/tracing "
			   "(mounting needs CAP_SYS_ADMIN)");
	return err;
found:
	snprintf(tracefs_root, sizeof(tracefs_root), "%s", dir);
	*root = tracefs_root;
	return 0;
}

int pmt_names__add(struct pmt_names *names, const char *name)
{
	char **v = pmt_grow(names->v, &names->cap, names->n, sizeof(*v), 64);

	if (!v)
		return -ENOMEM;
	names->v = v;
	v[names->n] = strdup(name);
	if (!v[names->n])
		return -ENOMEM;
	names->n++;
	return 0;
}

void pmt_names__free(struct pmt_names *names)
{
	size_t i;

	for (i = 0; i < names->n; i++)
		free(names->v[i]);
	free(names->v);
	names->v = NULL;
	names->n = 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One name a line of <root>/file, up to the first space (available_filter_
 * functions adds " [module]"), sorted, without repeats. */
static int read_names(const char *file, struct pmt_names *out, struct pmt_error *e)
{
	const char *root;
	char path[300], *text, *line, *save = NULL;
	size_t i, n;
	int err;

	err = pmt_tracefs__root(&root, e);
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/%s", root, file);
	err = pmt_read_file(path, &text, NULL);
	if (err)
		return pmt_error__runtime(e, err, "cannot read the tracefs file %s: %s", file,
					  strerror(-err));
	for (line = strtok_r(text, "\n", &save); line && !err; line = strtok_r(NULL, "\n", &save)) {
		line[strcspn(line, " \t")] = '\0';
		if (*line)
			err = pmt_names__add(out, line);
	}
	free(text);
	pmt_sort(out->v, out->n, sizeof(*out->v), cmp_str);
	for (i = n = 0; i < out->n; i++) {
		if (n && !strcmp(out->v[n - 1], out->v[i]))
			free(out->v[i]);
		else
			out->v[n++] = out->v[i];
	}
	out->n = n;
	if (err)
		pmt_names__free(out);
	return err;
}

/* The lists read so far, kept until pmt_tracefs__forget(): the kernel
 * writes them one page a read() and walks its list from the start for
 * each (ftrace's t_start), so a list of 60,000 functions read once a
 * probe spec cost a program of five globs a second under TCG. */
static struct {
	const char *file;
	struct pmt_names names;
	bool read;
} lists[] = {{.file = "available_events"}, {.file = "available_filter_functions"}};

static int cached(size_t i, const struct pmt_names **out, struct pmt_error *err)
{
	int r;

	if (!lists[i].read) {
		r = read_names(lists[i].file, &lists[i].names, err);
		if (r)
			return r;
		lists[i].read = true;
	}
	*out = &lists[i].names;
	return 0;
}

int pmt_tracefs__events(const struct pmt_names **out, struct pmt_error *err)
{
	return cached(0, out, err);
}

int pmt_tracefs__functions(const struct pmt_names **out, struct pmt_error *err)
{
	return cached(1, out, err);
}

void pmt_tracefs__forget(void)
{
	size_t i;

	for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		pmt_names__free(&lists[i].names);
		lists[i].read = false;
	}
}

size_t pmt_names__match(const struct pmt_names *all, const char *pattern, struct pmt_names *out)
{
	size_t i, found = 0;

	for (i = 0; i < all->n; i++) {
		if (fnmatch(pattern, all->v[i], 0))
			continue;
		if (pmt_names__add(out, all->v[i]))
			break;
		found++;
	}
	return found;
}

int pmt_tracefs__format(const char *cat, const char *name, struct pmt_format **out,
			struct pmt_error *err)
{
	const char *root;
	char path[512], *text;
	int ret;

	ret = pmt_tracefs__root(&root, err);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", root, cat, name);
	ret = pmt_read_file(path, &text, NULL);
	if (ret) {
		pmt_error__runtime(err, ret, "cannot read %s: %s", path, strerror(-ret));
		return ret;
	}
	ret = pmt_format__parse(text, cat, out, err);
	free(text);
	return ret;
}

int pmt_tp_split(const char *spec, char *cat, size_t catlen, char *name, size_t namelen)
{
	const char *sep = strchr(spec, ':');
	size_t cl;

	if (!sep)
		sep = strchr(spec, '/');
	if (!sep || sep == spec || !sep[1] || strchr(sep + 1, ':') || strchr(sep + 1, '/'))
		return -EINVAL;
	cl = (size_t)(sep - spec);
	if (cl >= catlen || strlen(sep + 1) >= namelen)
		return -EINVAL;
	memcpy(cat, spec, cl);
	cat[cl] = '\0';
	strcpy(name, sep + 1);
	return 0;
}
