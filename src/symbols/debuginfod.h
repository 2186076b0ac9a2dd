/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Debug files fetched from debuginfod servers (DEBUGINFOD_URLS), by
 * elfutils' libdebuginfod with its cache and its environment
 * (DEBUGINFOD_CACHE_PATH, DEBUGINFOD_TIMEOUT, ...). The library is
 * opened only when DEBUGINFOD_URLS names a server (as libdw does), so a
 * run without one loads nothing more.
 *
 * Fetching never blocks the caller: a build-id asked for is fetched by
 * one thread of its own, one file at a time, each within a time bound;
 * the caller polls for the result. Results are kept for the run (at most
 * PMT_DEBUGINFOD_MAX build-ids are asked for; more are counted).
 */
#ifndef PMT_DEBUGINFOD_H
#define PMT_DEBUGINFOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PMT_DEBUGINFOD_MAX 256
/* one file's fetch is abandoned past this */
#define PMT_DEBUGINFOD_FILE_MS 30000
/* the fetches under way at the end are awaited this long */
#define PMT_DEBUGINFOD_END_MS 10000

struct pmt_debuginfod;

enum pmt_fetch_state { PMT_FETCH_NONE, PMT_FETCH_PENDING, PMT_FETCH_DONE, PMT_FETCH_FAILED };

/* Does DEBUGINFOD_URLS name a server? */
bool pmt_debuginfod__named(void);
/* NULL when DEBUGINFOD_URLS is unset or empty, or the library is
 * missing (said once). */
struct pmt_debuginfod *pmt_debuginfod__new(void);
/* Stops the fetch under way (within a second) and frees. */
void pmt_debuginfod__free(struct pmt_debuginfod *d);
/* Ask for the debug file of build_id (hex); false when it cannot be
 * asked (too many asked, no memory). Asking again is harmless. */
bool pmt_debuginfod__ask(struct pmt_debuginfod *d, const char *build_id);
/* Where build_id's fetch stands; with PMT_FETCH_DONE, *path is the
 * cached file's (valid while d lives). */
enum pmt_fetch_state pmt_debuginfod__state(struct pmt_debuginfod *d, const char *build_id,
					   const char **path);
/* Bumped by every fetch that ends: nothing to poll while it stays. */
uint64_t pmt_debuginfod__generation(struct pmt_debuginfod *d);
/* Wait until nothing is pending, at most ms; true when nothing is. */
bool pmt_debuginfod__wait(struct pmt_debuginfod *d, int ms);
/* Counts: fetched, failed (none served, or the bound passed), not
 * asked (past PMT_DEBUGINFOD_MAX), pending. */
struct pmt_debuginfod_stats {
	uint64_t fetched, failed, refused, pending;
};
void pmt_debuginfod__stats(struct pmt_debuginfod *d, struct pmt_debuginfod_stats *st);

#endif
