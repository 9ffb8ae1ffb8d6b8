/* libFuzzer target for creature.json: parse -> check the result is usable -> parse again
 * (there is no creature writer) -> free. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > ((size_t)1 << 20)) return 0;
    am_creature *c = NULL, *again = NULL;
    am_error err;
    if (am_creature_parse((const char *)data, size, "fuzz.json", &c, &err) != AM_OK) return 0;
    const am_layout *l = &c->layout;
    if (!(l->w_front > 0 && l->w_side > 0 && l->m_per_px > 0) || !isfinite(l->front_cx) ||
        !isfinite(l->side_cx) || !isfinite(l->ground_v))
        abort();
    if (!c->contacts && c->contact_count) abort();
    size_t total = 0;
    for (size_t i = 0; i < c->feet_count; i++) total += strlen(c->feet[i]);
    for (size_t i = 0; i < c->contact_count; i++) total += strlen(c->contacts[i]);
    (void)total;
    /* Parsing is deterministic. */
    if (am_creature_parse((const char *)data, size, "fuzz.json", &again, &err) != AM_OK) abort();
    if (memcmp(&again->layout, &c->layout, sizeof c->layout) != 0 ||
        again->feet_count != c->feet_count || again->contact_count != c->contact_count)
        abort();
    am_creature_free(again);
    am_creature_free(c);
    return 0;
}
