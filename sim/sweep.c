/* sweep.c - many runs: `sparsim sweep` and `sparsim crossover`.
 *
 * A sweep runs every combination of algorithms, rank counts, gradient sizes,
 * densities and platforms, one child process per run, and appends one CSV row
 * per finished run (flushed and synced), so an interrupted sweep keeps what
 * it finished and --resume skips it.  Options that are not lists are those of
 * `sparsim run` and apply to every run.
 *
 * crossover searches, for one platform, n and density, the rank count at
 * which each sparse algorithm stops beating the fastest dense allreduce:
 * doubling P until it loses, then bisection between the last two.
 */
#include "cli.h"
#include "../algorithms/algorithm.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_LIST 64

typedef struct {
    char items[MAX_LIST][128];
    int count;
} str_list;

static int split_list(const char *text, str_list *l, const char *name, char *err, size_t errlen)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", text);
    l->count = 0;
    for (char *s = strtok(buf, ","); s; s = strtok(NULL, ",")) {
        while (*s == ' ')
            s++;
        if (!*s)
            continue;
        if (l->count == MAX_LIST) {
            snprintf(err, errlen, "--%s: at most %d values", name, MAX_LIST);
            return -1;
        }
        snprintf(l->items[l->count++], sizeof l->items[0], "%s", s);
    }
    if (!l->count) {
        snprintf(err, errlen, "--%s needs at least one value", name);
        return -1;
    }
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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
    double el = now_s() - t0;
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

/* one run in a child; on success *summary holds its summary.json */
static int run_and_read(const sp_plan *p, cJSON **summary, double *rss)
{
    *summary = NULL;
    int rc = sp_cli_run_in_child_rss(p, rss);
    if (rc != 0)
        return rc;
    char path[1200];
    snprintf(path, sizeof path, "%s/summary.json", p->out);
    *summary = sp_json_read(path);
    return *summary ? 0 : 1;
}

static void remove_run_dir(const char *dir)
{
    sp_cli_remove_outputs(dir, "");
    rmdir(dir);
}

/* a signal ended the command during `run`: its folder and the command's
 * temporary folder (`tmp`, when there is one) go */
static void remove_on_interrupt(const sp_plan *run, void *tmp)
{
    remove_run_dir(run->out);
    if (tmp)
        rmdir((const char *)tmp);
}

/* ---- sweep --------------------------------------------------------------- */

#define SWEEP_HEADER                                                                                              \
    "algo,ranks,n,density,k,platform,network,device,iters,payload,time_per_iter_mean_s,time_per_iter_max_s,"      \
    "sent_bytes_mean,sent_bytes_max,recv_bytes_mean,recv_bytes_max,volume_bytes,bound_formula,bound_bytes,"       \
    "bound_ratio,lower_bytes,predicted_s,messages,wall_s,peak_rss_bytes,status,phase_times"

static void sweep_help(void)
{
    printf("usage: sparsim sweep [options]\n"
           "\n"
           "Runs every combination of the lists below (one run per process) and appends\n"
           "one row per finished run to a CSV file, flushed as it goes.\n"
           "\n"
           "  --algo LIST       algorithms, or 'all' (default: all)\n"
           "  --ranks LIST      rank counts (default: 8,16,32,64)\n"
           "  --n LIST          gradient lengths, K/M/G suffixes (default: 65536)\n"
           "  --density LIST    densities (default: 0.01)\n"
           "  --platform LIST   1gbe, daint or platform files (default: 1gbe)\n"
           "  --out FILE        the CSV (default: sweep.csv); an existing one needs --resume\n"
           "  --resume          keep FILE's finished rows and run only what is missing\n"
           "  --keep DIR        keep each run's outputs in DIR/ALGO-PP-nN-dD-PLATFORM\n"
           "  --config FILE     JSON object with the same keys (lists as arrays or\n"
           "                    comma strings), and any option of sparsim run\n"
           "  any other option of 'sparsim run' (--iters, --network, --device, ...)\n"
           "                    applies to every run (default --iters 2)\n"
           "\n"
           "columns: " SWEEP_HEADER "\n"
           "  times in seconds, bytes per rank; volume_bytes is the volume per iteration as\n"
           "  the bounds count it; phase_times is 'phase:seconds;...' (mean per iteration);\n"
           "  peak_rss_bytes is the run's peak resident memory (it includes the few MiB\n"
           "  the sweep itself holds); status is ok, failed or bad-input.\n"
           "A progress bar with the time left goes to stderr when it is a terminal.\n");
}

