/* numpy .npz archives: a zip of .npy members ("x.npy" holds array "x"), via libzip.
 *
 * am_npz_load maps the file (POSIX; else reads it whole). Each member is inflated once into a
 * buffer that then becomes the array's data (npy_internal.h), so a float array costs one
 * allocation of its size and no extra copy.
 *
 * Reading opens the caller's buffer as a zip source (no temporary files) with ZIP_CHECKCONS so
 * local and central headers must agree, then works in two passes. First every member's npy
 * header alone is inflated: a member declaring more bytes than its header promises (beyond a
 * little padding) is refused (a zip bomb behind a small header), the archive's total cost is
 * budgeted, and a typed loader checks the shapes, all before any array is read. Then each
 * member is inflated to exactly its declared size, and one byte further: that probe is what
 * makes libzip verify the CRC, and it catches members that inflate past their declared size.
 *
 * Writing serializes every array first, then builds the archive under a temporary name and
 * renames it into place, so a failure leaves no partial output.
 */
#include "anymove/io.h"
#include "npy_internal.h"
#include "core/internal.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <zip.h>
#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define AMI_NPZ_MMAP 1
#endif

/* am_npz_opts.max_bytes when 0: the budget of one archive, all its arrays together. */
#define AMI_NPZ_DEFAULT_MAX_BYTES ((uint64_t)2 << 30)
/* Bytes a member may hold after the data its header promises (numpy ignores them; some writers
 * pad). They are inflated, so the CRC is still checked; a longer tail is refused unread. */
#define AMI_NPZ_TAIL_SLACK 4096u
/* Members get a fixed timestamp so the writer is deterministic (2000-01-01 12:00 UTC). */
#define AMI_NPZ_MTIME ((time_t)946728000)
/* Deflate level 1, not zlib's default 6: float arrays barely compress, and level 6 spent 3x the
 * time for files 2-7% smaller (synth tracks 5000 x 200: 9.79 vs 9.99 MB, 2.8 s vs 0.9 s for the
 * whole command; rig's skin.npz 91 vs 99 kB, half of its write time). Same data either way. */
#define AMI_NPZ_LEVEL 1

static const char *ami_src_name(const char *source) { return source ? source : "<memory>"; }

/* Map a libzip error to our table: the code says whose fault it is. */
static am_status ami_zip_status(int ze)
{
    switch (ze) {
    case ZIP_ER_MEMORY: return AM_E_NOMEM;
    case ZIP_ER_EOF: return AM_E_TRUNCATED;
    case ZIP_ER_MULTIDISK:
    case ZIP_ER_COMPNOTSUPP:
    case ZIP_ER_ENCRNOTSUPP:
    case ZIP_ER_NOPASSWD:
    case ZIP_ER_WRONGPASSWD: return AM_E_UNSUPPORTED;
    default: return AM_E_FORMAT;
    }
}

static bool ami_has_prefix(const void *buf, size_t len, const char *sig)
{
    return len >= 4 && memcmp(buf, sig, 4) == 0;
}

const am_array *am_npz_find(const am_npz *z, const char *name)
{
    if (!z || !name) return NULL;
    for (size_t i = 0; i < z->count; i++)
        if (z->arrays[i].name && strcmp(z->arrays[i].name, name) == 0) return &z->arrays[i];
    return NULL;
}

void am_npz_free(am_npz *z)
{
    if (!z) return;
    for (size_t i = 0; i < z->count; i++) am_array_clear(&z->arrays[i]);
    am_free(z->arrays);
    am_warning_list_free(&z->warnings);
    am_free(z);
}

/* Read up to want bytes of an open member into dst (*got: how many came; fewer at its end). */
static am_status ami_zip_read(zip_file_t *zf, unsigned char *dst, uint64_t want, uint64_t *got,
                              const char *source, const char *member, am_error *err)
{
    while (*got < want) {
        zip_int64_t n = zip_fread(zf, dst + *got, want - *got);
        if (n < 0) {
            zip_error_t *ze = zip_file_get_error(zf);
            return AM_FAIL_AT(err, ami_zip_status(zip_error_code_zip(ze)), source, 0, 0,
                              "member '%s': %s", member, zip_error_strerror(ze));
        }
        if (n == 0) break;
        *got += (uint64_t)n;
    }
    return AM_OK;
}

