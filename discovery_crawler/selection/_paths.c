/* Per-parent loops of selection/tree.py and selection/groups.py, and the per-URL splits of
 * selection/parents.py they start from, compiled.
 *
 * Written in C because on a site with very many distinct parents these run about once per
 * URL, and they were the largest part of the spider's per-URL cost (bench/README.md has the
 * numbers). Each function is the compiled twin of a Python definition that stays, and is
 * used where this module was not built; tests/selection/test_paths_compiled.py checks both
 * agree on hypothesis inputs.
 *
 * Every string operation is the Python one (PyUnicode_FindChar, PyUnicode_Substring, or a
 * scan with PyUnicode_READ): any string, of any width, is handled as the Python code handles
 * it (the path index hashes code points, not bytes, for that reason); anything that is not a
 * str makes the function answer None, and the caller takes the Python path.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* s.find("//", from, n), read in place (no needle string made for each parent) */
static Py_ssize_t
find_dslash(PyObject *s, Py_ssize_t from, Py_ssize_t n)
{
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    if (kind == PyUnicode_1BYTE_KIND) { /* from one "/" to the next: a path has a few */
        const Py_UCS1 *p = data, *end = p + n, *at = p + from;
        while (at + 1 < end && (at = memchr(at, '/', (size_t)(end - 1 - at))) != NULL) {
            if (at[1] == '/')
                return at - p;
            at++;
        }
        return -1;
    }
    for (Py_ssize_t i = from; i + 1 < n; i++) {
        if (PyUnicode_READ(kind, data, i) == '/' && PyUnicode_READ(kind, data, i + 1) == '/')
            return i;
    }
    return -1;
}

/* parent.find("/", parent.find("//") + 2) + 1: where a parent's path starts (0 when the
 * parent has no "/" after its scheme: the whole string is read as its path). */
static Py_ssize_t
path_start(PyObject *parent, Py_ssize_t n)
{
    Py_ssize_t scheme = find_dslash(parent, 0, n);
    Py_ssize_t from = scheme + 2;
    Py_ssize_t slash = from > n ? -1 : PyUnicode_FindChar(parent, '/', from, n, 1);
    if (slash == -2)
        return -2;
    return slash + 1;
}

/* not parent or parent.endswith("//") */
static int
is_origin(PyObject *parent, Py_ssize_t n)
{
    return n == 0
           || (n >= 2 && PyUnicode_READ_CHAR(parent, n - 1) == '/'
               && PyUnicode_READ_CHAR(parent, n - 2) == '/');
}

/* A group name already made in this call, found by its text: a batch's ~1,000 distinct
 * parents fall in a few groups, so each group is made (and hashed) once, not once a
 * parent. */
#define GROUPS_CACHED 32
typedef struct {
    PyObject *name[GROUPS_CACHED]; /* owned */
    int n, next;
} GroupNames;

static PyObject *
group_name(GroupNames *g, PyObject *parent, Py_ssize_t start, Py_ssize_t end)
{
    Py_ssize_t len = end - start;
    if (PyUnicode_KIND(parent) == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *text = PyUnicode_1BYTE_DATA(parent) + start;
        for (int i = 0; i < g->n; i++) {
            PyObject *name = g->name[i];
            if (PyUnicode_KIND(name) == PyUnicode_1BYTE_KIND && PyUnicode_GET_LENGTH(name) == len
                && memcmp(PyUnicode_1BYTE_DATA(name), text, len) == 0)
                return Py_NewRef(name);
        }
    }
    PyObject *name = PyUnicode_Substring(parent, start, end);
    if (name == NULL || PyUnicode_KIND(name) != PyUnicode_1BYTE_KIND)
        return name;
    int at;
    if (g->n < GROUPS_CACHED) {
        at = g->n++;
    }
    else {
        at = g->next;
        g->next = (g->next + 1) % GROUPS_CACHED;
        Py_DECREF(g->name[at]);
    }
    g->name[at] = Py_NewRef(name);
    return name;
}

/* groups.py Groups._groups_of: {parent: HOME if is_origin(parent) else (rest[:rest.find("/")]
 * if rest else None)} for the keys of a dict, rest being the parent's path; given `counts`
 * (a dict), each parent's value (its URLs) also added to its group's there, groups in the
 * order their first parent comes. */
