/* workload_cmd.c - `sparsim workload-stats` and `sparsim profile`: what a
 * gradient source looks like, and the profile that reproduces it.
 *
 * The source is a recorded trace (--grad-file) or the generator on a profile
 * (--workload and the gradient options of `sparsim run`, --ranks and
 * --iters).  workload-stats prints the statistics that decide sparse
 * volumes (analysis/workload_stats.c) as a table, and as JSON with --json;
 * with --model, beside them the model's prediction of the union of the
 * ranks' top-k sets.  profile fits a profile (sim/workload/fit.c) and writes
 * it as JSON, for --workload.
 */
#include "cli.h"
#include "analysis/workload_stats.h"
#include "traces/trace.h"
#include "sim/workload/fit.h"
#include "sim/workload/generator.h"
#include "sim/workload/model.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int tau_prime, max_iters, model, bins, match, as_is;
    char json[1024], out[1024];
    unsigned char given[8];
} wl_opts;

#define W(field) .offset = offsetof(wl_opts, field), .size = sizeof(((wl_opts *)0)->field)

static const sp_opt stats_rows[] = {
    {.name = "tau-prime", .type = SP_OT_INT, W(tau_prime), .min = 2, .max = 1e6, .dflt = "32", .metavar = "T",
     .help = "iterations a threshold is reused for, in the drift statistic"},
    {.name = "max-iters", .type = SP_OT_INT, W(max_iters), .min = 0, .max = 1e6, .dflt = "0", .metavar = "I",
     .help = "use at most I iterations of the source (0: all)"},
    {.name = "json", .type = SP_OT_STRING, W(json), .dflt = "", .metavar = "FILE",
     .help = "also write the statistics as JSON"},
    {.name = "model", .type = SP_OT_BOOL, W(model), .dflt = "false",
     .help = "also the model's union of the ranks' top-k sets (generator sources)"},
};

static const sp_opt profile_rows[] = {
    {.name = "out", .type = SP_OT_STRING, W(out), .dflt = "", .metavar = "FILE",
     .help = "the profile JSON to write (required)"},
    {.name = "max-iters", .type = SP_OT_INT, W(max_iters), .min = 0, .max = 1e6, .dflt = "0", .metavar = "I",
     .help = "use at most I iterations of the source (0: all)"},
    {.name = "match", .type = SP_OT_INT, W(match), .min = 0, .max = 100, .dflt = "0", .metavar = "R",
     .help = "then refine the global knobs for up to R rounds, until the generator's statistics come closest to the "
     "source's (each round runs the generator and its statistics a few times; minutes)"},
    {.name = "bins", .type = SP_OT_INT, W(bins), .min = 0, .max = 1e6, .dflt = "256", .metavar = "B",
     .help = "fit layers larger than n/B in pieces of their own, where large entries may not spread evenly (0: whole "
     "layers)"},
    {.name = "as-is", .type = SP_OT_BOOL, W(as_is), .dflt = "false",
     .help = "write the --workload profile itself (a built-in one, with its layer table and where its numbers come "
     "from, or a file, scaled to --n when given) instead of fitting one"},
};

/* the source: --grad-file's trace, or the generator on the plan's profile */
static sp_grad_source *open_source(const sp_plan *p, sp_profile *prof, int *have_prof, char *err, size_t errlen)
{
    *have_prof = 0;
    if (p->grad_file[0])
        return sp_trace_open(p->grad_file, err, errlen);
    if (sp_plan_profile(p, prof, err, errlen) != 0)
        return NULL;
    *have_prof = 1;
    return sp_generator_source(prof, p->seed, p->ranks, p->iters, err, errlen);
}

