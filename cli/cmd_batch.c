/* `anymove batch MANIFEST -o RUNS [-j N]`: many takes through a pipeline, here or on Slurm.
 *
 * Each take runs in a child process (its own process group) that runs the take's commands as
 * fresh `anymove` processes into a staging folder, RUNS/.staging/<take>.<pid>/out, and only when
 * every step succeeded swaps it into RUNS/<take> (renameat2 RENAME_EXCHANGE when an older one is
 * there), so a failed or killed take never leaves partial outputs and an older result stays
 * whole. The same runner serves the local scheduler (-j N children) and a Slurm array task
 * (--task I). The record of a take is RUNS/logs/<take>.log (the commands and everything they
 * printed) and RUNS/logs/<take>.status (one takes.csv row); takes.csv gathers them. */
#define _GNU_SOURCE /* renameat2 (RENAME_EXCHANGE), killpg, nftw */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "core/internal.h"
#include "io/json_internal.h"
#include "io/trackers_internal.h"

#define AMI_BATCH_MAX_STEPS 8
#define AMI_BATCH_MAX_TAKES 100000
#define AMI_BATCH_MAX_ARGS 256

/* The commands a take may chain, the output the next step reads first, and whether the command
 * takes --report. exam makes a take's input (a synthetic capture), so that a manifest can test a
 * pipeline end to end. */
static const struct {
    const char *verb, *primary;
    bool report;
} ami_batch_commands[] = {
    {"solve", "motion.json", true},    {"rig", "motion.json", true},         {"ik", "motion.json", true},
    {"retarget", "motion.json", true}, {"triangulate", "joints.npz", true}, {"exam", "det.npz", false},
};

/* The figure RUNS/report.html shows for a take, from its last step's outputs: the file, the
 * dotted path of a number in it, and what it is. */
static const struct {
    const char *verb, *file, *path, *label;
} ami_batch_figures[] = {
    {"solve", "motion.json", "sync.paw_agreement.score", "paw agreement"},
    {"rig", "report.json", "recon_visible_pct", "visible error, % of body size"},
    {"ik", "report.json", "fk_error.mean_pct_size", "FK error, % of body size"},
    {"retarget", "report.json", "foot_slide_mm.target_max", "foot slide max, mm"},
    {"triangulate", "summary.json", "reproj_px.mean", "reprojection, px"},
};

static const char *const ami_cli_verbs[] = {
#define X(verb, summary) #verb,
#include "commands.def"
#undef X
};

typedef struct ami_step {
    char *cmd;
    int argc;
    char **argv;
} ami_step;

typedef struct ami_take {
    char *name;
    char *command;  /* as the manifest says: "solve" or "triangulate|ik" */
    char *args;     /* as the manifest says, for the stamp */
    size_t step_count;
    ami_step steps[AMI_BATCH_MAX_STEPS];
    char *unknown;  /* a command batch cannot run: the take fails with this reason */
} ami_take;

typedef struct ami_manifest {
    ami_take *takes;
    size_t count;
} ami_manifest;

static void ami_manifest_free(ami_manifest *m)
{
    for (size_t t = 0; t < m->count; t++) {
        ami_take *k = &m->takes[t];
        for (size_t s = 0; s < k->step_count; s++) {
            for (int a = 0; a < k->steps[s].argc; a++) am_free(k->steps[s].argv[a]);
            am_free(k->steps[s].argv);
            am_free(k->steps[s].cmd);
        }
        am_free(k->name);
        am_free(k->command);
        am_free(k->args);
        am_free(k->unknown);
    }
    am_free(m->takes);
    *m = (ami_manifest){0};
}

static int ami_batch_command(const char *verb)
{
    for (size_t i = 0; i < sizeof ami_batch_commands / sizeof ami_batch_commands[0]; i++)
        if (strcmp(verb, ami_batch_commands[i].verb) == 0) return (int)i;
    return -1;
}

static const char *ami_batch_primary(const char *verb)
{
    int i = ami_batch_command(verb);
    return i >= 0 ? ami_batch_commands[i].primary : NULL;
}

static bool ami_batch_reports(const char *verb)
{
    int i = ami_batch_command(verb);
    return i >= 0 && ami_batch_commands[i].report;
}

static bool ami_cli_has(const char *verb)
{
    for (size_t i = 0; i < sizeof ami_cli_verbs / sizeof ami_cli_verbs[0]; i++)
        if (strcmp(verb, ami_cli_verbs[i]) == 0) return true;
    return false;
}

/* A take's name becomes a folder: letters, digits, '_', '-', '.', not starting with '.', and
 * not one of the names batch itself writes in RUNS. */
static bool ami_take_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 100 || s[0] == '.' || strcmp(s, "logs") == 0 || strcmp(s, "slurm") == 0 ||
        strcmp(s, "takes.csv") == 0 || strcmp(s, "takes.list") == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '-' || c == '.'))
            return false;
    }
    return true;
}

/* Split args the way a POSIX shell splits words (blanks; '...' and "..." quotes; backslash),
 * without expansions. A word that is exactly "|" ends a step. */
static am_status ami_split_words(const char *s, char ***out, int *count, const char *src, uint32_t line,
                                 am_error *err)
{
    char **words = am_alloc_array(AMI_BATCH_MAX_ARGS, sizeof *words);
    char *buf = am_alloc(strlen(s) + 1);
    int n = 0;
    am_status st = AM_OK;
    if (!words || !buf) {
        st = AM_FAIL(err, AM_E_NOMEM, "manifest arguments");
        goto fail;
    }
    const char *p = s;
    for (;;) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) break;
        size_t len = 0;
        bool quoted = false;
        while (*p && *p != ' ' && *p != '\t') {
            if (*p == '\'' || *p == '"') {
                char q = *p++;
                quoted = true;
                while (*p && *p != q) {
                    if (q == '"' && *p == '\\' && (p[1] == '"' || p[1] == '\\')) p++;
                    buf[len++] = *p++;
                }
                if (!*p) {
                    st = AM_FAIL_AT(err, AM_E_SYNTAX, src, line, 0, "args: unterminated %c quote", q);
                    goto fail;
                }
                p++;
            } else if (*p == '\\' && p[1]) {
                buf[len++] = p[1];
                p += 2;
            } else {
                buf[len++] = *p++;
            }
        }
        if (n == AMI_BATCH_MAX_ARGS) {
            st = AM_FAIL_AT(err, AM_E_LIMIT, src, line, 0, "args: more than %d words", AMI_BATCH_MAX_ARGS);
            goto fail;
        }
        /* a quoted "|" is an argument, not a step separator */
        words[n] = am_strndup(buf, len);
        if (!words[n]) {
            st = AM_FAIL(err, AM_E_NOMEM, "manifest arguments");
            goto fail;
        }
        if (!quoted && strcmp(words[n], "|") == 0) words[n][0] = '\0'; /* marks the separator */
        n++;
    }
    am_free(buf);
    *out = words;
    *count = n;
    return AM_OK;
fail:
    for (int i = 0; i < n; i++) am_free(words[i]);
    am_free(words);
    am_free(buf);
    return st;
}