static PyObject *
top_groups(PyObject *self, PyObject *args)
{
    PyObject *parents, *home, *counts = NULL;
    if (!PyArg_ParseTuple(args, "O!O|O!:top_groups", &PyDict_Type, &parents, &home,
                          &PyDict_Type, &counts))
        return NULL;
    PyObject *out = PyDict_New();
    if (out == NULL)
        return NULL;
    GroupNames names = {.n = 0, .next = 0};
    Py_ssize_t pos = 0;
    PyObject *parent, *value;
    while (PyDict_Next(parents, &pos, &parent, &value)) {
        if (!PyUnicode_CheckExact(parent) || (counts != NULL && !PyLong_CheckExact(value))) {
            Py_CLEAR(out);
            goto done;
        }
        Py_ssize_t n = PyUnicode_GET_LENGTH(parent);
        PyObject *group;
        if (is_origin(parent, n)) {
            group = Py_NewRef(home);
        }
        else {
            Py_ssize_t start = path_start(parent, n);
            if (start == -2)
                goto error;
            if (start >= n) {
                group = Py_NewRef(Py_None);
            }
            else {
                Py_ssize_t slash = PyUnicode_FindChar(parent, '/', start, n, 1);
                if (slash == -2)
                    goto error;
                /* rest[:rest.find("/")]: -1 (no slash) cuts the last character */
                Py_ssize_t end = slash >= 0 ? slash : n - 1;
                group = group_name(&names, parent, start, end);
                if (group == NULL)
                    goto error;
            }
        }
        int rc = PyDict_SetItem(out, parent, group);
        if (rc == 0 && counts != NULL) {
            PyObject *had = PyDict_GetItemWithError(counts, group);
            PyObject *sum = had != NULL ? PyNumber_Add(had, value)
                            : PyErr_Occurred() ? NULL : Py_NewRef(value);
            rc = sum != NULL ? PyDict_SetItem(counts, group, sum) : -1;
            Py_XDECREF(sum);
        }
        Py_DECREF(group);
        if (rc < 0)
            goto error;
    }
    goto done;
error:
    Py_CLEAR(out);
done:
    for (int i = 0; i < names.n; i++)
        Py_DECREF(names.name[i]);
    if (out == NULL && !PyErr_Occurred())
        Py_RETURN_NONE;
    return out;
}

/* origin_urls(per_parent: dict) -> int | None: the sum of the values of the keys that
 * are origins (groups.py's is_origin: empty or ending in "//"), the batch's root URLs;
 * None when a key is not a str or a value not an int (Python counts then). */
static PyObject *
origin_urls(PyObject *self, PyObject *args)
{
    PyObject *parents;
    if (!PyArg_ParseTuple(args, "O!:origin_urls", &PyDict_Type, &parents))
        return NULL;
    Py_ssize_t pos = 0, total = 0;
    PyObject *parent, *value;
    while (PyDict_Next(parents, &pos, &parent, &value)) {
        if (!PyUnicode_CheckExact(parent) || !PyLong_CheckExact(value))
            Py_RETURN_NONE;
        if (is_origin(parent, PyUnicode_GET_LENGTH(parent))) {
            Py_ssize_t count = PyLong_AsSsize_t(value);
            if (count == -1 && PyErr_Occurred()) {
                PyErr_Clear();
                Py_RETURN_NONE;
            }
            total += count;
        }
    }
    return PyLong_FromSsize_t(total);
}

/* An index of a full tree's paths (the keys of tree.py's ``_at``) for full_places: each
 * path is found by a hash of its code points, computed along a parent once, so walking up
 * a parent's ancestors makes and hashes no substring. A full tree makes no node, so its
 * ``_at`` no longer changes; the caller builds a new index when its size did. */
typedef struct {
    Py_ssize_t mask;
    Py_ssize_t *slots; /* entry + 1; 0 = empty */
    uint64_t *hashes;
    PyObject **keys;
    PyObject **nodes;
    Py_ssize_t n;
} PathIndex;

#define INDEX_NAME "discovery_crawler.selection._paths.PathIndex"
#define FNV_BASIS 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL
#define INDEX_MAX_CUTS 64 /* a parent with more "/" in its path walks by substrings */

/* one code point into a path's hash (FNV-1a over code points, so any width hashes alike) */
static inline uint64_t
fnv_step(uint64_t h, Py_UCS4 c)
{
    return (h ^ c) * FNV_PRIME;
}

static void
index_free(PyObject *capsule)
{
    PathIndex *ix = PyCapsule_GetPointer(capsule, INDEX_NAME);
    if (ix == NULL)
        return;
    for (Py_ssize_t e = 0; e < ix->n; e++) {
        Py_XDECREF(ix->keys[e]);
        Py_XDECREF(ix->nodes[e]);
    }
    PyMem_Free(ix->slots);
    PyMem_Free(ix->hashes);
    PyMem_Free(ix->keys);
    PyMem_Free(ix->nodes);
    PyMem_Free(ix);
}

/* the code points of s[start:start + len] and of key are the same */
static int
same_chars(PyObject *key, int kind, const void *data, Py_ssize_t start, Py_ssize_t len)
{
    if (PyUnicode_GET_LENGTH(key) != len)
        return 0;
    int key_kind = PyUnicode_KIND(key);
    const void *key_data = PyUnicode_DATA(key);
    if (key_kind == kind)
        return memcmp(key_data, (const char *)data + start * kind, (size_t)(len * kind)) == 0;
    for (Py_ssize_t j = 0; j < len; j++) {
        if (PyUnicode_READ(key_kind, key_data, j) != PyUnicode_READ(kind, data, start + j))
            return 0;
    }
    return 1;
}

