/* The feed's and state.json's per-URL lines (output/feed_lines.py, output/json_text.py,
 * output/state.py), compiled: the heads the sitemap worker writes, the spider's whole
 * lines, state entries; and the check that a record still holds what the worker's facts
 * were worked out from (sitemaps/facts.py's holding).
 *
 * Written in C because rendering them was the largest per-URL cost left in the spider
 * process after the seen-set (bench/README.md has the numbers). The Python functions stay
 * the definition: record_lines gives a line only for a record of the
 * common shape and None for any other (Python renders those), entry_lines is
 * state.entry_lines, holding is facts._holding; tests check each against the Python on
 * generated input.
 *
 * JSON strings are written as json.encoder.encode_basestring writes them: a string of
 * ASCII characters that need no escape is copied between quotes; any other is handed to
 * encode_basestring itself, so the escaping rules live in one place.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *encode_basestring; /* json.encoder.encode_basestring */
static PyObject *str_null, *str_close;
static PyObject *key_kind, *key_flags, *key_slug, *key_score, *key_change, *key_via;
static PyObject *key_url, *key_source, *key_sitemap, *key_lastmod, *key_priority, *key_changefreq,
    *key_alternates;
static PyObject *lit_kind, *lit_flags, *lit_slug, *lit_score, *lit_change;
static PyObject *lit_url, *lit_priority, *lit_changefreq, *lit_alternates;

/* A piece of a line: `s`, between double quotes when `quote`. */
typedef struct {
    PyObject *s;  /* borrowed, or owned when `owned` */
    int quote;
    int owned;
} Piece;

#define MAX_PIECES 24 /* a rendered head (9) and a tail (10) */
/* url, source, sitemap, lastmod, priority, changefreq, alternates and the facts key */
#define COMMON_KEYS 8

typedef struct {
    Piece p[MAX_PIECES];
    int n;
} Line;

static void
line_clear(Line *line)
{
    for (int i = 0; i < line->n; i++) {
        if (line->p[i].owned)
            Py_DECREF(line->p[i].s);
    }
    line->n = 0;
}

static void
line_raw(Line *line, PyObject *s)
{
    line->p[line->n++] = (Piece){s, 0, 0};
}

/* Whether `s` is ASCII with nothing encode_basestring would escape. */
static int
plain_ascii(PyObject *s)
{
    if (!PyUnicode_IS_ASCII(s))
        return 0;
    const Py_UCS1 *c = PyUnicode_1BYTE_DATA(s);
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    int escaped = 0;  /* no early exit: the compiler makes the loop a vector one */
    for (Py_ssize_t i = 0; i < n; i++)
        escaped |= (c[i] < 0x20) | (c[i] == '"') | (c[i] == '\\');
    return !escaped;
}

/* Append `s` as a JSON string. */
static int
line_json(Line *line, PyObject *s)
{
    if (plain_ascii(s)) {
        line->p[line->n++] = (Piece){s, 1, 0};
        return 0;
    }
    PyObject *encoded = PyObject_CallOneArg(encode_basestring, s);
    if (encoded == NULL)
        return -1;
    if (!PyUnicode_Check(encoded)) {
        Py_DECREF(encoded);
        PyErr_SetString(PyExc_TypeError, "encode_basestring gave no str");
        return -1;
    }
    line->p[line->n++] = (Piece){encoded, 0, 1};
    return 0;
}

/* Append `s` as a JSON string, or null for None. */
static int
line_json_or_null(Line *line, PyObject *s)
{
    if (s == Py_None) {
        line_raw(line, str_null);
        return 0;
    }
    return line_json(line, s);
}

static PyObject *
line_join(Line *line)
{
    Py_ssize_t size = 0;
    Py_UCS4 maxchar = 127;
    for (int i = 0; i < line->n; i++) {
        Piece *p = &line->p[i];
        size += PyUnicode_GET_LENGTH(p->s) + 2 * p->quote;
        Py_UCS4 m = PyUnicode_MAX_CHAR_VALUE(p->s);
        if (m > maxchar)
            maxchar = m;
    }
    PyObject *out = PyUnicode_New(size, maxchar);
    if (out == NULL)
        return NULL;
    int kind = PyUnicode_KIND(out);
    void *data = PyUnicode_DATA(out);
    Py_ssize_t at = 0;
    for (int i = 0; i < line->n; i++) {
        Piece *p = &line->p[i];
        Py_ssize_t len = PyUnicode_GET_LENGTH(p->s);
        if (p->quote)
            PyUnicode_WRITE(kind, data, at++, '"');
        if (kind == PyUnicode_1BYTE_KIND && PyUnicode_KIND(p->s) == PyUnicode_1BYTE_KIND) {
            memcpy((Py_UCS1 *)data + at, PyUnicode_1BYTE_DATA(p->s), len);
        }
        else if (len && PyUnicode_CopyCharacters(out, at, p->s, 0, len) < 0) {
            Py_DECREF(out);
            return NULL;
        }
        at += len;
        if (p->quote)
            PyUnicode_WRITE(kind, data, at++, '"');
    }
    return out;
}

