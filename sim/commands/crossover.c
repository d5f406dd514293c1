/* crossover.c - `sparsim crossover`: for one platform, n and density, the
 * rank count at which each sparse algorithm stops beating the fastest dense
 * allreduce: doubling P until it loses, then bisection between the last two;
 * then doubling on, to report a later P where it wins again.
 */
#include "cli.h"
#include "algorithms/algorithm.h"
#include "traces/summary_keys.h"
#include "traces/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* a signal ended the command during `run`: its folder and the search's
 * temporary folder go */
static void remove_on_interrupt(const sp_plan *run, void *tmp)
{
    sp_cli_remove_run_dir(run->out);
    if (tmp)
        rmdir((const char *)tmp);
}


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

/* Ok-Topk (and its node-aware forms) recomputes its thresholds exactly
 * every tau' iterations and reuses them in between: a run of a few
 * iterations starts with a recompute, so its mean would price the recompute
 * far more often than a training does.  Its time per iteration is taken at
 * its steady state, (t_recompute + (tau' - 1) t_reuse) / tau', from the
 * run's iterations of each kind (bench/papers.py and the crossover map take
 * it so).  Other algorithms: the mean.  < 0 when the run has no reuse. */
static double oktopk_steady(const cJSON *s, int tau_prime)
{
    const cJSON *its = cJSON_GetObjectItemCaseSensitive(s, SPK_ITERATIONS);
    double re = 0, reuse = 0;
    int nre = 0, nreuse = 0;
    for (int i = 0; i < cJSON_GetArraySize(its); i++) {
        const cJSON *it = cJSON_GetArrayItem(its, i);
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(it, SPK_ITER), *t = cJSON_GetObjectItemCaseSensitive(it, SPK_TIME);
        if (!cJSON_IsNumber(k) || !cJSON_IsNumber(t))
            return -1;
        if (i == 0 || k->valueint % tau_prime == 0) {
            re += t->valuedouble;
            nre++;
        } else {
            reuse += t->valuedouble;
            nreuse++;
        }
    }
    if (!nre || !nreuse)
        return -1;
    return (re / nre + (tau_prime - 1) * (reuse / nreuse)) / tau_prime;
}

static int is_oktopk(const char *algo)
{
    const char *inner = algo;
    sp_algorithm_form_of(algo, &inner);
    return inner && !strcmp(inner, "oktopk");
}

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
    if (sp_cli_run_and_read(&p, &s, NULL) == 0) {
        t = sp_json_num(s, SPK_TIME_PER_ITER, SPK_MEAN);
        double steady = is_oktopk(algo) ? oktopk_steady(s, sp_plan_algo_opts(&p).tau_prime) : -1;
        if (steady >= 0)
            t = steady;
    }
    cJSON_Delete(s);
    sp_cli_remove_run_dir(p.out);
    if (ev->n == ev->cap) {
        int cap = ev->cap ? 2 * ev->cap : 64;
        eval_entry *e = realloc(ev->e, (size_t)cap * sizeof *e);
        if (!e)
            return t; /* not remembered: it would run again if asked again */
        ev->e = e;
        ev->cap = cap;
    }
    snprintf(ev->e[ev->n].algo, sizeof ev->e[0].algo, "%s", algo);
    ev->e[ev->n].ranks = P;
    ev->e[ev->n++].t = t;
    return t;
}

