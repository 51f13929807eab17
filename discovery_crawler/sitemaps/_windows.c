/* A window of a plain urlset read in C (formats/plain_urlset.py's read, a window at a time).
 *
 * Written in C because the Python reads a window with a regex over it, then guards that
 * each search it again (XML's forbidden characters, references, whitespace in values,
 * the counts of tags), and joins, counts and slices of the matches: most of the sitemap
 * worker's parse of the realistic bench tree (bench/README.md). Here one pass checks the
 * window's characters and one reads its blocks.
 *
 * read_window(data, start, end, prefixes, fallback) reads data[:end] (whole <url> blocks;
 * in a document's first window the header, checked by the Python, before start) as
 * _window_text, _window_rows and the functions they call read it, and returns the same
 * (rows, malformed blocks, extension counts); their order is the Python's: the tails of
 * the malformed blocks are read before the others'. Or it returns None, having changed
 * nothing, wherever it is not sure the Python reads the window so — anything but blocks
 * of the protocol's fields in its order then extension children, text without a tag
 * between them, values without whitespace inside; a comment, CDATA, a character or a
 * reference XML refuses — and the Python reads that window (and reads it, or declines the
 * document). A tail _tails.h leaves is read by fallback (_read_tail), whose _NotPlain
 * declines the document as it does in the Python.
 * tests/sitemaps/test_windows_compiled.py checks both agree on hypothesis windows and on
 * every real sitemap.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "_tails.h"

enum { PLAIN, BAD, HIGH, AMP, LT, BRACKET };
static unsigned char CLASS[256]; /* each byte's part in window_checked */
static PyObject *EMPTY;          /* '' */
static PyObject *IMAGE;          /* 'image', for read_one */

static inline int
is_sp(unsigned char c) /* ASCII whitespace \s takes, the window's other ones being refused */
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int
xml_char(unsigned long c) /* _is_xml_char */
{
    return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF)
           || (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
}

