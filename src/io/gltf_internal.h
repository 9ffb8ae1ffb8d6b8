/* Private helpers shared by the glTF reader, the rig/motion conversion and the writer. */
#ifndef AMI_GLTF_INTERNAL_H
#define AMI_GLTF_INTERNAL_H

#include "anymove/gltf.h"

/* What a document loaded with AM_GLTF_KEEP_SOURCE keeps so a writer can emit it again: the
 * JSON as it was, every buffer's bytes and the bytes of every image given by a file uri (a GLB
 * has no folder beside it, so those are embedded when written). */
struct am_gltf_source {
    char *json;               /* the JSON text, NUL-terminated */
    size_t json_len;
    size_t buffer_count;
    uint8_t **buffers;        /* [buffer_count] byteLength bytes each */
    size_t *buffer_len;
    size_t image_count;
    uint8_t **images;         /* [image_count] bytes of file-uri images, else NULL */
    size_t *image_len;
    const char **image_mime;  /* static "image/png"... for file-uri images, else NULL */
};

void ami_gltf_source_free(struct am_gltf_source *src);
/* The media type of encoded image bytes from their signature ("image/png", "image/jpeg",
 * "image/webp", "image/ktx2", static), or NULL. */
const char *ami_gltf_image_mime(const uint8_t *d, size_t n);

/* Row-major T * R * S from translation, (w,x,y,z) rotation (normalized here) and scale. */
void ami_gltf_trs_matrix(const double t[3], const double q[4], const double s[3], double M[16]);
/* TRS of a local matrix: scale = column lengths (negative x when the determinant is negative),
 * rotation from the normalized columns, (w,x,y,z). */
void ami_gltf_decompose(const double M[16], double t[3], double q[4], double s[3]);

/* The skin's joints behind a rig from am_rig_from_gltf(doc, skin): bone_node [B] is bone b's
 * joint node (matched by the names am_rig_from_gltf gives), bind [B][16] its world bind matrix
 * in glTF axes (G(skinned mesh node) * inverse(IBM)). AM_E_NAME when a bone is no joint of the
 * skin, AM_E_SHAPE when the counts differ. */
AM_NODISCARD am_status ami_gltf_skin_binding(const am_gltf *doc, int skin, const am_rig *rig,
                                             int32_t *bone_node, double *bind, am_error *err);

#endif
