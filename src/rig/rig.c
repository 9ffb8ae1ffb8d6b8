/* Building a rig from its raw description: validation, parents-first order, and every
 * per-bone constant FK needs (SPEC.md 2.1 - 2.3).
 *
 * Every step is linear (or B log B for the sort) in the bones, joints and limits: names are
 * matched through hash maps (core/internal.h), children through an adjacency list. Rigs
 * converted from glTF or BVH scenes reach 100,000 bones, where pairwise comparisons took
 * minutes. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "anymove/math.h"
#include "anymove/rig.h"
#include "core/internal.h"
#include "rig/rig_internal.h"

/* Bones shorter than this have no direction, hence no frame. */
#define AMI_MIN_BONE_LENGTH 1e-9

/* Length of the name without its side suffix; *side = +1 for _L/.L, -1 for _R/.R, 0 none. */
static size_t ami_stem(const char *name, int *side)
{
    size_t n = strlen(name);
    *side = 0;
    if (n > 2 && (name[n - 2] == '_' || name[n - 2] == '.')) {
        if (name[n - 1] == 'L') *side = 1;
        if (name[n - 1] == 'R') *side = -1;
    }
    return *side ? n - 2 : n;
}

/* The private name maps of a built rig, keyed on the rig's own copies of the names. */
struct ami_rig_lookup {
    ami_names bones, joints;
};

/* Linear scan: only for a rig assembled by hand, without am_rig_build's lookup. */
static int ami_find_linear(char *const *names, size_t count, const char *name)
{
    for (size_t i = 0; i < count; i++) {
        if (names[i] && strcmp(names[i], name) == 0) return (int)i;
    }
    return -1;
}

int am_rig_find_bone(const am_rig *rig, const char *name)
{
    if (!rig || !name) return -1;
    if (rig->lookup) return ami_names_find_str(&rig->lookup->bones, name);
    return ami_find_linear(rig->bone_names, rig->bone_count, name);
}

int am_rig_find_joint(const am_rig *rig, const char *name)
{
    if (!rig || !name) return -1;
    if (rig->lookup) return ami_names_find_str(&rig->lookup->joints, name);
    return ami_find_linear(rig->joint_names, rig->joint_count, name);
}

static void ami_lookup_free(struct ami_rig_lookup *l)
{
    if (!l) return;
    ami_names_free(&l->bones);
    ami_names_free(&l->joints);
    am_free(l);
}

void am_rig_free(am_rig *rig)
{
    if (!rig) return;
    if (rig->bone_names) {
        for (size_t b = 0; b < rig->bone_count; b++) am_free(rig->bone_names[b]);
    }
    if (rig->joint_names) {
        for (size_t j = 0; j < rig->joint_count; j++) am_free(rig->joint_names[j]);
    }
    am_free(rig->bone_names);
    am_free(rig->joint_names);
    am_free(rig->parent);
    am_free(rig->head_joint);
    am_free(rig->tail_joint);
    am_free(rig->joint_rest);
    am_free(rig->length);
    am_free(rig->rest_rot);
    am_free(rig->rest_mat);
    am_free(rig->rest_inv);
    am_free(rig->offset);
    am_free(rig->kp_bone);
    am_free(rig->kp_is_tail);
    am_free(rig->has_limit);
    am_free(rig->limits);
    am_free(rig->is_helper);
    am_free(rig->name);
    am_free(rig->model);
    am_free(rig->extra_json);
    ami_lookup_free(rig->lookup);
    am_free(rig);
}

void am_rig_clamp_euler(const am_rig *rig, size_t bone, double e[3])
{
    assert(rig && bone < rig->bone_count && e);
    if (!rig->has_limit[bone]) return;
    const double *lim = rig->limits + 6 * bone;
    for (int a = 0; a < 3; a++) {
        if (e[a] < lim[2 * a]) e[a] = lim[2 * a];
        if (e[a] > lim[2 * a + 1]) e[a] = lim[2 * a + 1];
    }
}

/* Everything validated in file order, before any of the rig is built. */
typedef struct ami_rig_scratch {
    int32_t *head, *tail, *parent; /* [B] file indices */
    int32_t *order;                /* [B] sorted position -> file index */
    int32_t *rank;                 /* [B] file index -> sorted position */
    uint8_t *placed;               /* [B] */
    ami_names joints, bones;       /* desc names -> file index */
    ami_names stems;               /* sided bone names without _L/.L/_R/.R -> a bone */
    ami_names limits;              /* limit keys -> limit index */
} ami_rig_scratch;

