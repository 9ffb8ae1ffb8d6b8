/* libFuzzer target for map.json: parse -> write -> parse again -> write again -> free. A map we
 * accepted and wrote must read back with the same entries and write the same bytes, and no
 * target bone may have two drivers; anything else is a bug and aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int ami_same(const char *a, const char *b) { return (!a && !b) || (a && b && strcmp(a, b) == 0); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > ((size_t)1 << 20)) return 0;
    am_bone_map *map = NULL, *back = NULL;
    am_error err;
    if (am_bone_map_parse((const char *)data, size, "fuzz.json", &map, &err) != AM_OK) return 0;
    for (size_t i = 0; i < map->count; i++)
        for (size_t k = i + 1; k < map->count; k++)
            if (map->target[i] && map->target[k] && strcmp(map->target[i], map->target[k]) == 0) abort();
    char *text = NULL;
    if (am_bone_map_to_json(map, &text, &err) == AM_OK) {
        if (am_bone_map_parse(text, strlen(text), "fuzz-rt.json", &back, &err) != AM_OK) abort();
        if (back->count != map->count || back->rule_count != map->rule_count) abort();
        for (size_t i = 0; i < map->count; i++)
            if (strcmp(back->source[i], map->source[i]) != 0 || !ami_same(back->target[i], map->target[i])) abort();
        char *again = NULL;
        if (am_bone_map_to_json(back, &again, &err) != AM_OK || strcmp(again, text) != 0) abort();
        am_free(again);
    }
    am_free(text);
    am_bone_map_free(back);
    am_bone_map_free(map);
    return 0;
}
