// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Printing aggregation snapshots: entries made here, as the kernel's maps
 * would hold them, printed into a file and compared with bpftrace's
 * layout. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "aggregate/aggregate.h"
#include "util/strutil.h"
#include "test.h"

/* One entry: key data = one 8-byte number (--by pid), bucket, count
 * values, each of them v. */
static void add_v(struct pmt_agg_entries *e, uint64_t pid, int32_t bucket, uint64_t count,
		  int64_t v)
{
	struct pmt_agg_val pc = {.count = count, .sum = v * (int64_t)count, .min = v, .max = v};
	struct pmt_agg_key key;

	memset(&key, 0, sizeof(key));
	key.bucket = bucket;
	memcpy(key.data, &pid, sizeof(pid));
	pmt_agg_entries__add(e, &key, &pc, 1, NULL);
}

static void add(struct pmt_agg_entries *e, uint64_t pid, int32_t bucket, uint64_t count)
{
	add_v(e, pid, bucket, count, 1);
}

/* Print cur with the options ao (one probe of format fmt, or none) into a
 * string the caller frees. */
static char *print_snapshot(struct pmt_agg_opts *ao, struct pmt_agg_entries *cur,
			    const struct pmt_format *fmt)
{
	struct pmt_agg_probe probe = {.name = "sched:sched_switch", .fmt = fmt};
	const struct pmt_agg_io io = {0};
	char path[] = "/tmp/pmt-unit-agg.XXXXXX", *text = NULL;
	struct pmt_output out;
	struct pmt_agg *agg;
	uint8_t stack = 0;
	struct pmt_error err = {0};
	int fd = mkstemp(path);

	if (fd < 0)
		return NULL;
	close(fd);
	if (!pmt_agg__compile(ao, &probe, 1, &pmt_test_exprs, &stack, &agg, &err) &&
	    !pmt_output__open(&out, path, PMT_OUT_TEXT, &err)) {
		pmt_agg__print(agg, cur, &io, &out, 0, &err);
		pmt_output__close(&out, &err);
		pmt_read_file(path, &text, NULL);
	}
	pmt_agg__free(agg);
	pmt_agg_entries__free(cur);
	unlink(path);
	return text;
}

/* Keys interleave and buckets go below zero: each key one histogram,
 * buckets in numeric order, (..., 0) first. */
TEST(agg_hist_by_key_negative)
{
	struct pmt_agg_opts ao = {.fn = PMT_FN_HIST, .expr = "pid", .by = "pid", .max_keys = 16};
	struct pmt_agg_entries e = {0};
	char *text;

	add(&e, 7, 2, 5);
	add(&e, 9, 1, 1);
	add(&e, 7, -1, 2);
	add(&e, 9, 3, 1);
	text = print_snapshot(&ao, &e, NULL);
	ASSERT_TRUE(text != NULL);
	ASSERT_STREQ(
		text,
		"@[9]: \n"
		"[1]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"[2, 4)                 0 |                                                    |\n"
		"[4, 8)                 1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n"
		"@[7]: \n"
		"(..., 0)               2 |@@@@@@@@@@@@@@@@@@@@                                |\n"
		"[0]                    0 |                                                    |\n"
		"[1]                    0 |                                                    |\n"
		"[2, 4)                 5 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n");
	free(text);
}

/* A print of many keys goes out in pieces (64 KB each): the text whole
 * and in order, as one piece would be. */
TEST(agg_print_in_pieces)
{
	struct pmt_agg_opts ao = {.fn = PMT_FN_COUNT, .by = "pid", .max_keys = 32768};
	struct pmt_agg_entries e = {0};
	struct pmt_buf want = {0};
	char *text;
	uint64_t i;

	for (i = 1; i <= 20000; i++) {
		add(&e, i, 0, i);
		pmt_buf__printf(&want, "@[%llu]: %llu\n", (unsigned long long)i,
				(unsigned long long)i);
	}
	pmt_buf__putc(&want, '\0');
	ASSERT_TRUE(want.len > 4 * 64 * 1024);
	text = print_snapshot(&ao, &e, NULL);
	ASSERT_TRUE(text != NULL);
	ASSERT_STREQ(text, want.p);
	free(text);
	pmt_buf__free(&want);
}

