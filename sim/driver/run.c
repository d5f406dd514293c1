/* run.c - the run driver: a resolved plan in, P ranks of one algorithm,
 * report out.
 *
 * The plan comes resolved (resolve.c: algorithm, device, payload, data); the
 * run opens the writers and the accounting, lets the backend start the
 * ranks, and each rank runs rank_main: per iteration the gradient added to
 * the residual, a free synchronisation (as the reference codes' barrier after
 * each allreduce), then the algorithm.  After the ranks: the undisturbed
 * baseline, the writers closed, the analysis, the summary.  Everything the
 * run keeps is in one sp_runstate; every failure fills one sp_error with the
 * status it asks for.
 */
#include "run.h"
#include <cjson/cJSON.h>
#include "accounting.h"
#include "select_device.h"
#include "progress.h"
#include "training.h"
#include "wall_profile.h"
#include "sim/shim/backend.h"
#include "sim/workload/generator.h"
#include "sim/workload/model.h"
#include "topologies/platform.h"
#include "algorithms/select.h"
#include "analysis/bounds.h"
#include "traces/gradients.h"
#include "traces/npy.h"

#include <errno.h>
#include <float.h>
#ifndef SPARSIM_SMPI /* SMPI's own allocator stands in for malloc there */
#include <malloc.h>
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Everything one run keeps. */
typedef struct {
    const sp_resolved *res;
    const sp_plan *plan; /* &res->plan: the effective plan */
    sp_report *rep;
    sp_shim shim;
    int first_result_rank;
    int books_open; /* the iteration whose figures await every rank, or -1 */
} sp_runstate;

/* Exact runs allocate and free per-iteration buffers of megabytes (gradients,
 * selections, gathered pairs, receive buffers), per rank.  glibc serves
 * blocks over its mmap threshold (dynamic, at most 32 MiB) with fresh
 * mappings and gives the heap's free top back past its trim threshold, so
 * each iteration faulted its buffers in anew: Gaussian-k at P = 16, n = 512K,
 * 40 iterations took 998k page faults and 17.6 s, of which 6.9 s in the
 * kernel; with blocks up to 64 MiB kept in the heap and its top never given
 * back, 75k faults and 5.3 s.  Blocks over 64 MiB (a full-size model's
 * gradient) are still mappings of their own.  The cost is the gaps blocks
 * leave in the heap, where fresh mappings went back exactly: exact runs at
 * P = 64, n = 4M peak up to 18% higher (bench/README.md, section 29); what
 * the heap keeps goes back when the run's process ends. */
void sp_run_keep_freed_memory(void)
{
#ifndef SPARSIM_SMPI
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, -1); /* never trim (mallopt(3)) */
#endif
}

int sp_mkdirs(const char *path, char *err, size_t errlen)
{
    char buf[1100];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        snprintf(err, errlen, "folder name too long: %.100s...", path);
        return -1;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
                snprintf(err, errlen, "cannot create folder %s: %s", buf, strerror(errno));
                return -1;
            }
            *p = '/';
        }
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create folder %s: %s", buf, strerror(errno));
        return -1;
    }
    struct stat st;
    if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s exists and is not a folder", buf);
        return -1;
    }
    return 0;
}

/* acc += this rank's gradient of run iteration `it` (after the settling ones) */
static void add_gradient(sp_runstate *rs, const sp_ctx *c, int it, float *acc)
{
    char err[300];
    if (rs->res->source->fill(rs->res->source, rs->plan->settle + it, c->rank, acc, 1, err, sizeof err) != 0)
        sp_fail(&rs->shim, "%s", err);
}

/* --settle: iterations of local error feedback before the first simulated
 * one (each rank consumes its exact top-k), all ranks in step so that the
 * generator's shared part is computed once per iteration */
static void settle(sp_runstate *rs, sp_ctx *c, float *acc, sp_pair *top)
{
    for (int s = 0; s < rs->plan->settle && !rs->shim.failed; s++) {
        char err[300];
        if (rs->res->source->fill(rs->res->source, s, c->rank, acc, 1, err, sizeof err) != 0) {
            sp_fail(&rs->shim, "%s", err);
            break;
        }
        uint64_t m = sp_topk_exact(acc, rs->plan->n, rs->rep->k, top);
        for (uint64_t j = 0; j < m; j++)
            acc[top[j].idx] = 0.0f;
        sp_shim_sync(c, NULL, NULL);
    }
}

