/* SPDX-License-Identifier: MIT */
/* python extension built against a newer core library */
#include <Python.h>
extern int fused_adam_step_v2(double *, long);
static PyObject *step(PyObject *s, PyObject *a) { return PyLong_FromLong(fused_adam_step_v2(0, 0)); }
static PyMethodDef M[] = {{"step", step, METH_NOARGS, ""}, {0}};
static struct PyModuleDef D = {PyModuleDef_HEAD_INIT, "_fused_optim", 0, -1, M};
PyMODINIT_FUNC PyInit__fused_optim(void) { return PyModule_Create(&D); }
