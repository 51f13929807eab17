/* The extension children of a plain urlset's blocks (formats/plain_urlset.py's _read_tail), in C:
 * read_one, shared by _tails.c (the rows' tails) and _windows.c (whole windows).
 *
 * Written in C because on sitemaps as real sites write them many of the <url> blocks
 * carry extension children (hreflang alternates, images, news), and reading each block's
 * tail in Python (two or three regexes, then tag by tag) was a sizeable part of the sitemap
 * worker's per-URL cost (bench/README.md has the numbers).
 *
 * Each shape is read as _read_tail reads it, in its order: hreflang alternates only
 * (_ALTERNATES_ONLY), images only (_IMAGES_ONLY), then any tail tag by tag
 * (_read_children). This reader is conservative: whatever it is not sure to read exactly as
 * the Python does — a name with a non-ASCII character, an attribute value with a reference
 * or a character XML normalizes, a tag it cannot parse, an undeclared prefix — it leaves to
 * the Python (which reads it, or declines the document), and it changes nothing before it
 * is sure (the extension counts are added only for a tail it read to its end).
 * tests/sitemaps/test_tails_compiled.py checks both agree on hypothesis tails.
 */
#ifndef DISCOVERY_TAILS_H
#define DISCOVERY_TAILS_H

#include <Python.h>

#define DECLINE 0
#define ERROR -1
#define READ 1

typedef struct {
    int kind;
    const void *data;
    Py_ssize_t n;
} Text;

static inline Py_UCS4
at(const Text *t, Py_ssize_t i)
{
    return PyUnicode_READ(t->kind, t->data, i);
}

static inline int
is_ws(Py_UCS4 c) /* [ \t\r\n] */
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static inline int
is_name_start(Py_UCS4 c) /* [A-Za-z_] */
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static inline int
is_name_char(Py_UCS4 c, int colon) /* [\w.-] (ASCII), with ":" for attribute names */
{
    return is_name_start(c) || (c >= '0' && c <= '9') || c == '.' || c == '-'
           || (colon && c == ':');
}

static Py_ssize_t
skip_ws(const Text *t, Py_ssize_t i)
{
    while (i < t->n && is_ws(at(t, i)))
        i++;
    return i;
}

/* A name from i: its end, -1 when there is none, -2 when a non-ASCII character follows
 * (\w would take it: the Python decides). */
static Py_ssize_t
name_end(const Text *t, Py_ssize_t i, int colon)
{
    if (i >= t->n || !is_name_start(at(t, i)))
        return i < t->n && at(t, i) > 127 ? -2 : -1;
    i++;
    while (i < t->n && is_name_char(at(t, i), colon))
        i++;
    if (i < t->n && at(t, i) > 127)
        return -2;
    return i;
}

static int
equals(const Text *t, Py_ssize_t i, Py_ssize_t j, const char *s)
{
    Py_ssize_t n = (Py_ssize_t)strlen(s);
    if (j - i != n)
        return 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        if (at(t, i + k) != (Py_UCS4)(unsigned char)s[k])
            return 0;
    }
    return 1;
}

static int
literal(const Text *t, Py_ssize_t i, const char *s)
{
    Py_ssize_t n = (Py_ssize_t)strlen(s);
    return i + n <= t->n && equals(t, i, i + n, s);
}

static int
declared(PyObject *tail, Py_ssize_t i, Py_ssize_t j, PyObject *prefixes)
{
    PyObject *prefix = PyUnicode_Substring(tail, i, j);
    if (prefix == NULL)
        return ERROR;
    int found = PySet_Contains(prefixes, prefix);
    Py_DECREF(prefix);
    return found;
}

/* tail.strip(): str.strip's whitespace */
static PyObject *
stripped(PyObject *s, const Text *t, Py_ssize_t i, Py_ssize_t j)
{
    while (i < j && Py_UNICODE_ISSPACE(at(t, i)))
        i++;
    while (j > i && Py_UNICODE_ISSPACE(at(t, j - 1)))
        j--;
    return PyUnicode_Substring(s, i, j);
}

