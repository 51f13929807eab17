/* The bulk path of selection/scoring.py's Rater (rate_columns on a sitemap batch), compiled.
 *
 * Written in C because the rater was the sitemap worker's largest cost after its parser:
 * Python's bulk path (Rater._rate_bulk) works the batch as whole-batch string passes (the
 * paths cut, lowercased and stripped, the last segments checked by regexes and set tests,
 * the outcomes mapped), each a pass over every URL. Here one call walks each URL once, as
 * Rater._rate_each does, and gives the same totals, types and slots:
 *
 * - a URL's path (after the first "/" from the 8th character, before any "?"), lowercased
 *   and stripped of its end slashes, is a prefix and a last segment;
 * - a last segment of words (a letter or "%" first; letters, digits and "%" joined by single
 *   "-", "_" or ".") that is no listing, marker or index-file word, no version ("v2…")
 *   and holds no form, data or utility word leaves the URL's type to its prefix's facts
 *   (a Rater._infos entry), the changefreq and whether it has three words or more, as
 *   scoring._bulk_outcome decides; its priority adds its points;
 * - any other URL (one segment, a non-ASCII or odd path, an odd changefreq) is "odd": its
 *   index is returned and Rater._rate_each rates it (the reference rules, one URL).
 *
 * A prefix's facts are its state, folded from the root a step a segment through the rater's
 * step table (a sitemap's prefixes are mostly distinct, but made of few distinct steps, so
 * the steps met are also remembered for the call, by their text); a step the table does
 * not hold yet is left to Rater._prefix, which works it out and fills it. The caches change
 * no answer. tests/selection/test_rater_compiled.py checks the rater gives
 * the same totals, types and slots with and without this module.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>

/* -- a set of ASCII words, for tests on bytes (no str object a token) ------------------- */

typedef struct {
    const char *s; /* borrowed from a str the caller's set holds */
    Py_ssize_t len;
} Word;

typedef struct {
    Word *slots;
    size_t mask;
    uint64_t lengths; /* bit n: a word of n characters (bit 63: 63 or more) */
    uint32_t firsts;  /* bit c - 'a': a word starting with c (bit 26: with anything else) */
} Words;

static inline uint64_t
length_bit(Py_ssize_t n)
{
    return (uint64_t)1 << (n < 63 ? n : 63);
}

static inline uint32_t
first_bit(char c)
{
    return (uint32_t)1 << (c >= 'a' && c <= 'z' ? c - 'a' : 26);
}

