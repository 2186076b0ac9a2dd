// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "util/log.h"
#include "target/signals.h"
#include "util/strutil.h"
#include "target/target.h"

static bool executable(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) &&
	       !faccessat(AT_FDCWD, path, X_OK, AT_EACCESS);
}

int pmt_child__check(char *const argv[], struct pmt_error *err)
{
	const char *cmd = argv[0], *path, *p, *colon;
	char buf[4096];
	size_t n;

	if (strchr(cmd, '/')) {
		if (executable(cmd))
			return 0;
		return pmt_error__usage(err, "cannot execute '%s': %s", cmd,
					faccessat(AT_FDCWD, cmd, F_OK, AT_EACCESS)
						? strerror(errno)
						: "not an executable file");
	}
	path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path;; p = colon + 1) {
		colon = strchr(p, ':');
		n = colon ? (size_t)(colon - p) : strlen(p);
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? p : ".", cmd);
		if (executable(buf))
			return 0;
		if (!colon)
			break;
	}
	return pmt_error__usage(err, "cannot execute '%s': command not found in PATH", cmd);
}

/* tcsetpgrp from pmtrace's group once the terminal is another's would
 * stop pmtrace with SIGTTOU: block it around the call. */
static void set_foreground(pid_t pgrp)
{
	sigset_t ttou, old;

	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	tcsetpgrp(STDIN_FILENO, pgrp);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* Does pmtrace own the terminal on its standard input? */
static bool terminal_is_ours(void)
{
	return isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
}

/*
 * The command gets its own process group (so an early stop can end its
 * children too), except where that would take the terminal from a reader
 * of pmtrace's output: "pmtrace -- cmd | less" in a terminal keeps the
 * command in pmtrace's (and less's) group, as before.
 */
static bool wants_own_group(void)
{
	return !terminal_is_ours() || isatty(STDOUT_FILENO);
}

/* A command in its own group that reads the terminal must own it (else
 * SIGTTIN stops it), as a shell hands a job the terminal; pmtrace takes
 * it back when the command is done. Only when pmtrace had it. */
static void give_terminal(struct pmt_child *c)
{
	if (!c->own_group || !terminal_is_ours())
		return;
	c->tty_pgrp = getpgrp();
	set_foreground(c->pid);
}

static void take_terminal(struct pmt_child *c)
{
	if (c->tty_pgrp > 0)
		set_foreground(c->tty_pgrp);
	c->tty_pgrp = 0;
}

int pmt_child__spawn(struct pmt_child *c, char *const argv[], struct pmt_error *err)
{
	int go[2], ep[2], e;
	char byte;

	memset(c, 0, sizeof(*c));
	c->go_fd = c->err_fd = -1;
	if (pipe2(go, O_CLOEXEC))
		return pmt_error__runtime(err, -errno, "cannot make a pipe: %s", strerror(errno));
	if (pipe2(ep, O_CLOEXEC)) {
		e = pmt_error__runtime(err, -errno, "cannot make a pipe: %s", strerror(errno));
		close(go[0]);
		close(go[1]);
		return e;
	}
	c->own_group = wants_own_group();
	c->pid = fork();
	if (c->pid < 0) {
		e = -errno;
		close(go[0]);
		close(go[1]);
		close(ep[0]);
		close(ep[1]);
		return pmt_error__runtime(err, e, "cannot fork: %s", strerror(-e));
	}
	if (c->pid == 0) {
		/* its own process group, as timeout(1) runs a command: an
		 * early stop ends the command's children too */
		if (c->own_group)
			setpgid(0, 0);
		close(go[1]);
		close(ep[0]);
		signal(SIGPIPE, SIG_DFL);
		pmt_signals__child_reset();
		/* EOF without a byte: pmtrace gave up, do not run */
		while (read(go[0], &byte, 1) < 0 && errno == EINTR)
			;
		if (byte != 'g')
			_exit(127);
		execvp(argv[0], argv);
		e = errno;
		if (write(ep[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	if (c->own_group)
		setpgid(c->pid, c->pid); /* also here: whichever runs first */
	close(go[0]);
	close(ep[1]);
	c->go_fd = go[1];
	c->err_fd = ep[0];
	give_terminal(c);
	return 0;
}

int pmt_child__release(struct pmt_child *c, const char *name, struct pmt_error *err)
{
	ssize_t n;
	int e = 0;

	if (write(c->go_fd, "g", 1) != 1)
		return pmt_error__runtime(err, -errno, "cannot start the command: %s",
					  strerror(errno));
	close(c->go_fd);
	c->go_fd = -1;
	do {
		n = read(c->err_fd, &e, sizeof(e));
	} while (n < 0 && errno == EINTR);
	close(c->err_fd);
	c->err_fd = -1;
	if (n == (ssize_t)sizeof(e)) {
		return pmt_error__usage(err, "cannot execute '%s': %s", name, strerror(e));
	}
	return 0;
}

bool pmt_child__reap(struct pmt_child *c)
{
	pid_t r;

	if (!c->pid || c->exited)
		return c->exited;
	r = waitpid(c->pid, &c->status, WNOHANG);
	if (r == c->pid)
		c->exited = true;
	return c->exited;
}

void pmt_child__kill(struct pmt_child *c)
{
	struct timespec ts = {0, 10 * 1000 * 1000};
	pid_t whom = c->own_group ? -c->pid : c->pid; /* its group, or itself */
	int i;

	if (c->go_fd >= 0) {
		close(c->go_fd); /* never released: it exits 127 */
		c->go_fd = -1;
	}
	if (c->err_fd >= 0) {
		close(c->err_fd);
		c->err_fd = -1;
	}
	take_terminal(c);
	/* the command ended by itself: what it left running may stay, as
	 * with timeout(1); else its whole group goes */
	if (!c->pid || pmt_child__reap(c))
		return;
	kill(whom, SIGTERM);
	for (i = 0; i < 100 && !pmt_child__reap(c); i++)
		nanosleep(&ts, NULL);
	kill(whom, SIGKILL); /* what ignored SIGTERM */
	if (!c->exited && waitpid(c->pid, &c->status, 0) == c->pid)
		c->exited = true;
}

int pmt_child__exit_code(const struct pmt_child *c)
{
	if (WIFEXITED(c->status))
		return WEXITSTATUS(c->status);
	if (WIFSIGNALED(c->status))
		return 128 + WTERMSIG(c->status);
	return PMT_EXIT_FAIL;
}

int pmt_pid__check(pid_t pid, struct pmt_error *err)
{
	char path[64], *status, *tgid;
	long leader = pid;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!pmt_read_file(path, &status, NULL)) {
		tgid = strstr(status, "\nTgid:");
		if (tgid)
			leader = strtol(tgid + 6, NULL, 10);
		free(status);
		if (leader == pid)
			return 0;
		pmt_error__usage(err, "-p %d: that is a thread of process %ld", (int)pid, leader);
		pmt_error__hint(err, "use -p %ld: -p traces every thread of a process", leader);
		return -EINVAL;
	}
	pmt_error__usage(err, "-p %d: no such process", (int)pid);
	pmt_error__hint(err, "list running processes with: ps -e");
	return -ESRCH;
}