/* More than 256 linear buckets: numeric order, not the bytes of the
 * bucket number. */
TEST(agg_lhist_many_buckets)
{
	struct pmt_agg_opts ao = {.fn = PMT_FN_LHIST,
				  .expr = "pid",
				  .lmin = 0,
				  .lmax = 1000,
				  .lstep = 1,
				  .lbuckets = 1000,
				  .max_keys = 16};
	struct pmt_agg_entries e = {0};
	char *text, *a, *b;

	add(&e, 0, 256, 3);
	add(&e, 0, 1, 4);
	add(&e, 0, 257, 5);
	text = print_snapshot(&ao, &e, NULL);
	ASSERT_TRUE(text != NULL);
	a = strstr(text, "[1, 2)");
	b = strstr(text, "[256, 257)");
	ASSERT_TRUE(a && b && a < b);
	ASSERT_TRUE(strstr(text, "[256, 257)             3 |") != NULL);
	ASSERT_TRUE(strstr(text, "[257, 258)             5 |") != NULL);
	free(text);
}

/* What the kernel preallocates: 4M keys of "comm" (24-byte keys) on 2
 * CPUs measured 856 MB on 6.18; the estimate must be within 10%. */
TEST(agg_kernel_bytes_estimate)
{
	struct pmt_agg_opts ao = {.fn = PMT_FN_COUNT, .by = "comm", .max_keys = 4194304};
	struct pmt_agg_probe probe = {.name = "sched:sched_switch"};
	struct pmt_agg *agg = NULL;
	struct pmt_agg_maps m;
	uint8_t stack = 0;
	struct pmt_error err = {0};
	uint64_t bytes;

	ASSERT_EQ(pmt_agg__compile(&ao, &probe, 1, &pmt_test_exprs, &stack, &agg, &err), 0);
	pmt_agg__maps(agg, &m);
	ASSERT_EQ(m.key_size, 24);
	bytes = pmt_agg__kernel_bytes(agg, 2);
	pmt_agg__free(agg);
	ASSERT_TRUE(bytes > 856ull * 1000 * 1000 * 9 / 10 &&
		    bytes < 856ull * 1000 * 1000 * 11 / 10);
	/* small maps cost little, unkeyed ones nothing */
	ao.by = NULL;
	ASSERT_EQ(pmt_agg__compile(&ao, &probe, 1, &pmt_test_exprs, &stack, &agg, &err), 0);
	ASSERT_EQ(pmt_agg__kernel_bytes(agg, 2), 0);
	pmt_agg__free(agg);
}

/* The kernel's per-CPU key cache (bpf/abi.h): a slot counts while the
 * hash still holds what it was loaded with; after a write-back, or once
 * the key was deleted and made anew, the hash's value is the one. */
TEST(agg_cache_slot_rule)
{
	struct pmt_agg_cache cache[2];
	struct pmt_agg_val pc[2];
	struct pmt_agg_entries e = {0};
	struct pmt_agg_key key;
	struct pmt_agg_cslot *sl;
	uint64_t pid = 42;
	int c;

	memset(&key, 0, sizeof(key));
	memcpy(key.data, &pid, sizeof(pid));
	memset(cache, 0, sizeof(cache));
	for (c = 0; c < 2; c++) {
		sl = (struct pmt_agg_cslot *)pmt_agg_cache__slot(&cache[c], &key);
		sl->key = key;
	}
	/* CPU 0: loaded at 3, at 5 now, not written back */
	sl = (struct pmt_agg_cslot *)pmt_agg_cache__slot(&cache[0], &key);
	sl->val = (struct pmt_agg_val){.count = 5, .sum = 50, .min = 1, .max = 20};
	sl->base_count = 3;
	/* CPU 1: loaded at 2, written back at 4 since the caches were read */
	sl = (struct pmt_agg_cslot *)pmt_agg_cache__slot(&cache[1], &key);
	sl->val = (struct pmt_agg_val){.count = 4, .sum = 40, .min = 1, .max = 10};
	sl->base_count = 2;
	pc[0] = (struct pmt_agg_val){.count = 3, .sum = 30, .min = 1, .max = 10};
	pc[1] = (struct pmt_agg_val){.count = 4, .sum = 40, .min = 1, .max = 10};
	ASSERT_EQ(pmt_agg_entries__add(&e, &key, pc, 2, cache), 0);
	ASSERT_EQ(e.n, 1);
	ASSERT_EQ(e.v[0].val.count, 9);
	ASSERT_EQ(e.v[0].val.sum, 90);
	ASSERT_EQ(e.v[0].val.max, 20);
	/* deleted as idle, made anew on CPU 1: CPU 0's slot waits for its
	 * write-back (which adds only its gain) instead of counting again */
	pc[0] = (struct pmt_agg_val){0};
	pc[1] = (struct pmt_agg_val){.count = 1, .sum = 7, .min = 7, .max = 7};
	sl = (struct pmt_agg_cslot *)pmt_agg_cache__slot(&cache[1], &key);
	sl->val.count = 0;
	ASSERT_EQ(pmt_agg_entries__add(&e, &key, pc, 2, cache), 0);
	ASSERT_EQ(e.n, 2);
	ASSERT_EQ(e.v[1].val.count, 1);
	pmt_agg_entries__free(&e);
}

