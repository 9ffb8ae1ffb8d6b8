/* libFuzzer target for SLEAP analysis and points3d HDF5 files through libhdf5 (from memory). */
#include <stddef.h>
#include <stdint.h>

#include "anymove/mocap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20)) return 0;
    am_mdet *d = NULL;
    am_joints *j = NULL;
    am_error err = {0};
    am_status s1 = am_import_2d_mem(data, size, "fuzz.analysis.h5", AM_TRACK_SLEAP_H5, NULL, &d, &err);
    (void)s1;
    am_status s2 = am_import_3d_mem(data, size, "fuzz_points3d.h5", AM_TRACK_POINTS3D_H5, NULL, &j, &err);
    (void)s2;
    am_mdet_free(d);
    am_joints_free(j);
    return 0;
}