static PyObject *
index_find(PathIndex *ix, uint64_t h, int kind, const void *data, Py_ssize_t start,
           Py_ssize_t len)
{
    for (Py_ssize_t i = (Py_ssize_t)(h & (uint64_t)ix->mask); ix->slots[i];
         i = (i + 1) & ix->mask) {
        Py_ssize_t e = ix->slots[i] - 1;
        if (ix->hashes[e] == h && same_chars(ix->keys[e], kind, data, start, len))
            return ix->nodes[e];
    }
    return NULL;
}

/* path_index(at) -> an index of at's paths for full_places, or None (a key is not a str) */
static PyObject *
path_index(PyObject *self, PyObject *args)
{
    PyObject *at;
    if (!PyArg_ParseTuple(args, "O!:path_index", &PyDict_Type, &at))
        return NULL;
    Py_ssize_t n = PyDict_GET_SIZE(at), size = 8;
    while (size < 2 * n)
        size *= 2;
    PathIndex *ix = PyMem_Calloc(1, sizeof(PathIndex));
    if (ix == NULL)
        return PyErr_NoMemory();
    PyObject *capsule = PyCapsule_New(ix, INDEX_NAME, index_free);
    if (capsule == NULL) {
        PyMem_Free(ix);
        return NULL;
    }
    /* from here the capsule owns the index: releasing it frees what was made so far */
    ix->mask = size - 1;
    ix->slots = PyMem_Calloc(size, sizeof(Py_ssize_t));
    ix->hashes = PyMem_Calloc(n ? n : 1, sizeof(uint64_t));
    ix->keys = PyMem_Calloc(n ? n : 1, sizeof(PyObject *));
    ix->nodes = PyMem_Calloc(n ? n : 1, sizeof(PyObject *));
    if (ix->slots == NULL || ix->hashes == NULL || ix->keys == NULL || ix->nodes == NULL) {
        Py_DECREF(capsule);
        return PyErr_NoMemory();
    }
    Py_ssize_t pos = 0;
    PyObject *key, *node;
    while (PyDict_Next(at, &pos, &key, &node)) {
        if (!PyUnicode_CheckExact(key) || ix->n == n) {
            Py_DECREF(capsule); /* frees what it holds */
            Py_RETURN_NONE;
        }
        int kind = PyUnicode_KIND(key);
        const void *data = PyUnicode_DATA(key);
        uint64_t h = FNV_BASIS;
        for (Py_ssize_t j = 0; j < PyUnicode_GET_LENGTH(key); j++)
            h = fnv_step(h, PyUnicode_READ(kind, data, j));
        Py_ssize_t e = ix->n++;
        ix->hashes[e] = h;
        ix->keys[e] = Py_NewRef(key);
        ix->nodes[e] = Py_NewRef(node);
        Py_ssize_t i = (Py_ssize_t)(h & (uint64_t)ix->mask);
        while (ix->slots[i])
            i = (i + 1) & ix->mask;
        ix->slots[i] = e + 1;
    }
    return capsule;
}

/* full_places' walk up a parent's path with the index: the node of the longest of the
 * path, its prefixes ending in "/" and the empty path that `at` has (``*is_own``: the whole
 * path's); NULL when none has one, or -1 in ``*is_own`` when the path has too many "/". */
static PyObject *
indexed_node(PathIndex *ix, PyObject *parent, Py_ssize_t start, Py_ssize_t len, int *is_own)
{
    int kind = PyUnicode_KIND(parent);
    const void *data = PyUnicode_DATA(parent);
    Py_ssize_t cuts[INDEX_MAX_CUTS];
    uint64_t at_cut[INDEX_MAX_CUTS];
    int m = 0;
    uint64_t h = FNV_BASIS;
    for (Py_ssize_t j = 0; j < len; j++) {
        /* the common width read directly: PyUnicode_READ switches on the kind each time */
        Py_UCS4 c = kind == PyUnicode_1BYTE_KIND ? ((const Py_UCS1 *)data)[start + j]
                                                 : PyUnicode_READ(kind, data, start + j);
        h = fnv_step(h, c);
        if (c == '/' && j < len - 1) { /* a prefix shorter than the whole path */
            if (m == INDEX_MAX_CUTS) {
                *is_own = -1;
                return NULL;
            }
            cuts[m] = j + 1;
            at_cut[m++] = h;
        }
    }
    *is_own = 1;
    PyObject *node = index_find(ix, h, kind, data, start, len);
    if (node != NULL)
        return node;
    *is_own = 0;
    while (m > 0) {
        m--;
        node = index_find(ix, at_cut[m], kind, data, start, cuts[m]);
        if (node != NULL)
            return node;
    }
    return len > 0 ? index_find(ix, FNV_BASIS, kind, data, start, 0) : NULL;
}

