/* sweep.c - `sparsim sweep`: many runs, one CSV row each.
 *
 * A sweep runs every combination of algorithms, rank counts, gradient sizes,
 * densities and platforms, one child process per run, and appends one CSV row
 * per finished run (flushed and synced), so an interrupted sweep keeps what
 * it finished and --resume skips it.  Options that are not lists are those of
 * `sparsim run` and apply to every run.
 */
#include "cli.h"
#include "../../algorithms/algorithm.h"
#include "../../traces/summary_keys.h"
#include "../../traces/trace.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static void progress(int done, int total, double t0)
{
    if (!isatty(2))
        return;
    double el = sp_cli_now() - t0;
    char e[32], left[32] = "?";
    fmt_duration(e, sizeof e, el);
    if (done > 0)
        fmt_duration(left, sizeof left, el / done * (total - done));
    int w = 30, fill = total ? done * w / total : w;
    fprintf(stderr, "\r[%.*s%*s] %d/%d runs, %s elapsed, ~%s left ", fill, "##############################",
            w - fill, "", done, total, e, left);
    if (done == total)
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

#define SWEEP_HEADER                                                                                              \
    "algo,ranks,n,density,k,platform,network,device,iters,payload,time_per_iter_mean_s,time_per_iter_max_s,"      \
    "sent_bytes_mean,sent_bytes_max,recv_bytes_mean,recv_bytes_max,volume_bytes,bound_formula,bound_bytes,"       \
    "bound_ratio,lower_bytes,predicted_s,messages,wall_s,peak_rss_bytes,status,phase_times"

typedef struct {
    char algo[4096], ranks[4096], n[4096], density[4096], platform[4096];
    char out[1024], keep[1024], config[1024];
    int resume, iters;
    unsigned char given[16];
} sweep_opts;

#define S(field) offsetof(sweep_opts, field), sizeof(((sweep_opts *)0)->field)

/* the sweep's own options; any other is an option of `sparsim run` for every run */
static const sp_opt sweep_rows[] = {
    {"algo", SP_OT_STRING, S(algo), 0, 0, "all", NULL, SP_OPT_LIST, "LIST", NULL, "algorithms, or 'all'", NULL,
     NULL},
    {"ranks", SP_OT_STRING, S(ranks), 0, 0, "8,16,32,64", NULL, SP_OPT_LIST, "LIST", NULL, "rank counts", NULL,
     NULL},
    {"n", SP_OT_STRING, S(n), 0, 0, "65536", NULL, SP_OPT_LIST, "LIST", NULL, "gradient lengths, K/M/G suffixes",
     NULL, NULL},
    {"density", SP_OT_STRING, S(density), 0, 0, "0.01", NULL, SP_OPT_LIST, "LIST", NULL, "densities", NULL, NULL},
    {"platform", SP_OT_STRING, S(platform), 0, 0, "1gbe", NULL, SP_OPT_LIST, "LIST", NULL,
     "1gbe, daint or platform files", NULL, NULL},
    {"iters", SP_OT_INT, S(iters), 1, 1e6, "2", NULL, 0, "I", NULL, "iterations of every run", NULL, NULL},
    {"out", SP_OT_STRING, S(out), 0, 0, "sweep.csv", NULL, 0, "FILE", NULL,
     "the CSV; an existing one needs --resume", NULL, NULL},
    {"resume", SP_OT_BOOL, S(resume), 0, 0, "false", NULL, 0, NULL, NULL,
     "keep FILE's finished rows and run only what is missing", NULL, NULL},
    {"keep", SP_OT_STRING, S(keep), 0, 0, "", NULL, 0, "DIR", NULL,
     "keep each run's outputs in DIR/ALGO-PP-nN-dD-PLATFORM", NULL, NULL},
    {"config", SP_OT_STRING, S(config), 0, 0, "", NULL, SP_OPT_CLI_ONLY, "FILE", NULL,
     "JSON object with the same keys (lists as arrays or comma strings), and any option of sparsim run", NULL,
     NULL},
    /* the plural names earlier versions took */
    {"algos", SP_OT_STRING, S(algo), 0, 0, "all", NULL, SP_OPT_LIST, "LIST", NULL, "the same as --algo", NULL,
     NULL},
    {"densities", SP_OT_STRING, S(density), 0, 0, "0.01", NULL, SP_OPT_LIST, "LIST", NULL,
     "the same as --density", NULL, NULL},
    {"platforms", SP_OT_STRING, S(platform), 0, 0, "1gbe", NULL, SP_OPT_LIST, "LIST", NULL,
     "the same as --platform", NULL, NULL},
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
           "columns: " SWEEP_HEADER "\n"
           "  times in seconds, bytes per rank; volume_bytes is the volume per iteration as\n"
           "  the bounds count it; phase_times is 'phase:seconds;...' (mean per iteration);\n"
           "  peak_rss_bytes is the run's peak resident memory (it includes the few MiB\n"
           "  the sweep itself holds); status is ok, failed or bad-input.\n"
           "A progress bar with the time left goes to stderr when it is a terminal.\n");
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
    return rc;
}