static int
hex_value(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The reference at s[i] ('&'), as _ENTITY and _check_entities take it: its end, the
 * character it names in *code; -1 for one they refuse. */
static Py_ssize_t
reference(const unsigned char *s, Py_ssize_t i, Py_ssize_t n, Py_UCS4 *code)
{
    Py_ssize_t k = i + 1;
    if (k < n && s[k] == '#') {
        unsigned long v = 0;
        Py_ssize_t digits;
        k++;
        if (k < n && s[k] == 'x') { /* #x[0-9A-Fa-f]+ (a lowercase x only) */
            digits = ++k;
            for (int d; k < n && (d = hex_value(s[k])) >= 0; k++) {
                v = v * 16 + (unsigned long)d;
                if (v > 0x10FFFF)
                    return -1;
            }
        }
        else { /* #[0-9]+ */
            digits = k;
            for (; k < n && s[k] >= '0' && s[k] <= '9'; k++) {
                v = v * 10 + (unsigned long)(s[k] - '0');
                if (v > 0x10FFFF)
                    return -1;
            }
        }
        if (k == digits || k >= n || s[k] != ';' || !xml_char(v))
            return -1;
        *code = (Py_UCS4)v;
        return k + 1;
    }
    Py_ssize_t name = k;
    while (k < n && ((s[k] >= 'a' && s[k] <= 'z') || (s[k] >= 'A' && s[k] <= 'Z')))
        k++;
    if (k >= n || s[k] != ';')
        return -1;
    Py_ssize_t len = k - name;
    const char *p = (const char *)s + name;
    if (len == 3 && memcmp(p, "amp", 3) == 0)
        *code = '&';
    else if (len == 2 && memcmp(p, "lt", 2) == 0)
        *code = '<';
    else if (len == 2 && memcmp(p, "gt", 2) == 0)
        *code = '>';
    else if (len == 4 && memcmp(p, "quot", 4) == 0)
        *code = '"';
    else if (len == 4 && memcmp(p, "apos", 4) == 0)
        *code = '\'';
    else
        return -1;
    return k + 1;
}

/* The UTF-8 character at s[i] (a byte over 127): its end, its code point in *code; -1
 * where bytes.decode refuses it (the Unicode standard's table 3-7), or it is U+FFFE or
 * U+FFFF (not XML characters). */
static Py_ssize_t
utf8_char(const unsigned char *s, Py_ssize_t i, Py_ssize_t n, Py_UCS4 *code)
{
    unsigned char c = s[i];
    int more;
    unsigned char lo = 0x80, hi = 0xBF;
    Py_UCS4 v;
    if (c >= 0xC2 && c <= 0xDF) {
        more = 1;
        v = c & 0x1F;
    }
    else if (c >= 0xE0 && c <= 0xEF) {
        more = 2;
        v = c & 0x0F;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    }
    else if (c >= 0xF0 && c <= 0xF4) {
        more = 3;
        v = c & 0x07;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    }
    else
        return -1;
    if (i + more >= n)
        return -1;
    for (int k = 1; k <= more; k++) {
        unsigned char b = s[i + k];
        if (b < lo || b > hi)
            return -1;
        lo = 0x80;
        hi = 0xBF;
        v = (v << 6) | (b & 0x3F);
    }
    if (v == 0xFFFE || v == 0xFFFF)
        return -1;
    *code = v;
    return i + more + 1;
}

/* The byte at s[i], not printable ASCII nor tab or line break: a forbidden character,
 * a reference (the index after it) or a non-ASCII character (after it, *high set); -1 for
 * one the Python refuses. */
static Py_ssize_t
checked_byte(const unsigned char *s, Py_ssize_t i, Py_ssize_t n, int *high)
{
    Py_UCS4 code;
    switch (CLASS[s[i]]) {
    case BAD:
        return -1;
    case LT:
        return i + 1 < n && s[i + 1] == '!' ? -1 : i + 1;
    case BRACKET:
        return i + 2 < n && s[i + 1] == ']' && s[i + 2] == '>' ? -1 : i + 1;
    case AMP:
        return reference(s, i, n, &code);
    case HIGH:
        *high = 1;
        return utf8_char(s, i, n, &code);
    default:
        return i + 1;
    }
}

/* _window_text's checks: no character XML forbids, UTF-8, no comment, CDATA or DOCTYPE
 * ("<!": the Python reads a window with one), no "]]>", every "&" a reference
 * _check_entities takes. *ascii: whether every byte is. Sixteen bytes at a time where
 * SSE2 is there: nearly all are printable ASCII. */
static int
window_checked(const unsigned char *s, Py_ssize_t n, int *ascii)
{
    int high = 0;
    Py_ssize_t i = 0;
#if defined(__SSE2__)
    const __m128i space = _mm_set1_epi8(0x20), tab = _mm_set1_epi8('\t'),
                  newline = _mm_set1_epi8('\n'), ret = _mm_set1_epi8('\r'),
                  amp = _mm_set1_epi8('&'), lt = _mm_set1_epi8('<'), bang = _mm_set1_epi8('!'),
                  bracket = _mm_set1_epi8(']'), gt = _mm_set1_epi8('>');
    while (i + 18 <= n) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i v1 = _mm_loadu_si128((const __m128i *)(s + i + 1));
        __m128i v2 = _mm_loadu_si128((const __m128i *)(s + i + 2));
        /* signed: the bytes over 127 are below 0x20 too */
        __m128i low = _mm_cmplt_epi8(v, space);
        __m128i allowed = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, tab),
                                                    _mm_cmpeq_epi8(v, newline)),
                                       _mm_cmpeq_epi8(v, ret));
        __m128i odd = _mm_or_si128(_mm_andnot_si128(allowed, low), _mm_cmpeq_epi8(v, amp));
        odd = _mm_or_si128(odd, _mm_and_si128(_mm_cmpeq_epi8(v, lt), _mm_cmpeq_epi8(v1, bang)));
        odd = _mm_or_si128(odd, _mm_and_si128(_mm_and_si128(_mm_cmpeq_epi8(v, bracket),
                                                            _mm_cmpeq_epi8(v1, bracket)),
                                              _mm_cmpeq_epi8(v2, gt)));
        int mask = _mm_movemask_epi8(odd);
        if (mask == 0) {
            i += 16;
            continue;
        }
        i = checked_byte(s, i + __builtin_ctz((unsigned)mask), n, &high);
        if (i < 0)
            return 0;
    }