/* --interval: a key with no event in the interval printed is offered for
 * deletion and forgotten; when it comes back its count starts afresh. */
static bool drop_two(void *ctx, const struct pmt_agg_key *key, bool idle)
{
	if (!idle)
		return false;
	(*(int *)ctx)++;
	return key->data[0] == 2;
}

/* Prints of one aggregation into a file, as --interval makes them: the
 * snapshots handed in set the totals, printed where they are, as the
 * loader does (src/aggregate/maps_bpf.c). */
struct printer {
	struct pmt_agg *agg;
	struct pmt_agg_totals t;
	struct pmt_agg_entries view; /* the last print's */
	struct pmt_output out;
	struct pmt_error err;
	char path[32];
};

static int printer__open(struct printer *p, const struct pmt_agg_opts *ao)
{
	struct pmt_agg_probe probe = {.name = "sched:sched_switch"};
	uint8_t stack = 0;
	int fd;

	memset(p, 0, sizeof(*p));
	strcpy(p->path, "/tmp/pmt-unit-agg.XXXXXX");
	if ((fd = mkstemp(p->path)) < 0)
		return -1;
	close(fd);
	if (pmt_agg__compile(ao, &probe, 1, &pmt_test_exprs, &stack, &p->agg, &p->err))
		return -1;
	return pmt_output__open(&p->out, p->path, PMT_OUT_TEXT, &p->err);
}

/* cur (each key's values since the start) into the totals, printed */
static int printer__print(struct printer *p, struct pmt_agg_entries *cur)
{
	const struct pmt_agg_io io = {0};
	size_t i;
	int err = 0;

	for (i = 0; !err && i < cur->n; i++)
		err = pmt_agg_totals__set(&p->t, &cur->v[i]);
	pmt_agg_entries__free(cur);
	return err ?: pmt_agg_totals__map(&p->t, 0, &p->view) ?:
		       pmt_agg__print(p->agg, &p->view, &io, &p->out, 0, &p->err);
}

/* After a print: the keys drop takes are cut from the totals */
static size_t printer__forget(struct printer *p,
			      bool (*drop)(void *ctx, const struct pmt_agg_key *key, bool idle),
			      void *ctx)
{
	size_t n = pmt_agg__forget(p->agg, &p->view, drop, ctx);

	pmt_agg_totals__cut(&p->t, p->view.n, n);
	return n;
}

/* Only what is printed from here on is kept. */
static int printer__restart(struct printer *p)
{
	pmt_output__close(&p->out, &p->err);
	return pmt_output__open(&p->out, p->path, PMT_OUT_TEXT, &p->err);
}

/* What was printed (the caller frees it); the printer is gone. */
static char *printer__close(struct printer *p)
{
	char *text = NULL;

	pmt_output__close(&p->out, &p->err);
	pmt_read_file(p->path, &text, NULL);
	pmt_agg__free(p->agg);
	pmt_agg_totals__free(&p->t);
	unlink(p->path);
	return text;
}

