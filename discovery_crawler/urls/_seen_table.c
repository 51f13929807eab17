/* The seen-set's two hot loops (urls/seen.py), compiled.
 *
 * Written in C because the Python probe loops (dedup and slug tables) were the largest cost
 * left in the spider process on a large sitemap, and here they cost a small fraction of that
 * (bench/README.md). seen.py keeps the same loops in Python and uses them when this
 * module was not built; tests/urls/test_seen.py checks the two give the same answers.
 *
 * The table is an array('q') of fingerprints, 0 marking an empty slot. A key's
 * fingerprint is hash(key), or 1 when that is 0, exactly as in seen.py, so either
 * implementation can read a table the other wrote. Home slot: fp mod size (non-negative),
 * then linear probing.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

static int
table_buffer(PyObject *obj, Py_buffer *view, Py_ssize_t size)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_WRITABLE | PyBUF_FORMAT) < 0)
        return -1;
    if (view->itemsize != 8 || view->len != size * 8 || size <= 0) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_ValueError, "the table must be an array('q') of `size` slots");
        return -1;
    }
    return 0;
}

static inline Py_ssize_t
home_slot(int64_t fp, Py_ssize_t size)
{
    int64_t i = fp % (int64_t)size;
    return (Py_ssize_t)(i < 0 ? i + size : i);
}

/* add_many(slots, size, limit, count, keys, start, out) -> (count, next)
 *
 * Adds keys[start:] to the table, appending True (new) or False (already there) to
 * `out`. Stops after the add that takes `count` past `limit`, so the caller can grow the
 * table and call again from `next`; `next == len(keys)` when all were added.
 */
static PyObject *
add_many(PyObject *module, PyObject *args)
{
    PyObject *table, *keys, *out;
    Py_ssize_t size, limit, count, start;
    if (!PyArg_ParseTuple(args, "OnnnO!nO!:add_many", &table, &size, &limit, &count,
                          &PyList_Type, &keys, &start, &PyList_Type, &out))
        return NULL;
    Py_buffer view;
    if (table_buffer(table, &view, size) < 0)
        return NULL;
    int64_t *slots = (int64_t *)view.buf;
    Py_ssize_t n = PyList_GET_SIZE(keys);
    Py_ssize_t k = start < 0 ? 0 : start;
    /* First every key's fingerprint and home slot, asking the CPU for each home slot's
     * cache line as it goes; then the probes, which find most lines already there. A
     * table of millions of slots misses the cache on nearly every probe, and the misses
     * then overlap instead of coming one after another. */
    Py_ssize_t todo = n - k;
    int64_t *fps = PyMem_Malloc(sizeof(int64_t) * (todo > 0 ? todo : 1));
    Py_ssize_t *homes = PyMem_Malloc(sizeof(Py_ssize_t) * (todo > 0 ? todo : 1));
    if (fps == NULL || homes == NULL) {
        PyMem_Free(fps);
        PyMem_Free(homes);
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t j = 0; j < todo; j++) {
        Py_hash_t h = PyObject_Hash(PyList_GET_ITEM(keys, k + j));
        if (h == -1 && PyErr_Occurred())
            goto error;
        fps[j] = h ? (int64_t)h : 1;
        homes[j] = home_slot(fps[j], size);
#if defined(__GNUC__)
        __builtin_prefetch(&slots[homes[j]], 1, 1);
#endif
    }
    for (Py_ssize_t j = 0; j < todo; j++) {
        int64_t fp = fps[j];
        Py_ssize_t i = homes[j];
        int is_new;
        for (;;) {
            int64_t value = slots[i];
            if (value == 0) {
                slots[i] = fp;
                is_new = 1;
                break;
            }
            if (value == fp) {
                is_new = 0;
                break;
            }
            if (++i == size)
                i = 0;
        }
        k++;
        if (PyList_Append(out, is_new ? Py_True : Py_False) < 0)
            goto error;
        if (is_new && ++count > limit)
            break;
    }
    PyMem_Free(fps);
    PyMem_Free(homes);
    PyBuffer_Release(&view);
    return Py_BuildValue("nn", count, k);
error:
    PyMem_Free(fps);
    PyMem_Free(homes);
    PyBuffer_Release(&view);
    return NULL;
}

