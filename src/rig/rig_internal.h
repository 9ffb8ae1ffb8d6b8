/* Private helpers of src/rig shared with the format layer (src/io). */
#ifndef AMI_RIG_INTERNAL_H
#define AMI_RIG_INTERNAL_H

#include "anymove/rig.h"

/* A copy of n strings (am_alloc); NULL when n == 0 or on allocation failure. */
char **ami_copy_names(char *const *names, size_t n);
/* q: [count][4] set to the identity (1, 0, 0, 0). */
void ami_quat_fill_identity(double *q, size_t count);

#endif
