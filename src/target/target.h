/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The traced command: forked early, held before exec until the probes are
 * attached, then released.
 */
#ifndef PMT_TARGET_H
#define PMT_TARGET_H

#include <stdbool.h>
#include <sys/types.h>
#include "util/error.h"

struct pmt_child {
	pid_t pid;  /* 0: none */
	int go_fd;  /* write end: a byte releases the child */
	int err_fd; /* read end: exec's errno, EOF on success */
	bool exited;
	int status;	/* waitpid status once exited */
	pid_t tty_pgrp; /* the terminal's group to give back, or 0 */
	bool own_group; /* in a process group of its own (see target.c) */
};

/* Is argv[0] something execvp can run? -errno with err set. */
int pmt_child__check(char *const argv[], struct pmt_error *err);
/* Fork the child; it waits for pmt_child__release. */
int pmt_child__spawn(struct pmt_child *c, char *const argv[], struct pmt_error *err);
/* Let it exec; returns -errno with err set if exec failed. */
int pmt_child__release(struct pmt_child *c, const char *name, struct pmt_error *err);
/* Reap without blocking; true once it has exited. */
bool pmt_child__reap(struct pmt_child *c);
/* Terminate (if running) and reap; used on every error/exit path. */
void pmt_child__kill(struct pmt_child *c);
/* Exit status a shell would give: code, or 128+signal. */
int pmt_child__exit_code(const struct pmt_child *c);

/* Does process pid exist? -ESRCH with err set. */
int pmt_pid__check(pid_t pid, struct pmt_error *err);

#endif
