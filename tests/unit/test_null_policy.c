/* The one NULL rule (docs/CONVENTIONS.md, core.h): a NULL where a pointer is required fails an
 * assert in every module, never a status. Built for Debug only (CMakeLists.txt): with NDEBUG
 * there is no assert to see. */
#include <stdlib.h>

#include "am_test.h"
#include "anymove/anymove.h"

#define AMI_ABORTS(call) AM_CHECK_ABORTS({ am_status ami_s_ = (call); (void)ami_s_; })

static am_status ami_eval_nothing(void *user, const double *x, am_lsq_sink *s)
{
    (void)user, (void)x, (void)s;
    return AM_OK;
}

/* One entry point per module, each with a NULL output or a NULL required input. */
static void null_arguments_assert_in_every_module(void)
{
    am_error err = {0};
    am_rig *rig = NULL;
    am_motion *mo = NULL;
    am_bvh *bvh = NULL;
    am_npz *z = NULL;
    am_lsq *ws = NULL;
    am_decomposition *dec = NULL;
    am_exam *ex = NULL;
    am_capture_result *res = NULL;
    am_synth_clip *clip = NULL;
    am_calib *cal = NULL;
    am_mdet *det = NULL;
    am_mexam *mex = NULL;
    am_triangulation *tri = NULL;
    am_stats st;
    double a[3] = {0, 0, 0};
    /* io */
    AMI_ABORTS(am_npz_load(NULL, NULL, &z, &err));
    AMI_ABORTS(am_gltf_load("x.glb", NULL, NULL, &err));
    AMI_ABORTS(am_bvh_parse(NULL, 5, "x.bvh", &bvh, &err));
    AMI_ABORTS(am_rig_from_bvh(NULL, NULL, &rig, &err));
    AMI_ABORTS(am_rig_from_gltf(NULL, 0, &rig, &err));
    AMI_ABORTS(am_motion_from_gltf(NULL, 0, NULL, -1, 30.0, &mo, &err));
    AMI_ABORTS(am_calib_load(NULL, NULL, &cal, &err));
    AMI_ABORTS(am_import_2d(NULL, AM_TRACK_AUTO, NULL, &det, &err));
    AMI_ABORTS(am_import_3d("x.trc", AM_TRACK_AUTO, NULL, NULL, &err));
    AMI_ABORTS(am_joints_create(1, 1, false, NULL, &err));
    AMI_ABORTS(am_mdet_load(NULL, &det, &err));
    /* camera */
    AMI_ABORTS(am_calib_create(1, NULL, &err));
    /* opt, metrics */
    AMI_ABORTS(am_lsq_create(NULL, &ws, &err));
    am_lsq_problem pb = {.param_count = 2};
    AMI_ABORTS(am_lsq_create(&pb, &ws, &err));
    pb.eval = ami_eval_nothing;
    AMI_ABORTS(am_lsq_create(&pb, NULL, &err));
    AMI_ABORTS(am_joint_position_error(NULL, a, 1, 1, NULL, NULL, &st, &err));
    /* stages */
    AMI_ABORTS(am_ik_validate(NULL, &err));
    AMI_ABORTS(am_decompose_run(NULL, NULL, &dec, &err));
    AMI_ABORTS(am_exam_generate(NULL, NULL, NULL, &ex, &err));
    AMI_ABORTS(am_capture_solve(NULL, NULL, NULL, NULL, &res, &err));
    AMI_ABORTS(am_sync_check(NULL, NULL, NULL, 0, NULL, NULL, NULL, &err));
    { am_det d0 = {0}; am_sync_stats ss; AMI_ABORTS(am_sync_check(&d0, NULL, NULL, 1, NULL, NULL, &ss, &err)); }
    am_synth_opts so = {0};
    AMI_ABORTS(am_synth_tracks(&so, NULL, &err));
    AMI_ABORTS(am_bake_gltf(NULL, NULL, &clip, &err));
    AMI_ABORTS(am_mexam_generate(NULL, NULL, NULL, NULL, &mex, &err));
    AMI_ABORTS(am_triangulate(NULL, NULL, NULL, &tri, &err));
}

/* Bad data keeps its status: the rule is about pointers only. */
static void bad_values_still_get_a_status(void)
{
    am_error err = {0};
    am_lsq *ws = NULL;
    am_lsq_problem pb = {.param_count = 0, .eval = ami_eval_nothing};
    AM_CHECK_STATUS(am_lsq_create(&pb, &ws, &err), AM_E_ARG);
    am_bvh *b = NULL;
    AM_CHECK_STATUS(am_bvh_parse("", 0, "empty.bvh", &b, &err), AM_E_SYNTAX);
    AM_CHECK(b == NULL);
    am_synth_opts so = {.plan = AM_SYNTH_PLAN_COUNT};
    am_synth_clip *c = NULL;
    AM_CHECK_STATUS(am_synth_tracks(&so, &c, &err), AM_E_ARG);
}

#define AM_TESTS(X) X(null_arguments_assert_in_every_module) X(bad_values_still_get_a_status)
AM_TEST_MAIN(AM_TESTS)
