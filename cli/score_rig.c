/* `anymove score rig --truth TRUTH.npz DIR`: a Track2Rig result against the true clip (SPEC 5). */
#include <math.h>
#include <string.h>

#include "anymove/decompose.h"
#include "anymove/metrics.h"
#include "cli.h"
#include "score.h"
#include "core/internal.h"
#include "io/json_internal.h"

static void ami_score_rig_help(FILE *out)
{
    fprintf(out,
            "usage: anymove score rig --truth TRUTH.npz DIR [--tracks TRACKS.npz] [--quiet]\n\n"
            "Reconstructs every point from DIR/skin.npz, DIR/rig.json and DIR/motion.json by the\n"
            "SPEC 4.4 formula and prints one JSON line: reconstruction error (%% of body size) over\n"
            "all entries, the entries hidden in the input and the visible ones; joint error\n"
            "(symmetric chamfer, %% of body size and cm); bone counts. TRUTH.npz holds `points`\n"
            "[T,N,3] (clean), `joints` [T,J,3] and the input's `visible` [T,N] (or give --tracks).\n\n"
            "examples:\n"
            "  anymove rig examples/tracks/grison_walk.tracks.npz --bones 15 -o out/grison_rig\n"
            "  anymove score rig --truth examples/tracks/grison_walk.truth.npz out/grison_rig\n");
}

static am_status ami_get_f32(const am_npz *z, const char *name, int ndim, const char *src, float **out,
                             const am_array **arr, am_error *err)
{
    const am_array *a = am_npz_find(z, name);
    if (!a) return AM_FAIL_AT(err, AM_E_SCHEMA, src, 0, 0, "no '%s' array", name);
    if (a->ndim != ndim) return AM_FAIL_AT(err, AM_E_SHAPE, src, 0, 0, "'%s' must have %d dimensions", name, ndim);
    *out = am_alloc_array(a->count ? a->count : 1, sizeof(float));
    if (!*out) return AM_FAIL(err, AM_E_NOMEM, "%s", name);
    *arr = a;
    return am_array_to_f32(a, *out, err);
}

