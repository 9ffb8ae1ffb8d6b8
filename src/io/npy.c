/* numpy .npy arrays, read and written by hand.
 *
 * This work is based on the format description in numpy's NEP 1 / numpy.lib.format docs:
 *   "\x93NUMPY", major, minor, header length (uint16 LE for 1.0, uint32 LE for 2.0/3.0),
 *   a Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...), } padded with
 *   spaces and a final '\n', then the raw element bytes.
 *
 * NOTE: every input here is untrusted. Sizes are computed in uint64_t with explicit overflow
 * checks before any allocation, and every failure names the byte offset where it was noticed.
 *
 * Decisions (documented for callers):
 * - Big-endian data is byte-swapped, Fortran-order data transposed into C order.
 * - Bool bytes other than 0/1 are normalised to 1: numpy itself treats any nonzero byte as
 *   True, so refusing them would reject arrays numpy reads happily.
 * - '<U' strings: trailing NULs are stripped (numpy does the same); a NUL followed by other
 *   characters cannot be represented as a C string and is refused with AM_E_UTF8, as are
 *   surrogates and code points above U+10FFFF.
 * - Object ('O') arrays need pickle, i.e. arbitrary code execution: refused AM_E_UNSUPPORTED.
 * - Header keys other than descr/fortran_order/shape are refused, as numpy refuses them.
 * - Bytes after the data are ignored (numpy ignores them too).
 */
#include "anymove/io.h"
#include "npy_internal.h"
#include "core/internal.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define AMI_NPY_DEFAULT_MAX_BYTES ((uint64_t)4 << 30)
/* numpy caps headers at 10 000 bytes by default; we allow more but still bound the parse. */
#define AMI_NPY_MAX_HEADER ((uint32_t)1 << 20)
#define AMI_NPY_MAGIC "\x93NUMPY"
#define AMI_NPY_MAGIC_LEN 6u
/* numpy pads headers so the data starts on a 64-byte boundary (ARRAY_ALIGN). */
#define AMI_NPY_ALIGN 64u

/* ---- dtypes --------------------------------------------------------------------------- */

const char *am_dtype_name(am_dtype dt)
{
    switch (dt) {
    case AM_DTYPE_F32: return "float32";
    case AM_DTYPE_F64: return "float64";
    case AM_DTYPE_I32: return "int32";
    case AM_DTYPE_I64: return "int64";
    case AM_DTYPE_U8: return "uint8";
    case AM_DTYPE_BOOL: return "bool";
    case AM_DTYPE_STR: return "str";
    case AM_DTYPE_COUNT: break;
    }
    return "unknown";
}

size_t am_dtype_size(am_dtype dt)
{
    switch (dt) {
    case AM_DTYPE_F32: return 4;
    case AM_DTYPE_F64: return 8;
    case AM_DTYPE_I32: return 4;
    case AM_DTYPE_I64: return 8;
    case AM_DTYPE_U8: return 1;
    case AM_DTYPE_BOOL: return 1;
    case AM_DTYPE_STR: return 0;
    case AM_DTYPE_COUNT: break;
    }
    return 0;
}

static bool ami_host_big_endian(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 0;
}

static void ami_swap_bytes(unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n / 2; i++) {
        unsigned char t = p[i];
        p[i] = p[n - 1 - i];
        p[n - 1 - i] = t;
    }
}

void am_array_clear(am_array *arr)
{
    if (!arr) return;
    am_free(arr->name);
    am_free(arr->data);
    if (arr->strings) {
        for (size_t i = 0; i < arr->count; i++) am_free(arr->strings[i]);
        am_free(arr->strings);
    }
    memset(arr, 0, sizeof *arr);
}

am_array am_array_view(const char *name, am_dtype dtype, int ndim, const size_t *shape,
                       const void *data)
{
    assert(ndim >= 0 && ndim <= AM_MAX_DIMS);
    assert(ndim == 0 || shape);
    am_array a;
    memset(&a, 0, sizeof a);
    /* The view borrows: the writer only reads these, so dropping const is safe here. */
    a.name = (char *)(uintptr_t)name;
    a.dtype = dtype;
    a.ndim = ndim;
    a.count = 1;
    for (int k = 0; k < ndim; k++) {
        a.shape[k] = shape[k];
        a.count *= shape[k];
    }
    /* For AM_DTYPE_STR, data is an array of `count` UTF-8 C strings (const char *const *). */
    if (dtype == AM_DTYPE_STR)
        a.strings = (char **)(uintptr_t)data;
    else
        a.data = (void *)(uintptr_t)data;
    return a;
}

void ami_npy_shape_str(const am_array *a, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "[");
    for (int k = 0; k < a->ndim && n < size; k++)
        n += (size_t)snprintf(buf + n, size - n, "%s%zu", k ? "," : "", a->shape[k]);
    if (n < size) snprintf(buf + n, size - n, "]");
}