TEST(agg_forget_idle)
{
	struct pmt_agg_opts ao = {.fn = PMT_FN_COUNT, .by = "pid", .interval = 1};
	struct pmt_agg_entries cur = {0};
	struct printer p;
	int offered = 0;
	char *text;

	ASSERT_EQ(printer__open(&p, &ao), 0);
	add(&cur, 1, 0, 5);
	add(&cur, 2, 0, 7);
	add(&cur, 3, 0, 1);
	ASSERT_EQ(printer__print(&p, &cur), 0);
	ASSERT_EQ(printer__forget(&p, drop_two, &offered), 0);
	ASSERT_EQ(offered, 0); /* all new: none idle */
	add(&cur, 1, 0, 6);
	add(&cur, 2, 0, 7);
	add(&cur, 3, 0, 1);
	ASSERT_EQ(printer__print(&p, &cur), 0);
	/* 2 and 3 idle; the loader deletes 2 only (3 is in a CPU's cache) */
	ASSERT_EQ(printer__forget(&p, drop_two, &offered), 1);
	ASSERT_EQ(offered, 2);
	add(&cur, 1, 0, 6);
	add(&cur, 2, 0, 2); /* made anew */
	add(&cur, 3, 0, 1);
	ASSERT_EQ(printer__restart(&p), 0);
	ASSERT_EQ(printer__print(&p, &cur), 0);
	text = printer__close(&p);
	ASSERT_TRUE(text && strstr(text, "@[2]: 2\n") && !strstr(text, "@[1]") &&
		    !strstr(text, "@[3]"));
	free(text);
}

/* --interval with a histogram: a bucket with nothing new in an interval
 * gives the key's min and max nothing (its since-start min of 0 once made
 * a key whose values were all 1 print min 0). */
TEST(agg_interval_min_of_new_buckets)
{
	struct pmt_agg_opts ao = {.fn = PMT_FN_LHIST,
				  .expr = "pid",
				  .by = "pid",
				  .interval = 1,
				  .lmin = 0,
				  .lmax = 10,
				  .lstep = 1,
				  .lbuckets = 10,
				  .max_keys = 16,
				  .json = true};
	struct pmt_agg_entries cur = {0};
	struct printer p;
	char *text;

	ASSERT_EQ(printer__open(&p, &ao), 0);
	add_v(&cur, 7, 0, 1, 0);
	add_v(&cur, 7, 1, 2, 1);
	ASSERT_EQ(printer__print(&p, &cur), 0);
	add_v(&cur, 7, 0, 1, 0); /* nothing new at 0 */
	add_v(&cur, 7, 1, 5, 1);
	ASSERT_EQ(printer__print(&p, &cur), 0);
	text = printer__close(&p);
	ASSERT_TRUE(text != NULL);
	ASSERT_TRUE(strstr(text, "\"count\":3,\"sum\":2,\"min\":0,\"max\":1,") != NULL);
	ASSERT_TRUE(strstr(text, "\"count\":3,\"sum\":3,\"min\":1,\"max\":1,") != NULL);
	free(text);
}

static struct pmt_agg_entry entry(uint64_t pid, uint64_t count, int64_t min, int64_t max)
{
	struct pmt_agg_entry e;

	memset(&e, 0, sizeof(e));
	memcpy(e.key.data, &pid, sizeof(pid));
	e.val = (struct pmt_agg_val){.count = count, .sum = (int64_t)count, .min = min, .max = max};
	return e;
}

static bool pid_odd(void *ctx, const struct pmt_agg_key *key)
{
	uint64_t pid;

	(void)ctx;
	memcpy(&pid, key->data, sizeof(pid));
	return pid & 1;
}

/* Drains add up: each key's values merged across drains (count, sum,
 * min, max), found among 10,000 keys; dropped keys leave the rest whole. */
