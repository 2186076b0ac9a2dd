// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <elfutils/libdwelf.h>
#include <zlib.h>
#include "symbols/debugcache.h"
#include "util/grow.h"
#include "util/log.h"

/* a temporary file left by a run that died while writing it goes after */
#define STALE_TMP_S 3600

struct pmt_debugcache {
	char *dir;
	uint64_t max;
	int dfd;     /* the directory, once made and checked; -1 before */
	bool broken; /* it cannot be: not tried again */
	struct pmt_debugcache_stats st;
};

struct pmt_debugcache *pmt_debugcache__new(const char *dir, uint64_t max)
{
	struct pmt_debugcache *c = calloc(1, sizeof(*c));
	const char *base = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n = -1;

	if (!c)
		return NULL;
	c->dfd = -1;
	c->max = max ? max : PMT_DEBUGCACHE_MAX;
	if (dir)
		c->dir = strdup(dir);
	else if (base && base[0] == '/')
		n = asprintf(&c->dir, "%s/pmtrace/debug", base);
	else if (home && home[0] == '/')
		n = asprintf(&c->dir, "%s/.cache/pmtrace/debug", home);
	if (n < 0 && !dir)
		c->dir = NULL;
	c->broken = !c->dir;
	return c;
}

void pmt_debugcache__free(struct pmt_debugcache *c)
{
	if (!c)
		return;
	if (c->dfd >= 0)
		close(c->dfd);
	free(c->dir);
	free(c);
}

struct pmt_debugcache_stats pmt_debugcache__stats(const struct pmt_debugcache *c)
{
	return c ? c->st : (struct pmt_debugcache_stats){0};
}

/* mkdir -p of path's missing components, each mode 0700 */
static void make_dirs(char *path)
{
	char *p;

	for (p = path + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0700);
		*p = '/';
	}
	mkdir(path, 0700);
}

/* The directory open, made if missing: this user's, no one else's to
 * write in. */
static bool dir_ready(struct pmt_debugcache *c)
{
	struct stat st;

	if (c->dfd >= 0 || c->broken)
		return c->dfd >= 0;
	make_dirs(c->dir);
	c->dfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c->dfd >= 0 && !fstat(c->dfd, &st) && st.st_uid == geteuid() &&
	    !(st.st_mode & (S_IWGRP | S_IWOTH)))
		return true;
	if (pmt_verbose)
		pmt_warn("debug cache %s: %s; compressed debug sections are inflated in memory",
			 c->dir,
			 c->dfd < 0 ? strerror(errno) : "another user's, or writable by others");
	if (c->dfd >= 0)
		close(c->dfd);
	c->dfd = -1;
	c->broken = true;
	return false;
}

/* The file at fd may be copied: a regular file of this user's or root's
 * that no one else may write to. */
