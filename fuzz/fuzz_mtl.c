/* libFuzzer target for the MTL reader: parse -> check every value lies in its documented
 * range -> free. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "anymove/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int in(double v, double lo, double hi) { return v >= lo && v <= hi; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (64u << 10)) return 0;
    am_mtl *m = NULL;
    am_error err = {0};
    if (am_mtl_read_mem((const char *)data, size, "fuzz.mtl", &m, &err) == AM_OK) {
        for (size_t i = 0; i < m->count; i++) {
            const am_mtl_material *a = &m->materials[i];
            if (!a->name || !a->name[0] || !in(a->alpha, 0, 1) || !(a->ns == -1 || in(a->ns, 0, 1000)) ||
                !(a->pr == -1 || in(a->pr, 0, 1)) || !(a->pm == -1 || in(a->pm, 0, 1)) || (a->map_kd && !a->map_kd[0]) ||
                a->texture)
                abort();
            for (int k = 0; k < 3; k++)
                if (!in(a->kd[k], 0, 1) || !(a->ke[k] >= 0 && isfinite(a->ke[k]))) abort();
        }
    } else if (m || err.line == 0) {
        abort(); /* a failure leaves nothing and names its line */
    }
    am_mtl_free(m);
    return 0;
}
