// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The offsets of CPython 3.11's structures as its own headers give them
 * (libpython3.11-dev), for test_python.c to hold python/cpython.c's
 * table against. Built with the headers' directory (Makefile). */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include "internal/pycore_frame.h"
#include "internal/pycore_interp.h"
#include "internal/pycore_runtime.h"
#include "python/cpython.h"
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

/* A compact str as 3.11 lays it out: ASCII (kind 1, data after a
 * PyASCIIObject) or UCS-4 (kind 4, after a PyCompactUnicodeObject). */
static PyObject *fake_str(struct pmt_py311_fake *f, bool ascii, const uint32_t *chars, size_t n)
{
	PyASCIIObject *o = ascii ? (PyASCIIObject *)f->ascii.o : (PyASCIIObject *)f->ucs4.o;

	_Static_assert(sizeof(f->ascii.o) == sizeof(PyASCIIObject), "ASCII data after the object");
	_Static_assert(sizeof(f->ucs4.o) == sizeof(PyCompactUnicodeObject),
		       "data after the object");

	o->length = (Py_ssize_t)n;
	o->state.compact = 1;
	o->state.ascii = ascii;
	o->state.kind = ascii ? PyUnicode_1BYTE_KIND : PyUnicode_4BYTE_KIND;
	o->state.ready = 1;
	for (size_t i = 0; i < n && i < 8; i++) {
		if (ascii)
			f->ascii.data[i] = (char)chars[i];
		else
			f->ucs4.data[i] = chars[i];
	}
	return (PyObject *)o;
}

uint64_t pmt_py311_fake_code(struct pmt_py311_fake *f, const uint32_t *name, size_t n)
{
	static const uint32_t file[] = {'a', '.', 'p', 'y'};
	PyCodeObject *co = (PyCodeObject *)f->code;

	_Static_assert(sizeof(f->code) >= sizeof(PyCodeObject), "room for a code object");
	memset(f, 0, sizeof(*f));
	co->ob_base.ob_base.ob_refcnt = 1; /* alive */
	co->co_firstlineno = 7;
	co->co_filename = fake_str(f, true, file, 4);
	co->co_qualname = fake_str(f, false, name, n);
	return (uint64_t)(uintptr_t)co;
}