/* the fastest dense allreduce at P; its name in *which */
static double dense_time(evaluator *ev, const sp_cli_list *dense, int P, const char **which)
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
static int win_again(evaluator *ev, const sp_cli_list *dense, const char *algo, int from, int maxP, double *ts,
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
static int report_win_again(evaluator *ev, const sp_cli_list *dense, const char *algo, int from, int maxP)
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

/* the registry's dense algorithms, "a, b, c" */
static void dense_names(char *out, size_t len)
{
    int n, w = 0;
    const sp_algorithm *a = sp_algorithm_list(&n);
    out[0] = '\0';
    for (int i = 0; i < n; i++)
        if (a[i].cls == SP_ALGO_DENSE && w >= 0 && (size_t)w < len)
            w += snprintf(out + w, len - (size_t)w, "%s%s", w ? ", " : "", a[i].name);
}

/* an algorithm of --dense (dense: 1) must be a dense allreduce, one of
 * --algo must not be: 0, or -1 with the line that says so */
static int check_class(const char *name, int dense, char *err, size_t errlen)
{
    const sp_algorithm *a = sp_algorithm_find(name);
    char shown[100], names[300];
    sp_opts_printable(name, shown, sizeof shown);
    if (!a) {
        snprintf(err, errlen, "unknown algorithm '%s'", shown);
        return -1;
    }
    if (dense && a->cls != SP_ALGO_DENSE) {
        dense_names(names, sizeof names);
        snprintf(err, errlen, "--dense takes dense allreduces only (%s): '%s' is %s", names, shown,
                 sp_algo_class_name(a->cls));
        return -1;
    }
    if (!dense && a->cls == SP_ALGO_DENSE) {
        snprintf(err, errlen, "--algo takes the algorithms to hold against dense ones, not a dense allreduce: "
                              "'%s' is dense (give it to --dense)", shown);
        return -1;
    }
    return 0;
}

typedef struct {
    char algo[4096], dense[4096];
    int min_ranks, max_ranks, iters;
    unsigned char given[8];
} crossover_opts;

#define X(field) .offset = offsetof(crossover_opts, field), .size = sizeof(((crossover_opts *)0)->field)

static const sp_opt crossover_rows[] = {
    {.name = "algo", .type = SP_OT_STRING, X(algo), .dflt = "topka,gtopk,gaussiank,topkdsa,oktopk",
     .flags = SP_OPT_LIST, .metavar = "LIST",
     .help = "sparse algorithms"},
    {.name = "dense", .type = SP_OT_STRING, X(dense), .dflt = "ring,rabenseifner,recdoubling", .flags = SP_OPT_LIST,
     .metavar = "LIST",
     .help = "dense algorithms to beat"},
    {.name = "min-ranks", .type = SP_OT_INT, X(min_ranks), .min = 1, .max = SP_MAX_RANKS, .dflt = "2", .metavar = "P",
     .help = "first rank count"},
    {.name = "max-ranks", .type = SP_OT_INT, X(max_ranks), .min = 1, .max = SP_MAX_RANKS, .dflt = "512",
     .metavar = "P",
     .help = "last rank count tried"},
    {.name = "iters", .type = SP_OT_INT, X(iters), .min = 1, .max = 1e6, .dflt = "2", .metavar = "I",
     .help = "iterations of every run"},
};

static const sp_opt_table crossover_table = SP_OPT_TABLE(crossover_rows);

static void crossover_help(void)
{
    printf("usage: sparsim crossover [options]\n"
           "\n"
           "For one platform, n and density, finds the rank count at which each sparse\n"
           "algorithm stops beating the fastest dense allreduce: P doubles from --min-ranks\n"
           "until the sparse algorithm is no faster, then bisection between the last two.\n"
           "Doubling then goes on to --max-ranks, and a later P where the sparse algorithm\n"
           "wins again is reported too.  Times are the mean over a run's iterations, but\n"
           "Ok-Topk's (and its node-aware forms'), taken at their steady state: one exact\n"
           "recompute of its thresholds and tau' - 1 reuses, (t0 + (tau' - 1) t1) / tau'.\n"
           "\n");
    sp_opts_help(&crossover_table, stdout);
    printf("  any option of 'sparsim run' for the runs (--platform, --n, --density,\n"
           "  --network, --device, ...)\n");
}

int sp_cmd_crossover(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            crossover_help();
            return 0;
        }
    crossover_opts o;
    memset(&o, 0, sizeof o);
    sp_opts_defaults(&crossover_table, &o);
    evaluator ev;
    memset(&ev, 0, sizeof ev);
    sp_plan_defaults(&ev.base);
    char err[600] = "";
    char **pass = calloc((size_t)argc + 1, sizeof *pass);
    int npass = 0;
    if (!pass) {
        fprintf(stderr, "sparsim: out of memory\n");
        return 1;
    }
    int rc = sp_opts_parse_argv(&crossover_table, &o, o.given, argc, argv, pass, &npass, err, sizeof err);
    if (rc == 0)
        rc = sp_plan_parse(&ev.base, npass, pass, err, sizeof err);
    free(pass);
    if (rc == 0 && ev.base.grad_live >= 0) {
        snprintf(err, sizeof err, "--grad-live feeds one run from a trainer (sparsim run), not a crossover search");
        rc = -1;
    }
    ev.base.iters = o.iters;
    sp_cli_list sparse, dense;
    if (rc != 0 || sp_plan_validate(&ev.base, err, sizeof err) != 0 ||
        sp_cli_split(o.algo, &sparse, "algo", err, sizeof err) != 0 ||
        sp_cli_split(o.dense, &dense, "dense", err, sizeof err) != 0) {
        sp_opts_print_error(err);
        return 2;
    }
    int minP = o.min_ranks, maxP = o.max_ranks;
    for (int pass2 = 0; pass2 < 2; pass2++) {
        sp_cli_list *l = pass2 ? &dense : &sparse;
        for (int i = 0; i < l->count; i++)
            if (check_class(l->items[i], pass2, err, sizeof err) != 0) {
                sp_opts_print_error(err);
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
    int tau_prime = 0; /* Ok-Topk among the sparse algorithms: said on the first line */
    for (int a = 0; a < sparse.count && !tau_prime; a++)
        if (is_oktopk(sparse.items[a]))
            tau_prime = sp_plan_algo_opts(&ev.base).tau_prime;
    printf("crossover on %s (%s network, device %s), n = %llu, density %g, %d iteration%s per run", ev.base.platform,
           ev.base.network, ev.base.device, (unsigned long long)ev.base.n, ev.base.density, ev.base.iters,
           ev.base.iters == 1 ? "" : "s");
    if (tau_prime)
        printf("; Ok-Topk at its steady state over tau' = %d", tau_prime);
    printf("\n");
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