/* the free synchronisation between iterations; once every rank has
 * arrived, the books of the iteration they finished are closed */
static void close_books(void *arg)
{
    sp_runstate *rs = arg;
    if (rs->books_open >= 0)
        rs->shim.sink.iteration_done(rs->shim.sink.to, rs->books_open);
    rs->books_open = -1;
}

static void sync_ranks(sp_runstate *rs, sp_ctx *c, int done)
{
    rs->books_open = done;
    sp_shim_sync(c, close_books, rs);
}

/* the last iteration's result must be the same on every rank */
static void check_result(sp_runstate *rs, const sp_ctx *c, const float *result)
{
    sp_report *rep = rs->rep;
    size_t bytes = rep->n * sizeof *result;
    if (!rep->result) {
        rep->result = malloc(bytes);
        if (!rep->result) {
            sp_fail(&rs->shim, "out of memory for the result");
            return;
        }
        memcpy(rep->result, result, bytes);
        rs->first_result_rank = c->rank;
    } else if (memcmp(rep->result, result, bytes) != 0) {
        sp_fail(&rs->shim, "ranks %d and %d disagree on the global result", rs->first_result_rank, c->rank);
    }
}

static void rank_main(sp_ctx *c, void *arg)
{
    sp_runstate *rs = arg;
    sp_report *rep = rs->rep;
    const sp_plan *p = rs->plan;
    uint64_t n = p->n;
    float *acc = NULL, *result = NULL;
    sp_seldev *gpu = NULL; /* --select cuda */
    char gerr[400];
    if (rep->exact) {
        acc = calloc(n, sizeof *acc);
        result = malloc(n * sizeof *result);
        if (!acc || !result) {
            sp_fail(&rs->shim, "out of memory for the gradient of rank %d", c->rank);
            goto out;
        }
    }
    if (acc && p->settle > 0 && rs->res->algo->cls == SP_ALGO_SPARSE) {
        sp_pair *top = malloc((rep->k ? rep->k : 1) * sizeof *top);
        if (!top) {
            sp_fail(&rs->shim, "out of memory settling the residual of rank %d", c->rank);
            goto out;
        }
        settle(rs, c, acc, top);
        free(top);
    }
    if (acc && p->select_dev && !(gpu = sp_seldev_open(c, acc, n, gerr, sizeof gerr))) {
        sp_fail(&rs->shim, "%s", gerr);
        goto out;
    }
    int other = sp_phase_id(&rs->shim, "other");
    int it = 0;
    int prev = -1; /* the training iteration simulated last */
    for (; it < p->iters; it++) {
        int ti = rep->iters[it].index;
        /* the gradient is produced before the synchronisation: it stands for
         * the backward pass, which no allreduce time includes */
        c->iter = ti;
        if (gpu) {
            if (sp_seldev_gradient(gpu, rs->res->source, p->settle + it, c->rank, gerr, sizeof gerr) != 0)
                sp_fail(&rs->shim, "%s", gerr);
        } else if (acc)
            add_gradient(rs, c, it, acc);
        sync_ranks(rs, c, prev);
        if (rs->shim.failed)
            break;
        sp_shim_iteration_begin(c, ti, other);
        if (p->disturb.compute > 0) { /* the stated base compute (a backward pass), in a phase of its own */
            sp_phase(c, "compute");
            sp_shim_compute_seconds(c, p->disturb.compute);
        }
        sp_algo_io io = {n, rep->k, acc, result, &rs->res->opts, rs->res->layers, rs->res->nlayers};
        /* dense warm-up, as the reference codes do before sparsifying */
        int warm = rep->iters[it].dense_warmup;
        int rc = warm ? sp_ring_allreduce(c, &io) : rs->res->algo->run(c, &io);
        if (warm && rs->shim.model)
            sp_model_consume(c, -1.0, -1.0); /* a dense allreduce delivers every entry */
        if (gpu && sp_seldev_iteration_done(gpu, c, gerr, sizeof gerr) != 0) {
            sp_fail(&rs->shim, "%s", gerr);
            break;
        }
        if (rc != SP_OK) {
            sp_fail(&rs->shim, "%s failed on rank %d in iteration %d (error %d)",
                    warm ? "ring (warm-up)" : rs->res->algo->name, c->rank, it, rc);
            break;
        }
        if (result && rs->res->source->result &&
            rs->res->source->result(rs->res->source, it, c->rank, result, gerr, sizeof gerr) != 0) {
            sp_fail(&rs->shim, "%s", gerr);
            break;
        }
        sp_shim_iteration_end(c);
        prev = ti;
        if (result && c->rank == 0 && rep->result_sum)
            for (uint64_t i = 0; i < n; i++)
                rep->result_sum[i] += result[i];
    }
    if (it == p->iters) {
        sync_ranks(rs, c, prev);
        if (acc && rep->residual_sum)
            for (uint64_t i = 0; i < n; i++)
                rep->residual_sum[i] += acc[i];
        if (result && !rs->shim.failed)
            check_result(rs, c, result);
        if (gpu && !rs->shim.failed && sp_seldev_verify(gpu, gerr, sizeof gerr) != 0)
            sp_fail(&rs->shim, "%s (rank %d)", gerr, c->rank);
    }
out:
    sp_seldev_close(gpu);
    free(acc);
    free(result);
    free(c->algo_state);
    c->algo_state = NULL;
}