/* Read one member completely into a fresh buffer. */
static am_status ami_read_member(zip_t *za, zip_uint64_t index, const char *member, uint64_t size,
                                 const char *source, unsigned char **out, am_error *err)
{
    /* not zeroed (am_realloc of NULL): every byte is read below or the buffer is dropped */
    unsigned char *data = am_realloc(NULL, size ? (size_t)size : 1);
    if (!data) return AM_FAIL_AT(err, AM_E_NOMEM, source, 0, 0, "member '%s': %" PRIu64 " bytes",
                                 member, size);
    zip_file_t *zf = zip_fopen_index(za, index, 0);
    if (!zf) {
        zip_error_t *ze = zip_get_error(za);
        am_free(data);
        return AM_FAIL_AT(err, ami_zip_status(zip_error_code_zip(ze)), source, 0, 0,
                          "member '%s': %s", member, zip_error_strerror(ze));
    }
    uint64_t got = 0;
    am_status st = ami_zip_read(zf, data, size, &got, source, member, err);
    if (st == AM_OK && got < size)
        st = AM_FAIL_AT(err, AM_E_TRUNCATED, source, 0, 0,
                        "member '%s' ends after %" PRIu64 " of %" PRIu64 " bytes", member, got,
                        size);
    if (st == AM_OK) {
        unsigned char probe;
        zip_int64_t n = zip_fread(zf, &probe, 1);
        if (n < 0) {
            zip_error_t *ze = zip_file_get_error(zf);
            st = AM_FAIL_AT(err, ami_zip_status(zip_error_code_zip(ze)), source, 0, 0,
                            "member '%s': %s", member, zip_error_strerror(ze));
        } else if (n > 0) {
            st = AM_FAIL_AT(err, AM_E_FORMAT, source, 0, 0,
                            "member '%s' holds more than its declared %" PRIu64 " bytes", member,
                            size);
        }
    }
    zip_fclose(zf);
    if (st != AM_OK) {
        am_free(data);
        return st;
    }
    *out = data;
    return AM_OK;
}

/* A member's failure, named by source and member, with the npy error's offset and detail. */
static am_status ami_member_fail(am_error *err, am_status st, const char *source,
                                 const char *member, const am_error *e)
{
    if (!err) return st;
    char where[64] = "";
    if (e->offset != UINT64_MAX) snprintf(where, sizeof where, " byte %" PRIu64, e->offset);
    return am_error_set(err, st, source, 0, 0, UINT64_MAX, e->src_file, e->src_line, "%s%s: %s",
                        member, where, e->info);
}

/* Inflate just a member's npy header (a few hundred bytes, at most 1 MiB) and parse it. */
static am_status ami_read_head(zip_t *za, zip_uint64_t index, const char *member, uint64_t size,
                               const char *source, const am_npz_opts *opts, ami_npy_head *hd,
                               am_error *err)
{
    zip_file_t *zf = zip_fopen_index(za, index, 0);
    if (!zf) {
        zip_error_t *ze = zip_get_error(za);
        return AM_FAIL_AT(err, ami_zip_status(zip_error_code_zip(ze)), source, 0, 0,
                          "member '%s': %s", member, zip_error_strerror(ze));
    }
    unsigned char pre[12];
    uint64_t want = size < sizeof pre ? size : sizeof pre, got = 0;
    size_t need = 0;
    unsigned char *buf = NULL;
    am_error e;
    memset(&e, 0, sizeof e);
    am_status st = AM_OK;
    for (int pass = 0; pass < 2 && st == AM_OK; pass++) {
        st = ami_zip_read(zf, pass == 0 ? pre : buf, want, &got, source, member, err);
        if (st != AM_OK) break;
        if (pass == 0) {
            st = ami_npy_header_bytes(pre, (size_t)got, &need, &e);
            if (st == AM_OK && need > size) {
                st = AM_FAIL_OFS(&e, AM_E_TRUNCATED, NULL, size,
                                 "npy header needs %zu bytes, the member has %" PRIu64, need, size);
            }
            if (st != AM_OK) {
                st = ami_member_fail(err, st == AM_E_TRUNCATED ? AM_E_SHAPE : st, source, member,
                                     &e);
                break;
            }
            buf = am_realloc(NULL, need);
            if (!buf) {
                st = AM_FAIL_AT(err, AM_E_NOMEM, source, 0, 0, "member '%s': header", member);
                break;
            }
            /* A header may be shorter than the 12 bytes read to find its length. */
            if (got > need) got = need;
            memcpy(buf, pre, (size_t)got);
            want = need;
        } else if (got < want) {
            st = AM_FAIL_AT(err, AM_E_TRUNCATED, source, 0, 0,
                            "member '%s' ends inside its npy header", member);
        }
    }
    zip_fclose(zf);
    if (st == AM_OK) {
        st = ami_npy_head_parse(buf, need, opts, hd, &e);
        if (st != AM_OK) st = ami_member_fail(err, st, source, member, &e);
    }
    am_free(buf);
    return st;
}

