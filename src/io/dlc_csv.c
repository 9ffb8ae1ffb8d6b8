/* DeepLabCut CSV: analysis files (3 header rows scorer / bodyparts / coords, or 4 with
 * individuals for multi-animal projects) and labeled-data files (several index columns,
 * coords x, y without likelihood).
 *
 * Decisions (pandas' reading of the same files, which DLC itself uses, where it has one):
 * - Index columns: the first column, plus the empty cells after it in the coords row.
 * - A row with fewer cells than the header is padded with empty cells (pandas does so; the
 *   labeled-data sample has one), with a warning; a row with more is refused (ragged).
 * - An empty x or y cell = not seen; likelihood absent = 1 where x and y are given.
 *   Likelihood is clamped into [0, 1] (DLC writes values like 1.0000001).
 * - Several individuals: --individual NAME, else the one with the highest mean likelihood
 *   (ties: the first); the others are named in a warning. DLC's "single" individual holds its
 *   unique bodyparts (arena landmarks) and is only taken when asked for.
 * - The frame index column is not trusted for order: rows are frames in file order.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "io/trackers_internal.h"

typedef struct {
    int ind, part;   /* indices into the individuals / bodyparts lists */
    int coord;       /* 0 x, 1 y, 2 likelihood, -1 other */
} ami_dlc_col;

/* Distinct names (individuals, bodyparts) in order of appearance, found by hash: a header
 * row of a million columns is a million probes. */
typedef struct {
    char **names;
    size_t n, cap;
    ami_names map;
} ami_dlc_list;

static void ami_dlc_list_free(ami_dlc_list *l)
{
    ami_strings_free(l->names, l->n);
    ami_names_free(&l->map);
}

/* Index of the field's trimmed text, added when new; -1 with *st set when out of memory. */
static int ami_intern(ami_dlc_list *l, const ami_field *f, am_status *st, am_error *err)
{
    char *s = ami_field_dup(f);
    int32_t prev = -1;
    if (s && l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        char **v = am_realloc_array(l->names, cap, sizeof *v);
        if (v) l->names = v, l->cap = cap;
    }
    if (!s || l->n == l->cap || ami_names_add(&l->map, s, strlen(s), (int32_t)l->n, &prev) != AM_OK) {
        am_free(s);
        *st = AM_FAIL(err, AM_E_NOMEM, "names");
        return -1;
    }
    if (prev >= 0) {
        am_free(s);
        return prev;
    }
    l->names[l->n] = s;
    return (int)l->n++;
}

