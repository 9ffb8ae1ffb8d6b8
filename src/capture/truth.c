/* truth.npz of an exam, read back for scoring (shape-checked: it may come from anywhere). */
#include <math.h>
#include <string.h>

#include "capture_internal.h"
#include "core/internal.h"

void am_capture_truth_free(am_capture_truth *t)
{
    if (!t) return;
    am_free(t->joints);
    am_free(t->euler);
    am_free(t->contact);
    char **lists[3] = {t->names, t->bones, t->contact_names};
    size_t counts[3] = {t->joint_count, t->bone_count, t->contact_count};
    for (int k = 0; k < 3; k++) {
        if (lists[k])
            for (size_t i = 0; i < counts[k]; i++) am_free(lists[k][i]);
        am_free(lists[k]);
    }
    am_free(t);
}

static am_status ami_strings_copy(const am_array *a, char ***out, am_error *err)
{
    *out = am_alloc_array(a->count + 1, sizeof(char *));
    if (!*out) return AM_FAIL(err, AM_E_NOMEM, "names");
    for (size_t i = 0; i < a->count; i++)
        if (!((*out)[i] = am_strdup(a->strings[i]))) return AM_FAIL(err, AM_E_NOMEM, "names");
    return AM_OK;
}

am_status am_capture_truth_load(const char *path, am_capture_truth **out, am_error *err)
{
    *out = NULL;
    am_npz *z = NULL;
    AMI_TRY(am_npz_load(path, NULL, &z, err));
    am_capture_truth *t = am_alloc(sizeof *t);
    am_status st = AM_OK;
    if (!t) {
        ami_warn_list(&z->warnings);
        am_npz_free(z);
        return AM_FAIL(err, AM_E_NOMEM, "truth");
    }
    const am_array *joints = am_npz_find(z, "joints"), *names = am_npz_find(z, "names");
    const am_array *euler = am_npz_find(z, "euler"), *bones = am_npz_find(z, "bones");
    /* "contact" is ours; the seed fit's exam.py writes "contacts" (bool). */
    const am_array *contact = am_npz_find(z, "contact"), *cnames = am_npz_find(z, "contact_names");
    if (!contact) contact = am_npz_find(z, "contacts");
    const am_array *lag = am_npz_find(z, "lag"), *fps = am_npz_find(z, "fps"), *bs = am_npz_find(z, "body_size");
    if (!joints || joints->ndim != 3 || joints->shape[2] != 3 || joints->dtype == AM_DTYPE_STR) {
        st = AM_FAIL_AT(err, AM_E_SCHEMA, path, 0, 0, "'joints' [T,J,3] float missing or malformed");
        goto done;
    }
    t->frame_count = joints->shape[0];
    t->joint_count = joints->shape[1];
    if (!names || names->dtype != AM_DTYPE_STR || names->count != t->joint_count) {
        st = AM_FAIL_AT(err, AM_E_SCHEMA, path, 0, 0, "'names' [J] strings missing or not matching joints");
        goto done;
    }
    if (t->frame_count < 1) {
        st = AM_FAIL_AT(err, AM_E_EMPTY, path, 0, 0, "truth with no frames");
        goto done;
    }
    t->joints = am_alloc_array(joints->count, sizeof(double));
    if (!t->joints) {
        st = AM_FAIL(err, AM_E_NOMEM, "truth joints");
        goto done;
    }
    if ((st = am_array_to_f64(joints, t->joints, err)) < 0 || (st = ami_strings_copy(names, &t->names, err)) < 0) goto done;
    if (euler && bones && bones->dtype == AM_DTYPE_STR && euler->ndim == 3 && euler->shape[0] == t->frame_count &&
        euler->shape[1] == bones->count && euler->shape[2] == 3) {
        t->bone_count = bones->count;
        t->euler = am_alloc_array(euler->count + 1, sizeof(double));
        if (!t->euler) {
            st = AM_FAIL(err, AM_E_NOMEM, "truth euler");
            goto done;
        }
        if ((st = am_array_to_f64(euler, t->euler, err)) < 0 || (st = ami_strings_copy(bones, &t->bones, err)) < 0) goto done;
    }
    if (contact && cnames && cnames->dtype == AM_DTYPE_STR && contact->ndim == 2 &&
        contact->shape[0] == t->frame_count && contact->shape[1] == cnames->count) {
        t->contact_count = cnames->count;
        double *tmp = am_alloc_array(contact->count + 1, sizeof(double));
        t->contact = am_alloc_array(contact->count + 1, 1);
        if (!tmp || !t->contact) {
            am_free(tmp);
            st = AM_FAIL(err, AM_E_NOMEM, "truth contacts");
            goto done;
        }
        if ((st = am_array_to_f64(contact, tmp, err)) >= 0)
            for (size_t i = 0; i < contact->count; i++) t->contact[i] = tmp[i] != 0.0;
        am_free(tmp);
        if (st < 0 || (st = ami_strings_copy(cnames, &t->contact_names, err)) < 0) goto done;
    }
    double v;
    t->fps = 30.0;
    if (lag && am_array_scalar(lag, &v, NULL) == AM_OK && isfinite(v)) t->lag = (int)lround(v);
    if (fps && am_array_scalar(fps, &v, NULL) == AM_OK && v > 0) t->fps = v;
    t->body_size = am_body_size(t->joints, t->joint_count, NULL);
    if (bs && am_array_scalar(bs, &v, NULL) == AM_OK && v > 0) t->body_size = v;
    for (size_t i = 0; i < joints->count; i++)
        if (!isfinite(t->joints[i])) {
            st = AM_FAIL_AT(err, AM_E_NONFINITE, path, 0, 0, "truth joints: non-finite value at element %zu", i);
            goto done;
        }
done:
    ami_warn_list(&z->warnings); /* the loader runs in the caller's scope */
    am_npz_free(z);
    if (st < 0) {
        am_capture_truth_free(t);
        return st;
    }
    *out = t;
    return AM_OK;
}
