/* sweep.c - `sparsim sweep`: many runs, one CSV row each.
 *
 * A sweep runs every combination of algorithms, rank counts, gradient sizes,
 * densities and platforms, one child process per run, and appends one CSV row
 * per finished run (written whole and synced, or cut off again when the
 * disk refuses it, which ends the sweep), so an interrupted sweep keeps what
 * it finished and --resume skips it.  Options that are not lists are those of
 * `sparsim run` and apply to every run; each row records them (the settings
 * column), and --resume refuses a CSV made with other settings.  --resume
 * also drops a row cut short by an interruption and reruns the failed runs,
 * their new rows replacing the old.
 */
#include "cli.h"
#include "sweep_pool.h"
#include "algorithms/algorithm.h"
#include "analysis/speedup.h"
#include "traces/csv.h"
#include "traces/summary_keys.h"
#include "traces/sweep_columns.h"
#include "traces/trace.h"
#include "topologies/platform.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static void fmt_duration(char *buf, size_t n, double s)
{
    if (s < 90)
        snprintf(buf, n, "%.0fs", s);
    else if (s < 5400)
        snprintf(buf, n, "%.0fm%02.0fs", floor(s / 60), fmod(s, 60));
    else
        snprintf(buf, n, "%.0fh%02.0fm", floor(s / 3600), fmod(s / 60, 60));
}

/* the sweep's progress on stderr (a terminal): runs done of this sweep (or
 * shard), time left, the runs in flight */
typedef struct {
    int done, total, already; /* already: finished in an earlier sweep (--resume) */
    double t0, drawn;
    const sp_pool *pool;
} sweep_progress;

static void progress(void *arg)
{
    sweep_progress *g = arg;
    if (!isatty(2))
        return;
    double now = sp_cli_now(), el = now - g->t0;
    if (g->done < g->total && g->drawn > 0 && now - g->drawn < 0.5)
        return;
    g->drawn = now;
    char e[32], left[32] = "?", running[160] = "";
    fmt_duration(e, sizeof e, el);
    if (g->done > g->already)
        fmt_duration(left, sizeof left, el / (g->done - g->already) * (g->total - g->done));
    int nrun = g->pool && g->done < g->total ? sp_pool_running(g->pool, running, sizeof running) : 0;
    int w = 30, fill = g->total ? g->done * w / g->total : w;
    fprintf(stderr, "\r[%.*s%*s] %d/%d runs, %s elapsed, ~%s left%s%s\033[K", fill, "##############################",
            w - fill, "", g->done, g->total, e, left, nrun ? "; running " : "", running);
    if (g->done == g->total)
        fputc('\n', stderr);
    fflush(stderr);
}

/* a signal ended the command during `run`: its folder and the command's
 * temporary folder (`tmp`, when there is one) go */
static void remove_on_interrupt(const sp_plan *run, void *tmp)
{
    sp_cli_remove_run_dir(run->out);
    if (tmp)
        rmdir((const char *)tmp);
}

/* ---- sweep --------------------------------------------------------------- */

typedef struct {
    char algo[4096], ranks[4096], n[4096], density[4096], platform[4096];
    char disturb[4096]; /* NAME=LIST: a disturbance and its levels, an axis */
    char out[1024], keep[1024], config[1024];
    int resume, iters;
    int jobs;                /* runs at once; 0: the number of cores */
    char shard[64];          /* I/N: the I-th of N shares of the runs */
    char emit_slurm[1024];   /* write a Slurm batch script instead of running */
    int slurm_shards;        /* tasks of that script's job array; 0: one per run */
    unsigned char given[32];
} sweep_opts;

#define S(field) .offset = offsetof(sweep_opts, field), .size = sizeof(((sweep_opts *)0)->field)

/* the sweep's own options; any other is an option of `sparsim run` for every run */
/* --platform's help, from the platform table */
static const char *platforms_help(void)
{
    static char text[512];
    if (!text[0]) {
        size_t at = sp_platform_names(text, sizeof text, ", ", 0);
        if (at < sizeof text)
            snprintf(text + at, sizeof text - at, " or platform files");
    }
    return text;
}

static const sp_opt sweep_rows[] = {
    {.name = "algo", .type = SP_OT_STRING, S(algo), .dflt = "all", .flags = SP_OPT_LIST, .metavar = "LIST",
     .help = "algorithms, or 'all'"},
    {.name = "ranks", .type = SP_OT_STRING, S(ranks), .dflt = "8,16,32,64", .flags = SP_OPT_LIST, .metavar = "LIST",
     .help = "rank counts"},
    {.name = "n", .type = SP_OT_STRING, S(n), .dflt = "65536", .flags = SP_OPT_LIST, .metavar = "LIST",
     .help = "gradient lengths, K/M/G suffixes"},
    {.name = "density", .type = SP_OT_STRING, S(density), .dflt = "0.01", .flags = SP_OPT_LIST, .metavar = "LIST",
     .help = "densities"},
    {.name = "platform", .type = SP_OT_STRING, S(platform), .dflt = "1gbe", .flags = SP_OPT_LIST, .metavar = "LIST",
     .help_of = platforms_help},
    {.name = "disturb", .type = SP_OT_STRING, S(disturb), .dflt = "", .metavar = "NAME=LIST",
     .help = "a disturbance of sparsim run and its levels, as one more axis, e.g. straggler-factor=1,2,4 or "
             "noise=0,0.01"},
    {.name = "iters", .type = SP_OT_INT, S(iters), .min = 1, .max = 1e6, .dflt = "2", .metavar = "I",
     .help = "iterations of every run"},
    {.name = "out", .type = SP_OT_STRING, S(out), .dflt = "sweep.csv", .metavar = "FILE",
     .help = "the CSV; an existing one needs --resume"},
    {.name = "resume", .type = SP_OT_BOOL, S(resume), .dflt = "false",
     .help = "keep FILE's finished rows and run only what is missing"},
    {.name = "keep", .type = SP_OT_STRING, S(keep), .dflt = "", .metavar = "DIR",
     .help = "keep each run's outputs in DIR/ALGO-PP-nN-dD-PLATFORM"},
    {.name = "jobs", .type = SP_OT_INT, S(jobs), .min = 1, .max = 4096, .metavar = "N",
     .help = "runs at once, each in its own process (rows are appended as runs finish); a run waits while the memory "
     "estimates of those in flight and its own would pass what the machine has available",
     .dflt_help = "the number of cores"},
    {.name = "shard", .type = SP_OT_STRING, S(shard), .dflt = "", .metavar = "I/N",
     .help = "run only the I-th of N shares of the runs (1 <= I <= N; run k of the sweep belongs to share k mod N + 1, "
     "the same on any machine); join the shares' CSVs with 'sparsim merge'",
     .dflt_help = "all runs"},
    {.name = "emit-slurm", .type = SP_OT_STRING, S(emit_slurm), .dflt = "", .flags = SP_OPT_CLI_ONLY,
     .metavar = "FILE",
     .help = "run nothing: write a Slurm batch script (a job array, one task per shard, each running this sweep with "
     "--shard and --resume) to FILE"},
    {.name = "slurm-shards", .type = SP_OT_INT, S(slurm_shards), .min = 1, .max = 100000, .metavar = "N",
     .help = "tasks of the job array --emit-slurm writes",
     .dflt_help = "one per run"},
    {.name = "config", .type = SP_OT_STRING, S(config), .dflt = "", .flags = SP_OPT_CLI_ONLY, .metavar = "FILE",
     .help = "JSON object with the same keys (lists as arrays or comma strings), and any option of sparsim run"},
    /* the plural names earlier versions took */
    {.name = "algos", .type = SP_OT_STRING, S(algo), .dflt = "all", .flags = SP_OPT_LIST, .metavar = "LIST",
     .help = "the same as --algo"},
    {.name = "densities", .type = SP_OT_STRING, S(density), .dflt = "0.01", .flags = SP_OPT_LIST, .metavar = "LIST",
     .help = "the same as --density"},
    {.name = "platforms", .type = SP_OT_STRING, S(platform), .dflt = "1gbe", .flags = SP_OPT_LIST, .metavar = "LIST",
     .help = "the same as --platform"},
};