/* One manifest row into a take. Structural problems fail the whole manifest (before any take
 * runs); a command batch cannot run fails only its take. */
static am_status ami_take_init(ami_take *k, const char *name, const char *command, const char *args,
                               const char *src, uint32_t line, am_error *err)
{
    if (!ami_take_name_ok(name))
        return AM_FAIL_AT(err, AM_E_VALUE, src, line, 0,
                          "take '%s': a name is 1-100 letters, digits, '_', '-' or '.', not starting with "
                          "'.' (and not logs, slurm, takes.csv, takes.list)",
                          name);
    k->name = am_strdup(name);
    k->command = am_strdup(command);
    k->args = am_strdup(args);
    if (!k->name || !k->command || !k->args) return AM_FAIL(err, AM_E_NOMEM, "manifest");
    char **words = NULL;
    int nw = 0;
    AMI_TRY(ami_split_words(args, &words, &nw, src, line, err));
    am_status st = AM_OK;
    /* the chain "a|b|c" */
    const char *c = command;
    while (st == AM_OK) {
        const char *bar = strchr(c, '|');
        size_t len = bar ? (size_t)(bar - c) : strlen(c);
        while (len && (c[0] == ' ')) c++, len--;
        while (len && c[len - 1] == ' ') len--;
        if (k->step_count == AMI_BATCH_MAX_STEPS) {
            st = AM_FAIL_AT(err, AM_E_LIMIT, src, line, 0, "take '%s': more than %d commands in a chain", name,
                            AMI_BATCH_MAX_STEPS);
            break;
        }
        if (len == 0) {
            st = AM_FAIL_AT(err, AM_E_VALUE, src, line, 0, "take '%s': empty command", name);
            break;
        }
        ami_step *s = &k->steps[k->step_count++];
        if (!(s->cmd = am_strndup(c, len)) || !(s->argv = am_alloc_array((size_t)nw + 1, sizeof *s->argv))) {
            st = AM_FAIL(err, AM_E_NOMEM, "manifest");
            break;
        }
        for (size_t p = 0; p + 1 < k->step_count; p++)
            if (strcmp(k->steps[p].cmd, s->cmd) == 0)
                st = AM_FAIL_AT(err, AM_E_DUPLICATE, src, line, 0,
                                "take '%s': '%s' twice in one chain (each step writes RUNS/<take>/<command>)",
                                name, s->cmd);
        if (!k->unknown && (!ami_batch_primary(s->cmd) || !ami_cli_has(s->cmd))) {
            char why[200];
            snprintf(why, sizeof why, "unknown command '%s' (batch runs solve, rig, ik, retarget, triangulate, exam%s)",
                     s->cmd, ami_cli_has("retarget") ? "" : "; this build has no retarget");
            if (!(k->unknown = am_strdup(why))) st = AM_FAIL(err, AM_E_NOMEM, "manifest");
        }
        if (!bar) break;
        c = bar + 1;
    }
    /* the words, step by step */
    size_t step = 0;
    for (int w = 0; st == AM_OK && w < nw; w++) {
        if (words[w][0] == '\0') {
            if (++step >= k->step_count) {
                st = AM_FAIL_AT(err, AM_E_VALUE, src, line, 0,
                                "take '%s': args have more '|' steps than command '%s'", name, command);
            }
            am_free(words[w]);
            words[w] = NULL;
            continue;
        }
        if (strcmp(words[w], "-o") == 0 || strcmp(words[w], "--out") == 0 || strncmp(words[w], "-o=", 3) == 0 ||
            strncmp(words[w], "--out=", 6) == 0) {
            st = AM_FAIL_AT(err, AM_E_VALUE, src, line, 0,
                            "take '%s': args give -o; batch writes each take to RUNS/<take>/", name);
            break;
        }
        ami_step *s = &k->steps[step];
        s->argv[s->argc++] = words[w];
        words[w] = NULL;
    }
    for (int w = 0; w < nw; w++) am_free(words[w]);
    am_free(words);
    return st;
}

static am_status ami_manifest_add(ami_manifest *m, size_t *cap, const char *name, const char *command,
                                  const char *args, const char *src, uint32_t line, am_error *err)
{
    for (size_t t = 0; t < m->count; t++)
        if (strcmp(m->takes[t].name, name) == 0)
            return AM_FAIL_AT(err, AM_E_DUPLICATE, src, line, 0, "take '%s' is listed twice", name);
    if (m->count == AMI_BATCH_MAX_TAKES)
        return AM_FAIL_AT(err, AM_E_LIMIT, src, line, 0, "more than %d takes", AMI_BATCH_MAX_TAKES);
    if (m->count == *cap) {
        size_t nc = *cap ? 2 * *cap : 32;
        ami_take *n = am_realloc_array(m->takes, nc, sizeof *n);
        if (!n) return AM_FAIL(err, AM_E_NOMEM, "manifest");
        memset(n + *cap, 0, (nc - *cap) * sizeof *n);
        m->takes = n;
        *cap = nc;
    }
    return ami_take_init(&m->takes[m->count++], name, command, args, src, line, err);
}

/* A CSV field without its quotes' doubling ("" -> "). */
static char *ami_field_text(const ami_field *f)
{
    char *s = am_alloc(f->len + 1);
    if (!s) return NULL;
    size_t n = 0;
    for (size_t i = 0; i < f->len; i++) {
        s[n++] = f->p[i];
        if (f->p[i] == '"' && i + 1 < f->len && f->p[i + 1] == '"') i++;
    }
    s[n] = '\0';
    return s;
}

static am_status ami_manifest_csv(const char *text, size_t len, const char *src, ami_manifest *m, am_error *err)
{
    ami_csv c;
    ami_csv_init(&c, text, len, ',', true);
    am_status st = AM_OK;
    size_t cap = 0;
    if (!ami_csv_data_row(&c, 3, &st, src, err)) {
        if (st == AM_OK) st = AM_FAIL_AT(err, AM_E_EMPTY, src, 0, 0, "no header 'take,command,args'");
        goto done;
    }
    if (!ami_field_is(&c.f[0], "take", false) || !ami_field_is(&c.f[1], "command", false) ||
        !ami_field_is(&c.f[2], "args", false)) {
        st = AM_FAIL_AT(err, AM_E_SCHEMA, src, c.line, 0, "the header must be 'take,command,args'");
        goto done;
    }
    while (ami_csv_data_row(&c, 3, &st, src, err)) {
        char *f[3];
        for (int i = 0; i < 3; i++) f[i] = ami_field_text(&c.f[i]);
        if (!f[0] || !f[1] || !f[2]) st = AM_FAIL(err, AM_E_NOMEM, "manifest");
        else st = ami_manifest_add(m, &cap, f[0], f[1], f[2], src, c.line, err);
        for (int i = 0; i < 3; i++) am_free(f[i]);
        if (st != AM_OK) break;
    }
done:
    ami_csv_free(&c);
    return st;
}