static void ami_scratch_free(ami_rig_scratch *s)
{
    am_free(s->head);
    am_free(s->tail);
    am_free(s->parent);
    am_free(s->order);
    am_free(s->rank);
    am_free(s->placed);
    ami_names_free(&s->joints);
    ami_names_free(&s->bones);
    ami_names_free(&s->stems);
    ami_names_free(&s->limits);
}

/* Map names to their index; a repeated name is AM_E_DUPLICATE "<kind> '<name>' <twice>". */
static am_status ami_index_names(ami_names *m, const char *const *names, size_t n,
                                 const char *kind, const char *twice, am_error *err)
{
    size_t a = 0, b = 0;
    am_status s = ami_names_index(m, names, n, &a, &b);
    if (s == AM_E_DUPLICATE)
        return AM_FAIL(err, AM_E_DUPLICATE, "%s '%s' %s", kind, names[b], twice);
    if (s == AM_E_NOMEM) return AM_FAIL(err, AM_E_NOMEM, "%zu %s names", n, kind);
    AMI_CHECK(err, s == AM_OK, s, "%zu %s names", n, kind);
    return AM_OK;
}

static am_status ami_check_names(const am_rig_desc *d, ami_rig_scratch *s, am_error *err)
{
    for (size_t j = 0; j < d->joint_count; j++) {
        AMI_CHECK(err, d->joint_names[j] && d->joint_names[j][0], AM_E_VALUE,
                  "joint %zu has no name", j);
        const double *p = d->joint_pos + 3 * j;
        AMI_CHECK(err, isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]), AM_E_NONFINITE,
                  "joint '%s' has a non-finite position", d->joint_names[j]);
    }
    AMI_TRY(ami_index_names(&s->joints, d->joint_names, d->joint_count, "joint",
                            "is defined twice", err));
    for (size_t b = 0; b < d->bone_count; b++)
        AMI_CHECK(err, d->bone_names[b] && d->bone_names[b][0], AM_E_VALUE,
                  "bone %zu has no name", b);
    AMI_TRY(ami_index_names(&s->bones, d->bone_names, d->bone_count, "bone", "is defined twice",
                            err));
    for (size_t b = 0; b < d->bone_count; b++) {
        int side;
        size_t n = ami_stem(d->bone_names[b], &side);
        int32_t prev;
        if (side && ami_names_add(&s->stems, d->bone_names[b], n, (int32_t)b, &prev) != AM_OK)
            return AM_FAIL(err, AM_E_NOMEM, "bone stems");
    }
    return AM_OK;
}

static am_status ami_resolve_links(const am_rig_desc *d, ami_rig_scratch *s, am_error *err)
{
    size_t B = d->bone_count;
    int root = -1;
    for (size_t b = 0; b < B; b++) {
        const char *name = d->bone_names[b];
        AMI_CHECK(err, d->bone_head[b] && d->bone_tail[b], AM_E_VALUE,
                  "bone '%s' lacks a head or tail joint", name);
        s->head[b] = ami_names_find_str(&s->joints, d->bone_head[b]);
        AMI_CHECK(err, s->head[b] >= 0, AM_E_NAME, "bone '%s': unknown head joint '%s'", name,
                  d->bone_head[b]);
        s->tail[b] = ami_names_find_str(&s->joints, d->bone_tail[b]);
        AMI_CHECK(err, s->tail[b] >= 0, AM_E_NAME, "bone '%s': unknown tail joint '%s'", name,
                  d->bone_tail[b]);
        const char *par = d->bone_parent ? d->bone_parent[b] : NULL;
        if (!par) {
            AMI_CHECK(err, root < 0, AM_E_ROOT, "bones '%s' and '%s' both have no parent",
                      d->bone_names[root < 0 ? 0 : root], name);
            root = (int)b;
            s->parent[b] = -1;
            continue;
        }
        s->parent[b] = ami_names_find_str(&s->bones, par);
        AMI_CHECK(err, s->parent[b] >= 0, AM_E_NAME, "bone '%s': unknown parent bone '%s'", name,
                  par);
    }
    AMI_CHECK(err, root >= 0, AM_E_ROOT, "no root bone (every bone has a parent, e.g. '%s')",
              d->bone_names[0]);
    return AM_OK;
}

