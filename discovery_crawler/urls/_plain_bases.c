/* The fast path of urls/slugs.py's bases_many, compiled.
 *
 * Written in C because the base slug of each URL was the largest per-URL cost left in the
 * sitemap worker after its parser: ~0.6 s per 1M URLs of strip, fullmatch and two
 * replaces in a Python loop, against ~0.05 s here (bench/README.md).
 *
 * A path is plain when, its slashes stripped from both ends, it is at most `max_length`
 * characters of segments joined by single "/", each segment lowercase ASCII letters and
 * digits joined by single "-", "." or "_", and none of them exactly a Windows device name
 * (con, prn, aux, nul, com0-9, lpt0-9): slugs.py's _PLAIN_PATH. A plain path's base slug is
 * that text with "." -> "-" and "/" -> "__" ("home" when empty). Any other path gives None,
 * and slugs.py applies the general rules; tests/urls/test_slugs.py checks both agree.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static inline int
is_alnum(Py_UCS1 c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static inline int
is_joiner(Py_UCS1 c)
{
    return c == '-' || c == '.' || c == '_';
}

/* Whether s[0:n] (a whole segment) is a Windows device name. */
static int
is_device(const Py_UCS1 *s, Py_ssize_t n)
{
    if (n == 3) {
        return (memcmp(s, "con", 3) == 0 || memcmp(s, "prn", 3) == 0
                || memcmp(s, "aux", 3) == 0 || memcmp(s, "nul", 3) == 0);
    }
    if (n == 4 && s[3] >= '0' && s[3] <= '9')
        return memcmp(s, "com", 3) == 0 || memcmp(s, "lpt", 3) == 0;
    return 0;
}

/* The base slug of one path, a new reference; Py_None (new reference) when not plain. */
static PyObject *
plain_base(PyObject *path, Py_ssize_t max_length, PyObject *home)
{
    if (!PyUnicode_Check(path) || !PyUnicode_IS_ASCII(path))
        return Py_NewRef(Py_None);
    const Py_UCS1 *c = PyUnicode_1BYTE_DATA(path);
    Py_ssize_t start = 0, end = PyUnicode_GET_LENGTH(path);
    while (start < end && c[start] == '/')
        start++;
    while (end > start && c[end - 1] == '/')
        end--;
    Py_ssize_t n = end - start;
    if (n > max_length)
        return Py_NewRef(Py_None);
    if (n == 0)
        return Py_NewRef(home);
    const Py_UCS1 *s = c + start;
    Py_ssize_t slashes = 0, segment = 0;
    for (Py_ssize_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '/') {
            Py_ssize_t len = i - segment;
            /* a segment: alnum+ ([-._] alnum+)*, not a device name */
            if (len == 0 || !is_alnum(s[segment]) || !is_alnum(s[i - 1])
                || is_device(s + segment, len))
                return Py_NewRef(Py_None);
            if (i < n)
                slashes++;
            segment = i + 1;
            continue;
        }
        if (is_alnum(s[i]))
            continue;
        /* a joiner: not first in its segment, not after another joiner */
        if (i == segment || !is_joiner(s[i]) || is_joiner(s[i - 1]))
            return Py_NewRef(Py_None);
    }
    PyObject *out = PyUnicode_New(n + slashes, 127);
    if (out == NULL)
        return NULL;
    Py_UCS1 *o = PyUnicode_1BYTE_DATA(out);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS1 ch = s[i];
        if (ch == '/') {
            *o++ = '_';
            *o++ = '_';
        }
        else {
            *o++ = ch == '.' ? '-' : ch;
        }
    }
    return out;
}

/* plain_bases(paths, max_length, home) -> list[str | None] */
static PyObject *
plain_bases(PyObject *module, PyObject *args)
{
    PyObject *paths, *home;
    Py_ssize_t max_length;
    if (!PyArg_ParseTuple(args, "O!nU:plain_bases", &PyList_Type, &paths, &max_length, &home))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(paths);
    PyObject *out = PyList_New(n);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *base = plain_base(PyList_GET_ITEM(paths, i), max_length, home);
        if (base == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, base);
    }
    return out;
}

static PyMethodDef methods[] = {
    {"plain_bases", plain_bases, METH_VARARGS,
     "plain_bases(paths, max_length, home) -> list[str | None]: each plain path's base slug"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_plain_bases", "bases_many's fast path, compiled.", -1, methods,
};

PyMODINIT_FUNC
PyInit__plain_bases(void)
{
    return PyModule_Create(&module_def);
}
