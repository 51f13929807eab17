/* The feed records of a worked batch (sitemaps/facts.py _records), compiled.
 *
 * Written in C because building a record dict and its facts tuple is the spider's per-URL
 * cost of a sitemap walk's normalize stage, one of each a URL: here each is made at once at
 * its final size (a dict with room for the fields the stages add after, so none of them
 * grows it) instead of a zip tuple copied into the facts and a dict display. The Python
 * definition stays, and is used where this module was not built;
 * tests/sitemaps/test_records_compiled.py checks both agree on hypothesis inputs.
 *
 * Anything but the expected shapes (lists of one length, a tuple type for the facts) makes
 * the function answer None, and the caller takes the Python path.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define KEYS 8    /* url, source, sitemap, lastmod, priority, changefreq, alternates, facts */
#define LISTED 5  /* the columns of the record's own values: url and the four after source */

/* records(keys, columns, source, document, facts_type, room) -> list | None: for each
 * entry, {keys[0]: url, keys[1]: source, keys[2]: document, keys[3..6]: the next four
 * columns' values, keys[7]: facts}, facts being a facts_type of (url, source, document,
 * the four values, then the value of each column after them); each dict made with room
 * for `room` keys. */
static PyObject *
records(PyObject *self, PyObject *args)
{
    PyObject *keys, *columns, *source, *document;
    PyTypeObject *facts_type;
    Py_ssize_t room;
    if (!PyArg_ParseTuple(args, "O!O!OOO!n:records", &PyTuple_Type, &keys, &PyList_Type,
                          &columns, &source, &document, &PyType_Type, &facts_type, &room))
        return NULL;
    Py_ssize_t ncolumns = PyList_GET_SIZE(columns);
    if (PyTuple_GET_SIZE(keys) != KEYS || ncolumns < LISTED
        || !PyType_IsSubtype(facts_type, &PyTuple_Type) || facts_type->tp_itemsize == 0)
        Py_RETURN_NONE;
    PyObject *first = PyList_GET_ITEM(columns, 0);
    if (!PyList_CheckExact(first))
        Py_RETURN_NONE;
    Py_ssize_t n = PyList_GET_SIZE(first);
    for (Py_ssize_t c = 0; c < ncolumns; c++) {
        PyObject *column = PyList_GET_ITEM(columns, c);
        if (!PyList_CheckExact(column) || PyList_GET_SIZE(column) != n)
            Py_RETURN_NONE;
    }
    Py_ssize_t nfacts = 2 + ncolumns; /* source and document, then every column */
    PyObject *out = PyList_New(n);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *facts = facts_type->tp_alloc(facts_type, nfacts);
        if (facts == NULL)
            goto error;
        PyObject *values[KEYS];
        values[0] = PyList_GET_ITEM(first, i);
        values[1] = source;
        values[2] = document;
        for (Py_ssize_t c = 1; c < LISTED; c++)
            values[2 + c] = PyList_GET_ITEM(PyList_GET_ITEM(columns, c), i);
        values[KEYS - 1] = facts;
        for (Py_ssize_t f = 0; f < KEYS - 1; f++)
            PyTuple_SET_ITEM(facts, f, Py_NewRef(values[f]));
        for (Py_ssize_t c = LISTED; c < ncolumns; c++)
            PyTuple_SET_ITEM(facts, 2 + c, Py_NewRef(PyList_GET_ITEM(PyList_GET_ITEM(columns, c), i)));
        PyObject *record = _PyDict_NewPresized(room);
        if (record == NULL) {
            Py_DECREF(facts);
            goto error;
        }
        for (Py_ssize_t k = 0; k < KEYS; k++) {
            if (PyDict_SetItem(record, PyTuple_GET_ITEM(keys, k), values[k]) < 0) {
                Py_DECREF(facts);
                Py_DECREF(record);
                goto error;
            }
        }
        Py_DECREF(facts);
        PyList_SET_ITEM(out, i, record);
    }
    return out;
error:
    Py_DECREF(out);
    return NULL;
}

static PyMethodDef methods[] = {
    {"records", records, METH_VARARGS,
     "records(keys, columns, source, document, facts_type, room) -> list | None: "
     "facts.py's _records."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_records",
    "The feed records of a worked batch (sitemaps/_records.c).", -1, methods,
};

PyMODINIT_FUNC
PyInit__records(void)
{
    return PyModule_Create(&module);
}
