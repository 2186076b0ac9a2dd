/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Cgroups by name. The kernel gives a task's cgroup v2 id (its
 * directory's inode number); this names it as a path under the v2
 * hierarchy ("/system.slice/nginx.service"), and takes from the path the
 * container id and the systemd unit. An id is turned into a path by the
 * kernel itself (the cgroup file system's file handles), so the answer
 * is the directory's current name, found in one call; names are kept in
 * a bounded table.
 */
#ifndef PMT_CGROUPS_H
#define PMT_CGROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util/error.h"

/* Names kept: ids are direct-mapped into this many slots, a new one
 * replacing the old in its slot. */
#define PMT_CGROUP_NAMES 1024

/* What a key shows of a cgroup. */
enum pmt_cgroup_show {
	PMT_CGROUP_PATH,      /* /system.slice/nginx.service */
	PMT_CGROUP_CONTAINER, /* the container's 64-hex id, or "" */
	PMT_CGROUP_UNIT,      /* the systemd unit, nginx.service */
};

/* Where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup, or
 * /sys/fs/cgroup/unified on a hybrid system), into buf; -ENOENT when it
 * is not. */
int pmt_cgroup__mount(char *buf, size_t len);

struct pmt_cgnames;
struct pmt_cgnames *pmt_cgnames__new(void);
void pmt_cgnames__free(struct pmt_cgnames *c);
/* id's path under the hierarchy ("/" its root); NULL when no cgroup has
 * that id any more (or there is no v2 hierarchy). Valid until the next
 * call. */
const char *pmt_cgnames__path(struct pmt_cgnames *c, uint64_t id);

/* The container id a path names: the 64 hex digits of its innermost
 * component that holds them (docker-ID.scope, cri-containerd-ID.scope,
 * crio-ID.scope, libpod-ID.scope, or a bare ID directory as the
 * cgroupfs driver makes them); NULL and *len 0 when none does. */
const char *pmt_cgroup__container(const char *path, size_t *len);
/* The systemd unit a path belongs to, as systemd says it: the first
 * component that is a unit but not a slice (nginx.service), else the
 * innermost slice ("-.slice" for the root). */
const char *pmt_cgroup__unit(const char *path, size_t *len);

/* --cgroup ARG: the directory of a cgroup (ARG under the hierarchy, or a
 * path of the mounted file system) opened into *fd, its path under the
 * hierarchy into shown. A usage error naming what is there when it is
 * not a cgroup. */
int pmt_cgroup__open(const char *arg, int *fd, char *shown, size_t len, struct pmt_error *err);

#endif
