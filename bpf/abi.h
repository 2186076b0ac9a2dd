/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The only types shared between the BPF programs (bpf/) and the loader
 * (src/). Fixed-width types only: both sides must agree on every byte.
 *
 * Data flow for a streamed event:
 *
 *   tracepoint fires ─► pmt_tp (bpf/tracepoint.bpf.c)
 *        │  cookie = probe id ─► probes[id] : struct pmt_probe_cfg
 *        │  target/cpu checks (rodata)          (record layout)
 *        ▼
 *   per-CPU scratch : struct pmt_event { [counts,] hdr, raw record bytes }
 *        │  bpf_perf_event_output(BPF_F_CURRENT_CPU)
 *        ▼
 *   events : PERF_EVENT_ARRAY ─► one perf ring per CPU ─► src/run/evloop.c
 *        (wakeup by watermark, drained on a short timeout, merged by ts)
 */
#ifndef PMTRACE_ABI_H
#define PMTRACE_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define PMT_COMM_LEN 16
/* Largest raw record copied out (perf's own limit is 8 KiB). */
#define PMT_MAX_DATA 8192
/* The scratch record's room: PMT_MAX_DATA of record, then (tracepoints)
 * a struct pmt_stack_rec at PMT_TP_STACK (its aggregation keys) and room
 * for a kernel and a user stack (2 * PMT_STACK_DEPTH frames) after the
 * record, whatever its size. */
#define PMT_TP_STACK PMT_MAX_DATA
#define PMT_DATA_ROOM (PMT_MAX_DATA + 24 + 2 * 127 * 8)
/* __data_loc/__rel_loc fields of one tracepoint the BPF side follows. */
#define PMT_MAX_DYN 8
/* Probes (attach points) one session may hold. */
#define PMT_MAX_PROBES 16384
#define PMT_COUNTERS 4 /* --counter events a run */
/* Times one tracepoint may be given (copies of its program). */
#define PMT_TP_INSTANCES 4
/* syscalls:* tracepoints served through raw_syscalls (bpf/tracepoint.bpf.c):
 * call numbers below PMT_SYS_NRS; attach cookie 0 on sys_enter, 1 on exit */
#define PMT_SYS_NRS 1024
#define PMT_SYS_ENTER 0
#define PMT_SYS_EXIT 1
/* CPUs the -C mask can name. */
#define PMT_MAX_CPUS 1024

/* Values of the target map (pid filter). */
enum pmt_target_state {
	PMT_TARGET_PENDING = 1, /* command forked, not yet exec'd: not traced */
	PMT_TARGET_ACTIVE = 2,	/* traced */
};

/* Indexes of the per-CPU pmt_stats counters. */
enum pmt_stat {
	PMT_STAT_OUTPUT_ERR,   /* bpf_perf_event_output failed other than full */
	PMT_STAT_TARGET_FULL,  /* a traced command's child did not fit */
	PMT_STAT_FILTER_ABORT, /* filter walk did not end: event rejected */
	PMT_STAT_AGG_FULL,     /* aggregation map full: update dropped */
	PMT_STAT_LAT_FULL,     /* latency start dropped (map update failed) */
	PMT_STAT_LAT_NOSTART,  /* latency end without a start */
	/* perf buffer full. The ring counts these too, but reports them only
	 * with its next record, which may never come: this count is exact. */
	PMT_STAT_RING_FULL,
	PMT_STAT_STACK_FULL,   /* a stack not stored: its table full */
	PMT_STAT_COUNTER_READ, /* --counter: a CPU's counter could not be read */
	/* a user stack ended at a frame-pointer caller no text mapping holds */
	PMT_STAT_UNWIND_ENDED,
	/* a Python code object's first sight not told to user space (its
	 * queue full): its frames may be named "[python]" */
	PMT_STAT_PY_NEW_FULL,
	/* --offcpu: a thread's switch-out not stored (the table of threads
	 * off the CPU full) */
	PMT_STAT_OFFCPU_FULL,
	PMT_STAT_STACK_COLLISION, /* a stack not stored: another has its 64-bit hash */
	PMT_STAT_STACK_ERR,	  /* a stack not stored: the kernel had no memory */
	/* keys stored in pmt_agg (not a loss: the loader drains the hash
	 * when it has taken many since the last drain) */
	PMT_STAT_AGG_NEW,
	PMT_STAT__MAX,
};