typedef struct {
    str_list algos, ranks, ns, densities, platforms;
    char out[1024], keep[1024];
    int resume;
} sweep_opts;

/* list options may come from --config too: pull them out, pass the rest on */
static int take_json_lists(const char *path, sweep_opts *o, sp_plan *base, char *err, size_t errlen)
{
    cJSON *j = sp_json_read(path);
    if (!j || !cJSON_IsObject(j)) {
        snprintf(err, errlen, "%s: not a JSON object (or unreadable)", path);
        cJSON_Delete(j);
        return -1;
    }
    struct {
        const char *k1, *k2;
        str_list *l;
    } keys[] = {{"algo", "algos", &o->algos},
                {"ranks", NULL, &o->ranks},
                {"n", NULL, &o->ns},
                {"density", "densities", &o->densities},
                {"platform", "platforms", &o->platforms}};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        for (int alt = 0; alt < 2; alt++) {
            const char *k = alt ? keys[i].k2 : keys[i].k1;
            if (!k)
                continue;
            cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(j, k);
            if (!v)
                continue;
            char text[4096] = "";
            if (cJSON_IsArray(v)) {
                cJSON *e;
                cJSON_ArrayForEach(e, v)
                {
                    char one[128];
                    if (cJSON_IsString(e))
                        snprintf(one, sizeof one, "%s", e->valuestring);
                    else if (cJSON_IsNumber(e))
                        snprintf(one, sizeof one, "%.17g", e->valuedouble);
                    else {
                        snprintf(err, errlen, "%s: \"%s\" must list strings or numbers", path, k);
                        cJSON_Delete(v);
                        cJSON_Delete(j);
                        return -1;
                    }
                    strncat(text, text[0] ? "," : "", sizeof text - strlen(text) - 1);
                    strncat(text, one, sizeof text - strlen(text) - 1);
                }
            } else if (cJSON_IsString(v)) {
                snprintf(text, sizeof text, "%s", v->valuestring);
            } else if (cJSON_IsNumber(v)) {
                snprintf(text, sizeof text, "%.17g", v->valuedouble);
            } else {
                snprintf(err, errlen, "%s: \"%s\" must be a list, a string or a number", path, k);
                cJSON_Delete(v);
                cJSON_Delete(j);
                return -1;
            }
            cJSON_Delete(v);
            if (split_list(text, keys[i].l, k, err, errlen) != 0) {
                cJSON_Delete(j);
                return -1;
            }
        }
    }
    char *rest = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    int rc = sp_plan_apply_json(base, rest, path, err, errlen);
    free(rest);
    return rc;
}

/* sweep options out of argv; the rest into `pass` for sp_plan_parse */
static int parse_sweep_args(int argc, char **argv, sweep_opts *o, sp_plan *base, char **pass, int *npass,
                            int *help, char *err, size_t errlen)
{
    *npass = 0;
    *help = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        str_list *l = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            *help = 1;
            return 0;
        }
        if (!strcmp(a, "--algo") || !strcmp(a, "--algos"))
            l = &o->algos;
        else if (!strcmp(a, "--ranks"))
            l = &o->ranks;
        else if (!strcmp(a, "--n"))
            l = &o->ns;
        else if (!strcmp(a, "--density") || !strcmp(a, "--densities"))
            l = &o->densities;
        else if (!strcmp(a, "--platform") || !strcmp(a, "--platforms"))
            l = &o->platforms;
        if (l) {
            if (!v) {
                snprintf(err, errlen, "%s needs a value", a);
                return -1;
            }
            if (split_list(v, l, a + 2, err, errlen) != 0)
                return -1;
            i++;
            continue;
        }
        if (!strcmp(a, "--out") || !strcmp(a, "--keep") || !strcmp(a, "--config")) {
            if (!v) {
                snprintf(err, errlen, "%s needs a value", a);
                return -1;
            }
            if (!strcmp(a, "--config")) {
                if (take_json_lists(v, o, base, err, errlen) != 0)
                    return -1;
            } else
                snprintf(!strcmp(a, "--out") ? o->out : o->keep, sizeof o->out, "%s", v);
            i++;
            continue;
        }
        if (!strcmp(a, "--resume")) {
            o->resume = 1;
            continue;
        }
        pass[(*npass)++] = argv[i];
    }
    return 0;
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
            cap = cap ? cap * 2 : 64;
            keys = realloc(keys, (size_t)cap * sizeof *keys);
        }
        /* algo, ranks, n, density, (k), platform */
        char key[512];
        snprintf(key, sizeof key, "%s|%s|%s|%s|%s", fields[0], fields[1], fields[2], fields[3], fields[5]);
        keys[(*count)++] = strdup(key);
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

