/* Batch screens for the per-URL rules: which URLs of a batch the rules of urls/kinds.py,
 * urls/junk.py and urls/filters.py must look at, the others being settled here.
 *
 * Written in C because a sitemap worker asks all three of every URL it reads, and the answer
 * for nearly all of them is "a page, no junk, kept": a loop in Python over each URL (or a
 * regular expression over the batch joined) cost more per URL than every other rule of the
 * batch.
 *
 * not_plain_pages is url_kinds_many's per-URL fast test; junk_candidates finds every path some
 * junk prefilter of junk.py could match, and a few more; watch_indexes every URL that
 * decide_many cannot keep without a look (another origin, a query, or a segment that is
 * an action or a login word). Their callers apply the exact rules to whatever is not settled here;
 * tests/urls/test_screens.py and tests/urls/test_filters.py check both ways agree.
 */
#define _GNU_SOURCE /* memrchr */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* kinds.py's API prefixes and page suffixes (its one definition of them), as UTF-8, for the
 * length of one not_plain_pages call (the GIL held throughout: nothing else reads them). */
#define MAX_TABLE 16
static const char *API_PREFIXES[MAX_TABLE], *PAGE_SUFFIXES[MAX_TABLE];
static Py_ssize_t N_API_PREFIXES, N_PAGE_SUFFIXES;

/* Point `table` at the ASCII texts of the str tuple `words`; -1 with an exception if it is
 * not one of at most MAX_TABLE ASCII strings. */
static int
fill_table(PyObject *words, const char **table, Py_ssize_t *count)
{
    Py_ssize_t n = PyTuple_GET_SIZE(words);
    if (n > MAX_TABLE) {
        PyErr_SetString(PyExc_ValueError, "too many words for the kinds screen");
        return -1;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *word = PyTuple_GET_ITEM(words, k);
        if (!PyUnicode_Check(word) || !PyUnicode_IS_ASCII(word)) {
            PyErr_SetString(PyExc_ValueError, "the kinds screen takes ASCII strings");
            return -1;
        }
        table[k] = (const char *)PyUnicode_1BYTE_DATA(word);
    }
    *count = n;
    return 0;
}

static int
has_at(const Py_UCS1 *s, Py_ssize_t n, Py_ssize_t at, const char *word)
{
    size_t len = strlen(word);
    return at >= 0 && (size_t)(n - at) >= len && memcmp(s + at, word, len) == 0;
}

/* The indexes of the items of `list` for which test(item) is `value`. */
static PyObject *
indexes_where(PyObject *list, int (*test)(PyObject *), int value)
{
    PyObject *out = PyList_New(0);
    if (out == NULL)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(list);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (test(PyList_GET_ITEM(list, i)) != value)
            continue;
        PyObject *index = PyLong_FromSsize_t(i);
        if (index == NULL || PyList_Append(out, index) < 0) {
            Py_XDECREF(index);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(index);
    }
    return out;
}

/* kinds.py's url_kinds_many fast test: a path after index 8, no "?", no "/page/", no API
 * prefix at the path's start, and a last segment without a file extension (a trailing
 * "/", no "." after the last "/", or a page suffix). Strings of wider characters: not
 * settled here. */
static int
plain_page(PyObject *url)
{
    if (!PyUnicode_Check(url) || PyUnicode_KIND(url) != PyUnicode_1BYTE_KIND)
        return 0;
    const Py_UCS1 *s = PyUnicode_1BYTE_DATA(url);
    Py_ssize_t n = PyUnicode_GET_LENGTH(url);
    if (n <= 8 || memchr(s, '?', n) != NULL)
        return 0;
    const Py_UCS1 *first = memchr(s + 8, '/', n - 8);
    if (first == NULL)
        return 0;
    Py_ssize_t start = first - s;
    for (Py_ssize_t k = 0; k < N_API_PREFIXES; k++)
        if (has_at(s, n, start, API_PREFIXES[k]))
            return 0;
    /* "/page/" anywhere: look at each "/" (the first 8 characters hold at most "//") */
    for (const Py_UCS1 *slash = memchr(s, '/', n); slash != NULL;
         slash = memchr(slash + 1, '/', n - (slash + 1 - s)))
        if (slash[1] == 'p' && has_at(s, n, slash - s, "/page/"))
            return 0;
    if (s[n - 1] == '/')
        return 1;
    const Py_UCS1 *last_slash = memrchr(s, '/', n);
    const Py_UCS1 *last_dot = memrchr(last_slash, '.', n - (last_slash - s));
    if (last_dot == NULL)
        return 1;
    for (Py_ssize_t k = 0; k < N_PAGE_SUFFIXES; k++)
        if (has_at(s, n, n - (Py_ssize_t)strlen(PAGE_SUFFIXES[k]), PAGE_SUFFIXES[k]))
            return 1;
    return 0;
}