struct pmt_event_hdr {
	__u64 ts;  /* bpf_ktime_get_ns(), CLOCK_MONOTONIC */
	__u32 pid; /* tgid */
	__u32 tid;
	__u32 probe_id;
	__u32 size; /* bytes of data[] that follow, frames not counted */
	char comm[PMT_COMM_LEN];
	/* tracepoints' --stack: the frames after the record (kernel first,
	 * innermost first); records a program builds count theirs in their
	 * struct pmt_stack_rec and size */
	__u16 nkernel, nuser;
	__u32 pad;
};

/* One a --counter, in their order, before a streamed record's header. */
struct pmt_counter_rec {
	__u64 value; /* the thread's count so far */
	__u64 delta; /* since its previous streamed record */
};

struct pmt_event {
	/* --counter on streamed probes: the thread's counts, sent right
	 * before the header (the last n of these, n a load-time constant) */
	struct pmt_counter_rec counts[PMT_COUNTERS];
	struct pmt_event_hdr hdr;
	__u8 data[PMT_DATA_ROOM];
};

/*
 * Filters (--filter): an expression compiled by src/filter/filter.c into a DAG of
 * comparisons. Entry i tests one operand against a constant or pattern and
 * continues at t (true) or f (false); PMT_FILTER_ACCEPT/REJECT end the walk.
 * !, && and || are edges, not instructions: evaluation short-circuits, and
 * the walk visits each entry at most once, so PMT_FILTER_MAX steps suffice.
 */
#define PMT_FILTER_MAX 32  /* comparisons per filter */
#define PMT_FILTER_PATS 4  /* string literals/globs per filter */
#define PMT_FILTER_NCLS 64 /* byte classes across its patterns */
#define PMT_PAT_MAX 63	   /* non-'*' atoms per literal/glob */
#define PMT_STR_MAX 128	   /* string bytes a filter looks at */
#define PMT_FILTER_ACCEPT 0xfe
#define PMT_FILTER_REJECT 0xff

enum pmt_filter_op {
	PMT_FOP_EQ,    /* v == val (!= by swapped targets) */
	PMT_FOP_LT,    /* v <  val (>= by swapped targets) */
	PMT_FOP_LE,    /* v <= val (>  by swapped targets) */
	PMT_FOP_BAND,  /* (v & val) != 0 */
	PMT_FOP_MATCH, /* string matches pattern pats[val] */
};

/* Where an operand comes from. Probe kinds add sources at the end. */
enum pmt_filter_src {
	PMT_FSRC_FIELD,	     /* integer in the raw record: off, size */
	PMT_FSRC_FIELD_STR,  /* char[size] in the raw record at off */
	PMT_FSRC_FIELD_DSTR, /* __data_loc (or __rel_loc) string at off */
	PMT_FSRC_PID,	     /* tgid */
	PMT_FSRC_TID,
	PMT_FSRC_CPU,
	PMT_FSRC_UID,
	PMT_FSRC_GID,
	PMT_FSRC_CGROUP, /* cgroup v2 id */
	PMT_FSRC_COMM,	 /* string */
	PMT_FSRC__MAX,
	/* PMU samples need no sources of their own: the perf_event program
	 * builds a struct pmt_sample first, and ip, addr, period, value and
	 * mode are FIELD operands of that record (see src/probes/perf_event.c). */
};

#define PMT_FFLAG_SIGNED 0x01 /* operand and compare are signed */
#define PMT_FFLAG_REL 0x02    /* FIELD_DSTR is a __rel_loc */
/* FIELD of a tracepoint, naturally aligned between byte 8 (the first 8
 * are the kernel's) and PMT_CTX_DIRECT: loaded from the program's context
 * itself (the raw record), no copy and no helper call. Little-endian
 * targets only. */
#define PMT_FFLAG_CTX 0x04
#define PMT_CTX_DIRECT 128

/* A value of the event: a record field or a common one (filters, keys,
 * aggregated values, latency match keys). */