/* rehash(old, new, size): every fingerprint of `old` into the empty `new` of `size` slots. */
static PyObject *
rehash(PyObject *module, PyObject *args)
{
    PyObject *old_obj, *new_obj;
    Py_ssize_t size;
    if (!PyArg_ParseTuple(args, "OOn:rehash", &old_obj, &new_obj, &size))
        return NULL;
    Py_buffer old_view, new_view;
    if (PyObject_GetBuffer(old_obj, &old_view, PyBUF_FORMAT) < 0)
        return NULL;
    if (old_view.itemsize != 8) {
        PyBuffer_Release(&old_view);
        PyErr_SetString(PyExc_ValueError, "the old table must be an array('q')");
        return NULL;
    }
    if (table_buffer(new_obj, &new_view, size) < 0) {
        PyBuffer_Release(&old_view);
        return NULL;
    }
    const int64_t *old = (const int64_t *)old_view.buf;
    int64_t *slots = (int64_t *)new_view.buf;
    Py_ssize_t old_size = old_view.len / 8, placed = 0;
    for (Py_ssize_t j = 0; j < old_size; j++) {
        int64_t fp = old[j];
        if (fp == 0)
            continue;
        if (++placed == size) { /* no empty slot would be left: the probe would not end */
            PyBuffer_Release(&new_view);
            PyBuffer_Release(&old_view);
            PyErr_SetString(PyExc_ValueError, "the new table is too small");
            return NULL;
        }
        Py_ssize_t i = home_slot(fp, size);
        while (slots[i] != 0) {
            if (++i == size)
                i = 0;
        }
        slots[i] = fp;
    }
    PyBuffer_Release(&new_view);
    PyBuffer_Release(&old_view);
    Py_RETURN_NONE;
}

/* The slots of a table that keeps values beside its slots (output/state_previous.py):
 * every key's fingerprint and home slot first, each home slot's cache line asked for, as
 * add_many does. Returns 0, or -1 with an exception set. */
static int
homes_of(PyObject *keys, const int64_t *slots, Py_ssize_t size, int64_t *fps, Py_ssize_t *homes)
{
    Py_ssize_t n = PyList_GET_SIZE(keys);
    for (Py_ssize_t j = 0; j < n; j++) {
        Py_hash_t h = PyObject_Hash(PyList_GET_ITEM(keys, j));
        if (h == -1 && PyErr_Occurred())
            return -1;
        fps[j] = h ? (int64_t)h : 1;
        homes[j] = home_slot(fps[j], size);
#if defined(__GNUC__)
        __builtin_prefetch(&slots[homes[j]], 0, 1);
#endif
    }
    return 0;
}

/* slots_of(slots, size, keys, out): appends to `out` the slot each key's fingerprint
 * occupies, or -1 where it is absent. */
