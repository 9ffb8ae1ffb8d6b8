/* FK throughput and GLB export time on a synthetic 60-bone rig and a 1,000-frame clip.
 * usage: bench_fk [frames] [bones] [repeats] [out.glb]
 * Prints one JSON line with medians over the repeats. Single thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/anymove.h"

static int ami_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double ami_median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, ami_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* A branching creature: a spine chain with limbs hanging off every few vertebrae. */
static am_status ami_make_rig(size_t bones, am_rig **out, am_error *err)
{
    size_t nj = bones + 1;
    char (*jn)[32] = calloc(nj, 32), (*bn)[32] = calloc(bones, 32);
    const char **jnames = calloc(nj, sizeof *jnames), **bnames = calloc(bones, sizeof *bnames);
    const char **heads = calloc(bones, sizeof *heads), **tails = calloc(bones, sizeof *tails);
    const char **parents = calloc(bones, sizeof *parents);
    double *pos = calloc(nj * 3, sizeof *pos);
    am_status s = AM_E_NOMEM;
    if (!jn || !bn || !jnames || !bnames || !heads || !tails || !parents || !pos) goto done;
    for (size_t j = 0; j < nj; j++) {
        snprintf(jn[j], 32, "j%zu", j);
        jnames[j] = jn[j];
    }
    size_t spine = bones / 3 + 1;
    for (size_t b = 0; b < bones; b++) {
        snprintf(bn[b], 32, "b%zu", b);
        bnames[b] = bn[b];
        tails[b] = jnames[b + 1];
        if (b < spine) {
            heads[b] = jnames[b];
            parents[b] = b ? bnames[b - 1] : NULL;
            pos[(b + 1) * 3 + 1] = -0.1 * (double)(b + 1);
            pos[(b + 1) * 3 + 2] = 1.0;
        } else {
            size_t limb = b - spine, at = limb % spine;
            bool first = limb % 2 == 0;
            heads[b] = first ? jnames[at + 1] : jnames[b];
            parents[b] = first ? bnames[at] : bnames[b - 1];
            const double *h = pos + (first ? at + 1 : b) * 3;
            pos[(b + 1) * 3 + 0] = h[0] + 0.05 * (double)(limb % 3 + 1);
            pos[(b + 1) * 3 + 1] = h[1] + 0.01;
            pos[(b + 1) * 3 + 2] = h[2] - 0.2;
        }
    }
    pos[2] = 1.0;
    am_rig_desc d = {.joint_count = nj, .joint_names = jnames, .joint_pos = pos,
                     .bone_count = bones, .bone_names = bnames, .bone_head = heads,
                     .bone_tail = tails, .bone_parent = parents, .source = "bench"};
    s = am_rig_build(&d, out, err);
done:
    free(jn); free(bn); free(jnames); free(bnames); free(heads); free(tails); free(parents); free(pos);
    return s;
}

int main(int argc, char **argv)
{
    size_t frames = argc > 1 ? (size_t)atol(argv[1]) : 1000;
    size_t bones = argc > 2 ? (size_t)atol(argv[2]) : 60;
    size_t repeats = argc > 3 ? (size_t)atol(argv[3]) : 9;
    const char *glb = argc > 4 ? argv[4] : "/tmp/am_bench_fk.glb";
    if (frames < 1 || bones < 2 || repeats < 1 || repeats > 99) return 2;
    am_error err = {0};
    am_rig *rig = NULL;
    am_motion *mo = NULL;
    char msg[512];
    if (ami_make_rig(bones, &rig, &err) != AM_OK ||
        am_motion_create(rig, frames, 30.0, &mo, &err) != AM_OK) {
        fprintf(stderr, "%s\n", am_error_format(msg, sizeof msg, &err));
        return 1;
    }
    srand(7);
    for (size_t i = 0; i < frames * bones * 3; i++)
        mo->euler[i] = 0.6 * ((double)rand() / RAND_MAX - 0.5);
    for (size_t t = 0; t < frames; t++) mo->trans[t * 3 + 1] = -0.01 * (double)t;
    double *joints = malloc(frames * rig->joint_count * 3 * sizeof *joints);
    double fk_s[99], glb_s[99], checksum = 0;
    for (size_t r = 0; r < repeats; r++) {
        double t0 = am_now();
        am_rig_fk_clip(rig, mo, joints);
        fk_s[r] = am_now() - t0;
        for (size_t i = 0; i < frames * rig->joint_count * 3; i++) checksum += joints[i];
    }
    for (size_t r = 0; r < repeats; r++) {
        const am_motion *clips[1] = {mo};
        am_gltf_export ex = {.rig = rig, .clip_count = 1, .clips = clips};
        double t0 = am_now();
        if (am_gltf_write(&ex, glb, &err) != AM_OK) {
            fprintf(stderr, "%s\n", am_error_format(msg, sizeof msg, &err));
            return 1;
        }
        glb_s[r] = am_now() - t0;
    }
    double fk_med = ami_median(fk_s, repeats), glb_med = ami_median(glb_s, repeats);
    printf("{\"frames\": %zu, \"bones\": %zu, \"repeats\": %zu, \"fk_clip_s\": %.6f, "
           "\"fk_frame_bones_per_s\": %.4g, \"glb_export_s\": %.6f, \"checksum\": %.6g}\n",
           frames, bones, repeats, fk_med, (double)(frames * bones) / fk_med, glb_med, checksum);
    free(joints);
    am_motion_free(mo);
    am_rig_free(rig);
    return 0;
}
