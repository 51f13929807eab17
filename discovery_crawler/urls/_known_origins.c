/* The common case of urls/normalize.py's OriginCache.normalize_many, compiled.
 *
 * Written in C because nearly every sitemap batch holds a URL that needs work (an escape,
 * a non-ASCII letter, a query), and then Python's batch path ran its per-URL loop for the
 * whole batch, and the slow path (quote and an escape-fixing regex) for each such URL.
 *
 * A location is worked out here when the text before its first "/" from the 8th character
 * is an origin the cache holds normalized (a str in ``origins``):
 * - the rest made only of characters that never need work (normalize.py's _NEEDS_WORK) is
 *   kept as it is, after the normalized origin;
 * - else, a location that starts "http://" or "https://" and ends in no whitespace gets its
 *   rest as normalize.py's _normalize_rest gives it: the fragment dropped; unreserved
 *   escapes decoded, the others upper-cased; other characters outside the safe ones encoded
 *   as UTF-8 escapes; tracking parameters dropped.
 * A location whose path holds a "." or ".." segment (after its escapes are fixed:
 * "%2E%2E" is "..") is left to the Python code, which removes them (RFC 3986 §5.2.4).
 * Any other location (an origin not yet cached or not valid, a control character, an
 * invalid escape, a parameter name not ASCII…) is left to the Python code (its index is
 * returned), which gives the error or the repair. tests/urls/test_normalize_compiled.py
 * checks both give the same batches.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* normalize.py's _NEEDS_WORK complement: characters a path and query keep as they are */
static const char *const CLEAN =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/:@!$&'()*+,;=";
static const char *const UNRESERVED =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~";

typedef struct {
    char clean[128], path_safe[128], query_safe[128], unreserved[128];
    PyObject *key, *value; /* the last origin looked up, and its normalized form */
    PyObject *origins, *tracking_prefixes, *tracking_names;
    char *buf; /* a rest being normalized (ASCII: every other character is escaped) */
    Py_ssize_t cap, len;
} Work;

static void
tables(Work *w)
{
    for (const char *c = CLEAN; *c; c++)
        w->clean[(int)*c] = w->path_safe[(int)*c] = w->query_safe[(int)*c] = 1;
    w->path_safe['%'] = w->query_safe['%'] = w->query_safe['?'] = 1;
    for (const char *c = UNRESERVED; *c; c++)
        w->unreserved[(int)*c] = 1;
}

