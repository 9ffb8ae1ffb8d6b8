/* Private helpers of src/rig shared with the format layer (src/io). */
#ifndef AMI_RIG_INTERNAL_H
#define AMI_RIG_INTERNAL_H

#include "anymove/rig.h"

/* A copy of n strings (am_alloc); NULL when n == 0 or on allocation failure. */
char **ami_copy_names(char *const *names, size_t n);
/* q: [count][4] set to the identity (1, 0, 0, 0). */
void ami_quat_fill_identity(double *q, size_t count);

/* A Blender-style octahedral bone of unit length in its own frame: head at the origin, tail at
 * +Y, a square waist at 10% of the length with a half-width of 10%; faces wound
 * counter-clockwise seen from outside. */
#define AMI_BONE_FACES 8
extern const double ami_bone_verts[6][3];
void ami_bone_faces(int faces[AMI_BONE_FACES][3]);

/* Children of every node of a forest in index order: kids[first[p] .. first[p + 1]) for node
 * p, from parent[i] (-1 for roots; entries stride bytes apart, so a field of a struct array
 * works too). first [n + 1] and kids [n] are am_alloc'd; false when out of memory. */
bool ami_children_lists(const int32_t *parent, size_t stride, size_t n, size_t **first,
                        int32_t **kids);

#endif