static const sp_opt_table sweep_table = SP_OPT_TABLE(sweep_rows);

static void sweep_help(void)
{
    printf("usage: sparsim sweep [options]\n"
           "\n"
           "Runs every combination of the lists below (one run per process) and appends\n"
           "one row per finished run to a CSV file, flushed as it goes.\n"
           "\n");
    sp_opts_help(&sweep_table, stdout);
    printf("  any other option of 'sparsim run' (--network, --device, ...) applies to every run\n"
           "\n"
           "columns: %s\n"
           "  times in seconds, bytes per rank; volume_bytes is the volume per iteration as\n"
           "  the bounds count it; phase_times is 'phase:seconds;...' (mean per iteration);\n"
           "  peak_rss_bytes is the run's peak resident memory (it includes the few MiB\n"
           "  the sweep itself holds); status is ok, failed or bad-input; settings lists\n"
           "  the options of every run that are not at their defaults (name=value;...).\n"
           "--resume keeps the finished rows, drops a row cut short, reruns failed runs\n"
           "(their new rows replace the old) and refuses a CSV made with other settings.\n"
           "sweep_id names the sweep (its runs and settings), run_index is the run's place\n"
           "in it (0 .. runs-1): 'sparsim merge --out FILE SHARD.csv ...' joins the CSVs of\n"
           "--shard I/N runs in that order, refusing CSVs of other sweeps and naming the\n"
           "runs missing.  A progress bar with the time left and the runs in flight goes\n"
           "to stderr when it is a terminal.\n",
           SP_SWEEP_HEADER);
}

/* sweep options from --config and flags; what remains goes to the base plan */
static int parse_sweep(int argc, char **argv, sweep_opts *o, sp_plan *base, int *help, char *err, size_t errlen)
{
    *help = 0;
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            *help = 1;
            return 0;
        }
    char **pass = calloc((size_t)argc + 1, sizeof *pass);
    if (!pass) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int npass = 0, rc = sp_opts_parse_argv(&sweep_table, o, o->given, argc, argv, pass, &npass, err, errlen);
    if (rc == 0 && o->config[0]) {
        cJSON *j = sp_opts_read_config(o->config, err, errlen);
        rc = j ? 0 : -1;
        /* the file first, the flags over it: re-apply the flags after it */
        if (rc == 0)
            rc = sp_opts_apply_json(&sweep_table, o, o->given, j, 1, o->config, err, errlen);
        if (rc == 0)
            rc = sp_opts_apply_json(sp_plan_options(), base, base->given, j, 0, o->config, err, errlen);
        cJSON_Delete(j);
        if (rc == 0)
            rc = sp_opts_parse_argv(&sweep_table, o, o->given, argc, argv, pass, &npass, err, errlen);
    }
    if (rc == 0)
        rc = sp_plan_parse(base, npass, pass, err, errlen) == 0 ? 0 : -1;
    free(pass);
    if (rc == 0 && base->grad_live >= 0) {
        snprintf(err, errlen, "--grad-live feeds one run from a trainer (sparsim run), not a sweep");
        rc = -1;
    }
    return rc;
}

/* ---- what the runs are --------------------------------------------------- */

static const char *const axis_names[5] = {"algo", "ranks", "n", "density", "platform"};
static char disturb_axis[64]; /* the option --disturb sweeps over, or "" */

/* the option that --disturb names must be one of the disturbance rows of
 * sparsim run (from --compute to --disturb-baseline, exclusive of the last) */
static int is_disturbance(const char *name)
{
    const sp_opt_table *t = sp_plan_options();
    int i = sp_opts_index(t, name), lo = sp_opts_index(t, "compute"), hi = sp_opts_index(t, "disturb-baseline");
    return i >= 0 && lo >= 0 && i >= lo && i < hi && strcmp(name, "straggler-ranks") && strcmp(name, "degrade-links");
}

/* the level of plan p on the disturbance axis, as its rows say it */
static const char *level_of(const sp_plan *p, char *buf, size_t n)
{
    buf[0] = '\0';
    const sp_opt *o = disturb_axis[0] ? sp_opts_find(sp_plan_options(), disturb_axis) : NULL;
    if (o)
        sp_opts_format(o, p, buf, n);
    if (o && o->type == SP_OT_DOUBLE) /* as a person writes it: 0.05, not 0.050000000000000003 */
        snprintf(buf, n, "%.10g", strtod(buf, NULL));
    return buf;
}

/* the settings a row records: every option of the run that is echoed into
 * summary.json, is not an axis, and is not at its default, as name=value
 * joined by ';' */
static void settings_text(const sp_plan *p, char *out, size_t n)
{
    const sp_opt_table *t = sp_plan_options();
    sp_plan dflt;
    sp_plan_defaults(&dflt);
    size_t w = 0;
    out[0] = '\0';
    for (int i = 0; i < t->count; i++) {
        const sp_opt *o = &t->rows[i];
        int axis = 0;
        for (int a = 0; a < 5; a++)
            axis |= !strcmp(o->name, axis_names[a]);
        axis |= !strcmp(o->name, disturb_axis);
        if (axis || (o->flags & (SP_OPT_NO_ECHO | SP_OPT_CLI_ONLY)))
            continue;
        char v[1100], d[1100];
        sp_opts_format(o, p, v, sizeof v);
        sp_opts_format(o, &dflt, d, sizeof d);
        if (strcmp(v, d) != 0 && w < n)
            w += (size_t)snprintf(out + w, n - w, "%s%s=%s", w ? ";" : "", o->name, v);
    }
}

/* the value of option `name` in a settings text, or NULL (at its default) */
static const char *setting_of(const char *text, const char *name, char *buf, size_t n)
{
    size_t kl = strlen(name);
    for (const char *e = text; *e;) {
        const char *sc = strchr(e, ';');
        size_t el = sc ? (size_t)(sc - e) : strlen(e);
        if (el > kl && !strncmp(e, name, kl) && e[kl] == '=') {
            snprintf(buf, n, "%.*s", (int)(el - kl - 1), e + kl + 1);
            return buf;
        }
        e = sc ? sc + 1 : e + el;
    }
    return NULL;
}