/* tree.py PathTree._places_when_full's walk: for each parent of the list, the node of its
 * path in `at` (path -> node), else of its nearest ancestor path with one. The place of a
 * node is memoised by the caller's dicts (`own` for a parent's own node, `up` for an
 * ancestor's: a full tree never changes where a node's URLs go), `place_of(parent, node,
 * is_own)` making it on a miss; node None for a parent the walk does not take (the root's,
 * a path with an empty segment or a leading "/"). Returns {parent: place}, in the order of
 * the list (a parent met twice keeps its first place). */
static PyObject *
full_places(PyObject *self, PyObject *args)
{
    PyObject *at, *parents, *own, *up, *place_of, *index = Py_None;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O|O:full_places", &PyDict_Type, &at, &PyList_Type,
                          &parents, &PyDict_Type, &own, &PyDict_Type, &up, &place_of, &index))
        return NULL;
    PathIndex *ix = NULL;
    if (index != Py_None) {
        ix = PyCapsule_GetPointer(index, INDEX_NAME);
        if (ix == NULL)
            return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(parents); i++) {
        if (!PyUnicode_CheckExact(PyList_GET_ITEM(parents, i)))
            Py_RETURN_NONE;
    }
    PyObject *places = PyDict_New();
    if (places == NULL)
        return NULL;
    /* re-read each step: place_of is Python code and could change the list */
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(parents); i++) {
        PyObject *parent = Py_NewRef(PyList_GET_ITEM(parents, i));
        PyObject *node = NULL; /* borrowed from `at` while no Python code runs */
        int is_own = 0;
        PyObject *place = NULL;
        if (!PyUnicode_CheckExact(parent))
            goto bad_type;
        Py_ssize_t n = PyUnicode_GET_LENGTH(parent);
        if (!is_origin(parent, n)) {
            Py_ssize_t start = path_start(parent, n);
            if (start == -2)
                goto error;
            Py_ssize_t len = n - start;
            Py_ssize_t empty = len >= 2 ? find_dslash(parent, start, n) : -1;
            int special = empty >= 0 || (len > 0 && PyUnicode_READ_CHAR(parent, start) == '/');
            is_own = 1;
            if (ix != NULL && !special) {
                node = indexed_node(ix, parent, start, len, &is_own);
                if (is_own >= 0) {
                    special = node == NULL; /* no root in the index: the walk's not to decide */
                }
                else {
                    is_own = 1; /* too many "/": walked by substrings below */
                }
            }
            while (!special && node == NULL) {
                PyObject *path = PyUnicode_Substring(parent, start, start + len);
                if (path == NULL)
                    goto error;
                node = PyDict_GetItemWithError(at, path);
                Py_DECREF(path);
                if (node != NULL)
                    break;
                if (PyErr_Occurred())
                    goto error;
                if (len == 0) { /* no root in `at`: not the walk's to decide */
                    special = 1;
                    break;
                }
                /* up[: up.rfind("/", 0, -1) + 1] */
                Py_ssize_t cut = PyUnicode_FindChar(parent, '/', start, start + len - 1, -1);
                if (cut == -2)
                    goto error;
                len = cut >= 0 ? cut - start + 1 : 0;
                is_own = 0;
            }
            if (special)
                node = NULL;
        }
        if (node == NULL) {
            place = PyObject_CallFunctionObjArgs(place_of, parent, Py_None, Py_False, NULL);
            if (place == NULL)
                goto error;
        }
        else {
            PyObject *memo = is_own ? own : up;
            Py_INCREF(node);
            place = PyDict_GetItemWithError(memo, node);
            if (place != NULL) {
                Py_INCREF(place);
            }
            else if (!PyErr_Occurred()) {
                place = PyObject_CallFunctionObjArgs(place_of, parent, node,
                                                     is_own ? Py_True : Py_False, NULL);
                if (place != NULL && PyDict_SetItem(memo, node, place) < 0)
                    Py_CLEAR(place);
            }
            Py_DECREF(node);
            if (place == NULL)
                goto error;
        }
        int rc = PyDict_SetDefault(places, parent, place) == NULL ? -1 : 0;
        Py_DECREF(place);
        place = NULL;
        Py_DECREF(parent);
        if (rc < 0)
            goto error_out;
        continue;
    bad_type:
        Py_DECREF(parent);
        Py_DECREF(places);
        Py_RETURN_NONE;
    error:
        Py_XDECREF(place);
        Py_DECREF(parent);
        goto error_out;
    }
    return places;
error_out:
    Py_DECREF(places);
    return NULL;
}