/* entry_lines(urls, slugs, first, last, lastmods, status) -> list[str]
 * state.entry_lines: '[url, slug, first, last, lastmod or null, "status"]' for each URL. */
static PyObject *
entry_lines(PyObject *module, PyObject *args)
{
    PyObject *urls, *slugs, *lastmods, *first, *last, *status;
    if (!PyArg_ParseTuple(args, "O!O!OOO!U:entry_lines", &PyList_Type, &urls, &PyList_Type,
                          &slugs, &first, &last, &PyList_Type, &lastmods, &status))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(urls);
    if (PyList_GET_SIZE(slugs) != n || PyList_GET_SIZE(lastmods) != n) {
        PyErr_SetString(PyExc_ValueError, "entry_lines: the columns differ in length");
        return NULL;
    }
    PyObject *runs = PyUnicode_FromFormat(", %S, %S, ", first, last);
    PyObject *end = PyUnicode_FromFormat(", \"%U\"]", status);
    PyObject *open = PyUnicode_FromString("[");
    PyObject *comma = PyUnicode_FromString(", ");
    PyObject *out = PyList_New(n);
    if (runs == NULL || end == NULL || open == NULL || comma == NULL || out == NULL)
        goto error;
    Line line = {.n = 0};
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *url = PyList_GET_ITEM(urls, i);
        PyObject *slug = PyList_GET_ITEM(slugs, i);
        PyObject *lastmod = PyList_GET_ITEM(lastmods, i);
        if (!PyUnicode_Check(url) || !PyUnicode_Check(slug)) {
            PyErr_SetString(PyExc_TypeError, "entry_lines: a URL or slug is not a str");
            goto error;
        }
        line_raw(&line, open);
        if (line_json(&line, url) < 0)
            goto error_line;
        line_raw(&line, comma);
        if (line_json(&line, slug) < 0)
            goto error_line;
        line_raw(&line, runs);
        if (PyUnicode_CheckExact(lastmod)) {
            if (line_json(&line, lastmod) < 0)
                goto error_line;
        }
        else {
            line_raw(&line, str_null); /* the Python form: a non-str lastmod is null */
        }
        line_raw(&line, end);
        PyObject *text = line_join(&line);
        line_clear(&line);
        if (text == NULL)
            goto error;
        PyList_SET_ITEM(out, i, text);
    }
    Py_DECREF(runs);
    Py_DECREF(end);
    Py_DECREF(open);
    Py_DECREF(comma);
    return out;
error_line:
    line_clear(&line);
error:
    Py_XDECREF(runs);
    Py_XDECREF(end);
    Py_XDECREF(open);
    Py_XDECREF(comma);
    Py_XDECREF(out);
    return NULL;
}

/* The tail of a record of the common shape: kind, slug and change each a str or None,
 * flags None, score an int or None, no field but those and its `listing` keys (the
 * listing's seven, and the facts key where it has one); 0 when it is not of that shape
 * (-1 on an error). */
