/* A plain urlset's rows' extension children read in C (read_tails): the reader is _tails.h's
 * read_one; formats/plain_urlset.py's _read_tails calls it on the rows of a window it read
 * in Python.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_tails.h"

/* read_tails(matches, prefixes, extensions, fallback) -> bool: each 5-tuple of the list
 * whose fifth value (its tail) is not empty replaced by its four values and the tail read
 * (_read_tail's answer; fallback(tail, prefixes, extensions), i.e. _read_tail itself, for
 * a tail this reader leaves to the Python). False, nothing changed: not a list of 5-tuples
 * of str (the caller's Python loop then). */
static PyObject *
read_tails(PyObject *self, PyObject *args)
{
    PyObject *matches, *prefixes, *extensions, *fallback;
    if (!PyArg_ParseTuple(args, "O!O!O!O:read_tails", &PyList_Type, &matches,
                          &PyFrozenSet_Type, &prefixes, &PyDict_Type, &extensions, &fallback))
        return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(matches); i++) {
        PyObject *m = PyList_GET_ITEM(matches, i);
        if (!PyTuple_CheckExact(m) || PyTuple_GET_SIZE(m) != 5
            || !PyUnicode_CheckExact(PyTuple_GET_ITEM(m, 4)))
            Py_RETURN_FALSE;
    }
    PyObject *image = PyUnicode_InternFromString("image");
    if (image == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(matches); i++) {
        PyObject *m = PyList_GET_ITEM(matches, i);
        if (!PyTuple_CheckExact(m) || PyTuple_GET_SIZE(m) != 5) /* the fallback's doing */
            continue;
        PyObject *tail = PyTuple_GET_ITEM(m, 4);
        if (!PyUnicode_CheckExact(tail) || PyUnicode_GET_LENGTH(tail) == 0)
            continue;
        Py_INCREF(m);
        Py_INCREF(tail);
        PyObject *got = NULL;
        int rc = read_one(tail, prefixes, extensions, image, &got);
        if (rc == DECLINE)
            got = PyObject_CallFunctionObjArgs(fallback, tail, prefixes, extensions, NULL);
        Py_DECREF(tail);
        PyObject *row = NULL;
        if (got != NULL && rc != ERROR) {
            row = PyTuple_New(5);
            if (row != NULL) {
                for (int k = 0; k < 4; k++)
                    PyTuple_SET_ITEM(row, k, Py_NewRef(PyTuple_GET_ITEM(m, k)));
                PyTuple_SET_ITEM(row, 4, got);
                got = NULL;
            }
        }
        Py_XDECREF(got);
        Py_DECREF(m);
        if (row == NULL || i >= PyList_GET_SIZE(matches)) {
            Py_XDECREF(row);
            Py_DECREF(image);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_RuntimeError, "the rows changed while read");
            return NULL;
        }
        PyList_SetItem(matches, i, row); /* steals row */
    }
    Py_DECREF(image);
    Py_RETURN_TRUE;
}

static PyMethodDef methods[] = {
    {"read_tails", read_tails, METH_VARARGS,
     "read_tails(matches, prefixes, extensions, fallback) -> bool: plain_urlset's tails."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_tails", "A plain urlset's extension children (_tails.c).", -1,
    methods,
};

PyMODINIT_FUNC
PyInit__tails(void)
{
    return PyModule_Create(&module);
}
