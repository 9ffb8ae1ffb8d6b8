/* libFuzzer target for the glTF reader (.glb and .gltf): parse (keeping the source) -> rig ->
 * motion -> write the document back with the motion as its clip -> read that back -> sample ->
 * free. No base directory, so external URIs are refused and nothing is read from disk. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "anymove/gltf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > ((size_t)2 << 20)) return 0; /* cap: larger inputs only find OOMs */
    /* A small decode budget keeps accessors without bufferView from asking for gigabytes. */
    am_gltf_opts opts = {.max_bytes = (uint64_t)64 << 20, .flags = AM_GLTF_KEEP_SOURCE};
    am_gltf *doc = NULL;
    if (am_gltf_read_mem(data, size, "fuzz.glb", NULL, &opts, &doc, NULL) != AM_OK) return 0;
    if (doc->skin_count > 0) {
        am_rig *rig = NULL;
        if (am_rig_from_gltf(doc, 0, &rig, NULL) == AM_OK && doc->animation_count > 0) {
            am_motion *mo = NULL;
            /* A low fps and a 16 MiB budget keep adversarially long clips cheap: the budget
             * refuses them (AM_E_LIMIT) before sampling, as the default does at 512 MiB. */
            am_scope sc;
            am_scope_enter(&sc, &(am_context){.max_bytes = (uint64_t)16 << 20});
            am_status sampled = am_motion_from_gltf(doc, 0, rig, 0, 2.0, &mo, NULL);
            am_scope_leave(&sc, NULL);
            if (sampled == AM_OK) {
                /* What we write from a document we read must read back. */
                const am_motion *clips[1] = {mo};
                am_gltf_export ex = {.rig = rig, .clip_count = 1, .clips = clips, .source = doc};
                am_buf out = {0};
                if (am_gltf_write_mem(&ex, &out, NULL) == AM_OK) {
                    am_gltf *back = NULL;
                    if (am_gltf_read_mem(out.data, out.len, "back.glb", NULL, &opts, &back, NULL) != AM_OK)
                        abort();
                    am_gltf_free(back);
                }
                am_buf_free(&out);
                am_motion_free(mo);
            }
        }
        am_rig_free(rig);
    }
    if (doc->node_count > 0 && doc->node_count < 100000) {
        double *local = am_alloc_array(doc->node_count, 16 * sizeof(double));
        double *world = am_alloc_array(doc->node_count, 16 * sizeof(double));
        if (local && world) {
            int anim = doc->animation_count > 0 ? 0 : -1;
            double ts[3] = {0.0, 0.37, 1e9};
            for (int i = 0; i < 3; i++) {
                am_gltf_sample_local(doc, anim, ts[i], local);
                am_gltf_world_from_local(doc, local, world);
                double w[8];
                am_gltf_sample_weights(doc, anim, ts[i], 0, w, 8);
            }
        }
        am_free(local);
        am_free(world);
    }
    am_gltf_free(doc);
    return 0;
}