TEST(agg_totals_merge_across_drains)
{
	struct pmt_agg_totals t = {0};
	struct pmt_agg_entries view;
	struct pmt_agg_entry e;
	uint64_t pid, sum = 0;
	size_t i, kept;

	for (pid = 0; pid < 10000; pid++) {
		e = entry(pid, 1, 5, 5);
		ASSERT_EQ(pmt_agg_totals__add(&t, &e), 0);
	}
	for (pid = 0; pid < 10000; pid += 2) {
		e = entry(pid, 2, -3, 9);
		ASSERT_EQ(pmt_agg_totals__add(&t, &e), 0);
	}
	e = entry(7, 0, 0, 0); /* nothing to add: no entry made */
	ASSERT_EQ(pmt_agg_totals__add(&t, &e), 0);
	ASSERT_EQ(t.e.n, 10000);
	for (i = 0; i < t.e.n; i++) {
		memcpy(&pid, t.e.v[i].key.data, sizeof(pid));
		ASSERT_EQ(t.e.v[i].val.count, pid % 2 ? 1 : 3);
		ASSERT_EQ(t.e.v[i].val.min, pid % 2 ? 5 : -3);
		ASSERT_EQ(t.e.v[i].val.max, pid % 2 ? 5 : 9);
		sum += t.e.v[i].val.count;
	}
	ASSERT_EQ(sum, 20000);
	/* the odd pids forgotten, as a print's forget leaves them: at the
	 * view's end, cut */
	ASSERT_EQ(pmt_agg_totals__map(&t, 0, &view), 0);
	ASSERT_EQ(view.n, 10000);
	for (i = kept = 0; i < view.n; i++)
		if (!pid_odd(NULL, &view.v[i].key))
			view.v[kept++] = view.v[i];
	pmt_agg_totals__cut(&t, kept, view.n - kept);
	ASSERT_EQ(t.e.n, 5000);
	e = entry(4, 1, 0, 0);
	ASSERT_EQ(pmt_agg_totals__add(&t, &e), 0);
	e = entry(5, 1, 0, 0); /* dropped: back from zero */
	ASSERT_EQ(pmt_agg_totals__add(&t, &e), 0);
	ASSERT_EQ(t.e.n, 5001);
	for (i = 0; i < t.e.n; i++) {
		memcpy(&pid, t.e.v[i].key.data, sizeof(pid));
		ASSERT_EQ(t.e.v[i].val.count, pid == 4 ? 4 : pid == 5 ? 1 : 3);
	}
	/* a bound: known keys still merge, new ones are refused */
	t.limit = 5001;
	e = entry(6, 1, 0, 0);
	ASSERT_EQ(pmt_agg_totals__add(&t, &e), 0);
	e = entry(9, 1, 0, 0);
	ASSERT_EQ(pmt_agg_totals__add(&t, &e), -ENOSPC);
	ASSERT_EQ(t.e.n, 5001);
	pmt_agg_totals__free(&t);
}

/* A map's view of the totals: its entries only, sorted by key where they
 * are; the index follows the sort (a drain after it merges into the same
 * entries, a base set through the view stays); set replaces values. */
TEST(agg_totals_views_by_map)
{
	struct pmt_agg_totals t = {0};
	struct pmt_agg_entries v0, v1;
	struct pmt_agg_entry e;
	uint64_t pid, prev = 0;
	size_t i;

	for (pid = 300; pid > 0; pid--) {
		e = entry(pid, 1, 0, 0);
		e.key.pad = (uint32_t)(pid % 3 == 0) << PMT_AGG_MAP_SHIFT;
		ASSERT_EQ(pmt_agg_totals__add(&t, &e), 0);
	}
	ASSERT_EQ(pmt_agg_totals__map(&t, 1, &v1), 0);
	ASSERT_EQ(v1.n, 100);
	for (i = 0; i < v1.n; i++) {
		ASSERT_EQ(v1.v[i].key.pad, 1u << PMT_AGG_MAP_SHIFT);
		if (i)
			ASSERT_TRUE(memcmp(v1.v[i - 1].key.data, v1.v[i].key.data, 8) < 0);
		v1.v[i].base_count = v1.v[i].val.count;
	}
	ASSERT_EQ(pmt_agg_totals__map(&t, 0, &v0), 0);
	ASSERT_EQ(v0.n, 200);
	ASSERT_TRUE(v0.v + v0.n == v1.v); /* map 0's first, then 1's */
	for (pid = 1; pid <= 300; pid++) {
		e = entry(pid, 2, 0, 0);
		e.key.pad = (uint32_t)(pid % 3 == 0) << PMT_AGG_MAP_SHIFT;
		ASSERT_EQ(pmt_agg_totals__add(&t, &e), 0);
	}
	e = entry(3, 7, 0, 0);
	e.key.pad = 1u << PMT_AGG_MAP_SHIFT;
	ASSERT_EQ(pmt_agg_totals__set(&t, &e), 0);
	ASSERT_EQ(t.e.n, 300);
	ASSERT_EQ(pmt_agg_totals__map(&t, 1, &v1), 0);
	for (i = 0; i < v1.n; i++) {
		memcpy(&pid, v1.v[i].key.data, sizeof(pid));
		ASSERT_EQ(pid % 3, 0);
		ASSERT_TRUE(pid != prev);
		ASSERT_EQ(v1.v[i].val.count, pid == 3 ? 7 : 3);
		ASSERT_EQ(v1.v[i].base_count, 1);
		prev = pid;
	}
	pmt_agg_totals__free(&t);
}

