/* align.json: the similarity transform of an align run and the cues that set it, through the
 * one JSON writer (docs/align.md documents every key). */
#include "anymove/align.h"
#include "io/json_internal.h"

am_status am_align_write_json(const am_align_result *r, const char *input, const char *path, am_error *err)
{
    am_buf buf = {0};
    ami_jw w;
    ami_jw_begin(&w, &buf, AMI_JSON_PRETTY);
    ami_jw_object(&w, NULL);
    ami_jw_string(&w, "input", input);
    ami_jw_string(&w, "convention", "p_world = scale * rotation * p_input + translation");
    ami_jw_number(&w, "scale", r->scale);
    size_t shape[2] = {3, 3};
    ami_jw_numbers(&w, "rotation", r->rotation, 2, shape);
    ami_jw_row(&w, "quat");
    for (int i = 0; i < 4; i++) ami_jw_number(&w, NULL, r->quat[i]);
    ami_jw_close(&w);
    ami_jw_row(&w, "translation");
    for (int i = 0; i < 3; i++) ami_jw_number(&w, NULL, r->translation[i]);
    ami_jw_close(&w);
    size_t shape4[2] = {4, 4};
    ami_jw_numbers(&w, "matrix", r->matrix, 2, shape4);
    ami_jw_record(&w, "cues");
    ami_jw_string(&w, "up", am_align_up_name(r->up_from));
    ami_jw_string(&w, "forward", am_align_forward_name(r->forward_from));
    ami_jw_string(&w, "forward_sign", am_align_sign_name(r->sign_from));
    ami_jw_close(&w);
    ami_jw_record(&w, "evidence");
    if (r->up_from == AM_ALIGN_UP_GROUND) {
        ami_jw_int(&w, "ground_inliers", (int64_t)r->ground_inliers);
        ami_jw_number(&w, "ground_rms_m", r->ground_rms);
    }
    ami_jw_number(&w, "travel_m", r->travel);
    if (r->forward_from == AM_ALIGN_FORWARD_AXIS) {
        ami_jw_number(&w, "mirror_ratio", r->mirror_ratio);
        ami_jw_number(&w, "gait_corr", r->gait_corr);
    }
    ami_jw_close(&w);
    ami_jw_number(&w, "height_m", r->height);
    ami_jw_number(&w, "length_m", r->length);
    ami_jw_number(&w, "body_size_input", r->body_size_in);
    ami_jw_close(&w);
    am_status st = ami_jw_write_file(&w, path, err);
    am_buf_free(&buf);
    return st;
}