/* ---- conversions ---------------------------------------------------------------------- */

static double ami_elem_f64(const am_array *arr, size_t i)
{
    const unsigned char *p = arr->data;
    switch (arr->dtype) {
    case AM_DTYPE_F32: { float v; memcpy(&v, p + 4 * i, 4); return (double)v; }
    case AM_DTYPE_F64: { double v; memcpy(&v, p + 8 * i, 8); return v; }
    case AM_DTYPE_I32: { int32_t v; memcpy(&v, p + 4 * i, 4); return (double)v; }
    case AM_DTYPE_I64: { int64_t v; memcpy(&v, p + 8 * i, 8); return (double)v; }
    case AM_DTYPE_U8: return (double)p[i];
    case AM_DTYPE_BOOL: return p[i] ? 1.0 : 0.0;
    case AM_DTYPE_STR:
    case AM_DTYPE_COUNT: break;
    }
    return NAN;
}

static am_status ami_check_numeric(const am_array *arr, am_error *err)
{
    assert(arr && (arr->count == 0 || arr->data || arr->dtype == AM_DTYPE_STR));
    AMI_CHECK(err, arr->dtype < AM_DTYPE_COUNT && arr->dtype != AM_DTYPE_STR, AM_E_DTYPE,
              "array '%s' has dtype %s, expected a number", arr->name ? arr->name : "",
              am_dtype_name(arr->dtype));
    return AM_OK;
}

am_status am_array_to_f64(const am_array *arr, double *out, am_error *err)
{
    AMI_TRY(ami_check_numeric(arr, err));
    if (arr->dtype == AM_DTYPE_F64) {
        if (arr->count) memcpy(out, arr->data, arr->count * sizeof *out);
        return AM_OK;
    }
    for (size_t i = 0; i < arr->count; i++) out[i] = ami_elem_f64(arr, i);
    return AM_OK;
}

am_status am_array_to_f32(const am_array *arr, float *out, am_error *err)
{
    AMI_TRY(ami_check_numeric(arr, err));
    if (arr->dtype == AM_DTYPE_F32) {
        if (arr->count) memcpy(out, arr->data, arr->count * sizeof *out);
        return AM_OK;
    }
    for (size_t i = 0; i < arr->count; i++) out[i] = (float)ami_elem_f64(arr, i);
    return AM_OK;
}

am_status am_array_scalar(const am_array *arr, double *out, am_error *err)
{
    AMI_TRY(ami_check_numeric(arr, err));
    AMI_CHECK(err, arr->count == 1, AM_E_SHAPE, "array '%s' has %zu elements, expected a scalar",
              arr->name ? arr->name : "", arr->count);
    *out = ami_elem_f64(arr, 0);
    return AM_OK;
}

/* ---- header parsing ------------------------------------------------------------------- */

typedef struct ami_hdr {
    const char *start, *p, *end;
    uint64_t base; /* file offset of start */
} ami_hdr;

static uint64_t ami_hdr_ofs(const ami_hdr *h) { return h->base + (uint64_t)(h->p - h->start); }

static void ami_hdr_ws(ami_hdr *h)
{
    while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
        h->p++;
}

/* A Python string literal without escapes (numpy never writes escapes in these keys). */
static am_status ami_hdr_string(ami_hdr *h, char *out, size_t size, am_error *err)
{
    ami_hdr_ws(h);
    if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
        return AM_FAIL_OFS(err, AM_E_FORMAT, NULL, ami_hdr_ofs(h), "npy header: expected a string");
    char q = *h->p++;
    size_t n = 0;
    while (h->p < h->end && *h->p != q) {
        if (*h->p == '\\' || n + 1 >= size)
            return AM_FAIL_OFS(err, AM_E_FORMAT, NULL, ami_hdr_ofs(h),
                               "npy header: string too long or escaped");
        out[n++] = *h->p++;
    }
    if (h->p >= h->end)
        return AM_FAIL_OFS(err, AM_E_FORMAT, NULL, ami_hdr_ofs(h), "npy header: unterminated string");
    h->p++;
    out[n] = '\0';
    return AM_OK;
}

static bool ami_hdr_word(ami_hdr *h, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(h->end - h->p) >= n && memcmp(h->p, w, n) == 0) {
        h->p += n;
        return true;
    }
    return false;
}