#endif
    while (i < n) {
        i = checked_byte(s, i, n, &high);
        if (i < 0)
            return 0;
    }
    *ascii = !high;
    return 1;
}

static PyObject *
ascii_text(const unsigned char *s, Py_ssize_t n)
{
    PyObject *text = PyUnicode_New(n, 127);
    if (text != NULL && n > 0)
        memcpy(PyUnicode_DATA(text), s, (size_t)n);
    return text;
}

static PyObject *
text_of(const unsigned char *s, Py_ssize_t a, Py_ssize_t b, int ascii)
{
    if (ascii)
        return ascii_text(s + a, b - a);
    return PyUnicode_DecodeUTF8((const char *)s + a, b - a, "strict");
}

/* The start of the UTF-8 character that ends at s[b] (exclusive), after a. */
static Py_ssize_t
char_start(const unsigned char *s, Py_ssize_t a, Py_ssize_t b)
{
    do
        b--;
    while (b > a && (s[b] & 0xC0) == 0x80);
    return b;
}

#define VALUE_DEFER 0
#define VALUE_READ 1
#define VALUE_EMPTY 2

/* A field's value s[a:b] (up to the next "<") as the loose regex captures it, stripped of
 * \s, then with _unescape_values' references expanded and stripped again: VALUE_READ with
 * *out set; VALUE_EMPTY, nothing to strip to (a field present but empty); VALUE_DEFER for
 * whitespace inside (the regex does not match the block), or a location that was only
 * references to whitespace; -1 on error. */
static int
field_value(const unsigned char *s, Py_ssize_t a, Py_ssize_t b, int loc, PyObject **out)
{
    while (a < b && is_sp(s[a]))
        a++;
    while (b > a && is_sp(s[b - 1]))
        b--;
    int high = 0, amp = 0, spaced = 0;
    Py_ssize_t k = a;
#if defined(__SSE2__)
    /* mostly nothing but printable ASCII other than "&": below "!" (signed: whitespace, and
     * the bytes over 127), or "&", ends the run */
    const __m128i bang = _mm_set1_epi8('!'), ampersand = _mm_set1_epi8('&');
    for (; k + 16 <= b; k += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + k));
        __m128i odd = _mm_or_si128(_mm_cmplt_epi8(v, bang), _mm_cmpeq_epi8(v, ampersand));
        if (_mm_movemask_epi8(odd) != 0)
            break;
    }
#endif
    for (; k < b; k++) {
        high |= s[k] >= 0x80;
        amp |= s[k] == '&';
        spaced |= is_sp(s[k]);
    }
    if (!high && spaced)
        return VALUE_DEFER; /* whitespace inside: the regex does not match */
    Py_UCS4 code;
    if (high) { /* \s beyond ASCII too: strip it */
        for (Py_ssize_t next; a < b; a = next) {
            next = a + 1;
            if (!is_sp(s[a])
                && (s[a] < 0x80 || (next = utf8_char(s, a, b, &code)) < 0
                    || !Py_UNICODE_ISSPACE(code)))
                break;
        }
        while (b > a) {
            Py_ssize_t c = char_start(s, a, b);
            if (!is_sp(s[c])
                && (s[c] < 0x80 || utf8_char(s, c, b, &code) < 0 || !Py_UNICODE_ISSPACE(code)))
                break;
            b = c;
        }
    }
    if (a == b)
        return VALUE_EMPTY;
    for (k = a; high && k < b;) { /* whitespace inside: the regex does not match */
        if (s[k] < 0x80) {
            if (is_sp(s[k]))
                return VALUE_DEFER;
            k++;
            continue;
        }
        k = utf8_char(s, k, b, &code);
        if (k < 0 || Py_UNICODE_ISSPACE(code))
            return VALUE_DEFER;
    }
    if (!amp) {
        *out = high ? PyUnicode_DecodeUTF8((const char *)s + a, b - a, "strict")
                    : ascii_text(s + a, b - a);
        return *out != NULL ? VALUE_READ : -1;
    }
    /* references: expanded into code points, then .strip() */
    Py_UCS4 *chars = PyMem_Malloc(sizeof(Py_UCS4) * (size_t)(b - a));
    if (chars == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t m = 0;
    for (k = a; k < b;) {
        Py_ssize_t e = k + 1;
        code = s[k];
        if (s[k] == '&')
            e = reference(s, k, b, &code);
        else if (s[k] >= 0x80)
            e = utf8_char(s, k, b, &code);
        if (e < 0) { /* checked already (window_checked): the Python decides */
            PyMem_Free(chars);
            return VALUE_DEFER;
        }
        chars[m++] = code;
        k = e;
    }
    Py_ssize_t i = 0;
    while (i < m && Py_UNICODE_ISSPACE(chars[i]))
        i++;
    while (m > i && Py_UNICODE_ISSPACE(chars[m - 1]))
        m--;
    if (loc && m == i) {
        PyMem_Free(chars);
        return VALUE_DEFER; /* _unescape_values declines it */
    }
    *out = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, chars + i, m - i);
    PyMem_Free(chars);
    return *out != NULL ? VALUE_READ : -1;
}

