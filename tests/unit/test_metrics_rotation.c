/* Rotation and position metrics of include/anymove/metrics.h (IK section). */
#include <string.h>

#include "am_test.h"
#include "anymove/math.h"
#include "anymove/metrics.h"

static void geodesic_matches_pose2rot_formula(void)
{
    double A[9], B[9];
    am_mat3_identity(A);
    for (int deg = 0; deg <= 180; deg += 15) {
        double axis[3] = {0.3, -0.5, 0.8}, q[4];
        am_vec3_normalize(axis, axis);
        am_quat_from_axis_angle(axis, AM_RAD(deg), q);
        am_quat_to_mat3(q, B);
        AM_CHECK_NEAR(am_geodesic_deg(B, A), deg, 1e-5); /* acos loses digits near 180 */
        AM_CHECK_NEAR(am_geodesic_deg(A, B), deg, 1e-5);
    }
    /* a slightly non-orthonormal input is clamped, never NaN */
    double C[9] = {1.0000001, 0, 0, 0, 1.0000001, 0, 0, 0, 1.0000001};
    AM_CHECK(am_geodesic_deg(C, C) == 0);
}

static void stats_are_numpy_percentiles(void)
{
    double v[] = {5, 1, 4, 2, 3, NAN};
    am_stats s;
    am_error err = {0};
    AM_CHECK_OK(am_stats_compute(v, 6, &s, &err), &err);
    AM_CHECK(s.count == 5);
    AM_CHECK_NEAR(s.mean, 3, 1e-12);
    AM_CHECK_NEAR(s.median, 3, 1e-12);
    AM_CHECK_NEAR(s.p95, 4.8, 1e-12); /* numpy.percentile([1..5], 95) */
    AM_CHECK_NEAR(s.max, 5, 0);
    AM_CHECK_OK(am_stats_compute(v, 0, &s, &err), &err);
    AM_CHECK(s.count == 0 && s.mean == 0);
}

static void position_error_and_body_size(void)
{
    double truth[2 * 2 * 3] = {0, 0, 0, 1, 2, 2, 0, 0, 0, 1, 2, 2};
    double pred[2 * 2 * 3] = {0, 0, 0.1, 1, 2, 2, 0, 0, 0, 1, 2, 2.3};
    uint8_t mask[2] = {1, 1};
    double per[2];
    am_stats s;
    am_error err = {0};
    AM_CHECK_OK(am_joint_position_error(pred, truth, 2, 2, mask, per, &s, &err), &err);
    AM_CHECK_NEAR(s.mean, 0.1, 1e-12);
    AM_CHECK_NEAR(s.max, 0.3, 1e-12);
    AM_CHECK_NEAR(per[0], 0.05, 1e-12);
    AM_CHECK_NEAR(per[1], 0.15, 1e-12);
    mask[1] = 0;
    AM_CHECK_OK(am_joint_position_error(pred, truth, 2, 2, mask, per, &s, &err), &err);
    AM_CHECK(s.count == 2 && isnan(per[1]));
    AM_CHECK_NEAR(am_body_size(truth, 2, NULL), 3, 1e-12);
    AM_CHECK_NEAR(am_body_size(truth, 2, mask), 0, 0);
}

#define AM_TESTS(X) \
    X(geodesic_matches_pose2rot_formula) X(stats_are_numpy_percentiles) X(position_error_and_body_size)
AM_TEST_MAIN(AM_TESTS)
