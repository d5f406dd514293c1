/* run.c - the run driver: plan in, P ranks of one algorithm, report out.
 *
 * It resolves the plan (gradient file, payload mode), opens the writers and
 * the accounting, lets the backend start the ranks, and each rank runs
 * rank_main: per iteration the gradient added to the residual, a free
 * synchronisation (as the reference codes' barrier after each allreduce),
 * then the algorithm.  Everything the run keeps is in one sp_runstate.
 */
#include "run.h"
#include "accounting.h"
#include "select_device.h"
#include "progress.h"
#include "training.h"
#include "sim/shim/backend.h"
#include "sim/workload/generator.h"
#include "sim/workload/model.h"
#include "algorithms/select.h"
#include "analysis/bounds.h"
#include "traces/gradients.h"
#include "traces/npy.h"

#include <errno.h>
#include <float.h>
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

#define EXACT_MEMORY_BUDGET (6.0 * 1024 * 1024 * 1024) /* bytes, all ranks together */
/* what a run holds besides its payloads, measured with sparsim sweep's
 * peak_rss_bytes (bench/README.md has the method): the process, SimGrid and
 * the writers' buffers; SimGrid's actor and the shim's state per rank (12 to
 * 15 KiB); per rank pair, the per-peer counts and bounds that the algorithms
 * whose sizes depend on data keep on every rank in model and size payloads
 * (up to 70 bytes) */
#define RUN_BASE_BYTES (16.0 * 1024 * 1024)
#define RANK_BYTES (16.0 * 1024)
#define RANK_PAIR_BYTES 80.0

/* Everything one run keeps. */
typedef struct {
    sp_plan plan;                /* the effective plan (n and iters may come from the gradient file) */
    const sp_algorithm *algo;
    sp_algo_opts opts;           /* with the preset's values resolved */
    sp_grad_source *source;      /* the gradients: a trace or the generator */
    sp_report *rep;
    sp_shim shim;
    int first_result_rank;
    int books_open; /* the iteration whose figures await every rank, or -1 */
} sp_runstate;

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
    if (rs->source->fill(rs->source, rs->plan.settle + it, c->rank, acc, 1, err, sizeof err) != 0)
        sp_fail(&rs->shim, "%s", err);
}

/* --settle: iterations of local error feedback before the first simulated
 * one (each rank consumes its exact top-k), all ranks in step so that the
 * generator's shared part is computed once per iteration */