/* not_plain_pages(urls, api_prefixes, page_suffixes) -> list[int]: the indexes of the URLs
 * the fast test does not settle as pages. */
static PyObject *
not_plain_pages(PyObject *module, PyObject *args)
{
    PyObject *urls, *api_prefixes, *page_suffixes;
    if (!PyArg_ParseTuple(args, "O!O!O!:not_plain_pages", &PyList_Type, &urls, &PyTuple_Type,
                          &api_prefixes, &PyTuple_Type, &page_suffixes))
        return NULL;
    if (fill_table(api_prefixes, API_PREFIXES, &N_API_PREFIXES) < 0
        || fill_table(page_suffixes, PAGE_SUFFIXES, &N_PAGE_SUFFIXES) < 0)
        return NULL;
    return indexes_where(urls, plain_page, 0);
}

/* Whether s[at:] starts with `word` (lowercase ASCII), ASCII case aside. */
static int
word_at(const Py_UCS1 *s, Py_ssize_t n, Py_ssize_t at, const char *word)
{
    for (; *word; word++, at++)
        if (at >= n || Py_TOLOWER(s[at]) != (Py_UCS1)*word)
            return 0;
    return 1;
}

/* The first two letters of the keywords below, lowercase: most boundaries are ruled out by
 * one look here. */
static unsigned char OPENINGS[128][128];

static void
fill_openings(void)
{
    static const char *const openings[] = {"te", "tm", "sa", "he", "ho", "lo", "la", "un",
                                           "ex", "dr", "co", "pr", "ol", "ba", "va"};
    for (size_t k = 0; k < sizeof(openings) / sizeof(*openings); k++)
        OPENINGS[(int)openings[k][0]][(int)openings[k][1]] = 1;
    for (int digit = '0'; digit <= '9'; digit++)
        OPENINGS['v'][digit] = 1;
}

/* Whether a junk row's keyword starts at s[at]: every prefilter of junk.py matches one at a
 * segment's start (after "/", or the path's start) or after a "-" or "_". `s` is ASCII. */
static int
keyword_at(const Py_UCS1 *s, Py_ssize_t n, Py_ssize_t at)
{
    if (at + 1 >= n || !OPENINGS[Py_TOLOWER(s[at])][Py_TOLOWER(s[at + 1])])
        return 0;
    switch (Py_TOLOWER(s[at])) {
    case 't':
        return word_at(s, n, at, "test") || word_at(s, n, at, "temp") || word_at(s, n, at, "tmp");
    case 's':
        return word_at(s, n, at, "sample");
    case 'h':
        return word_at(s, n, at, "hello") || word_at(s, n, at, "holiday");
    case 'l':
        return word_at(s, n, at, "lorem") || word_at(s, n, at, "landing");
    case 'u':
        return word_at(s, n, at, "untitled");
    case 'e':
        return word_at(s, n, at, "example");
    case 'd':
        return word_at(s, n, at, "draft");
    case 'c':
        return word_at(s, n, at, "copy");
    case 'p':
        return word_at(s, n, at, "promo");
    case 'o':
        return word_at(s, n, at, "old");
    case 'b':
        return word_at(s, n, at, "backup");
    case 'v':  /* variant-…, and v2-test */
        return word_at(s, n, at, "variant") || (at + 1 < n && Py_ISDIGIT(s[at + 1]));
    default:
        return 0;
    }
}