static double now_wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* --dump-grads: every gradient the run used, (I, P, n), streamed */
static int dump_gradients(const sp_resolved *res, char *err, size_t errlen)
{
    const sp_plan *plan = &res->plan;
    uint64_t shape[3] = {(uint64_t)plan->iters, (uint64_t)plan->ranks, plan->n};
    float *g = malloc(plan->n * sizeof *g);
    sp_npy_stream st;
    if (!g) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (sp_npy_stream_open(&st, plan->dump_grads, 3, shape, err, errlen) != 0) {
        free(g);
        return -1;
    }
    int ok = 1;
    for (int it = 0; it < plan->iters && ok; it++)
        for (int r = 0; r < plan->ranks && ok; r++) {
            ok = res->source->fill(res->source, plan->settle + it, r, g, 0, err, errlen) == 0;
            if (ok)
                sp_npy_stream_write(&st, g, plan->n);
        }
    free(g);
    char e2[300];
    if (sp_npy_stream_close(&st, ok, e2, sizeof e2) != 0 && ok) {
        snprintf(err, errlen, "%s", e2);
        return -1;
    }
    return ok ? 0 : -1;
}

/* the report's arrays for the run; -1 if memory runs out */
static int report_alloc(sp_report *rep, const sp_resolved *res)
{
    const sp_plan *plan = &res->plan;
    uint64_t k = res->k;
    int exact = plan->payload == SP_PAYLOAD_EXACT;
    int P = plan->ranks;
    rep->nranks = P;
    rep->niters = plan->iters;
    rep->n = plan->n;
    rep->k = k;
    rep->exact = exact;
    rep->model = plan->payload == SP_PAYLOAD_MODEL;
    rep->sparse = res->algo->cls == SP_ALGO_SPARSE;
    rep->predicted_s = -1;
    rep->iters = calloc((size_t)plan->iters, sizeof *rep->iters);
    rep->rank_sent = calloc((size_t)P, sizeof *rep->rank_sent);
    rep->rank_recv = calloc((size_t)P, sizeof *rep->rank_recv);
    rep->gpus_per_node = plan->gpus_per_node > 1 ? plan->gpus_per_node : 0;
    if (rep->gpus_per_node) {
        rep->rank_sent_off = calloc((size_t)P, sizeof *rep->rank_sent_off);
        rep->rank_recv_off = calloc((size_t)P, sizeof *rep->rank_recv_off);
        if (!rep->rank_sent_off || !rep->rank_recv_off)
            return -1;
    }
    rep->stat_last = calloc((size_t)P * SP_MAX_STATS, sizeof *rep->stat_last);
    if (exact) {
        rep->result_sum = calloc(plan->n, sizeof *rep->result_sum);
        rep->residual_sum = calloc(plan->n, sizeof *rep->residual_sum);
    }
    if (!rep->iters || !rep->rank_sent || !rep->rank_recv || !rep->stat_last ||
        (exact && (!rep->result_sum || !rep->residual_sum)))
        return -1;
    for (int it = 0; it < plan->iters; it++) {
        rep->iters[it].index = sp_plan_iter_index(plan, it);
        rep->iters[it].dense_warmup = rep->iters[it].index < plan->warmup;
    }
    return 0;
}