static void ami_head_shape(const ami_npy_head *hd, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "(");
    for (int k = 0; k < hd->ndim && n < size; k++)
        n += (size_t)snprintf(buf + n, size - n, "%s%zu", k ? "," : "", hd->shape[k]);
    if (n < size) snprintf(buf + n, size - n, ")");
}

static am_status ami_npz_read(zip_t *za, const char *source, const am_npz_opts *opts,
                              ami_npz_check_fn check, am_npz *z, am_error *err)
{
    zip_int64_t n = zip_get_num_entries(za, 0);
    if (n < 0) return AM_FAIL_AT(err, AM_E_FORMAT, source, 0, 0, "cannot list the zip archive");
    if (n == 0) return check ? check(z, source, err) : AM_OK;
    uint64_t limit = opts && opts->max_bytes ? opts->max_bytes : AMI_NPZ_DEFAULT_MAX_BYTES;
    /* The member table itself: a central directory lists a member in 46 bytes. */
    uint64_t per_member = sizeof(am_array) + sizeof(zip_uint64_t) + sizeof(uint64_t);
    AMI_CHECK(err, (uint64_t)n <= SIZE_MAX / per_member, AM_E_LIMIT, "%" PRId64 " members",
              (int64_t)n);
    AMI_TRY(AMI_BUDGET_CHECK(err, source, (uint64_t)n * per_member, limit, "%" PRId64 " members",
                             (int64_t)n));
    z->arrays = am_alloc_array((size_t)n, sizeof *z->arrays);
    zip_uint64_t *member_of = am_alloc_array((size_t)n, sizeof *member_of);
    uint64_t *member_size = am_alloc_array((size_t)n, sizeof *member_size);
    if (!z->arrays || !member_of || !member_size) {
        am_free(member_of);
        am_free(member_size);
        return AM_FAIL_AT(err, AM_E_NOMEM, source, 0, 0, "%" PRId64 " members", (int64_t)n);
    }
    uint64_t total = (uint64_t)n * per_member;
    am_status st = AM_OK;
    ami_names names = {0}; /* the arrays' names so far: a zip may list a million members */

    /* Pass 1: every member's header, nothing else inflated. The archive's cost (each member's
     * buffer plus what decoding it allocates) is then known, budgeted and shape-checked before
     * a single array is read: a member whose header says [30,300,3] but which inflates to
     * 1 GiB is refused here, as is a consistent 1 GiB member beside mismatched ones. */
    for (zip_uint64_t i = 0; i < (zip_uint64_t)n && st == AM_OK; i++) {
        zip_stat_t zs;
        zip_stat_init(&zs);
        if (zip_stat_index(za, i, 0, &zs) != 0 || !(zs.valid & ZIP_STAT_NAME) ||
            !(zs.valid & ZIP_STAT_SIZE)) {
            zip_error_t *ze = zip_get_error(za);
            st = AM_FAIL_AT(err, ami_zip_status(zip_error_code_zip(ze)), source, 0, 0,
                            "member %" PRIu64 ": %s", (uint64_t)i, zip_error_strerror(ze));
            break;
        }
        const char *member = zs.name;
        size_t mlen = strlen(member);
        if (mlen == 0 || member[mlen - 1] == '/') continue; /* directories hold no array */
        size_t keylen = mlen;
        if (mlen > 4 && strcmp(member + mlen - 4, ".npy") == 0) keylen -= 4;
        ami_npy_head hd;
        st = ami_read_head(za, i, member, zs.size, source, opts, &hd, err);
        if (st != AM_OK) break;
        uint64_t promised = hd.data_ofs + hd.data_bytes;
        if (zs.size > promised + AMI_NPZ_TAIL_SLACK) {
            char sh[AM_MAX_DIMS * 22 + 4];
            ami_head_shape(&hd, sh, sizeof sh);
            st = AM_FAIL_AT(err, AM_E_FORMAT, source, 0, 0,
                            "member '%s' inflates to %" PRIu64 " bytes but its npy header "
                            "promises %" PRIu64 " (shape %s of '%s'): the rest is not inflated",
                            member, (uint64_t)zs.size, promised, sh, hd.descr);
            break;
        }
        am_array *arr = &z->arrays[z->count];
        arr->dtype = hd.dtype;
        arr->ndim = hd.ndim;
        memcpy(arr->shape, hd.shape, sizeof arr->shape);
        arr->count = hd.count;
        arr->str_chars = hd.str_chars;
        arr->was_fortran = hd.fortran;
        arr->was_big_endian = hd.big;
        member_of[z->count] = i;
        member_size[z->count] = zs.size;
        z->count++;
        if (!(arr->name = am_strndup(member, keylen))) {
            st = AM_FAIL_AT(err, AM_E_NOMEM, source, 0, 0, "member name");
            break;
        }
        int32_t prev;
        if (ami_names_add(&names, arr->name, strlen(arr->name), (int32_t)z->count - 1, &prev) != AM_OK)
            st = AM_FAIL_AT(err, AM_E_NOMEM, source, 0, 0, "member names");
        else if (prev >= 0)
            st = AM_FAIL_AT(err, AM_E_DUPLICATE, source, 0, 0, "array '%s' appears twice", arr->name);
        uint64_t cost = zs.size + (hd.in_place ? 0 : hd.cost);
        total = total > UINT64_MAX - cost ? UINT64_MAX : total + cost;
    }
    ami_names_free(&names);
    if (st == AM_OK)
        st = AMI_BUDGET_CHECK(err, source, total, limit, "%zu arrays", z->count);
    if (st == AM_OK && check) st = check(z, source, err);

    /* Pass 2: inflate each member to exactly its size; the probe byte after it makes libzip
     * verify the CRC. */
    for (size_t a = 0; a < z->count && st == AM_OK; a++) {
        am_array *arr = &z->arrays[a];
        char member[1100];
        snprintf(member, sizeof member, "%s", zip_get_name(za, member_of[a], 0));
        unsigned char *data = NULL;
        st = ami_read_member(za, member_of[a], member, member_size[a], source, &data, err);
        if (st != AM_OK) break;
        char *name = arr->name;
        am_error e;
        memset(&e, 0, sizeof e);
        st = ami_npy_parse_adopt(&data, (size_t)member_size[a], opts, arr, err ? &e : NULL);
        arr->name = name;
        am_free(data); /* NULL when the array took the buffer over */
        if (st != AM_OK) {
            /* The member was read completely and passed its CRC, so a shape that needs more
             * bytes than it holds is a lying header, not a cut-off file. */
            st = ami_member_fail(err, st == AM_E_TRUNCATED ? AM_E_SHAPE : st, source, member, &e);
        }
    }
    am_free(member_of);
    am_free(member_size);
    return st;
}