static int
put(Work *w, char c)
{
    if (w->len == w->cap) {
        Py_ssize_t cap = w->cap ? 2 * w->cap : 256;
        char *buf = PyMem_Realloc(w->buf, cap);
        if (buf == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        w->buf = buf;
        w->cap = cap;
    }
    w->buf[w->len++] = c;
    return 0;
}

static int
put_escape(Work *w, unsigned int byte)
{
    static const char HEX[] = "0123456789ABCDEF";
    return put(w, '%') < 0 || put(w, HEX[byte >> 4]) < 0 || put(w, HEX[byte & 15]) < 0 ? -1 : 0;
}

static int
hex_value(Py_UCS4 c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* normalize.py's _clean of text[from:to] (quote with ``safe``, then each escape fixed),
 * appended to the buffer: 1, 0 when the Python code should decide (an invalid escape), -1
 * on error. */
static int
clean(Work *w, int kind, const void *text, Py_ssize_t from, Py_ssize_t to, const char *safe)
{
    for (Py_ssize_t i = from; i < to; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, text, i);
        if (c == '%') {
            int high = i + 2 < to ? hex_value(PyUnicode_READ(kind, text, i + 1)) : -1;
            int low = high >= 0 ? hex_value(PyUnicode_READ(kind, text, i + 2)) : -1;
            if (low < 0)
                return 0;
            unsigned int byte = (unsigned int)(high << 4 | low);
            if ((byte < 128 && w->unreserved[byte] ? put(w, (char)byte) : put_escape(w, byte)) < 0)
                return -1;
            i += 2;
        }
        else if (c < 128) {
            if ((safe[c] ? put(w, (char)c) : put_escape(w, c)) < 0)
                return -1;
        }
        else { /* UTF-8 (a lone surrogate is not printable: never here) */
            unsigned char bytes[4];
            int n;
            if (c < 0x800) {
                bytes[0] = 0xC0 | (c >> 6);
                n = 1;
            }
            else if (c < 0x10000) {
                bytes[0] = 0xE0 | (c >> 12);
                bytes[1] = 0x80 | ((c >> 6) & 0x3F);
                n = 2;
            }
            else {
                bytes[0] = 0xF0 | (c >> 18);
                bytes[1] = 0x80 | ((c >> 12) & 0x3F);
                bytes[2] = 0x80 | ((c >> 6) & 0x3F);
                n = 3;
            }
            bytes[n++] = 0x80 | (c & 0x3F);
            for (int k = 0; k < n; k++) {
                if (put_escape(w, bytes[k]) < 0)
                    return -1;
            }
        }
    }
    return 1;
}

/* Whether a parameter name text[from:to] is a tracking one (normalize.py's
 * is_tracking_parameter): 1, 0; 2 when the Python code should decide (not ASCII); -1 on
 * error. */
static int
tracking(Work *w, int kind, const void *text, Py_ssize_t from, Py_ssize_t to)
{
    char low[64];
    Py_ssize_t n = to - from;
    for (Py_ssize_t i = 0; i < n && i < (Py_ssize_t)sizeof low; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, text, from + i);
        if (c >= 128)
            return 2;
        low[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    for (Py_ssize_t i = (Py_ssize_t)sizeof low; i < n; i++) {
        if (PyUnicode_READ(kind, text, from + i) >= 128)
            return 2;
    }
    Py_ssize_t kept = n < (Py_ssize_t)sizeof low ? n : (Py_ssize_t)sizeof low;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(w->tracking_prefixes); k++) {
        PyObject *prefix = PyTuple_GET_ITEM(w->tracking_prefixes, k);
        Py_ssize_t m = PyUnicode_GET_LENGTH(prefix);
        if (m <= kept && memcmp(PyUnicode_1BYTE_DATA(prefix), low, m) == 0)
            return 1;
    }
    if (n > kept)
        return 0; /* longer than any name the set holds */
    PyObject *name = PyUnicode_DecodeASCII(low, n, NULL);
    if (name == NULL)
        return -1;
    int found = PySet_Contains(w->tracking_names, name);
    Py_DECREF(name);
    return found;
}

static int
starts(int kind, const void *text, Py_ssize_t len, const char *prefix)
{
    Py_ssize_t i = 0;
    for (; prefix[i]; i++) {
        if (i >= len || PyUnicode_READ(kind, text, i) != (Py_UCS4)(unsigned char)prefix[i])
            return 0;
    }
    return 1;
}

/* The normalized rest raw[slash:] of a location that needs work, in the buffer: 1, 0 when
 * the Python code should decide, -1 on error. */
static int
normalize_rest(Work *w, PyObject *raw, Py_ssize_t slash)
{
    int kind = PyUnicode_KIND(raw);
    const void *text = PyUnicode_DATA(raw);
    Py_ssize_t len = PyUnicode_GET_LENGTH(raw), end = len, question = -1;
    /* as written "http://" or "https://" (else the Python code resolves it first), and
     * nothing for it to strip */
    if (!(starts(kind, text, len, "http://") || starts(kind, text, len, "https://"))
        || Py_UNICODE_ISSPACE(PyUnicode_READ(kind, text, len - 1)))
        return 0;
    for (Py_ssize_t i = slash; i < len; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, text, i);
        if (c == '#') {
            end = i;
            break;
        }
        if (c < 128 ? (c < 0x20 || c == 0x7F) : !Py_UNICODE_ISPRINTABLE(c))
            return 0; /* an error */
        if (c == '?' && question < 0)
            question = i;
    }
    w->len = 0;
    int done = clean(w, kind, text, slash, question < 0 ? end : question, w->path_safe);
    if (done <= 0 || question < 0)
        return done;
    /* the parameters kept, joined by "&" (an "&" neither makes nor hides an escape) */
    Py_ssize_t mark = w->len, from = question + 1;
    if (put(w, '?') < 0)
        return -1;
    while (from <= end) {
        Py_ssize_t to = from, eq = -1;
        while (to < end && PyUnicode_READ(kind, text, to) != '&') {
            if (eq < 0 && PyUnicode_READ(kind, text, to) == '=')
                eq = to;
            to++;
        }
        if (to > from) {
            int drop = tracking(w, kind, text, from, eq < 0 ? to : eq);
            if (drop != 0 && drop != 1)
                return drop < 0 ? -1 : 0;
            if (!drop) {
                if (w->len > mark + 1 && put(w, '&') < 0)
                    return -1;
                if ((done = clean(w, kind, text, from, to, w->query_safe)) <= 0)
                    return done;
            }
        }
        from = to + 1;
    }
    if (w->len == mark + 1)
        w->len = mark; /* no parameter kept: no "?" */
    return 1;
}

/* Whether text[from:to] (a path, or a path and query) holds a "." or ".." segment: a "/"
 * then one or two dots, then "/", "?", "#" or the end (normalize.py's _DOT_SEGMENT). */
static int
dot_segment(int kind, const void *text, Py_ssize_t from, Py_ssize_t to)
{
    for (Py_ssize_t i = from; i + 1 < to; i++) {
        if (PyUnicode_READ(kind, text, i) != '/' || PyUnicode_READ(kind, text, i + 1) != '.')
            continue;
        Py_ssize_t j = i + 2;
        if (j < to && PyUnicode_READ(kind, text, j) == '.')
            j++;
        if (j == to)
            return 1;
        Py_UCS4 c = PyUnicode_READ(kind, text, j);
        if (c == '/' || c == '?' || c == '#')
            return 1;
    }
    return 0;
}

/* The normalized form of one location (a new reference); Py_None (a new reference) when
 * the Python code should work it out; NULL on error. */