/* [{"take": "...", "command": "...", "args": "..." | ["...", ...]}, ...] */
static am_status ami_manifest_json(const char *text, size_t len, const char *src, ami_manifest *m, am_error *err)
{
    json_t *root = NULL;
    AMI_TRY(ami_json_parse(text, len, src, &root, err));
    am_status st = ami_json_expect(root, JSON_ARRAY, "document", err);
    size_t cap = 0, i;
    json_t *row;
    json_array_foreach(root, i, row) {
        if (st != AM_OK) break;
        char path[32];
        snprintf(path, sizeof path, "[%zu]", i);
        const char *name = NULL, *command = NULL;
        if ((st = ami_json_expect(row, JSON_OBJECT, path, err)) != AM_OK ||
            (st = ami_json_get_string(row, path, "take", true, &name, err)) != AM_OK ||
            (st = ami_json_get_string(row, path, "command", true, &command, err)) != AM_OK)
            break;
        const json_t *a = json_object_get(row, "args");
        am_buf args = {0};
        if (json_is_string(a)) {
            am_buf_printf(&args, "%s", json_string_value(a));
        } else if (json_is_array(a)) {
            size_t k;
            json_t *w;
            json_array_foreach(a, k, w) {
                if (!json_is_string(w)) {
                    st = AM_FAIL(err, AM_E_SCHEMA, "%s.args[%zu]: expected a string, got %s", path, k,
                                 ami_json_type_name(w));
                    break;
                }
                /* each word quoted so that the splitter gives it back whole */
                const char *s = json_string_value(w);
                if (k) am_buf_append(&args, " ", 1);
                if (strcmp(s, "|") == 0) {
                    am_buf_append(&args, "|", 1);
                    continue;
                }
                am_buf_append(&args, "'", 1);
                for (const char *p = s; *p; p++)
                    if (*p == '\'') am_buf_printf(&args, "'\"'\"'");
                    else am_buf_append(&args, p, 1);
                am_buf_append(&args, "'", 1);
            }
        } else if (a) {
            st = AM_FAIL(err, AM_E_SCHEMA, "%s.args: expected a string or an array of strings, got %s", path,
                         ami_json_type_name(a));
        }
        am_buf_append(&args, "", 1);
        if (st == AM_OK && args.failed) st = AM_FAIL(err, AM_E_NOMEM, "manifest");
        if (st == AM_OK) st = ami_manifest_add(m, &cap, name, command, args.data, src, 0, err);
        am_buf_free(&args);
    }
    json_decref(root);
    if (st != AM_OK) am_error_set_file(err, src);
    return st;
}

static am_status ami_manifest_load(const char *path, ami_manifest *m, am_error *err)
{
    char *text = NULL;
    size_t len = 0;
    AMI_TRY(am_file_read(path, (size_t)64 << 20, &text, &len, err));
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n')) i++;
    am_status st = i < len && text[i] == '[' ? ami_manifest_json(text, len, path, m, err)
                                             : ami_manifest_csv(text, len, path, m, err);
    if (st == AM_OK && m->count == 0) st = AM_FAIL_AT(err, AM_E_EMPTY, path, 0, 0, "no takes");
    am_free(text);
    if (st != AM_OK) ami_manifest_free(m);
    return st;
}

/* ---- files ---- */

static int ami_rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    remove(p);
    return 0;
}

static void ami_rm_rf(const char *path) { nftw(path, ami_rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

static char *ami_join(const char *a, const char *b, const char *c)
{
    size_t n = strlen(a) + strlen(b) + (c ? strlen(c) : 0) + 3;
    char *s = am_alloc(n);
    if (s) snprintf(s, n, "%s/%s%s%s", a, b, c ? "/" : "", c ? c : "");
    return s;
}

static double ami_mtime(const struct stat *st) { return (double)st->st_mtim.tv_sec + 1e-9 * (double)st->st_mtim.tv_nsec; }

/* CSV cell: quoted when it holds a comma, a quote or a line break (no line breaks kept). */
static void ami_csv_cell(am_buf *b, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        am_buf_printf(b, "%s", s);
        return;
    }
    am_buf_append(b, "\"", 1);
    for (const char *p = s; *p; p++) {
        if (*p == '"') am_buf_append(b, "\"\"", 2);
        else if (*p == '\n' || *p == '\r') am_buf_append(b, " ", 1);
        else am_buf_append(b, p, 1);
    }
    am_buf_append(b, "\"", 1);
}

typedef struct ami_paths {
    const char *runs;
    char *out, *log, *status, *staging_dir, *staging;
} ami_paths;

static void ami_paths_free(ami_paths *p)
{
    am_free(p->out), am_free(p->log), am_free(p->status), am_free(p->staging_dir), am_free(p->staging);
}

static bool ami_paths_init(ami_paths *p, const char *runs, const char *take)
{
    char stage[160];
    snprintf(stage, sizeof stage, "%s.%ld", take, (long)getpid());
    p->runs = runs;
    p->out = ami_join(runs, take, NULL);
    char logname[128], statname[128];
    snprintf(logname, sizeof logname, "%s.log", take);
    snprintf(statname, sizeof statname, "%s.status", take);
    p->log = ami_join(runs, "logs", logname);
    p->status = ami_join(runs, "logs", statname);
    p->staging_dir = ami_join(runs, ".staging", stage);
    p->staging = p->staging_dir ? ami_join(p->staging_dir, "out", NULL) : NULL;
    return p->out && p->log && p->status && p->staging_dir && p->staging;
}

/* The take's status row (takes.csv: take,status,exit,seconds,reason,log). */
static void ami_write_status(const ami_paths *p, const ami_take *k, const char *status, int code, double seconds,
                             const char *reason)
{
    am_buf b = {0};
    ami_csv_cell(&b, k->name);
    am_buf_printf(&b, ",%s,%d,%.3f,", status, code, seconds);
    ami_csv_cell(&b, reason ? reason : "");
    am_buf_printf(&b, ",logs/%s.log\n", k->name);
    am_error err = {0};
    if (!b.failed && am_file_write(p->status, b.data, b.len, &err) != AM_OK) {
        char msg[600];
        fprintf(stderr, "anymove batch: %s\n", am_error_format(msg, sizeof msg, &err));
    }
    am_buf_free(&b);
}

/* What a failed step said last: its error line, else its last line. */
static void ami_log_reason(const char *log, char *out, size_t size)
{
    out[0] = '\0';
    FILE *f = fopen(log, "r");
    if (!f) return;
    char line[1024];
    bool have_error = false;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0] || line[0] == '$') continue;
        bool is_error = strstr(line, "error") != NULL || strstr(line, "unknown") != NULL;
        if (is_error || !have_error) snprintf(out, size, "%s", line);
        have_error |= is_error;
    }
    fclose(f);
}

/* The stamp a finished take keeps in RUNS/<take>/.take: what ran. A take is done when its stamp
 * says the same and is newer than every input (an argument naming an existing file). */
static void ami_take_stamp(const ami_take *k, bool report, am_buf *b)
{
    am_buf_printf(b, "%s\n%s\n%s\n%s", k->name, k->command, k->args, report ? "--report\n" : "");
}