/* the finished rows of an existing sweep CSV: keys "algo,ranks,n,density,...platform";
 * *exists is 2 when the file's header is not this version's */
static char **read_done(const char *path, int *count, int *exists)
{
    *count = 0;
    *exists = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    *exists = 1;
    char **keys = NULL;
    char line[8192];
    int cap = 0;
    if (!fgets(line, sizeof line, f)) {
        *exists = 0; /* empty: nothing to keep */
        fclose(f);
        return NULL;
    }
    line[strcspn(line, "\r\n")] = '\0';
    if (strcmp(line, SWEEP_HEADER) != 0) {
        *exists = 2;
        fclose(f);
        return NULL;
    }
    while (fgets(line, sizeof line, f)) {
        /* status is the second-to-last column; finished rows say ",ok," there */
        char *status = strstr(line, ",ok,");
        if (!status)
            continue;
        char *fields[6];
        char *s = line;
        int nf = 0;
        for (char *c = line; *c && nf < 6; c++)
            if (*c == ',') {
                *c = '\0';
                fields[nf++] = s;
                s = c + 1;
            }
        if (nf < 6)
            continue;
        if (*count == cap) {
            int nc = cap ? cap * 2 : 64;
            char **nk = realloc(keys, (size_t)nc * sizeof *nk);
            if (!nk)
                break; /* fewer rows known as done: they run again */
            keys = nk;
            cap = nc;
        }
        /* algo, ranks, n, density, (k), platform */
        char key[512];
        snprintf(key, sizeof key, "%s|%s|%s|%s|%s", fields[0], fields[1], fields[2], fields[3], fields[5]);
        if ((keys[*count] = strdup(key)))
            (*count)++;
    }
    fclose(f);
    return keys;
}

