/* The fast paths of urls/slugs.py's bases_many and normalized_paths, compiled.
 *
 * Written in C because the base slug of each URL was the largest per-URL cost left in the
 * sitemap worker after its parser: strip, fullmatch and two replaces in a Python loop for a
 * plain path, unquote and three regular expressions for one with a %-escape
 * (bench/README.md has the numbers). The paths it reads are cut from the URLs here too: a
 * find and a slice a URL, without a bytecode loop.
 *
 * Any ASCII path gets slugs.py's rules: its slashes stripped from both ends ("home" when
 * nothing is left), each segment %-decoded (a byte of a UTF-8 sequence, valid or not, is
 * not ASCII and so is "other" below; a decoded ASCII byte is that character), segments
 * joined by "__", each run of characters other than ASCII letters, digits and "_" (the
 * "-" included) made one "-", lowercased, "-" trimmed from both ends. Left to slugs.py
 * (None): a path that is not ASCII, and one whose base takes a hash or a suffix (empty,
 * longer than `max_length`, a "__"-part naming a Windows device, or a segment whose decoded
 * letters are all non-ASCII next to one that keeps letters). tests/urls/test_slugs.py
 * checks both agree.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static inline int
hex_value(Py_UCS1 c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Each ASCII character as its base slug writes it: lowercase letters and digits, "_", and
 * "-" for every other character; 0 for the two read apart, "/" and "%". */
static Py_UCS1 MAP[128];
/* The ASCII letters and digits. */
static unsigned char LETTER[128];

/* The characters of a plain path (1; "-" and ".", which become one "-": 2). */
static unsigned char PLAIN[256];

static void
fill_tables(void)
{
    for (int ch = 0; ch < 128; ch++) {
        int letter = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
        int upper = ch >= 'A' && ch <= 'Z';
        LETTER[ch] = letter || upper;
        MAP[ch] = letter || ch == '_' ? ch : upper ? ch + ('a' - 'A') : '-';
    }
    MAP['/'] = MAP['%'] = 0;
    for (int ch = 0; ch < 128; ch++)
        PLAIN[ch] = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '/';
    PLAIN['-'] = PLAIN['.'] = 2;
}

/* Whether s[0:n] (a whole "__"-part) is a Windows device name. */
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

/* Whether a "__"-part of slug[0:n] names a device: the parts str.split("__") makes. */
static int
names_device(const Py_UCS1 *slug, Py_ssize_t n)
{
    Py_ssize_t part = 0;
    for (Py_ssize_t i = 0; i + 1 < n; i++) {
        if (slug[i] == '_' && slug[i + 1] == '_') {
            if (is_device(slug + part, i - part))
                return 1;
            part = i + 2;
            i++;
        }
    }
    return is_device(slug + part, n - part);
}

/* The base slug of a stripped path s[0:n] that is plain — lowercase letters, digits, "_",
 * "/", and "-" or "." neither side by side nor at an end — whose slug is the text with "."
 * made "-" and "/" made "__" (nothing to decode, collapse or trim): the usual path, in
 * loops without a branch a character. A new reference; None when not plain (or naming a
 * device, or too long). */
static PyObject *
plain_slug(const Py_UCS1 *s, Py_ssize_t n, Py_ssize_t max_length)
{
    unsigned char all = 1, pair = 0, previous = 0;
    Py_ssize_t slashes = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char kind = PLAIN[s[i]];
        all &= kind != 0;
        pair |= kind & previous & 2;
        previous = kind;
        slashes += s[i] == '/';
    }
    if (!all || pair || PLAIN[s[0]] == 2 || PLAIN[s[n - 1]] == 2 || n + slashes > max_length)
        return Py_NewRef(Py_None);
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
    if (names_device(PyUnicode_1BYTE_DATA(out), n + slashes)) {
        Py_DECREF(out);
        return Py_NewRef(Py_None);
    }
    return out;
}

/* The base slug of one path, a new reference; Py_None (new reference) when left to
 * slugs.py. `buffer` holds at least twice the path's length. */