static bool ami_take_done(const ami_take *k, bool report, const ami_paths *p)
{
    char *stamp = ami_join(p->out, ".take", NULL);
    char *text = NULL;
    size_t len = 0;
    am_error err = {0};
    struct stat st;
    bool done = false;
    if (stamp && stat(stamp, &st) == 0 && am_file_read(stamp, 1 << 20, &text, &len, &err) == AM_OK) {
        am_buf want = {0};
        ami_take_stamp(k, report, &want);
        done = !want.failed && want.len == len && memcmp(want.data, text, len) == 0;
        am_buf_free(&want);
        double made = ami_mtime(&st);
        for (size_t s = 0; done && s < k->step_count; s++)
            for (int a = 0; done && a < k->steps[s].argc; a++) {
                struct stat in;
                if (stat(k->steps[s].argv[a], &in) == 0 && S_ISREG(in.st_mode) && ami_mtime(&in) > made) done = false;
            }
    }
    am_free(text);
    am_free(stamp);
    return done;
}

/* Remove what dead runs of this take left in RUNS/.staging (a kill -9, a lost node). One runner
 * per take at a time: the others' are gone. */
static void ami_sweep_take(const char *runs, const char *take)
{
    char *dir = ami_join(runs, ".staging", NULL);
    DIR *d = dir ? opendir(dir) : NULL;
    size_t n = strlen(take);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strncmp(e->d_name, take, n) != 0 || e->d_name[n] != '.') continue;
        const char *pid = e->d_name + n + 1;
        if (!*pid || strspn(pid, "0123456789") != strlen(pid)) continue;
        char *p = ami_join(dir, e->d_name, NULL);
        if (p) ami_rm_rf(p);
        am_free(p);
    }
    if (d) closedir(d);
    am_free(dir);
}

/* Swap staging into RUNS/<take>: atomically exchanged with an older one, which is then removed. */
static bool ami_commit(const ami_paths *p, char *why, size_t size)
{
    if (rename(p->staging, p->out) == 0) return true;
    if (errno == EEXIST || errno == ENOTEMPTY) {
#ifdef RENAME_EXCHANGE
        if (renameat2(AT_FDCWD, p->staging, AT_FDCWD, p->out, RENAME_EXCHANGE) == 0) {
            ami_rm_rf(p->staging); /* now the old outputs */
            return true;
        }
#endif
        char *old = ami_join(p->staging_dir, "old", NULL);
        bool ok = old && rename(p->out, old) == 0 && rename(p->staging, p->out) == 0;
        am_free(old);
        if (ok) return true;
    }
    snprintf(why, size, "cannot move the outputs into %s: %s", p->out, strerror(errno));
    return false;
}

static char *ami_self_path(void)
{
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return NULL;
    buf[n] = '\0';
    return am_strdup(buf);
}

/* A child dies with its parent: a batch killed with SIGKILL (kill -9, the OOM killer, a lost
 * node's runner) takes its take runners and their steps with it, so no orphan goes on writing
 * into a staging folder the next run sweeps, or swaps a take in behind a restart's back. The
 * next run sweeps what they left (ami_sweep_take). parent: the forking process's pid, read
 * before fork (a parent already gone reparents the child at once). */
static void ami_die_with(pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(137);
}

/* Run one step as `anymove CMD [PREV] ARGS... -o DIR [--report]`, output into the log. The exit
 * status. */
static int ami_run_step(const char *self, const ami_step *s, const char *prev_out, const char *prev_dir,
                        const char *dir, bool report, int log_fd)
{
    char **argv = am_alloc_array((size_t)s->argc + 7, sizeof *argv);
    char **owned = am_alloc_array((size_t)s->argc + 1, sizeof *owned);
    if (!argv || !owned) {
        am_free(argv);
        am_free(owned);
        return 1;
    }
    int n = 0, o = 0;
    argv[n++] = (char *)self;
    argv[n++] = s->cmd;
    bool uses_prev = false;
    for (int a = 0; a < s->argc; a++) uses_prev |= strstr(s->argv[a], "{prev}") != NULL;
    if (prev_out && !uses_prev) argv[n++] = (char *)prev_out;
    for (int a = 0; a < s->argc; a++) {
        const char *w = s->argv[a], *at = strstr(w, "{prev}");
        if (!at || !prev_dir) {
            argv[n++] = s->argv[a];
            continue;
        }
        size_t len = strlen(w) - 6 + strlen(prev_dir) + 1;
        char *x = owned[o++] = am_alloc(len);
        if (x) snprintf(x, len, "%.*s%s%s", (int)(at - w), w, prev_dir, at + 6);
        argv[n++] = x ? x : s->argv[a];
    }
    argv[n++] = "-o";
    argv[n++] = (char *)dir;
    if (report && ami_batch_reports(s->cmd)) argv[n++] = "--report";
    argv[n] = NULL;
    am_buf line = {0};
    am_buf_printf(&line, "$ anymove");
    for (int a = 1; a < n; a++) am_buf_printf(&line, " %s", argv[a]);
    am_buf_printf(&line, "\n");
    if (!line.failed && write(log_fd, line.data, line.len) < 0) { /* the log is best effort */ }
    am_buf_free(&line);
    int code = 1;
    const pid_t runner = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        ami_die_with(runner);
        int null_fd = open("/dev/null", O_RDONLY);
        if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
        dup2(log_fd, STDOUT_FILENO);
        dup2(log_fd, STDERR_FILENO);
        execv(self, argv);
        _exit(127);
    }
    int wst = 0;
    if (pid > 0) {
        while (waitpid(pid, &wst, 0) < 0 && errno == EINTR) {}
        code = WIFEXITED(wst) ? WEXITSTATUS(wst) : 128 + WTERMSIG(wst);
    }
    for (int i = 0; i < o; i++) am_free(owned[i]);
    am_free(owned);
    am_free(argv);
    return code;
}

/* The per-take runner (local children and Slurm array tasks): 0 done or skipped, else the
 * failed step's exit status. */