static int
common_tail(Line *line, PyObject *rec, Py_ssize_t listing)
{
    PyObject *kind = PyDict_GetItemWithError(rec, key_kind);
    PyObject *flags = PyDict_GetItemWithError(rec, key_flags);
    PyObject *slug = PyDict_GetItemWithError(rec, key_slug);
    PyObject *score = PyDict_GetItemWithError(rec, key_score);
    PyObject *change = PyDict_GetItemWithError(rec, key_change);
    if (PyErr_Occurred())
        return -1;
    /* The common record has its listing keys and some of the five stage fields; any other
     * key (an extra field such as robots_rule or aliases) is not its shape. */
    Py_ssize_t known = listing + (kind != NULL) + (flags != NULL) + (slug != NULL)
                       + (score != NULL) + (change != NULL);
    if (PyDict_GET_SIZE(rec) != known)
        return 0;
    kind = kind ? kind : Py_None;
    flags = flags ? flags : Py_None;
    slug = slug ? slug : Py_None;
    score = score ? score : Py_None;
    change = change ? change : Py_None;
    if (flags != Py_None)
        return 0;
    if (kind == Py_None && slug == Py_None && score == Py_None) {
        line_raw(line, str_close); /* the URL stages are off: no tail fields */
        return 1;
    }
    if ((kind != Py_None && !PyUnicode_CheckExact(kind))
        || (slug != Py_None && !PyUnicode_CheckExact(slug))
        || (change != Py_None && !PyUnicode_CheckExact(change))
        || (score != Py_None && !PyLong_CheckExact(score)))
        return 0;
    line_raw(line, lit_kind);
    if (line_json_or_null(line, kind) < 0)
        return -1;
    line_raw(line, lit_flags);
    line_raw(line, lit_slug);
    if (line_json_or_null(line, slug) < 0)
        return -1;
    line_raw(line, lit_score);
    if (score == Py_None) {
        line_raw(line, str_null);
    }
    else {
        PyObject *digits = PyObject_Str(score);
        if (digits == NULL)
            return -1;
        line->p[line->n++] = (Piece){digits, 0, 1};
    }
    line_raw(line, lit_change);
    if (line_json_or_null(line, change) < 0)
        return -1;
    line_raw(line, str_close);
    return 1;
}

/* A parsed `checks` argument: (record key, facts index) pairs (sitemaps/facts.py's FROM_*). */
#define MAX_CHECKS 16
typedef struct {
    PyObject *key[MAX_CHECKS]; /* borrowed from the checks tuple */
    Py_ssize_t index[MAX_CHECKS];
    Py_ssize_t n;
    Py_ssize_t needed; /* facts must have more items than the largest index */
} Checks;

static int
checks_parse(PyObject *checks, Checks *out)
{
    if (!PyTuple_Check(checks) || PyTuple_GET_SIZE(checks) > MAX_CHECKS) {
        PyErr_SetString(PyExc_TypeError, "checks: a tuple of at most 16 (key, index) pairs");
        return -1;
    }
    out->n = PyTuple_GET_SIZE(checks);
    out->needed = 0;
    for (Py_ssize_t i = 0; i < out->n; i++) {
        PyObject *pair = PyTuple_GET_ITEM(checks, i);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2
            || !PyUnicode_Check(PyTuple_GET_ITEM(pair, 0))
            || !PyLong_Check(PyTuple_GET_ITEM(pair, 1))) {
            PyErr_SetString(PyExc_TypeError, "checks: each a (str, int) pair");
            return -1;
        }
        out->key[i] = PyTuple_GET_ITEM(pair, 0);
        out->index[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(pair, 1));
        if (out->index[i] < 0) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "checks: a negative index");
            return -1;
        }
        if (out->index[i] + 1 > out->needed)
            out->needed = out->index[i] + 1;
    }
    return 0;
}

/* The record's facts (borrowed) when each checked record value is the very object at its
 * index in them (a missing key counts as None), else NULL; -1 in *error on an error. */
static PyObject *
facts_holding(PyObject *rec, PyObject *facts_key, const Checks *checks, int *error)
{
    *error = 0;
    if (!PyDict_CheckExact(rec))
        return NULL;
    PyObject *facts = PyDict_GetItemWithError(rec, facts_key);
    if (facts == NULL) {
        if (PyErr_Occurred())
            *error = 1;
        return NULL;
    }
    if (!PyTuple_Check(facts) || PyTuple_GET_SIZE(facts) < checks->needed)
        return NULL;
    for (Py_ssize_t i = 0; i < checks->n; i++) {
        PyObject *v = PyDict_GetItemWithError(rec, checks->key[i]);
        if (v == NULL) {
            if (PyErr_Occurred()) {
                *error = 1;
                return NULL;
            }
            v = Py_None;
        }
        if (v != PyTuple_GET_ITEM(facts, checks->index[i]))
            return NULL;
    }
    return facts;
}

/* holding(records, facts_key, checks) -> list[facts | None]
 * sitemaps/facts.py's _holding: each record's facts while its checked values are the very
 * objects the facts were worked out from. */
