/* libFuzzer target for joints.npz: read -> check the result is what the reader promises ->
 * write -> read back bit-identical -> bind onto a small rig -> free. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "anymove/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char ami_rig_json[] =
    "{\"joints\": {\"hips\": [0, 0, 1], \"chest\": [0, 0, 1.5], \"head\": [0, -0.1, 1.8]},"
    " \"bones\": [[\"spine\", \"hips\", \"chest\", null], [\"neck\", \"chest\", \"head\", \"spine\"]]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > ((size_t)4 << 20)) return 0;
    am_joints *jt = NULL;
    if (am_joints_read_mem(data, size, "fuzz.npz", &jt, NULL) != AM_OK) return 0;
    size_t T = jt->frame_count, J = jt->joint_count;
    if (T == 0 || J == 0 || !jt->joints || !jt->names || !(jt->fps >= 1e-3 && jt->fps <= 1e4)) abort();
    for (size_t i = 0; i < T * J; i++) {
        const double *p = jt->joints + 3 * i;
        bool missing = isnan(p[0]) && isnan(p[1]) && isnan(p[2]);
        if (!missing && !(isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]))) abort();
        if (jt->conf && !missing && !(jt->conf[i] >= 0 && jt->conf[i] <= 1)) abort();
    }
    char path[128];
    snprintf(path, sizeof path, "/tmp/anymove_fuzz_joints_%ld.npz", (long)getpid());
    /* Writing may refuse names libzip or the npy writer cannot store. */
    if (am_joints_write(path, jt, NULL) == AM_OK) {
        am_joints *back = NULL;
        if (am_joints_load(path, &back, NULL) != AM_OK) abort();
        if (back->frame_count != T || back->joint_count != J || back->fps != jt->fps ||
            memcmp(back->joints, jt->joints, T * J * 3 * sizeof(double)) != 0 ||
            (jt->conf && memcmp(back->conf, jt->conf, T * J * sizeof(double)) != 0))
            abort();
        for (size_t j = 0; j < J; j++)
            if (strcmp(back->names[j], jt->names[j]) != 0) abort();
        am_joints_free(back);
        remove(path);
    }
    am_rig *rig = NULL;
    if (am_rig_parse(ami_rig_json, sizeof ami_rig_json - 1, "rig.json", &rig, NULL) != AM_OK) abort();
    double *pos = malloc(T * rig->joint_count * 3 * sizeof *pos);
    uint8_t given[3];
    if (pos) {
        am_status s = am_joints_bind(jt, rig, pos, given, NULL);
        if (s != AM_OK && s != AM_E_NAME && s != AM_E_DUPLICATE) abort();
        free(pos);
    }
    am_rig_free(rig);
    am_joints_free(jt);
    return 0;
}