static size_t
hash_bytes(const char *s, Py_ssize_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (Py_ssize_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return (size_t)h;
}

/* The words of a frozenset of str (non-ASCII ones left out: no ASCII text equals them);
 * 0, or -1 with an error set. */
static int
words_build(Words *w, PyObject *set)
{
    if (!PyAnySet_Check(set)) {
        PyErr_SetString(PyExc_TypeError, "a word table is not a set");
        return -1;
    }
    size_t size = 8;
    while (size < 2 * (size_t)PySet_GET_SIZE(set) + 2)
        size <<= 1;
    w->slots = PyMem_Calloc(size, sizeof(Word));
    if (w->slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    w->mask = size - 1;
    PyObject *iter = PyObject_GetIter(set), *key;
    if (iter == NULL)
        return -1;
    while ((key = PyIter_Next(iter)) != NULL) {
        /* the set holds the word: its text stays while the caller holds the set */
        int usable = PyUnicode_CheckExact(key);
        if (usable && PyUnicode_IS_ASCII(key)) {
            const char *s = (const char *)PyUnicode_1BYTE_DATA(key);
            Py_ssize_t n = PyUnicode_GET_LENGTH(key);
            size_t at = hash_bytes(s, n) & w->mask;
            while (w->slots[at].s != NULL)
                at = (at + 1) & w->mask;
            w->slots[at].s = s;
            w->slots[at].len = n;
            w->lengths |= length_bit(n);
            w->firsts |= first_bit(n > 0 ? s[0] : 0);
        }
        Py_DECREF(key);
        if (!usable) {
            Py_DECREF(iter);
            PyErr_SetString(PyExc_TypeError, "a word is not a str");
            return -1;
        }
    }
    Py_DECREF(iter);
    if (PyErr_Occurred())
        return -1;
    return 0;
}

static int
words_has(const Words *w, const char *s, Py_ssize_t n)
{
    if (!(w->lengths & length_bit(n)) || !(w->firsts & first_bit(n > 0 ? s[0] : 0)))
        return 0;
    size_t at = hash_bytes(s, n) & w->mask;
    while (w->slots[at].s != NULL) {
        if (w->slots[at].len == n && memcmp(w->slots[at].s, s, n) == 0)
            return 1;
        at = (at + 1) & w->mask;
    }
    return 0;
}

/* -- a prefix's facts ------------------------------------------------------------------- */

/* The steps met in one call (a state and a segment's text to the next state), before the
 * rater's step table (a dict keyed by a tuple, so a str and a tuple a look-up): a batch's
 * prefixes are made of few distinct steps, met again and again. */
typedef struct {
    PyObject *seg; /* owned; NULL: an empty slot */
    size_t hash;
    long sid, next;
} Step;

typedef struct {
    Step *slots;
    size_t mask, used;
} Steps;

static int
steps_grow(Steps *t)
{
    size_t size = t->slots == NULL ? 256 : 2 * (t->mask + 1);
    Step *slots = PyMem_Calloc(size, sizeof(Step));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    if (t->slots != NULL) {
        for (size_t i = 0; i <= t->mask; i++) {
            Step *old = &t->slots[i];
            if (old->seg == NULL)
                continue;
            size_t at = old->hash & (size - 1);
            while (slots[at].seg != NULL)
                at = (at + 1) & (size - 1);
            slots[at] = *old;
        }
        PyMem_Free(t->slots);
    }
    t->slots = slots;
    t->mask = size - 1;
    return 0;
}

static void
steps_free(Steps *t)
{
    if (t->slots == NULL)
        return;
    for (size_t i = 0; i <= t->mask; i++)
        Py_XDECREF(t->slots[i].seg);
    PyMem_Free(t->slots);
}

/* *sid = the state after segment s[0:n] from state *sid: 1 when the rater's tables know the
 * step, 0 when not (Rater._prefix works it out), -1 on error. */
static int
step(Steps *t, PyObject *steps, const char *s, Py_ssize_t n, long *sid)
{
    size_t hash = hash_bytes(s, n) ^ ((size_t)*sid * 0x9E3779B97F4A7C15ULL);
    if (t->slots == NULL && steps_grow(t) < 0)
        return -1;
    size_t at = hash & t->mask;
    for (Step *e = &t->slots[at]; e->seg != NULL; e = &t->slots[at = (at + 1) & t->mask]) {
        if (e->hash == hash && e->sid == *sid && PyUnicode_GET_LENGTH(e->seg) == n
            && memcmp(PyUnicode_1BYTE_DATA(e->seg), s, n) == 0) {
            *sid = e->next;
            return 1;
        }
    }
    PyObject *seg = PyUnicode_DecodeASCII(s, n, NULL);
    if (seg == NULL)
        return -1;
    PyObject *from = PyLong_FromLong(*sid);
    PyObject *key = from != NULL ? PyTuple_Pack(2, from, seg) : NULL;
    Py_XDECREF(from);
    PyObject *next = key != NULL ? PyDict_GetItemWithError(steps, key) : NULL;
    Py_XDECREF(key);
    long to = next != NULL ? PyLong_AsLong(next) : -1;
    if (next == NULL || (to == -1 && PyErr_Occurred())) {
        Py_DECREF(seg);
        return PyErr_Occurred() ? -1 : 0;
    }
    Step *e = &t->slots[at];
    e->seg = seg;
    e->hash = hash;
    e->sid = *sid;
    e->next = to;
    *sid = to;
    if (++t->used * 2 > t->mask && steps_grow(t) < 0)
        return -1;
    return 1;
}

/* The info (a Rater._infos entry, borrowed) of the prefix s[0:n] (``a/b``: lowercased, no
 * empty segment): folded from the root a step a segment; a step the rater's tables do not
 * hold yet is left to Rater._prefix (``fallback``), which fills them (*owned: its result,
 * to release). NULL on error. */
static PyObject *
info_of(const char *s, Py_ssize_t n, Steps *memo, PyObject *steps, PyObject *infos,
        PyObject *fallback, PyObject **owned)
{
    long sid = 0;
    Py_ssize_t from = 0;
    while (from < n) {
        const char *slash = memchr(s + from, '/', n - from);
        Py_ssize_t to = slash != NULL ? slash - s : n;
        int found = step(memo, steps, s + from, to - from, &sid);
        if (found < 0)
            return NULL;
        if (found == 0) {
            PyObject *head = PyUnicode_DecodeASCII(s, n, NULL);
            if (head == NULL)
                return NULL;
            *owned = PyObject_CallOneArg(fallback, head);
            Py_DECREF(head);
            return *owned;
        }
        from = to + 1;
    }
    if (sid < 0 || sid >= PyList_GET_SIZE(infos)) {
        PyErr_SetString(PyExc_IndexError, "a state number out of the rater's states");
        return NULL;
    }
    return PyList_GET_ITEM(infos, sid);
}

/* -- one batch -------------------------------------------------------------------------- */

/* What a prefix's info says (scoring._Prefix: n, points, forced, article, state, number). */
typedef struct {
    long n;
    long points;
    PyObject *forced; /* borrowed from the info; NULL for None */
    int forced_marker;
    int article, form, data;
} Facts;

static int
facts_of(PyObject *info, Facts *f)
{
    if (!PyTuple_CheckExact(info) || PyTuple_GET_SIZE(info) != 6)
        goto bad;
    PyObject *state = PyTuple_GET_ITEM(info, 4);
    PyObject *forced = PyTuple_GET_ITEM(info, 2);
    if (!PyTuple_CheckExact(state) || PyTuple_GET_SIZE(state) < 7
        || !(forced == Py_None || PyUnicode_CheckExact(forced)))
        goto bad;
    f->n = PyLong_AsLong(PyTuple_GET_ITEM(info, 0));
    if (f->n == -1 && PyErr_Occurred())
        return -1;
    f->points = PyLong_AsLong(PyTuple_GET_ITEM(info, 1));
    if (f->points == -1 && PyErr_Occurred())
        return -1;
    f->forced = forced == Py_None ? NULL : forced;
    f->forced_marker = f->forced != NULL && PyUnicode_CompareWithASCIIString(forced, "marker") == 0;
    if ((f->article = PyObject_IsTrue(PyTuple_GET_ITEM(info, 3))) < 0
        || (f->form = PyObject_IsTrue(PyTuple_GET_ITEM(state, 5))) < 0
        || (f->data = PyObject_IsTrue(PyTuple_GET_ITEM(state, 6))) < 0)
        return -1;
    return 0;
bad:
    PyErr_SetString(PyExc_TypeError, "a prefix's info is not the rater's");
    return -1;
}

/* The type names scoring.py gives (its own objects, so a result is what Python returns). */
typedef struct {
    PyObject *generic, *form, *data, *listing, *article, *subsection;
} Kinds;

/* The points of a float priority, as scoring.priority_points counts them (round half to
 * even, as Python's round). */
static long
float_points(double p)
{
    if (isnan(p) || !(p >= 0.0 && p <= 1.0))
        return 0;
    double x = 4.0 * p, r = round(x);
    if (fabs(x - r) == 0.5)
        r = 2.0 * round(x / 2.0);
    return (long)r;
}

static inline int
is_word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '%';
}

static inline int
is_separator(char c)
{
    return c == '-' || c == '_' || c == '.';
}

typedef struct {
    PyObject *steps, *infos, *fallback, *points_of, *busy_set;
    long hit; /* the checklist's points */
    Words tokens, lasts, busy;
    Kinds kinds;
    Steps memo;
    PyObject *owned; /* the last info Rater._prefix gave */
    char *buf; /* the lowered path */
    Py_ssize_t cap;
} Batch;

/* Whether a changefreq is a busy one: 1, 0; 2 when the reference rules should decide (not
 * a str); -1 on error. */
static int
busy_of(Batch *b, PyObject *cf)
{
    if (cf == Py_None)
        return 0;
    if (!PyUnicode_CheckExact(cf))
        return 2;
    if (PyUnicode_IS_ASCII(cf)) {
        char low[16];
        Py_ssize_t n = PyUnicode_GET_LENGTH(cf);
        if (n > (Py_ssize_t)sizeof low)
            return 0; /* longer than any busy word */
        const char *s = (const char *)PyUnicode_1BYTE_DATA(cf);
        for (Py_ssize_t i = 0; i < n; i++)
            low[i] = (s[i] >= 'A' && s[i] <= 'Z') ? s[i] + 32 : s[i];
        return words_has(&b->busy, low, n);
    }
    PyObject *lowered = PyObject_CallMethod(cf, "lower", NULL); /* Unicode lowering */
    if (lowered == NULL)
        return -1;
    int found = PySet_Contains(b->busy_set, lowered);
    Py_DECREF(lowered);
    return found;
}

/* Rate one URL: 1 rated (*total, *kind, *slot: new references), 0 odd, -1 error. */
static int
rate_one(Batch *b, PyObject *url, PyObject *priority, PyObject *changefreq, long *total,
         PyObject **kind, PyObject **slot)
{
    if (!PyUnicode_CheckExact(url) || !PyUnicode_IS_ASCII(url))
        return 0;
    const char *u = (const char *)PyUnicode_1BYTE_DATA(url);
    Py_ssize_t len = PyUnicode_GET_LENGTH(url), start = -1, end = len;
    for (Py_ssize_t i = 8; i < len; i++) {
        if (u[i] == '/') {
            start = i;
            break;
        }
    }
    if (start < 0)
        return 0;
    for (Py_ssize_t i = start; i < len; i++) {
        if (u[i] == '?') {
            end = i;
            break;
        }
    }
    while (start < end && u[start] == '/')
        start++;
    while (end > start && u[end - 1] == '/')
        end--;
    Py_ssize_t n = end - start, cut = -1;
    if (n > b->cap) {
        Py_ssize_t cap = n * 2;
        char *buf = PyMem_Realloc(b->buf, cap);
        if (buf == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        b->buf = buf;
        b->cap = cap;
    }
    char *s = b->buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        char c = u[start + i];
        s[i] = (c >= 'A' && c <= 'Z') ? c + 32 : c;
        if (c == '/') {
            if (i > 0 && s[i - 1] == '/')
                return 0; /* an empty segment */
            cut = i;
        }
    }
    if (cut < 0)
        return 0; /* one segment (or none): the home and pillar rules */
    /* the last segment: words (a letter or "%" first), none special */
    const char *last = s + cut + 1;
    Py_ssize_t last_len = n - cut - 1, separators = 0, token = 0;
    if (last_len == 0 || !((last[0] >= 'a' && last[0] <= 'z') || last[0] == '%'))
        return 0;
    if (last_len >= 2 && last[0] == 'v' && last[1] >= '0' && last[1] <= '9')
        return 0; /* a version */
    for (Py_ssize_t i = 0; i <= last_len; i++) {
        if (i == last_len || is_separator(last[i])) {
            if (i == token || words_has(&b->tokens, last + token, i - token))
                return 0; /* an empty word, or a form, data or utility word */
            if (i < last_len)
                separators++;
            token = i + 1;
        }
        else if (!is_word_char(last[i])) {
            return 0;
        }
    }
    if (words_has(&b->lasts, last, last_len))
        return 0; /* a listing, marker or index-file word */
    PyObject *owned = NULL;
    PyObject *info = info_of(s, cut, &b->memo, b->steps, b->infos, b->fallback, &owned);
    Py_XSETREF(b->owned, owned); /* what the facts borrow from, kept to the next URL */
    Facts f;
    if (info == NULL || facts_of(info, &f) < 0)
        return -1;
    int busy = 0;
    if (f.n == 2 && (busy = busy_of(b, changefreq)) != 0 && busy != 1)
        return busy < 0 ? -1 : 0;
    long points = 0;
    if (priority == Py_None)
        points = 0;
    else if (PyFloat_CheckExact(priority))
        points = float_points(PyFloat_AS_DOUBLE(priority));
    else {
        PyObject *got = PyObject_CallOneArg(b->points_of, priority);
        if (got == NULL)
            return -1;
        points = PyLong_AsLong(got);
        Py_DECREF(got);
        if (points == -1 && PyErr_Occurred())
            return -1;
    }
    /* scoring._bulk_outcome */
    const Kinds *k = &b->kinds;
    PyObject *out;
    if (f.form)
        out = k->form;
    else if (f.data)
        out = k->data;
    else if (f.forced != NULL && !f.forced_marker)
        out = f.forced;
    else if (f.n == 2 && busy)
        out = k->listing;
    else if (f.forced != NULL)
        out = k->generic;
    else if (separators >= 2 || f.article)
        out = k->article;
    else if (f.n == 2)
        out = k->subsection;
    else
        out = k->generic;
    *kind = Py_NewRef(out);
    *slot = Py_NewRef(out == k->generic ? Py_None : out);
    *total = points + f.points + (out == k->generic ? 0 : b->hit);
    return 1;
}

/* rate_bulk(urls, priorities, changefreqs, steps, infos, fallback, points_of, words, kinds)
 * -> (totals, types, slots, odd) or None when the columns are not lists of one length. */
static PyObject *
rate_bulk(PyObject *self, PyObject *args)
{
    PyObject *urls, *priorities, *changefreqs, *words, *kinds;
    Batch b = {0};
    if (!PyArg_ParseTuple(args, "OOOO!O!OOO!O!l:rate_bulk", &urls, &priorities, &changefreqs,
                          &PyDict_Type, &b.steps, &PyList_Type, &b.infos, &b.fallback,
                          &b.points_of, &PyTuple_Type, &words, &PyTuple_Type, &kinds, &b.hit))
        return NULL;
    if (!PyList_CheckExact(urls) || !PyList_CheckExact(priorities)
        || !PyList_CheckExact(changefreqs) || PyList_GET_SIZE(priorities) != PyList_GET_SIZE(urls)
        || PyList_GET_SIZE(changefreqs) != PyList_GET_SIZE(urls))
        Py_RETURN_NONE;
    PyObject *tokens, *lasts;
    if (!PyArg_ParseTuple(words, "OOO:rate_bulk words", &tokens, &lasts, &b.busy_set)
        || !PyArg_ParseTuple(kinds, "UUUUUU:rate_bulk kinds", &b.kinds.generic, &b.kinds.form,
                             &b.kinds.data, &b.kinds.listing, &b.kinds.article,
                             &b.kinds.subsection))
        return NULL;
    PyObject *result = NULL, *totals = NULL, *types = NULL, *slots = NULL, *odd = NULL;
    if (words_build(&b.tokens, tokens) < 0 || words_build(&b.lasts, lasts) < 0
        || words_build(&b.busy, b.busy_set) < 0)
        goto done;
    Py_ssize_t n = PyList_GET_SIZE(urls);
    if ((totals = PyList_New(n)) == NULL || (types = PyList_New(n)) == NULL
        || (slots = PyList_New(n)) == NULL || (odd = PyList_New(0)) == NULL)
        goto done;
    for (Py_ssize_t j = 0; j < n; j++) {
        /* the columns may change under the fallback (Python code): read each item anew */
        if (PyList_GET_SIZE(urls) != n || PyList_GET_SIZE(priorities) != n
            || PyList_GET_SIZE(changefreqs) != n) {
            PyErr_SetString(PyExc_RuntimeError, "a column changed size while rated");
            goto done;
        }
        PyObject *url = Py_NewRef(PyList_GET_ITEM(urls, j));
        PyObject *priority = Py_NewRef(PyList_GET_ITEM(priorities, j));
        PyObject *changefreq = Py_NewRef(PyList_GET_ITEM(changefreqs, j));
        long total = 0;
        PyObject *kind = NULL, *slot = NULL;
        int rated = rate_one(&b, url, priority, changefreq, &total, &kind, &slot);
        Py_DECREF(url);
        Py_DECREF(priority);
        Py_DECREF(changefreq);
        if (rated < 0)
            goto done;
        if (rated == 0) { /* odd: a placeholder, the reference rules fill it */
            PyObject *at = PyLong_FromSsize_t(j);
            if (at == NULL || PyList_Append(odd, at) < 0) {
                Py_XDECREF(at);
                goto done;
            }
            Py_DECREF(at);
            total = 0;
            kind = Py_NewRef(b.kinds.generic);
            slot = Py_NewRef(Py_None);
        }
        PyObject *value = PyLong_FromLong(total);
        if (value == NULL) {
            Py_DECREF(kind);
            Py_DECREF(slot);
            goto done;
        }
        PyList_SET_ITEM(totals, j, value);
        PyList_SET_ITEM(types, j, kind);
        PyList_SET_ITEM(slots, j, slot);
    }
    result = PyTuple_Pack(4, totals, types, slots, odd);
done:
    Py_XDECREF(totals);
    Py_XDECREF(types);
    Py_XDECREF(slots);
    Py_XDECREF(odd);
    steps_free(&b.memo);
    Py_XDECREF(b.owned);
    PyMem_Free(b.tokens.slots);
    PyMem_Free(b.lasts.slots);
    PyMem_Free(b.busy.slots);
    PyMem_Free(b.buf);
    return result;
}

static PyMethodDef methods[] = {
    {"rate_bulk", rate_bulk, METH_VARARGS,
     "rate_bulk(urls, priorities, changefreqs, steps, infos, fallback, points_of, words, kinds, hit) -> (totals, types, slots, odd) | None: "
     "scoring.py's Rater.rate_columns of a batch, the odd URLs left to the reference rules."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_rater",
    "The rater's bulk path (selection/_rater.c).", -1, methods,
};

PyMODINIT_FUNC
PyInit__rater(void)
{
    return PyModule_Create(&module);
}