static PyObject *
holding(PyObject *module, PyObject *args)
{
    PyObject *records, *facts_key, *checks_arg;
    if (!PyArg_ParseTuple(args, "O!UO:holding", &PyList_Type, &records, &facts_key, &checks_arg))
        return NULL;
    Checks checks;
    if (checks_parse(checks_arg, &checks) < 0)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(records);
    PyObject *out = PyList_New(n);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        int error;
        PyObject *facts = facts_holding(PyList_GET_ITEM(records, i), facts_key, &checks, &error);
        if (error) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, Py_NewRef(facts != NULL ? facts : Py_None));
    }
    return out;
}

/* What record_lines renders a head with, and its identity caches for one call: the
 * records hold every cached object, so a pointer names the same object all along. */
#define NUMBERS_CACHED 32 /* a batch's distinct priorities: 0.0 to 1.0 by tenths is 11 */
typedef struct {
    PyObject *prefix_of, *number;    /* json_text.listing_prefix, json_text.number */
    PyObject *source, *sitemap;      /* borrowed: the last pair's */
    PyObject *rest;                  /* owned: its prefix without the URL's closing quote */
    PyObject *value[NUMBERS_CACHED]; /* borrowed: priorities ... */
    PyObject *text[NUMBERS_CACHED];  /* ... and their text (owned) */
    int numbers, next;
} Rendering;

static void
rendering_clear(Rendering *r)
{
    Py_CLEAR(r->rest);
    for (int i = 0; i < r->numbers; i++)
        Py_CLEAR(r->text[i]);
    r->numbers = 0;
}

/* `priority` as json_text.number writes it (borrowed); NULL on an error. */
static PyObject *
rendered_number(Rendering *r, PyObject *priority)
{
    if (priority == Py_None)
        return str_null;
    for (int i = 0; i < r->numbers; i++)
        if (r->value[i] == priority)
            return r->text[i];
    PyObject *text = PyObject_CallOneArg(r->number, priority);
    if (text == NULL)
        return NULL;
    if (!PyUnicode_CheckExact(text)) {
        Py_DECREF(text);
        PyErr_SetString(PyExc_TypeError, "number gave no str");
        return NULL;
    }
    int at;
    if (r->numbers < NUMBERS_CACHED) {
        at = r->numbers++;
    }
    else { /* full (a batch of many distinct priorities): the oldest makes room */
        at = r->next;
        r->next = (r->next + 1) % NUMBERS_CACHED;
        Py_DECREF(r->text[at]);
    }
    r->value[at] = priority;
    r->text[at] = text;
    return text;
}

/* The head of a record with no head from the worker, rendered from its own values as
 * feed_lines.json_heads writes it: 1 when written, 0 when the record is not of the
 * listing's plain shape (its seven keys, text where text belongs, no alternates), -1 on
 * an error. */
static int
rendered_head(Line *line, PyObject *rec, Rendering *r)
{
    PyObject *v[7];
    PyObject *keys[7] = {key_url, key_source, key_sitemap, key_lastmod,
                         key_priority, key_changefreq, key_alternates};
    for (int i = 0; i < 7; i++) {
        v[i] = PyDict_GetItemWithError(rec, keys[i]);
        if (v[i] == NULL)
            return PyErr_Occurred() ? -1 : 0;
    }
    PyObject *url = v[0], *source = v[1], *sitemap = v[2], *lastmod = v[3];
    PyObject *priority = v[4], *changefreq = v[5], *alternates = v[6];
    if (alternates != Py_None || !PyUnicode_CheckExact(url) || !PyUnicode_CheckExact(source)
        || (sitemap != Py_None && !PyUnicode_CheckExact(sitemap))
        || (lastmod != Py_None && !PyUnicode_CheckExact(lastmod))
        || (changefreq != Py_None && !PyUnicode_CheckExact(changefreq)))
        return 0;
    if (r->rest == NULL || source != r->source || sitemap != r->sitemap) {
        PyObject *prefix = PyObject_CallFunctionObjArgs(r->prefix_of, source, sitemap, NULL);
        if (prefix == NULL)
            return -1;
        if (!PyUnicode_CheckExact(prefix) || PyUnicode_GET_LENGTH(prefix) < 1
            || PyUnicode_READ_CHAR(prefix, 0) != '"') {
            Py_DECREF(prefix);
            PyErr_SetString(PyExc_ValueError, "listing_prefix must give text opening with '\"'");
            return -1;
        }
        Py_XSETREF(r->rest, PyUnicode_Substring(prefix, 1, PyUnicode_GET_LENGTH(prefix)));
        Py_DECREF(prefix);
        if (r->rest == NULL)
            return -1;
        r->source = source;
        r->sitemap = sitemap;
    }
    PyObject *number = rendered_number(r, priority);
    if (number == NULL)
        return -1;
    line_raw(line, lit_url);
    if (line_json(line, url) < 0)
        return -1;
    line_raw(line, r->rest);
    if (line_json_or_null(line, lastmod) < 0)
        return -1;
    line_raw(line, lit_priority);
    line_raw(line, number);
    line_raw(line, lit_changefreq);
    if (line_json_or_null(line, changefreq) < 0)
        return -1;
    line_raw(line, lit_alternates);
    return 1;
}