static PyObject *
slots_of(PyObject *module, PyObject *args)
{
    PyObject *table, *keys, *out;
    Py_ssize_t size;
    if (!PyArg_ParseTuple(args, "OnO!O!:slots_of", &table, &size, &PyList_Type, &keys,
                          &PyList_Type, &out))
        return NULL;
    Py_buffer view;
    if (table_buffer(table, &view, size) < 0)
        return NULL;
    const int64_t *slots = (const int64_t *)view.buf;
    Py_ssize_t n = PyList_GET_SIZE(keys);
    int64_t *fps = PyMem_Malloc(sizeof(int64_t) * (n > 0 ? n : 1));
    Py_ssize_t *homes = PyMem_Malloc(sizeof(Py_ssize_t) * (n > 0 ? n : 1));
    if (fps == NULL || homes == NULL) {
        PyMem_Free(fps);
        PyMem_Free(homes);
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    if (homes_of(keys, slots, size, fps, homes) < 0)
        goto error;
    for (Py_ssize_t j = 0; j < n; j++) {
        Py_ssize_t i = homes[j], found = -1;
        for (Py_ssize_t probes = 0; probes < size; probes++) {
            int64_t value = slots[i];
            if (value == fps[j]) {
                found = i;
                break;
            }
            if (value == 0)
                break;
            if (++i == size)
                i = 0;
        }
        PyObject *slot = PyLong_FromSsize_t(found);
        if (slot == NULL || PyList_Append(out, slot) < 0) {
            Py_XDECREF(slot);
            goto error;
        }
        Py_DECREF(slot);
    }
    PyMem_Free(fps);
    PyMem_Free(homes);
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
error:
    PyMem_Free(fps);
    PyMem_Free(homes);
    PyBuffer_Release(&view);
    return NULL;
}

/* place_many(slots, size, count, keys, out) -> count
 *
 * Adds each key whose fingerprint is not in the table and appends the slot it took, or
 * -1 - slot where it was there already. The table is never grown here (the caller sized it
 * for these keys, so slots stay put); a table that would be left without an empty slot is
 * refused (ValueError) before anything is added.
 */
static PyObject *
place_many(PyObject *module, PyObject *args)
{
    PyObject *table, *keys, *out;
    Py_ssize_t size, count;
    if (!PyArg_ParseTuple(args, "OnnO!O!:place_many", &table, &size, &count, &PyList_Type,
                          &keys, &PyList_Type, &out))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(keys);
    if (count + n >= size) {
        PyErr_SetString(PyExc_ValueError, "the table has no room for these keys");
        return NULL;
    }
    Py_buffer view;
    if (table_buffer(table, &view, size) < 0)
        return NULL;
    int64_t *slots = (int64_t *)view.buf;
    int64_t *fps = PyMem_Malloc(sizeof(int64_t) * (n > 0 ? n : 1));
    Py_ssize_t *homes = PyMem_Malloc(sizeof(Py_ssize_t) * (n > 0 ? n : 1));
    if (fps == NULL || homes == NULL) {
        PyMem_Free(fps);
        PyMem_Free(homes);
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    if (homes_of(keys, slots, size, fps, homes) < 0)
        goto error;
    for (Py_ssize_t j = 0; j < n; j++) {
        Py_ssize_t i = homes[j], placed;
        for (;;) {
            int64_t value = slots[i];
            if (value == 0) {
                slots[i] = fps[j];
                count++;
                placed = i;
                break;
            }
            if (value == fps[j]) {
                placed = -1 - i;
                break;
            }
            if (++i == size)
                i = 0;
        }
        PyObject *slot = PyLong_FromSsize_t(placed);
        if (slot == NULL || PyList_Append(out, slot) < 0) {
            Py_XDECREF(slot);
            goto error;
        }
        Py_DECREF(slot);
    }
    PyMem_Free(fps);
    PyMem_Free(homes);
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(count);
error:
    PyMem_Free(fps);
    PyMem_Free(homes);
    PyBuffer_Release(&view);
    return NULL;
}

static PyMethodDef methods[] = {
    {"add_many", add_many, METH_VARARGS,
     "add_many(slots, size, limit, count, keys, start, out) -> (count, next)"},
    {"rehash", rehash, METH_VARARGS, "rehash(old, new, size): fill `new` from `old`"},
    {"slots_of", slots_of, METH_VARARGS, "slots_of(slots, size, keys, out): each key's slot or -1"},
    {"place_many", place_many, METH_VARARGS,
     "place_many(slots, size, count, keys, out) -> count: each key's slot, -1 - slot if there"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_seen_table", "The seen-set's probe loops, compiled.", -1, methods,
};

PyMODINIT_FUNC
PyInit__seen_table(void)
{
    return PyModule_Create(&module_def);
}
