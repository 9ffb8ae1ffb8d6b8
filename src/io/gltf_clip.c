/* Which animation of a glTF a user means: the one rule behind every --clip. */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/gltf.h"
#include "core/internal.h"

/* The clip name without an exporter's armature prefix ("RatArmature|Rat_Run" -> "Rat_Run"). */
static const char *ami_clip_short(const char *name)
{
    const char *bar = strrchr(name, '|');
    return bar ? bar + 1 : name;
}

static bool ami_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return m > 0 && n >= m && strcmp(s + n - m, suffix) == 0;
}

/* "0 'Survey', 1 'Walk', 2 'Run'" (those with flag[i] when flag is given), cut to fit. */
static void ami_clip_list(const am_gltf *doc, const uint8_t *flag, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < doc->animation_count; i++) {
        if (flag && !flag[i]) continue;
        const char *nm = doc->animations[i].name;
        int n = snprintf(buf + used, size - used, "%s%zu '%s'", used ? ", " : "", i, nm ? nm : "");
        if (n < 0 || (size_t)n >= size - used) {
            if (size > 4) snprintf(buf + size - 5, 5, " ...");
            return;
        }
        used += (size_t)n;
    }
}

/* Indices whose name passes a test: the unique one in *index, else the count found. */
typedef bool (*ami_clip_test)(const char *name, const char *query);
static bool ami_test_exact(const char *name, const char *query) { return strcmp(name, query) == 0; }
static bool ami_test_short(const char *name, const char *query) { return strcmp(ami_clip_short(name), query) == 0; }
static bool ami_test_suffix(const char *name, const char *query) { return ami_ends_with(ami_clip_short(name), query); }

am_status am_gltf_find_clip(const am_gltf *doc, const char *query, int *index, am_error *err)
{
    assert(doc && query && index);
    *index = -1;
    if (doc->animation_count == 0) return AM_FAIL(err, AM_E_NAME, "no clip '%s': the file has no animation", query);
    uint8_t *hit = am_alloc(doc->animation_count);
    if (!hit) return AM_FAIL(err, AM_E_NOMEM, "clips");
    static const ami_clip_test tests[3] = {ami_test_exact, ami_test_short, ami_test_suffix};
    char list[200];
    am_status st = AM_OK;
    for (int stage = 0; stage < 4 && *index < 0; stage++) {
        if (stage == 2) {
            /* an index, unless a name already said otherwise: "1" is clip 1, not "Walk1" */
            char *end = NULL;
            long k = strtol(query, &end, 10);
            if (end != query && *end == '\0' && k >= 0 && (size_t)k < doc->animation_count) *index = (int)k;
            continue;
        }
        size_t found = 0;
        for (size_t i = 0; i < doc->animation_count; i++) {
            const char *nm = doc->animations[i].name;
            hit[i] = nm && tests[stage < 2 ? stage : 2](nm, query);
            found += hit[i];
        }
        if (found == 1) {
            for (size_t i = 0; i < doc->animation_count; i++)
                if (hit[i]) *index = (int)i;
        } else if (found > 1 && stage > 0) {
            ami_clip_list(doc, hit, list, sizeof list);
            st = AM_FAIL(err, AM_E_NAME, "clip '%s' could be %s: give its full name or index", query, list);
            break;
        }
        /* two clips with the very same name: the first, as glTF viewers do */
        if (found > 1 && stage == 0)
            for (size_t i = doc->animation_count; i-- > 0;)
                if (hit[i]) *index = (int)i;
    }
    if (st == AM_OK && *index < 0) {
        ami_clip_list(doc, NULL, list, sizeof list);
        st = AM_FAIL(err, AM_E_NAME, "no clip '%s'; the clips are %s", query, list);
    }
    am_free(hit);
    return st;
}

char *am_clip_file_name(const char *name, size_t index, char *buf, size_t size)
{
    assert(buf && size > 0);
    const char *bar = name ? strrchr(name, '|') : NULL;
    const char *s = bar && bar[1] ? bar + 1 : name;
    char part[96]; /* file names stay short whatever the exporter called the clip */
    if (!s || !*s) snprintf(part, sizeof part, "clip%zu", index);
    else snprintf(part, sizeof part, "%s", s);
    for (char *p = part; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
            *p = '_';
    snprintf(buf, size, "%s", part);
    return buf;
}

/* A clip's own rate: the spacing of its keys when they are evenly spaced (glTF exporters bake
 * at 24, 30 or 60 fps), so sampling adds nothing between keys; else 30. */
double am_gltf_clip_rate(const am_gltf *doc, int anim)
{
    if (anim < 0) return 30;
    const am_gltf_animation *an = &doc->animations[anim];
    double dt = INFINITY;
    for (size_t s = 0; s < an->sampler_count; s++) {
        int32_t in = an->samplers[s].input;
        if (in < 0 || (size_t)in >= doc->accessor_count) continue;
        const am_gltf_accessor *a = &doc->accessors[in];
        for (size_t k = 1; k < a->count; k++) {
            double d = (double)a->data[k] - (double)a->data[k - 1];
            if (d > 1e-6 && d < dt) dt = d;
        }
    }
    if (!isfinite(dt)) return 30;
    double fps = 1.0 / dt, r = round(fps);
    /* float keys: 1/24 s read back as 0.041666668 */
    if (fabs(fps - r) < 1e-3 * r) fps = r;
    return fps >= 1 && fps <= 1000 ? fps : 30;
}