static void settle(sp_runstate *rs, sp_ctx *c, float *acc, sp_pair *top)
{
    for (int s = 0; s < rs->plan.settle && !rs->shim.failed; s++) {
        char err[300];
        if (rs->source->fill(rs->source, s, c->rank, acc, 1, err, sizeof err) != 0) {
            sp_fail(&rs->shim, "%s", err);
            break;
        }
        uint64_t m = sp_topk_exact(acc, rs->plan.n, rs->rep->k, top);
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
    const sp_plan *p = &rs->plan;
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
    if (acc && p->settle > 0 && rs->algo->cls == SP_ALGO_SPARSE) {
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
            if (sp_seldev_gradient(gpu, rs->source, rs->plan.settle + it, c->rank, gerr, sizeof gerr) != 0)
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
        sp_algo_io io = {n, rep->k, acc, result, &rs->opts};
        /* dense warm-up, as the reference codes do before sparsifying */
        int warm = rep->iters[it].dense_warmup;
        int rc = warm ? sp_ring_allreduce(c, &io) : rs->algo->run(c, &io);
        if (warm && rs->shim.model)
            sp_model_consume(c, -1.0, -1.0); /* a dense allreduce delivers every entry */
        if (gpu && sp_seldev_iteration_done(gpu, c, gerr, sizeof gerr) != 0) {
            sp_fail(&rs->shim, "%s", gerr);
            break;
        }
        if (rc != SP_OK) {
            sp_fail(&rs->shim, "%s failed on rank %d in iteration %d (error %d)",
                    warm ? "ring (warm-up)" : rs->algo->name, c->rank, it, rc);
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

int sp_run(const sp_plan *plan, sp_report *rep, char *err, size_t errlen)
{
    const sp_algorithm *a = sp_algorithm_find(plan->algo);
    if (!a) {
        memset(rep, 0, sizeof *rep);
        snprintf(err, errlen, "unknown algorithm '%s'", plan->algo);
        return 2;
    }
    return sp_run_algorithm(plan, a, rep, err, errlen);
}

/* The gradients: --grad-file's trace, checked against the plan (n and the
 * iterations may come from it), or the generator on the plan's profile.
 * 2 with a message for a trace that does not fit. */
static int open_source(sp_runstate *rs, char *err, size_t errlen)
{
    sp_plan *plan = &rs->plan;
    if (!plan->grad_file[0]) {
        /* the generator comes later, and only where values are needed */
        sp_profile prof;
        if (sp_plan_profile(plan, &prof, err, errlen) != 0)
            return 2;
        plan->n = prof.n;
        sp_profile_free(&prof);
        return 0;
    }
    sp_grad_source *src = sp_trace_open(plan->grad_file, err, errlen);
    if (!src)
        return 2;
    rs->source = src;
    char why[200] = "";
    if (src->ranks < plan->ranks)
        snprintf(why, sizeof why, "has %d ranks, --ranks is %d", src->ranks, plan->ranks);
    else if (sp_plan_given(plan, "n") && src->n != plan->n)
        snprintf(why, sizeof why, "has n = %llu, --n is %llu", (unsigned long long)src->n,
                 (unsigned long long)plan->n);
    else if (src->iters <= plan->settle)
        snprintf(why, sizeof why, "holds %d iteration(s), --settle uses %d before the run", src->iters, plan->settle);
    else if (sp_plan_given(plan, "iters") && plan->settle + plan->iters > src->iters)
        snprintf(why, sizeof why, "holds %d iteration(s), --iters asks for %d%s", src->iters, plan->iters,
                 plan->settle ? " after the settling ones" : "");
    if (why[0]) {
        snprintf(err, errlen, "gradient file %s %s", plan->grad_file, why);
        return 2;
    }
    /* ranks 0..P-1 use the trace's first P workers */
    plan->n = src->n;
    if (!sp_plan_given(plan, "iters"))
        plan->iters = src->iters - plan->settle;
    return 0;
}

/* --dump-grads: every gradient the run used, (I, P, n), streamed */
static int dump_gradients(sp_runstate *rs, char *err, size_t errlen)
{
    const sp_plan *plan = &rs->plan;
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
            ok = rs->source->fill(rs->source, plan->settle + it, r, g, 0, err, errlen) == 0;
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

/* the report's arrays for the plan; -1 if memory runs out */
static int report_alloc(sp_report *rep, const sp_plan *plan, uint64_t k, int exact)
{
    int P = plan->ranks;
    rep->nranks = P;
    rep->niters = plan->iters;
    rep->n = plan->n;
    rep->k = k;
    rep->exact = exact;
    rep->model = plan->payload == SP_PAYLOAD_MODEL;
    const sp_algorithm *a = sp_algorithm_find(plan->algo);
    rep->sparse = a && a->cls == SP_ALGO_SPARSE;
    rep->predicted_s = -1;
    rep->iters = calloc((size_t)plan->iters, sizeof *rep->iters);
    rep->rank_sent = calloc((size_t)P, sizeof *rep->rank_sent);
    rep->rank_recv = calloc((size_t)P, sizeof *rep->rank_recv);
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
static void add_analysis(sp_report *rep, const sp_plan *plan)
{
    sp_bound b;
    if (sp_bound_volume(plan->algo, plan->ranks, plan->n, rep->k, &b) == 0)
        rep->bound = (sp_report_bound){1, b.words, b.floor_words, b.lower_words, b.formula, b.source,
                                       b.lower_formula};
    rep->predicted_s = sp_predict_time(plan->algo, plan->ranks, plan->n, rep->k, rep->alpha, rep->beta);
}

/* the memory this process may still take, in bytes (-1: unknown): what the
 * kernel says it can give without swapping, lowered by a limit on the
 * address space or the data segment, and by a memory cgroup's room */
static double memory_limit(void)
{
    double avail = -1;
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[256];
        unsigned long long kb;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
                avail = (double)kb * 1024.0;
        fclose(f);
    }
    if (avail < 0) {
        long pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
        if (pages > 0 && psz > 0)
            avail = (double)pages * (double)psz;
    }
    const int limits[] = {RLIMIT_AS, RLIMIT_DATA};
    for (int i = 0; i < 2; i++) {
        struct rlimit rl;
        if (getrlimit(limits[i], &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (avail < 0 || (double)rl.rlim_cur < avail))
            avail = (double)rl.rlim_cur;
    }
    f = fopen("/sys/fs/cgroup/memory.max", "r");
    if (f) {
        unsigned long long max, cur;
        FILE *g = fopen("/sys/fs/cgroup/memory.current", "r");
        if (fscanf(f, "%llu", &max) == 1 && g && fscanf(g, "%llu", &cur) == 1) {
            double room = max > cur ? (double)(max - cur) : 0.0;
            if (avail < 0 || room < avail)
                avail = room;
        }
        if (g)
            fclose(g);
        fclose(f);
    }
    return avail;
}

/* bytes a run of `mode` needs: exact payloads hold P x n floats of gradient
 * and result (8 bytes per entry and rank), the algorithm's extras, the
 * report's sums and the generator's shared arrays (28 bytes per entry);
 * model and size payloads only the per-rank and per-pair state */
static double memory_needed(const sp_plan *plan, const sp_algorithm *algo, uint64_t k, int mode)
{
    double P = plan->ranks, n = (double)plan->n;
    double need = RUN_BASE_BYTES + P * RANK_BYTES;
    if (mode == SP_PAYLOAD_EXACT)
        return need + P * n * 8.0 + 28.0 * n + (algo->exact_extra_bytes ? algo->exact_extra_bytes(plan->ranks, plan->n, k) : 0.0);
    return need + (algo->size_only_ok ? 0.0 : RANK_PAIR_BYTES * P * P);
}

double sp_run_memory_estimate(const sp_plan *plan, double *limit)
{
    double lim = memory_limit();
    if (limit)
        *limit = lim;
    const sp_algorithm *algo = sp_algorithm_find(plan->algo);
    if (!algo)
        return RUN_BASE_BYTES;
    uint64_t k = sp_plan_k(plan);
    double exact = memory_needed(plan, algo, k, SP_PAYLOAD_EXACT);
    int mode = plan->payload;
    if (mode == SP_PAYLOAD_AUTO) /* as the run decides it, alone on the machine */
        mode = !plan->at_given && exact <= EXACT_MEMORY_BUDGET && (lim < 0 || exact <= lim) ? SP_PAYLOAD_EXACT
               : algo->model_ok                                                         ? SP_PAYLOAD_MODEL
                                                                                        : SP_PAYLOAD_SIZE;
    return memory_needed(plan, algo, k, mode);
}

static const char *gib(double bytes, char *buf, size_t n)
{
    if (bytes >= 1024.0 * 1024 * 1024)
        snprintf(buf, n, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
    else
        snprintf(buf, n, "%.0f MiB", ceil(bytes / (1024.0 * 1024)));
    return buf;
}

/* Generated gradients are float32: the largest entry the generator can draw
 * (every normal it draws lies within 8.3 standard deviations: the inverse
 * normal of 2^-54), summed over the ranks and accumulated by error feedback
 * over the iterations, must stay below FLT_MAX.  -1 with a message naming
 * the knobs when it would not. */
static int check_magnitudes(const sp_plan *plan, const sp_profile *prof, char *err, size_t errlen)
{
    const double z = 8.3;
    double top = -INFINITY;
    for (int l = 0; l < prof->nlayers; l++) {
        double t = prof->layers[l].log10_scale + prof->layers[l].log10_spread * z;
        top = t > top ? t : top;
    }
    double spike = prof->spikes > 0 && prof->spike_scale > 1 ? prof->spike_scale : 1.0;
    double noise = z * (sqrt(prof->common) + sqrt(prof->mean) +
                        sqrt(1.0 - prof->common - prof->mean) * sp_profile_noise_base(prof) * spike);
    double log10_entry = top + prof->scale_sd * z / log(10.0) + log10(noise);
    double log10_total = log10_entry + log10((double)plan->ranks) + log10((double)plan->settle + plan->iters);
    if (log10_total < log10(FLT_MAX))
        return 0;
    snprintf(err, errlen,
             "the workload's scales let a gradient entry reach 1e%.0f and a sum over %d ranks and %d iterations "
             "1e%.0f, beyond float32 (3.4e38): lower --grad-spread, --grad-tail, --grad-scale-sd or --grad-spike-scale "
             "(or the profile's log10_scale), or use --payload model",
             floor(log10_entry), plan->ranks, plan->settle + plan->iters, floor(log10_total));
    return -1;
}

/* A gradient file is bad input when any value the run will read is not
 * finite: every one is read once before the run (one pass over the used
 * part of the trace), so that the run does not fail halfway through.  -1
 * with the reader's message naming the iteration, rank and index. */
static int check_trace(sp_runstate *rs, char *err, size_t errlen)
{
    const sp_plan *plan = &rs->plan;
    float *g = malloc((plan->n ? plan->n : 1) * sizeof *g);
    if (!g) {
        snprintf(err, errlen, "out of memory checking %s", plan->grad_file);
        return -1;
    }
    int rc = 0;
    for (int it = 0; it < plan->settle + plan->iters && rc == 0; it++)
        for (int r = 0; r < plan->ranks && rc == 0; r++)
            rc = rs->source->fill(rs->source, it, r, g, 0, err, errlen);
    free(g);
    return rc ? -1 : 0;
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

static int baseline_fork(const sp_runstate *rs, baseline_child *b, char *err, size_t errlen)
{
    int go[2], res[2];
    b->pid = -1;
    if (pipe(go) != 0)
        goto fail;
    if (pipe(res) != 0) {
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
        close(res[0]);
        close(res[1]);
        goto fail;
    }
    if (b->pid == 0) {
        close(go[1]);
        close(res[0]);
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* it goes with the run */
        sp_progress_disable();            /* the run's line is the run's own */
        const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
        for (int i = 0; i < 4; i++)
            signal(sigs[i], SIG_DFL);
        char x;
        if (getppid() != parent || read(go[0], &x, 1) != 1 || x != 'g')
            _exit(0);
        sp_plan q = rs->plan;
        sp_disturb_clear(&q.disturb);
        q.out[0] = q.dump_result[0] = q.dump_grads[0] = '\0';
        q.write_csv = q.write_trace = 0;
        q.quiet = 1;
        sp_report r;
        char e[600] = "";
        int rc = sp_run_algorithm(&q, rs->algo, &r, e, sizeof e);
        FILE *f = fdopen(res[1], "w");
        if (!f)
            _exit(1);
        if (rc != 0) {
            fprintf(f, "error\t%s\n", e);
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
    close(res[1]);
    b->go = go[1];
    b->results = res[0];
    return 0;
fail:
    snprintf(err, errlen, "cannot start the undisturbed run: %s", strerror(errno));
    return -1;
}

/* the disturbed run is over: the child runs the baseline (go) or leaves */
static int baseline_collect(baseline_child *b, int go, sp_report *rep, char *err, size_t errlen)
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
    snprintf(err, errlen, "the undisturbed run (for the slowdowns; --no-disturb-baseline leaves it out) failed: %s",
             msg[0] ? msg : "it ended without its figures");
    return -1;
}

int sp_run_algorithm(const sp_plan *plan_in, const sp_algorithm *algo, sp_report *rep, char *err, size_t errlen)
{
    memset(rep, 0, sizeof *rep);
    sp_runstate *rs = calloc(1, sizeof *rs);
    if (!rs) {
        snprintf(err, errlen, "out of memory");
        return 1;
    }
    sp_plan *plan = &rs->plan;
    *plan = *plan_in;
    rs->algo = algo;
    rs->opts = sp_plan_algo_opts(plan);
    rs->rep = rep;
    sp_acct *acct = NULL;
    sp_model *model = NULL;
    sp_csv_writer *csv = NULL;
    sp_chrome_writer *chrome = NULL;
    sp_disturb *disturb = NULL;
    baseline_child base = {-1, -1, -1};
    int rc = 2;
    char path[1200], werr[300] = "";

    rs->shim.rep = rep;
    rs->shim.dev = sp_device_find(plan->device);
    if (!rs->shim.dev && !(rs->shim.dev = sp_device_load(plan->device, err, errlen)))
        goto out;
    if ((rc = open_source(rs, err, errlen)) != 0)
        goto out;
    rc = 2;
    int disturbed = sp_disturb_any(&plan->disturb);
    if ((disturbed || plan->disturb.compute > 0) && strcmp(sp_backend_name(), "simgrid") != 0) {
        snprintf(err, errlen, "disturbances and --compute are simulated: the %s backend runs real processes",
                 sp_backend_name());
        goto out;
    }
    uint64_t k = sp_plan_k(plan);
    if (k < 1 && algo->cls == SP_ALGO_SPARSE) {
        snprintf(err, errlen, "n x density = %g selects no entry: raise --n or --density",
                 (double)plan->n * plan->density);
        goto out;
    }
    int P = plan->ranks;
    double need = memory_needed(plan, algo, k, SP_PAYLOAD_EXACT), limit = memory_limit();
    int mode = plan->payload;
    if (mode == SP_PAYLOAD_AUTO && plan->at_given) /* skipped iterations: the model's state between them */
        mode = algo->model_ok ? SP_PAYLOAD_MODEL : SP_PAYLOAD_SIZE;
    /* a real-MPI process holds one rank of the P */
    double share = strcmp(sp_backend_name(), "simgrid") != 0 ? 1.0 / P : 1.0;
    int fits = need <= EXACT_MEMORY_BUDGET && (limit < 0 || RUN_BASE_BYTES + (need - RUN_BASE_BYTES) * share <= limit);
    if (mode == SP_PAYLOAD_AUTO)
        mode = fits || plan->grad_file[0] || plan->dump_result[0] ? SP_PAYLOAD_EXACT
               : algo->model_ok                                   ? SP_PAYLOAD_MODEL
                                                                  : SP_PAYLOAD_SIZE;
    if (mode == SP_PAYLOAD_SIZE && !algo->size_only_ok) {
        snprintf(err, errlen, "%s needs exact payloads or a model workload (its message sizes depend on the data); "
                              "use --payload model",
                 algo->name);
        goto out;
    }
    if (mode == SP_PAYLOAD_MODEL && !algo->model_ok) {
        snprintf(err, errlen, "%s cannot run on a model workload; use --payload exact", algo->name);
        goto out;
    }
    if (mode == SP_PAYLOAD_MODEL && plan->grad_file[0]) {
        snprintf(err, errlen, "--grad-file needs exact payloads (a gradient file is exact data)");
        goto out;
    }
    int no_gpu = plan->select_dev ? sp_seldev_check(mode == SP_PAYLOAD_EXACT, sp_backend_name(), err, errlen) : 0;
    if (no_gpu) {
        rc = no_gpu == -2 ? 1 : 2; /* no GPU here: the run fails; a plan it cannot run: bad input */
        goto out;
    }
    if (mode == SP_PAYLOAD_EXACT && plan->at_given) {
        snprintf(err, errlen, "--iters-at cannot go with exact payloads: they need every iteration computed");
        goto out;
    }
    /* every mode, before anything is allocated: refused when it cannot fit */
    double mine = RUN_BASE_BYTES + (memory_needed(plan, algo, k, mode) - RUN_BASE_BYTES) * share;
    if (limit >= 0 && mine > limit) {
        char a[32], b[32], asked[64];
        const char *names[] = {"auto", "exact", "size", "model"};
        if (plan->payload != mode)
            snprintf(asked, sizeof asked, "--payload %s (here %s)", names[plan->payload], names[mode]);
        else
            snprintf(asked, sizeof asked, "--payload %s", names[mode]);
        snprintf(err, errlen,
                 "%s needs about %s for %d ranks and n = %llu (%s), more than the %s this machine has available: "
                 "lower --ranks%s%s",
                 asked, gib(mine, a, sizeof a), P, (unsigned long long)plan->n,
                 mode == SP_PAYLOAD_EXACT ? "8 bytes per entry and rank, and the algorithm's buffers"
                                          : "the state of every rank and rank pair",
                 gib(limit, b, sizeof b), mode == SP_PAYLOAD_EXACT ? " or --n" : "",
                 mode == SP_PAYLOAD_EXACT && algo->model_ok && !plan->grad_file[0] && !plan->dump_result[0]
                     ? ", or use --payload model"
                     : "");
        goto out;
    }
    if (rs->source && check_trace(rs, err, errlen) != 0)
        goto out;
    int exact = mode == SP_PAYLOAD_EXACT;
    plan->payload = mode; /* what the run does, as summary.json says */
    if (!rs->source && (exact || plan->dump_grads[0])) {
        sp_profile prof;
        if (sp_plan_profile(plan, &prof, err, errlen) != 0)
            goto out;
        if (check_magnitudes(plan, &prof, err, errlen) != 0) {
            sp_profile_free(&prof);
            goto out;
        }
        rs->source = sp_generator_source(&prof, plan->seed, plan->ranks, plan->settle + plan->iters, err, errlen);
        sp_profile_free(&prof);
        if (!rs->source) {
            rc = 1;
            goto out;
        }
    }
    if (mode == SP_PAYLOAD_MODEL && algo->cls == SP_ALGO_SPARSE) { /* dense algorithms never ask the model */
        sp_profile prof;
        if (sp_plan_profile(plan, &prof, err, errlen) != 0)
            goto out;
        model = sp_model_new(&prof, plan->seed, P, plan->settle, plan->warmup, plan->density,
                             (sp_model_ablation)plan->model_ablation, err, errlen);
        sp_profile_free(&prof);
        if (!model) {
            rc = 1;
            goto out;
        }
        rs->shim.model = sp_model_ops_table();
        rs->shim.model_state = model;
    }
    rc = 1;
    if (report_alloc(rep, plan, k, exact) != 0) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (disturbed) {
        if (!(disturb = sp_disturb_new(&plan->disturb, plan->seed, rep, err, errlen)))
            goto out;
        rs->shim.disturb = disturb;
        /* before any output is open: the child that runs the baseline holds none */
        if (plan->disturb.baseline && !sp_disturb_failure_on(&plan->disturb) &&
            baseline_fork(rs, &base, err, errlen) != 0)
            goto out;
    }

    int write_outputs = plan->out[0] != '\0' && sp_backend_is_root();
    if (write_outputs) {
        rc = 2;
        if (sp_mkdirs(plan->out, err, errlen) != 0)
            goto out;
        /* a previous run's files must not pass for this run's */
        const char *names[] = {"messages.csv", "summary.json", "trace.json"};
        for (int i = 0; i < 3; i++) {
            snprintf(path, sizeof path, "%s/%s", plan->out, names[i]);
            remove(path);
        }
        if (plan->write_csv) {
            snprintf(path, sizeof path, "%s/messages.csv", plan->out);
            if (!(csv = sp_csv_open(path, rep->phase_names, err, errlen)))
                goto out;
        }
        if (plan->write_trace) {
            snprintf(path, sizeof path, "%s/trace.json", plan->out);
            if (!(chrome = sp_chrome_open(path, P, rep->phase_names, plan->trace_msgs, err, errlen)))
                goto out;
        }
        rc = 1;
    }
    if (!(acct = sp_acct_open(rep, csv, chrome))) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    rs->shim.sink = sp_acct_sink(acct);
    rs->shim.want_times = csv || chrome || disturb; /* a disturbed run follows its critical path by them */
    if (disturb && chrome)
        sp_disturb_set_slices(disturb, slice_to_trace, chrome);
    rs->shim.rank_main = rank_main;
    rs->shim.rank_arg = rs;

    double w0 = now_wall();
    sp_backend_config cfg = {P, plan->platform, plan->network, plan->watchdog, plan->seed,
                             plan->crosstraffic < 0 ? 0 : plan->crosstraffic ? 1 : 2, (double)plan->unshared_below};
    char rerr[512] = "";
    rc = sp_backend_run(&rs->shim, &cfg, rerr, sizeof rerr);
    rep->wall_seconds = now_wall() - w0;
    if (rc == 0 && rs->shim.failed)
        rc = 1;
    if (rc != 0) {
        snprintf(err, errlen, "%s", rerr[0] ? rerr : rs->shim.errmsg);
        goto out;
    }
    if (baseline_collect(&base, 1, rep, err, errlen) != 0) {
        rc = 1;
        goto out;
    }
    sp_csv_writer *c2 = csv;
    sp_chrome_writer *t2 = chrome;
    csv = NULL;
    chrome = NULL;
    int csv_rc = c2 ? sp_csv_close(c2, 1, werr, sizeof werr) : 0;
    if (t2 && sp_chrome_close(t2, csv_rc == 0, &rep->trace_dropped, werr, sizeof werr) != 0 && csv_rc == 0)
        csv_rc = -1;
    if (csv_rc != 0) {
        snprintf(err, errlen, "%s", werr);
        rc = 1;
        goto out;
    }
    add_analysis(rep, plan);
    {
        sp_report_figures tf; /* a whole training iteration around this allreduce (training.h) */
        sp_report_figures_of(rep, &tf);
        if (sp_training_eval(plan, plan->algo, tf.t_mean, &rep->training, err, errlen) != 0) {
            rc = 1;
            goto out;
        }
    }
    if (write_outputs) {
        snprintf(path, sizeof path, "%s/summary.json", plan->out);
        if (sp_summary_write(path, SPARSIM_VERSION, sp_backend_name(), sp_plan_echo(plan), rep, err, errlen) != 0) {
            rc = 1;
            goto out;
        }
    }
    if (plan->dump_grads[0] && sp_backend_is_root() && dump_gradients(rs, err, errlen) != 0) {
        rc = 1;
        goto out;
    }
    if (plan->dump_result[0] && sp_backend_is_root()) {
        uint64_t shape[1] = {plan->n};
        if (!rep->result) {
            snprintf(err, errlen, "no result to dump");
            rc = 1;
            goto out;
        }
        if (sp_npy_write(plan->dump_result, rep->result, 1, shape, err, errlen) != 0) {
            rc = 1;
            goto out;
        }
    }
    rc = 0;
out:
    baseline_collect(&base, 0, rep, werr, sizeof werr); /* not needed: it leaves */
    if (csv)
        sp_csv_close(csv, 0, werr, sizeof werr);
    if (chrome)
        sp_chrome_close(chrome, 0, NULL, werr, sizeof werr);
    sp_acct_close(acct);
    sp_disturb_free(disturb); /* what it found stays in rep->disturb */
    sp_model_free(model);
    if (rs->source)
        rs->source->close(rs->source);
    free(rs);
    return rc;
}
