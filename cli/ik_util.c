#include <errno.h>
#include <jansson.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ik_util.h"
#include "core/internal.h"

am_status am_cli_rig_load(const char *path, am_rig **out, am_error *err)
{
    AMI_TRY(am_rig_load(path, out, err));
    am_rig *rig = *out;
    if (!rig->extra_json || !rig->is_helper) return AM_OK;
    json_t *root = json_loads(rig->extra_json, 0, NULL);
    json_t *h = root ? json_object_get(root, "helpers") : NULL;
    size_t i;
    json_t *v;
    if (json_is_array(h))
        json_array_foreach(h, i, v) {
            int b = json_is_string(v) ? am_rig_find_bone(rig, json_string_value(v)) : -1;
            if (b >= 0) rig->is_helper[b] = 1;
        }
    json_decref(root);
    return AM_OK;
}

am_status am_cli_rig_store_helpers(am_rig *rig, am_error *err)
{
    if (!rig->is_helper) return AM_OK;
    size_t n = 0;
    for (size_t b = 0; b < rig->bone_count; b++) n += rig->is_helper[b];
    if (!n) return AM_OK;
    json_t *root = rig->extra_json ? json_loads(rig->extra_json, 0, NULL) : json_object();
    if (!json_is_object(root)) {
        json_decref(root);
        root = json_object();
    }
    json_t *arr = json_array();
    for (size_t b = 0; b < rig->bone_count; b++)
        if (rig->is_helper[b]) json_array_append_new(arr, json_string(rig->bone_names[b]));
    json_object_set_new(root, "helpers", arr);
    char *text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    if (!text) return AM_FAIL(err, AM_E_NOMEM, "helpers");
    char *copy = am_strdup(text);
    free(text);
    if (!copy) return AM_FAIL(err, AM_E_NOMEM, "helpers");
    am_free(rig->extra_json);
    rig->extra_json = copy;
    return AM_OK;
}