struct pmt_operand {
	__u8 src;   /* enum pmt_filter_src */
	__u8 size;  /* FIELD: 1, 2, 4, 8; FIELD_STR: bytes */
	__u8 flags; /* PMT_FFLAG_* */
	__u8 pad;
	__u16 off; /* FIELD*: offset in the record */
};

struct pmt_filter_entry {
	struct pmt_operand o;
	__u8 op;   /* enum pmt_filter_op */
	__u8 t, f; /* next entry, or ACCEPT/REJECT */
	__u8 pad;
	__u64 val; /* constant (sign-extended), or pattern index */
};

/*
 * A string literal or glob as a Shift-And automaton: state bit j means "the
 * first j non-'*' atoms matched". Per byte c of the string:
 *   D = ((D << 1) & mask[cls[c]]) | (D & star)
 * from D = 1; it matched if D & final. Bit j of mask[k] is set when atom j
 * accepts the bytes of class k; bit j of star when a '*' follows atom j.
 */
struct pmt_pattern {
	__u64 star;
	__u64 final;
	__u64 mask[PMT_FILTER_NCLS];
};

struct pmt_filter {
	__u8 n;		   /* entries used; 0 = no filter */
	__u8 start;	   /* first entry */
	__u8 needs_record; /* reads record fields */
	__u8 pad;
	/* the entries first: a rejecting walk touches one cache line */
	struct pmt_filter_entry e[PMT_FILTER_MAX];
	__u8 cls[256]; /* byte -> class, shared by the patterns */
	struct pmt_pattern pats[PMT_FILTER_PATS];
};

/*
 * Aggregation (--count/--sum/--hist/... --by KEYS, --latency): updated in
 * the kernel, read by the loader. One per-CPU hash entry per (keys, bucket).
 */
#define PMT_AGG_KEYS 4 /* --by parts */
#define PMT_KEY_MAX 64 /* bytes of key data */
#define PMT_KEY_STR 32 /* bytes a string key keeps */

enum pmt_action {
	PMT_ACT_STREAM,	   /* copy the record to the perf ring */
	PMT_ACT_AGG,	   /* update pmt_agg */
	PMT_ACT_LAT_START, /* remember when, by match key */
	PMT_ACT_LAT_END,   /* aggregate now - start */
};

enum pmt_agg_kind {
	PMT_AGG_COUNT, /* bucket 0: count only */
	PMT_AGG_VALUE, /* bucket 0: count, sum, min, max of value */
	PMT_AGG_HIST,  /* bucket: log2 of value (see pmt_log2_bucket) */
	PMT_AGG_LHIST, /* bucket: linear */
};

enum pmt_key_kind {
	PMT_KEY_NUM,	 /* 8 bytes */
	PMT_KEY_STR_,	 /* PMT_KEY_STR bytes, NUL padded */
	PMT_KEY_PROBE,	 /* 4 bytes: probe id */
	PMT_KEY_COUNTER, /* which --counter (several: one update each) */
};

enum pmt_scale { PMT_SCALE_NONE, PMT_SCALE_MUL, PMT_SCALE_DIV };

struct pmt_key_part {
	struct pmt_operand o;
	__u8 kind; /* enum pmt_key_kind */
	__u8 at;   /* offset in pmt_agg_key.data */
	__u8 len;  /* bytes: 8 for numbers, up to PMT_KEY_STR */
	__u8 pad;
};

struct pmt_agg_cfg {
	__u8 kind; /* enum pmt_agg_kind */
	__u8 nkeys;
	__u8 scale;		  /* enum pmt_scale, applied to the value */
	__u8 needs_record;	  /* keys or value read record fields */
	__u32 lat_id;		  /* --latency pair this probe belongs to */
	struct pmt_operand value; /* unused for COUNT and latency */
	struct pmt_operand match; /* latency: start/end match key */
	__u64 k;		  /* scale constant */
	__s64 lmin, lstep;	  /* LHIST */
	__u32 lbuckets;		  /* LHIST: buckets between min and max */
	__u32 lat_div;		  /* latency: ns per unit */
	struct pmt_key_part keys[PMT_AGG_KEYS];
};

/* The map's key_size is 8 + the bytes --by uses (set at load): the hash
 * is computed over the whole key, so a short key is a cheap update. */
