/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The in-kernel user-stack unwinder's tables (bpf/unwind.bpf.h,
 * bpf/python.bpf.h), written by user space (src/unwind/tables_bpf.c) from each
 * file's DWARF CFI (src/unwind/cfi.c) and CPython's layout
 * (src/python/cpython.c).
 */
#ifndef PMT_ABI_UNWIND_H
#define PMT_ABI_UNWIND_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * DWARF CFI of an executable file, flattened (src/unwind/cfi.c) into rows
 * sorted by pc: from pc to the next row's, how to find the caller. x86-64:
 * the return address is at CFA - 8; the caller's frame pointer where fp
 * says, and its rbx where bx says (a CFA from rbx: the loader's lazy
 * binding trampoline, _dl_runtime_resolve, aligns the stack and keeps
 * the old one in rbx).
 */
enum pmt_cfa_rule {
	PMT_CFA_NONE, /* no CFI covers pc: walk frame pointers */
	PMT_CFA_SP,   /* CFA = rsp + cfa_off */
	PMT_CFA_FP,   /* CFA = rbp + cfa_off */
	PMT_CFA_PLT,  /* PLT stubs: rsp + 8, or + 16 from byte cfa_off of 16 */
	PMT_CFA_END,  /* the return address is undefined: the outermost frame */
	PMT_CFA_BX,   /* CFA = rbx + cfa_off */
};
enum pmt_fp_rule {
	PMT_FP_SAME,  /* rbp is unchanged */
	PMT_FP_SAVED, /* the caller's rbp is at CFA + fp_off (rbx: bx_off) */
};

/* A row as the reader makes it (src/unwind/cfi.c) and user space's walk
 * reads it (src/unwind/resume.c). */
struct pmt_cfi_row {
	__u32 pc; /* file offset the row starts at */
	__s32 cfa_off;
	__s16 fp_off;
	__u8 cfa; /* enum pmt_cfa_rule */
	__u8 fp;  /* enum pmt_fp_rule */
	__s16 bx_off;
	__u8 bx; /* enum pmt_fp_rule, for rbx */
	__u8 pad;
};

/*
 * The kernel's tables: a row is its pc and the index of its rule in
 * pmt_cfi_rules, which every file shares. A machine's code has millions
 * of rows and a few thousand rules (clang's, LLVM's, z3's, libc's,
 * python3's, node's and QEMU's 3.4M rows: 2,176 rules), so a row is 8
 * bytes, not 16: twice the rows in the same memory.
 */
struct pmt_cfi_rule {
	__s32 cfa_off;
	__s16 fp_off;
	__s16 bx_off;
	__u8 cfa; /* enum pmt_cfa_rule */
	__u8 fp;  /* enum pmt_fp_rule */
	__u8 bx;  /* enum pmt_fp_rule, for rbx (arm64: x30) */
	__u8 pad; /* zero: rules are told apart by their bytes */
};
struct pmt_cfi_krow {
	__u32 pc;   /* file offset the row starts at */
	__u32 rule; /* in pmt_cfi_rules */
};
#define PMT_CFI_RULES 65536

/* A file with CFI rows (key: the inode's device and number, as the
 * kernel's vm_file sees them). */
struct pmt_cfi_file_key {
	__u32 dev;
	__u32 pad;
	__u64 ino;
};
/* The vDSO's key (it maps no file: dev 0, and no inode is 1 on the
 * pseudo device 0). Its tables come from pmtrace's own vDSO, the same
 * image in every process. */
#define PMT_VDSO_INO 1

/* The queues the kernel fills for user space (hash maps: files whose
 * rows are wanted, Python code objects met, processes met in JIT code):
 * pmt_queued[q] counts what was put in q, in the programs' .bss, which
 * user space reads without a system call and scans q only when it moved
 * (a hash's first key is a walk of all its buckets). */
enum pmt_queue {
	PMT_QUEUE_WANTED,
	PMT_QUEUE_PY,
	PMT_QUEUE_JIT,
	PMT_QUEUES,
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
 * come from its headers (src/python/cpython.c; CPython 3.11).
 */
struct pmt_py_file {
	__u64 runtime; /* _PyRuntime: vm_start - vm_off + this */
	/* ... and mm->start_code + this, the file a process's executable
	 * (its lowest executable segment's start, where the kernel put it) */
	__s64 runtime_code;
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
 * another code object, with a new id. pmt_py_new: a queue of the ids met
 * for the first time, for user space to read their names and lines while
 * the process lives (it checks the qualname is still the one seen).
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
struct pmt_py_new {
	__u32 tgid, id;
	__u64 code, qualname;
};
/* A Python frame among a stack's user frames: bit 63, the instruction
 * (code units into the bytecode, for the line) in bits 47-62, and the
 * code object's id in the low 32 bits. Never a kernel address (those
 * have bits 47-63 all set). */
#define PMT_PY_FRAME (1ULL << 63)
/* Where user space ends: x86-64's 47 bits (less the guard page), arm64's
 * 48 (its mappings sit just below: 0xffff...) */
#if defined(__TARGET_ARCH_arm64) || defined(__aarch64__)
#define PMT_USER_END (1ULL << 48)
#else
#define PMT_USER_END 0x7ffffffff000ULL
#endif
/* In a dump's Python frames (struct pmt_ustack_dump): the last frame of
 * its eval loop call (the interpreter frame's is_entry), as the kernel
 * would have ended that call's frames. Not in frames written. */
#define PMT_PY_ENTRY (1ULL << 32)
#define PMT_PY_ID(f) ((__u32)(f))
#define PMT_PY_INSTR(f) ((__u32)((f) >> 47) & 0x7fff)

_Static_assert(sizeof(struct pmt_cfi_krow) == 8,
	       "pmt_cfi_rows' stride: user space writes it mmapped");
_Static_assert(sizeof(struct pmt_cfi_rule) == 12, "pmt_cfi_rule");
_Static_assert(sizeof(struct pmt_cfi_file_key) == 16, "pmt_cfi_file_key");
_Static_assert(sizeof(struct pmt_cfi_file) == 8, "pmt_cfi_file");
_Static_assert(sizeof(struct pmt_cfi_want) == 16, "pmt_cfi_want: read from a queue");
_Static_assert(sizeof(struct pmt_py_file) == 56, "pmt_py_file");
_Static_assert(sizeof(struct pmt_py_code_key) == 16, "pmt_py_code_key");
_Static_assert(sizeof(struct pmt_py_new) == 24, "pmt_py_new: read from a queue");

#endif
