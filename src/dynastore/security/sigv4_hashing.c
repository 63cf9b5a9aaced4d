/* SigV4's hashing in C: sigv4_hashing.py's functions, with the same names and results, for the compiled build.

   A signed request needs four SHA-256 digests (the body's, the canonical request's, the HMAC's inner and outer),
   three of them continued from hash states kept between requests (sigv4.py). Through hashlib each of those is an
   object made or copied, an OpenSSL context duplicated and cleansed, and a hex string built: about two thirds of
   the verification's cost. Here a kept state is a plain struct, continuing one is a copy of 108 bytes, and the
   whole chain is one call with no object made but its result. SHA-256 itself is written out from FIPS 180-4
   (section 6.2); tests/unit/security/test_sigv4_hashing.py compares every function with hashlib's.

   The compression of a block is OpenSSL's when the process has it loaded (Python's hashlib loads it): its
   SHA256_Transform picks the CPU's SHA instructions or vector units, several times faster than C where the CPU
   has them. It is looked up by name at import, checked against this file's own compression on a test vector,
   and left aside when absent or different; this file's compression serves then.

   setup.py builds this file as the module dynastore.security.sigv4_hashing, which Python then imports in place
   of sigv4_hashing.py (an extension module comes first in a package's directory). Without a compiler the .py
   serves, with the same results. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    uint32_t h[8];
    uint64_t length; /* bytes taken in so far */
    uint8_t block[64];
    uint32_t used; /* bytes of block waiting for the next compression */
} sha256_state;

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static const uint32_t INITIAL[8] = {
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

#define ROTR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void portable_compress(uint32_t h[8], const uint8_t *p) {
    uint32_t w[64];
    for (int i = 0; i < 16; i++) {
        w[i] = ((uint32_t)p[4 * i] << 24) | ((uint32_t)p[4 * i + 1] << 16) | ((uint32_t)p[4 * i + 2] << 8) |
               (uint32_t)p[4 * i + 3];
    }
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROTR(w[i - 15], 7) ^ ROTR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROTR(w[i - 2], 17) ^ ROTR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = hh + (ROTR(e, 6) ^ ROTR(e, 11) ^ ROTR(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        uint32_t t2 = (ROTR(a, 2) ^ ROTR(a, 13) ^ ROTR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        hh = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += hh;
}

/* OpenSSL's SHA256_CTX begins with the eight words of the hash, which are all its block function reads and
   writes; the rest of the struct (the length and the partial block, 80 bytes) is there for its size only. */
typedef struct {
    uint32_t h[8];
    uint32_t rest[20];
} openssl_context;

typedef void (*openssl_transform)(openssl_context *context, const uint8_t *block);

static openssl_transform openssl_compress = NULL;

static void compress(uint32_t h[8], const uint8_t *p) {
    if (openssl_compress == NULL) {
        portable_compress(h, p);
        return;
    }
    openssl_context context;
    memcpy(context.h, h, sizeof context.h);
    openssl_compress(&context, p);
    memcpy(h, context.h, sizeof context.h);
}

/* OpenSSL's block function, if the process has loaded a libcrypto that exports it and it compresses a test block
   as portable_compress does; NULL otherwise. */
static openssl_transform find_openssl_compress(void) {
    static const char *const names[] = {"libcrypto.so.3", "libcrypto.so.1.1", "libcrypto.3.dylib", "libcrypto.1.1.dylib"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *library = dlopen(names[i], RTLD_LAZY | RTLD_NOLOAD);
        if (library == NULL) {
            continue;
        }
        openssl_transform found = (openssl_transform)dlsym(library, "SHA256_Transform");
        if (found == NULL) {
            continue;
        }
        uint8_t block[64];
        for (int j = 0; j < 64; j++) {
            block[j] = (uint8_t)(j * 7 + 1);
        }
        openssl_context context = {{0}, {0}};
        uint32_t expected[8];
        memcpy(context.h, INITIAL, sizeof INITIAL);
        memcpy(expected, INITIAL, sizeof INITIAL);
        found(&context, block);
        portable_compress(expected, block);
        if (memcmp(context.h, expected, sizeof expected) == 0) {
            return found;
        }
    }
    return NULL;
}

static void state_start(sha256_state *s) {
    memcpy(s->h, INITIAL, sizeof INITIAL);
    s->length = 0;
    s->used = 0;
}

static void state_update(sha256_state *s, const uint8_t *data, size_t n) {
    s->length += n;
    if (s->used) {
        size_t take = 64 - s->used < n ? 64 - s->used : n;
        memcpy(s->block + s->used, data, take);
        s->used += (uint32_t)take;
        data += take;
        n -= take;
        if (s->used < 64) {
            return;
        }
        compress(s->h, s->block);
        s->used = 0;
    }
    for (; n >= 64; data += 64, n -= 64) {
        compress(s->h, data);
    }
    if (n) {
        memcpy(s->block, data, n);
        s->used = (uint32_t)n;
    }
}

/* The digest of what a state has taken in; the state itself is left as it was (a kept state is only copied). */
static void state_digest(const sha256_state *kept, uint8_t out[32]) {
    sha256_state s = *kept;
    uint64_t bits = s.length * 8;
    s.block[s.used++] = 0x80;
    if (s.used > 56) {
        memset(s.block + s.used, 0, 64 - s.used);
        compress(s.h, s.block);
        s.used = 0;
    }
    memset(s.block + s.used, 0, 56 - s.used);
    for (int i = 0; i < 8; i++) {
        s.block[63 - i] = (uint8_t)(bits >> (8 * i));
    }
    compress(s.h, s.block);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(s.h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(s.h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(s.h[i] >> 8);
        out[4 * i + 3] = (uint8_t)s.h[i];
    }
}

static void to_hex(const uint8_t digest[32], char out[64]) {
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        out[2 * i] = digits[digest[i] >> 4];
        out[2 * i + 1] = digits[digest[i] & 15];
    }
}

/* ---- the Python type: a hash state, with hashlib's methods ---- */

typedef struct {
    PyObject_HEAD
    sha256_state state;
} HashState;

static PyTypeObject HashStateType;

static HashState *new_state_object(void) {
    return PyObject_New(HashState, &HashStateType);
}

static int take_buffer(sha256_state *s, PyObject *data) {
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) {
        return -1;
    }
    state_update(s, (const uint8_t *)view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    return 0;
}

static PyObject *hash_state_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"data", NULL};
    PyObject *data = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:sha256", names, &data)) {
        return NULL;
    }
    HashState *self = (HashState *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    state_start(&self->state);
    if (data != NULL && take_buffer(&self->state, data) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static PyObject *hash_state_update(HashState *self, PyObject *data) {
    if (take_buffer(&self->state, data) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *hash_state_copy(HashState *self, PyObject *Py_UNUSED(ignored)) {
    HashState *copy = new_state_object();
    if (copy == NULL) {
        return NULL;
    }
    copy->state = self->state;
    return (PyObject *)copy;
}

static PyObject *hash_state_digest(HashState *self, PyObject *Py_UNUSED(ignored)) {
    uint8_t digest[32];
    state_digest(&self->state, digest);
    return PyBytes_FromStringAndSize((const char *)digest, 32);
}

static PyObject *hash_state_hexdigest(HashState *self, PyObject *Py_UNUSED(ignored)) {
    uint8_t digest[32];
    char hex[64];
    state_digest(&self->state, digest);
    to_hex(digest, hex);
    return PyUnicode_FromStringAndSize(hex, 64);
}

static PyMethodDef hash_state_methods[] = {
    {"update", (PyCFunction)hash_state_update, METH_O, "Take in more bytes."},
    {"copy", (PyCFunction)hash_state_copy, METH_NOARGS, "A state that has taken in the same bytes."},
    {"digest", (PyCFunction)hash_state_digest, METH_NOARGS, "The 32-byte digest of the bytes taken in."},
    {"hexdigest", (PyCFunction)hash_state_hexdigest, METH_NOARGS, "The digest as 64 lower-case hex digits."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject HashStateType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "dynastore.security.sigv4_hashing.sha256",
    .tp_basicsize = sizeof(HashState),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A SHA-256 hash state (hashlib.sha256's methods).",
    .tp_new = hash_state_new,
    .tp_methods = hash_state_methods,
};

/* ---- a request's signature ---- */

static int as_state(PyObject *object, const sha256_state **out) {
    if (!PyObject_TypeCheck(object, &HashStateType)) {
        PyErr_Format(PyExc_TypeError, "expected a sigv4_hashing.sha256 state, not %.100s", Py_TYPE(object)->tp_name);
        return -1;
    }
    *out = &((HashState *)object)->state;
    return 0;
}

/* request_signature(body, start, dated, outer) -> bytes: the hex HMAC-SHA256 signature of a request, as ASCII
   bytes. start: the state of the canonical request up to its last line (the payload's hash); dated: the HMAC's
   inner state (the key's inner pad) with the string to sign up to its last line taken in; outer: the HMAC's outer
   state (the key's outer pad). */
static PyObject *request_signature(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs) {
    const sha256_state *start, *dated, *outer;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "request_signature takes 4 arguments");
        return NULL;
    }
    if (as_state(args[1], &start) < 0 || as_state(args[2], &dated) < 0 || as_state(args[3], &outer) < 0) {
        return NULL;
    }
    sha256_state s;
    uint8_t digest[32];
    char hex[64];

    state_start(&s);
    if (take_buffer(&s, args[0]) < 0) {
        return NULL;
    }
    state_digest(&s, digest);
    to_hex(digest, hex); /* the payload's hash: the canonical request's last line */

    s = *start;
    state_update(&s, (const uint8_t *)hex, 64);
    state_digest(&s, digest);
    to_hex(digest, hex); /* the canonical request's hash: the string to sign's last line */

    s = *dated;
    state_update(&s, (const uint8_t *)hex, 64);
    state_digest(&s, digest); /* the inner hash */

    s = *outer;
    state_update(&s, digest, 32);
    state_digest(&s, digest);
    to_hex(digest, hex);
    return PyBytes_FromStringAndSize(hex, 64);
}

static openssl_transform found_openssl_compress = NULL;

/* _compression(use_openssl: bool) -> str: which block function serves ("openssl" or "portable"), after choosing
   OpenSSL's if it was found and use_openssl is true. For the tests, which check both. */
static PyObject *choose_compression(PyObject *Py_UNUSED(module), PyObject *use_openssl) {
    int wanted = PyObject_IsTrue(use_openssl);
    if (wanted < 0) {
        return NULL;
    }
    openssl_compress = wanted ? found_openssl_compress : NULL;
    return PyUnicode_FromString(openssl_compress != NULL ? "openssl" : "portable");
}

static PyMethodDef module_methods[] = {
    {"request_signature", (PyCFunction)(void (*)(void))request_signature, METH_FASTCALL,
     "The hex signature of a request (ASCII bytes), from its body and three kept hash states."},
    {"_compression", (PyCFunction)choose_compression, METH_O,
     "Which block function serves, after choosing OpenSSL's (if found) or not: for tests."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT,
    .m_name = "dynastore.security.sigv4_hashing",
    .m_doc = "SigV4's hashing in C (sigv4_hashing.py's functions, with the same results).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit_sigv4_hashing(void) {
    if (PyType_Ready(&HashStateType) < 0) {
        return NULL;
    }
    PyObject *hashlib = PyImport_ImportModule("_hashlib"); /* loads the libcrypto Python hashes with, if any */
    if (hashlib == NULL) {
        PyErr_Clear();
    }
    Py_XDECREF(hashlib);
    found_openssl_compress = openssl_compress = find_openssl_compress();
    PyObject *module = PyModule_Create(&module_definition);
    if (module == NULL) {
        return NULL;
    }
    /* The .py's names: sha256 makes a state, HashState is its type (a Protocol there, for the annotations). */
    if (PyModule_AddObjectRef(module, "sha256", (PyObject *)&HashStateType) < 0 ||
        PyModule_AddObjectRef(module, "HashState", (PyObject *)&HashStateType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