static PyObject *
plain_base(PyObject *path, Py_ssize_t max_length, PyObject *home, Py_UCS1 *buffer)
{
    if (!PyUnicode_Check(path) || !PyUnicode_IS_ASCII(path))
        return Py_NewRef(Py_None);
    const Py_UCS1 *c = PyUnicode_1BYTE_DATA(path);
    Py_ssize_t start = 0, end = PyUnicode_GET_LENGTH(path);
    while (start < end && c[start] == '/')
        start++;
    while (end > start && c[end - 1] == '/')
        end--;
    if (start == end)
        return Py_NewRef(home);
    PyObject *plain = plain_slug(c + start, end - start, max_length);
    if (plain != Py_None)
        return plain;
    Py_DECREF(plain);
    Py_UCS1 *o = buffer;
    Py_ssize_t lettered = 0, unlettered = 0;
    int high = 0, letters = 0;
    Py_UCS1 last = 0;
    for (Py_ssize_t i = start; i <= end; i++) {
        Py_UCS1 ch = i < end ? c[i] : '/';
        Py_UCS1 mapped = MAP[ch];
        if (mapped) {  /* the common case: a letter, a digit, "_" or an "other" */
            letters |= LETTER[ch];
            if (mapped != '-' || last != '-')
                *o++ = last = mapped;
            continue;
        }
        if (ch == '/') {
            /* a segment whose decoded letters are all non-ASCII is named by a hash
               (slugs.py's _named) where another one keeps letters */
            if (high && !letters)
                unlettered++;
            else
                lettered++;
            high = letters = 0;
            if (i < end) {
                *o++ = '_';
                *o++ = last = '_';
            }
            continue;
        }
        /* "%": an escape when two hex digits follow ("/" is none: it ends the segment) */
        int hi = i + 2 < end ? hex_value(c[i + 1]) : -1;
        int lo = hi >= 0 ? hex_value(c[i + 2]) : -1;
        if (lo >= 0) {
            ch = (Py_UCS1)(hi * 16 + lo);
            i += 2;
        }
        if (ch >= 0x80)
            high = 1;
        else
            letters |= LETTER[ch];
        mapped = ch >= 0x80 || ch == '%' ? '-' : MAP[ch] ? MAP[ch] : '-';
        if (mapped != '-' || last != '-')
            *o++ = last = mapped;
    }
    if (unlettered && lettered)
        return Py_NewRef(Py_None);
    Py_UCS1 *first = buffer;
    while (first < o && *first == '-')
        first++;
    while (o > first && o[-1] == '-')
        o--;
    Py_ssize_t n = o - first;
    if (n == 0 || n > max_length || names_device(first, n))
        return Py_NewRef(Py_None);
    PyObject *out = PyUnicode_New(n, 127);
    if (out != NULL)
        memcpy(PyUnicode_1BYTE_DATA(out), first, n);
    return out;
}

/* plain_bases(paths, max_length, home, general) -> list[str]: general(path) for a path left
 * to slugs.py. */
static PyObject *
plain_bases(PyObject *module, PyObject *args)
{
    PyObject *paths, *home, *general;
    Py_ssize_t max_length;
    if (!PyArg_ParseTuple(args, "O!nUO:plain_bases", &PyList_Type, &paths, &max_length, &home,
                          &general))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(paths), longest = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *path = PyList_GET_ITEM(paths, i);
        if (PyUnicode_Check(path) && PyUnicode_GET_LENGTH(path) > longest)
            longest = PyUnicode_GET_LENGTH(path);
    }
    Py_UCS1 *buffer = PyMem_Malloc(2 * longest + 1);
    if (buffer == NULL)
        return PyErr_NoMemory();
    PyObject *out = PyList_New(n);
    if (out == NULL) {
        PyMem_Free(buffer);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *path = PyList_GET_ITEM(paths, i);
        PyObject *base = plain_base(path, max_length, home, buffer);
        if (base == Py_None) {
            Py_DECREF(base);
            base = PyObject_CallOneArg(general, path);
        }
        if (base == NULL) {
            PyMem_Free(buffer);
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, base);
    }
    PyMem_Free(buffer);
    return out;
}

/* normalized_paths(urls) -> list[str]: slugs.py's normalized_paths, each URL's
 * url[url.find("/", 8):].partition("?")[0]. */
static PyObject *
normalized_paths(PyObject *module, PyObject *args)
{
    PyObject *urls;
    if (!PyArg_ParseTuple(args, "O!:normalized_paths", &PyList_Type, &urls))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(urls);
    PyObject *out = PyList_New(n);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *url = PyList_GET_ITEM(urls, i);
        if (!PyUnicode_Check(url)) {
            PyErr_SetString(PyExc_TypeError, "normalized_paths: a URL is not a str");
            Py_DECREF(out);
            return NULL;
        }
        Py_ssize_t length = PyUnicode_GET_LENGTH(url);
        Py_ssize_t start = length > 8 ? PyUnicode_FindChar(url, '/', 8, length, 1) : -1;
        if (start < 0)  /* find's -1 as a slice start: the last character */
            start = length ? length - 1 : 0;
        Py_ssize_t end = PyUnicode_FindChar(url, '?', start, length, 1);
        PyObject *path = PyUnicode_Substring(url, start, end < 0 ? length : end);
        if (path == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, path);
    }
    return out;
}

static PyMethodDef methods[] = {
    {"plain_bases", plain_bases, METH_VARARGS,
     "plain_bases(paths, max_length, home, general) -> list[str]: each path's base slug, "
     "general(path) where it is not plain"},
    {"normalized_paths", normalized_paths, METH_VARARGS,
     "normalized_paths(urls) -> list[str]: each URL's path without its query"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_plain_bases", "bases_many's and normalized_paths' fast paths, compiled.",
    -1, methods,
};

PyMODINIT_FUNC
PyInit__plain_bases(void)
{
    fill_tables();
    return PyModule_Create(&module_def);
}