/* the first option whose value differs between two settings texts */
static void settings_diff(const char *there, const char *here, char *out, size_t n)
{
    const sp_opt_table *t = sp_plan_options();
    for (int i = 0; i < t->count; i++) {
        char ba[300], bb[300];
        const char *a = setting_of(there, t->rows[i].name, ba, sizeof ba);
        const char *b = setting_of(here, t->rows[i].name, bb, sizeof bb);
        if ((a || b) && (!a || !b || strcmp(a, b) != 0)) {
            snprintf(out, n, "--%s %s there, %s here", t->rows[i].name, a ? a : "at its default",
                     b ? b : "at its default");
            return;
        }
    }
    snprintf(out, n, "'%.300s' there, '%.300s' here", there, here);
}

/* the key of a run as its row says it: algo, ranks, n, density, platform, level */
static void run_key(const char *algo, const char *ranks, const char *n, const char *density, const char *platform,
                    const char *level, char *out, size_t len)
{
    snprintf(out, len, "%.63s|%.15s|%.23s|%.31s|%.960s|%.63s", algo, ranks, n, density, platform, level);
}

static void plan_key(const sp_plan *p, char *out, size_t len)
{
    char r[16], n[24], d[32], l[64];
    snprintf(r, sizeof r, "%d", p->ranks);
    snprintf(n, sizeof n, "%llu", (unsigned long long)p->n);
    snprintf(d, sizeof d, "%.10g", p->density);
    run_key(p->algo, r, n, d, p->platform, level_of(p, l, sizeof l), out, len);
}

/* The dense runs with training iterations among the rows of the CSV so far
 * (those kept from an earlier sweep, then this sweep's as they finish): what
 * a row's speedup over dense is measured against (analysis/speedup.h). */
typedef struct {
    sp_speedup_run *run; /* their texts owned */
    int count;
} dense_rows;

static void dense_free(dense_rows *d)
{
    for (int i = 0; i < d->count; i++) {
        free((char *)d->run[i].algo);
        free((char *)d->run[i].platform);
        free((char *)d->run[i].level);
    }
    free(d->run);
    memset(d, 0, sizeof *d);
}

/* keeps r when it is a dense run with training iterations; out of memory,
 * it is left out (that speedup is then missing, the sweep goes on) */
static void dense_note(dense_rows *d, const sp_speedup_run *r)
{
    if (!(r->iter > 0) || !sp_speedup_is_dense(r->algo))
        return;
    sp_speedup_run *nr = realloc(d->run, (size_t)(d->count + 1) * sizeof *nr);
    if (!nr)
        return;
    d->run = nr;
    sp_speedup_run c = *r;
    c.algo = strdup(r->algo);
    c.platform = strdup(r->platform);
    c.level = strdup(r->level);
    if (!c.algo || !c.platform || !c.level) {
        free((char *)c.algo);
        free((char *)c.platform);
        free((char *)c.level);
        return;
    }
    d->run[d->count++] = c;
}

/* a kept row of an earlier sweep, for the speedups of the rows after it */
static void dense_note_row(dense_rows *d, const sp_csv_rec *r)
{
    char lv[200], *e;
    const char *it = r->f[SP_SC_ITERATION];
    if (!it[0])
        return;
    sp_speedup_level(r->f[SP_SC_DISTURBANCE], r->f[SP_SC_LEVEL], lv, sizeof lv);
    sp_speedup_run run = {.algo = r->f[SP_SC_ALGO], .ranks = atoi(r->f[SP_SC_RANKS]),
                          .n = strtod(r->f[SP_SC_N], NULL), .k = strtod(r->f[SP_SC_K], NULL),
                          .platform = r->f[SP_SC_PLATFORM], .level = lv, .iter = strtod(it, &e)};
    if (!*e)
        dense_note(d, &run);
}

/* records the run of plan p (its summary s, or NULL) among the rows so far
 * and returns its speedup over dense (0: none) */
static double dense_speedup(dense_rows *d, const sp_plan *p, const cJSON *s)
{
    char lv[64], level[200];
    sp_speedup_level(disturb_axis, level_of(p, lv, sizeof lv), level, sizeof level);
    sp_speedup_run r = {.algo = p->algo, .ranks = p->ranks, .n = (double)p->n,
                        .k = s ? sp_json_num(s, SPK_K, NULL) : floor((double)p->n * p->density),
                        .platform = p->platform, .level = level,
                        .iter = s ? sp_json_num(s, SPK_TRAINING, SPK_TR_ITER) : -1};
    dense_note(d, &r);
    return sp_speedup_vs_dense(d->run, d->count, &r, NULL);
}

/* ---- which sweep, which run ------------------------------------------------
 * A sweep is named by a hash (FNV-1a, 64 bits) of its settings and of every
 * run's key in order, so that the shards of one sweep carry the same name on
 * any machine and those of another sweep do not; a run by its place in it. */
static struct {
    char id[20];
    const sp_plan *plans; /* run_index: a plan's place in this array */
    int runs;
} ident;

static uint64_t fnv(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (h ^ 0xff) * 1099511628211ULL; /* a separator no text holds */
}

static void name_sweep(const sp_plan *plans, int np, const char *settings)
{
    uint64_t h = fnv(14695981039346656037ULL, settings);
    for (int i = 0; i < np; i++) {
        char key[1200];
        plan_key(&plans[i], key, sizeof key);
        h = fnv(h, key);
    }
    snprintf(ident.id, sizeof ident.id, "%016llx", (unsigned long long)h);
    ident.plans = plans;
    ident.runs = np;
}

/* --shard I/N: 0 with *i, *n set (0, 0 when not given), or -1 with a message */
static int parse_shard(const char *text, int *i, int *n, char *err, size_t errlen)
{
    *i = *n = 0;
    if (!text[0])
        return 0;
    char shown[80];
    unsigned long a, b;
    int used = -1;
    if (strspn(text, "0123456789/") != strlen(text) || sscanf(text, "%lu/%lu%n", &a, &b, &used) != 2 ||
        used != (int)strlen(text) || a < 1 || b < 1 || a > b || b > 1000000) {
        snprintf(err, errlen, "--shard must be I/N with 1 <= I <= N <= 1000000 (e.g. 2/4), got '%s'",
                 sp_opts_printable(text, shown, sizeof shown));
        return -1;
    }
    *i = (int)a;
    *n = (int)b;
    return 0;
}

/* ---- resuming ------------------------------------------------------------------ */

typedef struct {
    char **done; /* keys of finished runs */
    int ndone;
    int exists;  /* 0 no file (or an empty one), 1 a sweep CSV of this version */
    int repair;  /* the file must be rewritten: a cut row, failed rows to replace, a link */
    char *kept;  /* repair: the text to write instead (header and kept rows) */
    dense_rows dense; /* the dense rows it holds, for the speedups of the rows after them */
} previous;