static int ami_run_take(const char *runs, const ami_take *k, bool force, bool report, bool *skipped)
{
    ami_paths p = {0};
    double t0 = am_now();
    *skipped = false;
    char *self = ami_self_path();
    char *logs = ami_join(runs, "logs", NULL);
    am_error err = {0};
    int code = 0;
    char why[1200] = "";
    if (!ami_paths_init(&p, runs, k->name) || !self || !logs) {
        code = 1;
        goto done;
    }
    if (am_mkdir_p(logs, &err) != AM_OK) {
        am_error_format(why, sizeof why, &err);
        fprintf(stderr, "anymove batch: %s\n", why);
        code = 2;
        goto done;
    }
    if (k->unknown) {
        FILE *f = fopen(p.log, "w");
        if (f) fprintf(f, "anymove batch: take '%s': %s\n", k->name, k->unknown), fclose(f);
        ami_write_status(&p, k, "failed", 2, 0, k->unknown);
        code = 2;
        goto done;
    }
    if (!force && ami_take_done(k, report, &p)) {
        *skipped = true;
        ami_write_status(&p, k, "skipped", 0, 0, "outputs newer than inputs");
        goto done;
    }
    ami_sweep_take(runs, k->name);
    int log_fd = open(p.log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log_fd < 0 || am_mkdir_p(p.staging, &err) != AM_OK) {
        if (log_fd >= 0) am_error_format(why, sizeof why, &err);
        else snprintf(why, sizeof why, "cannot write %s: %s", p.log, strerror(errno));
        if (log_fd >= 0) close(log_fd);
        ami_write_status(&p, k, "failed", 2, am_now() - t0, why);
        code = 2;
        goto done;
    }
    char *prev_out = NULL, *prev_dir = NULL;
    for (size_t s = 0; s < k->step_count && code == 0; s++) {
        const ami_step *st = &k->steps[s];
        char *dir = k->step_count == 1 ? am_strdup(p.staging) : ami_join(p.staging, st->cmd, NULL);
        if (!dir) {
            code = 1;
            break;
        }
        code = ami_run_step(self, st, prev_out, prev_dir, dir, report, log_fd);
        am_free(prev_out);
        am_free(prev_dir);
        prev_out = ami_join(dir, ami_batch_primary(st->cmd), NULL);
        prev_dir = dir;
    }
    am_free(prev_out);
    am_free(prev_dir);
    close(log_fd);
    if (code == 0) {
        char *stamp = ami_join(p.staging, ".take", NULL);
        am_buf b = {0};
        ami_take_stamp(k, report, &b);
        if (!stamp || b.failed || am_file_write(stamp, b.data, b.len, &err) != AM_OK) {
            am_error_format(why, sizeof why, &err);
            code = 2;
        } else if (!ami_commit(&p, why, sizeof why)) {
            code = 2;
        }
        am_buf_free(&b);
        am_free(stamp);
    } else {
        ami_log_reason(p.log, why, sizeof why);
        if (!why[0]) snprintf(why, sizeof why, "exit status %d", code);
    }
    ami_rm_rf(p.staging_dir);
    ami_write_status(&p, k, code == 0 ? "ok" : "failed", code, am_now() - t0, code == 0 ? "" : why);
done:
    am_free(logs);
    am_free(self);
    ami_paths_free(&p);
    return code;
}

/* ---- RUNS/report.html ---- */

/* The step of a take the page links: the last of its chain that writes a report ("" for none). */
static void ami_report_step(const char *command, char *verb, size_t size)
{
    verb[0] = '\0';
    for (const char *c = command; c && *c;) {
        const char *bar = strchr(c, '|');
        size_t len = bar ? (size_t)(bar - c) : strlen(c);
        char w[64];
        snprintf(w, sizeof w, "%.*s", (int)len, c);
        char *a = w, *e = w + strlen(w);
        while (*a == ' ') a++;
        while (e > a && e[-1] == ' ') *--e = '\0';
        if (ami_batch_reports(a)) snprintf(verb, size, "%s", a);
        c = bar ? bar + 1 : NULL;
    }
}

/* The take's command: its stamp's second line (what made the outputs there), else the steps
 * its log says it ran. */
static void ami_take_command(const char *runs, const char *take, char *out, size_t size)
{
    out[0] = '\0';
    char *stamp = ami_join(runs, take, ".take");
    char logname[128];
    snprintf(logname, sizeof logname, "%s.log", take);
    char *log = ami_join(runs, "logs", logname);
    char *text = NULL;
    size_t len = 0;
    am_error err = {0};
    if (stamp && am_file_read(stamp, 1 << 20, &text, &len, &err) == AM_OK) {
        const char *l2 = strchr(text, '\n');
        if (l2) snprintf(out, size, "%.*s", (int)strcspn(l2 + 1, "\n"), l2 + 1);
    } else if (log && am_file_read(log, 64 << 20, &text, &len, &err) == AM_OK) {
        for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
            if (strncmp(l, "$ anymove ", 10) != 0) continue;
            size_t used = strlen(out);
            snprintf(out + used, size - used, "%s%.*s", used ? "|" : "", (int)strcspn(l + 10, " \n"), l + 10);
        }
    }
    am_free(text);
    am_free(stamp);
    am_free(log);
}

/* The take's key figure (NaN without one) and its label. */
static double ami_take_figure(const char *dir, const char *verb, const char **label)
{
    *label = "";
    for (size_t i = 0; i < sizeof ami_batch_figures / sizeof ami_batch_figures[0]; i++) {
        if (strcmp(verb, ami_batch_figures[i].verb) != 0) continue;
        *label = ami_batch_figures[i].label;
        char *path = ami_join(dir, ami_batch_figures[i].file, NULL);
        char *text = NULL;
        size_t len = 0;
        am_error err = {0};
        json_t *doc = NULL;
        double v = NAN;
        if (path && am_file_read(path, 0, &text, &len, &err) == AM_OK &&
            ami_json_parse(text, len, path, &doc, &err) == AM_OK) {
            json_t *n = doc;
            for (const char *k = ami_batch_figures[i].path; n && *k;) {
                size_t kl = strcspn(k, ".");
                char key[64];
                snprintf(key, sizeof key, "%.*s", (int)kl, k);
                n = json_object_get(n, key);
                k += kl + (k[kl] == '.');
            }
            if (json_is_number(n)) v = json_number_value(n);
        }
        json_decref(doc);
        am_free(text);
        am_free(path);
        return v;
    }
    return NAN;
}

/* One row per take of the status rows (takes.csv's cells): take, command, status, exit code and
 * seconds, the key figure of its last reporting step, links to that step's report.html and
 * the log. Relative links: the page works from RUNS moved or copied whole. */