/* tally[key] = tally.get(key, 0) + count, the key's hash known */
static int
add_to(PyObject *tally, PyObject *key, Py_hash_t hash, Py_ssize_t count)
{
    PyObject *old = _PyDict_GetItem_KnownHash(tally, key, hash);
    PyObject *sum;
    if (old != NULL) {
        PyObject *more = PyLong_FromSsize_t(count);
        if (more == NULL)
            return -1;
        Py_INCREF(old);
        sum = PyNumber_Add(old, more);
        Py_DECREF(old);
        Py_DECREF(more);
    }
    else if (!PyErr_Occurred()) {
        sum = PyLong_FromSsize_t(count);
    }
    else {
        sum = NULL;
    }
    int rc = sum != NULL ? _PyDict_SetItem_KnownHash(tally, key, sum, hash) : -1;
    Py_XDECREF(sum);
    return rc;
}

/* query_start of a 1-byte string (nearly every URL): the C library's scans */
static inline Py_ssize_t
ucs1_query_start(const Py_UCS1 *p, Py_ssize_t n)
{
    const Py_UCS1 *q = memchr(p, '?', (size_t)n);
    const Py_UCS1 *f = memchr(p, '#', (size_t)(q != NULL ? q - p : n));
    return f != NULL ? f - p : q != NULL ? q - p : n;
}

/* Where a URL's query or fragment starts: its first "?" or "#" (n when it has neither). */
static inline Py_ssize_t
query_start(PyObject *url, Py_ssize_t n)
{
    int kind = PyUnicode_KIND(url);
    const void *data = PyUnicode_DATA(url);
    if (kind == PyUnicode_1BYTE_KIND)
        return ucs1_query_start(data, n);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c == '?' || c == '#')
            return i;
    }
    return n;
}

/* parents.py split_many: (bare, parents) of a list of str, bare being `urls` itself when no
 * URL has a query or a fragment; None when an item is not a str. */
static PyObject *
split_many(PyObject *self, PyObject *args)
{
    PyObject *urls;
    if (!PyArg_ParseTuple(args, "O!:split_many", &PyList_Type, &urls))
        return NULL;
    Py_ssize_t count = PyList_GET_SIZE(urls);
    int cut = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *url = PyList_GET_ITEM(urls, i);
        if (!PyUnicode_CheckExact(url))
            Py_RETURN_NONE;
        Py_ssize_t n = PyUnicode_GET_LENGTH(url);
        if (!cut && query_start(url, n) < n)
            cut = 1;
    }
    PyObject *bare = NULL, *parents = PyList_New(count);
    if (parents == NULL)
        return NULL;
    if (cut) {
        bare = PyList_New(count);
        if (bare == NULL)
            goto error;
    }
    else {
        bare = Py_NewRef(urls);
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *url = PyList_GET_ITEM(urls, i);
        Py_ssize_t n = PyUnicode_GET_LENGTH(url);
        PyObject *b;
        if (cut) {
            Py_ssize_t end = query_start(url, n);
            b = end < n ? PyUnicode_Substring(url, 0, end) : Py_NewRef(url);
            if (b == NULL)
                goto error;
            PyList_SET_ITEM(bare, i, b);
            n = end;
        }
        else {
            b = url;
        }
        /* b[: b.rfind("/", 0, -1) + 1] */
        Py_ssize_t slash = n > 1 ? PyUnicode_FindChar(b, '/', 0, n - 1, -1) : -1;
        if (slash == -2)
            goto error;
        PyObject *parent = PyUnicode_Substring(b, 0, slash + 1);
        if (parent == NULL)
            goto error;
        PyList_SET_ITEM(parents, i, parent);
    }
    PyObject *out = PyTuple_Pack(2, bare, parents);
    Py_DECREF(bare);
    Py_DECREF(parents);
    return out;
error:
    Py_XDECREF(bare);
    Py_DECREF(parents);
    return NULL;
}

/* The depth of one 1-byte URL, in one pass: the "/" in [8, n - 1), n where its query or
 * fragment starts; -1 when the definition counts it URL by URL (its cut part starts with
 * "/" or does not hold "//" exactly once, non-overlapping). */
static Py_ssize_t
ucs1_depth(const Py_UCS1 *p, Py_ssize_t len)
{
    Py_ssize_t n = ucs1_query_start(p, len);
    if (n > 0 && p[0] == '/')
        return -1;
    Py_ssize_t pairs = 0, slashes = 0;
    const Py_UCS1 *end = p + n, *at = p;
    /* from one "/" to the next (a URL has a few), each pair of adjacent ones counted once */
    while ((at = memchr(at, '/', (size_t)(end - at))) != NULL) {
        if (at + 1 < end && at[1] == '/') {
            if (++pairs > 1)
                return -1;
            slashes += (at - p >= 8) + (at + 1 - p >= 8);
            at += 2;
        }
        else {
            slashes += at - p >= 8;
            at++;
        }
    }
    if (pairs != 1)
        return -1;
    if (n - 1 >= 8 && p[n - 1] == '/')
        slashes--; /* the last character is left out */
    return slashes;
}