am_status ami_dlc_parse(const char *text, size_t len, const char *src, const am_import_opts *o, am_mdet **out,
                        am_error *err)
{
    *out = NULL;
    ami_csv c;
    ami_csv_init(&c, text, len, ',', true);
    am_status st = AM_OK;
    ami_field *rows[4] = {0};
    size_t rn[4] = {0}, nrows = 0;
    ami_dlc_list ind_list = {0}, part_list = {0};
    ami_dlc_col *cols = NULL;
    float *data = NULL;
    size_t T = 0, cap = 0, ncol = 0, idx = 1;
    size_t short_rows = 0;
    uint32_t first_short = 0;
    am_mdet *d = NULL;
    int32_t *jmap = NULL;
    /* Header rows: the first cell names them. */
    static const char *const kinds[4] = {"scorer", "individuals", "bodyparts", "coords"};
    int kind_row[4] = {-1, -1, -1, -1};
    while (nrows < 4) {
        if (!ami_csv_row(&c, &st, src, err)) {
            if (st == AM_OK)
                st = AM_FAIL_AT(err, nrows ? AM_E_TRUNCATED : AM_E_EMPTY, src, c.line, 0,
                                "a DeepLabCut CSV starts with scorer, [individuals,] bodyparts and coords rows");
            goto done;
        }
        int k = -1;
        for (int q = 0; q < 4; q++)
            if (c.count && ami_field_is(&c.f[0], kinds[q], true)) k = q;
        if (k < 0 || kind_row[k] >= 0 || (nrows == 0 && k != 0)) {
            st = AM_FAIL_AT(err, AM_E_FORMAT, src, c.line, 1,
                            "expected the '%s' header row of a DeepLabCut CSV", nrows == 0 ? "scorer" : "bodyparts/coords");
            goto done;
        }
        kind_row[k] = (int)nrows;
        rows[nrows] = am_alloc_array(c.count ? c.count : 1, sizeof(ami_field));
        if (!rows[nrows]) {
            st = AM_FAIL(err, AM_E_NOMEM, "header");
            goto done;
        }
        memcpy(rows[nrows], c.f, c.count * sizeof(ami_field));
        rn[nrows++] = c.count;
        if (k == 3) break;
    }
    if (kind_row[2] < 0 || kind_row[3] < 0) {
        st = AM_FAIL_AT(err, AM_E_FORMAT, src, c.line, 1, "the bodyparts row is missing");
        goto done;
    }
    const ami_field *rp = rows[kind_row[2]], *rc = rows[kind_row[3]], *ri = kind_row[1] >= 0 ? rows[kind_row[1]] : NULL;
    ncol = rn[kind_row[3]];
    for (size_t q = 0; q < nrows; q++)
        if (rn[q] != ncol) {
            st = AM_FAIL_AT(err, AM_E_SHAPE, src, (uint32_t)q + 1, 0, "header row %zu has %zu cells, the coords row %zu",
                            q + 1, rn[q], ncol);
            goto done;
        }
    while (idx < ncol && rc[idx].len == 0) idx++;
    if (idx >= ncol) {
        st = AM_FAIL_AT(err, AM_E_FORMAT, src, (uint32_t)kind_row[3] + 1, 0, "no coordinate columns");
        goto done;
    }
    cols = am_alloc_array(ncol, sizeof *cols);
    if (!cols) {
        st = AM_FAIL(err, AM_E_NOMEM, "columns");
        goto done;
    }
    const ami_field no_individual = {"", 0};
    for (size_t k = idx; k < ncol; k++) {
        const ami_field *fi = ri ? &ri[k] : &no_individual;
        cols[k].ind = ami_intern(&ind_list, fi, &st, err);
        cols[k].part = st == AM_OK ? ami_intern(&part_list, &rp[k], &st, err) : -1;
        if (st != AM_OK) goto done;
        cols[k].coord = ami_field_is(&rc[k], "x", true) ? 0 : ami_field_is(&rc[k], "y", true) ? 1
                        : ami_field_is(&rc[k], "likelihood", true) ? 2 : -1;
        if (rp[k].len == 0) {
            st = AM_FAIL_AT(err, AM_E_FORMAT, src, (uint32_t)kind_row[2] + 1, 0, "column %zu has no bodypart", k + 1);
            goto done;
        }
    }
    char **inds = ind_list.names, **parts = part_list.names;
    const size_t ni = ind_list.n, np = part_list.n;
    /* Data. */
    for (;;) {
        if (!ami_csv_row(&c, &st, src, err)) {
            if (st != AM_OK) goto done;
            break;
        }
        if (c.count == 0) continue;
        if (c.count > ncol) {
            st = AM_FAIL_AT(err, AM_E_SHAPE, src, c.line, 0, "row has %zu cells, the header %zu (a ragged row)", c.count,
                            ncol);
            goto done;
        }
        if (c.count < ncol && !short_rows++) first_short = c.line;
        if (T == cap) {
            cap = cap ? 2 * cap : 256;
            /* The buffer and the det built from it (at most a joint per two columns): a row
             * shorter than the header is padded, so its bytes say little about its cost. */
            if ((st = ami_rows_budget(src, c.line, cap, 10.0 * (double)ncol, err)) != AM_OK) goto done;
            float *nd = am_realloc_array(data, cap * ncol, sizeof *nd);
            if (!nd) {
                st = AM_FAIL_AT(err, AM_E_NOMEM, src, 0, 0, "%zu rows", cap);
                goto done;
            }
            data = nd;
        }
        for (size_t k = idx; k < ncol; k++) {
            double v = NAN;
            bool empty = true;
            if (k < c.count && !ami_field_number(&c.f[k], &v, &empty)) {
                st = AM_FAIL_AT(err, AM_E_SYNTAX, src, c.line, 0, "cell %zu ('%.*s') is not a number", k + 1,
                                (int)(c.f[k].len < 40 ? c.f[k].len : 40), c.f[k].p);
                goto done;
            }
            if (isinf(v)) {
                st = AM_FAIL_AT(err, AM_E_NONFINITE, src, c.line, 0, "cell %zu is infinite", k + 1);
                goto done;
            }
            data[T * ncol + k] = empty ? NAN : (float)v;
        }
        T++;
    }
    if (T == 0) {
        st = AM_FAIL_AT(err, AM_E_EMPTY, src, c.line, 0, "no data rows after the header");
        goto done;
    }
    if (short_rows)
        ami_warn(AM_WARN_MISSING_DATA, "%s: %zu rows are shorter than the header (first at line %u): their missing cells are "
                 "not seen", src ? src : "DeepLabCut CSV", short_rows, first_short);
    /* Choose the individual. */
    int pick = -1;
    bool has_lik = false;
    for (size_t k = idx; k < ncol; k++) has_lik |= cols[k].coord == 2;
    if (o && o->individual) {
        for (size_t k = 0; k < ni; k++)
            if (strcmp(inds[k], o->individual) == 0) pick = (int)k;
        if (pick < 0) {
            char list[400];
            size_t n = 0;
            list[0] = '\0';
            for (size_t k = 0; k < ni && n < sizeof list - 40; k++)
                n += (size_t)snprintf(list + n, sizeof list - n, "%s'%s'", k ? ", " : "", inds[k]);
            st = AM_FAIL_AT(err, AM_E_NAME, src, 0, 0, "no individual '%s' (the file has %s)", o->individual, list);
            goto done;
        }
    } else {
        double best = -1;
        for (size_t k = 0; k < ni; k++) {
            if (ni > 1 && strcmp(inds[k], "single") == 0) continue;
            double s = 0;
            size_t n = 0;
            for (size_t col = idx; col < ncol; col++) {
                if (cols[col].ind != (int)k || cols[col].coord != (has_lik ? 2 : 0)) continue;
                for (size_t t = 0; t < T; t++) {
                    float v = data[t * ncol + col];
                    s += has_lik ? (isnan(v) ? 0.0 : v) : !isnan(v);
                    n++;
                }
            }
            double m = n ? s / (double)n : 0;
            if (m > best) best = m, pick = (int)k;
        }
        if (ni > 1) {
            char list[400];
            size_t n = 0;
            list[0] = '\0';
            for (size_t k = 0; k < ni && n < sizeof list - 40; k++)
                if ((int)k != pick) n += (size_t)snprintf(list + n, sizeof list - n, "%s'%s'", n ? ", " : "", inds[k]);
            ami_warn(AM_WARN_IGNORED_NAME, "%s: took individual '%s' (the best tracked); left out %s (--individual NAME)",
                     src ? src : "DeepLabCut CSV", inds[pick], list);
        }
    }
    /* Joints of the chosen individual, in column order. */
    jmap = am_alloc_array(np, sizeof *jmap);
    if (!jmap) {
        st = AM_FAIL(err, AM_E_NOMEM, "joints");
        goto done;
    }
    size_t J = 0;
    for (size_t k = 0; k < np; k++) jmap[k] = -1;
    for (size_t k = idx; k < ncol; k++)
        if (cols[k].ind == pick && jmap[cols[k].part] < 0) jmap[cols[k].part] = (int32_t)J++;
    if ((st = am_mdet_create(1, T, J, &d, err)) != AM_OK) goto done;
    for (size_t k = 0; k < np; k++)
        if (jmap[k] >= 0 && !(d->names[jmap[k]] = am_strdup(parts[k]))) {
            st = AM_FAIL(err, AM_E_NOMEM, "names");
            goto done;
        }
    bool clamped = false;
    for (size_t t = 0; t < T; t++) {
        for (size_t j = 0; j < J; j++) d->conf[t * J + j] = has_lik ? NAN : 1.0f;
        for (size_t k = idx; k < ncol; k++) {
            if (cols[k].ind != pick || cols[k].coord < 0) continue;
            size_t j = (size_t)jmap[cols[k].part];
            float v = data[t * ncol + k];
            if (cols[k].coord < 2) d->uv[(t * J + j) * 2 + (size_t)cols[k].coord] = v;
            else d->conf[t * J + j] = v;
        }
        for (size_t j = 0; j < J; j++) {
            float *uv = d->uv + (t * J + j) * 2, *cf = d->conf + t * J + j;
            if (isnan(uv[0]) || isnan(uv[1]) || isnan(*cf) || *cf <= 0) {
                uv[0] = uv[1] = NAN;
                *cf = 0;
            } else if (*cf > 1) {
                clamped |= *cf > 1.0001f;
                *cf = 1;
            }
        }
    }
    if (clamped) ami_warn(AM_WARN_CLAMPED, "%s: likelihoods over 1 were clamped to 1", src ? src : "DeepLabCut CSV");
    if (o && o->fps > 0) d->fps = o->fps;
    else ami_warn(AM_WARN_MISSING_DATA, "%s: a DeepLabCut CSV has no frame rate; 30 fps assumed (--fps)",
                  src ? src : "DeepLabCut CSV");
    *out = d;
    d = NULL;
done:
    am_mdet_free(d);
    for (size_t q = 0; q < 4; q++) am_free(rows[q]);
    ami_dlc_list_free(&ind_list);
    ami_dlc_list_free(&part_list);
    am_free(cols);
    am_free(data);
    am_free(jmap);
    ami_csv_free(&c);
    return st;
}
