/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The types shared between the BPF programs (bpf/) and the loader (src/),
 * one header a feature under bpf/abi/; fixed-width types only: both sides
 * must agree on every byte, and every layout user space reads or maps is
 * pinned by a _Static_assert beside it.
 *
 *   abi/probe.h      pmt_probes[id]: a probe's settings; session bounds
 *   abi/record.h     what the perf rings carry: header, records, stacks
 *   abi/filter.h     --filter compiled: operands, the DAG, patterns
 *   abi/expr.h       expressions: postfix code an operand may run
 *   abi/aggregate.h  --count/--hist/--latency: keys, values, the cache
 *   abi/counter.h    --counter: a thread's own PMU counts
 *   abi/unwind.h     user stacks: CFI rows, CPython's layout and frames
 *   abi/stats.h      pmt_stats: the kernel's count of every loss
 *
 * Data flow of one event:
 *
 *   probe fires ─► pmt_tp, pmt_sys, pmt_pe, pmt_kp, pmt_fe, pmt_usdt ...
 *        │  attach cookie = probe id ─► pmt_probes[id] (abi/probe.h)
 *        │  pmt_targets (pid) and -C checks; the filter (abi/filter.h),
 *        │  rejections counted in pmt_filtered[id]
 *        ├─ stream: pmt_scratch (per CPU) : struct pmt_event
 *        │      [counts,] hdr, record, frames, [a user stack's dump]
 *        │      (abi/record.h)
 *        │      bpf_perf_event_output ─► pmt_events : one ring a CPU
 *        │      ─► src/run/evloop_bpf.c (merged by time) ─► src/output/
 *        ├─ aggregate: pmt_agg_cache ─► pmt_agg hash, or pmt_agg_flat
 *        │      (abi/aggregate.h); stacks stored in pmt_stacks; an
 *        │      update whose user stack is left for user space goes
 *        │      through pmt_events (struct pmt_agg_deferred)
 *        │      ─► drained by src/aggregate/maps_bpf.c ─► src/aggregate/
 *        └─ --stack: frame pointers, or DWARF CFI from pmt_cfi_rows and
 *               Python frames from pmt_py_* (abi/unwind.h), fed by
 *               src/unwind/tables_bpf.c; files met without tables queued in
 *               pmt_cfi_wanted; user frames named by src/symbols/
 *
 * Every loss on the way is counted in pmt_stats (abi/stats.h) or by the
 * rings, and reported.
 */
#ifndef PMTRACE_ABI_H
#define PMTRACE_ABI_H

#include "abi/probe.h"
#include "abi/record.h"
#include "abi/filter.h"
#include "abi/expr.h"
#include "abi/aggregate.h"
#include "abi/counter.h"
#include "abi/unwind.h"
#include "abi/stats.h"

#endif /* PMTRACE_ABI_H */