/* what the analysis says of this run: bound and alpha-beta time */
static void add_analysis(sp_report *rep, const sp_resolved *res)
{
    const sp_plan *plan = &res->plan;
    const sp_algo_facts *f = sp_algo_facts_find(res->algo->name);
    sp_bound b;
    sp_node_bound nb; /* node-aware forms: inside the nodes and between them (no alpha-beta time) */
    /* the NCCL rows know the nodes and their own settings; the others ignore them */
    sp_nodes nd = {plan->gpus_per_node, plan->opts.nccl_channels, plan->opts.nccl_chunk, plan->opts.quant_bits,
                   plan->opts.quant_block, plan->opts.bucket, 0, 0, NULL, 0, 0};
    /* PowerSGD's two allreduces, from the run's tensors */
    sp_powersgd_sizes ps;
    sp_powersgd_sizes_of(res->layers, res->nlayers, plan->n, res->opts.powersgd_rank, &ps);
    nd.lowrank_m1 = ps.p + ps.dense;
    nd.lowrank_m2 = ps.q;
    nd.lowrank_inner = sp_powersgd_allreduce_name(res->opts.powersgd_allreduce);
    nd.spardl_teams = plan->opts.spardl_teams;
    nd.spardl_share = plan->opts.spardl_share;
    if (sp_facts_bound_nodes(f, plan->ranks, plan->n, rep->k, &nd, &b) == 0)
        rep->bound = (sp_report_bound){1, b.words, b.floor_words, b.lower_words, b.formula, b.source,
                                       b.lower_formula};
    else if (sp_node_bound_volume(res->algo->name, plan->ranks, plan->gpus_per_node, plan->n, rep->k, &nb) == 0)
        rep->bound = (sp_report_bound){1, nb.words, nb.floor_words, nb.lower_words, nb.formula, nb.source,
                                       nb.lower_formula};
    rep->predicted_s = sp_facts_predict(f, plan->ranks, plan->n, rep->k, rep->alpha, rep->beta);
    /* a platform of nodes: its two classes of links (NVLink, the NICs), a
     * port of each per GPU; else one class (the run's alpha and beta), one
     * port per rank */
    sp_link_classes lc = {rep->alpha, rep->beta, rep->alpha, rep->beta, 1, 0};
    if (sp_platform_link_classes(plan->platform, &lc.intra_alpha, &lc.intra_beta, &lc.inter_alpha, &lc.inter_beta) == 0)
        lc.one_port = 0;
    lc.nvls_bw = sp_platform_nvls(plan->platform);
    if (f && f->seconds2)
        rep->predicted_s = sp_facts_predict_nodes(f, plan->ranks, plan->n, rep->k, &nd, &lc);
}

/* ---- a disturbed run's baseline: the same plan undisturbed, same seed ----
 * A SimGrid engine runs once per process, so the baseline runs in a child
 * forked before anything is written, which waits until the disturbed run
 * has succeeded (a run refused on the way or failing needs no baseline),
 * runs, and sends back its time per iteration and per phase. */
typedef struct {
    pid_t pid;
    int go, results; /* the pipes' ends this process keeps */
} baseline_child;

static void slice_to_trace(void *to, const sp_slice_event *e) { sp_chrome_slice(to, e); }