static void previous_free(previous *pv)
{
    for (int d = 0; d < pv->ndone; d++)
        free(pv->done[d]);
    free(pv->done);
    free(pv->kept);
    dense_free(&pv->dense);
    memset(pv, 0, sizeof *pv);
}

/* reading a previous sweep CSV: the text, and the kept text being built */
typedef struct {
    const char *path, *settings;
    const sp_plan *plans;
    int np;
    previous *pv;
    const char *text, *pos, *end;
    size_t len, kcap, kw; /* kept: capacity, bytes written */
    int nf;               /* fields of the header */
    char *err;
    size_t errlen;
} previous_reader;

/* appends n bytes (and a newline when asked) to the kept text, leaving room
 * for its NUL; -1 with a message when memory runs out */
static int keep_text(previous_reader *rd, const char *s, size_t n, int newline)
{
    previous *pv = rd->pv;
    if (rd->kw + n + 2 > rd->kcap) {
        char *nk = realloc(pv->kept, rd->kw + n + 2 + rd->len);
        if (!nk) {
            snprintf(rd->err, rd->errlen, "out of memory reading %s", rd->path);
            return -1;
        }
        pv->kept = nk;
        rd->kcap = rd->kw + n + 2 + rd->len;
    }
    memcpy(pv->kept + rd->kw, s, n);
    rd->kw += n;
    if (newline)
        pv->kept[rd->kw++] = '\n';
    return 0;
}

/* the header line up to a CR, exactly this version's: 0, or 2 with a message */
static int read_header(previous_reader *rd)
{
    sp_csv_rec h;
    size_t hl = strlen(SP_SWEEP_HEADER);
    int hr = sp_csv_next(&rd->pos, rd->end, &h);
    size_t got = hr == 1 ? (size_t)(h.end - h.start) : 0;
    const char *cr = hr == 1 ? memchr(h.start, '\r', got) : NULL;
    if (cr)
        got = (size_t)(cr - h.start);
    if (hr != 1 || got != hl || memcmp(h.start, SP_SWEEP_HEADER, hl) != 0) {
        if (hr == 1)
            sp_csv_free(&h);
        snprintf(rd->err, rd->errlen,
                 "%s is not a sweep CSV with this version's columns; choose another --out (it is left untouched)",
                 rd->path);
        return 2;
    }
    memcpy(rd->pv->kept, SP_SWEEP_HEADER, hl);
    rd->kw = hl;
    rd->pv->kept[rd->kw++] = '\n';
    rd->pv->exists = 1;
    if (!h.complete)
        rd->pv->repair = 1;
    rd->nf = h.n;
    sp_csv_free(&h);
    return 0;
}

/* the place of the plan whose key is `key` (np: none) */
static int plan_index(const sp_plan *plans, int np, const char *key)
{
    int j = 0;
    for (char pk[1200]; j < np; j++) {
        plan_key(&plans[j], pk, sizeof pk);
        if (!strcmp(pk, key))
            break;
    }
    return j;
}

/* a row of a sweep that this one extends or narrows takes this sweep's name
 * and its run's place in it (a row of no run of this sweep keeps its own):
 * 1 when it was kept renamed, 0 when it keeps its own, -1 (no memory) */
static int keep_renamed(previous_reader *rd, const sp_csv_rec *r, const char *key)
{
    char at[16], runs[16];
    int j = plan_index(rd->plans, rd->np, key);
    snprintf(at, sizeof at, "%d", j);
    snprintf(runs, sizeof runs, "%d", rd->np);
    if (!(j < rd->np && ident.plans == rd->plans &&
          (strcmp(r->f[SP_SC_SWEEP_ID], ident.id) || strcmp(r->f[SP_SC_RUN_INDEX], at) ||
           strcmp(r->f[SP_SC_RUNS], runs))))
        return 0;
    const char *nv[3] = {ident.id, at, runs};
    int cols[3] = {SP_SC_SWEEP_ID, SP_SC_RUN_INDEX, SP_SC_RUNS};
    sp_csv_row nr = {0};
    for (int f = 0; f < r->n; f++) {
        const char *v = r->f[f];
        for (int c = 0; c < 3; c++)
            v = f == cols[c] ? nv[c] : v;
        sp_csv_row_text(&nr, v);
    }
    int rc = nr.oom ? -1 : keep_text(rd, nr.text, nr.len, 1);
    if (nr.oom)
        snprintf(rd->err, rd->errlen, "out of memory reading %s", rd->path);
    sp_csv_row_free(&nr);
    if (rc < 0)
        return -1;
    rd->pv->repair = 1;
    return 1;
}

/* one complete row at `line`: noted when finished, kept (renamed where it
 * must be) unless its run runs again.  0, or 2 with a message (another
 * shape, other settings), or 1 (no memory) */
static int read_row(previous_reader *rd, const sp_csv_rec *r, int line)
{
    previous *pv = rd->pv;
    if (r->n != rd->nf) {
        snprintf(rd->err, rd->errlen,
                 "%s:%d: a row of %d fields, the header has %d; remove or fix it, or choose another "
                 "--out",
                 rd->path, line, r->n, rd->nf);
        return 2;
    }
    if (strcmp(r->f[SP_SC_SETTINGS], rd->settings) != 0) {
        char d[700];
        settings_diff(r->f[SP_SC_SETTINGS], rd->settings, d, sizeof d);
        snprintf(rd->err, rd->errlen,
                 "%s was made with other settings (%s); resume with the same options, or choose another --out",
                 rd->path, d);
        return 2;
    }
    char key[1200];
    run_key(r->f[SP_SC_ALGO], r->f[SP_SC_RANKS], r->f[SP_SC_N], r->f[SP_SC_DENSITY], r->f[SP_SC_PLATFORM],
            r->f[SP_SC_LEVEL], key, sizeof key);
    int ok = !strcmp(r->f[SP_SC_STATUS], "ok");
    if (!ok && plan_index(rd->plans, rd->np, key) < rd->np) {
        pv->repair = 1; /* a failed run that runs again: its new row replaces this one */
        return 0;
    }
    if (ok) {
        char **nd = realloc(pv->done, (size_t)(pv->ndone + 1) * sizeof *nd);
        if (!nd || !(nd[pv->ndone] = strdup(key))) {
            pv->done = nd ? nd : pv->done;
            snprintf(rd->err, rd->errlen, "out of memory reading %s", rd->path);
            return 1;
        }
        pv->done = nd;
        pv->ndone++;
        dense_note_row(&pv->dense, r);
    }
    int renamed = keep_renamed(rd, r, key);
    if (renamed == 0) /* kept as it was, its line end included */
        renamed = keep_text(rd, r->start, (size_t)(rd->pos - r->start), 0);
    return renamed < 0 ? 1 : 0;
}

/* reads an existing sweep CSV: the finished runs, and what a repair keeps.
 * 0, or 2 with a message (not a sweep CSV of this version, other settings,
 * a malformed row), or 1 (cannot read, no memory) */
