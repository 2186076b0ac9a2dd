// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The offsets of CPython 3.11's structures as its own headers give them
 * (libpython3.11-dev), for test_python.c to hold events/python.c's
 * table against. Built with the headers' directory (Makefile). */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include "internal/pycore_frame.h"
#include "internal/pycore_interp.h"
#include "internal/pycore_runtime.h"
#include "events/python.h"
#include "py311_headers.h"

#if PY_MAJOR_VERSION != 3 || PY_MINOR_VERSION != 11
#error "the headers of CPython 3.11 are needed (libpython3.11-dev)"
#endif

void pmt_py311_from_headers(struct pmt_py_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->k.rt_tstate = offsetof(_PyRuntimeState, gilstate.tstate_current);
	l->k.rt_interp = offsetof(_PyRuntimeState, interpreters.head);
	l->k.is_threads = offsetof(PyInterpreterState, threads.head);
	l->k.ts_next = offsetof(PyThreadState, next);
	l->k.ts_cframe = offsetof(PyThreadState, cframe);
	l->k.ts_tid = offsetof(PyThreadState, native_thread_id);
	l->k.cf_frame = offsetof(_PyCFrame, current_frame);
	l->k.fr_code = offsetof(_PyInterpreterFrame, f_code);
	l->k.fr_previous = offsetof(_PyInterpreterFrame, previous);
	l->k.fr_instr = offsetof(_PyInterpreterFrame, prev_instr);
	l->k.fr_entry = offsetof(_PyInterpreterFrame, is_entry);
	l->k.co_code = offsetof(PyCodeObject, co_code_adaptive);
	l->co_firstlineno = offsetof(PyCodeObject, co_firstlineno);
	l->co_filename = offsetof(PyCodeObject, co_filename);
	l->k.co_qualname = offsetof(PyCodeObject, co_qualname);
	l->co_linetable = offsetof(PyCodeObject, co_linetable);
	l->str_length = offsetof(PyASCIIObject, length);
	l->str_state = offsetof(PyASCIIObject, state);
	l->str_ascii_data = sizeof(PyASCIIObject);
	l->str_compact_data = sizeof(PyCompactUnicodeObject);
	l->bytes_size = offsetof(PyVarObject, ob_size);
	l->bytes_data = offsetof(PyBytesObject, ob_sval);
}