bool ami_children_lists(const int32_t *parent, size_t stride, size_t n, size_t **first_out,
                        int32_t **kids_out)
{
    size_t *first = am_alloc_array(n + 1, sizeof *first);
    size_t *fill = am_alloc_array(n + 1, sizeof *fill);
    int32_t *kids = am_alloc_array(n ? n : 1, sizeof *kids);
    if (!first || !fill || !kids) {
        am_free(first);
        am_free(fill);
        am_free(kids);
        return false;
    }
#define AMI_PARENT(i) (*(const int32_t *)(const void *)((const char *)parent + (i) * stride))
    for (size_t i = 0; i < n; i++)
        if (AMI_PARENT(i) >= 0) first[AMI_PARENT(i) + 1]++;
    for (size_t i = 0; i < n; i++) first[i + 1] += first[i];
    for (size_t i = 0; i < n; i++) {
        int32_t p = AMI_PARENT(i);
        if (p >= 0) kids[first[p] + fill[p]++] = (int32_t)i;
    }
#undef AMI_PARENT
    am_free(fill);
    *first_out = first;
    *kids_out = kids;
    return true;
}

/* Pop the smallest file index off a binary min-heap of n entries. */
static int32_t ami_heap_pop(int32_t *heap, size_t *n)
{
    int32_t top = heap[0];
    int32_t last = heap[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && heap[c + 1] < heap[c]) c++;
        if (heap[c] >= last) break;
        heap[i] = heap[c];
        i = c;
    }
    if (*n) heap[i] = last;
    return top;
}

static void ami_heap_push(int32_t *heap, size_t *n, int32_t v)
{
    size_t i = (*n)++;
    while (i > 0 && heap[(i - 1) / 2] > v) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = v;
}

/* Stable topological order: always take the earliest bone (in file order) whose parent is
 * placed, i.e. the smallest file index among the bones ready to place (a heap of them). A
 * file already written parents-first keeps its order exactly, and the root, the only bone
 * without a parent, comes first. */
static am_status ami_sort_bones(const am_rig_desc *d, ami_rig_scratch *s, am_error *err)
{
    size_t B = d->bone_count;
    size_t *first = NULL;
    int32_t *kids = NULL;
    int32_t *heap = am_alloc_array(B, sizeof *heap);
    if (!heap || !ami_children_lists(s->parent, sizeof *s->parent, B, &first, &kids)) {
        am_free(heap);
        return AM_FAIL(err, AM_E_NOMEM, "sorting %zu bones", B);
    }
    size_t n = 0, pos = 0;
    for (size_t b = 0; b < B; b++)
        if (s->parent[b] < 0) ami_heap_push(heap, &n, (int32_t)b);
    while (n) {
        int32_t pick = ami_heap_pop(heap, &n);
        s->placed[pick] = 1;
        s->order[pos] = pick;
        s->rank[pick] = (int32_t)pos++;
        for (size_t k = first[pick]; k < first[pick + 1]; k++) ami_heap_push(heap, &n, kids[k]);
    }
    am_free(first);
    am_free(kids);
    am_free(heap);
    if (pos < B) {
        /* Every unplaced bone hangs below a cycle; B parent steps land inside it. */
        size_t c = 0;
        while (s->placed[c]) c++;
        for (size_t k = 0; k < B; k++) c = (size_t)s->parent[c];
        return AM_FAIL(err, AM_E_CYCLE, "bone '%s' is its own ancestor", d->bone_names[c]);
    }
    return AM_OK;
}

