/* Per-parent loops of selection/tree.py and selection/groups.py, and the per-URL splits of
 * selection/parents.py they start from, compiled.
 *
 * Written in C because on a site with very many distinct parents (the realistic bench tree:
 * ~770k parents in 1.1M URLs) these run once per URL, and they were the largest part of
 * the spider's per-URL cost: the groups stage was ~40 % of its pipeline time (cProfile of
 * the realistic tree; bench/README.md has the numbers). Each function is the compiled twin
 * of a Python definition that stays, and is used where this module was not built;
 * tests/selection/test_paths_compiled.py checks both agree on hypothesis inputs.
 *
 * Every string operation is the Python one (PyUnicode_Find, PyUnicode_Substring): any
 * string, of any width, is handled as the Python code handles it; anything that is not a
 * str makes the function answer None, and the caller takes the Python path.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* parent.find("/", parent.find("//") + 2) + 1: where a parent's path starts (0 when the
 * parent has no "/" after its scheme: the whole string is read as its path). */
static Py_ssize_t
path_start(PyObject *parent, Py_ssize_t n)
{
    PyObject *sep = PyUnicode_FromStringAndSize("//", 2);
    if (sep == NULL)
        return -2;
    Py_ssize_t scheme = PyUnicode_Find(parent, sep, 0, n, 1);
    Py_DECREF(sep);
    if (scheme == -2)
        return -2;
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

/* groups.py Groups._groups_of: {parent: HOME if is_origin(parent) else (rest[:rest.find("/")]
 * if rest else None)} for the keys of a dict, rest being the parent's path. */
static PyObject *
top_groups(PyObject *self, PyObject *args)
{
    PyObject *parents, *home;
    if (!PyArg_ParseTuple(args, "O!O:top_groups", &PyDict_Type, &parents, &home))
        return NULL;
    PyObject *out = PyDict_New();
    if (out == NULL)
        return NULL;
    Py_ssize_t pos = 0;
    PyObject *parent, *value;
    while (PyDict_Next(parents, &pos, &parent, &value)) {
        if (!PyUnicode_CheckExact(parent)) {
            Py_DECREF(out);
            Py_RETURN_NONE;
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
                group = PyUnicode_Substring(parent, start, end);
                if (group == NULL)
                    goto error;
            }
        }
        int rc = PyDict_SetItem(out, parent, group);
        Py_DECREF(group);
        if (rc < 0)
            goto error;
    }
    return out;
error:
    Py_DECREF(out);
    return NULL;
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
    PyObject *at, *parents, *own, *up, *place_of;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O:full_places", &PyDict_Type, &at, &PyList_Type,
                          &parents, &PyDict_Type, &own, &PyDict_Type, &up, &place_of))
        return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(parents); i++) {
        if (!PyUnicode_CheckExact(PyList_GET_ITEM(parents, i)))
            Py_RETURN_NONE;
    }
    PyObject *places = PyDict_New();
    if (places == NULL)
        return NULL;
    PyObject *dslash = PyUnicode_FromStringAndSize("//", 2);
    if (dslash == NULL) {
        Py_DECREF(places);
        return NULL;
    }
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
            Py_ssize_t empty = len >= 2 ? PyUnicode_Find(parent, dslash, start, n, 1) : -1;
            if (empty == -2)
                goto error;
            int special = empty >= 0 || (len > 0 && PyUnicode_READ_CHAR(parent, start) == '/');
            is_own = 1;
            while (!special) {
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
        Py_DECREF(dslash);
        Py_DECREF(places);
        Py_RETURN_NONE;
    error:
        Py_XDECREF(place);
        Py_DECREF(parent);
        goto error_out;
    }
    Py_DECREF(dslash);
    return places;
error_out:
    Py_DECREF(dslash);
    Py_DECREF(places);
    return NULL;
}

/* tally[key] = tally.get(key, 0) + count */
static int
add_to(PyObject *node, PyObject *name, PyObject *key, PyObject *count)
{
    PyObject *tally = PyObject_GetAttr(node, name);
    if (tally == NULL)
        return -1;
    if (!PyDict_Check(tally)) {
        PyErr_SetString(PyExc_TypeError, "a node's tally is not a dict");
        Py_DECREF(tally);
        return -1;
    }
    PyObject *old = PyDict_GetItemWithError(tally, key);
    PyObject *sum;
    if (old != NULL) {
        Py_INCREF(old);
        sum = PyNumber_Add(old, count);
        Py_DECREF(old);
    }
    else if (!PyErr_Occurred()) {
        sum = Py_NewRef(count);
    }
    else {
        sum = NULL;
    }
    int rc = sum != NULL ? PyDict_SetItem(tally, key, sum) : -1;
    Py_XDECREF(sum);
    Py_DECREF(tally);
    return rc;
}

/* tree.py PathTree.add_many's counting: for each (place, count) of `counts` in its order
 * (a Counter: place (last, alone) when `key` is given, else ((last, alone), kind, source,
 * status)), the count added under its key to the tally of every node of last.chain, then
 * of `alone` (when not None). */
