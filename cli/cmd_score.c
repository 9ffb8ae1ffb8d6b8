/* `anymove score <sub> ...`: dispatch on the sub-verb. Several stages score their outputs; each
 * adds a line to score.def and its own cli/score_<sub>.c, so this file never changes. */
#include <string.h>

#include "cli.h"
#include "score.h"

typedef struct {
    const char *sub;
    const char *summary;
    int (*run)(int argc, char **argv);
} ami_score_sub;

static const ami_score_sub ami_score_subs[] = {
#define X(sub, fn, summary) {#sub, summary, fn},
#include "score.def"
#undef X
};

static void ami_score_help(FILE *out)
{
    fprintf(out, "usage: anymove score <what> ... [--help]\n\nScores a stage's output against the truth; prints JSON on stdout.\n\n");
    for (size_t i = 0; i < sizeof ami_score_subs / sizeof ami_score_subs[0]; i++)
        fprintf(out, "  %-8s %s\n", ami_score_subs[i].sub, ami_score_subs[i].summary);
    fprintf(out, "\nEach has its own --help with examples (anymove score rig --help).\n\n"
                 "examples:\n"
                 "  anymove rig examples/tracks/grison_walk.tracks.npz --bones 15 -o out/grison_rig\n"
                 "  anymove score rig --truth examples/tracks/grison_walk.truth.npz out/grison_rig\n");
}

int am_cmd_score(int argc, char **argv)
{
    if (argc < 2) {
        ami_score_help(stderr);
        return 2;
    }
    if (am_cli_is_help(argv[1])) {
        ami_score_help(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof ami_score_subs / sizeof ami_score_subs[0]; i++)
        if (strcmp(argv[1], ami_score_subs[i].sub) == 0) return ami_score_subs[i].run(argc - 1, argv + 1);
    return am_cli_usage("score", "unknown score '%s'", argv[1]);
}