static am_status ami_hdr_shape(ami_hdr *h, uint64_t max_dim, int *ndim, uint64_t *dims,
                               am_error *err)
{
    ami_hdr_ws(h);
    if (h->p >= h->end || (*h->p != '(' && *h->p != '['))
        return AM_FAIL_OFS(err, AM_E_FORMAT, NULL, ami_hdr_ofs(h), "npy header: shape must be a tuple");
    char close = *h->p == '(' ? ')' : ']';
    h->p++;
    int n = 0;
    for (;;) {
        ami_hdr_ws(h);
        if (h->p < h->end && *h->p == close) {
            h->p++;
            break;
        }
        if (h->p < h->end && *h->p == '-')
            return AM_FAIL_OFS(err, AM_E_SHAPE, NULL, ami_hdr_ofs(h), "npy header: negative dimension");
        if (h->p >= h->end || *h->p < '0' || *h->p > '9')
            return AM_FAIL_OFS(err, AM_E_FORMAT, NULL, ami_hdr_ofs(h),
                               "npy header: expected a dimension");
        uint64_t ofs = ami_hdr_ofs(h);
        uint64_t v = 0;
        while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
            unsigned d = (unsigned)(*h->p - '0');
            if (v > (UINT64_MAX - d) / 10)
                return AM_FAIL_OFS(err, AM_E_LIMIT, NULL, ofs, "npy header: dimension overflows");
            v = v * 10 + d;
            h->p++;
        }
        /* Python 2 numpy wrote long literals as "5L". */
        if (h->p < h->end && (*h->p == 'L' || *h->p == 'l')) h->p++;
        if (v > max_dim)
            return AM_FAIL_OFS(err, AM_E_LIMIT, NULL, ofs,
                               "npy header: dimension %" PRIu64 " exceeds the limit %" PRIu64, v,
                               max_dim);
        if (n >= AM_MAX_DIMS)
            return AM_FAIL_OFS(err, AM_E_LIMIT, NULL, ofs, "npy header: more than %d dimensions",
                               AM_MAX_DIMS);
        dims[n++] = v;
        ami_hdr_ws(h);
        if (h->p < h->end && *h->p == ',') {
            h->p++;
            continue;
        }
        if (h->p < h->end && *h->p == close) {
            h->p++;
            break;
        }
        return AM_FAIL_OFS(err, AM_E_FORMAT, NULL, ami_hdr_ofs(h), "npy header: malformed shape");
    }
    *ndim = n;
    return AM_OK;
}

typedef struct ami_npy_info {
    char descr[40];
    bool fortran;
    int ndim;
    uint64_t dims[AM_MAX_DIMS];
} ami_npy_info;

static am_status ami_hdr_parse(ami_hdr *h, uint64_t max_dim, ami_npy_info *info, am_error *err)
{
    bool have_descr = false, have_fortran = false, have_shape = false;
    ami_hdr_ws(h);
    if (h->p >= h->end || *h->p != '{')
        return AM_FAIL_OFS(err, AM_E_FORMAT, NULL, ami_hdr_ofs(h), "npy header: expected '{'");
    h->p++;
    for (;;) {
        ami_hdr_ws(h);
        if (h->p < h->end && *h->p == '}') {
            h->p++;
            break;
        }
        uint64_t key_ofs = ami_hdr_ofs(h);
        char key[32];
        AMI_TRY(ami_hdr_string(h, key, sizeof key, err));
        ami_hdr_ws(h);
        if (h->p >= h->end || *h->p != ':')
            return AM_FAIL_OFS(err, AM_E_FORMAT, NULL, ami_hdr_ofs(h), "npy header: expected ':'");
        h->p++;
        ami_hdr_ws(h);
        if (strcmp(key, "descr") == 0 && !have_descr) {
            if (h->p < h->end && (*h->p == '[' || *h->p == '{'))
                return AM_FAIL_OFS(err, AM_E_DTYPE, NULL, ami_hdr_ofs(h),
                                   "structured dtypes are not supported");
            AMI_TRY(ami_hdr_string(h, info->descr, sizeof info->descr, err));
            have_descr = true;
        } else if (strcmp(key, "fortran_order") == 0 && !have_fortran) {
            if (ami_hdr_word(h, "True"))
                info->fortran = true;
            else if (ami_hdr_word(h, "False"))
                info->fortran = false;
            else
                return AM_FAIL_OFS(err, AM_E_FORMAT, NULL, ami_hdr_ofs(h),
                                   "npy header: fortran_order must be True or False");
            have_fortran = true;
        } else if (strcmp(key, "shape") == 0 && !have_shape) {
            AMI_TRY(ami_hdr_shape(h, max_dim, &info->ndim, info->dims, err));
            have_shape = true;
        } else {
            return AM_FAIL_OFS(err, AM_E_FORMAT, NULL, key_ofs,
                               "npy header: unexpected or repeated key '%s'", key);
        }
        ami_hdr_ws(h);
        if (h->p < h->end && *h->p == ',') {
            h->p++;
            continue;
        }
        if (h->p < h->end && *h->p == '}') {
            h->p++;
            break;
        }
        return AM_FAIL_OFS(err, AM_E_FORMAT, NULL, ami_hdr_ofs(h), "npy header: expected ',' or '}'");
    }
    /* Padding: spaces and the final newline. Old writers padded with NULs. */
    while (h->p < h->end && (*h->p == ' ' || *h->p == '\n' || *h->p == '\r' || *h->p == '\t' ||
                             *h->p == '\0'))
        h->p++;
    if (h->p != h->end)
        return AM_FAIL_OFS(err, AM_E_FORMAT, NULL, ami_hdr_ofs(h), "npy header: junk after '}'");
    if (!have_descr || !have_fortran || !have_shape)
        return AM_FAIL_OFS(err, AM_E_FORMAT, NULL, h->base,
                           "npy header: missing key '%s'",
                           !have_descr ? "descr" : !have_fortran ? "fortran_order" : "shape");
    return AM_OK;
}

