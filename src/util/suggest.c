// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>
#include "util/suggest.h"

int pmt_edit_distance(const char *a, const char *b, int cap)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	int *base, *prev2, *prev, *cur, *t, d = cap + 1;

	if ((la > lb ? la - lb : lb - la) > (size_t)cap)
		return cap + 1;
	base = calloc(3 * (lb + 1), sizeof(int));
	if (!base)
		return cap + 1;
	prev2 = base;
	prev = base + lb + 1;
	cur = prev + lb + 1;
	for (j = 0; j <= lb; j++)
		prev[j] = (int)j;
	for (i = 1; i <= la; i++) {
		int best = cur[0] = (int)i;

		for (j = 1; j <= lb; j++) {
			int v = prev[j - 1] + (a[i - 1] != b[j - 1]);

			if (prev[j] + 1 < v)
				v = prev[j] + 1;
			if (cur[j - 1] + 1 < v)
				v = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    prev2[j - 2] + 1 < v)
				v = prev2[j - 2] + 1;
			cur[j] = v;
			if (v < best)
				best = v;
		}
		if (best > cap)
			goto out;
		t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	d = prev[lb] > cap ? cap + 1 : prev[lb];
out:
	free(base);
	return d;
}

int pmt_suggest(const char *word, char *const *cands, size_t n, const char **out, int max)
{
	const char *colon = strchr(word, ':');
	int cap = (int)strlen(word) / 3, found = 0, dist, d, k;
	size_t i;

	if (cap < 2)
		cap = 2;
	/* a name as far as the word is long is no closer than any other */
	if (cap >= (int)strlen(word))
		cap = (int)strlen(word) - 1;
	/* best first: walk distances 0..cap, then same name elsewhere */
	for (dist = 0; dist <= cap && found < max; dist++) {
		for (i = 0; i < n && found < max; i++) {
			d = pmt_edit_distance(word, cands[i], cap);
			if (d == dist)
				out[found++] = cands[i];
		}
	}
	for (i = 0; colon && i < n && found < max; i++) {
		const char *c = strchr(cands[i], ':');

		if (!c || strcmp(c, colon))
			continue;
		for (k = 0; k < found && out[k] != cands[i]; k++)
			;
		if (k == found)
			out[found++] = cands[i];
	}
	return found;
}