static int read_previous(const char *path, const char *settings, const sp_plan *plans, int np, previous *pv,
                         char *err, size_t errlen)
{
    memset(pv, 0, sizeof *pv);
    struct stat st;
    if (stat(path, &st) != 0)
        return 0; /* nothing there (a dangling link is replaced) */
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s is not a regular file", path);
        return 2;
    }
    struct stat lst;
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode))
        pv->repair = 1; /* a link is replaced by a file holding the same rows, never written through */
    size_t len;
    char *text = sp_read_file(path, SIZE_MAX / 2, &len, err, errlen);
    if (!text)
        return 1;
    if (len == 0) {
        free(text);
        return 0; /* empty: nothing to keep */
    }
    previous_reader rd = {.path = path, .settings = settings, .plans = plans, .np = np, .pv = pv, .text = text,
                          .pos = text, .end = text + len, .len = len, .kcap = len + 2, .err = err, .errlen = errlen};
    pv->kept = malloc(rd.kcap);
    if (!pv->kept) {
        free(text);
        snprintf(err, errlen, "out of memory reading %s", path);
        return 1;
    }
    int rc = read_header(&rd);
    int line = 1; /* of the record read last */
    const char *counted = text;
    while (rc == 0) {
        sp_csv_rec r;
        int got_rec = sp_csv_next(&rd.pos, rd.end, &r);
        if (got_rec == 0)
            break;
        for (; got_rec == 1 && counted < r.start; counted++)
            line += *counted == '\n';
        if (got_rec < 0 || !r.complete) { /* the last row, cut short: dropped */
            if (got_rec == 1)
                sp_csv_free(&r);
            pv->repair = 1;
            break;
        }
        if (r.n == 1 && !r.f[0][0]) /* an empty line */
            pv->repair = 1;
        else
            rc = read_row(&rd, &r, line);
        sp_csv_free(&r);
    }
    pv->kept[rd.kw] = '\0';
    free(text);
    return rc;
}

/* mean seconds per iteration of each phase, as "phase:seconds;..." */
static void phase_times(const cJSON *s, char *out, size_t n)
{
    out[0] = '\0';
    const cJSON *its = cJSON_GetObjectItemCaseSensitive(s, SPK_ITERATIONS);
    const cJSON *names = cJSON_GetObjectItemCaseSensitive(s, SPK_PHASES);
    int nit = cJSON_GetArraySize(its);
    const cJSON *nm;
    cJSON_ArrayForEach(nm, names)
    {
        if (!cJSON_IsString(nm))
            continue;
        double t = 0;
        const cJSON *it;
        cJSON_ArrayForEach(it, its)
        {
            const cJSON *ph = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(it, SPK_PHASES),
                                                               nm->valuestring);
            double v = sp_json_num(ph, SPK_TIME, NULL);
            if (ph && v > 0)
                t += v / nit;
        }
        char one[160];
        snprintf(one, sizeof one, "%s%s:%.9g", out[0] ? ";" : "", nm->valuestring, t);
        strncat(out, one, n - strlen(out) - 1);
    }
}

/* one row as text, its newline included, each column as the column table
 * (traces/sweep_columns.h) writes it; speedup: over dense (0: none).  0, or
 * -1 when memory runs out. */
static int format_row(sp_csv_row *row, const sp_plan *p, const char *settings, cJSON *s, const char *status,
                      double wall, double rss, double speedup)
{
    struct {
        int set;          /* 0: an empty field */
        double num;       /* a number column's value */
        const char *text; /* a text column's */
    } c[SP_SC_COUNT];
    memset(c, 0, sizeof c);
#define NUM(id, v) (c[SP_SC_##id].set = 1, c[SP_SC_##id].num = (v))
#define TEXT(id, v) (c[SP_SC_##id].set = 1, c[SP_SC_##id].text = (v))
    char phases[2048] = "", lv[64];
    if (s)
        phase_times(s, phases, sizeof phases);
    TEXT(ALGO, p->algo);
    NUM(RANKS, p->ranks);
    NUM(N, (double)p->n);
    NUM(DENSITY, p->density);
    NUM(K, s ? sp_json_num(s, SPK_K, NULL) : floor((double)p->n * p->density));
    TEXT(PLATFORM, p->platform);
    TEXT(NETWORK, p->network);
    TEXT(DEVICE, p->device);
    NUM(ITERS, p->iters);
    TEXT(PAYLOAD, s ? sp_json_str(s, SPK_CONFIG, SPK_CFG_PAYLOAD) : "-");
    if (s) {
        NUM(TIME_MEAN, sp_json_num(s, SPK_TIME_PER_ITER, SPK_MEAN));
        NUM(TIME_MAX, sp_json_num(s, SPK_TIME_PER_ITER, SPK_MAX));
        NUM(SENT_MEAN, sp_json_num(s, SPK_RANKS, SPK_SENT_MEAN));
        NUM(SENT_MAX, sp_json_num(s, SPK_RANKS, SPK_SENT_MAX_R));
        NUM(RECV_MEAN, sp_json_num(s, SPK_RANKS, SPK_RECV_MEAN));
        NUM(RECV_MAX, sp_json_num(s, SPK_RANKS, SPK_RECV_MAX_R));
        NUM(VOLUME, sp_json_num(s, SPK_VOLUME, SPK_VOL_MAX));
        TEXT(BOUND_FORMULA, sp_json_str(s, SPK_BOUND, SPK_FORMULA));
        NUM(BOUND_BYTES, sp_json_num(s, SPK_BOUND, SPK_BYTES_KEY));
        NUM(BOUND_RATIO, sp_json_num(s, SPK_BOUND, SPK_RATIO));
        NUM(LOWER_BYTES, sp_json_num(s, SPK_BOUND, SPK_LOWER_BYTES));
        NUM(PREDICTED, sp_json_num(s, SPK_PREDICTION, SPK_TIME));
        NUM(MESSAGES, sp_json_num(s, SPK_MESSAGES, NULL));
    }
    /* the disturbance axis: its option, the level, and the slowdown against
     * the same run undisturbed (when the run measured one) */
    TEXT(DISTURBANCE, disturb_axis);
    TEXT(LEVEL, level_of(p, lv, sizeof lv));
    double slow = s ? sp_json_num(s, SPK_DISTURBANCE, SPK_D_SLOWDOWN) : -1;
    if (slow > 0)
        NUM(SLOWDOWN, slow);
    /* a whole training iteration (sim/driver/training.h), and its speedup
     * over dense (analysis/speedup.h) */
    double it = s ? sp_json_num(s, SPK_TRAINING, SPK_TR_ITER) : -1;
    if (it > 0) {
        NUM(ITERATION, it);
        NUM(SAMPLES, sp_json_num(s, SPK_TRAINING, SPK_TR_SAMPLES));
    }
    if (speedup > 0)
        NUM(SPEEDUP, speedup);
    TEXT(SETTINGS, settings);
    TEXT(SWEEP_ID, ident.id);
    NUM(RUN_INDEX, (double)(p - ident.plans));
    NUM(RUNS, ident.runs);
    NUM(WALL, wall);
    if (rss >= 0)
        NUM(PEAK_RSS, rss);
    double rate = s ? sp_json_num(s, SPK_MSG_RATE, NULL) : -1;
    if (rate >= 0)
        NUM(MSG_RATE, rate);
    const cJSON *wp = s ? cJSON_GetObjectItemCaseSensitive(s, SPK_WALL_PROFILE) : NULL;
    if (wp) {
        NUM(WALL_MODEL, sp_json_num(wp, SPK_WP_MODEL, NULL));
        NUM(WALL_ENGINE, sp_json_num(wp, SPK_WP_ENGINE, NULL));
        NUM(WALL_SPARSIM, sp_json_num(wp, SPK_WP_SPARSIM, NULL));
    }
    TEXT(STATUS, status);
    TEXT(PHASE_TIMES, phases);
#undef NUM
#undef TEXT
    for (int i = 0; i < SP_SC_COUNT; i++) {
        const sp_sweep_column *col = &sp_sweep_columns[i];
        if (!c[i].set)
            sp_csv_row_empty(row);
        else if (col->type == SP_SC_TEXT)
            sp_csv_row_text(row, c[i].text);
        else
            sp_csv_row_num(row, col->format, c[i].num);
    }
    sp_csv_row_end(row);
    return row->oom ? -1 : 0;
}