struct pmt_agg_key {
	__s32 bucket; /* HIST/LHIST; -1 below range */
	__u32 pad;    /* in the kernel's hash: the half it is in (pmt_agg_gen) */
	__u8 data[PMT_KEY_MAX];
};

struct pmt_agg_val {
	__u64 count;
	__s64 sum, min, max;
};

/*
 * A small per-CPU write-back cache in front of the hash (pmt_agg_cache):
 * consecutive events on a CPU mostly share their keys (the same task, the
 * same syscall), and a hit costs a few compares instead of hashing. A slot
 * holds this CPU's whole value for its key (loaded from the hash when the
 * key came in, written back when it leaves), so every cached key has its
 * hash entry. base is the count and sum it was loaded with: while the
 * hash still holds base for this CPU the slot is the newer value (a reader
 * takes the slot's); otherwise it was written back meanwhile (the hash's
 * is right). Each half of the hash (pmt_agg_gen) has its own caches: a
 * drain reads the old half's slots with its keys, and clears them before
 * that half's next turn (src/aggregate/entries.c, src/run/aggmaps.c). A
 * slot whose entry is gone all the same adds only what it gained since
 * loading to a new one, so nothing counts twice.
 */
#define PMT_AGG_CACHE 16 /* slots per CPU: direct-mapped */
#define PMT_AGG_KEY_WORDS (sizeof(struct pmt_agg_key) / 8)
/* the slot of a key whose 8-byte words add up to sum */
#define PMT_AGG_CSLOT(sum) ((__u32)(((__u64)(sum)*0x9E3779B97F4A7C15ULL) >> 60))

struct pmt_agg_cslot {
	struct pmt_agg_key key;
	struct pmt_agg_val val; /* count 0: empty */
	__u64 base_count;	/* the hash's value when loaded */
	__s64 base_sum;
};

/* pmt_agg_busy: programs inside an update of the hash, one CPU's */
struct pmt_agg_busy {
	__u32 n;
	__u32 pad[15]; /* a cache line a CPU */
};

struct pmt_agg_cache {
	struct pmt_agg_cslot slot[PMT_AGG_CACHE];
};

struct pmt_lat_key {
	__u64 match;
	__u32 lat_id;
	__u32 pad;
};

/*
 * A started --latency measurement. With --counter, the thread's own count
 * of the event since START: the counters are per CPU (pmt_counters), so at
 * each context switch of a thread with a measurement under way its share
 * is taken (bpf/count.bpf.c): acc += now - last when it leaves a CPU, last
 * = now when it arrives on one. END adds what it counted since last. A
 * call that blocks, is preempted or migrates gets exactly the events that
 * happened on CPU while its thread ran, the switches' own included.
 */
struct pmt_lat_val {
	__u64 start;		  /* ns */
	__u64 acc[PMT_COUNTERS];  /* --counter: counted on the CPUs left since START */
	__u64 last[PMT_COUNTERS]; /* --counter: the running CPU's count when it got it */
};

/*
 * --counter on streamed probes: a thread's running count of the event,
 * shared out at context switches as above, from when the thread is first
 * seen (pmt_tcount, LRU-bounded); each streamed record of the thread is
 * preceded by a struct pmt_counter_rec a counter (struct pmt_event).
 */
struct pmt_tcount {
	__u64 acc[PMT_COUNTERS];      /* counted on the CPUs it left */
	__u64 last[PMT_COUNTERS];     /* the running CPU's counter when it got it */
	__u64 reported[PMT_COUNTERS]; /* the values its last streamed record showed */
};

/*
 * A PMU overflow sample as the perf_event program records it: the "raw
 * record" of perf events. Filters, keys and the stream read its fields by
 * name through a format built in src/probes/perf_event.c.
 */
#define PMT_STACK_DEPTH 127 /* frames per stack (the kernel's default max) */
/* A stored stack (aggregation keys) keeps one frame less: its last slot
 * holds the check half of its hash (bpf/record.bpf.h pmt_stack_store). */
#define PMT_STACK_KEPT (PMT_STACK_DEPTH - 1)
/* The owner half of a kernel stack's key (no tgid is this large) */
#define PMT_KSTACK_OWNER 0x7fffffffU
_Static_assert(PMT_DATA_ROOM == PMT_MAX_DATA + 24 + 2 * PMT_STACK_DEPTH * 8,
	       "room for the stack keys and two stacks");

