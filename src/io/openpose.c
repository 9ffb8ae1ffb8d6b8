/* OpenPose JSON: one <name>_<frame>_keypoints.json per frame, `people[]` each with a flat
 * `pose_keypoints_2d` [x0, y0, c0, x1, ...].
 *
 * Decisions: the person is people[--person - 1], else in each frame the one with the highest
 * mean keypoint confidence (OpenPose's person_id is -1 unless its tracker ran); an undetected
 * keypoint (0, 0, 0, or confidence 0) is not seen. Joint names by keypoint count: 25 BODY_25
 * (or BODY_25B with --skeleton body25b: the same count, another order), 18 COCO, 15 MPI,
 * 135 BODY_135 as kp_<i>; any other count kp_<i>. Keypoint counts must agree across frames.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "io/json_internal.h"
#include "io/trackers_internal.h"

static const char *const ami_body25[25] = {
    "Nose",  "Neck",  "RShoulder", "RElbow", "RWrist",  "LShoulder", "LElbow",    "LWrist",   "MidHip",
    "RHip",  "RKnee", "RAnkle",    "LHip",   "LKnee",   "LAnkle",    "REye",      "LEye",     "REar",
    "LEar",  "LBigToe", "LSmallToe", "LHeel", "RBigToe", "RSmallToe", "RHeel"};
static const char *const ami_body25b[25] = {
    "Nose",   "LEye",     "REye",  "LEar",  "REar",  "LShoulder", "RShoulder", "LElbow",  "RElbow",
    "LWrist", "RWrist",   "LHip",  "RHip",  "LKnee", "RKnee",     "LAnkle",    "RAnkle",  "UpperNeck",
    "HeadTop", "LBigToe", "LSmallToe", "LHeel", "RBigToe", "RSmallToe", "RHeel"};
static const char *const ami_coco18[18] = {"Nose", "Neck",  "RShoulder", "RElbow", "RWrist", "LShoulder",
                                           "LElbow", "LWrist", "RHip", "RKnee", "RAnkle", "LHip",
                                           "LKnee", "LAnkle", "REye", "LEye", "REar", "LEar"};
static const char *const ami_mpi15[15] = {"Head",   "Neck",  "RShoulder", "RElbow", "RWrist",
                                          "LShoulder", "LElbow", "LWrist", "RHip", "RKnee",
                                          "RAnkle", "LHip", "LKnee", "LAnkle", "Chest"};

char **ami_openpose_names(size_t K, const char *skeleton)
{
    if (K == 25) return ami_names_dup(skeleton && strcmp(skeleton, "body25b") == 0 ? ami_body25b : ami_body25, 25);
    if (K == 18) return ami_names_dup(ami_coco18, 18);
    if (K == 15) return ami_names_dup(ami_mpi15, 15);
    char **s = am_alloc_array(K ? K : 1, sizeof *s);
    for (size_t k = 0; s && k < K; k++) {
        char b[24];
        snprintf(b, sizeof b, "kp_%zu", k);
        if (!(s[k] = am_strdup(b))) {
            ami_strings_free(s, k);
            return NULL;
        }
    }
    return s;
}

am_status ami_openpose_frame(const char *text, size_t len, const char *src, const am_import_opts *o, float **kp,
                             size_t *k_out, am_error *err)
{
    *kp = NULL;
    *k_out = 0;
    json_t *doc = NULL;
    AMI_TRY(ami_json_parse(text, len, src, &doc, err));
    am_status st = AM_OK;
    json_t *people = json_object_get(doc, "people");
    if (!json_is_object(doc) || !json_is_array(people)) {
        st = AM_FAIL_AT(err, AM_E_SCHEMA, src, 0, 0, "an OpenPose frame is an object with a 'people' array");
        goto done;
    }
    size_t np = json_array_size(people), pick = np, K = 0;
    double best = -1;
    for (size_t p = 0; p < np; p++) {
        json_t *kps = json_object_get(json_array_get(people, p), "pose_keypoints_2d");
        if (!json_is_array(kps) || json_array_size(kps) % 3 != 0) {
            st = AM_FAIL_AT(err, AM_E_SCHEMA, src, 0, 0, "people[%zu].pose_keypoints_2d must be an array of x, y, c triples", p);
            goto done;
        }
        size_t n = json_array_size(kps) / 3;
        if (p > 0 && n != K) {
            st = AM_FAIL_AT(err, AM_E_SHAPE, src, 0, 0, "people[%zu] has %zu keypoints, people[0] %zu", p, n, K);
            goto done;
        }
        K = n;
        double s = 0;
        for (size_t q = 0; q < 3 * n; q++) {
            json_t *v = json_array_get(kps, q);
            if (!json_is_number(v) || !isfinite(json_number_value(v))) {
                st = AM_FAIL_AT(err, AM_E_SCHEMA, src, 0, 0, "people[%zu].pose_keypoints_2d[%zu] is not a number", p, q);
                goto done;
            }
            if (q % 3 == 2) s += json_number_value(v);
        }
        double m = n ? s / (double)n : 0;
        if (m > best) best = m, pick = p;
    }
    if (o && o->person > 0) pick = (size_t)o->person - 1 < np ? (size_t)o->person - 1 : np;
    if (pick >= np || K == 0) goto done; /* nobody (or not that person) in this frame */
    json_t *kps = json_object_get(json_array_get(people, pick), "pose_keypoints_2d");
    float *k = am_alloc_array(3 * K, sizeof *k);
    if (!k) {
        st = AM_FAIL(err, AM_E_NOMEM, "keypoints");
        goto done;
    }
    for (size_t q = 0; q < 3 * K; q++) k[q] = (float)json_number_value(json_array_get(kps, q));
    *kp = k;
    *k_out = K;
done:
    json_decref(doc);
    return st;
}
