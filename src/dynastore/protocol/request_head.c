/* The common request read in one pass: request_head.py's functions, with the same names and results, for the
   compiled build.

   The parser (httptools) calls back into Python once per part of a request, and request_head.py's reading in
   Python costs about as much again as those calls: string methods, a tuple per partition, a hash per fresh
   name. Here the head is read line by line: each line's end and colon found by memchr, its bytes checked for
   control characters eight at a time, its name matched against the names the parser has already accepted (a
   short list of byte strings, compared by length and memcmp), and only the values, the dict of headers and the
   result made as objects.
   tests/unit/protocol/test_request_head.py holds this file and request_head.py to the parser's readings.

   setup.py builds this file as the module dynastore.protocol.request_head, which Python then imports in place of
   request_head.py (an extension module comes first in a package's directory). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define NAMES_MAX 64
#define NAME_BYTES_MAX 64

typedef struct {
    char text[NAME_BYTES_MAX];
    Py_ssize_t length;
    PyObject *key; /* the interned lower-case key: a strong reference, kept for the process */
} known_name;

static known_name known[NAMES_MAX];
static int known_count = 0;

/* The keys that change how a request is read, interned as header_key interns them: compared by identity. */
static PyObject *content_length, *connection, *transfer_encoding, *expect, *upgrade;


static const char REQUEST_LINE[] = "POST / HTTP/1.1\r\n";
#define REQUEST_LINE_LENGTH ((Py_ssize_t)(sizeof REQUEST_LINE - 1))

static PyObject *find_key(const char *name, Py_ssize_t length) {
    for (int i = 0; i < known_count; i++) {
        if (known[i].length == length && memcmp(known[i].text, name, (size_t)length) == 0) {
            return known[i].key;
        }
    }
    return NULL;
}

/* learn_name(name: bytes, key: str) -> None: a header name the parser accepted, and its key. */
static PyObject *learn_name(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyBytes_Check(args[0]) || !PyUnicode_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "learn_name takes a name (bytes) and its key (str)");
        return NULL;
    }
    const char *name = PyBytes_AS_STRING(args[0]);
    Py_ssize_t length = PyBytes_GET_SIZE(args[0]);
    if (known_count < NAMES_MAX && length > 0 && length <= NAME_BYTES_MAX && find_key(name, length) == NULL) {
        memcpy(known[known_count].text, name, (size_t)length);
        known[known_count].length = length;
        Py_INCREF(args[1]);
        known[known_count].key = args[1];
        known_count++;
    }
    Py_RETURN_NONE;
}

/* _forget_names() -> None: forget every name learned; for tests, which teach their own. */
static PyObject *forget_names(PyObject *Py_UNUSED(module), PyObject *Py_UNUSED(ignored)) {
    for (int i = 0; i < known_count; i++) {
        Py_CLEAR(known[i].key);
    }
    known_count = 0;
    Py_RETURN_NONE;
}

static int equals_lower(const char *text, Py_ssize_t length, const char *lower) {
    Py_ssize_t n = (Py_ssize_t)strlen(lower);
    if (length != n) {
        return 0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        char c = text[i];
        if (c >= 'A' && c <= 'Z') {
            c = (char)(c - 'A' + 'a');
        }
        if (c != lower[i]) {
            return 0;
        }
    }
    return 1;
}

/* Whether any of the n bytes at p is a control character (below 0x20, or 0x7f): eight bytes a step, by the
   classic test for a zero byte (a byte below 0x20 borrows when 0x20 is taken from it; 0x7f becomes zero when
   xored with 0x7f); a byte of 0x80 or more has its top bit set, so it never reads as a borrow. */
static int has_control(const char *p, Py_ssize_t n) {
    const uint64_t ones = 0x0101010101010101ULL, tops = 0x8080808080808080ULL;
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, p + i, 8);
        uint64_t del = x ^ (0x7f * ones);
        if ((((x - 0x20 * ones) & ~x) | ((del - ones) & ~del)) & tops) {
            return 1;
        }
    }
    for (; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c < 0x20 || c == 0x7f) {
            return 1;
        }
    }
    return 0;
}

/* Reads the header lines from at (each ending with CR LF) up to the empty line that ends the head, no further
   than limit, into headers; *body_start is set past that empty line. Returns 1 when read, 0 when the request
   must go to the parser (or is not all here), -1 on a Python error. */
