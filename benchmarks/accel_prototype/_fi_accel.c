/* Prototype: the GDN-prefill and rmsnorm metadata checks of fi_compat in C.
 *
 * Stable ABI (Py_LIMITED_API 3.10, an abi3 module), no torch headers: tensors are read
 * through the C API only (interned attribute names, torch.Tensor.get_device passed in as
 * a method descriptor, dtype objects passed in and compared by identity / frozenset).
 *
 * Each check is a METH_FASTCALL builtin bound to a tuple of its constants (its `self`),
 * a drop-in for the generated Python check (`_validate` in the facade's globals): on
 * success it returns the CUDA index (-1 off CUDA), exactly as the Python check does;
 * when anything does not hold, or an attribute read fails, it calls the Python check
 * with the same arguments, which returns or raises the typed error.  So C only ever
 * answers "valid"; every refusal and every odd input is Python's.
 */
#define Py_LIMITED_API 0x030A0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *s_shape, *s_dtype;

/* tensor.shape as a tuple of exactly `rank` sizes (rank < 0: any), into out[]; 0 on
 * anything else (not a tuple, wrong rank, a non-int size, an exception: cleared). */
static int read_shape(PyObject *t, Py_ssize_t rank, Py_ssize_t *out, Py_ssize_t max,
                      Py_ssize_t *n_out) {
    PyObject *s = PyObject_GetAttr(t, s_shape);
    if (s == NULL) { PyErr_Clear(); return 0; }
    if (!PyTuple_Check(s)) { Py_DECREF(s); return 0; }
    Py_ssize_t n = PyTuple_Size(s);
    if ((rank >= 0 && n != rank) || n > max) { Py_DECREF(s); return 0; }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyTuple_GetItem(s, i); /* borrowed */
        if (!PyLong_CheckExact(x)) { Py_DECREF(s); return 0; }
        out[i] = PyLong_AsSsize_t(x);
        if (out[i] == -1 && PyErr_Occurred()) { PyErr_Clear(); Py_DECREF(s); return 0; }
    }
    Py_DECREF(s);
    if (n_out) *n_out = n;
    return 1;
}

/* tensor.dtype, borrowed identity only (torch's dtype objects are singletons): the new
 * reference is dropped at once; NULL on failure (cleared). */
static PyObject *read_dtype(PyObject *t) {
    PyObject *d = PyObject_GetAttr(t, s_dtype);
    if (d == NULL) { PyErr_Clear(); return NULL; }
    Py_DECREF(d);
    return d;
}

/* tensor.get_device() through the unbound descriptor; -2 on failure (cleared). */
static long read_device(PyObject *get_device, PyObject *t) {
    PyObject *r = PyObject_CallFunctionObjArgs(get_device, t, NULL);
    if (r == NULL) { PyErr_Clear(); return -2; }
    long v = PyLong_CheckExact(r) ? PyLong_AsLong(r) : -2;
    Py_DECREF(r);
    if (v == -1 && PyErr_Occurred()) { PyErr_Clear(); return -2; }
    return v;
}

static int in_set(PyObject *set, PyObject *x) {
    int r = PySet_Contains(set, x);
    if (r < 0) { PyErr_Clear(); return 0; }
    return r;
}

static PyObject *fallback(PyObject *fb, PyObject *const *args, Py_ssize_t n) {
    PyObject *tup = PyTuple_New(n);
    if (tup == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_INCREF(args[i]);
        PyTuple_SetItem(tup, i, args[i]);
    }
    PyObject *r = PyObject_Call(fb, tup, NULL);
    Py_DECREF(tup);
    return r;
}

/* self: (python_check, get_device, int_dtypes frozenset, state_dtypes frozenset)
 * args: q, k, v, g, beta, cu_seqlens, initial_state, output, output_state */
static PyObject *gdn_check(PyObject *self, PyObject *const *a, Py_ssize_t n) {
    PyObject *fb = PyTuple_GetItem(self, 0), *gd = PyTuple_GetItem(self, 1);
    PyObject *ints = PyTuple_GetItem(self, 2), *states = PyTuple_GetItem(self, 3);
    if (n != 9) return fallback(fb, a, n);
    Py_ssize_t q[3], k[3], v[3], s[2], dim;
    long dq;
    PyObject *dt;
    if (!read_shape(a[0], 3, q, 3, NULL) || !read_shape(a[1], 3, k, 3, NULL) ||
        !read_shape(a[2], 3, v, 3, NULL))
        goto fail;
    if ((dq = read_device(gd, a[0])) == -2) goto fail;
    if (!(q[0] == k[0] && k[0] == v[0] && q[2] == k[2] && k[2] == v[2])) goto fail;
    if ((dt = read_dtype(a[5])) == NULL || !in_set(ints, dt)) goto fail;
    if (!read_shape(a[5], -1, s, 2, &dim) || dim != 1) goto fail;
    if (read_device(gd, a[1]) != dq || read_device(gd, a[2]) != dq ||
        read_device(gd, a[5]) != dq)
        goto fail;
    Py_ssize_t h = q[1] > v[1] ? q[1] : v[1];
    for (int i = 3; i <= 4; i++) { /* g, beta: (t, max(hq, hv)) */
        if (a[i] == Py_None) continue;
        if (!read_shape(a[i], 2, s, 2, NULL) || s[0] != q[0] || s[1] != h) goto fail;
        if (read_device(gd, a[i]) != dq) goto fail;
    }
    for (int i = 6; i <= 8; i++) { /* initial_state, output, output_state */
        if (a[i] == Py_None) continue;
        if (read_device(gd, a[i]) != dq) goto fail;
        if (i != 7 && ((dt = read_dtype(a[i])) == NULL || !in_set(states, dt))) goto fail;
    }
    return PyLong_FromLong(dq);
fail:
    return fallback(fb, a, n);
}