int am_score_rig_main(int argc, char **argv)
{
    const char *truth_path = NULL, *dir = NULL, *tracks_path = NULL, *v;
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_score_rig_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if ((v = am_cli_value(argc, argv, &i, "--truth"))) {
            truth_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--tracks"))) {
            tracks_path = v;
        } else if (argv[i][0] == '-') {
            return am_cli_usage("score rig", "unknown option or missing value '%s'", argv[i]);
        } else if (!dir) {
            dir = argv[i];
        } else {
            return am_cli_usage("score rig", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!truth_path || !dir) return am_cli_usage("score rig", "need --truth TRUTH.npz and DIR");
    am_error err = {0};
    am_npz *tz = NULL, *sz = NULL;
    am_rig *rig = NULL;
    am_motion *mo = NULL;
    am_tracks *tr = NULL;
    float *tp = NULL, *tj = NULL, *rest = NULL, *wt = NULL, *rec = NULL;
    int32_t *bi = NULL;
    uint8_t *vis = NULL;
    double *pj = NULL;
    int rc = 0;
    char path[4096];
    const am_array *ap = NULL, *aj = NULL, *ar = NULL, *aw = NULL, *ab;
    if (am_npz_load(truth_path, NULL, &tz, &err) != AM_OK) goto fail;
    if (ami_get_f32(tz, "points", 3, truth_path, &tp, &ap, &err) != AM_OK) goto fail;
    if (ami_get_f32(tz, "joints", 3, truth_path, &tj, &aj, &err) != AM_OK) goto fail;
    snprintf(path, sizeof path, "%s/rig.json", dir);
    if (am_rig_load(path, &rig, &err) != AM_OK) goto fail;
    snprintf(path, sizeof path, "%s/motion.json", dir);
    if (am_motion_load(path, rig, &mo, &err) != AM_OK) goto fail;
    snprintf(path, sizeof path, "%s/skin.npz", dir);
    if (am_npz_load(path, NULL, &sz, &err) != AM_OK) goto fail;
    if (ami_get_f32(sz, "rest", 2, path, &rest, &ar, &err) != AM_OK) goto fail;
    if (ami_get_f32(sz, "weight", 2, path, &wt, &aw, &err) != AM_OK) goto fail;
    size_t T = ap->shape[0], N = ap->shape[1], J = aj->shape[1];
    ab = am_npz_find(sz, "bone_index");
    if (!ab || ab->ndim != 2 || ab->shape[0] != N || ab->shape[1] != 4 || ar->shape[0] != N || aw->shape[0] != N ||
        aw->shape[1] != 4) {
        AM_FAIL_AT(&err, AM_E_SHAPE, path, 0, 0, "rest [N,3], bone_index and weight [N,4] with N = %zu expected", N);
        goto fail;
    }
    if (ap->shape[2] != 3 || aj->shape[0] != T || aj->shape[2] != 3 || mo->frame_count != T) {
        AM_FAIL_AT(&err, AM_E_SHAPE, truth_path, 0, 0, "%zu frames, the motion in %s %zu (joints [T,J,3] must agree)", T,
                   dir, mo->frame_count);
        goto fail;
    }
    bi = am_alloc_array(N * 4, sizeof(int32_t));
    double *bd = am_alloc_array(N * 4, sizeof(double));
    if (!bi || !bd) {
        am_free(bd);
        AM_FAIL(&err, AM_E_NOMEM, "bone_index");
        goto fail;
    }
    if (am_array_to_f64(ab, bd, &err) != AM_OK) {
        am_free(bd);
        goto fail;
    }
    for (size_t i = 0; i < N * 4; i++) bi[i] = (int32_t)bd[i];
    am_free(bd);
    if (tracks_path) {
        if (am_tracks_load(tracks_path, &tr, &err) != AM_OK) goto fail;
        if (tr->frame_count != T || tr->point_count != N) {
            AM_FAIL_AT(&err, AM_E_SHAPE, tracks_path, 0, 0, "%zu x %zu tracks, truth %zu x %zu", tr->frame_count,
                       tr->point_count, T, N);
            goto fail;
        }
        vis = tr->visible;
    } else {
        const am_array *av = am_npz_find(tz, "visible");
        if (av) {
            if (av->ndim != 2 || av->shape[0] != T || av->shape[1] != N) {
                AM_FAIL_AT(&err, AM_E_SHAPE, truth_path, 0, 0, "visible must be [%zu, %zu]", T, N);
                goto fail;
            }
            float *vf = am_alloc_array(T * N, sizeof(float));
            vis = am_alloc_array(T * N, 1);
            if (!vf || !vis || am_array_to_f32(av, vf, &err) != AM_OK) {
                am_free(vf);
                if (err.code == AM_OK) AM_FAIL(&err, AM_E_NOMEM, "visible");
                goto fail;
            }
            for (size_t i = 0; i < T * N; i++) vis[i] = vf[i] != 0.0f;
            am_free(vf);
        }
    }
    rec = am_alloc_array(T * N * 3, sizeof(float));
    pj = am_alloc_array(T * rig->joint_count * 3, sizeof(double));
    if (!rec || !pj) {
        AM_FAIL(&err, AM_E_NOMEM, "reconstruction");
        goto fail;
    }
    snprintf(path, sizeof path, "%s/skin.npz", dir);
    if (am_skin_reconstruct(rig, mo, N, rest, bi, wt, rec, &err) != AM_OK) {
        am_error_set_file(&err, path);
        goto fail;
    }
    am_track_errors te;
    if (am_track_recon_error(rec, tp, vis, T, N, &te, &err) != AM_OK) {
        am_error_set_file(&err, truth_path);
        goto fail;
    }
    am_rig_fk_clip(rig, mo, pj);
    double je = am_joint_chamfer(pj, rig->joint_count, tj, J, T);
    const am_array *atb = am_npz_find(tz, "bones");
    double true_bones = NAN;
    if (atb && am_array_scalar(atb, &true_bones, &err) != AM_OK) true_bones = NAN;
    am_buf out = {0};
    ami_jw w;
    ami_jw_begin(&w, &out, AMI_JSON_PRETTY);
    ami_jw_record(&w, NULL);
    ami_jw_number(&w, "recon_all_pct", te.recon_all);
    ami_jw_number(&w, "recon_hidden_pct", te.recon_hidden);
    ami_jw_number(&w, "recon_visible_pct", te.recon_visible);
    /* no true joints (a morph-only model): null, never a fake number */
    ami_jw_number_or_null(&w, "joint_error_pct", 100.0 * je / te.body_size);
    ami_jw_number_or_null(&w, "joint_error_cm", 100.0 * je);
    ami_jw_number(&w, "body_size_m", te.body_size);
    ami_jw_int(&w, "hidden_entries", (int64_t)te.hidden_count);
    ami_jw_int(&w, "entries", (int64_t)(T * N));
    ami_jw_int(&w, "bones", (int64_t)rig->bone_count);
    ami_jw_int(&w, "joints", (int64_t)rig->joint_count);
    ami_jw_int(&w, "true_joints", (int64_t)J);
    if (isfinite(true_bones)) ami_jw_int(&w, "true_bones", (int64_t)true_bones);
    ami_jw_close(&w);
    am_status js = ami_jw_finish(&w, &err);
    if (js == AM_OK) fwrite(out.data, 1, out.len, stdout);
    am_buf_free(&out);
    if (js != AM_OK) goto fail;
    goto done;
fail:
    rc = am_cli_fail("score rig", &err);
done:
    if (!tr) am_free(vis);
    am_tracks_free(tr);
    am_npz_free(tz);
    am_npz_free(sz);
    am_rig_free(rig);
    am_motion_free(mo);
    am_free(tp), am_free(tj), am_free(rest), am_free(wt), am_free(rec), am_free(bi), am_free(pj);
    return rc;
}