static am_status ami_summary_page(const char *runs, const char *csv_text, size_t csv_len, am_error *err)
{
    am_buf b = {0};
    am_buf_printf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>anymove batch ");
    ami_buf_html(&b, runs);
    am_buf_printf(&b, "</title>\n<style>body{font:14px sans-serif;margin:20px;color:#222}"
                      "table{border-collapse:collapse}td,th{padding:3px 10px;text-align:left;border-bottom:1px solid #ddd}"
                      ".ok{color:#176d25;font-weight:bold}.skipped{color:#555;font-weight:bold}"
                      ".failed,.missing{color:#b01c1c;font-weight:bold}td.num{text-align:right}.why{color:#666;font-size:12px}"
                      "</style>\n</head><body>\n<h1>anymove batch ");
    ami_buf_html(&b, runs);
    am_buf_printf(&b, "</h1>\n<table id=\"takes\">\n<tr><th>take</th><th>command</th><th>status</th><th>exit</th>"
                      "<th>seconds</th><th>key figure</th><th>report</th><th>log</th></tr>\n");
    ami_csv c;
    ami_csv_init(&c, csv_text, csv_len, ',', true);
    am_status st = AM_OK;
    bool header = true;
    while (ami_csv_data_row(&c, 6, &st, "takes.csv", err)) {
        if (header) {
            header = false;
            continue;
        }
        char *f[6];
        for (int i = 0; i < 6; i++) f[i] = ami_field_text(&c.f[i]);
        if (f[0] && f[1] && f[2] && f[3] && f[4] && f[5] && ami_take_name_ok(f[0])) {
            char command[256], verb[64], rel[256];
            ami_take_command(runs, f[0], command, sizeof command);
            ami_report_step(command, verb, sizeof verb);
            bool chain = strchr(command, '|') != NULL;
            if (chain) snprintf(rel, sizeof rel, "%s/%s", f[0], verb);
            else snprintf(rel, sizeof rel, "%s", f[0]);
            char *dir = ami_join(runs, rel, NULL);
            char *html = dir ? ami_join(dir, "report.html", NULL) : NULL;
            struct stat sb;
            bool have = verb[0] && html && stat(html, &sb) == 0 && (strcmp(f[1], "ok") == 0 || strcmp(f[1], "skipped") == 0);
            const char *label = "";
            double v = have && dir ? ami_take_figure(dir, verb, &label) : NAN;
            am_buf_printf(&b, "<tr class=\"take\"><td>");
            ami_buf_html(&b, f[0]);
            am_buf_printf(&b, "</td><td>");
            ami_buf_html(&b, command);
            am_buf_printf(&b, "</td><td><span class=\"%s\">", strcmp(f[1], "ok") == 0 ? "ok" : strcmp(f[1], "skipped") == 0 ? "skipped" : "failed");
            ami_buf_html(&b, f[1]);
            am_buf_printf(&b, "</span>");
            if (f[4][0]) {
                am_buf_printf(&b, "<div class=\"why\">");
                ami_buf_html(&b, f[4]);
                am_buf_printf(&b, "</div>");
            }
            am_buf_printf(&b, "</td><td class=\"num\">");
            ami_buf_html(&b, f[2]);
            am_buf_printf(&b, "</td><td class=\"num\">");
            ami_buf_html(&b, f[3]);
            am_buf_printf(&b, "</td><td>");
            if (isfinite(v)) {
                ami_buf_html(&b, label);
                am_buf_printf(&b, " <b class=\"figure\">%.4g</b>", v);
            }
            am_buf_printf(&b, "</td><td>");
            if (have) {
                am_buf_printf(&b, "<a href=\"");
                ami_buf_html(&b, rel);
                am_buf_printf(&b, "/report.html\">report</a>");
            }
            am_buf_printf(&b, "</td><td><a href=\"");
            ami_buf_html(&b, f[5]);
            am_buf_printf(&b, "\">log</a></td></tr>\n");
            am_free(html);
            am_free(dir);
        }
        for (int i = 0; i < 6; i++) am_free(f[i]);
    }
    ami_csv_free(&c);
    am_buf_printf(&b, "</table>\n</body></html>\n");
    char *path = ami_join(runs, "report.html", NULL);
    if (st == AM_OK) st = !path || b.failed ? AM_FAIL(err, AM_E_NOMEM, "report.html") : am_file_write(path, b.data, b.len, err);
    am_free(path);
    am_buf_free(&b);
    return st;
}

/* ---- the summary ---- */

/* takes.csv from every take's status row (a take without one is "missing": not run yet, still
 * running, or lost); the exit status of the whole batch: 0, else 2 when every failure is an
 * input's (exit 2), else 1. */
static int ami_summarize(const char *runs, char *const *names, size_t count, bool quiet, bool report)
{
    am_buf b = {0};
    am_buf_printf(&b, "take,status,exit,seconds,reason,log\n");
    size_t ok = 0, skipped = 0, failed = 0, missing = 0;
    int worst = 0;
    for (size_t t = 0; t < count; t++) {
        char name[128];
        snprintf(name, sizeof name, "%s.status", names[t]);
        char *path = ami_join(runs, "logs", name);
        char *text = NULL;
        size_t len = 0;
        am_error err = {0};
        if (path && am_file_read(path, 1 << 20, &text, &len, &err) == AM_OK && len > 0) {
            am_buf_append(&b, text, len);
            if (text[len - 1] != '\n') am_buf_append(&b, "\n", 1);
            const char *c1 = strchr(text, ',');
            /* take names have no commas: the second cell is the status */
            if (c1 && strncmp(c1 + 1, "ok,", 3) == 0) ok++;
            else if (c1 && strncmp(c1 + 1, "skipped,", 8) == 0) skipped++;
            else {
                failed++;
                int code = c1 && strchr(c1 + 1, ',') ? atoi(strchr(c1 + 1, ',') + 1) : 1;
                if (code != 2 || worst == 1) worst = 1;
                else worst = 2;
            }
        } else {
            missing++;
            ami_csv_cell(&b, names[t]);
            am_buf_printf(&b, ",missing,,,no status: not run yet, still running or lost,logs/%s.log\n", names[t]);
            worst = 1;
        }
        am_free(text);
        am_free(path);
    }
    char *csv = ami_join(runs, "takes.csv", NULL);
    am_error err = {0};
    if (!csv || b.failed || am_file_write(csv, b.data, b.len, &err) != AM_OK) {
        char msg[600];
        fprintf(stderr, "anymove batch: %s\n", am_error_format(msg, sizeof msg, &err));
        worst = 1;
    }
    char *page = report ? ami_join(runs, "report.html", NULL) : NULL;
    if (report && !b.failed && ami_summary_page(runs, b.data, b.len, &err) != AM_OK) {
        char msg[600];
        fprintf(stderr, "anymove batch: %s\n", am_error_format(msg, sizeof msg, &err));
        worst = 1;
        am_free(page);
        page = NULL;
    }
    (void)quiet; /* the summary is the result: said even with --quiet */
    fprintf(stderr, "anymove batch: %zu takes: %zu ok, %zu skipped, %zu failed, %zu missing; summary in %s%s%s\n",
                count, ok, skipped, failed, missing, csv ? csv : "takes.csv", page ? ", report " : "", page ? page : "");
    am_free(page);
    am_free(csv);
    am_buf_free(&b);
    return worst;
}

/* RUNS/takes.list: the takes of the manifest, for --collect. */
static am_status ami_write_list(const char *runs, const ami_manifest *m, am_error *err)
{
    AMI_TRY(am_mkdir_p(runs, err));
    am_buf b = {0};
    for (size_t t = 0; t < m->count; t++) am_buf_printf(&b, "%s\n", m->takes[t].name);
    char *path = ami_join(runs, "takes.list", NULL);
    am_status st = !path || b.failed ? AM_FAIL(err, AM_E_NOMEM, "takes.list") : am_file_write(path, b.data, b.len, err);
    am_free(path);
    am_buf_free(&b);
    return st;
}

static int ami_collect(const char *runs, bool quiet, bool report)
{
    char *path = ami_join(runs, "takes.list", NULL);
    char *text = NULL;
    size_t len = 0;
    am_error err = {0};
    if (!path || am_file_read(path, (size_t)64 << 20, &text, &len, &err) != AM_OK) {
        am_free(path);
        return am_cli_fail("batch", &err);
    }
    size_t count = 0, cap = 0;
    char **names = NULL;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (!ami_take_name_ok(line)) continue;
        if (count == cap) {
            cap = cap ? 2 * cap : 64;
            char **n = am_realloc_array(names, cap, sizeof *n);
            if (!n) break;
            names = n;
        }
        names[count++] = line;
    }
    int rc = ami_summarize(runs, names, count, quiet, report);
    am_free(names);
    am_free(text);
    am_free(path);
    return rc;
}

