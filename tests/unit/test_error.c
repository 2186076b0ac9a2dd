// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The error value (util/error.h) and the mechanism of kernel function
 * probes on each kernel of the test matrix (probes/kfunc.h). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include "abi.h"
#include "probes/kfunc.h"
#include "util/error.h"
#include "util/log.h"
#include "test.h"

static const char *format(struct pmt_buf *b, const struct pmt_error *e)
{
	b->len = 0;
	pmt_error__format(b, e);
	return pmt_buf__cstr(b);
}

TEST(error_classes_and_exit_status)
{
	struct pmt_error e = {0};
	struct pmt_buf b = {0};

	ASSERT_EQ(pmt_error__exit_status(&e), PMT_EXIT_OK);
	pmt_error__hint(&e, "no error yet: not kept");
	ASSERT_STREQ(e.hint, "");
	ASSERT_EQ(pmt_error__usage(&e, "--tp '%s': no tracepoint matches", "x:y*"), -EINVAL);
	ASSERT_TRUE(pmt_error__set(&e));
	ASSERT_EQ(pmt_error__exit_status(&e), PMT_EXIT_USAGE);
	pmt_error__hint(&e, "see pmtrace --list '%s'", "x:*");
	pmt_error__hint(&e, "or --list");
	/* the first error wins, with its own hints */
	ASSERT_EQ(pmt_error__runtime(&e, -ENOMEM, "out of memory"), -ENOMEM);
	pmt_error__hint(&e, "not this one");
	ASSERT_EQ(pmt_error__exit_status(&e), PMT_EXIT_USAGE);
	ASSERT_STREQ(format(&b, &e), "--tp 'x:y*': no tracepoint matches\n"
				     "hint: see pmtrace --list 'x:*'\nhint: or --list\n");

	pmt_error__clear(&e);
	ASSERT_EQ(pmt_error__runtime(&e, -ENOMEM, "%s: out of memory", "p"), -ENOMEM);
	ASSERT_EQ(e.code, -ENOMEM);
	ASSERT_EQ(pmt_error__exit_status(&e), PMT_EXIT_FAIL);
	/* a code that is not an errno still fails */
	pmt_error__clear(&e);
	ASSERT_EQ(pmt_error__runtime(&e, 0, "lost"), -EIO);

	/* a caret under the bad token, tabs shown as spaces */
	pmt_error__clear(&e);
	pmt_error__usage(&e, "--filter: unknown field 'x'");
	pmt_error__caret(&e, "pid ==\t1 && x", 12, 1);
	ASSERT_STREQ(format(&b, &e), "--filter: unknown field 'x'\n  pid == 1 && x\n"
				     "              ^\n");
	pmt_error__clear(&e);
	pmt_error__usage(&e, "--filter: empty");
	pmt_error__caret(&e, "", 0, 0);
	ASSERT_STREQ(format(&b, &e), "--filter: empty\n  \n  ^\n");
	pmt_buf__free(&b);
}

/* The kernels of the test matrix, as pmtrace finds them. */
static const struct pmt_kfeatures k618 = {
	.kprobe = false,
	.multi = false,
	.fentry = -524,
	.fentry_why = "the kernel refused attaching a fentry program on vfs_read: not supported",
};
static const struct pmt_kfeatures k61 = {.kprobe = true, .multi = true, .fentry = 0};
static const struct pmt_kfeatures k612 = {.kprobe = true, .multi = true, .fentry = 0};
/* a kernel with kprobes and no BTF trampolines (no multi links either) */
static const struct pmt_kfeatures k_old = {
	.kprobe = true, .fentry = -ENOENT, .fentry_why = "vmlinux BTF has no function vfs_read"};

static struct pmt_kfn_request one_fn(enum pmt_kfn_want want)
{
	struct pmt_kfn_request r = {.opt = "kprobe",
				    .spec = "vfs_read",
				    .want = want,
				    .nfuncs = 1,
				    .ftraced = true,
				    .btf = true,
				    .fentry_free = PMT_FN_SLOTS};

