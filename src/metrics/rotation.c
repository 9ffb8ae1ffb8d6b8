/* Rotation and joint-position metrics (SPEC 5; pose2rot's geodesic error). */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/math.h"
#include "anymove/metrics.h"
#include "core/internal.h"

static int ami_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Linear interpolation between order statistics (numpy 'linear'). */
static double ami_percentile(const double *sorted, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)floor(pos);
    size_t hi = lo + 1 < n ? lo + 1 : lo;
    double f = pos - (double)lo;
    return sorted[lo] + f * (sorted[hi] - sorted[lo]);
}

am_status am_stats_compute(const double *values, size_t n, am_stats *out, am_error *err)
{
    memset(out, 0, sizeof *out);
    if (n == 0) return AM_OK;
    double *v = am_alloc_array(n, sizeof *v);
    if (!v) return AM_FAIL(err, AM_E_NOMEM, "statistics of %zu values", n);
    size_t m = 0;
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(values[i])) {
            v[m++] = values[i];
            sum += values[i];
        }
    if (m) {
        qsort(v, m, sizeof *v, ami_cmp_double);
        out->count = m;
        out->mean = sum / (double)m;
        out->median = ami_percentile(v, m, 0.5);
        out->p95 = ami_percentile(v, m, 0.95);
        out->max = v[m - 1];
    }
    am_free(v);
    return AM_OK;
}

double am_geodesic_deg(const double R_pred[9], const double R_true[9])
{
    double tr = 0;
    for (int i = 0; i < 9; i++) tr += R_pred[i] * R_true[i]; /* tr(A^T B) = sum A_ij B_ij */
    double c = (tr - 1.0) / 2.0;
    c = c > 1 ? 1 : c < -1 ? -1 : c;
    return AM_DEG(acos(c));
}

static void ami_local_rot(const am_motion *mo, size_t t, size_t b, bool root, double R[9])
{
    size_t B = mo->bone_count;
    if (root) am_quat_to_mat3(mo->root_quat + t * 4, R);
    else if (mo->quat) am_quat_to_mat3(mo->quat + (t * B + b) * 4, R);
    else am_euler_xyz_to_mat3(mo->euler + (t * B + b) * 3, R);
}

am_status am_motion_rotation_error(const am_rig *rig, const am_motion *pred, const am_motion *truth,
                                   const am_rot_error_opts *opts, double *per_entry,
                                   am_stats *out, am_error *err)
{
    am_rot_error_opts o = {0};
    if (opts) o = *opts;
    assert(rig && pred && truth && out);
    size_t B = rig->bone_count;
    AMI_CHECK(err, pred->bone_count == B && truth->bone_count == B, AM_E_SHAPE,
              "motions have %zu and %zu bones, the rig %zu", pred->bone_count, truth->bone_count, B);
    size_t T = pred->frame_count < truth->frame_count ? pred->frame_count : truth->frame_count;
    AMI_CHECK(err, o.first_frame < T, AM_E_SHAPE, "first frame %zu of %zu", o.first_frame, T);
    size_t n = o.frame_count ? o.frame_count : T - o.first_frame;
    if (o.first_frame + n > T) n = T - o.first_frame;
    uint8_t *leaf = am_alloc(B);
    double *vals = per_entry ? per_entry : am_alloc_array(n * B, sizeof *vals);
    if (!leaf || !vals) {
        am_free(leaf);
        if (!per_entry) am_free(vals);
        return AM_FAIL(err, AM_E_NOMEM, "rotation error");
    }
    memset(leaf, 1, B);
    for (size_t b = 0; b < B; b++)
        if (rig->parent[b] >= 0) leaf[rig->parent[b]] = 0;
    for (size_t i = 0; i < n; i++) {
        size_t t = o.first_frame + i;
        for (size_t b = 0; b < B; b++) {
            bool root = rig->parent[b] < 0;
            bool skip = (root && (o.flags & AM_ROTERR_SKIP_ROOT)) ||
                        (leaf[b] && !root && (o.flags & AM_ROTERR_SKIP_LEAVES)) ||
                        (rig->is_helper && rig->is_helper[b] && !(o.flags & AM_ROTERR_KEEP_HELPERS));
            if (skip) {
                vals[i * B + b] = NAN;
                continue;
            }
            double Rp[9], Rt[9];
            ami_local_rot(pred, t, b, root, Rp);
            ami_local_rot(truth, t, b, root, Rt);
            vals[i * B + b] = am_geodesic_deg(Rp, Rt);
        }
    }
    am_status s = am_stats_compute(vals, n * B, out, err);
    am_free(leaf);
    if (!per_entry) am_free(vals);
    return s;
}

am_status am_joint_position_error(const double *pred, const double *truth, size_t frames,
                                  size_t joints, const uint8_t *mask, double *out_per_joint,
                                  am_stats *out, am_error *err)
{
    assert(pred && truth && out);
    size_t cnt = frames * joints;
    double *d = am_alloc_array(cnt ? cnt : 1, sizeof *d);
    if (!d) return AM_FAIL(err, AM_E_NOMEM, "position error");
    for (size_t t = 0; t < frames; t++)
        for (size_t j = 0; j < joints; j++) {
            size_t i = t * joints + j;
            d[i] = mask && !mask[j] ? NAN : am_vec3_dist(pred + i * 3, truth + i * 3);
        }
    if (out_per_joint)
        for (size_t j = 0; j < joints; j++) {
            double s = 0;
            size_t n = 0;
            for (size_t t = 0; t < frames; t++)
                if (!isnan(d[t * joints + j])) s += d[t * joints + j], n++;
            out_per_joint[j] = (mask && !mask[j]) || !n ? NAN : s / (double)n;
        }
    am_status st = am_stats_compute(d, frames * joints, out, err);
    am_free(d);
    return st;
}

double am_units_hint(double body_size)
{
    if (!(body_size > 0.0) || !isfinite(body_size)) return 1.0;
    if (body_size >= AM_UNITS_MIN_BODY && body_size <= AM_UNITS_MAX_BODY) return 1.0;
    /* Files are in centimetres or millimetres far more often than in anything else. */
    static const double down[] = {0.01, 0.001}, up[] = {100.0, 1000.0};
    const double *cand = body_size > AM_UNITS_MAX_BODY ? down : up;
    for (size_t i = 0; i < 2; i++) {
        double s = body_size * cand[i];
        if (s >= AM_UNITS_MIN_BODY && s <= AM_UNITS_MAX_BODY) return cand[i];
    }
    return cand[1];
}