static int baseline_fork(const sp_resolved *res, baseline_child *b, sp_error *e)
{
    int go[2], back[2];
    b->pid = -1;
    if (pipe(go) != 0)
        goto fail;
    if (pipe(back) != 0) {
        close(go[0]);
        close(go[1]);
        goto fail;
    }
    pid_t parent = getpid();
    fflush(NULL);
    b->pid = fork();
    if (b->pid < 0) {
        close(go[0]);
        close(go[1]);
        close(back[0]);
        close(back[1]);
        goto fail;
    }
    if (b->pid == 0) {
        close(go[1]);
        close(back[0]);
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* it goes with the run */
        sp_progress_disable();            /* the run's line is the run's own */
        const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
        for (int i = 0; i < 4; i++)
            signal(sigs[i], SIG_DFL);
        char x;
        if (getppid() != parent || read(go[0], &x, 1) != 1 || x != 'g')
            _exit(0);
        /* the forked copy of the resolved plan, its sources not yet read */
        sp_resolved q = *res;
        sp_disturb_clear(&q.plan.disturb);
        q.plan.out[0] = q.plan.dump_result[0] = q.plan.dump_grads[0] = '\0';
        q.plan.write_csv = q.plan.write_trace = 0;
        q.plan.quiet = 1;
        sp_report r;
        sp_error err = {0, ""};
        int rc = sp_run_resolved(&q, &r, &err);
        FILE *f = fdopen(back[1], "w");
        if (!f)
            _exit(1);
        if (rc != 0) {
            fprintf(f, "error\t%s\n", err.msg);
        } else {
            for (int it = 0; it < r.niters; it++) {
                fprintf(f, "i\t%d\t%.17g\n", it, r.iters[it].t_end - r.iters[it].t_start);
                for (int ph = 0; ph < r.nphases; ph++)
                    if (r.iters[it].phase_time[ph] > 0)
                        fprintf(f, "p\t%d\t%.17g\t%s\n", it, r.iters[it].phase_time[ph], r.phase_names[ph]);
            }
        }
        fflush(f);
        _exit(rc ? 1 : 0);
    }
    close(go[0]);
    close(back[1]);
    b->go = go[1];
    b->results = back[0];
    return 0;
fail:
    return sp_error_set(e, SP_STATUS_FAILED, "cannot start the undisturbed run: %s", strerror(errno));
}

/* the disturbed run is over: the child runs the baseline (go) or leaves */
static int baseline_collect(baseline_child *b, int go, sp_report *rep, sp_error *e)
{
    if (b->pid < 0)
        return 0;
    int rc = 0;
    if (go && write(b->go, "g", 1) != 1)
        rc = -1;
    close(b->go);
    FILE *f = go && rc == 0 ? fdopen(b->results, "r") : NULL;
    if (!f)
        close(b->results);
    char line[1200], msg[700] = "";
    sp_report_disturb *d = rep->disturb;
    int iters_seen = 0;
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        int it;
        double t;
        char name[1100];
        if (!strncmp(line, "error\t", 6)) {
            snprintf(msg, sizeof msg, "%.600s", line + 6);
        } else if (sscanf(line, "i\t%d\t%lg", &it, &t) == 2 && it >= 0 && it < rep->niters) {
            d->base_time[it] = t;
            iters_seen++;
        } else if (sscanf(line, "p\t%d\t%lg\t%1099[^\n]", &it, &t, name) == 3 && it >= 0 && it < rep->niters) {
            for (int ph = 0; ph < rep->nphases; ph++)
                if (!strcmp(rep->phase_names[ph], name))
                    d->base_phase[(size_t)it * SP_MAX_PHASES + (size_t)ph] = t;
        }
    }
    if (f)
        fclose(f);
    int st = 0;
    while (waitpid(b->pid, &st, 0) < 0 && errno == EINTR)
        ;
    b->pid = -1;
    if (!go)
        return 0;
    if (rc == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 && iters_seen == rep->niters) {
        d->have_baseline = 1;
        return 0;
    }
    return sp_error_set(e, SP_STATUS_FAILED,
                        "the undisturbed run (for the slowdowns; --no-disturb-baseline leaves it out) failed: %s",
                        msg[0] ? msg : "it ended without its figures");
}

/* What a run opens and must close, whatever happens. */
typedef struct {
    sp_acct *acct;
    sp_csv_writer *csv;
    sp_chrome_writer *chrome;
    sp_disturb *disturb;
    baseline_child base;
    int write_outputs; /* this process writes the outputs under --out */
} run_outputs;