static am_status ami_check_geometry(const am_rig_desc *d, const ami_rig_scratch *s,
                                    am_error *err)
{
    uint8_t *used = am_alloc(d->joint_count);
    AMI_CHECK(err, used, AM_E_NOMEM, "%zu joints", d->joint_count);
    for (size_t b = 0; b < d->bone_count; b++) {
        used[s->head[b]] = used[s->tail[b]] = 1;
        double len = am_vec3_dist(d->joint_pos + 3 * (size_t)s->head[b],
                                  d->joint_pos + 3 * (size_t)s->tail[b]);
        if (!(len >= AMI_MIN_BONE_LENGTH)) {
            am_free(used);
            return AM_FAIL(err, AM_E_DEGENERATE, "bone '%s' has length %.3g m (from '%s' to '%s')",
                           d->bone_names[b], len, d->bone_head[b], d->bone_tail[b]);
        }
    }
    for (size_t j = 0; j < d->joint_count; j++) {
        if (used[j]) continue;
        am_free(used);
        return AM_FAIL(err, AM_E_VALUE, "joint '%s' is neither head nor tail of any bone",
                       d->joint_names[j]);
    }
    am_free(used);
    return AM_OK;
}

static am_status ami_check_limits(const am_rig_desc *d, ami_rig_scratch *s, am_error *err)
{
    for (size_t l = 0; l < d->limit_count; l++)
        AMI_CHECK(err, d->limit_keys[l] && d->limit_keys[l][0], AM_E_VALUE,
                  "limit %zu has no bone name", l);
    AMI_TRY(ami_index_names(&s->limits, d->limit_keys, d->limit_count, "limits for",
                            "are given twice", err));
    for (size_t l = 0; l < d->limit_count; l++) {
        const char *key = d->limit_keys[l];
        const double *v = d->limits_deg + 6 * l;
        for (int a = 0; a < 3; a++) {
            AMI_CHECK(err, isfinite(v[2 * a]) && isfinite(v[2 * a + 1]), AM_E_VALUE,
                      "limits of '%s': axis %c is not finite", key, "XYZ"[a]);
            AMI_CHECK(err, v[2 * a] <= v[2 * a + 1], AM_E_VALUE,
                      "limits of '%s': axis %c range [%g, %g] is reversed", key, "XYZ"[a],
                      v[2 * a], v[2 * a + 1]);
        }
        bool found = ami_names_find_str(&s->bones, key) >= 0 ||
                     ami_names_find_str(&s->stems, key) >= 0;
        AMI_CHECK(err, found, AM_E_NAME, "limits for '%s' match no bone or bone stem", key);
    }
    return AM_OK;
}

/* SPEC 2.1: an exact key wins; else the stem key, mirrored (Y, Z) for the right side. */
static void ami_resolve_limit(const am_rig_desc *d, const ami_rig_scratch *s, const char *bone,
                              uint8_t *has, double lim[6])
{
    int side = 0;
    size_t stem_len = ami_stem(bone, &side);
    int exact = ami_names_find_str(&s->limits, bone);
    int stem = side ? ami_names_find(&s->limits, bone, stem_len) : -1;
    for (int a = 0; a < 3; a++) {
        lim[2 * a] = -AM_PI;
        lim[2 * a + 1] = AM_PI;
    }
    *has = 0;
    int l = exact >= 0 ? exact : stem;
    if (l < 0) return;
    const double *v = d->limits_deg + 6 * (size_t)l;
    int mirror = exact < 0 && side < 0;
    for (int a = 0; a < 3; a++) {
        if (mirror && a > 0) {
            lim[2 * a] = AM_RAD(-v[2 * a + 1]);
            lim[2 * a + 1] = AM_RAD(-v[2 * a]);
        } else {
            lim[2 * a] = AM_RAD(v[2 * a]);
            lim[2 * a + 1] = AM_RAD(v[2 * a + 1]);
        }
    }
    *has = 1;
}

static am_status ami_rig_alloc(am_rig *r, size_t B, size_t J)
{
    r->bone_count = B;
    r->joint_count = J;
    r->bone_names = am_alloc_array(B, sizeof *r->bone_names);
    r->joint_names = am_alloc_array(J, sizeof *r->joint_names);
    r->parent = am_alloc_array(B, sizeof *r->parent);
    r->head_joint = am_alloc_array(B, sizeof *r->head_joint);
    r->tail_joint = am_alloc_array(B, sizeof *r->tail_joint);
    r->joint_rest = am_alloc_array(J * 3, sizeof *r->joint_rest);
    r->length = am_alloc_array(B, sizeof *r->length);
    r->rest_rot = am_alloc_array(B * 9, sizeof *r->rest_rot);
    r->rest_mat = am_alloc_array(B * 16, sizeof *r->rest_mat);
    r->rest_inv = am_alloc_array(B * 16, sizeof *r->rest_inv);
    r->offset = am_alloc_array(B * 16, sizeof *r->offset);
    r->kp_bone = am_alloc_array(J, sizeof *r->kp_bone);
    r->kp_is_tail = am_alloc_array(J, sizeof *r->kp_is_tail);
    r->has_limit = am_alloc_array(B, sizeof *r->has_limit);
    r->limits = am_alloc_array(B * 6, sizeof *r->limits);
    r->is_helper = am_alloc_array(B, sizeof *r->is_helper);
    if (!r->bone_names || !r->joint_names || !r->parent || !r->head_joint || !r->tail_joint ||
        !r->joint_rest || !r->length || !r->rest_rot || !r->rest_mat || !r->rest_inv ||
        !r->offset || !r->kp_bone || !r->kp_is_tail || !r->has_limit || !r->limits ||
        !r->is_helper) {
        return AM_E_NOMEM;
    }
    return AM_OK;
}

