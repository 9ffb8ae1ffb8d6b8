/* libFuzzer target for rig.json: parse -> write -> parse again -> write again -> free. A rig we
 * accepted and wrote must read back with the same bones and helpers and write the same bytes;
 * anything else is a bug and aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Real rigs are a few kB; bigger inputs only find out-of-memory, not bugs. */
    if (size > ((size_t)1 << 20)) return 0;
    am_rig *rig = NULL, *back = NULL;
    am_error err;
    if (am_rig_parse((const char *)data, size, "fuzz.json", &rig, &err) != AM_OK) return 0;
    char *text = NULL;
    if (am_rig_to_json(rig, &text, &err) == AM_OK) {
        if (am_rig_parse(text, strlen(text), "fuzz-rt.json", &back, &err) != AM_OK) abort();
        if (back->bone_count != rig->bone_count || back->joint_count != rig->joint_count) abort();
        for (size_t b = 0; b < rig->bone_count; b++)
            if (strcmp(back->bone_names[b], rig->bone_names[b]) != 0 ||
                back->parent[b] != rig->parent[b] || back->is_helper[b] != rig->is_helper[b])
                abort();
        char *again = NULL;
        if (am_rig_to_json(back, &again, &err) != AM_OK || strcmp(again, text) != 0) abort();
        am_free(again);
    }
    am_free(text);
    am_rig_free(back);
    am_rig_free(rig);
    return 0;
}