/* _ALTERNATES_ONLY: (ws* <P:link rel="alternate" hreflang="V" href="V" ws* />)+ ws*, V
 * without " < & \t \n \r; read as tuple((hreflang, href.strip()), ...). */
static int
alternates_only(PyObject *tail, const Text *t, PyObject *prefixes, PyObject **out)
{
    PyObject *links = PyList_New(0);
    if (links == NULL)
        return ERROR;
    Py_ssize_t i = 0;
    int rc = DECLINE;
    for (;;) {
        Py_ssize_t start = skip_ws(t, i);
        if (start >= t->n && PyList_GET_SIZE(links) > 0) {
            rc = READ;
            break;
        }
        if (start >= t->n || at(t, start) != '<')
            goto done;
        Py_ssize_t p = start + 1, pe = name_end(t, p, 0);
        if (pe < 0)
            goto done;
        if (!literal(t, pe, ":link rel=\"alternate\" hreflang=\""))
            goto done;
        Py_ssize_t v1 = pe + (Py_ssize_t)strlen(":link rel=\"alternate\" hreflang=\""), e1 = v1;
        while (e1 < t->n) {
            Py_UCS4 c = at(t, e1);
            if (c == '"' || c == '<' || c == '&' || c == '\t' || c == '\n' || c == '\r')
                break;
            e1++;
        }
        if (!literal(t, e1, "\" href=\""))
            goto done;
        Py_ssize_t v2 = e1 + 8, e2 = v2;
        while (e2 < t->n) {
            Py_UCS4 c = at(t, e2);
            if (c == '"' || c == '<' || c == '&' || c == '\t' || c == '\n' || c == '\r')
                break;
            e2++;
        }
        if (!literal(t, e2, "\""))
            goto done;
        Py_ssize_t end = skip_ws(t, e2 + 1);
        if (!literal(t, end, "/>"))
            goto done;
        int ok = declared(tail, p, pe, prefixes);
        if (ok <= 0) { /* undeclared: the Python declines the document */
            rc = ok;
            goto done;
        }
        PyObject *hreflang = PyUnicode_Substring(tail, v1, e1);
        PyObject *href = hreflang != NULL ? stripped(tail, t, v2, e2) : NULL;
        PyObject *pair = href != NULL ? PyTuple_Pack(2, hreflang, href) : NULL;
        Py_XDECREF(hreflang);
        Py_XDECREF(href);
        if (pair == NULL || PyList_Append(links, pair) < 0) {
            Py_XDECREF(pair);
            rc = ERROR;
            goto done;
        }
        Py_DECREF(pair);
        i = end + 2;
    }
    *out = PyList_AsTuple(links);
    if (*out == NULL)
        rc = ERROR;
done:
    Py_DECREF(links);
    return rc;
}

/* _IMAGES_ONLY: (ws* <P:image> ws* <P:loc>T</P:loc> (ws* <P:N>T</P:N>)* ws* </P:image>)+ ws*,
 * T without "<"; *count: the <X:image> open tags (_IMAGE_OPEN.findall). */
