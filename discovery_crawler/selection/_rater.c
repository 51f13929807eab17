/* The prefix look-ups of selection/scoring.py's Rater._rate_bulk, compiled.
 *
 * Written in C because a large sitemap's prefixes are mostly distinct (the realistic bench
 * tree: ~770k parents in 1.1M URLs), so the rater's prefix cache rarely answers and each
 * prefix took Python calls (Rater._prefix, recursing through parents that had left the
 * cache): ~40 % of the rater's ~2.5 µs a URL in the sitemap worker (bench/README.md).
 * Here a prefix is its parent prefix's state (remembered, else folded from the root a
 * segment at a time, as _prefix folds a very deep path) and one step through its last
 * segment, looked up in the rater's own tables (its steps are few: a site's paths are made
 * of a few thousand words); a step they do not hold yet is left to Rater._prefix, which
 * works it out and fills them. The caches change no answer (they
 * are what Rater._prefix would put in them); tests/selection/test_rater_compiled.py checks
 * the rater gives the same totals, types and slots with and without this module.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* *sid = steps[(*sid, head[from:to])]: 1 when the step is known (*sid replaced, its
 * reference passed on), 0 when it is not (*sid unchanged), -1 on error. */
static int
step(PyObject *head, Py_ssize_t from, Py_ssize_t to, PyObject *steps, PyObject **sid)
{
    PyObject *seg = PyUnicode_Substring(head, from, to);
    if (seg == NULL)
        return -1;
    PyObject *key = PyTuple_Pack(2, *sid, seg);
    Py_DECREF(seg);
    if (key == NULL)
        return -1;
    PyObject *next = PyDict_GetItemWithError(steps, key);
    Py_DECREF(key);
    if (next == NULL)
        return PyErr_Occurred() ? -1 : 0;
    Py_INCREF(next);
    Py_SETREF(*sid, next);
    return 1;
}

/* The info (Rater._infos entry) of one prefix, a new reference; NULL on error. */
static PyObject *
info_of(PyObject *head, PyObject *prefixes, PyObject *steps, PyObject *infos,
        PyObject *fallback, Py_ssize_t limit)
{
    PyObject *info = PyDict_GetItemWithError(prefixes, head);
    if (info != NULL)
        return Py_NewRef(info);
    if (PyErr_Occurred())
        return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(head);
    Py_ssize_t cut = PyUnicode_FindChar(head, '/', 0, n, -1);
    if (cut == -2)
        return NULL;
    PyObject *sid;
    if (cut <= 0) { /* no parent prefix ("a", "/a"): the root's state */
        sid = PyLong_FromLong(0);
        if (sid == NULL)
            return NULL;
    }
    else {
        PyObject *up = PyUnicode_Substring(head, 0, cut);
        if (up == NULL)
            return NULL;
        PyObject *up_info = PyDict_GetItemWithError(prefixes, up);
        Py_DECREF(up);
        if (up_info != NULL) {
            if (!PyTuple_CheckExact(up_info) || PyTuple_GET_SIZE(up_info) != 6) {
                PyErr_SetString(PyExc_TypeError, "a prefix's info is not a 6-tuple");
                return NULL;
            }
            sid = Py_NewRef(PyTuple_GET_ITEM(up_info, 5));
        }
        else if (PyErr_Occurred()) {
            return NULL;
        }
        else { /* a parent not remembered: from the root, a step a segment (as _prefix
                * folds a very deep path; its empty segments change no state) */
            sid = PyLong_FromLong(0);
            if (sid == NULL)
                return NULL;
            Py_ssize_t from = 0;
            while (from < cut) {
                Py_ssize_t to = PyUnicode_FindChar(head, '/', from, cut, 1);
                if (to == -2) {
                    Py_DECREF(sid);
                    return NULL;
                }
                if (to < 0)
                    to = cut;
                if (to > from) {
                    int found = step(head, from, to, steps, &sid);
                    if (found <= 0) {
                        Py_DECREF(sid);
                        return found < 0 ? NULL : PyObject_CallOneArg(fallback, head);
                    }
                }
                from = to + 1;
            }
        }
    }
    if (cut + 1 < n) { /* a last segment: one step */
        int found = step(head, cut + 1, n, steps, &sid);
        if (found <= 0) {
            Py_DECREF(sid);
            return found < 0 ? NULL : PyObject_CallOneArg(fallback, head); /* a new step */
        }
    }
    Py_ssize_t at = PyLong_AsSsize_t(sid);
    Py_DECREF(sid);
    if (at == -1 && PyErr_Occurred())
        return NULL;
    if (at < 0 || at >= PyList_GET_SIZE(infos)) {
        PyErr_SetString(PyExc_IndexError, "a state number out of the rater's states");
        return NULL;
    }
    info = Py_NewRef(PyList_GET_ITEM(infos, at));
    if (PyDict_GET_SIZE(prefixes) >= limit)
        PyDict_Clear(prefixes);
    if (PyDict_SetItem(prefixes, head, info) < 0) {
        Py_DECREF(info);
        return NULL;
    }
    return info;
}

/* prefix_states(heads, prefixes, steps, infos, fallback, limit) -> {head: state number}
 * for each head of the list (Rater._rate_bulk's ``states``), or None when a head is not a
 * str (the caller's Python path then). */
static PyObject *
prefix_states(PyObject *self, PyObject *args)
{
    PyObject *heads, *prefixes, *steps, *infos, *fallback;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "O!O!O!O!On:prefix_states", &PyList_Type, &heads, &PyDict_Type,
                          &prefixes, &PyDict_Type, &steps, &PyList_Type, &infos, &fallback,
                          &limit))
        return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(heads); i++) {
        if (!PyUnicode_CheckExact(PyList_GET_ITEM(heads, i)))
            Py_RETURN_NONE;
    }
    PyObject *out = PyDict_New();
    if (out == NULL)
        return NULL;
    /* re-read each step: the fallback is Python code */
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(heads); i++) {
        PyObject *head = Py_NewRef(PyList_GET_ITEM(heads, i));
        PyObject *info = PyUnicode_CheckExact(head)
                             ? info_of(head, prefixes, steps, infos, fallback, limit)
                             : NULL;
        if (info == NULL && !PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "a prefix is not a str");
        if (info != NULL && (!PyTuple_CheckExact(info) || PyTuple_GET_SIZE(info) != 6)) {
            PyErr_SetString(PyExc_TypeError, "a prefix's info is not a 6-tuple");
            Py_CLEAR(info);
        }
        int rc = info != NULL ? PyDict_SetItem(out, head, PyTuple_GET_ITEM(info, 5)) : -1;
        Py_XDECREF(info);
        Py_DECREF(head);
        if (rc < 0) {
            Py_DECREF(out);
            return NULL;
        }
    }
    return out;
}

static PyMethodDef methods[] = {
    {"prefix_states", prefix_states, METH_VARARGS,
     "prefix_states(heads, prefixes, steps, infos, fallback, limit) -> dict | None: "
     "the state number of each prefix (scoring.py's Rater._rate_bulk)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_rater",
    "The rater's prefix look-ups (selection/_rater.c).", -1, methods,
};

PyMODINIT_FUNC
PyInit__rater(void)
{
    return PyModule_Create(&module);
}