/* The same for a URL of any width, read a character at a time. */
static Py_ssize_t
wide_depth(PyObject *url)
{
    Py_ssize_t n = query_start(url, PyUnicode_GET_LENGTH(url));
    int kind = PyUnicode_KIND(url);
    const void *data = PyUnicode_DATA(url);
    if (n > 0 && PyUnicode_READ(kind, data, 0) == '/')
        return -1;
    Py_ssize_t pairs = 0, slashes = 0;
    for (Py_ssize_t j = 0; j + 1 < n && pairs < 2; j++) {
        if (PyUnicode_READ(kind, data, j) == '/' && PyUnicode_READ(kind, data, j + 1) == '/') {
            pairs++;
            j++; /* non-overlapping, as str.count */
        }
    }
    for (Py_ssize_t j = 8; j < n - 1; j++) {
        if (PyUnicode_READ(kind, data, j) == '/')
            slashes++;
    }
    return pairs == 1 ? slashes : -1;
}

/* parents.py count_path_depths' one pass: {depth: URLs} in the order each depth first
 * occurs, the depth of a URL being url.count("/", 8, -1) with its query and fragment cut;
 * None (the caller then counts URL by URL) unless each cut URL holds "//" exactly once and
 * none starts with "/" (so the URLs joined hold it once a URL, as the definition asks).
 * Each URL's depth is read first, then the depths counted in an array (a depth is at most
 * its URL's length) and the dict made once per distinct depth. */
static PyObject *
path_depths(PyObject *self, PyObject *args)
{
    PyObject *urls;
    if (!PyArg_ParseTuple(args, "O!:path_depths", &PyList_Type, &urls))
        return NULL;
    Py_ssize_t count = PyList_GET_SIZE(urls);
    Py_ssize_t *depths = PyMem_Malloc((count ? count : 1) * sizeof(Py_ssize_t));
    Py_ssize_t *counts = NULL, *order = NULL;
    PyObject *out = NULL;
    if (depths == NULL)
        return PyErr_NoMemory();
    Py_ssize_t deepest = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *url = PyList_GET_ITEM(urls, i);
        if (!PyUnicode_CheckExact(url))
            goto none;
        Py_ssize_t depth = PyUnicode_KIND(url) == PyUnicode_1BYTE_KIND
                               ? ucs1_depth(PyUnicode_1BYTE_DATA(url), PyUnicode_GET_LENGTH(url))
                               : wide_depth(url);
        if (depth < 0)
            goto none;
        depths[i] = depth;
        if (depth > deepest)
            deepest = depth;
    }
    counts = PyMem_Calloc(deepest + 1, sizeof(Py_ssize_t));
    order = PyMem_Malloc((deepest + 1) * sizeof(Py_ssize_t));
    if (counts == NULL || order == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t distinct = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        if (counts[depths[i]]++ == 0)
            order[distinct++] = depths[i];
    }
    out = PyDict_New();
    for (Py_ssize_t k = 0; out != NULL && k < distinct; k++) {
        PyObject *depth = PyLong_FromSsize_t(order[k]);
        PyObject *n = depth != NULL ? PyLong_FromSsize_t(counts[order[k]]) : NULL;
        int rc = n != NULL ? PyDict_SetItem(out, depth, n) : -1;
        Py_XDECREF(depth);
        Py_XDECREF(n);
        if (rc < 0)
            Py_CLEAR(out);
    }
    goto done;
none:
    out = Py_NewRef(Py_None);
done:
    PyMem_Free(depths);
    PyMem_Free(counts);
    PyMem_Free(order);
    return out;
}

/* Column `i` of kinds, sources or statuses (None, or a list as long as the parents). */
static PyObject *
column_item(PyObject *column, Py_ssize_t i)
{
    return column == Py_None ? Py_None : PyList_GET_ITEM(column, i);
}

/* tree.py _count: the batch's URLs counted by (place, key), each count added to the own
 * counts of its place's node (its "…" entry when it has one) and the key's first URL
 * there noted in the node's ``seqs`` (`offset` + its index in the batch, the smallest
 * kept); the tallies up the tree are summed when they are read (``_aggregates``).
 * `places` is {parent: (last, alone)}, the columns lists as long as `parents` or None
 * (anything else: None, the caller counts in Python); True once counted. */
