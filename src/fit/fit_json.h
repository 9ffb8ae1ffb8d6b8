/* The plants keys both fitters write into motion.json (contacts, ground_velocity, foot_slide_mm):
 * one writer, so the two-view solve and the N-camera fit agree key for key. */
#ifndef AM_FIT_JSON_H
#define AM_FIT_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "io/json_internal.h"

typedef struct ami_plants_json {
    size_t frame_count, contact_count, plant_count;
    char *const *contact_names;   /* [C] */
    const uint8_t *contact;       /* [T][C] 1 = planted */
    const double *ground_vel;     /* [3] m/s */
    double slide_mean_mm, slide_max_mm, fit_slide_mean_mm, fit_slide_max_mm;
} ami_plants_json;

/* "contacts" (per contact joint, its plants as [first, last] frame pairs), "ground_velocity"
 * and "foot_slide_mm" (after and before the lock), into the open object of w. */
void ami_fit_json_plants(ami_jw *w, const ami_plants_json *p);

#endif