static am_status ami_rig_fill(const am_rig_desc *d, const ami_rig_scratch *s, am_rig *r,
                              am_error *err)
{
    size_t B = d->bone_count, J = d->joint_count;
    AMI_CHECK(err, ami_rig_alloc(r, B, J) == AM_OK, AM_E_NOMEM, "rig of %zu bones", B);
    for (size_t j = 0; j < J; j++) {
        r->joint_names[j] = am_strdup(d->joint_names[j]);
        AMI_CHECK(err, r->joint_names[j], AM_E_NOMEM, "joint names");
        memcpy(r->joint_rest + 3 * j, d->joint_pos + 3 * j, 3 * sizeof(double));
    }
    if (d->extra_json) {
        r->extra_json = am_strdup(d->extra_json);
        AMI_CHECK(err, r->extra_json, AM_E_NOMEM, "rig extra keys");
    }
    for (size_t b = 0; b < B; b++) {
        size_t f = (size_t)s->order[b];
        r->bone_names[b] = am_strdup(d->bone_names[f]);
        AMI_CHECK(err, r->bone_names[b], AM_E_NOMEM, "bone names");
        r->parent[b] = s->parent[f] < 0 ? -1 : s->rank[s->parent[f]];
        r->head_joint[b] = s->head[f];
        r->tail_joint[b] = s->tail[f];
        const double *h = r->joint_rest + 3 * (size_t)s->head[f];
        const double *t = r->joint_rest + 3 * (size_t)s->tail[f];
        r->length[b] = am_vec3_dist(h, t);
        am_bone_frame_roll0(h, t, r->rest_rot + 9 * b);
        am_mat4_from_rt(r->rest_rot + 9 * b, h, r->rest_mat + 16 * b);
        /* SPEC 2.3: near -Y the roll-0 axes are orthonormal only to ~3e-5, so the transpose
         * is not the inverse. */
        AMI_CHECK(err, am_mat4_inverse(r->rest_mat + 16 * b, r->rest_inv + 16 * b),
                  AM_E_DEGENERATE, "bone '%s' has a singular rest frame", r->bone_names[b]);
        ami_resolve_limit(d, s, r->bone_names[b], r->has_limit + b, r->limits + 6 * b);
    }
    for (size_t b = 0; b < B; b++) {
        if (r->parent[b] < 0) {
            memcpy(r->offset + 16 * b, r->rest_mat + 16 * b, 16 * sizeof(double));
        } else {
            am_mat4_mul(r->rest_inv + 16 * (size_t)r->parent[b], r->rest_mat + 16 * b,
                        r->offset + 16 * b);
        }
    }
    /* Keypoints (SPEC 2.3): a joint is the tail of the bone ending there; only a joint that
     * ends no bone (the root's head, an unconnected child's head) is read from a head. The
     * first such bone in parents-first order is used. */
    for (size_t j = 0; j < J; j++) r->kp_bone[j] = -1;
    for (size_t b = 0; b < B; b++) {
        int32_t j = r->tail_joint[b];
        if (r->kp_bone[j] < 0) {
            r->kp_bone[j] = (int32_t)b;
            r->kp_is_tail[j] = 1;
        }
    }
    for (size_t b = 0; b < B; b++)
        if (r->kp_bone[r->head_joint[b]] < 0) r->kp_bone[r->head_joint[b]] = (int32_t)b;
    for (size_t j = 0; j < J; j++)
        assert(r->kp_bone[j] >= 0); /* ami_check_geometry rejected unused joints */

    r->lookup = am_alloc(sizeof *r->lookup);
    AMI_CHECK(err, r->lookup, AM_E_NOMEM, "rig name index");
    /* Names are unique (checked above), so indexing cannot find a duplicate. */
    AMI_CHECK(err,
              ami_names_index(&r->lookup->bones, (const char *const *)r->bone_names, B, NULL,
                              NULL) == AM_OK &&
                  ami_names_index(&r->lookup->joints, (const char *const *)r->joint_names, J,
                                  NULL, NULL) == AM_OK,
              AM_E_NOMEM, "rig name index");
    /* Helpers by name: through the index just built. */
    for (size_t h = 0; h < d->helper_count; h++) {
        int b = am_rig_find_bone(r, d->helpers[h]);
        AMI_CHECK(err, b >= 0, AM_E_NAME, "helper '%s' is not a bone", d->helpers[h]);
        AMI_CHECK(err, !r->is_helper[b], AM_E_DUPLICATE, "helper '%s' is listed twice", d->helpers[h]);
        r->is_helper[b] = 1;
    }
    return AM_OK;
}