/* Stack copies: one per key; the same key with another check is refused
 * (the two stacks cannot be told apart by key); a sweep frees the copies
 * not used since the last. */
TEST(agg_stack_copies)
{
	struct pmt_stack_copies s = {0};
	const struct pmt_stack_copy *c;
	uint64_t ips[3] = {0x401000, 0x401100, 0x401200}, key;

	for (key = 1; key <= 3000; key++)
		ASSERT_EQ(pmt_stack_copies__put(&s, key << 32 | key, key, ips, 1 + key % 3), 0);
	ASSERT_EQ(pmt_stack_copies__put(&s, 7ULL << 32 | 7, 7, ips, 2), 0);
	ASSERT_EQ(pmt_stack_copies__put(&s, 7ULL << 32 | 7, 8, ips, 2), -EEXIST);
	c = pmt_stack_copies__find(&s, 5ULL << 32 | 5);
	ASSERT_TRUE(c && c->n == 3 && c->ips[2] == 0x401200 && c->check == 5);
	ASSERT_TRUE(!pmt_stack_copies__find(&s, 5ULL << 32 | 6));
	for (key = 2; key <= 3000; key += 2)
		pmt_stack_copies__use(&s, key << 32 | key);
	ASSERT_EQ(pmt_stack_copies__sweep(&s), 1500);
	ASSERT_TRUE(!pmt_stack_copies__find(&s, 3ULL << 32 | 3));
	c = pmt_stack_copies__find(&s, 4ULL << 32 | 4);
	ASSERT_TRUE(c && c->n == 2 && c->ips[1] == 0x401100);
	/* unused since: all go */
	ASSERT_EQ(pmt_stack_copies__sweep(&s), 1500);
	ASSERT_EQ(s.n, 0);
	pmt_stack_copies__free(&s);
}

/* One key a stack, whatever key the kernel gave it: a stack held already
 * is found by its owner, hash and frames under any key; a new stack under
 * a key another holds takes the next free one of its owner (never a "no
 * stack" or "deferred" low half); the same hash with other frames or
 * another owner is another stack. Found again after a sweep. */