static void write_row(FILE *f, const sp_plan *p, cJSON *s, const char *status, double wall, double rss)
{
    char phases[2048] = "";
    if (s) {
        cJSON *its = cJSON_GetObjectItem(s, "iterations");
        cJSON *names = cJSON_GetObjectItem(s, "phases");
        int nit = cJSON_GetArraySize(its);
        cJSON *nm;
        cJSON_ArrayForEach(nm, names)
        {
            double t = 0;
            cJSON *it;
            cJSON_ArrayForEach(it, its)
            {
                cJSON *ph = cJSON_GetObjectItem(cJSON_GetObjectItem(it, "phases"), nm->valuestring);
                if (ph)
                    t += cJSON_GetObjectItem(ph, "time_s")->valuedouble / nit;
            }
            char one[160];
            snprintf(one, sizeof one, "%s%s:%.9g", phases[0] ? ";" : "", nm->valuestring, t);
            strncat(phases, one, sizeof phases - strlen(phases) - 1);
        }
    }
    fprintf(f, "%s,%d,%llu,%.10g,%.0f,%s,%s,%s,%d,%s,", p->algo, p->ranks, (unsigned long long)p->n, p->density,
            s ? sp_json_num(s, "k", NULL) : floor((double)p->n * p->density), p->platform, p->network, p->device,
            p->iters, s ? sp_json_str(s, "config", "payload") : "-");
    if (s) {
        fprintf(f, "%.9g,%.9g,%.0f,%.0f,%.0f,%.0f,%.0f,\"%s\",%.0f,%.6g,%.0f,%.9g,%.0f,", sp_json_num(s, "time_per_iter_s", "mean"),
                sp_json_num(s, "time_per_iter_s", "max"), sp_json_num(s, "ranks", "sent_bytes_mean"),
                sp_json_num(s, "ranks", "sent_bytes_max"), sp_json_num(s, "ranks", "recv_bytes_mean"),
                sp_json_num(s, "ranks", "recv_bytes_max"), sp_json_num(s, "volume", "bytes_per_iter_max"),
                sp_json_str(s, "bound", "formula"), sp_json_num(s, "bound", "bytes"), sp_json_num(s, "bound", "ratio"),
                sp_json_num(s, "bound", "lower_bytes"), sp_json_num(s, "prediction", "time_s"),
                sp_json_num(s, "messages", NULL));
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

int sp_cmd_sweep(int argc, char **argv)
{
    sweep_opts o;
    memset(&o, 0, sizeof o);
    split_list("all", &o.algos, "algo", NULL, 0);
    split_list("8,16,32,64", &o.ranks, "ranks", NULL, 0);
    split_list("65536", &o.ns, "n", NULL, 0);
    split_list("0.01", &o.densities, "density", NULL, 0);
    split_list("1gbe", &o.platforms, "platform", NULL, 0);
    snprintf(o.out, sizeof o.out, "sweep.csv");
    sp_plan base;
    sp_plan_defaults(&base);
    base.iters = 2;
    char err[600] = "";
    char **pass = calloc((size_t)argc + 1, sizeof *pass);
    int npass, help;
    if (parse_sweep_args(argc, argv, &o, &base, pass, &npass, &help, err, sizeof err) != 0 ||
        (!help && sp_plan_parse(&base, npass, pass, err, sizeof err) < 0)) {
        fprintf(stderr, "sparsim: %s\n", err);
        free(pass);
        return 2;
    }
    free(pass);
    if (help) {
        sweep_help();
        return 0;
    }
    if (o.algos.count == 1 && !strcmp(o.algos.items[0], "all")) {
        int n;
        const sp_algorithm *a = sp_algorithm_list(&n);
        o.algos.count = 0;
        for (int i = 0; i < n && i < MAX_LIST; i++)
            snprintf(o.algos.items[o.algos.count++], sizeof o.algos.items[0], "%s", a[i].name);
    }
    /* validate every combination's values before running anything */
    int total = o.algos.count * o.ranks.count * o.ns.count * o.densities.count * o.platforms.count;
    sp_plan *plans = calloc((size_t)total, sizeof *plans);
    int np = 0;
    for (int pl = 0; pl < o.platforms.count; pl++)
        for (int ni = 0; ni < o.ns.count; ni++)
            for (int di = 0; di < o.densities.count; di++)
                for (int ri = 0; ri < o.ranks.count; ri++)
                    for (int ai = 0; ai < o.algos.count; ai++) {
                        sp_plan p = base;
                        char *args[] = {"--algo", o.algos.items[ai], "--ranks", o.ranks.items[ri], "--n",
                                        o.ns.items[ni], "--density", o.densities.items[di], "--platform",
                                        o.platforms.items[pl]};
                        if (sp_plan_parse(&p, 10, args, err, sizeof err) != 0 ||
                            sp_plan_validate(&p, err, sizeof err) != 0) {
                            fprintf(stderr, "sparsim: %s\n", err);
                            free(plans);
                            return 2;
                        }
                        p.quiet = 1;
                        p.write_trace = 0;
                        p.write_csv = o.keep[0] != '\0';
                        plans[np++] = p;
                    }
    int ndone = 0, exists = 0;
    char **done = read_done(o.out, &ndone, &exists);
    if (exists == 2) {
        fprintf(stderr,
                "sparsim: %s is not a sweep CSV with this version's columns; choose another --out (it is left "
                "untouched)\n",
                o.out);
        free(plans);
        return 2;
    }
    if (exists && !o.resume) {
        fprintf(stderr, "sparsim: %s exists; add --resume to continue it, or choose another --out\n", o.out);
        free_done(done, ndone);
        free(plans);
        return 2;
    }
    FILE *csv = fopen(o.out, exists ? "a" : "w");
    if (!csv) {
        fprintf(stderr, "sparsim: cannot write %s: %s\n", o.out, strerror(errno));
        free_done(done, ndone);
        free(plans);
        return 2;
    }
    if (!exists) {
        fprintf(csv, SWEEP_HEADER "\n");
        fflush(csv);
    }
    char tmpl[1100] = "";
    if (!o.keep[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(tmpl, sizeof tmpl, "%s/sparsim-sweep-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(tmpl)) {
            fprintf(stderr, "sparsim: cannot create a temporary folder: %s\n", strerror(errno));
            fclose(csv);
            free_done(done, ndone);
            free(plans);
            return 1;
        }
    } else if (sp_mkdirs(o.keep, err, sizeof err) != 0) {
        fprintf(stderr, "sparsim: %s\n", err);
        fclose(csv);
        free_done(done, ndone);
        free(plans);
        return 2;
    }
    sp_cli_on_interrupt(remove_on_interrupt, tmpl[0] ? tmpl : NULL);
    double t0 = now_s();
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
        double w0 = now_s(), rss = -1;
        cJSON *s;
        int rc = run_and_read(p, &s, &rss);
        char status[64];
        snprintf(status, sizeof status, rc == 0 ? "ok" : rc == 2 ? "bad-input" : "failed");
        write_row(csv, p, s, status, now_s() - w0, rss);
        cJSON_Delete(s);
        if (!o.keep[0])
            remove_run_dir(p->out);
        ran++;
        failed += rc != 0;
        progress(i + 1, np, t0);
    }
    fclose(csv);
    if (tmpl[0])
        rmdir(tmpl);
    free_done(done, ndone);
    free(plans);
    char took[32];
    fmt_duration(took, sizeof took, now_s() - t0);
    printf("sweep: %d runs (%d failed), %d already in %s; %s\n", ran, failed, skipped, o.out, took);
    return failed ? 1 : 0;
}

/* ---- crossover ------------------------------------------------------------ */

typedef struct {
    char algo[64];
    int ranks;
    double t; /* seconds per iteration; < 0 when the run failed */
} eval_entry;

typedef struct {
    eval_entry *e;
    int n, cap;
    sp_plan base;
    char dir[1100];
} evaluator;

static double eval_time(evaluator *ev, const char *algo, int P)
{
    for (int i = 0; i < ev->n; i++)
        if (ev->e[i].ranks == P && !strcmp(ev->e[i].algo, algo))
            return ev->e[i].t;
    sp_plan p = ev->base;
    snprintf(p.algo, sizeof p.algo, "%s", algo);
    p.ranks = P;
    p.quiet = 1;
    p.write_csv = p.write_trace = 0;
    snprintf(p.out, sizeof p.out, "%.900s/%.63s-%d", ev->dir, algo, P);
    cJSON *s;
    double t = -1;
    if (run_and_read(&p, &s, NULL) == 0)
        t = sp_json_num(s, "time_per_iter_s", "mean");
    cJSON_Delete(s);
    remove_run_dir(p.out);
    if (ev->n == ev->cap) {
        ev->cap = ev->cap ? 2 * ev->cap : 64;
        ev->e = realloc(ev->e, (size_t)ev->cap * sizeof *ev->e);
    }
    snprintf(ev->e[ev->n].algo, sizeof ev->e[0].algo, "%s", algo);
    ev->e[ev->n].ranks = P;
    ev->e[ev->n++].t = t;
    return t;
}

/* the fastest dense allreduce at P; its name in *which */
static double dense_time(evaluator *ev, const str_list *dense, int P, const char **which)
{
    double best = -1;
    for (int i = 0; i < dense->count; i++) {
        double t = eval_time(ev, dense->items[i], P);
        if (t >= 0 && (best < 0 || t < best)) {
            best = t;
            *which = dense->items[i];
        }
    }
    return best;
}

/* Past a loss at grid point `from` (P doubling from --min-ranks, capped at
 * --max-ranks), the first grid point where the sparse algorithm wins again:
 * a crossover need not be the last (on daint, dense allreduces slow down
 * more than some sparse ones once ranks span two dragonfly groups).
 * 0 if none, -1 if a run failed. */
static int win_again(evaluator *ev, const str_list *dense, const char *algo, int from, int maxP, double *ts,
                     double *td, const char **dw)
{
    for (int P = from; P < maxP;) {
        P = P * 2 > maxP ? maxP : P * 2;
        *ts = eval_time(ev, algo, P);
        *td = dense_time(ev, dense, P, dw);
        if (*ts < 0 || *td < 0)
            return -1;
        if (*ts < *td)
            return P;
    }
    return 0;
}

/* prints the line for win_again(); returns 1 if a run failed */
static int report_win_again(evaluator *ev, const str_list *dense, const char *algo, int from, int maxP)
{
    double ts = 0, td = 0;
    const char *dw = "-";
    int P = win_again(ev, dense, algo, from, maxP, &ts, &td, &dw);
    if (P < 0) {
        printf("  %-10s runs failed past P = %d (see the error above)\n", "", from);
        return 1;
    }
    if (P > 0)
        printf("  %-10s but wins again at P = %d: %.6g s vs %s %.6g s (doubling up to %d)\n", "", P, ts, dw, td,
               maxP);
    return 0;
}

static void crossover_help(void)
{
    printf("usage: sparsim crossover [options]\n"
           "\n"
           "For one platform, n and density, finds the rank count at which each sparse\n"
           "algorithm stops beating the fastest dense allreduce: P doubles from --min-ranks\n"
           "until the sparse algorithm is no faster, then bisection between the last two.\n"
           "Doubling then goes on to --max-ranks, and a later P where the sparse algorithm\n"
           "wins again is reported too.\n"
           "\n"
           "  --algo LIST       sparse algorithms (default: topka,gtopk,gaussiank,topkdsa,oktopk)\n"
           "  --dense LIST      dense algorithms to beat (default: ring,rabenseifner,recdoubling)\n"
           "  --min-ranks P     first rank count (default: 2)\n"
           "  --max-ranks P     last rank count tried (default: 512)\n"
           "  any option of 'sparsim run' for the runs (--platform, --n, --density,\n"
           "  --network, --device, --iters, ...; default --iters 2)\n");
}

int sp_cmd_crossover(int argc, char **argv)
{
    str_list sparse, dense;
    split_list("topka,gtopk,gaussiank,topkdsa,oktopk", &sparse, "algo", NULL, 0);
    split_list("ring,rabenseifner,recdoubling", &dense, "dense", NULL, 0);
    int minP = 2, maxP = 512;
    evaluator ev;
    memset(&ev, 0, sizeof ev);
    sp_plan_defaults(&ev.base);
    ev.base.iters = 2;
    char err[600] = "";
    char **pass = calloc((size_t)argc + 1, sizeof *pass);
    int npass = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            free(pass);
            crossover_help();
            return 0;
        }
        if (!strcmp(a, "--algo") || !strcmp(a, "--dense") || !strcmp(a, "--min-ranks") || !strcmp(a, "--max-ranks")) {
            if (!v) {
                fprintf(stderr, "sparsim: %s needs a value\n", a);
                free(pass);
                return 2;
            }
            if (!strcmp(a, "--algo") || !strcmp(a, "--dense")) {
                if (split_list(v, !strcmp(a, "--algo") ? &sparse : &dense, a + 2, err, sizeof err) != 0) {
                    fprintf(stderr, "sparsim: %s\n", err);
                    free(pass);
                    return 2;
                }
            } else {
                char *end;
                long x = strtol(v, &end, 10);
                if (*end || x < 1 || x > 30000) {
                    fprintf(stderr, "sparsim: %s must be an integer in 1..30000, got '%s'\n", a, v);
                    free(pass);
                    return 2;
                }
                *(!strcmp(a, "--min-ranks") ? &minP : &maxP) = (int)x;
            }
            i++;
            continue;
        }
        pass[npass++] = argv[i];
    }
    int rc = sp_plan_parse(&ev.base, npass, pass, err, sizeof err);
    free(pass);
    if (rc < 0 || sp_plan_validate(&ev.base, err, sizeof err) != 0) {
        fprintf(stderr, "sparsim: %s\n", err);
        return 2;
    }
    for (int pass2 = 0; pass2 < 2; pass2++) {
        str_list *l = pass2 ? &dense : &sparse;
        for (int i = 0; i < l->count; i++)
            if (!sp_algorithm_find(l->items[i])) {
                fprintf(stderr, "sparsim: unknown algorithm '%s'\n", l->items[i]);
                return 2;
            }
    }
    if (minP > maxP) {
        fprintf(stderr, "sparsim: --min-ranks is above --max-ranks\n");
        return 2;
    }
    const char *t = getenv("TMPDIR");
    snprintf(ev.dir, sizeof ev.dir, "%s/sparsim-crossover-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(ev.dir)) {
        fprintf(stderr, "sparsim: cannot create a temporary folder\n");
        return 1;
    }
    sp_cli_on_interrupt(remove_on_interrupt, ev.dir);
    printf("crossover on %s (%s network, device %s), n = %llu, density %g, %d iteration%s per run\n",
           ev.base.platform, ev.base.network, ev.base.device, (unsigned long long)ev.base.n, ev.base.density,
           ev.base.iters, ev.base.iters == 1 ? "" : "s");
    int status = 0;
    for (int a = 0; a < sparse.count; a++) {
        const char *algo = sparse.items[a], *dw = "-", *dw2 = "-";
        int lo = 0, hi = 0, failed = 0;
        for (int P = minP; P <= maxP; P = P * 2 > maxP && P < maxP ? maxP : P * 2) {
            double ts = eval_time(&ev, algo, P), td = dense_time(&ev, &dense, P, &dw);
            if (ts < 0 || td < 0) {
                failed = P;
                break;
            }
            if (ts >= td) {
                hi = P;
                break;
            }
            lo = P;
            if (P == maxP)
                break;
        }
        if (failed) {
            printf("  %-10s runs failed at P = %d (see the error above)\n", algo, failed);
            status = 1;
            continue;
        }
        if (!hi) {
            printf("  %-10s beats dense at every P from %d to %d (at %d: %.6g s vs %s %.6g s)\n", algo, minP, maxP,
                   maxP, eval_time(&ev, algo, maxP), dw, dense_time(&ev, &dense, maxP, &dw));
            continue;
        }
        int grid_hi = hi;
        if (!lo) {
            printf("  %-10s no faster than dense already at P = %d (%.6g s vs %s %.6g s)\n", algo, hi,
                   eval_time(&ev, algo, hi), dw, dense_time(&ev, &dense, hi, &dw));
            status |= report_win_again(&ev, &dense, algo, grid_hi, maxP);
            continue;
        }
        while (hi - lo > 1) {
            int mid = lo + (hi - lo) / 2;
            double ts = eval_time(&ev, algo, mid), td = dense_time(&ev, &dense, mid, &dw);
            if (ts < 0 || td < 0) {
                failed = mid;
                break;
            }
            if (ts >= td)
                hi = mid;
            else
                lo = mid;
        }
        if (failed) {
            printf("  %-10s runs failed at P = %d\n", algo, failed);
            status = 1;
            continue;
        }
        double tl = eval_time(&ev, algo, lo), dl = dense_time(&ev, &dense, lo, &dw2);
        double th = eval_time(&ev, algo, hi), dh = dense_time(&ev, &dense, hi, &dw);
        printf("  %-10s stops beating dense at P = %d: P = %d %.6g s vs %s %.6g s; P = %d %.6g s vs %s %.6g s\n",
               algo, hi, lo, tl, dw2, dl, hi, th, dw, dh);
        status |= report_win_again(&ev, &dense, algo, grid_hi, maxP);
    }
    rmdir(ev.dir);
    free(ev.e);
    return status;
}