static am_status ami_rig_build(const am_rig_desc *d, am_rig **out, am_error *err)
{
    size_t B = d->bone_count, J = d->joint_count;
    AMI_CHECK(err, B > 0 && J > 0, AM_E_EMPTY, "rig has %zu joints and %zu bones", J, B);
    assert(d->joint_names && d->joint_pos && d->bone_names && d->bone_head && d->bone_tail);
    assert(d->limit_count == 0 || (d->limit_keys && d->limits_deg));
    assert(d->helper_count == 0 || d->helpers);
    ami_rig_scratch s = {0};
    s.head = am_alloc_array(B, sizeof *s.head);
    s.tail = am_alloc_array(B, sizeof *s.tail);
    s.parent = am_alloc_array(B, sizeof *s.parent);
    s.order = am_alloc_array(B, sizeof *s.order);
    s.rank = am_alloc_array(B, sizeof *s.rank);
    s.placed = am_alloc_array(B, sizeof *s.placed);
    am_status st = AM_OK;
    am_rig *r = NULL;
    if (!s.head || !s.tail || !s.parent || !s.order || !s.rank || !s.placed) {
        st = AM_FAIL(err, AM_E_NOMEM, "rig of %zu bones", B);
    }
    if (st == AM_OK) st = ami_check_names(d, &s, err);
    if (st == AM_OK) st = ami_resolve_links(d, &s, err);
    if (st == AM_OK) st = ami_sort_bones(d, &s, err);
    if (st == AM_OK) st = ami_check_geometry(d, &s, err);
    if (st == AM_OK) st = ami_check_limits(d, &s, err);
    if (st == AM_OK) {
        r = am_alloc(sizeof *r);
        st = r ? ami_rig_fill(d, &s, r, err) : AM_FAIL(err, AM_E_NOMEM, "rig");
    }
    ami_scratch_free(&s);
    if (st != AM_OK) {
        am_rig_free(r);
        return st;
    }
    *out = r;
    return AM_OK;
}

am_status am_rig_build(const am_rig_desc *desc, am_rig **out, am_error *err)
{
    assert(desc && out);
    *out = NULL;
    am_status st = ami_rig_build(desc, out, err);
    if (st != AM_OK) am_error_set_file(err, desc->source);
    return st;
}

void am_rig_scale(am_rig *rig, double s)
{
    assert(rig && s > 0.0);
    for (size_t j = 0; j < rig->joint_count * 3; j++) rig->joint_rest[j] *= s;
    for (size_t b = 0; b < rig->bone_count; b++) {
        rig->length[b] *= s;
        /* rigid transforms: only their translations carry lengths, and every one is linear in
         * the joint positions (M_rest^-1 = [R^T | -R^T h], O = M_rest(p)^-1 M_rest(b)) */
        for (int r = 0; r < 3; r++) {
            rig->rest_mat[b * 16 + (size_t)r * 4 + 3] *= s;
            rig->rest_inv[b * 16 + (size_t)r * 4 + 3] *= s;
            rig->offset[b * 16 + (size_t)r * 4 + 3] *= s;
        }
    }
}