#define FIELD_ABSENT -1
#define FIELD_DEFER -2

/* <name>value</name> at s[i]: its end, the value's span in *a, *b; FIELD_ABSENT when
 * another tag stands there; FIELD_DEFER when the field's group would not match (a "<"
 * inside, no end tag). */
static Py_ssize_t
field_at(const unsigned char *s, Py_ssize_t i, Py_ssize_t n, const char *name, Py_ssize_t len,
         Py_ssize_t *a, Py_ssize_t *b)
{
    if (i + len + 2 > n || s[i + 1] != (unsigned char)name[0]
        || memcmp(s + i + 1, name, (size_t)len) != 0 || s[i + 1 + len] != '>')
        return FIELD_ABSENT;
    Py_ssize_t v = i + len + 2;
    const unsigned char *lt = memchr(s + v, '<', (size_t)(n - v));
    if (lt == NULL)
        return FIELD_DEFER;
    Py_ssize_t e = lt - s;
    if (e + len + 3 > n || s[e + 1] != '/' || memcmp(s + e + 2, name, (size_t)len) != 0
        || s[e + 2 + len] != '>')
        return FIELD_DEFER;
    *a = v;
    *b = e;
    return e + len + 3;
}

/* \s*+ between tags: ASCII whitespace, and beyond ASCII what Py_UNICODE_ISSPACE takes */
static Py_ssize_t
skip_sp(const unsigned char *s, Py_ssize_t i, Py_ssize_t n)
{
    for (;;) {
        while (i < n && is_sp(s[i]))
            i++;
        Py_UCS4 code;
        Py_ssize_t e;
        if (i >= n || s[i] < 0x80 || (e = utf8_char(s, i, n, &code)) < 0
            || !Py_UNICODE_ISSPACE(code))
            return i;
        i = e;
    }
}

/* Whether s[i] starts a prefixed tag, <[A-Za-z_][\w.-]*: (a non-ASCII name: not known). */
static int
prefixed_tag(const unsigned char *s, Py_ssize_t i, Py_ssize_t n)
{
    Py_ssize_t k = i + 1;
    if (k >= n || !((s[k] >= 'A' && s[k] <= 'Z') || (s[k] >= 'a' && s[k] <= 'z') || s[k] == '_'))
        return 0;
    for (k++; k < n; k++) {
        unsigned char c = s[k];
        if (c == ':')
            return 1;
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
              || c == '_' || c == '.' || c == '-'))
            return 0;
    }
    return 0;
}

typedef struct {
    Py_ssize_t row; /* the row of a block kept; -1 for a malformed one */
    Py_ssize_t a, b;
} Tail;

typedef struct {
    Tail *at;
    Py_ssize_t n, room;
} Tails;