	return r;
}

/* mechanism name, or the error's first words */
static const char *choose(const struct pmt_kfeatures *k, const struct pmt_kfn_request *r, char *buf,
			  size_t len)
{
	struct pmt_error e = {0};
	enum pmt_kfn_mech m;

	if (pmt_kfn__choose(k, r, &m, &e)) {
		snprintf(buf, len, "%d: %s", pmt_error__exit_status(&e), e.msg);
		return buf;
	}
	return pmt_kfn__name(m);
}

TEST(kfunc_mechanism_per_kernel)
{
	struct pmt_kfn_request r = one_fn(PMT_KFN_AUTO);
	struct pmt_error e = {0};
	char buf[1100];

	/* one function with BTF: fentry where trampolines work */
	ASSERT_STREQ(choose(&k61, &r, buf, sizeof(buf)), "fentry");
	ASSERT_STREQ(choose(&k612, &r, buf, sizeof(buf)), "fentry");
	ASSERT_STREQ(choose(&k_old, &r, buf, sizeof(buf)), "kprobe");
	ASSERT_STREQ(choose(&k618, &r, buf, sizeof(buf)),
		     "2: --kprobe vfs_read: this kernel has no kprobes (built without "
		     "CONFIG_KPROBES); fentry/fexit works here but takes at most 8 functions of "
		     "each, with BTF");
	/* 6.18 here: neither, said before any function is looked up */
	ASSERT_EQ(pmt_kfn__possible(&k618, "kprobe", "vfs_read", &e), -EINVAL);
	ASSERT_TRUE(strstr(e.msg, "can attach neither kprobes") &&
		    strstr(e.msg, "nor fentry/fexit (the kernel refused attaching"));
	ASSERT_TRUE(strstr(e.hint, "tracepoints (--tp"));
	ASSERT_EQ(pmt_kfn__possible(&k61, "kprobe", "vfs_read", &e), 0);
	ASSERT_EQ(pmt_kfn__possible(&k_old, "kprobe", "vfs_read", &e), 0);

	/* a glob of 20: more than the fentry slots, one kprobe.multi link */
	r.spec = "vfs_*";
	r.nfuncs = 20;
	ASSERT_STREQ(choose(&k61, &r, buf, sizeof(buf)), "kprobe.multi");
	ASSERT_STREQ(choose(&k612, &r, buf, sizeof(buf)), "kprobe.multi");
	ASSERT_STREQ(choose(&k_old, &r, buf, sizeof(buf)), "kprobe");
	/* a glob that fits the slots still takes fentry */
	r.nfuncs = 3;
	ASSERT_STREQ(choose(&k612, &r, buf, sizeof(buf)), "fentry");
	r.fentry_free = 2; /* slots taken by earlier options */
	ASSERT_STREQ(choose(&k612, &r, buf, sizeof(buf)), "kprobe.multi");

	/* FUNC+OFF, a function without BTF, one ftrace cannot hook: kprobe */
	r = one_fn(PMT_KFN_AUTO);
	r.offset = true;
	ASSERT_STREQ(choose(&k612, &r, buf, sizeof(buf)), "kprobe");
	r = one_fn(PMT_KFN_AUTO);
	r.btf = false;
	ASSERT_STREQ(choose(&k61, &r, buf, sizeof(buf)), "kprobe");
	r = one_fn(PMT_KFN_AUTO);
	r.ftraced = false;
	ASSERT_STREQ(choose(&k61, &r, buf, sizeof(buf)), "kprobe");

	/* --kprobe-mode */
	r = one_fn(PMT_KFN_WANT_KPROBE);
	ASSERT_STREQ(choose(&k612, &r, buf, sizeof(buf)), "kprobe");
	ASSERT_STREQ(choose(&k618, &r, buf, sizeof(buf)),
		     "2: --kprobe vfs_read: this kernel has no kprobes (built without "
		     "CONFIG_KPROBES)");
	r = one_fn(PMT_KFN_WANT_FENTRY);
	ASSERT_STREQ(choose(&k61, &r, buf, sizeof(buf)), "fentry");
	ASSERT_STREQ(choose(&k_old, &r, buf, sizeof(buf)),
		     "2: --kprobe vfs_read: --kprobe-mode fentry, but vmlinux BTF has no function "
		     "vfs_read");
	r.ftraced = false;
	ASSERT_STREQ(choose(&k612, &r, buf, sizeof(buf)),
		     "2: --kprobe vfs_read: fentry/fexit needs a function ftrace can hook, and "
		     "this one is not in available_filter_functions");
	r = one_fn(PMT_KFN_WANT_FENTRY);
	r.nfuncs = 9;
	ASSERT_STREQ(choose(&k612, &r, buf, sizeof(buf)),
		     "2: --kprobe vfs_read: fentry/fexit takes one program a function: at most 8 "
		     "of each a session, with BTF and no offset (this asks for 9 more)");
}