enum pmt_mode_val { PMT_MODE_KERNEL, PMT_MODE_USER };

/*
 * The tail of every record a program builds itself (PMU samples, calls):
 * stack ids when aggregating, or frame counts when streaming, and then
 * nkernel + nuser frames right after the record (kernel first, innermost
 * first).
 */
struct pmt_stack_rec {
	__s64 kstack; /* aggregation: PMT_KSTACK_OWNER << 32 | hash, or < 0 */
	__u64 ustack; /* aggregation: tgid << 32 | hash (0xffffffff: none) */
	__u16 nkernel, nuser;
	__u32 pad;
};
_Static_assert(sizeof(struct pmt_stack_rec) == 24, "PMT_DATA_ROOM's stack keys");

struct pmt_sample {
	__u64 ip;
	__u64 addr;   /* data address, where the event has one */
	__u64 period; /* events this sample stands for */
	__u64 value;  /* the counter (bpf_perf_prog_read_value) */
	__u8 mode;    /* enum pmt_mode_val */
	__u8 pad[7];
	struct pmt_stack_rec st;
};

/*
 * A function call or return (kprobe, kretprobe, fentry, fexit, uprobe,
 * uretprobe): the argument slots and the return value, as the program's
 * context has them. Fields are named by src/probes/callrec.c: arg0..arg5, retval,
 * and with fentry the parameters' names from BTF.
 */
#define PMT_CALL_SLOTS 12 /* argument registers/slots kept */
#define PMT_FN_SLOTS 8	  /* fentry (and as many fexit) programs, a power of 2 */

struct pmt_call {
	__u64 arg[PMT_CALL_SLOTS];
	__u64 ret;
	struct pmt_stack_rec st;
};

/* A USDT probe's record (bpf/usdt.bpf.c): its arguments as libbpf's
 * bpf_usdt_arg() reads them (sign- or zero-extended to 64 bits, as the
 * note's spec says), and the strings str(argN) names: the user memory at
 * argument str_arg[i] - 1 of the probe's settings, NUL-terminated. */
#define PMT_USDT_STRS 2	     /* str(argN) a probe reads */
#define PMT_USDT_STR_LEN 128 /* bytes of each, NUL included */
struct pmt_usdt {
	__u64 arg[PMT_CALL_SLOTS];
	char str[PMT_USDT_STRS][PMT_USDT_STR_LEN];
	struct pmt_stack_rec st;
};

/*
 * DWARF CFI of an executable file, flattened (src/unwind/cfi.c) into rows
 * sorted by pc: from pc to the next row's, how to find the caller. x86-64:
 * the return address is at CFA - 8; the caller's frame pointer where fp
 * says.
 */
enum pmt_cfa_rule {
	PMT_CFA_NONE, /* no CFI covers pc: walk frame pointers */
	PMT_CFA_SP,   /* CFA = rsp + cfa_off */
	PMT_CFA_FP,   /* CFA = rbp + cfa_off */
	PMT_CFA_PLT,  /* PLT stubs: rsp + 8, or + 16 from byte cfa_off of 16 */
	PMT_CFA_END,  /* the return address is undefined: the outermost frame */
};
enum pmt_fp_rule {
	PMT_FP_SAME,  /* rbp is unchanged */
	PMT_FP_SAVED, /* the caller's rbp is at CFA + fp_off */
};

struct pmt_cfi_row {
	__u32 pc; /* file offset the row starts at */
	__s32 cfa_off;
	__s16 fp_off;
	__u8 cfa;  /* enum pmt_cfa_rule */
	__u8 fp;   /* enum pmt_fp_rule */
	__u32 pad; /* 16 bytes: the array's stride, user space writes it mmapped */
};

/* A file with CFI rows (key: the inode's device and number, as the
 * kernel's vm_file sees them). */
struct pmt_cfi_file_key {
	__u32 dev;
	__u32 pad;
	__u64 ino;
};
struct pmt_cfi_file {
	__u32 first, count; /* rows in pmt_cfi_rows; count 0: no CFI */
};
/* A file met without rows: a process mapping it, and where. */
struct pmt_cfi_want {
	__u32 tgid;
	__u32 pad;
	__u64 vm_start;
};