static PyObject *
count_tallies(PyObject *self, PyObject *args)
{
    PyObject *places, *parents, *columns[3], *interned = Py_None;
    Py_ssize_t offset;
    if (!PyArg_ParseTuple(args, "O!O!OOOn|O:count_tallies", &PyDict_Type, &places, &PyList_Type,
                          &parents, &columns[0], &columns[1], &columns[2], &offset, &interned))
        return NULL;
    if (interned != Py_None && !PyDict_CheckExact(interned)) {
        PyErr_SetString(PyExc_TypeError, "count_tallies: interned must be a dict or None");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(parents);
    for (int c = 0; c < 3; c++) {
        if (columns[c] != Py_None
            && (!PyList_CheckExact(columns[c]) || PyList_GET_SIZE(columns[c]) != n))
            Py_RETURN_NONE;
    }
    PyObject *own_name = PyUnicode_InternFromString("own");
    PyObject *seqs_name = PyUnicode_InternFromString("seqs");
    PyObject *keys = PyList_New(0), *key_index = PyDict_New();
    PyObject *combo_places = PyList_New(0);
    /* place -> its combo, by the place's identity (places are shared tuples, one a node): an
     * open-addressing table of at least twice the batch's size, so a probe ends */
    Py_ssize_t table_size = 16;
    while (table_size < 2 * n)
        table_size *= 2;
    PyObject **table_places = PyMem_Calloc(table_size, sizeof(PyObject *));
    Py_ssize_t *table_combos = PyMem_Malloc(table_size * sizeof(Py_ssize_t));
    PyObject *url_places = PyList_New(0); /* holds each URL's place while it is counted */
    Py_ssize_t *url_keys = PyMem_Malloc((n ? n : 1) * sizeof(Py_ssize_t));
    Py_ssize_t *counts = NULL, *firsts = NULL;
    Py_hash_t *hashes = NULL;
    PyObject *result = NULL;
    if (table_places == NULL || table_combos == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (own_name == NULL || seqs_name == NULL || keys == NULL || key_index == NULL
        || combo_places == NULL || url_places == NULL || url_keys == NULL)
        goto done;
    /* 1. each URL's key (a new tuple only where the columns change) and place */
    PyObject *last[3] = {NULL, NULL, NULL};
    Py_ssize_t last_key = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item[3];
        for (int c = 0; c < 3; c++)
            item[c] = column_item(columns[c], i);
        if (last_key < 0 || item[0] != last[0] || item[1] != last[1] || item[2] != last[2]) {
            PyObject *key = PyTuple_Pack(3, item[0], item[1], item[2]);
            if (key == NULL)
                goto done;
            if (interned != Py_None) {
                /* the run's one tuple of each key: a node's tallies then find it by identity
                 * rather than by comparing tuples */
                PyObject *one = PyDict_SetDefault(interned, key, key);
                Py_XINCREF(one);
                Py_DECREF(key);
                key = one;
                if (key == NULL)
                    goto done;
            }
            PyObject *at = PyDict_GetItemWithError(key_index, key);
            if (at != NULL) {
                last_key = PyLong_AsSsize_t(at);
            }
            else if (PyErr_Occurred()) {
                Py_DECREF(key);
                goto done;
            }
            else {
                last_key = PyList_GET_SIZE(keys);
                PyObject *index = PyLong_FromSsize_t(last_key);
                int rc = index != NULL ? PyDict_SetItem(key_index, key, index) : -1;
                Py_XDECREF(index);
                if (rc == 0)
                    rc = PyList_Append(keys, key);
                if (rc < 0) {
                    Py_DECREF(key);
                    goto done;
                }
            }
            Py_DECREF(key);
            for (int c = 0; c < 3; c++)
                last[c] = item[c];
        }
        url_keys[i] = last_key;
        PyObject *place = PyDict_GetItemWithError(places, PyList_GET_ITEM(parents, i));
        if (place == NULL) {
            if (!PyErr_Occurred())
                PyErr_SetObject(PyExc_KeyError, PyList_GET_ITEM(parents, i));
            goto done;
        }
        if (!PyTuple_CheckExact(place) || PyTuple_GET_SIZE(place) != 2) {
            PyErr_SetString(PyExc_TypeError, "a place is not (node, alone)");
            goto done;
        }
        if (PyList_Append(url_places, place) < 0)
            goto done;
    }
    Py_ssize_t nkeys = PyList_GET_SIZE(keys);
    hashes = PyMem_Malloc((nkeys ? nkeys : 1) * sizeof(Py_hash_t));
    if (hashes == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < nkeys; k++) {
        hashes[k] = PyObject_Hash(PyList_GET_ITEM(keys, k));
        if (hashes[k] == -1)
            goto done;
    }
    /* 2. the count of each (place, key), and the first URL of each */
    Py_ssize_t capacity = 0; /* places `counts` and `firsts` have room for */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *place = PyList_GET_ITEM(url_places, i);
        size_t h = ((size_t)(uintptr_t)place >> 4) * (size_t)0x9E3779B97F4A7C15ULL;
        Py_ssize_t slot_at = (Py_ssize_t)(h & (size_t)(table_size - 1));
        while (table_places[slot_at] != NULL && table_places[slot_at] != place)
            slot_at = (slot_at + 1) & (table_size - 1);
        Py_ssize_t combo;
        if (table_places[slot_at] == place) {
            combo = table_combos[slot_at];
        }
        else {
            combo = PyList_GET_SIZE(combo_places);
            if (PyList_Append(combo_places, place) < 0) /* holds the place for the table */
                goto done;
            table_places[slot_at] = place;
            table_combos[slot_at] = combo;
            if (combo == capacity) { /* grown by doubling: a batch has hundreds of places */
                capacity = capacity ? 2 * capacity : 64;
                Py_ssize_t size = capacity * nkeys;
                Py_ssize_t *grown = PyMem_Realloc(counts, size * sizeof(Py_ssize_t));
                if (grown == NULL) {
                    PyErr_NoMemory();
                    goto done;
                }
                counts = grown;
                grown = PyMem_Realloc(firsts, size * sizeof(Py_ssize_t));
                if (grown == NULL) {
                    PyErr_NoMemory();
                    goto done;
                }
                firsts = grown;
            }
            for (Py_ssize_t k = 0; k < nkeys; k++)
                counts[combo * nkeys + k] = 0;
        }
        Py_ssize_t slot = combo * nkeys + url_keys[i];
        if (counts[slot]++ == 0)
            firsts[slot] = i;
    }
    /* 3. each count at its place's own node (its "…" entry when it has one), and there the
     * place in the run of the first URL counted with its key (``seqs``, the smallest) */
    Py_ssize_t ncombos = PyList_GET_SIZE(combo_places);
    for (Py_ssize_t combo = 0; combo < ncombos; combo++) {
        PyObject *place = PyList_GET_ITEM(combo_places, combo);
        PyObject *node = PyTuple_GET_ITEM(place, 1);
        if (node == Py_None)
            node = PyTuple_GET_ITEM(place, 0);
        PyObject *own = PyObject_GetAttr(node, own_name);
        PyObject *seqs = own != NULL ? PyObject_GetAttr(node, seqs_name) : NULL;
        if (seqs == NULL || !PyDict_Check(own) || !PyDict_Check(seqs)) {
            if (seqs != NULL)
                PyErr_SetString(PyExc_TypeError, "a node's own counts are not dicts");
            Py_XDECREF(own);
            Py_XDECREF(seqs);
            goto done;
        }
        int rc = 0;
        for (Py_ssize_t k = 0; k < nkeys && rc == 0; k++) {
            Py_ssize_t slot = combo * nkeys + k;
            if (counts[slot] == 0)
                continue;
            PyObject *key = PyList_GET_ITEM(keys, k);
            rc = add_to(own, key, hashes[k], counts[slot]);
            if (rc < 0)
                break;
            Py_ssize_t seq = offset + firsts[slot];
            PyObject *known = _PyDict_GetItem_KnownHash(seqs, key, hashes[k]);
            if (known == NULL && PyErr_Occurred()) {
                rc = -1;
                break;
            }
            if (known == NULL || PyLong_AsSsize_t(known) > seq) {
                PyObject *number = PyLong_FromSsize_t(seq);
                rc = number != NULL ? _PyDict_SetItem_KnownHash(seqs, key, number, hashes[k]) : -1;
                Py_XDECREF(number);
            }
        }
        Py_DECREF(own);
        Py_DECREF(seqs);
        if (rc < 0)
            goto done;
    }
    result = Py_NewRef(Py_True);
done:
    PyMem_Free(url_keys);
    PyMem_Free(counts);
    PyMem_Free(firsts);
    PyMem_Free(hashes);
    Py_XDECREF(own_name);
    Py_XDECREF(seqs_name);
    Py_XDECREF(keys);
    Py_XDECREF(key_index);
    PyMem_Free(table_places);
    PyMem_Free(table_combos);
    Py_XDECREF(combo_places);
    Py_XDECREF(url_places);
    return result;
}