static am_status ami_npz_read_mem(const void *buf, size_t len, const char *source,
                                  const am_npz_opts *opts, ami_npz_check_fn check, am_npz **out,
                                  am_error *err)
{
    assert(out);
    *out = NULL;
    const char *name = ami_src_name(source);
    if (!buf || len == 0) return AM_FAIL_AT(err, AM_E_TRUNCATED, name, 0, 0, "empty file");
    if (len < 22)
        return AM_FAIL_AT(err, ami_has_prefix(buf, len, "PK\x03\x04") ? AM_E_TRUNCATED : AM_E_FORMAT,
                          name, 0, 0, "%zu bytes is too short for a zip archive", len);

    zip_error_t zerr;
    zip_error_init(&zerr);
    zip_source_t *src = zip_source_buffer_create(buf, len, 0, &zerr);
    if (!src) {
        am_status st = ami_zip_status(zip_error_code_zip(&zerr));
        st = AM_FAIL_AT(err, st, name, 0, 0, "%s", zip_error_strerror(&zerr));
        zip_error_fini(&zerr);
        return st;
    }
    zip_t *za = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &zerr);
    if (!za) {
        int code = zip_error_code_zip(&zerr);
        am_status st = ami_zip_status(code);
        /* A local file header at the start but no end-of-central-directory record: the
         * archive was cut off (an interrupted download or copy), not some other file. */
        if (code == ZIP_ER_NOZIP && ami_has_prefix(buf, len, "PK\x03\x04"))
            st = AM_FAIL_AT(err, AM_E_TRUNCATED, name, 0, 0,
                            "zip archive is truncated (no end of central directory)");
        else if (code == ZIP_ER_NOZIP)
            st = AM_FAIL_AT(err, AM_E_FORMAT, name, 0, 0, "not a zip archive");
        else
            st = AM_FAIL_AT(err, st, name, 0, 0, "zip archive: %s", zip_error_strerror(&zerr));
        zip_error_fini(&zerr);
        zip_source_free(src);
        return st;
    }
    zip_error_fini(&zerr);

    am_npz *z = am_alloc(sizeof *z);
    am_status st = z ? ami_npz_read(za, name, opts, check, z, err)
                     : AM_FAIL_AT(err, AM_E_NOMEM, name, 0, 0, "npz");
    zip_discard(za); /* read-only: discard closes without writing and frees the source */
    if (st != AM_OK) {
        am_npz_free(z);
        return st;
    }
    *out = z;
    return AM_OK;
}

