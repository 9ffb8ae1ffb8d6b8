/* JSON blocks that several commands' reports share (through the library's one JSON writer). */
#ifndef AM_CLI_REPORT_H
#define AM_CLI_REPORT_H

#include "anymove/metrics.h"
#include "io/json_internal.h"

/* Into the open object: per-joint position error st (metres) as mean/median/p95/max in cm,
 * the body size in metres, the mean in % of it and the max as a share of it. */
void am_cli_jw_position_error(ami_jw *w, const am_stats *st, double body_size);

#endif