/* A record_lines call's arguments, parsed. */
typedef struct {
    PyObject *records, *facts_key;
    Py_ssize_t head_index;
    Checks checks;
    Rendering rendering;
} LineArgs;

static int
line_args(PyObject *args, const char *format, LineArgs *a)
{
    PyObject *checks_arg;
    a->rendering = (Rendering){.prefix_of = NULL, .number = NULL, .rest = NULL};
    if (!PyArg_ParseTuple(args, format, &PyList_Type, &a->records, &a->facts_key,
                          &a->head_index, &checks_arg, &a->rendering.prefix_of,
                          &a->rendering.number))
        return -1;
    if ((a->rendering.prefix_of == NULL) != (a->rendering.number == NULL)) {
        PyErr_SetString(PyExc_TypeError, "record_lines: prefix_of and number go together");
        return -1;
    }
    if (checks_parse(checks_arg, &a->checks) < 0)
        return -1;
    if (a->head_index < 0) {
        PyErr_SetString(PyExc_ValueError, "record_lines: a negative head index");
        return -1;
    }
    return 0;
}

/* One record's line as pieces in `line`: 1 when it is of the common shape (a head its
 * facts hold, or one rendered from its values; a plain tail), 0 when not (`line` left
 * empty), -1 on an error. */
static int
record_line(Line *line, PyObject *rec, LineArgs *a)
{
    if (!PyDict_CheckExact(rec))
        return 0;
    /* A head only where the facts have one (the worker's lines with alternates): then
     * whether they hold; the others' heads are rendered, which needs no check. */
    PyObject *facts = PyDict_GetItemWithError(rec, a->facts_key);
    if (facts == NULL && PyErr_Occurred())
        return -1;
    PyObject *head = NULL;
    if (facts != NULL && PyTuple_Check(facts) && PyTuple_GET_SIZE(facts) > a->head_index)
        head = PyTuple_GET_ITEM(facts, a->head_index);
    int worked = head != NULL && PyUnicode_CheckExact(head) && PyUnicode_GET_LENGTH(head);
    if (worked) {
        int error = 0;
        worked = facts_holding(rec, a->facts_key, &a->checks, &error) != NULL;
        if (error)
            return -1;
    }
    if (!worked && a->rendering.prefix_of == NULL)
        return 0;
    int has_via = PyDict_Contains(rec, key_via);
    if (has_via != 0)
        return has_via < 0 ? -1 : 0; /* a link-crawl record: Python writes it */
    int shape;
    Py_ssize_t listing = COMMON_KEYS;
    if (worked) {
        line_raw(line, head);
        shape = 1;
    }
    else {
        listing = COMMON_KEYS - 1 + (facts != NULL);
        shape = rendered_head(line, rec, &a->rendering);
    }
    if (shape > 0)
        shape = common_tail(line, rec, listing);
    if (shape <= 0)
        line_clear(line);
    return shape;
}

/* record_lines(records, facts_key, head_index, checks[, prefix_of, number])
 *     -> list[str | None]
 * feed_lines.json_lines' line of each record whose tail is of the common shape, with the
 * head its facts hold (`checks`: the values the head was written from; at `head_index`)
 * or, given `prefix_of` and `number` (json_text.listing_prefix and number), one rendered
 * from its own values when it has no alternates; None for each other record. */