/* the options of both commands: their own table, then those of `sparsim run` */
static int parse(const sp_opt_table *t, wl_opts *o, sp_plan *p, int argc, char **argv, char *err, size_t errlen)
{
    char **pass = calloc((size_t)argc + 1, sizeof *pass);
    int npass = 0;
    if (!pass) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = sp_opts_parse_argv(t, o, o->given, argc, argv, pass, &npass, err, errlen);
    if (rc == 0)
        rc = sp_plan_parse(p, npass, pass, err, errlen);
    free(pass);
    if (rc == 0 && p->grad_live >= 0) {
        snprintf(err, errlen, "--grad-live feeds one run from a trainer (sparsim run); record a trace for --grad-file");
        return -1;
    }
    if (rc == 0 && !p->grad_file[0] && sp_plan_validate(p, err, errlen) != 0)
        rc = -1;
    return rc;
}

/* both commands' defaults: their own table's, and P = 8 over 32 iterations
 * of the generator (the recorded traces' size) */
static void defaults(const sp_opt_table *t, wl_opts *o, sp_plan *p)
{
    memset(o, 0, sizeof *o);
    sp_opts_defaults(t, o);
    sp_plan_defaults(p);
    p->ranks = 8;
    p->iters = 32;
}

static int is_help(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return 1;
    return 0;
}

int sp_cmd_workload_stats(int argc, char **argv)
{
    const sp_opt_table t = SP_OPT_TABLE(stats_rows);
    if (is_help(argc, argv)) {
        printf("usage: sparsim workload-stats [--grad-file TRACE | --workload NAME ...] [options]\n"
               "\n"
               "The statistics of a gradient source that decide sparse-allreduce volumes: tails,\n"
               "exact zeros, the union of the ranks' top-k sets, region imbalance, Jaccard and\n"
               "cosine across ranks and iterations, and how a reused threshold drifts under\n"
               "error feedback.  The source is a recorded trace (--grad-file) or the generator\n"
               "(--workload, --n, --seed and the --grad-* options of sparsim run), with --ranks\n"
               "ranks, --iters iterations and --density.\n\n");
        sp_opts_help(&t, stdout);
        return 0;
    }
    wl_opts o;
    sp_plan p;
    defaults(&t, &o, &p);
    char err[1400] = "";
    sp_profile prof;
    int have_prof = 0, rc = 2;
    sp_wstats st;
    memset(&st, 0, sizeof st);
    sp_grad_source *src = NULL;
    if (parse(&t, &o, &p, argc, argv, err, sizeof err) != 0)
        goto out;
    if (o.json[0] && sp_opts_output_ok(o.json, 0, "--json", err, sizeof err) != 0)
        goto out;
    if (!(src = open_source(&p, &prof, &have_prof, err, sizeof err)))
        goto out;
    int P = sp_plan_given(&p, "ranks") || !p.grad_file[0] ? p.ranks : src->ranks;
    if (P > src->ranks) {
        snprintf(err, sizeof err, "the source has %d ranks, --ranks asks for %d", src->ranks, P);
        goto out;
    }
    sp_wstats_opts so = {p.density, P, o.tau_prime, o.max_iters};
    rc = 1;
    if (sp_wstats_compute(src, &so, &st, err, sizeof err) != 0)
        goto out;
    sp_wstats_print(&st, stdout);
    cJSON *j = sp_wstats_json(&st);
    if (o.model && have_prof) {
        sp_model *m = sp_model_new(&prof, p.seed, P, 0, 0, p.density, SP_MODEL_FULL, err, sizeof err);
        if (!m)
            goto out;
        printf("union of the local top-k sets over k, the model (cold, one iteration):\n");
        cJSON *arr = cJSON_CreateArray();
        for (int i = 0; i < st.nunion; i++) {
            double u = sp_model_union_over_k(m, st.union_p[i], st.k);
            printf("  P = %-5d %8.3f (gradients: %.3f, model/gradients %.3f)\n", st.union_p[i], u, st.union_over_k[i],
                   u / st.union_over_k[i]);
            cJSON_AddItemToArray(arr, cJSON_CreateNumber(u));
        }
        if (j)
            cJSON_AddItemToObject(j, "model_union_over_k", arr);
        else
            cJSON_Delete(arr);
        sp_model_free(m);
    }
    if (o.json[0] && sp_json_write(o.json, j, err, sizeof err) != 0) {
        cJSON_Delete(j);
        goto out;
    }
    cJSON_Delete(j);
    rc = 0;
out:
    if (rc && err[0])
        sp_opts_print_error(err);
    sp_wstats_free(&st);
    if (src)
        src->close(src);
    if (have_prof)
        sp_profile_free(&prof);
    return rc;
}