/* A path some junk row may match: a keyword at a boundary, a newline (the prefilters end a
 * segment there, the table does not) or a character that is not ASCII (lowercasing one may
 * make an ASCII letter: the Kelvin sign). */
static int
junk_candidate(PyObject *path)
{
    if (!PyUnicode_Check(path) || !PyUnicode_IS_ASCII(path))
        return 1;
    const Py_UCS1 *s = PyUnicode_1BYTE_DATA(path);
    Py_ssize_t n = PyUnicode_GET_LENGTH(path);
    if (n && keyword_at(s, n, 0))
        return 1;
    /* from boundary to boundary (the text ends with a NUL; a NUL inside is skipped) */
    const char *at = (const char *)s, *end = at + n;
    while ((at += strcspn(at, "/-_\n")) < end) {
        if (*at == '\n')
            return 1;
        at++;
        if (at[-1] && at < end && keyword_at(s, n, (const Py_UCS1 *)at - s))
            return 1;
    }
    return 0;
}

/* junk_candidates(paths) -> list[int]: the indexes of the paths that may be junk. */
static PyObject *
junk_candidates(PyObject *module, PyObject *args)
{
    PyObject *paths;
    if (!PyArg_ParseTuple(args, "O!:junk_candidates", &PyList_Type, &paths))
        return NULL;
    return indexes_where(paths, junk_candidate, 1);
}

/* The words watch_indexes looks for: an open-addressing table of their (lowercase ASCII)
 * texts by hash, built for each call (a few hundred words: µs), with the range of their
 * lengths and their first two characters to skip most segments unhashed. */
#define WATCH_SLOTS 1024 /* a power of two, several times the words */
#define WATCH_LONGEST 64

typedef struct {
    const char *text[WATCH_SLOTS];
    Py_ssize_t length[WATCH_SLOTS];
    unsigned char opening[128][128]; /* the first two characters, either case */
    Py_ssize_t shortest, longest;
} Watch;

static size_t
text_hash(const Py_UCS1 *s, Py_ssize_t n)
{
    size_t h = 2166136261u;
    for (Py_ssize_t i = 0; i < n; i++)
        h = (h ^ Py_TOLOWER(s[i])) * 16777619u;
    return h;
}

/* 0, or -1 with an exception set: a word that is not ASCII text, or too many. */
static int
watch_fill(Watch *watch, PyObject *words)
{
    memset(watch, 0, sizeof(*watch));
    watch->shortest = WATCH_LONGEST;
    Py_ssize_t n = PyTuple_GET_SIZE(words);
    if (n > WATCH_SLOTS / 2) {
        PyErr_SetString(PyExc_ValueError, "too many words to watch");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *word = PyTuple_GET_ITEM(words, i);
        if (!PyUnicode_Check(word) || !PyUnicode_IS_ASCII(word)
            || PyUnicode_GET_LENGTH(word) < 2 || PyUnicode_GET_LENGTH(word) > WATCH_LONGEST) {
            PyErr_SetString(PyExc_ValueError, "a watched word is 2-64 ASCII characters");
            return -1;
        }
        const Py_UCS1 *s = PyUnicode_1BYTE_DATA(word);
        Py_ssize_t len = PyUnicode_GET_LENGTH(word);
        size_t slot = text_hash(s, len) & (WATCH_SLOTS - 1);
        while (watch->text[slot] != NULL)
            slot = (slot + 1) & (WATCH_SLOTS - 1);
        watch->text[slot] = (const char *)s;
        watch->length[slot] = len;
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++)
                watch->opening[a ? Py_TOUPPER(s[0]) : Py_TOLOWER(s[0])]
                              [b ? Py_TOUPPER(s[1]) : Py_TOLOWER(s[1])] = 1;
        if (len < watch->shortest)
            watch->shortest = len;
        if (len > watch->longest)
            watch->longest = len;
    }
    return 0;
}