/* a program's kprobe: (as bpftrace's): kprobes where the kernel has them,
 * one program for all however many functions; fentry where it has only
 * trampolines */
TEST(kfunc_program_prefers_kprobes)
{
	static const struct pmt_kfeatures k_tramp = {.fentry = 0};
	struct pmt_kfn_request r = one_fn(PMT_KFN_PREFER_KPROBE);
	char buf[1100];

	ASSERT_STREQ(choose(&k61, &r, buf, sizeof(buf)), "kprobe");
	ASSERT_STREQ(choose(&k612, &r, buf, sizeof(buf)), "kprobe");
	ASSERT_STREQ(choose(&k_old, &r, buf, sizeof(buf)), "kprobe");
	ASSERT_STREQ(choose(&k_tramp, &r, buf, sizeof(buf)), "fentry");
	r.nfuncs = 3;
	ASSERT_STREQ(choose(&k612, &r, buf, sizeof(buf)), "kprobe.multi");
	ASSERT_STREQ(choose(&k_tramp, &r, buf, sizeof(buf)), "fentry");
	r.nfuncs = 9;
	ASSERT_STREQ(choose(&k_tramp, &r, buf, sizeof(buf)),
		     "2: --kprobe vfs_read: this kernel has no kprobes (built without "
		     "CONFIG_KPROBES); fentry/fexit works here but takes at most 8 functions of "
		     "each, with BTF");
}

/* Messages from two threads (the loader's and the event loop's) stay
 * whole lines, control bytes escaped: written a byte at a time they
 * interleaved, and a test waiting for one line never saw it. */
static void *say_many(void *arg)
{
	for (int i = 0; i < 400; i++)
		pmt_warn("%s", (const char *)arg);
	return NULL;
}

TEST(log_lines_whole_across_threads)
{
	static const char a[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\x01 loader";
	static const char b[] = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb Ctrl-C";
	char path[] = "/tmp/pmt-log-XXXXXX", line[256];
	int fd = mkstemp(path), saved = dup(2), na = 0, nb = 0, other = 0;
	pthread_t t1, t2;
	FILE *f;

	ASSERT_TRUE(fd >= 0 && saved >= 0);
	fflush(stderr);
	dup2(fd, 2);
	pthread_create(&t1, NULL, say_many, (void *)a);
	pthread_create(&t2, NULL, say_many, (void *)b);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	f = fdopen(fd, "r");
	ASSERT_TRUE(f != NULL);
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		if (!strcmp(line,
			    "pmtrace: warning: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
			    "\\x01 loader\n"))
			na++;
		else if (!strcmp(line, "pmtrace: warning: bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
				       "bbbbbbbbbbbbbbbbbbb Ctrl-C\n"))
			nb++;
		else
			other++;
	}
	fclose(f);
	unlink(path);
	ASSERT_EQ(other, 0);
	ASSERT_EQ(na, 400);
	ASSERT_EQ(nb, 400);
}
