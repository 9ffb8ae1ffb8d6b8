#include "report.h"

void am_cli_jw_position_error(ami_jw *w, const am_stats *st, double body_size)
{
    ami_jw_number(w, "mean_cm", 100 * st->mean);
    ami_jw_number(w, "median_cm", 100 * st->median);
    ami_jw_number(w, "p95_cm", 100 * st->p95);
    ami_jw_number(w, "max_cm", 100 * st->max);
    ami_jw_number(w, "body_size_m", body_size);
    ami_jw_number(w, "mean_pct_size", body_size > 0 ? 100 * st->mean / body_size : 0.0);
    ami_jw_number(w, "max_rel_size", body_size > 0 ? st->max / body_size : 0.0);
}