/* appends text to the CSV whole, and to the disk; on a failure (a full
 * disk) the file is cut back to where it was, so that it holds complete
 * rows only.  0, or -1 with a message. */
static int append_whole(int fd, const char *path, const char *text, char *err, size_t errlen)
{
    off_t at = lseek(fd, 0, SEEK_END);
    size_t len = strlen(text), done = 0;
    while (done < len) {
        ssize_t w = write(fd, text + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            goto fail;
        done += (size_t)w;
    }
    if (fsync(fd) != 0 && errno != EINVAL)
        goto fail;
    return 0;
fail:
    snprintf(err, errlen, "cannot write %s: %s; the sweep stops (its finished rows are kept: --resume continues)", path,
             strerror(errno ? errno : EIO));
    if (at >= 0 && ftruncate(fd, at) == 0)
        fsync(fd);
    return -1;
}

/* writes the whole CSV (a new one's header, or a repaired one) under a
 * temporary name and renames it into place; 0, or -1 with a message */
static int write_whole(const char *path, const char *text, char *err, size_t errlen)
{
    sp_part_file pf;
    if (sp_part_open(&pf, path, err, errlen) != 0)
        return -1;
    int ok = fputs(text, pf.f) >= 0;
    return sp_part_close(&pf, ok, err, errlen) != 0 || !ok ? -1 : 0;
}

/* the runs of the sweep, every value checked before anything runs; NULL
 * with a message (and *status: 2 bad input, 1 no memory) */
static sp_plan *make_plans(const sweep_opts *o, const sp_plan *base, int *count, int *status, char *err,
                           size_t errlen)
{
    /* the axes: 0 algo, 1 ranks, 2 n, 3 density, 4 platform, 5 a disturbance's levels */
    const char *axis_names[6] = {"algo", "ranks", "n", "density", "platform", "disturb"};
    const char *eq = strchr(o->disturb, '=');
    const char *axis_text[6] = {o->algo, o->ranks, o->n, o->density, o->platform, eq ? eq + 1 : "-"};
    sp_plan *plans = NULL;
    sp_cli_list *ax = calloc(6, sizeof *ax);
    *status = 1;
    if (!ax) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    *status = 2;
    disturb_axis[0] = '\0';
    if (o->disturb[0]) {
        size_t nl = eq ? (size_t)(eq - o->disturb) : 0;
        snprintf(disturb_axis, sizeof disturb_axis, "%.*s", (int)(nl < sizeof disturb_axis ? nl : 0), o->disturb);
        if (!eq || !is_disturbance(disturb_axis)) {
            char shown[120];
            disturb_axis[0] = '\0';
            snprintf(err, errlen,
                     "--disturb: '%s' is not NAME=LEVELS with NAME a disturbance (straggler-factor, straggler-fraction, "
                     "straggler-cv, compute, noise, noise-length, noise-kind, degrade-nic, degrade-fraction, "
                     "degrade-count, degrade-bw, degrade-latency, bg-load, bg-pattern, bg-flow, fail-rank, fail-at)",
                     sp_opts_printable(o->disturb, shown, sizeof shown));
            goto out;
        }
    }
    for (int i = 0; i < 6; i++)
        if (sp_cli_split(axis_text[i], &ax[i], axis_names[i], err, errlen) != 0)
            goto out;
    if (ax[0].count == 1 && !strcmp(ax[0].items[0], "all")) {
        int n;
        const sp_algorithm *a = sp_algorithm_list(&n);
        ax[0].count = 0;
        for (int i = 0; i < n && i < SP_CLI_MAX_LIST; i++)
            snprintf(ax[0].items[ax[0].count++], sizeof ax[0].items[0], "%s", a[i].name);
    }
    /* a workload with an n of its own (the papers' models, a profile file)
     * keeps it unless --n is given */
    int ni_n = sp_opts_index(&sweep_table, "n");
    int n_from_workload = !(ni_n >= 0 && o->given[ni_n]) && strcmp(base->workload, "generic") != 0;
    if (n_from_workload)
        ax[2].count = 1;
    int total = ax[0].count * ax[1].count * ax[2].count * ax[3].count * ax[4].count * ax[5].count, np = 0;
    plans = calloc((size_t)total, sizeof *plans);
    if (!plans) {
        *status = 1;
        snprintf(err, errlen, "out of memory for %d runs", total);
        goto out;
    }
    for (int li = 0; li < ax[5].count; li++)
    for (int pl = 0; pl < ax[4].count; pl++)
        for (int ni = 0; ni < ax[2].count; ni++)
            for (int di = 0; di < ax[3].count; di++)
                for (int ri = 0; ri < ax[1].count; ri++)
                    for (int ai = 0; ai < ax[0].count; ai++) {
                        sp_plan *p = &plans[np++];
                        *p = *base;
                        const char *vals[6] = {ax[0].items[ai], ax[1].items[ri], ax[2].items[ni], ax[3].items[di],
                                               ax[4].items[pl], ax[5].items[li]};
                        axis_names[5] = disturb_axis;
                        for (int i = 0; i < 6; i++)
                            if (!(i == 2 && n_from_workload) && !(i == 5 && !disturb_axis[0]) &&
                                sp_plan_set(p, axis_names[i], vals[i], err, errlen) != 0) {
                                free(plans);
                                plans = NULL;
                                goto out;
                            }
                        if (sp_plan_validate(p, err, errlen) != 0) {
                            free(plans);
                            plans = NULL;
                            goto out;
                        }
                        p->quiet = 1;
                        p->write_trace = 0;
                        p->write_csv = o->keep[0] != '\0';
                    }
    *count = np;
    *status = 0;
out:
    free(ax);
    return plans;
}

/* ---- a Slurm job array over the shards ----------------------------------------- */

/* text in single quotes for a POSIX shell, at most n bytes */
static const char *shell_quoted(const char *text, char *out, size_t n)
{
    size_t w = 0;
    if (n < 3)
        return "''";
    out[w++] = '\'';
    for (const char *c = text; *c && w + 6 < n; c++) {
        if (*c == '\'') {
            memcpy(out + w, "'\\''", 4);
            w += 4;
        } else {
            out[w++] = *c;
        }
    }
    out[w++] = '\'';
    out[w] = '\0';
    return out;
}

/* the sweep's own flags that the script sets itself */
static int flag_of_script(const char *a, int *takes_value)
{
    static const char *const own[] = {"emit-slurm", "slurm-shards", "shard", "out", "jobs", "resume", "no-resume",
                                      "keep"};
    *takes_value = 0;
    if (strncmp(a, "--", 2) != 0)
        return 0;
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
        size_t l = strlen(own[i]);
        if (!strncmp(a + 2, own[i], l) && (a[2 + l] == '\0' || a[2 + l] == '=')) {
            *takes_value = a[2 + l] == '\0' && strcmp(own[i], "resume") && strcmp(own[i], "no-resume");
            return 1;
        }
    }
    return 0;
}