static void free_done(char **done, int n)
{
    for (int d = 0; d < n; d++)
        free(done[d]);
    free(done);
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

static void write_row(FILE *f, const sp_plan *p, cJSON *s, const char *status, double wall, double rss)
{
    char phases[2048] = "";
    if (s)
        phase_times(s, phases, sizeof phases);
    fprintf(f, "%s,%d,%llu,%.10g,%.0f,%s,%s,%s,%d,%s,", p->algo, p->ranks, (unsigned long long)p->n, p->density,
            s ? sp_json_num(s, SPK_K, NULL) : floor((double)p->n * p->density), p->platform, p->network, p->device,
            p->iters, s ? sp_json_str(s, SPK_CONFIG, SPK_CFG_PAYLOAD) : "-");
    if (s) {
        fprintf(f, "%.9g,%.9g,%.0f,%.0f,%.0f,%.0f,%.0f,\"%s\",%.0f,%.6g,%.0f,%.9g,%.0f,",
                sp_json_num(s, SPK_TIME_PER_ITER, SPK_MEAN), sp_json_num(s, SPK_TIME_PER_ITER, SPK_MAX),
                sp_json_num(s, SPK_RANKS, SPK_SENT_MEAN), sp_json_num(s, SPK_RANKS, SPK_SENT_MAX_R),
                sp_json_num(s, SPK_RANKS, SPK_RECV_MEAN), sp_json_num(s, SPK_RANKS, SPK_RECV_MAX_R),
                sp_json_num(s, SPK_VOLUME, SPK_VOL_MAX), sp_json_str(s, SPK_BOUND, SPK_FORMULA),
                sp_json_num(s, SPK_BOUND, SPK_BYTES_KEY), sp_json_num(s, SPK_BOUND, SPK_RATIO),
                sp_json_num(s, SPK_BOUND, SPK_LOWER_BYTES), sp_json_num(s, SPK_PREDICTION, SPK_TIME),
                sp_json_num(s, SPK_MESSAGES, NULL));
    } else {
        fprintf(f, ",,,,,,,,,,,,,");
    }
    if (rss >= 0)
        fprintf(f, "%.3f,%.0f,%s,%s\n", wall, rss, status, phases);
    else
        fprintf(f, "%.3f,,%s,%s\n", wall, status, phases);
    fflush(f);
    fsync(fileno(f));
}

/* the runs of the sweep, every value checked before anything runs; NULL
 * with a message (and *status: 2 bad input, 1 no memory) */
static sp_plan *make_plans(const sweep_opts *o, const sp_plan *base, int *count, int *status, char *err,
                           size_t errlen)
{
    /* the axes: 0 algo, 1 ranks, 2 n, 3 density, 4 platform */
    const char *axis_names[5] = {"algo", "ranks", "n", "density", "platform"};
    const char *axis_text[5] = {o->algo, o->ranks, o->n, o->density, o->platform};
    sp_plan *plans = NULL;
    sp_cli_list *ax = calloc(5, sizeof *ax);
    *status = 1;
    if (!ax) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    *status = 2;
    for (int i = 0; i < 5; i++)
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
    int total = ax[0].count * ax[1].count * ax[2].count * ax[3].count * ax[4].count, np = 0;
    plans = calloc((size_t)total, sizeof *plans);
    if (!plans) {
        *status = 1;
        snprintf(err, errlen, "out of memory for %d runs", total);
        goto out;
    }
    for (int pl = 0; pl < ax[4].count; pl++)
        for (int ni = 0; ni < ax[2].count; ni++)
            for (int di = 0; di < ax[3].count; di++)
                for (int ri = 0; ri < ax[1].count; ri++)
                    for (int ai = 0; ai < ax[0].count; ai++) {
                        sp_plan *p = &plans[np++];
                        *p = *base;
                        const char *vals[5] = {ax[0].items[ai], ax[1].items[ri], ax[2].items[ni], ax[3].items[di],
                                               ax[4].items[pl]};
                        for (int i = 0; i < 5; i++)
                            if (!(i == 2 && n_from_workload) &&
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

int sp_cmd_sweep(int argc, char **argv)
{
    sweep_opts o;
    memset(&o, 0, sizeof o);
    sp_opts_defaults(&sweep_table, &o);
    sp_plan base;
    sp_plan_defaults(&base);
    char err[1400] = "", tmpl[1100] = "";
    int help, np = 0, status = 2, ndone = 0, exists = 0;
    sp_plan *plans = NULL;
    char **done = NULL;
    FILE *csv = NULL;
    if (parse_sweep(argc, argv, &o, &base, &help, err, sizeof err) != 0)
        goto out;
    if (help) {
        sweep_help();
        return 0;
    }
    base.iters = o.iters;
    if (!(plans = make_plans(&o, &base, &np, &status, err, sizeof err)))
        goto out;
    status = 2;
    done = read_done(o.out, &ndone, &exists);
    if (exists == 2) {
        snprintf(err, sizeof err,
                 "%s is not a sweep CSV with this version's columns; choose another --out (it is left untouched)",
                 o.out);
        goto out;
    }
    if (exists && !o.resume) {
        snprintf(err, sizeof err, "%s exists; add --resume to continue it, or choose another --out", o.out);
        goto out;
    }
    if (!(csv = fopen(o.out, exists ? "a" : "w"))) {
        snprintf(err, sizeof err, "cannot write %s: %s", o.out, strerror(errno));
        goto out;
    }
    if (!exists) {
        fprintf(csv, SWEEP_HEADER "\n");
        fflush(csv);
    }
    if (!o.keep[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(tmpl, sizeof tmpl, "%s/sparsim-sweep-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(tmpl)) {
            snprintf(err, sizeof err, "cannot create a temporary folder: %s", strerror(errno));
            tmpl[0] = '\0';
            status = 1;
            goto out;
        }
    } else if (sp_mkdirs(o.keep, err, sizeof err) != 0) {
        goto out;
    }
    sp_cli_on_interrupt(remove_on_interrupt, tmpl[0] ? tmpl : NULL);
    double t0 = sp_cli_now();
    int ran = 0, failed = 0, skipped = 0;
    for (int i = 0; i < np; i++) {
        sp_plan *p = &plans[i];
        char key[512];
        snprintf(key, sizeof key, "%.63s|%d|%llu|%.10g|%.255s", p->algo, p->ranks, (unsigned long long)p->n,
                 p->density, p->platform);
        int have = 0;
        for (int d = 0; d < ndone && !have; d++)
            have = !strcmp(done[d], key);
        if (have) {
            skipped++;
            progress(i + 1, np, t0);
            continue;
        }
        const char *plat = strrchr(p->platform, '/') ? strrchr(p->platform, '/') + 1 : p->platform;
        snprintf(p->out, sizeof p->out, "%.700s/%.63s-P%d-n%llu-d%g-%.100s", o.keep[0] ? o.keep : tmpl, p->algo,
                 p->ranks, (unsigned long long)p->n, p->density, plat);
        double w0 = sp_cli_now(), rss = -1;
        cJSON *s;
        int rc = sp_cli_run_and_read(p, &s, &rss);
        char st[64];
        snprintf(st, sizeof st, rc == 0 ? "ok" : rc == 2 ? "bad-input" : "failed");
        write_row(csv, p, s, st, sp_cli_now() - w0, rss);
        cJSON_Delete(s);
        if (!o.keep[0])
            sp_cli_remove_run_dir(p->out);
        ran++;
        failed += rc != 0;
        progress(i + 1, np, t0);
    }
    char took[32];
    fmt_duration(took, sizeof took, sp_cli_now() - t0);
    printf("sweep: %d runs (%d failed), %d already in %s; %s\n", ran, failed, skipped, o.out, took);
    status = failed ? 1 : 0;
out:
    if (status != 0 && err[0])
        fprintf(stderr, "sparsim: %s\n", err);
    if (csv)
        fclose(csv);
    if (tmpl[0])
        rmdir(tmpl);
    free_done(done, ndone);
    free(plans);
    return status;
}