/* ---- the local scheduler ---- */

static volatile sig_atomic_t ami_batch_signal;
static void ami_on_signal(int sig) { ami_batch_signal = sig; }

static void ami_progress_line(size_t done, size_t total, size_t failed, size_t running, double t0, bool tty)
{
    double el = am_now() - t0;
    double eta = done ? el / (double)done * (double)(total - done) : 0;
    if (tty)
        fprintf(stderr, "\r\033[Kbatch [%.*s%*s] %3d%% %zu/%zu takes, %zu failed, %zu running, ETA %.0f s",
                (int)(30 * done / total), "##############################", (int)(30 - 30 * done / total), "",
                (int)(100 * done / total), done, total, failed, running, eta);
}

static int ami_run_local(const ami_manifest *m, const char *runs, long jobs, bool force, bool report, bool quiet)
{
    size_t n = m->count, next = 0, done = 0, failed = 0, running = 0;
    pid_t *pids = am_alloc_array(n, sizeof *pids);
    char **names = am_alloc_array(n, sizeof *names);
    if (!pids || !names) {
        am_free(pids);
        am_free(names);
        return 1;
    }
    for (size_t t = 0; t < n; t++) names[t] = m->takes[t].name;
    struct sigaction sa = {0}, old_term, old_int;
    sa.sa_handler = ami_on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGINT, &sa, &old_int);
    bool tty = !quiet && isatty(STDERR_FILENO);
    double t0 = am_now();
    fflush(NULL);
    while ((next < n || running) && !ami_batch_signal) {
        while (next < n && running < (size_t)jobs && !ami_batch_signal) {
            const pid_t batch = getpid();
            pid_t pid = fork();
            if (pid == 0) {
                setpgid(0, 0);
                ami_die_with(batch);
                signal(SIGTERM, SIG_DFL);
                signal(SIGINT, SIG_DFL);
                bool skipped;
                _exit(ami_run_take(runs, &m->takes[next], force, report, &skipped));
            }
            if (pid < 0) break;
            setpgid(pid, pid);
            pids[next++] = pid;
            running++;
        }
        int wst;
        pid_t pid = waitpid(-1, &wst, 0);
        if (pid < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (size_t t = 0; t < next; t++)
            if (pids[t] == pid) {
                pids[t] = 0;
                running--, done++;
                int code = WIFEXITED(wst) ? WEXITSTATUS(wst) : 1;
                if (code) failed++;
                if (tty) ami_progress_line(done, n, failed, running, t0, true);
                else if (!quiet || code)
                    fprintf(stderr, "anymove batch: %s %s (%zu/%zu)\n", names[t], code ? "failed" : "done", done, n);
            }
    }
    if (tty) fputc('\n', stderr);
    if (ami_batch_signal) {
        /* stop the takes under way: their staging folders go, their outputs never appeared */
        for (size_t t = 0; t < next; t++)
            if (pids[t] > 0) killpg(pids[t], SIGTERM);
        for (size_t t = 0; t < next; t++)
            if (pids[t] > 0) {
                while (waitpid(pids[t], NULL, 0) < 0 && errno == EINTR) {}
                char stage[160];
                snprintf(stage, sizeof stage, "%s.%ld", names[t], (long)pids[t]);
                char *dir = ami_join(runs, ".staging", stage);
                if (dir) ami_rm_rf(dir);
                am_free(dir);
            }
        fprintf(stderr, "anymove batch: stopped by signal %d; %zu of %zu takes finished (run again to finish the rest)\n",
                (int)ami_batch_signal, done, n);
    }
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGINT, &old_int, NULL);
    int rc = ami_summarize(runs, names, n, quiet, report);
    int sig = (int)ami_batch_signal;
    am_free(pids);
    am_free(names);
    return sig ? 128 + sig : rc;
}

/* ---- Slurm ---- */

/* A word for a shell script, single-quoted. */
static void ami_sh_word(am_buf *b, const char *s)
{
    am_buf_append(b, "'", 1);
    for (const char *p = s; *p; p++)
        if (*p == '\'') am_buf_printf(b, "'\\''");
        else am_buf_append(b, p, 1);
    am_buf_append(b, "'", 1);
}

static char *ami_abs(const char *path)
{
    if (path[0] == '/') return am_strdup(path);
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) return NULL;
    return ami_join(cwd, path, NULL);
}

typedef struct ami_slurm {
    const char *partition, *time, *mem;
    long max_running;
    bool dry_run;
} ami_slurm;

static int ami_slurm_submit(const ami_manifest *m, const char *manifest, const char *runs, bool force,
                            bool report, const ami_slurm *o)
{
    char *self = ami_self_path(), *man = ami_abs(manifest), *out = ami_abs(runs);
    char cwd[4096];
    am_buf b = {0};
    int rc = 0;
    if (!self || !man || !out || !getcwd(cwd, sizeof cwd)) {
        rc = 1;
        goto done;
    }
    am_buf_printf(&b, "#!/bin/bash\n# anymove batch: one array task per take of %s (%zu takes).\n", man, m->count);
    am_buf_printf(&b, "#SBATCH --job-name=anymove-batch\n#SBATCH --array=1-%zu", m->count);
    if (o->max_running > 0) am_buf_printf(&b, "%%%ld", o->max_running);
    am_buf_printf(&b, "\n#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n");
    am_buf_printf(&b, "#SBATCH --output=%s/slurm/%%A_%%a.out\n", out);
    if (o->partition) am_buf_printf(&b, "#SBATCH --partition=%s\n", o->partition);
    if (o->time) am_buf_printf(&b, "#SBATCH --time=%s\n", o->time);
    if (o->mem) am_buf_printf(&b, "#SBATCH --mem=%s\n", o->mem);
    am_buf_printf(&b, "# inputs are relative to the folder batch was run in (a shared file system)\ncd ");
    ami_sh_word(&b, cwd);
    am_buf_printf(&b, " || exit 1\nexec ");
    ami_sh_word(&b, self);
    am_buf_printf(&b, " batch ");
    ami_sh_word(&b, man);
    am_buf_printf(&b, " -o ");
    ami_sh_word(&b, out);
    am_buf_printf(&b, " --task \"$SLURM_ARRAY_TASK_ID\"%s%s --quiet\n", force ? " --force" : "", report ? " --report" : "");
    if (b.failed) {
        rc = 1;
        goto done;
    }
    if (o->dry_run) {
        fwrite(b.data, 1, b.len, stdout);
        goto done;
    }
    am_error err = {0};
    char *dir = ami_join(out, "slurm", NULL);
    char *script = dir ? ami_join(dir, "batch.sh", NULL) : NULL;
    if (!script || am_mkdir_p(dir, &err) != AM_OK || ami_write_list(out, m, &err) != AM_OK ||
        am_file_write(script, b.data, b.len, &err) != AM_OK) {
        rc = am_cli_fail("batch", &err);
    } else {
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            execlp("sbatch", "sbatch", "--parsable", script, (char *)NULL);
            fprintf(stderr, "anymove batch: cannot run sbatch: %s (no Slurm here? --dry-run prints the script)\n",
                    strerror(errno));
            _exit(127);
        }
        int wst = 0;
        while (pid > 0 && waitpid(pid, &wst, 0) < 0 && errno == EINTR) {}
        int code = pid > 0 && WIFEXITED(wst) ? WEXITSTATUS(wst) : 1;
        if (code) {
            fprintf(stderr, "anymove batch: sbatch %s failed (exit %d)\n", script, code);
            rc = 2;
        } else {
            am_cli_log("submitted %s (%zu array tasks); `anymove batch --collect %s%s` when they are done", script,
                       m->count, runs, report ? " --report" : "");
        }
    }
    am_free(script);
    am_free(dir);