static am_status ami_npz_load(const char *path, const am_npz_opts *opts, ami_npz_check_fn check,
                              am_npz **out, am_error *err)
{
    assert(path && out);
    *out = NULL;
#ifdef AMI_NPZ_MMAP
    /* Map the file: libzip reads members straight from the page cache (no buffer of the
     * file's size to allocate, zero and fill). Anything unusual goes through am_file_read,
     * which also produces the error messages. (A file truncated by another process while
     * mapped would raise SIGBUS; inputs are not expected to change under a running command.) */
    int fd = open(path, O_RDONLY);
    if (fd >= 0) {
        struct stat sb;
        void *map = MAP_FAILED;
        size_t mlen = 0;
        if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0 &&
            (uint64_t)sb.st_size <= ((uint64_t)2 << 30)) {
            mlen = (size_t)sb.st_size;
            map = mmap(NULL, mlen, PROT_READ, MAP_PRIVATE, fd, 0);
        }
        close(fd);
        if (map != MAP_FAILED) {
            am_status st = ami_npz_read_mem(map, mlen, path, opts, check, out, err);
            munmap(map, mlen);
            return st;
        }
    }
#endif
    char *data = NULL;
    size_t len = 0;
    AMI_TRY(am_file_read(path, 0, &data, &len, err));
    am_status st = ami_npz_read_mem(data, len, path, opts, check, out, err);
    am_free(data);
    return st;
}

am_status ami_npz_read_mem_checked(const void *buf, size_t len, const char *source,
                                   const am_npz_opts *opts, ami_npz_check_fn check, am_npz **out,
                                   am_error *err)
{
    am_scope sc;
    am_scope_enter(&sc, opts ? &opts->ctx : NULL);
    am_status st = ami_npz_read_mem(buf, len, source, opts, check, out, err);
    am_scope_leave(&sc, st >= 0 ? &(*out)->warnings : NULL);
    return st;
}

am_status am_npz_read_mem(const void *buf, size_t len, const char *source,
                          const am_npz_opts *opts, am_npz **out, am_error *err)
{
    return ami_npz_read_mem_checked(buf, len, source, opts, NULL, out, err);
}

am_status ami_npz_load_checked(const char *path, const am_npz_opts *opts, ami_npz_check_fn check,
                               am_npz **out, am_error *err)
{
    am_scope sc;
    am_scope_enter(&sc, opts ? &opts->ctx : NULL);
    am_status st = ami_npz_load(path, opts, check, out, err);
    am_scope_leave(&sc, st >= 0 ? &(*out)->warnings : NULL);
    return st;
}