/* self: (python_check, get_device, dtype0, dtype1); args: input, weight, out */
static PyObject *rmsnorm_check(PyObject *self, PyObject *const *a, Py_ssize_t n) {
    PyObject *fb = PyTuple_GetItem(self, 0), *gd = PyTuple_GetItem(self, 1);
    PyObject *d0 = PyTuple_GetItem(self, 2), *d1 = PyTuple_GetItem(self, 3);
    if (n != 3) return fallback(fb, a, n);
    Py_ssize_t x[3], w[1], o[3], rx, ro;
    long d;
    PyObject *dt;
    if ((d = read_device(gd, a[0])) == -2) goto fail;
    if (!read_shape(a[0], -1, x, 3, &rx) || rx < 2) goto fail;
    if ((dt = read_dtype(a[0])) == NULL || (dt != d0 && dt != d1)) goto fail;
    if (!read_shape(a[1], 1, w, 1, NULL) || read_dtype(a[1]) != dt || w[0] != x[rx - 1])
        goto fail;
    if (read_device(gd, a[1]) != d) goto fail;
    if (a[2] != Py_None) {
        if (!read_shape(a[2], rx, o, 3, &ro)) goto fail;
        for (Py_ssize_t i = 0; i < rx; i++)
            if (o[i] != x[i]) goto fail;
        if (read_dtype(a[2]) != dt || read_device(gd, a[2]) != d) goto fail;
    }
    return PyLong_FromLong(d);
fail:
    return fallback(fb, a, n);
}

/* The floor: only the torch getters a check calls, nothing compared.
 * reads(get_device, flags, *tensors): flags[i] & 1 shape, & 2 dtype, & 4 get_device();
 * None is skipped.  Returns None. */
static PyObject *reads(PyObject *m, PyObject *const *a, Py_ssize_t n) {
    (void)m;
    if (n < 2 || !PyTuple_Check(a[1]) || PyTuple_Size(a[1]) != n - 2) {
        PyErr_SetString(PyExc_TypeError, "reads(get_device, flags, *tensors)");
        return NULL;
    }
    Py_ssize_t sizes[8], rank;
    for (Py_ssize_t i = 2; i < n; i++) {
        if (a[i] == Py_None) continue;
        long f = PyLong_AsLong(PyTuple_GetItem(a[1], i - 2));
        if ((f & 1) && !read_shape(a[i], -1, sizes, 8, &rank)) return NULL;
        if ((f & 2) && read_dtype(a[i]) == NULL) return NULL;
        if ((f & 4) && read_device(a[0], a[i]) == -2) return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef gdn_def = {"gdn_prefill_check", (PyCFunction)(void (*)(void))gdn_check,
                              METH_FASTCALL, NULL};
static PyMethodDef rms_def = {"rmsnorm_check", (PyCFunction)(void (*)(void))rmsnorm_check,
                              METH_FASTCALL, NULL};

static PyObject *bind(PyMethodDef *def, PyObject *args, Py_ssize_t n) {
    if (!PyTuple_Check(args) || PyTuple_Size(args) != n) {
        PyErr_SetString(PyExc_TypeError, "wrong constants");
        return NULL;
    }
    return PyCFunction_NewEx(def, args, NULL);
}

static PyObject *make_gdn(PyObject *m, PyObject *args) {
    (void)m;
    return bind(&gdn_def, args, 4);
}
static PyObject *make_rmsnorm(PyObject *m, PyObject *args) {
    (void)m;
    return bind(&rms_def, args, 4);
}

static PyMethodDef methods[] = {
    {"gdn_prefill", make_gdn, METH_VARARGS,
     "gdn_prefill(python_check, Tensor.get_device, int_dtypes, state_dtypes)"},
    {"rmsnorm", make_rmsnorm, METH_VARARGS,
     "rmsnorm(python_check, Tensor.get_device, dtype0, dtype1)"},
    {"reads", (PyCFunction)(void (*)(void))reads, METH_FASTCALL,
     "reads(get_device, flags, *tensors): the getters alone"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "_fi_accel", NULL, -1, methods,
                                 NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__fi_accel(void) {
    s_shape = PyUnicode_InternFromString("shape");
    s_dtype = PyUnicode_InternFromString("dtype");
    if (s_shape == NULL || s_dtype == NULL) return NULL;
    return PyModule_Create(&mod);
}
