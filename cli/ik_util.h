/* Helpers shared by `anymove ik`, `score ik` and `convert`: the rig.json "helpers" key. */
#ifndef AM_CLI_IK_UTIL_H
#define AM_CLI_IK_UTIL_H

#include "anymove/io.h"

/* rig.json has no field for helper bones (non-deforming IK targets and poles; SPEC 2.1 keeps
 * unknown keys), so convert writes them as "helpers": [bone names], and ik/score read it back.
 * am_cli_rig_load = am_rig_load + is_helper from "helpers" (unknown names are ignored). */
am_status am_cli_rig_load(const char *path, am_rig **out, am_error *err);
/* Put the rig's helper bones into its extra_json as "helpers" (before am_rig_write). */
am_status am_cli_rig_store_helpers(am_rig *rig, am_error *err);


#endif