am_status am_npz_load(const char *path, const am_npz_opts *opts, am_npz **out, am_error *err)
{
    return ami_npz_load_checked(path, opts, NULL, out, err);
}

/* An archive with no members: libzip refuses to create one, so write the bare
 * end-of-central-directory record ourselves. */
static am_status ami_write_empty_zip(const char *path, am_error *err)
{
    static const unsigned char eocd[22] = {'P', 'K', 5, 6};
    return am_file_write(path, eocd, sizeof eocd, err);
}

am_status am_npz_write(const char *path, const am_array *arrays, size_t count, bool compress,
                       am_error *err)
{
    assert(path && (arrays || count == 0));
    for (size_t i = 0; i < count; i++) {
        const char *nm = arrays[i].name;
        assert(nm);
        AMI_CHECK(err, nm[0], AM_E_ARG, "array %zu has an empty name", i);
        AMI_CHECK(err, strlen(nm) < 1000, AM_E_ARG, "array name too long");
        for (size_t k = 0; k < i; k++)
            AMI_CHECK(err, strcmp(arrays[k].name, nm) != 0, AM_E_DUPLICATE,
                      "array '%s' given twice", nm);
    }
    if (count == 0) return ami_write_empty_zip(path, err);
    AMI_CHECK(err, strlen(path) < 4000, AM_E_ARG, "path too long");

    /* libzip reads the buffers during zip_close, so they all live until then. */
    am_buf *bufs = am_alloc_array(count, sizeof *bufs);
    if (!bufs) return AM_FAIL_AT(err, AM_E_NOMEM, path, 0, 0, "%zu arrays", count);
    am_status st = AM_OK;
    for (size_t i = 0; i < count && st == AM_OK; i++) {
        st = am_npy_serialize(&arrays[i], &bufs[i], err);
        if (st != AM_OK) am_error_set_file(err, path);
    }
    char tmp[4200];
    zip_t *za = NULL;
    if (st == AM_OK) {
        am_tmp_path(tmp, sizeof tmp, path);
        int zcode = 0;
        za = zip_open(tmp, ZIP_CREATE | ZIP_TRUNCATE, &zcode);
        if (!za) {
            zip_error_t ze;
            zip_error_init_with_code(&ze, zcode);
            st = AM_FAIL_AT(err, AM_E_WRITE, path, 0, 0, "%s", zip_error_strerror(&ze));
            zip_error_fini(&ze);
        }
    }
    for (size_t i = 0; i < count && st == AM_OK; i++) {
        char member[1024];
        snprintf(member, sizeof member, "%s.npy", arrays[i].name);
        zip_source_t *src = zip_source_buffer(za, bufs[i].data, bufs[i].len, 0);
        zip_int64_t idx = src ? zip_file_add(za, member, src, ZIP_FL_ENC_UTF_8) : -1;
        if (idx < 0) {
            zip_source_free(src);
        } else if (zip_set_file_compression(za, (zip_uint64_t)idx,
                                            compress ? ZIP_CM_DEFLATE : ZIP_CM_STORE, compress ? AMI_NPZ_LEVEL : 0) == 0 &&
                   zip_file_set_mtime(za, (zip_uint64_t)idx, AMI_NPZ_MTIME, 0) == 0) {
            continue;
        }
        st = AM_FAIL_AT(err, ami_zip_status(zip_error_code_zip(zip_get_error(za))) == AM_E_NOMEM
                                 ? AM_E_NOMEM : AM_E_WRITE,
                        path, 0, 0, "adding '%s': %s", member, zip_strerror(za));
    }
    if (za) {
        if (st == AM_OK && zip_close(za) != 0) {
            st = AM_FAIL_AT(err, AM_E_WRITE, path, 0, 0, "%s", zip_strerror(za));
            zip_discard(za);
            am_file_discard(tmp);
        } else if (st != AM_OK) {
            zip_discard(za);
            am_file_discard(tmp);
        } else {
            st = am_file_commit(tmp, path, err);
        }
    }
    for (size_t i = 0; i < count; i++) am_buf_free(&bufs[i]);
    am_free(bufs);
    return st;
}