static int
images_only(PyObject *tail, const Text *t, PyObject *prefixes, Py_ssize_t *count)
{
    Py_ssize_t i = 0, images = 0;
    for (;;) {
        Py_ssize_t start = skip_ws(t, i);
        if (start >= t->n && images > 0)
            break;
        if (start >= t->n || at(t, start) != '<')
            return DECLINE;
        Py_ssize_t p = start + 1, pe = name_end(t, p, 0);
        if (pe < 0 || !literal(t, pe, ":image>"))
            return DECLINE;
        Py_ssize_t plen = pe - p;
        int ok = declared(tail, p, pe, prefixes);
        if (ok <= 0)
            return ok;
        images++;
        Py_ssize_t j = pe + 7;
        int first = 1;
        for (;;) { /* the loc, then the children, each <P:N>T</P:N> */
            Py_ssize_t k = skip_ws(t, j);
            if (k + 1 + plen + 1 > t->n || at(t, k) != '<')
                return DECLINE;
            if (at(t, k + 1) == '/') { /* </P:image> ends the image (after its loc) */
                if (first || k + 2 + plen + 7 > t->n)
                    return DECLINE;
                for (Py_ssize_t q = 0; q < plen; q++) {
                    if (at(t, k + 2 + q) != at(t, p + q))
                        return DECLINE;
                }
                if (!literal(t, k + 2 + plen, ":image>"))
                    return DECLINE;
                j = k + 2 + plen + 7;
                break;
            }
            for (Py_ssize_t q = 0; q < plen; q++) { /* the image's own prefix */
                if (at(t, k + 1 + q) != at(t, p + q))
                    return DECLINE;
            }
            Py_ssize_t ns = k + 1 + plen;
            if (at(t, ns) != ':')
                return DECLINE;
            Py_ssize_t ne = name_end(t, ns + 1, 0);
            if (ne < 0 || ne >= t->n || at(t, ne) != '>')
                return DECLINE;
            if (first && !equals(t, ns + 1, ne, "loc"))
                return DECLINE;
            if (equals(t, ns + 1, ne, "image"))
                images++; /* a child named image: findall counts its open tag too */
            Py_ssize_t te = ne + 1;
            while (te < t->n && at(t, te) != '<')
                te++;
            /* </P:N> */
            Py_ssize_t nlen = ne - (ns + 1);
            if (te + 2 + plen + 1 + nlen + 1 > t->n || at(t, te + 1) != '/')
                return DECLINE;
            for (Py_ssize_t q = 0; q < plen + 1 + nlen; q++) {
                if (at(t, te + 2 + q) != at(t, k + 1 + q))
                    return DECLINE;
            }
            if (at(t, te + 2 + plen + 1 + nlen) != '>')
                return DECLINE;
            j = te + 2 + plen + 1 + nlen + 1;
            first = 0;
        }
        i = j;
    }
    *count = images;
    return READ;
}

/* A value _attribute returns as it is: no reference, no character XML normalizes. */
static int
plain_value(const Text *t, Py_ssize_t i, Py_ssize_t j)
{
    for (Py_ssize_t k = i; k < j; k++) {
        Py_UCS4 c = at(t, k);
        if (c == '&' || c == '\t' || c == '\n' || c == '\r')
            return 0;
    }
    return 1;
}

#define MAX_DEPTH 64
#define MAX_ATTRS 16