static PyObject *
record_lines(PyObject *module, PyObject *args)
{
    LineArgs a;
    if (line_args(args, "O!UnO|OO:record_lines", &a) < 0)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(a.records);
    PyObject *out = PyList_New(n);
    if (out == NULL)
        return NULL;
    Line line = {.n = 0};
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *text = NULL;
        int shape = record_line(&line, PyList_GET_ITEM(a.records, i), &a);
        if (shape < 0)
            goto error;
        if (shape) {
            text = line_join(&line);
            line_clear(&line);
            if (text == NULL)
                goto error;
        }
        PyList_SET_ITEM(out, i, text != NULL ? text : Py_NewRef(Py_None));
    }
    rendering_clear(&a.rendering);
    return out;
error:
    rendering_clear(&a.rendering);
    Py_DECREF(out);
    return NULL;
}

/* Bytes written into one growing bytes object. */
typedef struct {
    PyObject *bytes;
    Py_ssize_t size;
} Bytes;

static int
bytes_put(Bytes *b, const char *data, Py_ssize_t len)
{
    Py_ssize_t room = PyBytes_GET_SIZE(b->bytes);
    if (b->size + len > room) {
        Py_ssize_t want = room * 2 > b->size + len ? room * 2 : b->size + len + 4096;
        if (_PyBytes_Resize(&b->bytes, want) < 0)
            return -1;
    }
    memcpy(PyBytes_AS_STRING(b->bytes) + b->size, data, len);
    b->size += len;
    return 0;
}

/* The line's pieces as UTF-8, then a newline. */
static int
line_put(Line *line, Bytes *b)
{
    for (int i = 0; i < line->n; i++) {
        Piece *p = &line->p[i];
        if (p->quote && bytes_put(b, "\"", 1) < 0)
            return -1;
        if (PyUnicode_IS_ASCII(p->s)) {
            if (bytes_put(b, (const char *)PyUnicode_1BYTE_DATA(p->s),
                          PyUnicode_GET_LENGTH(p->s)) < 0)
                return -1;
        }
        else {
            /* strict, as str.encode("utf-8") is: a lone surrogate raises, and the caller
             * renders the batch by the general path, which raises the same */
            PyObject *utf8 = PyUnicode_AsUTF8String(p->s);
            if (utf8 == NULL)
                return -1;
            int rc = bytes_put(b, PyBytes_AS_STRING(utf8), PyBytes_GET_SIZE(utf8));
            Py_DECREF(utf8);
            if (rc < 0)
                return -1;
        }
        if (p->quote && bytes_put(b, "\"", 1) < 0)
            return -1;
    }
    return bytes_put(b, "\n", 1);
}

/* record_text(records, facts_key, head_index, checks, prefix_of, number) -> bytes | None
 * record_lines' lines, each ended by a newline, as UTF-8 in one bytes object (no string
 * a line, no join, no encode); None as soon as a record is not of the common shape, or a
 * piece cannot be encoded: the caller writes that batch by the general path. */