/* a previous run's files must not pass for this run's; then the writers */
static int open_writers(sp_runstate *rs, run_outputs *o, sp_error *e)
{
    const sp_plan *plan = rs->plan;
    char path[1200], err[600];
    if (sp_mkdirs(plan->out, err, sizeof err) != 0)
        return sp_error_from(e, SP_STATUS_USAGE, err);
    const char *names[] = {"messages.csv", "summary.json", "trace.json"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", plan->out, names[i]);
        remove(path);
    }
    if (plan->write_csv) {
        snprintf(path, sizeof path, "%s/messages.csv", plan->out);
        if (!(o->csv = sp_csv_open(path, rs->rep->phase_names, plan->gpus_per_node, err, sizeof err)))
            return sp_error_from(e, SP_STATUS_USAGE, err);
    }
    if (plan->write_trace) {
        snprintf(path, sizeof path, "%s/trace.json", plan->out);
        if (!(o->chrome = sp_chrome_open(path, plan->ranks, plan->gpus_per_node, rs->rep->phase_names, plan->trace_msgs,
                                      err, sizeof err)))
            return sp_error_from(e, SP_STATUS_USAGE, err);
    }
    return 0;
}

/* the report, the disturbances (and the baseline's child, forked before any
 * output is open so that it holds none), the writers, the accounting */
static int prepare_run(sp_runstate *rs, run_outputs *o, sp_error *e)
{
    const sp_plan *plan = rs->plan;
    char err[600];
    if (report_alloc(rs->rep, rs->res) != 0)
        return sp_error_set(e, SP_STATUS_FAILED, "out of memory");
    if (sp_disturb_any(&plan->disturb)) {
        if (!(o->disturb = sp_disturb_new(&plan->disturb, plan->seed, rs->rep, err, sizeof err)))
            return sp_error_from(e, SP_STATUS_FAILED, err);
        rs->shim.disturb = o->disturb;
        if (plan->disturb.baseline && !sp_disturb_failure_on(&plan->disturb) && baseline_fork(rs->res, &o->base, e) != 0)
            return -1;
    }
    o->write_outputs = plan->out[0] != '\0' && sp_backend_is_root();
    if (o->write_outputs && open_writers(rs, o, e) != 0)
        return -1;
    if (!(o->acct = sp_acct_open(rs->rep, o->csv, o->chrome)))
        return sp_error_set(e, SP_STATUS_FAILED, "out of memory");
    rs->shim.rep = rs->rep;
    rs->shim.dev = rs->res->dev;
    if (rs->res->model) {
        rs->shim.model = sp_model_ops_table();
        rs->shim.model_state = rs->res->model;
    }
    if (rs->res->rail_models || (rs->res->model && rs->res->algo->form != SP_FORM_FLAT)) {
        rs->shim.model = sp_model_ops_table();
        rs->shim.rail_models = (void **)rs->res->rail_models;
        rs->shim.model_per_node = 1;
    }
    rs->shim.sink = sp_acct_sink(o->acct);
    rs->shim.want_times = o->csv || o->chrome || o->disturb; /* a disturbed run follows its critical path by them */
    rs->shim.gpus_per_node = plan->gpus_per_node;
    if (o->disturb && o->chrome)
        sp_disturb_set_slices(o->disturb, slice_to_trace, o->chrome);
    rs->shim.rank_main = rank_main;
    rs->shim.rank_arg = rs;
    return 0;
}

/* the P ranks on the backend */
static int run_ranks(sp_runstate *rs, sp_error *e)
{
    const sp_plan *plan = rs->plan;
    double w0 = now_wall();
    sp_backend_config cfg = {plan->ranks,
                             plan->platform,
                             plan->network,
                             plan->watchdog,
                             plan->seed,
                             plan->crosstraffic < 0 ? 0 : plan->crosstraffic ? 1 : 2,
                             (double)plan->unshared_below,
                             plan->engine,
                             plan->flow_slack};
    /* where the simulator's time goes (the MPI backend's goes to polling) */
    int profiled = strcmp(sp_backend_name(), "simgrid") == 0 && sp_wall_profile_start() == 0;
    int rc = sp_backend_run(&rs->shim, &cfg, e);
    rs->rep->wall_seconds = now_wall() - w0;
    if (profiled)
        sp_wall_profile_stop(&rs->rep->wall_profile);
    if (rc == 0 && rs->shim.failed)
        return sp_error_from(e, SP_STATUS_FAILED, rs->shim.errmsg);
    return rc;
}