static PyMethodDef methods[] = {
    {"origin_urls", origin_urls, METH_VARARGS,
     "origin_urls(per_parent: dict) -> int | None: URLs under origin parents."},
    {"top_groups", top_groups, METH_VARARGS,
     "top_groups(parents: dict, home[, counts: dict]) -> dict | None: groups.py's _groups_of."},
    {"full_places", full_places, METH_VARARGS,
     "full_places(at, parents, own, up, place_of) -> dict | None: tree.py's full-tree places."},
    {"path_index", path_index, METH_VARARGS,
     "path_index(at: dict) -> an index of its paths for full_places | None."},
    {"count_tallies", count_tallies, METH_VARARGS,
     "count_tallies(places, parents, kinds, sources, statuses, offset[, interned]) -> True | "
     "None: tree.py's _count (keys made once in `interned`, a dict, when given)."},
    {"split_many", split_many, METH_VARARGS,
     "split_many(urls: list) -> (bare, parents) | None: parents.py's split_many."},
    {"path_depths", path_depths, METH_VARARGS,
     "path_depths(urls: list) -> dict | None: parents.py's count_path_depths, counted."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_paths",
    "Per-parent loops of the path tree and the groups (selection/_paths.c).", -1, methods,
};

PyMODINIT_FUNC
PyInit__paths(void)
{
    return PyModule_Create(&module);
}