/* Whether s[0:n] is a watched word, ASCII case aside (the words are lowercase). */
static int
watched_segment(const Watch *watch, const Py_UCS1 *s, Py_ssize_t n)
{
    if (n < watch->shortest || n > watch->longest || !watch->opening[s[0]][s[1]])
        return 0;
    size_t slot = text_hash(s, n) & (WATCH_SLOTS - 1);
    for (; watch->text[slot] != NULL; slot = (slot + 1) & (WATCH_SLOTS - 1)) {
        if (watch->length[slot] != n)
            continue;
        Py_ssize_t i = 0;
        while (i < n && Py_TOLOWER(s[i]) == (Py_UCS1)watch->text[slot][i])
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

/* A URL filters.py's decide must see whatever its kind: one not under `origin` (the
 * site's "scheme://host/"), a query, a character that is not ASCII (lowercasing one may
 * make an ASCII word: the Kelvin sign), or a segment after a "/" (up to the next "/", the
 * "?" or the end) that is a watched word. */
static int
watched_url(const Watch *watch, PyObject *url, const char *origin, Py_ssize_t origin_length)
{
    if (!PyUnicode_Check(url) || !PyUnicode_IS_ASCII(url))
        return 1;
    const Py_UCS1 *s = PyUnicode_1BYTE_DATA(url);
    Py_ssize_t n = PyUnicode_GET_LENGTH(url);
    if (n < origin_length || memcmp(s, origin, origin_length) != 0 || memchr(s, '?', n) != NULL)
        return 1;
    const Py_UCS1 *end = s + n;
    for (const Py_UCS1 *slash = memchr(s, '/', n); slash != NULL;) {
        const Py_UCS1 *segment = slash + 1;
        slash = segment < end ? memchr(segment, '/', end - segment) : NULL;
        Py_ssize_t len = (slash != NULL ? slash : end) - segment;
        if (len && watched_segment(watch, segment, len))
            return 1;
    }
    return 0;
}

/* watch_indexes(urls, origin, words) -> list[int]: the indexes of the URLs that do not
 * start with `origin` (ASCII) or hold a query, a character that is not ASCII or a segment
 * in `words` (a tuple of lowercase ASCII words). */
static PyObject *
watch_indexes(PyObject *module, PyObject *args)
{
    PyObject *urls, *origin, *words;
    if (!PyArg_ParseTuple(args, "O!UO!:watch_indexes", &PyList_Type, &urls, &origin,
                          &PyTuple_Type, &words))
        return NULL;
    if (!PyUnicode_IS_ASCII(origin)) {
        PyErr_SetString(PyExc_ValueError, "watch_indexes: the origin is ASCII");
        return NULL;
    }
    const char *origin_text = (const char *)PyUnicode_1BYTE_DATA(origin);
    Py_ssize_t origin_length = PyUnicode_GET_LENGTH(origin);
    Watch *watch = PyMem_Malloc(sizeof(Watch));
    if (watch == NULL)
        return PyErr_NoMemory();
    PyObject *out = watch_fill(watch, words) < 0 ? NULL : PyList_New(0);
    Py_ssize_t n = PyList_GET_SIZE(urls);
    for (Py_ssize_t i = 0; out != NULL && i < n; i++) {
        if (!watched_url(watch, PyList_GET_ITEM(urls, i), origin_text, origin_length))
            continue;
        PyObject *index = PyLong_FromSsize_t(i);
        if (index == NULL || PyList_Append(out, index) < 0)
            Py_CLEAR(out);
        Py_XDECREF(index);
    }
    PyMem_Free(watch);
    return out;
}

static PyMethodDef methods[] = {
    {"not_plain_pages", not_plain_pages, METH_VARARGS,
     "not_plain_pages(urls, api_prefixes, page_suffixes) -> list[int]: the indexes of the "
     "URLs url_kinds_many's fast test does not settle as pages"},
    {"junk_candidates", junk_candidates, METH_VARARGS,
     "junk_candidates(paths) -> list[int]: the indexes of the paths some junk row may match"},
    {"watch_indexes", watch_indexes, METH_VARARGS,
     "watch_indexes(urls, origin, words) -> list[int]: the indexes of the URLs not under "
     "origin or holding a query, a character that is not ASCII or a segment in words"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_screens", "The URL rules' batch screens, compiled.", -1, methods,
};

PyMODINIT_FUNC
PyInit__screens(void)
{
    fill_openings();
    return PyModule_Create(&module_def);
}
