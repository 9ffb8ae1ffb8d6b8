/* `anymove score <sub>`: one function per sub-verb, listed in score.def (cmd_score.c
 * dispatches). Each returns an exit code (0, 1 or 2) and prints its JSON on stdout. */
#ifndef AM_CLI_SCORE_H
#define AM_CLI_SCORE_H

#define X(sub, fn, summary) int fn(int argc, char **argv);
#include "score.def"
#undef X

#endif