/* the writers closed whole (a failure leaves neither file behind) */
static int close_writers(run_outputs *o, sp_report *rep, sp_error *e)
{
    char werr[300] = "";
    sp_csv_writer *c2 = o->csv;
    sp_chrome_writer *t2 = o->chrome;
    o->csv = NULL;
    o->chrome = NULL;
    int rc = c2 ? sp_csv_close(c2, 1, werr, sizeof werr) : 0;
    if (t2 && sp_chrome_close(t2, rc == 0, &rep->trace_dropped, werr, sizeof werr) != 0 && rc == 0)
        rc = -1;
    return rc != 0 ? sp_error_from(e, SP_STATUS_FAILED, werr) : 0;
}

/* after the ranks: the baseline, the writers, the analysis, the training
 * iteration, summary.json and the dumps */
static int finish_run(sp_runstate *rs, run_outputs *o, sp_error *e)
{
    const sp_resolved *res = rs->res;
    const sp_plan *plan = rs->plan;
    sp_report *rep = rs->rep;
    char path[1200], err[600];
    if (baseline_collect(&o->base, 1, rep, e) != 0 || close_writers(o, rep, e) != 0)
        return -1;
    add_analysis(rep, res);
    sp_report_figures tf; /* a whole training iteration around this allreduce (training.h) */
    sp_report_figures_of(rep, &tf);
    if (sp_training_eval(res, tf.t_mean, &rep->training) != 0)
        return sp_error_set(e, SP_STATUS_FAILED, "out of memory");
    if (o->write_outputs) {
        snprintf(path, sizeof path, "%s/summary.json", plan->out);
        cJSON *echo = sp_plan_echo(plan, res->have_profile ? &res->profile : NULL);
        if (sp_summary_write(path, SPARSIM_VERSION, sp_backend_name(), echo, rep, err, sizeof err) != 0)
            return sp_error_from(e, SP_STATUS_FAILED, err);
    }
    if (plan->dump_grads[0] && sp_backend_is_root() && dump_gradients(res, err, sizeof err) != 0)
        return sp_error_from(e, SP_STATUS_FAILED, err);
    if (plan->dump_result[0] && sp_backend_is_root()) {
        uint64_t shape[1] = {plan->n};
        if (!rep->result)
            return sp_error_set(e, SP_STATUS_FAILED, "no result to dump");
        if (sp_npy_write(plan->dump_result, rep->result, 1, shape, err, sizeof err) != 0)
            return sp_error_from(e, SP_STATUS_FAILED, err);
    }
    return 0;
}

int sp_run_resolved(const sp_resolved *res, sp_report *rep, sp_error *e)
{
    memset(rep, 0, sizeof *rep);
    e->status = SP_STATUS_OK;
    e->msg[0] = '\0';
    sp_runstate *rs = calloc(1, sizeof *rs);
    if (!rs)
        return sp_error_set(e, SP_STATUS_FAILED, "out of memory");
    rs->res = res;
    rs->plan = &res->plan;
    rs->rep = rep;
    run_outputs o = {.base = {-1, -1, -1}};
    int rc = prepare_run(rs, &o, e) != 0 || run_ranks(rs, e) != 0 || finish_run(rs, &o, e) != 0 ? -1 : 0;
    sp_error unused;
    baseline_collect(&o.base, 0, rep, &unused); /* not needed: it leaves */
    char werr[300];
    if (o.csv)
        sp_csv_close(o.csv, 0, werr, sizeof werr);
    if (o.chrome)
        sp_chrome_close(o.chrome, 0, NULL, werr, sizeof werr);
    sp_acct_close(o.acct);
    sp_disturb_free(o.disturb); /* what it found stays in rep->disturb */
    free(rs);
    return rc == 0 ? SP_STATUS_OK : e->status;
}

int sp_run_algorithm(const sp_plan *plan, const sp_algorithm *algo, sp_report *rep, sp_error *e)
{
    sp_resolved res;
    if (sp_resolve(plan, algo, SP_RESOLVE_RUN, &res, e) != 0) {
        memset(rep, 0, sizeof *rep);
        return e->status;
    }
    int rc = sp_run_resolved(&res, rep, e);
    sp_resolved_free(&res);
    return rc;
}

int sp_run(const sp_plan *plan, sp_report *rep, sp_error *e) { return sp_run_algorithm(plan, NULL, rep, e); }

double sp_run_memory_estimate(const sp_plan *plan, double *limit) { return sp_resolve_memory_estimate(plan, limit); }