static PyObject *
record_text(PyObject *module, PyObject *args)
{
    LineArgs a;
    if (line_args(args, "O!UnOOO:record_text", &a) < 0)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(a.records);
    Bytes b = {.bytes = PyBytes_FromStringAndSize(NULL, 640 * (n ? n : 1)), .size = 0};
    if (b.bytes == NULL)
        return NULL;
    Line line = {.n = 0};
    for (Py_ssize_t i = 0; i < n; i++) {
        int shape = record_line(&line, PyList_GET_ITEM(a.records, i), &a);
        if (shape <= 0)
            goto stop;
        int rc = line_put(&line, &b);
        line_clear(&line);
        if (rc < 0)
            goto stop;
    }
    rendering_clear(&a.rendering);
    if (_PyBytes_Resize(&b.bytes, b.size) < 0)
        return NULL;
    return b.bytes;
stop:
    rendering_clear(&a.rendering);
    Py_XDECREF(b.bytes);
    if (!PyErr_Occurred())
        Py_RETURN_NONE;
    if (PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return NULL;
}

static void
put(Py_UCS1 **at, PyObject *s)
{
    memcpy(*at, PyUnicode_1BYTE_DATA(s), PyUnicode_GET_LENGTH(s));
    *at += PyUnicode_GET_LENGTH(s);
}

/* listed_heads' usual line, written straight into its string (*text; NULL when out of
 * memory): every piece ASCII, the URL and the lastmod (a str, maybe empty) needing no
 * escape. 0 for any other line. */
static int
ascii_head(PyObject *url, PyObject *lastmod, PyObject *rest, PyObject *number, PyObject *word,
           PyObject **text)
{
    if (!PyUnicode_Check(url) || !PyUnicode_Check(lastmod) || !PyUnicode_IS_ASCII(rest)
        || !PyUnicode_IS_ASCII(number) || !PyUnicode_IS_ASCII(word) || !plain_ascii(url)
        || !plain_ascii(lastmod))
        return 0;
    Py_ssize_t dated = PyUnicode_GET_LENGTH(lastmod) != 0;
    PyObject *when = dated ? lastmod : str_null;
    Py_ssize_t size = PyUnicode_GET_LENGTH(lit_url) + PyUnicode_GET_LENGTH(url) + 2
                      + PyUnicode_GET_LENGTH(rest) + PyUnicode_GET_LENGTH(when) + 2 * dated
                      + PyUnicode_GET_LENGTH(lit_priority) + PyUnicode_GET_LENGTH(number)
                      + PyUnicode_GET_LENGTH(lit_changefreq) + PyUnicode_GET_LENGTH(word)
                      + PyUnicode_GET_LENGTH(lit_alternates);
    *text = PyUnicode_New(size, 127);
    if (*text == NULL)
        return 1;
    Py_UCS1 *at = PyUnicode_1BYTE_DATA(*text);
    put(&at, lit_url);
    *at++ = '"';
    put(&at, url);
    *at++ = '"';
    put(&at, rest);
    if (dated)
        *at++ = '"';
    put(&at, when);
    if (dated)
        *at++ = '"';
    put(&at, lit_priority);
    put(&at, number);
    put(&at, lit_changefreq);
    put(&at, word);
    put(&at, lit_alternates);
    return 1;
}

/* listed_heads(urls, lastmods, priorities, changefreqs, prefix, numbers, words) -> list[str]
 * feed_lines.listed_heads' comprehension: `prefix` is the batch's shared text (its first
 * character, the URL's closing quote, is written by the URL here), `numbers` and `words`
 * the rendered priority and changefreq of each distinct value. */
static PyObject *
listed_heads(PyObject *module, PyObject *args)
{
    PyObject *urls, *lastmods, *priorities, *changefreqs, *prefix, *numbers, *words;
    if (!PyArg_ParseTuple(args, "O!O!O!O!UO!O!:listed_heads", &PyList_Type, &urls,
                          &PyList_Type, &lastmods, &PyList_Type, &priorities, &PyList_Type,
                          &changefreqs, &prefix, &PyDict_Type, &numbers, &PyDict_Type, &words))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(urls);
    if (PyList_GET_SIZE(lastmods) != n || PyList_GET_SIZE(priorities) != n
        || PyList_GET_SIZE(changefreqs) != n) {
        PyErr_SetString(PyExc_ValueError, "listed_heads: the columns differ in length");
        return NULL;
    }
    if (PyUnicode_GET_LENGTH(prefix) < 1 || PyUnicode_READ_CHAR(prefix, 0) != '"') {
        PyErr_SetString(PyExc_ValueError, "listed_heads: the prefix must open with '\"'");
        return NULL;
    }
    PyObject *rest = PyUnicode_Substring(prefix, 1, PyUnicode_GET_LENGTH(prefix));
    PyObject *out = PyList_New(n);
    if (rest == NULL || out == NULL)
        goto error;
    Line line = {.n = 0};
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *url = PyList_GET_ITEM(urls, i);
        PyObject *lastmod = PyList_GET_ITEM(lastmods, i);
        PyObject *number = PyDict_GetItemWithError(numbers, PyList_GET_ITEM(priorities, i));
        PyObject *word = number ? PyDict_GetItemWithError(words, PyList_GET_ITEM(changefreqs, i))
                                : NULL;
        if (word == NULL) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_KeyError, "listed_heads: a value has no rendering");
            goto error;
        }
        if (!PyUnicode_Check(url) || !PyUnicode_Check(number) || !PyUnicode_Check(word)
            || (lastmod != Py_None && !PyUnicode_Check(lastmod))) {
            PyErr_SetString(PyExc_TypeError, "listed_heads: a value is not a str");
            goto error;
        }
        PyObject *text;
        if (ascii_head(url, lastmod, rest, number, word, &text)) {
            if (text == NULL)
                goto error;
            PyList_SET_ITEM(out, i, text);
            continue;
        }
        line_raw(&line, lit_url);
        if (line_json(&line, url) < 0)
            goto error_line;
        line_raw(&line, rest);
        if (lastmod != Py_None && PyUnicode_GET_LENGTH(lastmod)) {
            if (line_json(&line, lastmod) < 0)
                goto error_line;
        }
        else {
            line_raw(&line, str_null);
        }
        line_raw(&line, lit_priority);
        line_raw(&line, number);
        line_raw(&line, lit_changefreq);
        line_raw(&line, word);
        line_raw(&line, lit_alternates);
        text = line_join(&line);
        line_clear(&line);
        if (text == NULL)
            goto error;
        PyList_SET_ITEM(out, i, text);
    }
    Py_DECREF(rest);
    return out;