/* writes the batch script: a job array of `shards` tasks, each running this
 * sweep's shard with --resume (a requeued task continues), its CSV beside
 * --out; then 'sparsim merge' joins them.  0, or -1 with a message. */
static int emit_slurm(const sweep_opts *o, int argc, char **argv, const sp_plan *plans, int np, int shards,
                      char *err, size_t errlen)
{
    char exe[1024], cwd[1024], q[2200], base[1100];
    ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (el <= 0) {
        snprintf(err, errlen, "cannot find this program's path for --emit-slurm: %s", strerror(errno));
        return -1;
    }
    exe[el] = '\0';
    if (!getcwd(cwd, sizeof cwd)) {
        snprintf(err, errlen, "--emit-slurm: cannot read the current folder: %s", strerror(errno));
        return -1;
    }
    snprintf(base, sizeof base, "%s", o->out);
    size_t bl = strlen(base);
    if (bl > 4 && !strcmp(base + bl - 4, ".csv"))
        base[bl - 4] = '\0';
    double mem = 0, limit = -1;
    for (int i = 0; i < np; i++) {
        double m = sp_run_memory_estimate(&plans[i], &limit);
        mem = m > mem ? m : mem;
    }
    sp_part_file pf;
    if (sp_part_open(&pf, o->emit_slurm, err, errlen) != 0)
        return -1;
    FILE *f = pf.f;
    fprintf(f, "#!/bin/bash\n"
               "# A sparsim sweep of %d runs (sweep_id %s) as a Slurm job array of %d tasks;\n"
               "# task I runs shard I/%d of it into its own CSV, with --resume, so that a task\n"
               "# requeued or run again continues where it stopped.  Submit with\n"
               "#   sbatch %s\n"
               "# and when every task has ended, join the shards into one CSV:\n",
            np, ident.id, shards, shards, o->emit_slurm);
    fprintf(f, "#   %s merge --out %s", exe, o->out);
    for (int i = 1; i <= shards && i <= 3; i++)
        fprintf(f, " %s.shard-%d-of-%d.csv", base, i, shards);
    fprintf(f, "%s\n", shards > 3 ? " ..." : "");
    fprintf(f, "#SBATCH --job-name=sparsim-sweep\n"
               "#SBATCH --array=1-%d\n"
               "#SBATCH --ntasks=1\n"
               "#SBATCH --cpus-per-task=%d\n"
               "#SBATCH --mem=%.0fM\n"
               "#SBATCH --output=%s.shard-%%a-of-%d.log\n"
               "set -euo pipefail\n"
               "cd %s\n"
               "i=\"${SLURM_ARRAY_TASK_ID:?run this script with sbatch}\"\n",
            shards, o->jobs ? o->jobs : 1, ceil((mem * (o->jobs ? o->jobs : 1) + 256.0 * 1048576) / 1048576), base,
            shards, shell_quoted(cwd, q, sizeof q));
    fprintf(f, "exec %s sweep", shell_quoted(exe, q, sizeof q));
    for (int i = 0; i < argc; i++) {
        int takes;
        if (flag_of_script(argv[i], &takes)) {
            i += takes;
            continue;
        }
        fprintf(f, " %s", shell_quoted(argv[i], q, sizeof q));
    }
    fprintf(f, " \\\n    --shard \"$i/%d\" --out %s.shard-\"$i\"-of-%d.csv --resume --jobs \"${SLURM_CPUS_PER_TASK:-1}\"",
            shards, shell_quoted(base, q, sizeof q), shards);
    if (o->keep[0])
        fprintf(f, " --keep %s", shell_quoted(o->keep, q, sizeof q));
    fprintf(f, "\n");
    int ok = !ferror(f);
    if (sp_part_close(&pf, ok, err, errlen) != 0 || !ok)
        return -1;
    chmod(o->emit_slurm, 0755);
    return 0;
}

/* one sweep's state from its options to its last row */
typedef struct {
    sweep_opts o;
    int argc;
    char **argv;
    sp_plan *plans;
    int np, shard_i, shard_n;
    char settings[8192];
    previous pv;    /* the CSV there before */
    int fd;         /* the CSV, appended to */
    char tmpl[1100]; /* the temporary folder of the runs (none with --keep) */
    sp_pool *pool;
    int ran, failed, skipped, total;
    double t0;
    char err[2400];
} sweep_state;

/* --emit-slurm: the batch script instead of the runs; the exit status */
static int write_slurm_script(sweep_state *s)
{
    const sweep_opts *o = &s->o;
    int shards = o->slurm_shards ? o->slurm_shards : s->np;
    if (s->shard_n) {
        snprintf(s->err, sizeof s->err, "--emit-slurm writes the script of every shard; leave out --shard");
        return 2;
    }
    if (shards > s->np) {
        snprintf(s->err, sizeof s->err, "--slurm-shards %d: the sweep has only %d runs", shards, s->np);
        return 2;
    }
    if (sp_opts_output_ok(o->emit_slurm, 0, "--emit-slurm", s->err, sizeof s->err) != 0)
        return 2;
    if (emit_slurm(o, s->argc, s->argv, s->plans, s->np, shards, s->err, sizeof s->err) != 0)
        return 1;
    printf("wrote %s: a job array of %d shards of %d runs; submit it with sbatch\n", o->emit_slurm, shards, s->np);
    return fflush(stdout) == 0 ? 0 : 1;
}

/* the CSV read (what --resume keeps), written whole when new or repaired and
 * opened for appending; the runs' folder made.  0, or the exit status */