typedef struct ami_npy_type {
    am_dtype dtype;
    size_t item;    /* bytes per element in the file */
    size_t unit;    /* bytes per swapped unit: item, or 4 for strings */
    size_t chars;   /* <U width */
    bool big;       /* the file's byte order is big-endian */
} ami_npy_type;

static am_status ami_parse_descr(const char *d, uint64_t ofs, ami_npy_type *t, am_error *err)
{
    const char *p = d;
    char order = '=';
    if (*p == '<' || *p == '>' || *p == '=' || *p == '|') order = *p++;
    char kind = *p ? *p++ : '\0';
    if (kind == 'O')
        return AM_FAIL_OFS(err, AM_E_UNSUPPORTED, NULL, ofs,
                           "dtype '%s': pickled object arrays are refused (loading them would "
                           "run arbitrary code)", d);
    uint64_t size = 0;
    bool digits = false;
    while (*p >= '0' && *p <= '9') {
        if (size > 100000000u)
            return AM_FAIL_OFS(err, AM_E_LIMIT, NULL, ofs, "dtype '%s': item size too large", d);
        size = size * 10 + (uint64_t)(*p++ - '0');
        digits = true;
    }
    if (*p) return AM_FAIL_OFS(err, AM_E_DTYPE, NULL, ofs, "unsupported dtype '%s'", d);
    memset(t, 0, sizeof *t);
    if (kind == 'f' && size == 4) t->dtype = AM_DTYPE_F32;
    else if (kind == 'f' && size == 8) t->dtype = AM_DTYPE_F64;
    else if (kind == 'i' && size == 4) t->dtype = AM_DTYPE_I32;
    else if (kind == 'i' && size == 8) t->dtype = AM_DTYPE_I64;
    else if (kind == 'u' && size == 1) t->dtype = AM_DTYPE_U8;
    else if ((kind == 'b' && size == 1) || (kind == '?' && !digits)) t->dtype = AM_DTYPE_BOOL;
    else if (kind == 'U') t->dtype = AM_DTYPE_STR;
    else return AM_FAIL_OFS(err, AM_E_DTYPE, NULL, ofs, "unsupported dtype '%s'", d);
    if (t->dtype == AM_DTYPE_STR) {
        t->chars = (size_t)size;
        t->item = (size_t)size * 4;
        t->unit = 4;
    } else {
        t->item = am_dtype_size(t->dtype);
        t->unit = t->item;
    }
    /* '|' means "byte order not applicable": only meaningful for one-byte items. */
    if (order == '|' && t->unit > 1)
        return AM_FAIL_OFS(err, AM_E_DTYPE, NULL, ofs, "dtype '%s': '|' needs a byte order", d);
    t->big = order == '>' || (order == '=' && ami_host_big_endian());
    return AM_OK;
}

/* Walks destination (C-order) indices for source elements read in file order: identity for
 * C order, a mixed-radix counter with the first axis fastest for Fortran order. */
typedef struct ami_order_iter {
    bool fortran;
    int ndim;
    size_t shape[AM_MAX_DIMS], cstride[AM_MAX_DIMS], idx[AM_MAX_DIMS];
    size_t next_c, dst;
} ami_order_iter;

static void ami_order_init(ami_order_iter *it, bool fortran, int ndim, const size_t *shape)
{
    memset(it, 0, sizeof *it);
    it->fortran = fortran && ndim > 1;
    it->ndim = ndim;
    for (int k = 0; k < ndim; k++) it->shape[k] = shape[k];
    if (ndim > 0) {
        it->cstride[ndim - 1] = 1;
        for (int k = ndim - 2; k >= 0; k--) it->cstride[k] = it->cstride[k + 1] * shape[k + 1];
    }
}

static size_t ami_order_next(ami_order_iter *it)
{
    if (!it->fortran) return it->next_c++;
    size_t d = it->dst;
    for (int k = 0; k < it->ndim; k++) {
        it->idx[k]++;
        it->dst += it->cstride[k];
        if (it->idx[k] < it->shape[k]) break;
        it->dst -= it->cstride[k] * it->shape[k];
        it->idx[k] = 0;
    }
    return d;
}