static PyObject *
known(Work *w, PyObject *raw)
{
    if (!PyUnicode_CheckExact(raw))
        return Py_NewRef(Py_None);
    Py_ssize_t len = PyUnicode_GET_LENGTH(raw);
    Py_ssize_t slash = len > 8 ? PyUnicode_FindChar(raw, '/', 8, len, 1) : -1;
    if (slash == -2)
        return NULL;
    if (slash < 0)
        return Py_NewRef(Py_None);
    if (w->key == NULL || PyUnicode_GET_LENGTH(w->key) != slash
        || PyUnicode_Tailmatch(raw, w->key, 0, slash, -1) != 1) {
        PyObject *key = PyUnicode_Substring(raw, 0, slash);
        if (key == NULL)
            return NULL;
        PyObject *value = PyDict_GetItemWithError(w->origins, key);
        if (value == NULL || !PyUnicode_CheckExact(value)) {
            Py_DECREF(key);
            return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
        }
        Py_XSETREF(w->key, key);
        Py_XSETREF(w->value, Py_NewRef(value));
    }
    int kind = PyUnicode_KIND(raw);
    const void *text = PyUnicode_DATA(raw);
    Py_ssize_t i = slash;
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *s = text;
        while (i < len && s[i] < 128 && w->clean[s[i]])
            i++;
    }
    else { /* a wide character before the rest (in the host): the rest may be clean */
        Py_UCS4 c;
        while (i < len && (c = PyUnicode_READ(kind, text, i)) < 128 && w->clean[c])
            i++;
    }
    if (i == len) { /* nothing to do: the origin normalized, the rest as it is */
        if (dot_segment(kind, text, slash, len))
            return Py_NewRef(Py_None);
        if (w->value == w->key || PyUnicode_Compare(w->value, w->key) == 0)
            return Py_NewRef(raw);
        PyObject *rest = PyUnicode_Substring(raw, slash, len);
        if (rest == NULL)
            return NULL;
        PyObject *url = PyUnicode_Concat(w->value, rest);
        Py_DECREF(rest);
        return url;
    }
    int done = normalize_rest(w, raw, slash);
    if (done <= 0)
        return done < 0 ? NULL : Py_NewRef(Py_None);
    if (dot_segment(PyUnicode_1BYTE_KIND, w->buf, 0, w->len))
        return Py_NewRef(Py_None);
    PyObject *rest = PyUnicode_DecodeASCII(w->buf, w->len, NULL);
    if (rest == NULL)
        return NULL;
    PyObject *url = PyUnicode_Concat(w->value, rest);
    Py_DECREF(rest);
    return url;
}

/* on_known_origins(raws, origins, tracking_prefixes, tracking_names) -> (urls, left):
 * each location's normalized form, None where the Python code should work it out (their
 * indices: ``left``). */
static PyObject *
on_known_origins(PyObject *module, PyObject *args)
{
    PyObject *raws;
    Work w = {0};
    if (!PyArg_ParseTuple(args, "O!O!O!O!:on_known_origins", &PyList_Type, &raws, &PyDict_Type,
                          &w.origins, &PyTuple_Type, &w.tracking_prefixes, &PyFrozenSet_Type,
                          &w.tracking_names))
        return NULL;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(w.tracking_prefixes); k++) {
        PyObject *prefix = PyTuple_GET_ITEM(w.tracking_prefixes, k);
        if (!PyUnicode_CheckExact(prefix) || !PyUnicode_IS_ASCII(prefix)) {
            PyErr_SetString(PyExc_TypeError, "a tracking prefix is not an ASCII str");
            return NULL;
        }
    }
    tables(&w);
    Py_ssize_t n = PyList_GET_SIZE(raws);
    PyObject *out = PyList_New(n), *left = PyList_New(0), *result = NULL;
    if (out == NULL || left == NULL)
        goto done;
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *url = known(&w, PyList_GET_ITEM(raws, j));
        if (url == NULL)
            goto done;
        PyList_SET_ITEM(out, j, url);
        if (url == Py_None) {
            PyObject *at = PyLong_FromSsize_t(j);
            int failed = at == NULL || PyList_Append(left, at) < 0;
            Py_XDECREF(at);
            if (failed)
                goto done;
        }
    }
    result = PyTuple_Pack(2, out, left);
done:
    Py_XDECREF(out);
    Py_XDECREF(left);
    Py_XDECREF(w.key);
    Py_XDECREF(w.value);
    PyMem_Free(w.buf);
    return result;
}

static PyMethodDef methods[] = {
    {"on_known_origins", on_known_origins, METH_VARARGS,
     "on_known_origins(raws, origins, tracking_prefixes, tracking_names) -> (urls, left): "
     "normalize_many's common case (None, and the index in left, where Python decides)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_known_origins", "normalize_many's common case, compiled.", -1,
    methods,
};

PyMODINIT_FUNC
PyInit__known_origins(void)
{
    return PyModule_Create(&module_def);
}