static int open_output(sweep_state *s)
{
    const sweep_opts *o = &s->o;
    char header[1024];
    if (sp_opts_output_ok(o->out, 0, "--out", s->err, sizeof s->err) != 0 ||
        (o->keep[0] && sp_opts_output_ok(o->keep, 1, "--keep", s->err, sizeof s->err) != 0))
        return 2;
    int status = read_previous(o->out, s->settings, s->plans, s->np, &s->pv, s->err, sizeof s->err);
    if (status != 0)
        return status;
    if (s->pv.exists && !o->resume) {
        snprintf(s->err, sizeof s->err, "%s exists; add --resume to continue it, or choose another --out", o->out);
        return 2;
    }
    /* a new CSV, or one repaired, appears whole (a link at the path is
     * replaced); rows are then appended one by one */
    snprintf(header, sizeof header, "%s\n", SP_SWEEP_HEADER);
    if ((!s->pv.exists || s->pv.repair) &&
        write_whole(o->out, s->pv.exists ? s->pv.kept : header, s->err, sizeof s->err) != 0)
        return 1;
    if ((s->fd = open(o->out, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        snprintf(s->err, sizeof s->err, "cannot write %s: %s", o->out, strerror(errno));
        return 1;
    }
    if (!o->keep[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(s->tmpl, sizeof s->tmpl, "%s/sparsim-sweep-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(s->tmpl)) {
            snprintf(s->err, sizeof s->err, "cannot create a temporary folder: %s", strerror(errno));
            s->tmpl[0] = '\0';
            return 1;
        }
    } else if (sp_mkdirs(o->keep, s->err, sizeof s->err) != 0) {
        return 1;
    }
    sp_cli_on_interrupt(remove_on_interrupt, s->tmpl[0] ? s->tmpl : NULL);
    return 0;
}

/* the pool, given this shard's runs not already in the CSV, each with its
 * output folder.  0, or the exit status */
static int queue_runs(sweep_state *s)
{
    const sweep_opts *o = &s->o;
    s->t0 = sp_cli_now();
    for (int i = 0; i < s->np; i++)
        s->total += !s->shard_n || i % s->shard_n == s->shard_i - 1;
    double budget = -1;
    sp_run_memory_estimate(&s->plans[0], &budget);
    if (!(s->pool = sp_pool_open(o->jobs ? o->jobs : sp_pool_cores(), budget, remove_on_interrupt,
                                 s->tmpl[0] ? s->tmpl : NULL))) {
        snprintf(s->err, sizeof s->err, "out of memory");
        return 1;
    }
    for (int i = 0; i < s->np; i++) {
        sp_plan *p = &s->plans[i];
        if (s->shard_n && i % s->shard_n != s->shard_i - 1)
            continue; /* another shard's */
        char key[1200];
        plan_key(p, key, sizeof key);
        int have = 0;
        for (int d = 0; d < s->pv.ndone && !have; d++)
            have = !strcmp(s->pv.done[d], key);
        if (have) {
            s->skipped++;
            continue;
        }
        const char *plat = strrchr(p->platform, '/') ? strrchr(p->platform, '/') + 1 : p->platform;
        char lv[64];
        snprintf(p->out, sizeof p->out, "%.700s/%.63s-P%d-n%llu-d%g-%.100s%s%.60s", o->keep[0] ? o->keep : s->tmpl,
                 p->algo, p->ranks, (unsigned long long)p->n, p->density, plat, disturb_axis[0] ? "-" : "",
                 level_of(p, lv, sizeof lv));
        if (sp_pool_add(s->pool, p, sp_run_memory_estimate(p, NULL), i) != 0) {
            snprintf(s->err, sizeof s->err, "out of memory");
            return 1;
        }
    }
    return 0;
}

/* each run's row appended as it ends, then the summary line; the exit status */
static int collect_rows(sweep_state *s)
{
    const sweep_opts *o = &s->o;
    sweep_progress prog = {s->skipped, s->total, s->skipped, s->t0, 0, s->pool};
    progress(&prog);
    int i, rc, got;
    double rss, wall;
    while ((got = sp_pool_next(s->pool, &i, &rc, &rss, &wall, progress, &prog, s->err, sizeof s->err)) > 0) {
        sp_plan *p = &s->plans[i];
        cJSON *sum = rc == 0 ? sp_cli_read_summary(p) : NULL;
        if (rc == 0 && !sum)
            rc = 1;
        double speedup = dense_speedup(&s->pv.dense, p, sum);
        sp_csv_row row = {0};
        int formed = format_row(&row, p, s->settings, sum, rc == 0 ? "ok" : rc == 2 ? "bad-input" : "failed", wall,
                                rss, speedup);
        cJSON_Delete(sum);
        if (!o->keep[0])
            sp_cli_remove_run_dir(p->out);
        if (formed != 0) {
            sp_csv_row_free(&row);
            snprintf(s->err, sizeof s->err,
                     "out of memory; the sweep stops (its finished rows are kept: --resume continues)");
            return 1;
        }
        int wrote = append_whole(s->fd, o->out, row.text, s->err, sizeof s->err);
        sp_csv_row_free(&row);
        if (wrote != 0)
            return 1;
        s->ran++;
        s->failed += rc != 0;
        prog.done++;
        progress(&prog);
    }
    if (got < 0)
        return 1;
    char took[32];
    fmt_duration(took, sizeof took, sp_cli_now() - s->t0);
    printf("sweep: %d runs (%d failed), %d already in %s; %s\n", s->ran, s->failed, s->skipped, o->out, took);
    if (fflush(stdout) != 0) {
        snprintf(s->err, sizeof s->err, "cannot write the summary line: %s", strerror(errno));
        return 1;
    }
    return s->failed ? 1 : 0;
}

int sp_cmd_sweep(int argc, char **argv)
{
    sweep_state s;
    memset(&s, 0, sizeof s);
    s.argc = argc;
    s.argv = argv;
    s.fd = -1;
    sp_opts_defaults(&sweep_table, &s.o);
    sp_plan base;
    sp_plan_defaults(&base);
    int help, status = 2;
    if (parse_sweep(argc, argv, &s.o, &base, &help, s.err, sizeof s.err) != 0)
        goto out;
    if (help) {
        sweep_help();
        return 0;
    }
    base.iters = s.o.iters;
    if (!(s.plans = make_plans(&s.o, &base, &s.np, &status, s.err, sizeof s.err)))
        goto out;
    status = 2;
    settings_text(&s.plans[0], s.settings, sizeof s.settings);
    name_sweep(s.plans, s.np, s.settings);
    if (parse_shard(s.o.shard, &s.shard_i, &s.shard_n, s.err, sizeof s.err) != 0)
        goto out;
    if (s.o.emit_slurm[0])
        status = write_slurm_script(&s);
    else if ((status = open_output(&s)) == 0 && (status = queue_runs(&s)) == 0)
        status = collect_rows(&s);
out:
    sp_pool_close(s.pool); /* runs still in flight (the sweep stops) end, leaving nothing */
    if (status != 0 && s.err[0])
        sp_opts_print_error(s.err);
    sp_cli_on_interrupt(NULL, NULL);
    if (s.fd >= 0 && close(s.fd) != 0 && status == 0) {
        snprintf(s.err, sizeof s.err, "cannot write %s: %s", s.o.out, strerror(errno));
        sp_opts_print_error(s.err);
        status = 1;
    }
    if (s.tmpl[0])
        rmdir(s.tmpl);
    previous_free(&s.pv);
    free(s.plans);
    return status;
}