static PyObject *
add_tallies(PyObject *self, PyObject *args)
{
    PyObject *counts, *key;
    if (!PyArg_ParseTuple(args, "O!O:add_tallies", &PyDict_Type, &counts, &key))
        return NULL;
    PyObject *chain_name = PyUnicode_InternFromString("chain");
    PyObject *tally_name = PyUnicode_InternFromString("tally");
    if (chain_name == NULL || tally_name == NULL)
        goto error;
    /* a copy: the dict is read while Python code (a key's __eq__) may run */
    PyObject *items = PyDict_Items(counts);
    if (items == NULL)
        goto error;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
        PyObject *item = PyList_GET_ITEM(items, i);
        PyObject *k = PyTuple_GET_ITEM(item, 0), *count = PyTuple_GET_ITEM(item, 1);
        PyObject *place, *tkey;
        if (key != Py_None) {
            place = k;
            tkey = Py_NewRef(key);
        }
        else {
            if (!PyTuple_CheckExact(k) || PyTuple_GET_SIZE(k) != 4) {
                PyErr_SetString(PyExc_TypeError, "a count's key is not (place, kind, source, status)");
                goto error_items;
            }
            place = PyTuple_GET_ITEM(k, 0);
            tkey = PyTuple_GetSlice(k, 1, 4);
            if (tkey == NULL)
                goto error_items;
        }
        if (!PyTuple_CheckExact(place) || PyTuple_GET_SIZE(place) != 2) {
            Py_DECREF(tkey);
            PyErr_SetString(PyExc_TypeError, "a place is not (node, alone)");
            goto error_items;
        }
        PyObject *chain = PyObject_GetAttr(PyTuple_GET_ITEM(place, 0), chain_name);
        if (chain == NULL || !PyTuple_CheckExact(chain)) {
            if (chain != NULL)
                PyErr_SetString(PyExc_TypeError, "a node's chain is not a tuple");
            Py_XDECREF(chain);
            Py_DECREF(tkey);
            goto error_items;
        }
        int rc = 0;
        for (Py_ssize_t j = 0; rc == 0 && j < PyTuple_GET_SIZE(chain); j++)
            rc = add_to(PyTuple_GET_ITEM(chain, j), tally_name, tkey, count);
        Py_DECREF(chain);
        PyObject *alone = PyTuple_GET_ITEM(place, 1);
        if (rc == 0 && alone != Py_None)
            rc = add_to(alone, tally_name, tkey, count);
        Py_DECREF(tkey);
        if (rc < 0)
            goto error_items;
    }
    Py_DECREF(items);
    Py_DECREF(chain_name);
    Py_DECREF(tally_name);
    Py_RETURN_NONE;
error_items:
    Py_DECREF(items);
error:
    Py_XDECREF(chain_name);
    Py_XDECREF(tally_name);
    return NULL;
}

/* Where a URL's query or fragment starts: its first "?" or "#" (n when it has neither). */
static Py_ssize_t
query_start(PyObject *url, Py_ssize_t n)
{
    int kind = PyUnicode_KIND(url);
    const void *data = PyUnicode_DATA(url);
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

/* parents.py count_path_depths' one pass: {depth: URLs} in the order each depth first
 * occurs, the depth of a URL being url.count("/", 8, -1) with its query and fragment cut;
 * None (the caller then counts URL by URL) unless each cut URL holds "//" exactly once and
 * none starts with "/" (so the URLs joined hold it once a URL, as the definition asks). */
static PyObject *
path_depths(PyObject *self, PyObject *args)
{
    PyObject *urls;
    if (!PyArg_ParseTuple(args, "O!:path_depths", &PyList_Type, &urls))
        return NULL;
    Py_ssize_t count = PyList_GET_SIZE(urls);
    Py_ssize_t *depths = PyMem_Malloc((count ? count : 1) * sizeof(Py_ssize_t));
    if (depths == NULL)
        return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *url = PyList_GET_ITEM(urls, i);
        if (!PyUnicode_CheckExact(url))
            goto none;
        Py_ssize_t n = query_start(url, PyUnicode_GET_LENGTH(url));
        int kind = PyUnicode_KIND(url);
        const void *data = PyUnicode_DATA(url);
        if (n > 0 && PyUnicode_READ(kind, data, 0) == '/')
            goto none;
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
        if (pairs != 1)
            goto none;
        depths[i] = slashes;
    }
    PyObject *out = PyDict_New();
    if (out == NULL)
        goto error;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *depth = PyLong_FromSsize_t(depths[i]);
        if (depth == NULL) {
            Py_DECREF(out);
            goto error;
        }
        PyObject *had = PyDict_GetItemWithError(out, depth);
        PyObject *sum = had != NULL ? PyLong_FromSsize_t(PyLong_AsSsize_t(had) + 1)
                        : PyErr_Occurred() ? NULL : PyLong_FromLong(1);
        int rc = sum != NULL ? PyDict_SetItem(out, depth, sum) : -1;
        Py_DECREF(depth);
        Py_XDECREF(sum);
        if (rc < 0) {
            Py_DECREF(out);
            goto error;
        }
    }
    PyMem_Free(depths);
    return out;
none:
    PyMem_Free(depths);
    Py_RETURN_NONE;
error:
    PyMem_Free(depths);
    return NULL;
}

static PyMethodDef methods[] = {
    {"top_groups", top_groups, METH_VARARGS,
     "top_groups(parents: dict, home) -> dict | None: groups.py's _groups_of."},
    {"full_places", full_places, METH_VARARGS,
     "full_places(at, parents, own, up, place_of) -> dict | None: tree.py's full-tree places."},
    {"add_tallies", add_tallies, METH_VARARGS,
     "add_tallies(counts: dict, key) -> None: tree.py's counting of a batch's places."},
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