static size_t ami_utf8_encode(uint32_t c, char *out)
{
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (char)(0xC0 | (c >> 6));
        out[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (char)(0xE0 | (c >> 12));
        out[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        out[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (c >> 18));
    out[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((c >> 6) & 0x3F));
    out[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

static uint32_t ami_load_u32(const unsigned char *p, bool big)
{
    return big ? ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3])
               : ((uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0]);
}

/* Decode one fixed-width UTF-32 item into a fresh UTF-8 string. */
static am_status ami_decode_str(const unsigned char *src, size_t chars, bool big, uint64_t ofs,
                                size_t index, char **out, am_error *err)
{
    size_t len = chars;
    while (len > 0 && ami_load_u32(src + 4 * (len - 1), big) == 0) len--;
    size_t bytes = 0;
    for (size_t i = 0; i < len; i++) {
        uint32_t c = ami_load_u32(src + 4 * i, big);
        uint64_t at = ofs + 4 * i;
        if (c == 0)
            return AM_FAIL_OFS(err, AM_E_UTF8, NULL, at, "string %zu: embedded NUL character", index);
        if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
            return AM_FAIL_OFS(err, AM_E_UTF8, NULL, at,
                               "string %zu: invalid code point U+%04" PRIX32, index, c);
        bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    }
    char *s = am_alloc(bytes + 1);
    if (!s) return AM_FAIL(err, AM_E_NOMEM, "string of %zu bytes", bytes + 1);
    size_t n = 0;
    for (size_t i = 0; i < len; i++) n += ami_utf8_encode(ami_load_u32(src + 4 * i, big), s + n);
    s[n] = '\0';
    *out = s;
    return AM_OK;
}

am_status ami_npy_header_bytes(const unsigned char *b, size_t len, size_t *need, am_error *err)
{
    *need = 0;
    if (len < AMI_NPY_MAGIC_LEN + 2) {
        if (len == 0 || memcmp(b, AMI_NPY_MAGIC, len < AMI_NPY_MAGIC_LEN ? len : AMI_NPY_MAGIC_LEN) == 0)
            return AM_FAIL_OFS(err, AM_E_TRUNCATED, NULL, len, "npy file ends inside the magic");
    }
    if (memcmp(b, AMI_NPY_MAGIC, len < AMI_NPY_MAGIC_LEN ? len : AMI_NPY_MAGIC_LEN) != 0)
        return AM_FAIL_OFS(err, AM_E_FORMAT, NULL, 0, "not a .npy file (bad magic)");
    unsigned major = b[6], minor = b[7];
    if (major < 1 || major > 3 || minor != 0)
        return AM_FAIL_OFS(err, AM_E_UNSUPPORTED, NULL, 6, "npy format version %u.%u", major, minor);
    size_t lensz = major == 1 ? 2 : 4;
    size_t hstart = 8 + lensz;
    if (len < hstart)
        return AM_FAIL_OFS(err, AM_E_TRUNCATED, NULL, len, "npy file ends inside the header length");
    uint32_t hlen = major == 1 ? (uint32_t)b[8] | (uint32_t)b[9] << 8 : ami_load_u32(b + 8, false);
    if (hlen > AMI_NPY_MAX_HEADER)
        return AM_FAIL_OFS(err, AM_E_LIMIT, NULL, 8, "npy header of %" PRIu32 " bytes is too long",
                           hlen);
    *need = hstart + hlen;
    return AM_OK;
}

/* Bytes decoding an array allocates beyond its input: the data (numbers), or per string a
 * pointer, one am_alloc'd block with its overhead, up to 4 UTF-8 bytes a character and the NUL.
 * The real cost, not the file's: '<U0' takes no file bytes and ~73 bytes an element decoded. */
static am_status ami_npy_cost(const ami_npy_type *t, uint64_t count, uint64_t data_bytes,
                              uint64_t ofs, uint64_t *cost, am_error *err)
{
    if (t->dtype != AM_DTYPE_STR) {
        *cost = data_bytes;
        return AM_OK;
    }
    uint64_t each = (uint64_t)sizeof(char *) + AMI_ALLOC_OVERHEAD + 1;
    if (t->chars > (UINT64_MAX - each) / 4 || (count && (each + 4 * (uint64_t)t->chars) >
                                                            UINT64_MAX / count))
        return AM_FAIL_OFS(err, AM_E_LIMIT, NULL, ofs, "npy shape: string size overflows");
    *cost = count * (each + 4 * (uint64_t)t->chars);
    return AM_OK;
}

am_status ami_npy_head_parse(const unsigned char *b, size_t len, const am_npz_opts *opts,
                             ami_npy_head *head, am_error *err)
{
    memset(head, 0, sizeof *head);
    uint64_t limit = opts && opts->max_bytes ? opts->max_bytes : AMI_NPY_DEFAULT_MAX_BYTES;
    uint64_t max_bytes = ami_budget(limit);
    size_t need = 0;
    AMI_TRY(ami_npy_header_bytes(b, len, &need, err));
    size_t hstart = b[6] == 1 ? 10 : 12; /* magic, version, then a 2- or 4-byte length */
    if (len < need)
        return AM_FAIL_OFS(err, AM_E_TRUNCATED, NULL, len, "npy header needs %zu bytes, file ends",
                           need - hstart);
    ami_hdr h = {(const char *)b + hstart, (const char *)b + hstart, (const char *)b + need,
                 hstart};
    ami_npy_info info;
    memset(&info, 0, sizeof info);
    AMI_TRY(ami_hdr_parse(&h, max_bytes, &info, err));

    ami_npy_type t;
    AMI_TRY(ami_parse_descr(info.descr, hstart, &t, err));

    /* Overflow-safe sizes: count, file bytes, and what decoding will allocate. */
    uint64_t count = 1;
    for (int k = 0; k < info.ndim; k++) {
        uint64_t d = info.dims[k];
        if (d != 0 && count > UINT64_MAX / d)
            return AM_FAIL_OFS(err, AM_E_LIMIT, NULL, hstart, "npy shape: element count overflows");
        count *= d;
    }
    if (t.item != 0 && count > UINT64_MAX / t.item)
        return AM_FAIL_OFS(err, AM_E_LIMIT, NULL, hstart, "npy shape: byte size overflows");
    uint64_t data_bytes = count * t.item, cost = 0;
    AMI_TRY(ami_npy_cost(&t, count, data_bytes, hstart, &cost, err));
    if (cost > max_bytes || cost > (uint64_t)SIZE_MAX / 2 || data_bytes > (uint64_t)SIZE_MAX / 2)
        return AM_FAIL_OFS(err, AM_E_LIMIT, NULL, hstart,
                           "array of %" PRIu64 " elements of '%s' would take %" PRIu64
                           " bytes decoded, over the limit of %" PRIu64 " bytes",
                           count, info.descr, cost, max_bytes);
    head->dtype = t.dtype;
    head->ndim = info.ndim;
    for (int k = 0; k < info.ndim; k++) head->shape[k] = (size_t)info.dims[k];
    head->count = (size_t)count;
    head->str_chars = t.chars;
    head->item = t.item;
    head->fortran = info.fortran;
    head->big = t.big;
    head->data_ofs = need;
    head->data_bytes = data_bytes;
    head->cost = cost;
    head->in_place = t.dtype != AM_DTYPE_STR && !(info.fortran && info.ndim > 1) &&
                     !(t.big != ami_host_big_endian() && t.item > 1);
    snprintf(head->descr, sizeof head->descr, "%s", info.descr);
    return AM_OK;
}

static am_status ami_npy_parse(const unsigned char *b, size_t len, const am_npz_opts *opts,
                               am_array *arr, unsigned char **own, am_error *err)
{
    ami_npy_head hd;
    AMI_TRY(ami_npy_head_parse(b, len, opts, &hd, err));
    uint64_t data_ofs = hd.data_ofs, data_bytes = hd.data_bytes;
    if ((uint64_t)len - data_ofs < data_bytes) {
        char sh[AM_MAX_DIMS * 22 + 4];
        size_t n = 0;
        sh[n++] = '(';
        for (int k = 0; k < hd.ndim; k++)
            n += (size_t)snprintf(sh + n, sizeof sh - n, "%s%zu", k ? "," : "", hd.shape[k]);
        snprintf(sh + n, sizeof sh - n, ")");
        return AM_FAIL_OFS(err, AM_E_TRUNCATED, NULL, len,
                           "header shape %s of '%s' needs %" PRIu64 " data bytes from byte %" PRIu64
                           ", only %" PRIu64 " present",
                           sh, hd.descr, data_bytes, data_ofs, (uint64_t)len - data_ofs);
    }

    arr->dtype = hd.dtype;
    arr->ndim = hd.ndim;
    for (int k = 0; k < hd.ndim; k++) arr->shape[k] = hd.shape[k];
    arr->count = hd.count;
    arr->was_fortran = hd.fortran;
    arr->was_big_endian = hd.big;
    arr->str_chars = hd.str_chars;

    const unsigned char *src = b + data_ofs;
    size_t item = hd.item;
    ami_order_iter it;
    ami_order_init(&it, hd.fortran, hd.ndim, arr->shape);
    if (hd.dtype == AM_DTYPE_STR) {
        arr->strings = am_alloc_array(arr->count ? arr->count : 1, sizeof *arr->strings);
        if (!arr->strings) return AM_FAIL(err, AM_E_NOMEM, "%zu strings", arr->count);
        for (size_t s = 0; s < arr->count; s++) {
            size_t d = ami_order_next(&it);
            AMI_TRY(ami_decode_str(src + s * item, hd.str_chars, hd.big, data_ofs + s * item, s,
                                   &arr->strings[d], err));
        }
        return AM_OK;
    }
    bool swap = hd.big != ami_host_big_endian() && item > 1;
    if (own && *own == b && hd.in_place) {
        /* The caller's buffer becomes the array: slide the data to its start and trim the
         * tail. No second allocation of the array's size, no page faults on fresh memory. */
        unsigned char *buf = *own;
        if (data_bytes && data_ofs) memmove(buf, buf + data_ofs, (size_t)data_bytes);
        unsigned char *fit = am_realloc(buf, data_bytes ? (size_t)data_bytes : 1);
        arr->data = fit ? fit : buf;
        *own = NULL;
        if (hd.dtype == AM_DTYPE_BOOL) {
            unsigned char *o = arr->data;
            for (size_t i = 0; i < arr->count; i++) o[i] = o[i] != 0;
        }
        return AM_OK;
    }
    unsigned char *dst = am_alloc(data_bytes ? (size_t)data_bytes : 1);
    if (!dst) return AM_FAIL(err, AM_E_NOMEM, "%" PRIu64 " bytes of array data", data_bytes);
    arr->data = dst;
    if (!it.fortran && !swap) {
        if (data_bytes) memcpy(dst, src, (size_t)data_bytes);
    } else {
        for (size_t s = 0; s < arr->count; s++) {
            unsigned char *o = dst + ami_order_next(&it) * item;
            memcpy(o, src + s * item, item);
            if (swap) ami_swap_bytes(o, item);
        }
    }
    if (hd.dtype == AM_DTYPE_BOOL)
        for (size_t i = 0; i < arr->count; i++) dst[i] = dst[i] != 0;
    return AM_OK;
}

am_status am_npy_parse(const void *buf, size_t len, const am_npz_opts *opts, am_array *arr,
                       am_error *err)
{
    assert(arr && (buf || len == 0));
    memset(arr, 0, sizeof *arr);
    static const unsigned char empty[1] = {0};
    am_scope sc;
    am_scope_enter(&sc, opts ? &opts->ctx : NULL);
    am_status s = ami_npy_parse(buf ? buf : empty, len, opts, arr, NULL, err);
    if (s != AM_OK) am_array_clear(arr);
    am_scope_leave(&sc, NULL);
    return s;
}

am_status ami_npy_parse_adopt(unsigned char **buf, size_t len, const am_npz_opts *opts,
                              am_array *arr, am_error *err)
{
    assert(buf && arr);
    memset(arr, 0, sizeof *arr);
    static const unsigned char empty[1] = {0};
    am_status s = ami_npy_parse(*buf ? *buf : empty, len, opts, arr, *buf ? buf : NULL, err);
    if (s != AM_OK) am_array_clear(arr);
    return s;
}

/* ---- writing -------------------------------------------------------------------------- */

/* Decode one UTF-8 code point; returns its length or 0 if invalid (overlong, surrogate...). */
static size_t ami_utf8_decode(const unsigned char *s, uint32_t *cp)
{
    unsigned char c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t n;
    uint32_t v, min;
    if ((c & 0xE0) == 0xC0) { n = 2; v = c & 0x1Fu; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { n = 3; v = c & 0x0Fu; min = 0x800; }
    else if ((c & 0xF8) == 0xF0) { n = 4; v = c & 0x07u; min = 0x10000; }
    else return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        v = v << 6 | (s[i] & 0x3Fu);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return n;
}

static am_status ami_str_chars(const char *s, size_t index, size_t *chars, am_error *err)
{
    size_t n = 0;
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        uint32_t cp;
        size_t k = ami_utf8_decode(p, &cp);
        if (!k) return AM_FAIL(err, AM_E_UTF8, "string %zu is not valid UTF-8", index);
        p += k;
        n++;
    }
    *chars = n;
    return AM_OK;
}

am_status am_npy_serialize(const am_array *arr, am_buf *out, am_error *err)
{
    assert(arr && out);
    AMI_CHECK(err, arr->ndim >= 0 && arr->ndim <= AM_MAX_DIMS, AM_E_ARG, "ndim %d", arr->ndim);
    AMI_CHECK(err, arr->dtype < AM_DTYPE_COUNT, AM_E_DTYPE, "dtype %d", (int)arr->dtype);
    uint64_t count = 1;
    for (int k = 0; k < arr->ndim; k++) {
        uint64_t d = arr->shape[k];
        AMI_CHECK(err, d == 0 || count <= UINT64_MAX / d, AM_E_LIMIT, "element count overflows");
        count *= d;
    }
    AMI_CHECK(err, count == arr->count, AM_E_ARG, "array '%s': count %zu, shape holds %" PRIu64,
              arr->name ? arr->name : "", arr->count, count);
    bool is_str = arr->dtype == AM_DTYPE_STR;
    assert(count == 0 || (is_str ? arr->strings != NULL : arr->data != NULL));

    size_t chars = arr->str_chars;
    if (is_str) {
        for (size_t i = 0; i < arr->count; i++) {
            size_t len = 0;
            AMI_TRY(ami_str_chars(arr->strings[i], i, &len, err));
            if (len > chars) chars = len;
        }
        /* No floor of 1: '<U0' (every string empty) is what the reader accepts, and numpy
         * reads it too; widening it made the reader and the writer disagree. */
    }
    size_t item = is_str ? chars * 4 : am_dtype_size(arr->dtype);
    AMI_CHECK(err, item == 0 || count <= (SIZE_MAX / 2) / item, AM_E_LIMIT,
              "array '%s' is too large", arr->name ? arr->name : "");

    static const char *const descr[AM_DTYPE_COUNT] = {"<f4", "<f8", "<i4", "<i8", "|u1", "|b1", "<U"};
    char hdr[512];
    int n = snprintf(hdr, sizeof hdr, "{'descr': '%s", descr[arr->dtype]);
    if (is_str) n += snprintf(hdr + n, sizeof hdr - (size_t)n, "%zu", chars);
    n += snprintf(hdr + n, sizeof hdr - (size_t)n, "', 'fortran_order': False, 'shape': (");
    for (int k = 0; k < arr->ndim; k++)
        n += snprintf(hdr + n, sizeof hdr - (size_t)n, "%s%zu", k ? ", " : "", arr->shape[k]);
    n += snprintf(hdr + n, sizeof hdr - (size_t)n, "%s), }", arr->ndim == 1 ? "," : "");
    /* pad with spaces so magic + header ends on the 64-byte boundary, then '\n' */
    size_t total = AMI_NPY_MAGIC_LEN + 4 + (size_t)n + 1;
    size_t pad = (AMI_NPY_ALIGN - total % AMI_NPY_ALIGN) % AMI_NPY_ALIGN;
    size_t hlen = (size_t)n + pad + 1;
    unsigned char pre[10];
    memcpy(pre, AMI_NPY_MAGIC, AMI_NPY_MAGIC_LEN);
    pre[6] = 1;
    pre[7] = 0;
    pre[8] = (unsigned char)(hlen & 0xFF);
    pre[9] = (unsigned char)(hlen >> 8);
    am_buf_append(out, pre, sizeof pre);
    am_buf_append(out, hdr, (size_t)n);
    for (size_t i = 0; i < pad; i++) am_buf_append(out, " ", 1);
    am_buf_append(out, "\n", 1);

    bool swap = ami_host_big_endian();
    if (is_str) {
        /* Written straight into the output, padding from a static block: an item may be
         * gigabytes wide ('<U859373932') while the array holds nothing. */
        static const unsigned char zeros[256];
        for (size_t i = 0; i < arr->count && !out->failed; i++) {
            const unsigned char *p = (const unsigned char *)(arr->strings[i] ? arr->strings[i] : "");
            size_t c = 0;
            for (; *p; c++) {
                uint32_t cp = 0;
                p += ami_utf8_decode(p, &cp); /* validated above */
                unsigned char u[4] = {(unsigned char)(cp & 0xFF), (unsigned char)(cp >> 8 & 0xFF),
                                      (unsigned char)(cp >> 16 & 0xFF), (unsigned char)(cp >> 24)};
                am_buf_append(out, u, 4);
            }
            for (size_t left = 4 * (chars - c); left > 0 && !out->failed;) {
                size_t k = left < sizeof zeros ? left : sizeof zeros;
                am_buf_append(out, zeros, k);
                left -= k;
            }
        }
    } else if (arr->dtype == AM_DTYPE_BOOL) {
        const unsigned char *p = arr->data;
        for (size_t i = 0; i < arr->count; i++) {
            unsigned char v = p[i] != 0;
            am_buf_append(out, &v, 1);
        }
    } else if (!swap || item == 1) {
        am_buf_append(out, arr->data, (size_t)count * item);
    } else {
        const unsigned char *p = arr->data;
        for (size_t i = 0; i < arr->count; i++) {
            unsigned char v[8];
            memcpy(v, p + i * item, item);
            ami_swap_bytes(v, item);
            am_buf_append(out, v, item);
        }
    }
    AMI_CHECK(err, !out->failed, AM_E_NOMEM, "serializing array '%s'", arr->name ? arr->name : "");
    return AM_OK;
}
