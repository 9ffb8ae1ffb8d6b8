/* libFuzzer target for motion.json: parse (bound to a fixed small rig, and unbound) -> write ->
 * parse again -> write again -> FK -> free. A motion we accepted and wrote must read back with
 * the same shape and write the same bytes; anything else is a bug and aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The same three-bone chain as fuzz/corpus/rig/chain.json, so corpus motions bind to it. */
static const char ami_fuzz_rig[] =
    "{\"joints\": {\"a\": [0, 0, 0], \"b\": [0, 0, 1], \"c\": [0.2, 0, 1.5], \"d\": [-0.2, 0, 1.5]},"
    " \"bones\": [[\"trunk\", \"a\", \"b\", null], [\"arm_L\", \"b\", \"c\", \"trunk\"],"
    " [\"arm_R\", \"b\", \"d\", \"trunk\"]],"
    " \"limits_deg\": {\"arm\": [[-10, 20], [-30, 40], [-50, 60]]}}";

static void ami_fuzz_roundtrip(const am_motion *mo, const am_rig *rig)
{
    char *text = NULL;
    am_motion *back = NULL;
    am_error err;
    /* Writing may refuse (e.g. NONFINITE); what it writes must parse. */
    if (am_motion_to_json(mo, &text, &err) == AM_OK) {
        if (am_motion_parse(text, strlen(text), "fuzz-rt.json", rig, &back, &err) != AM_OK)
            abort();
        if (back->frame_count != mo->frame_count || back->bone_count != mo->bone_count ||
            back->joint_count != mo->joint_count || (back->loc == NULL) != (mo->loc == NULL))
            abort();
        /* Written numbers read back bit-identical: writing again gives the same bytes. */
        char *again = NULL;
        if (am_motion_to_json(back, &again, &err) != AM_OK || strcmp(again, text) != 0) abort();
        am_free(again);
    }
    am_free(text);
    am_motion_free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > ((size_t)1 << 20)) return 0;
    static am_rig *rig;
    if (!rig) {
        am_error err;
        if (am_rig_parse(ami_fuzz_rig, sizeof ami_fuzz_rig - 1, "rig", &rig, &err) != AM_OK)
            abort();
    }
    am_error err;
    am_motion *mo = NULL;
    if (am_motion_parse((const char *)data, size, "fuzz.json", rig, &mo, &err) == AM_OK) {
        ami_fuzz_roundtrip(mo, rig);
        if (am_motion_compute_joints(mo, rig, &err) != AM_OK) abort();
    }
    am_motion_free(mo);
    mo = NULL;
    if (am_motion_parse((const char *)data, size, "fuzz.json", NULL, &mo, &err) == AM_OK)
        ami_fuzz_roundtrip(mo, NULL);
    am_motion_free(mo);
    return 0;
}