static bool trusted(int fd, struct stat *st)
{
	return !fstat(fd, st) && S_ISREG(st->st_mode) &&
	       (st->st_uid == 0 || st->st_uid == geteuid()) && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

static bool native(const Elf64_Ehdr *eh)
{
	return eh->e_ident[EI_CLASS] == ELFCLASS64 && sizeof(void *) == 8 &&
	       eh->e_ident[EI_DATA] == (BYTE_ORDER == LITTLE_ENDIAN ? ELFDATA2LSB : ELFDATA2MSB) &&
	       eh->e_shentsize == sizeof(Elf64_Shdr);
}

/* The file's layout: its headers, and each section's new offset and
 * size (compressed ones at their inflated size). */
struct layout {
	const unsigned char *img;
	size_t size;
	Elf64_Ehdr eh;
	Elf64_Shdr *sh;	  /* as they will be written */
	struct place *at; /* each section's place in img, by index */
	size_t n;
	uint64_t total;
};

struct place {
	uint64_t from, size; /* in img */
	size_t i;
	bool packed; /* compressed in img */
};

static int cmp_from(const void *a, const void *b)
{
	const struct place *x = a, *y = b;

	return (x->from > y->from) - (x->from < y->from);
}

static bool in_file(const struct layout *l, uint64_t off, uint64_t len)
{
	return off <= l->size && len <= l->size - off;
}

/* A compressed section's header: its inflated size and alignment. */
static bool chdr(const struct layout *l, const Elf64_Shdr *s, Elf64_Chdr *ch)
{
	if (s->sh_size < sizeof(*ch) || !in_file(l, s->sh_offset, s->sh_size))
		return false;
	memcpy(ch, l->img + s->sh_offset, sizeof(*ch));
	return ch->ch_type == ELFCOMPRESS_ZLIB && ch->ch_addralign &&
	       !(ch->ch_addralign & (ch->ch_addralign - 1));
}

static bool has_bytes(const Elf64_Shdr *s)
{
	return s->sh_type != SHT_NOBITS && s->sh_type != SHT_NULL && s->sh_size;
}

/* Sections laid out one after another from the end of the headers, in
 * their order in the file; the section headers after them. order: the
 * places sorted by where they were. */
static bool lay_out(struct layout *l, struct place *order)
{
	uint64_t at = l->eh.e_ehsize, end, align;
	size_t k;

	if (l->eh.e_phnum)
		at = l->eh.e_phoff + (uint64_t)l->eh.e_phnum * l->eh.e_phentsize;
	if (at < l->eh.e_ehsize || !in_file(l, 0, at))
		return false;
	memcpy(order, l->at, l->n * sizeof(*order));
	pmt_sort(order, l->n, sizeof(*order), cmp_from);
	for (k = 0; k < l->n; k++) {
		Elf64_Shdr *s = &l->sh[order[k].i];

		if (!has_bytes(s))
			continue;
		align = s->sh_addralign > 1 ? s->sh_addralign : 1;
		if (align & (align - 1))
			return false;
		at = (at + align - 1) & ~(align - 1);
		s->sh_offset = at;
		if (__builtin_add_overflow(at, s->sh_size, &end))
			return false;
		at = end;
	}
	l->eh.e_shoff = (at + 7) & ~7ull;
	l->total = l->eh.e_shoff + l->n * sizeof(Elf64_Shdr);
	return true;
}

/* img's headers read and its sections laid out (false: not a file this
 * copies, or none of its sections is compressed). */
static bool read_layout(struct layout *l, struct place *order)
{
	bool any = false;
	Elf64_Chdr ch;
	size_t i;

	if (l->size < sizeof(l->eh))
		return false;
	memcpy(&l->eh, l->img, sizeof(l->eh));
	if (!native(&l->eh) || l->eh.e_shoff % 8 ||
	    !in_file(l, l->eh.e_shoff, l->n * sizeof(Elf64_Shdr)))
		return false;
	memcpy(l->sh, l->img + l->eh.e_shoff, l->n * sizeof(Elf64_Shdr));
	for (i = 0; i < l->n; i++) {
		Elf64_Shdr *s = &l->sh[i];

		l->at[i] = (struct place){.from = s->sh_offset, .size = s->sh_size, .i = i};
		if (!has_bytes(s))
			continue;
		if (!(s->sh_flags & SHF_COMPRESSED)) {
			if (!in_file(l, s->sh_offset, s->sh_size))
				return false;
			continue;
		}
		if (!chdr(l, s, &ch))
			return false;
		any = l->at[i].packed = true;
		s->sh_flags &= ~(uint64_t)SHF_COMPRESSED;
		s->sh_size = ch.ch_size;
		s->sh_addralign = ch.ch_addralign;
	}
	return any && lay_out(l, order);
}

static bool write_all(int fd, const void *p, size_t n, uint64_t at)
{
	ssize_t w;

	for (; n; n -= (size_t)w, at += (uint64_t)w, p = (const char *)p + w)
		if ((w = pwrite(fd, p, n, (off_t)at)) <= 0)
			return false;
	return true;
}

/* Section i's bytes inflated into fd at its new offset */
static bool inflate_to(int fd, const struct layout *l, size_t i)
{
	unsigned char buf[1 << 16];
	uint64_t at = l->sh[i].sh_offset, want = l->sh[i].sh_size;
	z_stream z = {0};
	int r = Z_OK;
	size_t got;

	z.next_in = (Bytef *)(l->img + l->at[i].from + sizeof(Elf64_Chdr));
	z.avail_in = (uInt)(l->at[i].size - sizeof(Elf64_Chdr));
	if (l->at[i].size - sizeof(Elf64_Chdr) > UINT_MAX || inflateInit(&z) != Z_OK)
		return false;
	while (r == Z_OK) {
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		r = inflate(&z, Z_NO_FLUSH);
		got = sizeof(buf) - z.avail_out;
		if ((r != Z_OK && r != Z_STREAM_END) || got > want || !write_all(fd, buf, got, at))
			r = Z_DATA_ERROR;
		at += got;
		want -= r == Z_DATA_ERROR ? 0 : got;
	}
	inflateEnd(&z);
	return r == Z_STREAM_END && !want;
}

static bool write_copy(int fd, const struct layout *l)
{
	size_t i;

	if (!write_all(fd, &l->eh, sizeof(l->eh), 0) ||
	    (l->eh.e_phnum && !write_all(fd, l->img + l->eh.e_phoff,
					 (size_t)l->eh.e_phnum * l->eh.e_phentsize, l->eh.e_phoff)))
		return false;
	for (i = 0; i < l->n; i++) {
		const Elf64_Shdr *s = &l->sh[i];

		if (!has_bytes(s))
			continue;
		if (l->at[i].packed
			    ? !inflate_to(fd, l, i)
			    : !write_all(fd, l->img + l->at[i].from, s->sh_size, s->sh_offset))
			return false;
	}
	return write_all(fd, l->sh, l->n * sizeof(*l->sh), l->eh.e_shoff);
}

/* The copy's name: the file's build-id, size and mtime */
static bool copy_name(Elf *elf, const struct stat *st, char *name, size_t len)
{
	const unsigned char *id;
	ssize_t n = dwelf_elf_gnu_build_id(elf, (const void **)&id), i;
	char *p = name;

	if (n < 2 || n > 32 || len < 2 * (size_t)n + 48)
		return false;
	for (i = 0; i < n; i++)
		p += sprintf(p, "%02x", id[i]);
	snprintf(p, len - (size_t)(p - name), "-%llx-%llx.debug", (unsigned long long)st->st_size,
		 (unsigned long long)st->st_mtim.tv_sec * 1000000000ull +
			 (unsigned long long)st->st_mtim.tv_nsec);
	return true;
}

struct entry {
	char name[NAME_MAX + 1];
	uint64_t bytes;
	struct timespec used;
};

static int cmp_used(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	return (x->used.tv_nsec > y->used.tv_nsec) - (x->used.tv_nsec < y->used.tv_nsec);
}

/* The copies listed (temporary files left by a dead run removed); their
 * bytes in *total. NULL when the directory cannot be read. */
static struct entry *list(struct pmt_debugcache *c, size_t *n, uint64_t *total)
{
	int fd = openat(c->dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct entry *v = NULL;
	size_t cap = 0;
	struct dirent *e;
	struct stat st;

	*n = 0;
	*total = 0;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((e = readdir(d))) {
		if (fstatat(c->dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (e->d_name[0] == '.') {
			if (time(NULL) - st.st_mtim.tv_sec > STALE_TMP_S)
				unlinkat(c->dfd, e->d_name, 0);
			continue;
		}
		if (!(v = pmt_grow(v, &cap, *n + 1, sizeof(*v), 16)))
			break;
		snprintf(v[*n].name, sizeof(v[*n].name), "%s", e->d_name);
		v[*n].bytes = (uint64_t)st.st_blocks * 512;
		v[(*n)++].used = st.st_mtim;
		*total += (uint64_t)st.st_blocks * 512;
	}
	closedir(d);
	return v;
}

/* Copies removed, those used longest ago first, until need more bytes
 * fit under the bound. */
static void make_room(struct pmt_debugcache *c, uint64_t need)
{
	uint64_t total;
	size_t n, i;
	struct entry *v = list(c, &n, &total);

	pmt_sort(v, n, sizeof(*v), cmp_used);
	for (i = 0; i < n && total + need > c->max; i++)
		if (!unlinkat(c->dfd, v[i].name, 0))
			total -= v[i].bytes;
	free(v);
}

static bool room_on_disk(int dfd, uint64_t need)
{
	struct statvfs vfs;

	return !fstatvfs(dfd, &vfs) &&
	       (uint64_t)vfs.f_bavail * vfs.f_frsize >= need + PMT_DEBUGCACHE_FREE;
}

/* The copy of the file (img) made under name; its descriptor, or -1 */
static int make_copy(struct pmt_debugcache *c, struct layout *l, const char *name)
{
	char tmp[NAME_MAX + 1];
	int fd;

	if (l->total > c->max / 2 || !room_on_disk(c->dfd, l->total))
		return -1;
	make_room(c, l->total);
	snprintf(tmp, sizeof(tmp), ".%.200s.%d", name, (int)getpid());
	fd = openat(c->dfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (write_copy(fd, l) && !ftruncate(fd, (off_t)l->total) &&
	    !renameat(c->dfd, tmp, c->dfd, name)) {
		c->st.made++;
		return fd;
	}
	unlinkat(c->dfd, tmp, 0);
	close(fd);
	return -1;
}

static bool has_compressed(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED) &&
		    sh.sh_type != SHT_NOBITS)
			return true;
	return false;
}

/* The copy made for the file at fd, from its bytes */
static int copy_of(struct pmt_debugcache *c, Elf *elf, const char *name)
{
	struct layout l = {0};
	struct place *order = NULL;
	int fd = -1;

	l.img = (const unsigned char *)elf_rawfile(elf, &l.size);
	if (!l.img || elf_getshdrnum(elf, &l.n) || !l.n || l.n > 65536)
		return -1;
	l.sh = calloc(l.n, sizeof(*l.sh));
	l.at = calloc(l.n, sizeof(*l.at));
	order = calloc(l.n, sizeof(*order));
	if (l.sh && l.at && order && read_layout(&l, order))
		fd = make_copy(c, &l, name);
	free(l.sh);
	free(l.at);
	free(order);
	return fd;
}

int pmt_debugcache__open(struct pmt_debugcache *c, int fd, Elf *elf)
{
	char name[NAME_MAX + 1];
	struct stat st;
	int cfd;

	if (!c || !has_compressed(elf))
		return -1;
	if (!trusted(fd, &st) || !copy_name(elf, &st, name, sizeof(name)) || !dir_ready(c)) {
		c->st.refused++;
		return -1;
	}
	cfd = openat(c->dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (cfd >= 0) {
		futimens(cfd, NULL); /* used now: the last to go */
		c->st.used++;
		return cfd;
	}
	cfd = copy_of(c, elf, name);
	if (cfd < 0)
		c->st.refused++;
	return cfd;
}