static int
tail_added(Tails *tails, Py_ssize_t row, Py_ssize_t a, Py_ssize_t b)
{
    if (tails->n == tails->room) {
        Py_ssize_t room = tails->room ? 2 * tails->room : 256;
        Tail *at = PyMem_Realloc(tails->at, sizeof(Tail) * (size_t)room);
        if (at == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        tails->at = at;
        tails->room = room;
    }
    tails->at[tails->n++] = (Tail){row, a, b};
    return 0;
}

#define FIELDS 4
static const char *const NAMES[FIELDS] = {"loc", "lastmod", "changefreq", "priority"};
static const Py_ssize_t LENGTHS[FIELDS] = {3, 7, 10, 8};

#define BLOCK_DEFER 0
#define BLOCK_KEPT 1
#define BLOCK_MALFORMED 2

/* The <url> block at s[*at]: its four values in values (NULL: absent), its tail's span in
 * *ta, *tb (equal: none), *at moved past it. BLOCK_KEPT, BLOCK_MALFORMED (no usable
 * <loc>: _malformed_window's), BLOCK_DEFER (the Python decides), -1 on error. */
static int
block(const unsigned char *s, Py_ssize_t n, Py_ssize_t *at, PyObject **values, Py_ssize_t *ta,
      Py_ssize_t *tb)
{
    Py_ssize_t p = *at + 5;
    int empty = 0; /* fields present but empty */
    for (int f = 0; f < FIELDS; f++) {
        Py_ssize_t q = skip_sp(s, p, n), a, b;
        if (q >= n || s[q] != '<')
            return BLOCK_DEFER;
        Py_ssize_t end = field_at(s, q, n, NAMES[f], LENGTHS[f], &a, &b);
        if (end == FIELD_ABSENT)
            continue;
        if (end == FIELD_DEFER)
            return BLOCK_DEFER;
        int rc = field_value(s, a, b, f == 0, &values[f]);
        if (rc == VALUE_DEFER || rc < 0)
            return rc;
        if (rc == VALUE_EMPTY)
            empty |= 1 << f;
        p = end;
    }
    Py_ssize_t q = skip_sp(s, p, n);
    *ta = *tb = p;
    if (q + 6 <= n && memcmp(s + q, "</url>", 6) == 0) {
        *at = q + 6;
    }
    else if (q < n && s[q] == '<' && prefixed_tag(s, q, n)) {
        /* the raw children: up to the first </url> (_CHILDREN) */
        for (Py_ssize_t k = q;;) {
            const unsigned char *lt = memchr(s + k, '<', (size_t)(n - k));
            if (lt == NULL)
                return BLOCK_DEFER;
            k = lt - s;
            if (k + 6 <= n && memcmp(s + k, "</url>", 6) == 0) {
                *tb = k;
                *at = k + 6;
                break;
            }
            k++;
        }
    }
    else
        return BLOCK_DEFER;
    if (values[0] == NULL)
        return BLOCK_MALFORMED;
    /* a field present but empty beside a location: _malformed_window declines it */
    return empty ? BLOCK_DEFER : BLOCK_KEPT;
}

/* A tail read as _read_tails reads it: read_one, or fallback(tail, prefixes, extensions)
 * for one it leaves; a new reference, NULL on error (fallback's _NotPlain included). */
static PyObject *
tail_read(const unsigned char *s, const Tail *t, int ascii, PyObject *prefixes,
          PyObject *extensions, PyObject *fallback)
{
    PyObject *tail = text_of(s, t->a, t->b, ascii), *got = NULL;
    if (tail == NULL)
        return NULL;
    int rc = read_one(tail, prefixes, extensions, IMAGE, &got);
    if (rc == DECLINE)
        got = PyObject_CallFunctionObjArgs(fallback, tail, prefixes, extensions, NULL);
    else if (rc == ERROR)
        got = NULL;
    Py_DECREF(tail);
    return got;
}

static PyObject *
read_window(PyObject *self, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t start, end;
    PyObject *prefixes, *fallback;
    if (!PyArg_ParseTuple(args, "y*nnO!O:read_window", &view, &start, &end, &PyFrozenSet_Type,
                          &prefixes, &fallback))
        return NULL;
    const unsigned char *s = view.buf;
    Py_ssize_t n = end;
    PyObject *rows = NULL, *malformed = NULL, *extensions = NULL, *answer = NULL;
    Tails tails = {NULL, 0, 0};
    int ascii;
    if (start < 0 || end > view.len || start > end || !window_checked(s, n, &ascii))
        goto defer;
    rows = PyList_New(0);
    malformed = PyList_New(0);
    extensions = PyDict_New();
    if (rows == NULL || malformed == NULL || extensions == NULL)
        goto done;
    for (Py_ssize_t p = start;;) {
        const unsigned char *lt = memchr(s + p, '<', (size_t)(n - p));
        if (lt == NULL)
            break; /* text between blocks, without a tag */
        p = lt - s;
        if (p + 5 > n || memcmp(s + p, "<url>", 5) != 0)
            goto defer;
        PyObject *values[FIELDS] = {NULL, NULL, NULL, NULL};
        Py_ssize_t from = p, ta, tb;
        int kind = block(s, n, &p, values, &ta, &tb);
        PyObject *row = NULL;
        if (kind == BLOCK_KEPT) {
            row = PyTuple_New(5);
            if (row != NULL) {
                for (int f = 0; f < FIELDS; f++)
                    PyTuple_SET_ITEM(row, f, values[f] != NULL ? values[f] : Py_NewRef(EMPTY));
                PyTuple_SET_ITEM(row, 4, Py_NewRef(EMPTY));
                memset(values, 0, sizeof values);
            }
        }
        for (int f = 0; f < FIELDS; f++)
            Py_XDECREF(values[f]);
        if (kind == BLOCK_KEPT) {
            if (row == NULL || PyList_Append(rows, row) < 0) {
                Py_XDECREF(row);
                goto done;
            }
            Py_DECREF(row);
            if (tb > ta && tail_added(&tails, PyList_GET_SIZE(rows) - 1, ta, tb) < 0)
                goto done;
        }
        else if (kind == BLOCK_MALFORMED) {
            PyObject *raw = text_of(s, from, p, ascii);
            int bad = raw == NULL || PyList_Append(malformed, raw) < 0;
            Py_XDECREF(raw);
            if (bad || (tb > ta && tail_added(&tails, -1, ta, tb) < 0))
                goto done;
        }
        else if (kind == BLOCK_DEFER)
            goto defer;
        else
            goto done;
    }
    /* the tails: the malformed blocks' first (_malformed_window reads them), then the rows' */
    for (int kept = 0; kept < 2; kept++) {
        for (Py_ssize_t i = 0; i < tails.n; i++) {
            const Tail *t = &tails.at[i];
            if ((t->row >= 0) != kept)
                continue;
            PyObject *got = tail_read(s, t, ascii, prefixes, extensions, fallback);
            if (got == NULL)
                goto done;
            if (t->row < 0) {
                Py_DECREF(got);
                continue;
            }
            PyObject *row = PyList_GET_ITEM(rows, t->row); /* ours alone: filled in place */
            PyObject *was = PyTuple_GET_ITEM(row, 4);
            PyTuple_SET_ITEM(row, 4, got);
            Py_DECREF(was);
        }
    }
    answer = PyTuple_Pack(3, rows, malformed, extensions);
    goto done;
defer:
    answer = Py_NewRef(Py_None);
done:
    PyMem_Free(tails.at);
    Py_XDECREF(rows);
    Py_XDECREF(malformed);
    Py_XDECREF(extensions);
    PyBuffer_Release(&view);
    return answer;
}

static PyMethodDef methods[] = {
    {"read_window", read_window, METH_VARARGS,
     "read_window(data, start, end, prefixes, fallback) -> (rows, malformed, extensions) | "
     "None: a plain urlset's window."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_windows", "A window of a plain urlset read in C (_windows.c).", -1,
    methods,
};

PyMODINIT_FUNC
PyInit__windows(void)
{
    for (int c = 0; c < 256; c++) {
        if (c >= 0x80)
            CLASS[c] = HIGH;
        else if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r'))
            CLASS[c] = BAD;
        else
            CLASS[c] = PLAIN;
    }
    CLASS['&'] = AMP;
    CLASS['<'] = LT;
    CLASS[']'] = BRACKET;
    EMPTY = PyUnicode_New(0, 0);
    IMAGE = PyUnicode_InternFromString("image");
    if (EMPTY == NULL || IMAGE == NULL)
        return NULL;
    return PyModule_Create(&module);
}