/* _read_children: any tail, tag by tag (each "<" starts a _TAIL_TAG). */
static int
children(PyObject *tail, const Text *t, PyObject *prefixes, PyObject *counts, PyObject **out)
{
    Py_ssize_t open_p[MAX_DEPTH], open_pe[MAX_DEPTH], open_ne[MAX_DEPTH];
    int depth = 0;
    PyObject *alternates = PyList_New(0);
    if (alternates == NULL)
        return ERROR;
    int rc = DECLINE;
    Py_ssize_t i = 0;
    for (;;) {
        while (i < t->n && at(t, i) != '<')
            i++;
        if (i >= t->n)
            break;
        Py_ssize_t j = i + 1;
        int close = 0;
        if (j < t->n && at(t, j) == '/') {
            close = 1;
            j++;
        }
        Py_ssize_t p = j, pe = name_end(t, p, 0);
        if (pe < 0 || pe >= t->n || at(t, pe) != ':')
            goto done;
        Py_ssize_t ns = pe + 1, ne = name_end(t, ns, 0);
        if (ne < 0)
            goto done;
        /* attributes: (ws+ name ws* = ws* "v"|'v')* */
        Py_ssize_t ak[MAX_ATTRS], ake[MAX_ATTRS], av[MAX_ATTRS], ave[MAX_ATTRS];
        int attrs = 0;
        j = ne;
        for (;;) {
            Py_ssize_t k = j;
            if (k >= t->n || !is_ws(at(t, k)))
                break;
            k = skip_ws(t, k);
            Py_ssize_t ke = name_end(t, k, 1);
            if (ke == -2)
                goto done;
            if (ke < 0)
                break;
            Py_ssize_t eq = skip_ws(t, ke);
            if (eq >= t->n || at(t, eq) != '=')
                break;
            Py_ssize_t q = skip_ws(t, eq + 1);
            if (q >= t->n || (at(t, q) != '"' && at(t, q) != '\''))
                break;
            Py_UCS4 quote = at(t, q);
            Py_ssize_t v = q + 1, ve = v;
            while (ve < t->n && at(t, ve) != quote && at(t, ve) != '<')
                ve++;
            if (ve >= t->n || at(t, ve) != quote)
                break;
            if (attrs == MAX_ATTRS)
                goto done;
            ak[attrs] = k;
            ake[attrs] = ke;
            av[attrs] = v;
            ave[attrs] = ve;
            attrs++;
            j = ve + 1;
        }
        j = skip_ws(t, j);
        int empty = 0;
        if (j < t->n && at(t, j) == '/') {
            empty = 1;
            j++;
        }
        if (j >= t->n || at(t, j) != '>')
            goto done;
        int ok = declared(tail, p, pe, prefixes);
        if (ok <= 0) {
            rc = ok;
            goto done;
        }
        if (close) {
            if (attrs || empty || depth == 0)
                goto done;
            depth--;
            Py_ssize_t op = open_p[depth], ope = open_pe[depth], one = open_ne[depth];
            if (ope - op != pe - p || one - ope != ne - pe)
                goto done;
            for (Py_ssize_t q = 0; q < ne - p; q++) {
                if (at(t, op + q) != at(t, p + q))
                    goto done;
            }
            i = j + 1;
            continue;
        }
        Py_ssize_t rel = -1, href = -1, hreflang = -1;
        for (int a = 0; a < attrs; a++) {
            for (int b = 0; b < a; b++) {
                if (ake[a] - ak[a] == ake[b] - ak[b]) {
                    int same = 1;
                    for (Py_ssize_t q = 0; same && q < ake[a] - ak[a]; q++)
                        same = at(t, ak[a] + q) == at(t, ak[b] + q);
                    if (same)
                        goto done; /* given twice */
                }
            }
            if (ake[a] - ak[a] >= 5 && literal(t, ak[a], "xmlns"))
                goto done;
            Py_ssize_t colon = -1;
            for (Py_ssize_t q = ak[a]; q < ake[a]; q++) {
                if (at(t, q) == ':') {
                    colon = q;
                    break;
                }
            }
            if (colon >= 0 && !(ake[a] - ak[a] >= 4 && literal(t, ak[a], "xml:"))) {
                int known = declared(tail, ak[a], colon, prefixes);
                if (known <= 0) {
                    rc = known;
                    goto done;
                }
            }
            if (equals(t, ak[a], ake[a], "rel"))
                rel = a;
            else if (equals(t, ak[a], ake[a], "href"))
                href = a;
            else if (equals(t, ak[a], ake[a], "hreflang"))
                hreflang = a;
        }
        if (depth == 0) { /* a child of <url> */
            if (equals(t, ns, ne, "loc") || equals(t, ns, ne, "lastmod")
                || equals(t, ns, ne, "changefreq") || equals(t, ns, ne, "priority"))
                goto done;
            int alternate = 0;
            if (equals(t, ns, ne, "link") && href >= 0 && ave[href] > av[href] && rel >= 0
                && ave[rel] > av[rel]) {
                if (!plain_value(t, av[rel], ave[rel]) || !plain_value(t, av[href], ave[href])
                    || (hreflang >= 0 && !plain_value(t, av[hreflang], ave[hreflang])))
                    goto done;
                if (equals(t, av[rel], ave[rel], "alternate")) {
                    alternate = 1;
                }
                else { /* "alternate" in rel.lower().split() */
                    PyObject *value = PyUnicode_Substring(tail, av[rel], ave[rel]);
                    PyObject *lower = value != NULL ? PyObject_CallMethod(value, "lower", NULL)
                                                    : NULL;
                    PyObject *words = lower != NULL ? PyObject_CallMethod(lower, "split", NULL)
                                                    : NULL;
                    PyObject *word = words != NULL ? PyUnicode_FromString("alternate") : NULL;
                    alternate = word != NULL ? PySequence_Contains(words, word) : -1;
                    Py_XDECREF(value);
                    Py_XDECREF(lower);
                    Py_XDECREF(words);
                    Py_XDECREF(word);
                    if (alternate < 0) {
                        rc = ERROR;
                        goto done;
                    }
                }
            }
            if (alternate) {
                PyObject *lang = hreflang >= 0
                                     ? PyUnicode_Substring(tail, av[hreflang], ave[hreflang])
                                     : Py_NewRef(Py_None);
                PyObject *url = lang != NULL ? stripped(tail, t, av[href], ave[href]) : NULL;
                PyObject *pair = url != NULL ? PyTuple_Pack(2, lang, url) : NULL;
                Py_XDECREF(lang);
                Py_XDECREF(url);
                if (pair == NULL || PyList_Append(alternates, pair) < 0) {
                    Py_XDECREF(pair);
                    rc = ERROR;
                    goto done;
                }
                Py_DECREF(pair);
            }
            else {
                PyObject *name = PyUnicode_Substring(tail, ns, ne);
                if (name == NULL) {
                    rc = ERROR;
                    goto done;
                }
                PyObject *old = PyDict_GetItemWithError(counts, name);
                long was = old != NULL ? PyLong_AsLong(old) : 0;
                PyObject *now = (was == -1 && PyErr_Occurred()) ? NULL : PyLong_FromLong(was + 1);
                int set = now != NULL && !PyErr_Occurred() ? PyDict_SetItem(counts, name, now) : -1;
                Py_DECREF(name);
                Py_XDECREF(now);
                if (set < 0) {
                    rc = ERROR;
                    goto done;
                }
            }
        }
        if (!empty) {
            if (depth == MAX_DEPTH)
                goto done;
            open_p[depth] = p;
            open_pe[depth] = pe;
            open_ne[depth] = ne;
            depth++;
        }
        i = j + 1;
    }
    if (depth != 0)
        goto done;
    if (PyList_GET_SIZE(alternates) > 0) {
        *out = PyList_AsTuple(alternates);
        rc = *out != NULL ? READ : ERROR;
    }
    else {
        *out = PyUnicode_FromStringAndSize("", 0);
        rc = *out != NULL ? READ : ERROR;
    }
done:
    Py_DECREF(alternates);
    return rc;
}