/*
 * CPython frames in user stacks (bpf/python.bpf.h): an interpreter file
 * (key: as pmt_cfi_files') whose _PyEval_EvalFrameDefault frames are
 * each expanded into the Python frames that call of it runs, read from
 * the thread's PyThreadState. Offsets into the interpreter's structures
 * come from its headers (src/unwind/cpython.c; CPython 3.11).
 */
struct pmt_py_file {
	__u64 runtime;		    /* _PyRuntime: vm_start - vm_off + this */
	__u32 eval_start, eval_end; /* _PyEval_EvalFrameDefault, file offsets */
	__u16 rt_tstate;	    /* _PyRuntime.gilstate.tstate_current */
	__u16 rt_interp;	    /* _PyRuntime.interpreters.head */
	__u16 is_threads;	    /* PyInterpreterState.threads.head */
	__u16 ts_next;		    /* PyThreadState.next */
	__u16 ts_cframe;	    /* PyThreadState.cframe */
	__u16 ts_tid;		    /* PyThreadState.native_thread_id */
	__u16 cf_frame;		    /* _PyCFrame.current_frame */
	__u16 fr_code;		    /* _PyInterpreterFrame.f_code */
	__u16 fr_previous;	    /* _PyInterpreterFrame.previous */
	__u16 fr_instr;		    /* _PyInterpreterFrame.prev_instr */
	__u16 fr_entry;		    /* _PyInterpreterFrame.is_entry */
	__u16 co_code;		    /* PyCodeObject.co_code_adaptive */
	__u16 co_qualname;	    /* PyCodeObject.co_qualname */
	__u16 pad[3];
};
/*
 * Code objects are known by an id the kernel gives each one it meets
 * (a code object's memory is reused once it is freed, as a module's body
 * is after import: an address alone would name a later function after
 * an earlier one). pmt_py_seen: (process, address) -> the qualname
 * object the code had and its id; another qualname at that address is
 * another code object, with a new id. pmt_py_new: ids met for the first
 * time, for user space to read their names and lines while the process
 * lives (it checks the qualname is still the one seen).
 */
struct pmt_py_code_key {
	__u32 tgid;
	__u32 pad;
	__u64 code;
};
struct pmt_py_seen {
	__u64 qualname;
	__u32 id;
	__u32 pad;
};
struct pmt_py_id {
	__u32 tgid;
	__u32 id;
};
struct pmt_py_new {
	__u64 code, qualname;
};
/* A Python frame among a stack's user frames: bit 63, the instruction
 * (code units into the bytecode, for the line) in bits 47-62, and the
 * code object's id in the low 32 bits. Never a kernel address (those
 * have bits 47-63 all set). */
#define PMT_PY_FRAME (1ULL << 63)
#define PMT_PY_ID(f) ((__u32)(f))
#define PMT_PY_INSTR(f) ((__u32)((f) >> 47) & 0x7fff)

/* pmt_probe_cfg.stack */
#define PMT_STACK_KERNEL 0x01
#define PMT_STACK_USER 0x02

/* dyn[] entry flags */
#define PMT_DYN_REL 0x8000 /* __rel_loc: offset relative to field end */
#define PMT_DYN_OFF(x) ((x)&0x7fff)

struct pmt_probe_cfg {
	__u32 fixed_size;  /* bytes of the record up to its last fixed field */
	__u16 n_dyn;	   /* used entries of dyn[] */
	__u16 common_type; /* the tracepoint's type, written into streamed records */
	/* offset of each 4-byte __data_loc/__rel_loc word (PMT_DYN_REL set
	 * for __rel_loc); the dynamic data ends at the largest off+len. */
	__u16 dyn[PMT_MAX_DYN];
	__u8 action;	 /* enum pmt_action */
	__u8 stack;	 /* PMT_STACK_*: perf events */
	__u8 want_value; /* perf events: read the counter (a helper call) */
	/* USDT: argument N + 1 whose string str[i] holds; 0: none */
	__u8 str_arg[PMT_USDT_STRS];
	__u8 pad2[3];
	struct pmt_filter filter; /* header and first entries: line 0-1 */
	struct pmt_agg_cfg agg;
};

#endif /* PMTRACE_ABI_H */
