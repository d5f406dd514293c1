/* run.c - the run driver: plan in, P ranks of one algorithm, reports out.
 *
 * It resolves the plan (gradient file, payload mode), opens the writers,
 * lets the backend start the ranks, and each rank runs sp_rank_main: per
 * iteration a free synchronisation (as the reference codes' barrier after
 * each allreduce), the gradient added to the residual, the algorithm, and
 * the rank's figures folded into the run's per-iteration statistics.
 */
#include "internal.h"
#include "npy.h"
#include "workload.h"
#include "../algorithms/algorithm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define EXACT_MEMORY_BUDGET (6.0 * 1024 * 1024 * 1024) /* bytes, all ranks together */

static const sp_algorithm *g_algo; /* the algorithm of this run */
static sp_synth_params g_synth;

int sp_mkdirs(const char *path, char *err, size_t errlen)
{
    char buf[1100];
    snprintf(buf, sizeof buf, "%s", path);
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

static void fold_iteration(sp_ctx *c, double t0, double t1)
{
    sp_report *rep = c->run->rep;
    sp_iter_stats *st = &rep->iters[c->iter];
    st->t_start = t0;
    if (t1 > st->t_end)
        st->t_end = t1;
    uint64_t sent = 0, recv = 0;
    for (int ph = 0; ph < rep->nphases; ph++) {
        if (c->ph[ph].time > st->phase_time[ph])
            st->phase_time[ph] = c->ph[ph].time;
        uint64_t s = c->ph[ph].sent, r = c->ph[ph].recv;
        uint64_t v = s > r ? s : r;
        if (v > st->phase_volume[ph])
            st->phase_volume[ph] = v;
        if (s > st->phase_sent_max[ph])
            st->phase_sent_max[ph] = s;
        if (r > st->phase_recv_max[ph])
            st->phase_recv_max[ph] = r;
        sent += s;
        recv += r;
    }
    st->msgs += c->it_msgs;
    st->bytes += c->it_bytes;
    for (int i = 0; i < rep->nstats; i++) {
        if (!c->stat_set[i])
            continue;
        double v = c->stat_val[i];
        if (st->stat_count[i] == 0 || v < st->stat_min[i])
            st->stat_min[i] = v;
        if (st->stat_count[i] == 0 || v > st->stat_max[i])
            st->stat_max[i] = v;
        st->stat_sum[i] += v;
        st->stat_count[i]++;
        rep->stat_last[(size_t)i * (size_t)rep->nranks + (size_t)c->rank] = v;
    }
    rep->rank_sent[c->rank] += sent;
    rep->rank_recv[c->rank] += recv;
    rep->total_msgs += c->it_msgs;
    rep->total_bytes += c->it_bytes;
}

static void add_gradient(sp_ctx *c, float *acc)
{
    sp_runstate *rs = c->run;
    const sp_plan *p = rs->plan;
    uint64_t n = p->n;
    if (rs->grad_file_data) {
        const float *g = rs->grad_file_data + ((uint64_t)c->iter * (uint64_t)p->ranks + (uint64_t)c->rank) * n;
        for (uint64_t i = 0; i < n; i++)
            acc[i] += g[i];
    } else {
        sp_synth_add(&g_synth, p->seed, c->rank, c->iter, n, acc);
    }
}

void sp_rank_main(sp_ctx *c)
{
    sp_runstate *rs = c->run;
    sp_report *rep = rs->rep;
    const sp_plan *p = rs->plan;
    uint64_t n = p->n;
    float *acc = NULL, *result = NULL;
    if (rep->exact) {
        acc = calloc(n, sizeof *acc);
        result = malloc(n * sizeof *result);
        if (!acc || !result) {
            sp_fail(rs, "out of memory for the gradient of rank %d", c->rank);
            free(acc);
            free(result);
            return;
        }
    }
    int other = sp_phase_id(rs, "other");
    for (int it = 0; it < p->iters; it++) {
        /* the gradient is produced before the synchronisation: it stands for
         * the backward pass, which no allreduce time includes */
        c->iter = it;
        if (acc)
            add_gradient(c, acc);
        c->be->barrier(c);
        if (rs->failed)
            break;
        memset(c->ph, 0, sizeof c->ph);
        memset(c->stat_set, 0, sizeof c->stat_set);
        c->it_msgs = c->it_bytes = 0;
        c->iter = it;
        c->phase = other;
        double t0 = c->be->now(c);
        c->phase_t0 = t0;
        sp_algo_io io = {n, rep->k, acc, result, &rs->opts};
        /* dense warm-up, as the reference codes do before sparsifying */
        int warm = it < p->warmup;
        int rc = warm ? sp_ring_allreduce(c, &io) : g_algo->run(c, &io);
        if (rc != SP_OK) {
            sp_fail(rs, "%s failed on rank %d in iteration %d (error %d)", warm ? "ring (warm-up)" : g_algo->name,
                    c->rank, it, rc);
            break;
        }
        sp_phase_close(c);
        fold_iteration(c, t0, c->be->now(c));
        rep->iters[it].dense_warmup = warm;
        if (result && c->rank == 0 && rep->result_sum)
            for (uint64_t i = 0; i < n; i++)
                rep->result_sum[i] += result[i];
    }
    if (acc && rep->residual_sum && !rs->failed)
        for (uint64_t i = 0; i < n; i++)
            rep->residual_sum[i] += acc[i];
    if (!rs->failed && result) {
        if (!rep->result) {
            rep->result = malloc(n * sizeof *rep->result);
            if (!rep->result)
                sp_fail(rs, "out of memory for the result");
            else {
                memcpy(rep->result, result, n * sizeof *result);
                rs->first_result_rank = c->rank;
            }
        } else if (memcmp(rep->result, result, n * sizeof *result) != 0) {
            sp_fail(rs, "ranks %d and %d disagree on the global result", rs->first_result_rank, c->rank);
        }
    }
    free(acc);
    free(result);
    free(c->algo_state);
    c->algo_state = NULL;
}

void sp_report_free(sp_report *rep)
{
    free(rep->iters);
    free(rep->rank_sent);
    free(rep->rank_recv);
    free(rep->result);
    free(rep->result_sum);
    free(rep->residual_sum);
    free(rep->stat_last);
    memset(rep, 0, sizeof *rep);
}

static double now_wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int sp_run(const sp_plan *plan_in, sp_report *rep, char *err, size_t errlen)
{
    const sp_algorithm *a = sp_algorithm_find(plan_in->algo);
    if (!a) {
        memset(rep, 0, sizeof *rep);
        snprintf(err, errlen, "unknown algorithm '%s'", plan_in->algo);
        return 2;
    }
    return sp_run_algorithm(plan_in, a, rep, err, errlen);
}

int sp_run_algorithm(const sp_plan *plan_in, const sp_algorithm *algo, sp_report *rep, char *err, size_t errlen)
{
    static sp_plan plan; /* the effective plan (n and iters may come from the gradient file) */
    plan = *plan_in;
    memset(rep, 0, sizeof *rep);
    g_algo = algo;
    g_synth.layers = plan.grad_layers;
    g_synth.scale_spread = plan.grad_spread;
    g_synth.shared = plan.grad_shared;
    g_synth.persistence = plan.grad_persistence;
    sp_runstate rs;
    memset(&rs, 0, sizeof rs);
    rs.plan = &plan;
    rs.rep = rep;
    rs.dev = sp_device_find(plan.device);
    if (!rs.dev && !(rs.dev = sp_device_load(plan.device, err, errlen)))
        return 2;
    rs.opts = plan.opts;
    sp_npy grads = {0};
    if (plan.grad_file[0]) {
        if (sp_npy_read(plan.grad_file, &grads, err, errlen) != 0)
            return 2;
        int I;
        uint64_t Pf, nf;
        if (grads.ndim == 2) {
            I = 1;
            Pf = grads.shape[0];
            nf = grads.shape[1];
        } else if (grads.ndim == 3) {
            I = (int)grads.shape[0];
            Pf = grads.shape[1];
            nf = grads.shape[2];
        } else {
            snprintf(err, errlen, "%s has %d dimensions; expected (P, n) or (I, P, n)", plan.grad_file,
                     grads.ndim);
            sp_npy_free(&grads);
            return 2;
        }
        const char *why = NULL;
        char whybuf[200];
        if (Pf != (uint64_t)plan.ranks) {
            snprintf(whybuf, sizeof whybuf, "has %llu ranks, --ranks is %d", (unsigned long long)Pf, plan.ranks);
            why = whybuf;
        } else if (nf < 1 || nf > 2147483647ull) {
            why = "has a gradient length outside 1..2^31-1";
        } else if (plan.n_given && nf != plan.n) {
            snprintf(whybuf, sizeof whybuf, "has n = %llu, --n is %llu", (unsigned long long)nf,
                     (unsigned long long)plan.n);
            why = whybuf;
        } else if (I < 1) {
            why = "holds no iteration";
        } else if (plan.iters_given && plan.iters > I) {
            snprintf(whybuf, sizeof whybuf, "holds %d iteration(s), --iters asks for %d", I, plan.iters);
            why = whybuf;
        }
        if (why) {
            snprintf(err, errlen, "gradient file %s %s", plan.grad_file, why);
            sp_npy_free(&grads);
            return 2;
        }
        plan.n = nf;
        if (!plan.iters_given)
            plan.iters = I;
        rs.grad_file_data = grads.data;
        rs.grad_file_iters = I;
    }
    uint64_t k = sp_plan_k(&plan);
    if (k < 1 && g_algo->sparse) {
        snprintf(err, errlen, "n x density = %g selects no entry: raise --n or --density",
                 (double)plan.n * plan.density);
        sp_npy_free(&grads);
        return 2;
    }
    int P = plan.ranks;
    double need = (double)P * (double)plan.n * 8.0 +
                  (g_algo->exact_extra_bytes ? g_algo->exact_extra_bytes(P, plan.n, k) : 0.0);
    int exact;
    if (plan.payload == SP_PAYLOAD_EXACT)
        exact = 1;
    else if (plan.payload == SP_PAYLOAD_SIZE)
        exact = 0;
    else
        exact = need <= EXACT_MEMORY_BUDGET || plan.grad_file[0] || plan.dump_result[0];
    if (!exact && !g_algo->size_only_ok) {
        if (plan.payload == SP_PAYLOAD_SIZE)
            snprintf(err, errlen, "%s needs exact payloads (its message sizes depend on the data); drop --payload size",
                     g_algo->name);
        else
            snprintf(err, errlen, "%s needs exact payloads, which need %.1f GiB here; lower --ranks or --n",
                     g_algo->name, need / (1024.0 * 1024 * 1024));
        sp_npy_free(&grads);
        return 2;
    }
    rep->nranks = P;
    rep->niters = plan.iters;
    rep->n = plan.n;
    rep->k = k;
    rep->exact = exact;
    rep->iters = calloc((size_t)plan.iters, sizeof *rep->iters);
    rep->rank_sent = calloc((size_t)P, sizeof *rep->rank_sent);
    rep->rank_recv = calloc((size_t)P, sizeof *rep->rank_recv);
    rep->stat_last = calloc((size_t)P * SP_MAX_STATS, sizeof *rep->stat_last);
    if (exact) {
        rep->result_sum = calloc(plan.n, sizeof *rep->result_sum);
        rep->residual_sum = calloc(plan.n, sizeof *rep->residual_sum);
    }
    if (!rep->iters || !rep->rank_sent || !rep->rank_recv || !rep->stat_last || (exact && (!rep->result_sum || !rep->residual_sum))) {
        snprintf(err, errlen, "out of memory");
        sp_npy_free(&grads);
        return 1;
    }

    char path[1200];
    int write_outputs = plan.out[0] != '\0' && sp_backend_is_root();
    if (write_outputs) {
        if (sp_mkdirs(plan.out, err, errlen) != 0) {
            sp_npy_free(&grads);
            return 2;
        }
        /* a previous run's files must not pass for this run's */
        const char *names[] = {"messages.csv", "summary.json", "trace.json"};
        for (int i = 0; i < 3; i++) {
            snprintf(path, sizeof path, "%s/%s", plan.out, names[i]);
            remove(path);
        }
        if (plan.write_csv) {
            snprintf(path, sizeof path, "%s/messages.csv", plan.out);
            rs.csv = sp_csv_open(path, rep->phase_names, err, errlen);
            if (!rs.csv) {
                sp_npy_free(&grads);
                return 2;
            }
        }
        if (plan.write_trace) {
            snprintf(path, sizeof path, "%s/trace.json", plan.out);
            rs.chrome = sp_chrome_open(path, P, rep->phase_names, plan.trace_msgs, err, errlen);
            if (!rs.chrome) {
                if (rs.csv)
                    sp_csv_close(rs.csv, 0, err, errlen);
                sp_npy_free(&grads);
                return 2;
            }
        }
    }

    double w0 = now_wall();
    char rerr[512] = "";
    int rc = sp_backend_run(&rs, rerr, sizeof rerr);
    rep->wall_seconds = now_wall() - w0;
    sp_npy_free(&grads);
    int ok = rc == 0 && !rs.failed;
    char werr[300] = "";
    if (rs.csv && sp_csv_close(rs.csv, ok, werr, sizeof werr) != 0 && ok) {
        ok = 0;
        snprintf(rerr, sizeof rerr, "%s", werr);
    }
    if (rs.chrome && sp_chrome_close(rs.chrome, ok, &rep->trace_dropped, werr, sizeof werr) != 0 && ok) {
        ok = 0;
        snprintf(rerr, sizeof rerr, "%s", werr);
    }
    if (!ok) {
        snprintf(err, errlen, "%s", rerr[0] ? rerr : rs.errmsg);
        return rc == 2 ? 2 : 1;
    }
    if (write_outputs) {
        snprintf(path, sizeof path, "%s/summary.json", plan.out);
        if (sp_write_summary(&plan, rep, path, err, errlen) != 0)
            return 1;
    }
    if (plan.dump_result[0] && sp_backend_is_root()) {
        uint64_t shape[1] = {plan.n};
        if (!rep->result) {
            snprintf(err, errlen, "no result to dump");
            return 1;
        }
        if (sp_npy_write(plan.dump_result, rep->result, 1, shape, err, errlen) != 0)
            return 1;
    }
    return 0;
}