/* counts into extensions: extensions[name] = extensions.get(name, 0) + n */
static int
merged(PyObject *extensions, PyObject *counts)
{
    Py_ssize_t pos = 0;
    PyObject *name, *n;
    while (PyDict_Next(counts, &pos, &name, &n)) {
        PyObject *old = PyDict_GetItemWithError(extensions, name);
        if (old == NULL && PyErr_Occurred())
            return -1;
        PyObject *sum = old != NULL ? PyNumber_Add(old, n) : Py_NewRef(n);
        if (sum == NULL)
            return -1;
        int rc = PyDict_SetItem(extensions, name, sum);
        Py_DECREF(sum);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* One tail: READ with *out set (and extensions counted), DECLINE, or ERROR. */
static int
read_one(PyObject *tail, PyObject *prefixes, PyObject *extensions, PyObject *image,
         PyObject **out)
{
    Text t = {PyUnicode_KIND(tail), PyUnicode_DATA(tail), PyUnicode_GET_LENGTH(tail)};
    int rc = alternates_only(tail, &t, prefixes, out);
    if (rc != DECLINE)
        return rc;
    Py_ssize_t images = 0;
    rc = images_only(tail, &t, prefixes, &images);
    if (rc == READ) {
        PyObject *counts = Py_BuildValue("{On}", image, images);
        if (counts == NULL)
            return ERROR;
        int bad = merged(extensions, counts);
        Py_DECREF(counts);
        if (bad)
            return ERROR;
        *out = PyUnicode_FromStringAndSize("", 0);
        return *out != NULL ? READ : ERROR;
    }
    if (rc != DECLINE)
        return rc;
    PyObject *counts = PyDict_New();
    if (counts == NULL)
        return ERROR;
    rc = children(tail, &t, prefixes, counts, out);
    if (rc == READ && merged(extensions, counts) < 0) {
        Py_CLEAR(*out);
        rc = ERROR;
    }
    Py_DECREF(counts);
    return rc;
}

#endif