done:
    am_buf_free(&b);
    am_free(self);
    am_free(man);
    am_free(out);
    return rc;
}

static void ami_batch_help(FILE *out)
{
    fprintf(out,
            "usage: anymove batch MANIFEST -o RUNS [-j N] [--force] [--report] [--quiet]\n"
            "       anymove batch MANIFEST -o RUNS --slurm [--partition P] [--time T] [--mem M]\n"
            "                     [--max-running K] [--dry-run] [--force] [--report]\n"
            "       anymove batch --collect RUNS [--report]\n\n"
            "Runs many takes, up to N at once (default: the number of CPUs). MANIFEST is a CSV with\n"
            "the header take,command,args, or a JSON list of {\"take\", \"command\", \"args\"}\n"
            "(args a string or a list of words). command: solve, rig, ik, retarget, triangulate or\n"
            "exam, or a chain 'triangulate|ik' whose args are split by a '|' word; a later step gets the\n"
            "previous one's main output (det.npz, joints.npz, motion.json) as its first input, or where\n"
            "{prev} (its output folder) appears. args are the command's own arguments, paths as\n"
            "seen from here, without -o: take T writes RUNS/T/ (a chain RUNS/T/<command>/).\n"
            "A take whose outputs are newer than its inputs and made by the same row is skipped\n"
            "(--force runs it again); a failed take leaves no outputs (an older result stays).\n"
            "RUNS/logs/T.log holds what it printed; RUNS/takes.csv the summary (take, status, exit,\n"
            "seconds, reason). Exit 0 when every take succeeded, else 2 (1 when a failure was not\n"
            "the input's); a malformed manifest is exit 2 before any take starts.\n"
            "--slurm: submit a job array (one task per take, the same runner) with sbatch;\n"
            "--dry-run prints the script instead. --collect RUNS: the summary afterwards.\n"
            "--report: every step that can (solve, rig, ik, retarget, triangulate) gets --report\n"
            "(RUNS/T/report.html), and RUNS/report.html lists the takes: command, status, exit,\n"
            "seconds, the last step's key figure and a link to its report.\n"
            "See docs/cluster.md.\n\n"
            "examples:\n"
            "  anymove batch examples/batch/takes.csv -o out/batch -j 2\n"
            "  anymove batch examples/batch/takes.csv -o out/batch --slurm --partition short --time 00:20:00 --dry-run\n"
            "  anymove batch --collect out/batch\n");
}

int am_cmd_batch(int argc, char **argv)
{
    const char *manifest = NULL, *runs = NULL, *collect = NULL, *v;
    long jobs = sysconf(_SC_NPROCESSORS_ONLN), task = 0;
    bool force = false, quiet = false, slurm = false, report = false;
    ami_slurm so = {0};
    if (jobs < 1) jobs = 1;
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_batch_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
            quiet = true;
        } else if ((v = am_cli_value(argc, argv, &i, "-o")) || (v = am_cli_value(argc, argv, &i, "--out"))) {
            runs = v;
        } else if ((v = am_cli_value(argc, argv, &i, "-j")) || (v = am_cli_value(argc, argv, &i, "--jobs"))) {
            if (!am_cli_long("batch", "-j", v, &jobs)) return 2;
            if (jobs < 1 || jobs > 1024) return am_cli_usage("batch", "-j is 1 to 1024");
        } else if (am_cli_flag(argv[i], "--force")) {
            force = true;
        } else if (am_cli_flag(argv[i], "--report")) {
            report = true;
        } else if ((v = am_cli_value(argc, argv, &i, "--collect"))) {
            collect = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--task"))) {
            if (!am_cli_long("batch", "--task", v, &task)) return 2;
            if (task < 1) return am_cli_usage("batch", "--task counts takes from 1");
        } else if (am_cli_flag(argv[i], "--slurm")) {
            slurm = true;
        } else if ((v = am_cli_value(argc, argv, &i, "--partition"))) {
            so.partition = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--time"))) {
            so.time = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--mem"))) {
            so.mem = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--max-running"))) {
            if (!am_cli_long("batch", "--max-running", v, &so.max_running)) return 2;
        } else if (am_cli_flag(argv[i], "--dry-run")) {
            so.dry_run = true;
        } else if (argv[i][0] == '-') {
            return am_cli_usage("batch", "unknown option '%s'", argv[i]);
        } else if (!manifest) {
            manifest = argv[i];
        } else {
            return am_cli_usage("batch", "unexpected argument '%s'", argv[i]);
        }
    }
    if (collect) {
        if (manifest || runs) return am_cli_usage("batch", "--collect RUNS takes no manifest and no -o");
        return ami_collect(collect, quiet, report);
    }
    if (!manifest) return am_cli_usage("batch", "missing MANIFEST");
    if (!runs) return am_cli_usage("batch", "missing -o RUNS");
    if ((so.partition || so.time || so.mem || so.dry_run || so.max_running) && !slurm)
        return am_cli_usage("batch", "--partition, --time, --mem, --max-running and --dry-run go with --slurm");
    for (const char *p = "\n'"; *p; p++)
        if (strchr(so.partition ? so.partition : "", *p) || strchr(so.time ? so.time : "", *p) ||
            strchr(so.mem ? so.mem : "", *p))
            return am_cli_usage("batch", "--partition, --time and --mem take plain words");
    ami_manifest m = {0};
    am_error err = {0};
    if (ami_manifest_load(manifest, &m, &err) != AM_OK) return am_cli_fail("batch", &err);
    int rc;
    if (slurm) {
        rc = ami_slurm_submit(&m, manifest, runs, force, report, &so);
    } else if (task) {
        if ((size_t)task > m.count) {
            rc = am_cli_usage("batch", "--task %ld: the manifest has %zu takes", task, m.count);
        } else {
            bool skipped;
            rc = ami_run_take(runs, &m.takes[task - 1], force, report, &skipped);
        }
    } else if (ami_write_list(runs, &m, &err) != AM_OK) {
        rc = am_cli_fail("batch", &err);
    } else {
        rc = ami_run_local(&m, runs, jobs, force, report, quiet);
    }
    ami_manifest_free(&m);
    return rc;
}
