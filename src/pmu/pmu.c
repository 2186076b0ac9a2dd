// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include "util/error.h"
#include "pmu/pmu.h"
#include "util/strutil.h"
#include "util/suggest.h"

struct named {
	const char *name;
	uint64_t config;
};

static const struct named hw_events[] = {
	{"cycles", PERF_COUNT_HW_CPU_CYCLES},
	{"cpu-cycles", PERF_COUNT_HW_CPU_CYCLES},
	{"instructions", PERF_COUNT_HW_INSTRUCTIONS},
	{"cache-references", PERF_COUNT_HW_CACHE_REFERENCES},
	{"cache-misses", PERF_COUNT_HW_CACHE_MISSES},
	{"branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
	{"branch-instructions", PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
	{"branch-misses", PERF_COUNT_HW_BRANCH_MISSES},
	{"bus-cycles", PERF_COUNT_HW_BUS_CYCLES},
	{"stalled-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
	{"idle-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
	{"stalled-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
	{"idle-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
	{"ref-cycles", PERF_COUNT_HW_REF_CPU_CYCLES},
};

static const struct named sw_events[] = {
	{"cpu-clock", PERF_COUNT_SW_CPU_CLOCK},
	{"task-clock", PERF_COUNT_SW_TASK_CLOCK},
	{"page-faults", PERF_COUNT_SW_PAGE_FAULTS},
	{"faults", PERF_COUNT_SW_PAGE_FAULTS},
	{"context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES},
	{"cs", PERF_COUNT_SW_CONTEXT_SWITCHES},
	{"cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS},
	{"migrations", PERF_COUNT_SW_CPU_MIGRATIONS},
	{"minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN},
	{"major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ},
	{"alignment-faults", PERF_COUNT_SW_ALIGNMENT_FAULTS},
	{"emulation-faults", PERF_COUNT_SW_EMULATION_FAULTS},
};

/* perf's hardware cache names: CACHE-OP[-misses], e.g. LLC-load-misses */
static const char *const cache_ids[] = {
	[PERF_COUNT_HW_CACHE_L1D] = "L1-dcache", [PERF_COUNT_HW_CACHE_L1I] = "L1-icache",
	[PERF_COUNT_HW_CACHE_LL] = "LLC",	 [PERF_COUNT_HW_CACHE_DTLB] = "dTLB",
	[PERF_COUNT_HW_CACHE_ITLB] = "iTLB",	 [PERF_COUNT_HW_CACHE_BPU] = "branch",
	[PERF_COUNT_HW_CACHE_NODE] = "node",
};
static const char *const cache_ops[][2] = {
	/* accesses, misses */
	[PERF_COUNT_HW_CACHE_OP_READ] = {"loads", "load-misses"},
	[PERF_COUNT_HW_CACHE_OP_WRITE] = {"stores", "store-misses"},
	[PERF_COUNT_HW_CACHE_OP_PREFETCH] = {"prefetches", "prefetch-misses"},
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

void pmt_pmu__known(struct pmt_names *out, bool hardware)
{
	char name[64];
	size_t i, op, r;

	for (i = 0; i < N(sw_events); i++)
		pmt_names__add(out, sw_events[i].name);
	if (!hardware)
		return;
	for (i = 0; i < N(hw_events); i++)
		pmt_names__add(out, hw_events[i].name);
	for (i = 0; i < N(cache_ids); i++)
		for (op = 0; op < N(cache_ops); op++)
			for (r = 0; r < 2; r++) {
				snprintf(name, sizeof(name), "%s-%s", cache_ids[i],
					 cache_ops[op][r]);
				pmt_names__add(out, name);
			}
}

static bool lookup(const struct named *t, size_t n, const char *name, uint64_t *config)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!strcmp(t[i].name, name)) {
			*config = t[i].config;
			return true;
		}
	}
	return false;
}

static bool lookup_cache(const char *name, uint64_t *config)
{
	size_t i, op, r, n;

	for (i = 0; i < N(cache_ids); i++) {
		n = strlen(cache_ids[i]);
		if (strncmp(name, cache_ids[i], n) || name[n] != '-')
			continue;
		for (op = 0; op < N(cache_ops); op++)
			for (r = 0; r < 2; r++)
				if (!strcmp(name + n + 1, cache_ops[op][r])) {
					*config = i | (op << 8) |
						  ((r ? PERF_COUNT_HW_CACHE_RESULT_MISS
						      : PERF_COUNT_HW_CACHE_RESULT_ACCESS)
						   << 16);
					return true;
				}
	}
	return false;
}

/* "u", "k", "uk": what to count; anything else is an error. */
static int parse_modifiers(const char *m, struct pmt_pmu_event *ev, const char *spec,
			   struct pmt_error *err)
{
	bool u = false, k = false;

	for (; *m; m++) {
		if (*m == 'u')
			u = true;
		else if (*m == 'k')
			k = true;
		else
			return pmt_error__usage(
				err,
				"event '%s': unknown modifier '%c': expected :u (user), :k (kernel) or :uk",
				spec, *m);
	}
	if (u != k) {
		ev->exclude_kernel = u;
		ev->exclude_user = k;
	}
	return 0;
}

static int read_sysfs(const char *sysfs, const char *pmu, const char *rest, char *buf, size_t len)
{
	char path[512], *text;
	int ret;

	snprintf(path, sizeof(path), "%s/%s/%s", sysfs, pmu, rest);
	ret = pmt_read_file(path, &text, NULL);
	if (ret)
		return ret;
	snprintf(buf, len, "%s", text);
	buf[strcspn(buf, "\n")] = '\0';
	free(text);
	return 0;
}

/* List the entries of a sysfs directory into b as " a b c". */
/* Append " name" for each entry of the directory, or none_text. */
static void list_dir(struct pmt_buf *b, const char *sysfs, const char *pmu, const char *sub,
		     const char *none_text)
{
	char path[512];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "%s/%s%s%s", sysfs, pmu, *sub ? "/" : "", sub);
	dir = opendir(path);
	while (dir && (d = readdir(dir))) {
		if (d->d_name[0] != '.' && (*sub || strcmp(d->d_name, "power"))) {
			pmt_buf__printf(b, " %s", d->d_name);
			n++;
		}
	}
	if (dir)
		closedir(dir);
	if (!n)
		pmt_buf__puts(b, none_text);
}

/* Put val into the bits a format ("config:0-7,32-35", "config1:3")
 * names, lowest bits first. */
static int apply_format(const char *fmt, uint64_t val, struct pmt_pmu_event *ev)
{
	const char *p = strchr(fmt, ':');
	uint64_t *dst;
	int lo, hi, bit;

	if (!p)
		return -EINVAL;
	if (!strncmp(fmt, "config:", 7))
		dst = &ev->config;
	else if (!strncmp(fmt, "config1:", 8))
		dst = &ev->config1;
	else if (!strncmp(fmt, "config2:", 8))
		dst = &ev->config2;
	else
		return -EINVAL;
	p++;
	while (*p) {
		if (sscanf(p, "%d", &lo) != 1 || lo < 0 || lo > 63)
			return -EINVAL;
		hi = lo;
		p += strspn(p, "0123456789");
		if (*p == '-') {
			p++;
			if (sscanf(p, "%d", &hi) != 1 || hi < lo || hi > 63)
				return -EINVAL;
			p += strspn(p, "0123456789");
		}
		for (bit = lo; bit <= hi; bit++, val >>= 1)
			if (val & 1)
				*dst |= 1ULL << bit;
			else
				*dst &= ~(1ULL << bit);
		if (*p == ',')
			p++;
		else if (*p)
			return -EINVAL;
	}
	return val ? -ERANGE : 0;
}

static int parse_terms(const char *sysfs, const char *pmu, char *terms, struct pmt_pmu_event *ev,
		       const char *spec, int depth, struct pmt_error *err);

static int apply_term(const char *sysfs, const char *pmu, char *term, struct pmt_pmu_event *ev,
		      const char *spec, int depth, struct pmt_error *err)
{
	char *eq = strchr(term, '='), path[300], fmt[256];
	struct pmt_buf b = {0};
	uint64_t val = 1;
	int ret;

	if (eq) {
		*eq = '\0';
		if (pmt_parse_u64(eq + 1, &val))
			return pmt_error__usage(
				err, "event '%s': term %s=%s: the value must be a number", spec,
				term, eq + 1);
	}
	if (!strcmp(term, "config") || !strcmp(term, "config1") || !strcmp(term, "config2")) {
		*(term[6] == '1'   ? &ev->config1
		  : term[6] == '2' ? &ev->config2
				   : &ev->config) = val;
		return 0;
	}
	snprintf(path, sizeof(path), "format/%s", term);
	if (!read_sysfs(sysfs, pmu, path, fmt, sizeof(fmt))) {
		ret = apply_format(fmt, val, ev);
		if (ret)
			return pmt_error__usage(
				err, "event '%s': %s=%#llx does not fit %s's format '%s'", spec,
				term, (unsigned long long)val, pmu, fmt);
		return 0;
	}
	/* an event alias (events/NAME holds terms), without a value */
	snprintf(path, sizeof(path), "events/%s", term);
	if (!eq && depth == 0 && !read_sysfs(sysfs, pmu, path, fmt, sizeof(fmt)))
		return parse_terms(sysfs, pmu, fmt, ev, spec, depth + 1, err);
	pmt_buf__printf(&b,
			"event '%s': %s has no term or event '%s'; terms: config config1 config2",
			spec, pmu, term);
	list_dir(&b, sysfs, pmu, "format", "");
	pmt_buf__puts(&b, "; events:");
	list_dir(&b, sysfs, pmu, "events", " none");
	ret = pmt_error__usage(err, "%s", pmt_buf__cstr(&b));
	pmt_buf__free(&b);
	return ret;
}

static int parse_terms(const char *sysfs, const char *pmu, char *terms, struct pmt_pmu_event *ev,
		       const char *spec, int depth, struct pmt_error *err)
{
	char *save = NULL, *t;
	int ret;

	for (t = strtok_r(terms, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*t))
			t++;
		if (!*t)
			continue;
		ret = apply_term(sysfs, pmu, t, ev, spec, depth, err);
		if (ret)
			return ret;
	}
	return 0;
}

/* pmu/terms/[mods] */
static int parse_pmu(const char *spec, const char *sysfs, struct pmt_pmu_event *ev,
		     struct pmt_error *err)
{
	const char *s1 = strchr(spec, '/'), *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
	char pmu[128], terms[512], type[32];
	struct pmt_buf b = {0};
	uint64_t t;
	int ret;

	if (!s2 || s1 == spec || (size_t)(s1 - spec) >= sizeof(pmu) ||
	    (size_t)(s2 - s1) > sizeof(terms))
		return pmt_error__usage(
			err,
			"event '%s': expected PMU/TERM=VALUE,.../, e.g. cpu/event=0x3c,umask=0/",
			spec);
	snprintf(pmu, sizeof(pmu), "%.*s", (int)(s1 - spec), spec);
	snprintf(terms, sizeof(terms), "%.*s", (int)(s2 - s1 - 1), s1 + 1);
	if (strchr(pmu, '.') || read_sysfs(sysfs, pmu, "type", type, sizeof(type)) ||
	    pmt_parse_u64(type, &t) || t > UINT32_MAX) {
		pmt_buf__printf(&b, "event '%s': no PMU '%s' on this machine; it has:", spec, pmu);
		list_dir(&b, sysfs, "", "", "");
		ret = pmt_error__usage(err, "%s", pmt_buf__cstr(&b));
		pmt_buf__free(&b);
		return ret;
	}
	ev->type = (uint32_t)t;
	ev->hardware = false;
	ret = parse_terms(sysfs, pmu, terms, ev, spec, 0, err);
	if (ret)
		return ret;
	return parse_modifiers(s2[1] == ':' ? s2 + 2 : s2 + 1, ev, spec, err);
}

static bool is_raw(const char *s, uint64_t *config)
{
	char *end;

	if (s[0] != 'r' || !isxdigit((unsigned char)s[1]))
		return false;
	errno = 0;
	*config = strtoull(s + 1, &end, 16);
	return !errno && !*end;
}

int pmt_pmu__parse(const char *spec, const char *sysfs, struct pmt_pmu_event *ev,
		   struct pmt_error *err)
{
	char base[128];
	const char *colon, *close[3];
	struct pmt_names all = {0};
	struct pmt_buf b = {0};
	int n, i, ret;

	memset(ev, 0, sizeof(*ev));
	snprintf(ev->name, sizeof(ev->name), "%s", spec);
	if (!*spec)
		return pmt_error__usage(err,
					"-e needs an event name, e.g. -e cpu-clock (see --list)");
	if (strchr(spec, '/'))
		return parse_pmu(spec, sysfs, ev, err);
	colon = strchr(spec, ':');
	if ((colon ? (size_t)(colon - spec) : strlen(spec)) >= sizeof(base))
		return pmt_error__usage(err, "event '%.40s...': name too long", spec);
	snprintf(base, sizeof(base), "%.*s", colon ? (int)(colon - spec) : (int)strlen(spec), spec);
	if (colon && (ret = parse_modifiers(colon + 1, ev, spec, err)))
		return ret;
	if (lookup(sw_events, N(sw_events), base, &ev->config)) {
		ev->type = PERF_TYPE_SOFTWARE;
		return 0;
	}
	ev->hardware = true;
	if (lookup(hw_events, N(hw_events), base, &ev->config)) {
		ev->type = PERF_TYPE_HARDWARE;
		return 0;
	}
	if (lookup_cache(base, &ev->config)) {
		ev->type = PERF_TYPE_HW_CACHE;
		return 0;
	}
	if (is_raw(base, &ev->config)) {
		ev->type = PERF_TYPE_RAW;
		return 0;
	}
	pmt_pmu__known(&all, true);
	n = pmt_suggest(base, all.v, all.n, close, 3);
	pmt_buf__printf(&b, "unknown event '%s'", base);
	for (i = 0; i < n; i++)
		pmt_buf__printf(&b, "%s%s", i ? " or " : "; did you mean ", close[i]);
	if (n)
		pmt_buf__putc(&b, '?');
	pmt_buf__puts(&b,
		      " (pmtrace --list shows this machine's events; raw: rNNNN, PMU/TERM=VAL/)");
	pmt_names__free(&all);
	ret = pmt_error__usage(err, "%s", pmt_buf__cstr(&b));
	pmt_buf__free(&b);
	return ret;
}

void pmt_pmu__sysfs_events(const char *sysfs, struct pmt_names *out)
{
	char path[512], name[600];
	struct dirent *d, *e;
	DIR *dir = opendir(sysfs), *ev;

	while (dir && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/events", sysfs, d->d_name);
		ev = opendir(path);
		while (ev && (e = readdir(ev))) {
			/* foo.scale / foo.unit describe foo */
			if (e->d_name[0] == '.' || strchr(e->d_name, '.'))
				continue;
			snprintf(name, sizeof(name), "%s/%s/", d->d_name, e->d_name);
			pmt_names__add(out, name);
		}
		if (ev)
			closedir(ev);
	}
	if (dir)
		closedir(dir);
}

bool pmt_pmu__has_hardware(const char *sysfs)
{
	static const char *const cpu_pmus[] = {"cpu", "cpu_core", "cpu_atom", "armv8_pmuv3"};
	char type[32];
	size_t i;

	for (i = 0; i < N(cpu_pmus); i++)
		if (!read_sysfs(sysfs, cpu_pmus[i], "type", type, sizeof(type)))
			return true;
	return false;
}

void pmt_pmu__count_attr(const struct pmt_pmu_event *ev, bool inherit, bool on_exec,
			 struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = ev->type;
	attr->config = ev->config;
	attr->config1 = ev->config1;
	attr->config2 = ev->config2;
	attr->exclude_user = ev->exclude_user;
	attr->exclude_kernel = ev->exclude_kernel;
	attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	attr->disabled = 1;
	attr->inherit = inherit;
	attr->enable_on_exec = on_exec;
}

const char *pmt_pmu__next_name(const char *list, char *out, size_t len)
{
	size_t n = 0;
	bool terms = false;
	const char *p;

	for (p = list; *p && (terms || *p != ','); p++) {
		if (*p == '/')
			terms = !terms;
		if (n + 1 < len)
			out[n++] = *p;
	}
	if (len)
		out[n] = '\0';
	return *p ? p + 1 : NULL;
}

int pmt_pmu__open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return (int)syscall(__NR_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}