TEST(agg_stack_copies_one_key_a_stack)
{
	struct pmt_stack_copies s = {0};
	uint64_t a[2] = {0x401000, 0x402000}, b[2] = {0x501000, 0x502000}, id, id2, id3;
	const uint64_t owner = 42ULL << 32, h = 0x0000000300000010ULL;

	ASSERT_EQ(pmt_stack_copies__id(&s, owner | 0x10, h, a, 2, &id), 0);
	ASSERT_EQ(id, owner | 0x10);
	/* the kernel put it at another slot later: the key stays */
	ASSERT_EQ(pmt_stack_copies__id(&s, owner | 0x13, h, a, 2, &id), 0);
	ASSERT_EQ(id, owner | 0x10);
	/* another stack under its key: the next of the steps (3 | 1) */
	ASSERT_EQ(pmt_stack_copies__id(&s, owner | 0x10, h + 1, b, 2, &id2), 0);
	ASSERT_EQ(id2, owner | 0x13);
	/* the same hash, other frames (a 64-bit collision): apart */
	ASSERT_EQ(pmt_stack_copies__id(&s, owner | 0x10, h, b, 2, &id3), 0);
	ASSERT_TRUE(id3 != id && id3 != id2 && id3 >> 32 == 42);
	/* another owner: its own key */
	ASSERT_EQ(pmt_stack_copies__id(&s, 7ULL << 32 | 0x10, h, a, 2, &id3), 0);
	ASSERT_EQ(id3, 7ULL << 32 | 0x10);
	/* slots past the reserved low halves wrap around them */
	ASSERT_EQ(pmt_stack_copies__id(&s, owner | 0xfffffffd, 0x00000001fffffffdULL, a, 1, &id3),
		  0);
	ASSERT_EQ(id3, owner | 0xfffffffd);
	ASSERT_EQ(pmt_stack_copies__id(&s, owner | 0xfffffffd, 0x00000001fffffffeULL, b, 1, &id3),
		  0);
	ASSERT_EQ(id3, owner | 0);
	pmt_stack_copies__use(&s, id2);
	ASSERT_EQ(pmt_stack_copies__sweep(&s), 5);
	ASSERT_EQ(pmt_stack_copies__id(&s, owner | 0x10, h + 1, b, 2, &id), 0);
	ASSERT_EQ(id, id2);
	pmt_stack_copies__free(&s);
}

/* ntop(daddr) of an IPv4 address array: the key's 4 bytes as in memory,
 * a.b.c.d; of an IPv6 one (16 bytes) as inet_ntop shows it; other sizes
 * refused. */
TEST(agg_ntop_key)
{
	struct pmt_format *fmt = pmt_test__format("inet_sock_set_state.format");
	struct pmt_agg_opts ao = {.fn = PMT_FN_COUNT, .by = "ntop(daddr),dport", .max_keys = 16};
	struct pmt_agg_probe probe = {.name = "sock:inet_sock_set_state"};
	struct pmt_agg_entries e = {0};
	struct pmt_agg_val v = {.count = 3, .sum = 3};
	struct pmt_agg_key key;
	struct pmt_error err = {0};
	struct pmt_agg *agg = NULL;
	uint8_t stack = 0;
	uint64_t port = 8080;
	char *text;

	ASSERT_TRUE(fmt);
	memset(&key, 0, sizeof(key));
	memcpy(key.data, "\x7f\x00\x00\x01", 4);
	memcpy(key.data + 8, &port, 8);
	pmt_agg_entries__add(&e, &key, &v, 1, NULL);
	text = print_snapshot(&ao, &e, fmt);
	ASSERT_TRUE(text != NULL);
	ASSERT_STREQ(text, "@[127.0.0.1, 8080]: 3\n");
	free(text);
	/* 16 bytes: IPv6, as inet_ntop shows it; a key part of 16 */
	ao.by = "ntop(daddr_v6),dport";
	memset(&key, 0, sizeof(key));
	memcpy(key.data, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\1", 16);
	memcpy(key.data + 16, &port, 8);
	pmt_agg_entries__add(&e, &key, &v, 1, NULL);
	memset(&key, 0, sizeof(key));
	memcpy(key.data, "\0\0\0\0\0\0\0\0\0\0\xff\xff\x7f\0\0\1", 16);
	memcpy(key.data + 16, &port, 8);
	pmt_agg_entries__add(&e, &key, &v, 1, NULL);
	text = print_snapshot(&ao, &e, fmt);
	ASSERT_TRUE(text != NULL);
	ASSERT_STREQ(text, "@[::1, 8080]: 3\n@[::ffff:127.0.0.1, 8080]: 3\n");
	free(text);
	probe.fmt = fmt;
	ao.by = "ntop(sport)";
	ASSERT_TRUE(pmt_agg__compile(&ao, &probe, 1, &pmt_test_exprs, &stack, &agg, &err) != 0);
	ASSERT_STREQ(err.msg,
		     "--by ntop(sport): ntop() shows an IPv4 address (4 bytes) or an IPv6 one "
		     "(16): 'sport' is __u16 (2 bytes)");
	pmt_agg_entries__free(&e);
	pmt_format__free(fmt);
}
