// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <elfutils/libdwelf.h>
#include <zlib.h>
#include "symbols/debugfile.h"

#define DEBUG_ROOT "/usr/lib/debug"

/* The CRC-32 .gnu_debuglink records (zlib's) of the file at fd; -1 on
 * a read error (not a CRC: those are 32 bits). */
static long long file_crc(int fd)
{
	unsigned char buf[1 << 16];
	uLong crc = crc32(0, NULL, 0);
	off_t at = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), at)) > 0) {
		crc = crc32(crc, buf, (uInt)n);
		at += n;
	}
	return n < 0 ? -1 : (long long)(crc & 0xffffffffu);
}

static int open_build_id(Elf *elf, char **found)
{
	char path[sizeof(DEBUG_ROOT) + 96], *p;
	const unsigned char *id;
	ssize_t n = dwelf_elf_gnu_build_id(elf, (const void **)&id), i;
	int fd;

	if (n < 2 || n > 32)
		return -1;
	p = path + snprintf(path, sizeof(path), DEBUG_ROOT "/.build-id/%02x/", id[0]);
	for (i = 1; i < n; i++)
		p += sprintf(p, "%02x", id[i]);
	strcpy(p, ".debug");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && !(*found = strdup(path))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* path, if it is not the file self (a debuglink naming its own file)
 * and its CRC is crc. */
static int open_checked(const char *path, const struct stat *self, GElf_Word crc)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || (self && st.st_dev == self->st_dev && st.st_ino == self->st_ino) ||
	    file_crc(fd) != (long long)crc) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The file's .gnu_debuglink name in its directory, its .debug/, and
 * under /usr/lib/debug (gdb's order). */
static int open_debuglink(Elf *elf, const char *path, char **found)
{
	char dir[PATH_MAX], cand[2 * PATH_MAX + 32];
	const char *dirs[3] = {"%s/%s", "%s/.debug/%s", DEBUG_ROOT "%s/%s"};
	struct stat self, *sp = NULL;
	const char *name, *slash;
	GElf_Word crc;
	int i, fd;

	if (!path || !(name = dwelf_elf_gnu_debuglink(elf, &crc)) || strchr(name, '/'))
		return -1;
	if (!realpath(path, dir))
		snprintf(dir, sizeof(dir), "%s", path);
	if (!stat(dir, &self))
		sp = &self;
	slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	dir[slash - dir] = '\0';
	for (i = 0; i < 3; i++) {
		snprintf(cand, sizeof(cand), dirs[i], dir, name);
		fd = open_checked(cand, sp, crc);
		if (fd >= 0) {
			if (!(*found = strdup(cand))) {
				close(fd);
				return -1;
			}
			return fd;
		}
	}
	return -1;
}

int pmt_debugfile__open(Elf *elf, const char *path, char **found)
{
	int fd = open_build_id(elf, found);

	return fd >= 0 ? fd : open_debuglink(elf, path, found);
}
