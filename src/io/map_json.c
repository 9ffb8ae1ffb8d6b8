/* map.json (SPEC 4.3.1): which target bone each source bone drives, and why. The file holds
 * names only; whether they are bones of two given rigs is the retarget stage's check. */
#include <string.h>

#include "anymove/io.h"
#include "core/internal.h"
#include "io/json_internal.h"

#define AMI_MAP_MAX_BYTES ((size_t)16 << 20)

void am_bone_map_free(am_bone_map *map)
{
    if (!map) return;
    ami_strings_free(map->source, map->count);
    ami_strings_free(map->target, map->count);
    ami_strings_free(map->rule_bone, map->rule_count);
    ami_strings_free(map->rule_text, map->rule_count);
    am_free(map);
}

/* Keys and (string or null) values of one object member: the "bones" and "rules" tables. */
static am_status ami_map_table(const json_t *doc, const char *key, bool required, bool null_ok, char ***keys,
                               char ***values, size_t *count, am_error *err)
{
    json_t *tab = NULL;
    AMI_TRY(ami_json_member(doc, "", key, required, &tab, err));
    if (!tab) return AM_OK;
    AMI_TRY(ami_json_expect(tab, JSON_OBJECT, key, err));
    size_t n = json_object_size(tab);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)tab, k, v) {
        ami_jpath path = ami_json_path_key(key, k);
        AMI_CHECK(err, k[0], AM_E_VALUE, "%s: an empty bone name", key);
        if (json_is_null(v) && null_ok) continue;
        const char *s = NULL;
        AMI_TRY(ami_json_string(v, path.s, &s, err));
        AMI_CHECK(err, s[0], AM_E_VALUE, "%s: an empty name (null means: drives nothing)", path.s);
    }
    if (!n) return AM_OK;
    *keys = am_alloc_array(n, sizeof **keys);
    *values = am_alloc_array(n, sizeof **values);
    AMI_CHECK(err, *keys && *values, AM_E_NOMEM, "%s: %zu entries", key, n);
    json_object_foreach((json_t *)tab, k, v) {
        size_t i = *count;
        (*keys)[i] = am_strdup(k);
        (*values)[i] = json_is_null(v) ? NULL : am_strdup(json_string_value(v));
        (*count)++;
        AMI_CHECK(err, (*keys)[i] && (json_is_null(v) || (*values)[i]), AM_E_NOMEM, "%s", key);
    }
    return AM_OK;
}

/* An ami_json_reader: out is an am_bone_map **. */
static am_status ami_map_from_doc(const json_t *doc, const void *user, void *out_, am_error *err)
{
    (void)user;
    am_bone_map **out = out_;
    AMI_TRY(ami_json_expect(doc, JSON_OBJECT, "", err));
    am_bone_map *m = am_alloc(sizeof *m);
    AMI_CHECK(err, m, AM_E_NOMEM, "map");
    am_status s = ami_map_table(doc, "bones", true, true, &m->source, &m->target, &m->count, err);
    if (s == AM_OK) s = ami_map_table(doc, "rules", false, false, &m->rule_bone, &m->rule_text, &m->rule_count, err);
    /* One target bone has one driver: a map that sends two source bones to it cannot say
     * which of the two it means. */
    for (size_t i = 0; s == AM_OK && i < m->count; i++)
        for (size_t k = i + 1; s == AM_OK && m->target[i] && k < m->count; k++)
            if (m->target[k] && strcmp(m->target[i], m->target[k]) == 0)
                s = AM_FAIL(err, AM_E_DUPLICATE, "bones: '%s' and '%s' both drive target bone '%s'", m->source[i],
                            m->source[k], m->target[i]);
    if (s != AM_OK) {
        am_bone_map_free(m);
        return s;
    }
    *out = m;
    return AM_OK;
}

am_status am_bone_map_parse(const char *text, size_t len, const char *source, am_bone_map **out, am_error *err)
{
    *out = NULL;
    return ami_json_parse_into(text, len, source, ami_map_from_doc, NULL, out, err);
}

am_status am_bone_map_load(const char *path, am_bone_map **out, am_error *err)
{
    *out = NULL;
    return ami_json_load_into(path, AMI_MAP_MAX_BYTES, ami_map_from_doc, NULL, out, err);
}

static void ami_map_json(const am_bone_map *map, ami_jw *w)
{
    ami_jw_object(w, NULL);
    ami_jw_object(w, "bones");
    for (size_t i = 0; i < map->count; i++) ami_jw_string(w, map->source[i], map->target[i]);
    ami_jw_close(w);
    if (map->rule_count) {
        ami_jw_object(w, "rules");
        for (size_t i = 0; i < map->rule_count; i++) ami_jw_string(w, map->rule_bone[i], map->rule_text[i]);
        ami_jw_close(w);
    }
    ami_jw_close(w);
}

am_status am_bone_map_to_json(const am_bone_map *map, char **out, am_error *err)
{
    am_buf b = {0};
    ami_jw w;
    ami_jw_begin(&w, &b, AMI_JSON_PRETTY);
    ami_map_json(map, &w);
    return ami_jw_take_string(&w, out, err);
}

am_status am_bone_map_write(const am_bone_map *map, const char *path, am_error *err)
{
    am_buf b = {0};
    ami_jw w;
    ami_jw_begin(&w, &b, AMI_JSON_PRETTY);
    ami_map_json(map, &w);
    am_status s = ami_jw_write_file(&w, path, err);
    am_buf_free(&b);
    return s;
}
