// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: the text other users and servers hand pmtrace. The
 * first byte picks the reader, the rest is its input:
 *   0  a perf map (/tmp/perf-PID.map, a JIT's), then lookups in it
 *   1  /proc/PID/maps lines
 *   2  a cgroup path: its container and its systemd unit
 *   3  USDT argument specs (.note.stapsdt, "-4@%edi 8@-8(%rbp)")
 *   4  --web-config's YAML
 *   5  /debug/pprof/profile's seconds=N
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "util/error.h"
#include "elf/stapsdt.h"
#include "run/webconfig.h"
#include "symbols/cgroups.h"
#include "symbols/jitmap.h"
#include "symbols/procmaps.h"

static void perf_map(const uint8_t *data, size_t size)
{
	int fd = memfd_create("perfmap_fuzz", MFD_CLOEXEC);
	struct pmt_jitmap *j;
	uint64_t off, a;
	size_t i;

	if (fd < 0)
		return;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return;
	}
	lseek(fd, 0, SEEK_SET);
	j = pmt_jitmap__from_fd(fd); /* takes fd */
	if (!j)
		return;
	/* addresses the input names, and around them */
	for (i = 0; i + 8 <= size && i < 256; i += 8) {
		memcpy(&a, data + i, 8);
		pmt_jitmap__name(j, a, &off, 0);
		pmt_jitmap__name(j, a & 0xffffffffull, &off, 0);
	}
	pmt_jitmap__name(j, 0x1000, &off, 1);
	pmt_jitmap__count(j);
	pmt_jitmap__free(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pmt_error err = {0};
	struct pmt_usdt_arg args[12];
	struct pmt_webcfg web;
	struct pmt_procmap m;
	char *text, *line, *save;
	size_t len;
	long secs;

	if (!size)
		return 0;
	if (data[0] % 6 == 0) {
		perf_map(data + 1, size - 1);
		return 0;
	}
	/* the others read a C string */
	text = malloc(size);
	memcpy(text, data + 1, size - 1);
	text[size - 1] = 0;
	switch (data[0] % 6) {
	case 1:
		for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			if (pmt_procmaps__line(line, &m) && strlen(m.path) > 4096)
				abort();
		break;
	case 2:
		pmt_cgroup__container(text, &len);
		pmt_cgroup__unit(text, &len);
		break;
	case 3: pmt_usdt__parse_args(text, args, 12); break;
	case 4:
		/* its files' names are checked, not read */
		if (!pmt_webcfg__parse(&web, text, strlen(text), "fuzz.yml", NULL, &err))
			pmt_webcfg__free(&web);
		break;
	case 5: pmt_web__seconds(text, 3600, &secs); break;
	}
	free(text);
	return 0;
}