static int read_lines(const char *p, Py_ssize_t at, Py_ssize_t limit, PyObject *headers, Py_ssize_t *length,
                      int *keep_alive, Py_ssize_t *body_start) {
    int length_seen = 0;
    for (;;) {
        if (limit - at < 2) {
            return 0;
        }
        const char *cr = memchr(p + at, '\r', (size_t)(limit - at - 1));
        if (cr == NULL) {
            return 0; /* the line does not end within the head's bytes */
        }
        Py_ssize_t i = cr - p;
        if (p[i + 1] != '\n' || has_control(p + at, i - at)) {
            return 0; /* a lone CR, a control character, a tab */
        }
        if (i == at) { /* the empty line */
            *body_start = i + 2;
            return 1;
        }
        const char *colon = memchr(p + at, ':', (size_t)(i - at));
        if (colon == NULL) {
            return 0;
        }
        PyObject *key = find_key(p + at, (colon - p) - at);
        if (key == NULL) {
            return 0;
        }
        Py_ssize_t start = (colon - p) + 1;
        while (start < i && p[start] == ' ') {
            start++;
        }
        const char *value = p + start;
        Py_ssize_t size = i - start;
        if (key == content_length) {
            if (length_seen || size == 0 || size > 18) {
                return 0;
            }
            Py_ssize_t n = 0;
            for (Py_ssize_t j = 0; j < size; j++) {
                if (value[j] < '0' || value[j] > '9') {
                    return 0;
                }
                n = n * 10 + (value[j] - '0');
            }
            *length = n;
            length_seen = 1;
        } else if (key == connection) {
            if (equals_lower(value, size, "keep-alive")) {
                *keep_alive = 1;
            } else if (equals_lower(value, size, "close")) {
                *keep_alive = 0;
            } else {
                return 0;
            }
        } else if (key == transfer_encoding || key == expect || key == upgrade) {
            return 0;
        }
        PyObject *text = PyUnicode_DecodeLatin1(value, size, NULL);
        if (text == NULL) {
            return -1;
        }
        int failed = PyDict_SetItem(headers, key, text);
        Py_DECREF(text);
        if (failed < 0) {
            return -1;
        }
        at = i + 2;
    }
}

/* A dict with room for a request's usual dozen headers without growing. */
static PyObject *new_headers(void) {
#if PY_VERSION_HEX < 0x030D0000
    return _PyDict_NewPresized(12);
#else
    return PyDict_New();
#endif
}

/* read_simple(data: bytes, start: int, max_head: int, max_body: int)
       -> tuple[dict[str, str], bytes, bool, int] | None */
static PyObject *read_simple(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyBytes_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "read_simple takes data (bytes), start, max_head and max_body");
        return NULL;
    }
    Py_ssize_t start = PyLong_AsSsize_t(args[1]);
    Py_ssize_t max_head = PyLong_AsSsize_t(args[2]);
    Py_ssize_t max_body = PyLong_AsSsize_t(args[3]);
    if (PyErr_Occurred()) {
        return NULL;
    }
    const char *p = PyBytes_AS_STRING(args[0]);
    Py_ssize_t size = PyBytes_GET_SIZE(args[0]);
    if (start < 0 || size - start < REQUEST_LINE_LENGTH + 2 ||
        memcmp(p + start, REQUEST_LINE, (size_t)REQUEST_LINE_LENGTH) != 0) {
        Py_RETURN_NONE;
    }
    /* The head, up to and with its empty line's CR LF, is at most max_head + 4 bytes (as request_head.py counts:
       up to the CR LF CR LF that ends it, at most max_head). */
    Py_ssize_t limit = max_head + 4 < size - start ? start + max_head + 4 : size;
    PyObject *headers = new_headers();
    if (headers == NULL) {
        return NULL;
    }
    Py_ssize_t length = 0, body_start = 0;
    int keep_alive = 1;
    int read = read_lines(p, start + REQUEST_LINE_LENGTH, limit, headers, &length, &keep_alive, &body_start);
    if (read <= 0 || length > max_body || size - body_start < length) {
        Py_DECREF(headers);
        if (read < 0) {
            return NULL;
        }
        Py_RETURN_NONE;
    }
    PyObject *result = PyTuple_New(4);
    PyObject *body = PyBytes_FromStringAndSize(p + body_start, length);
    PyObject *end = PyLong_FromSsize_t(body_start + length);
    if (result == NULL || body == NULL || end == NULL) {
        Py_XDECREF(result);
        Py_XDECREF(body);
        Py_XDECREF(end);
        Py_DECREF(headers);
        return NULL;
    }
    PyTuple_SET_ITEM(result, 0, headers);
    PyTuple_SET_ITEM(result, 1, body);
    PyTuple_SET_ITEM(result, 2, PyBool_FromLong(keep_alive));
    PyTuple_SET_ITEM(result, 3, end);
    return result;
}

static PyMethodDef module_methods[] = {
    {"learn_name", (PyCFunction)(void (*)(void))learn_name, METH_FASTCALL,
     "Keep a header name the parser accepted, with its key, for read_simple."},
    {"read_simple", (PyCFunction)(void (*)(void))read_simple, METH_FASTCALL,
     "The common request at start in data, read whole: (headers, body, keep-alive, end), or None."},
    {"_forget_names", (PyCFunction)forget_names, METH_NOARGS, "Forget every name learned: for tests."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT,
    .m_name = "dynastore.protocol.request_head",
    .m_doc = "The common request read in one pass (request_head.py's functions, with the same results).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit_request_head(void) {
    content_length = PyUnicode_InternFromString("content-length");
    connection = PyUnicode_InternFromString("connection");
    transfer_encoding = PyUnicode_InternFromString("transfer-encoding");
    expect = PyUnicode_InternFromString("expect");
    upgrade = PyUnicode_InternFromString("upgrade");
    if (!content_length || !connection || !transfer_encoding || !expect || !upgrade) {
        return NULL;
    }
    return PyModule_Create(&module_definition);
}