int sp_cmd_profile(int argc, char **argv)
{
    const sp_opt_table t = SP_OPT_TABLE(profile_rows);
    if (is_help(argc, argv)) {
        printf("usage: sparsim profile --out FILE.json [--grad-file TRACE | --workload NAME ...] [options]\n"
               "\n"
               "Fits a workload profile (per-layer scales, their spread within the layer, exact\n"
               "zeros; the share common to the ranks; how the overall scale drifts; how long a\n"
               "coordinate's scale persists) to a gradient source, and writes it as JSON for\n"
               "--workload FILE.json.  The source is a recorded trace (--grad-file) or the\n"
               "generator (--workload and the --grad-* options of sparsim run, --ranks, --iters).\n\n");
        sp_opts_help(&t, stdout);
        return 0;
    }
    wl_opts o;
    sp_plan p;
    defaults(&t, &o, &p);
    char err[1400] = "";
    sp_profile prof, fit;
    memset(&fit, 0, sizeof fit);
    int have_prof = 0, rc = 2;
    sp_grad_source *src = NULL;
    if (parse(&t, &o, &p, argc, argv, err, sizeof err) != 0)
        goto out;
    if (!o.out[0]) {
        snprintf(err, sizeof err, "--out must name the profile to write");
        goto out;
    }
    if (sp_opts_output_ok(o.out, 0, "--out", err, sizeof err) != 0)
        goto out;
    if (o.as_is) {
        if (p.grad_file[0]) {
            snprintf(err, sizeof err, "--as-is writes a workload's profile; a gradient file has none (fit one)");
            goto out;
        }
        if (sp_plan_profile(&p, &fit, err, sizeof err) != 0)
            goto out;
    } else {
        if (!(src = open_source(&p, &prof, &have_prof, err, sizeof err)))
            goto out;
        rc = 1;
        if (sp_profile_fit(src, o.max_iters, p.density, o.bins, &fit, err, sizeof err) != 0)
            goto out;
    }
    rc = 1;
    if (o.match > 0 && src) {
        sp_wstats target;
        int P = src->ranks < 8 ? src->ranks : 8;
        sp_wstats_opts so = {p.density, P, 32, o.max_iters};
        if (sp_wstats_compute(src, &so, &target, err, sizeof err) != 0)
            goto out;
        int iters = target.iters;
        so.max_iters = 0;
        int mrc = sp_profile_match(&target, &so, iters, p.seed, o.match, &fit, stderr, err, sizeof err);
        sp_wstats_free(&target);
        if (mrc != 0)
            goto out;
    }
    sp_part_file pf;
    if (sp_part_open(&pf, o.out, err, sizeof err) != 0)
        goto out;
    int ok = sp_profile_write(&fit, pf.f) == 0;
    if (sp_part_close(&pf, ok, err, sizeof err) != 0 || !ok) {
        if (!err[0])
            snprintf(err, sizeof err, "cannot write %s", o.out);
        goto out;
    }
    printf("profile of %d layer(s), n = %llu: common %.3f, mean %.3f, scale sd %.3f corr %.3f, refresh %.1f; "
           "written to %s\n",
           fit.nlayers, (unsigned long long)fit.n, fit.common, fit.mean, fit.scale_sd, fit.scale_corr, fit.refresh,
           o.out);
    rc = 0;
out:
    if (rc && err[0])
        sp_opts_print_error(err);
    sp_profile_free(&fit);
    if (src)
        src->close(src);
    if (have_prof)
        sp_profile_free(&prof);
    return rc;
}
