// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The JSON writer's out-of-line part (json.h). */
#include <math.h>
#include "util/json.h"

void pmt_json__double(struct pmt_json *j, double v)
{
	pmt_json__sep(j);
	if (isfinite(v))
		pmt_buf__printf(j->b, "%.15g", v);
	else
		pmt_buf__puts(j->b, "null");
}