error_line:
    line_clear(&line);
error:
    Py_XDECREF(rest);
    Py_XDECREF(out);
    return NULL;
}

static PyMethodDef methods[] = {
    {"entry_lines", entry_lines, METH_VARARGS,
     "entry_lines(urls, slugs, first, last, lastmods, status) -> list[str]"},
    {"listed_heads", listed_heads, METH_VARARGS,
     "listed_heads(urls, lastmods, priorities, changefreqs, prefix, numbers, words) -> list[str]"},
    {"record_lines", record_lines, METH_VARARGS,
     "record_lines(records, facts_key, head_index, checks[, prefix_of, number]) -> list[str | None]"},
    {"record_text", record_text, METH_VARARGS,
     "record_text(records, facts_key, head_index, checks, prefix_of, number) -> bytes | None"},
    {"holding", holding, METH_VARARGS, "holding(records, facts_key, checks) -> list"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_lines", "The feed's and state.json's per-URL lines, compiled.", -1,
    methods,
};

PyMODINIT_FUNC
PyInit__lines(void)
{
    PyObject *json = PyImport_ImportModule("json.encoder");
    if (json == NULL)
        return NULL;
    encode_basestring = PyObject_GetAttrString(json, "encode_basestring");
    Py_DECREF(json);
    if (encode_basestring == NULL)
        return NULL;
    str_null = PyUnicode_InternFromString("null");
    str_close = PyUnicode_InternFromString("}");
    key_kind = PyUnicode_InternFromString("kind");
    key_flags = PyUnicode_InternFromString("flags");
    key_slug = PyUnicode_InternFromString("slug");
    key_score = PyUnicode_InternFromString("score");
    key_change = PyUnicode_InternFromString("change");
    key_via = PyUnicode_InternFromString("via");
    key_url = PyUnicode_InternFromString("url");
    key_source = PyUnicode_InternFromString("source");
    key_sitemap = PyUnicode_InternFromString("sitemap");
    key_lastmod = PyUnicode_InternFromString("lastmod");
    key_priority = PyUnicode_InternFromString("priority");
    key_changefreq = PyUnicode_InternFromString("changefreq");
    key_alternates = PyUnicode_InternFromString("alternates");
    lit_kind = PyUnicode_InternFromString(", \"kind\": ");
    lit_flags = PyUnicode_InternFromString(", \"flags\": null");
    lit_slug = PyUnicode_InternFromString(", \"slug\": ");
    lit_score = PyUnicode_InternFromString(", \"score\": ");
    lit_change = PyUnicode_InternFromString(", \"change\": ");
    lit_url = PyUnicode_InternFromString("{\"url\": ");
    lit_priority = PyUnicode_InternFromString(", \"priority\": ");
    lit_changefreq = PyUnicode_InternFromString(", \"changefreq\": ");
    lit_alternates = PyUnicode_InternFromString(", \"alternates\": null");
    if (!str_null || !str_close || !key_kind || !key_flags || !key_slug
        || !key_score || !key_change || !key_via || !lit_kind || !lit_flags || !lit_slug
        || !lit_score || !lit_change || !lit_url || !lit_priority || !lit_changefreq
        || !lit_alternates || !key_url || !key_source || !key_sitemap || !key_lastmod
        || !key_priority || !key_changefreq || !key_alternates)
        return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL)
        return NULL;
    /* The fields of the lines written here, in the order written (record_fields.py declares
     * the record's; json_text.py uses this module only while they agree, and a test holds
     * them to each other). */
    PyObject *fields = Py_BuildValue(
        "(sssssssssssss)", "url", "source", "sitemap", "sources", "lastmod", "priority",
        "changefreq", "alternates", "kind", "flags", "slug", "score", "change");
    if (fields == NULL || PyModule_AddObject(module, "FIELDS", fields) < 0) {
        Py_XDECREF(fields);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
