/* summary_json.c - summary.json of one run (its keys: summary_keys.h).
 *
 * The volume "as the bounds count it" (see DESIGN): for each phase, the
 * largest over ranks of max(bytes sent, bytes received) in that phase,
 * summed over the phases of one iteration.  It is held against the
 * algorithm's closed-form bound, which the caller puts in the report; bytes
 * everywhere, words (4 bytes) beside them where a paper's formula is quoted.
 */
#include "summary_keys.h"
#include "trace.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add_iteration(cJSON *its, const sp_report *rep, int it)
{
    const sp_iter_stats *st = &rep->iters[it];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, SPK_ITER, st->index);
    cJSON_AddNumberToObject(o, SPK_TIME, st->t_end - st->t_start);
    cJSON_AddNumberToObject(o, SPK_T_START, st->t_start);
    cJSON_AddNumberToObject(o, SPK_T_END, st->t_end);
    cJSON_AddNumberToObject(o, SPK_VOLUME_BYTES, (double)sp_report_iter_volume(rep, it));
    cJSON_AddNumberToObject(o, SPK_MESSAGES, (double)st->msgs);
    cJSON_AddNumberToObject(o, SPK_BYTES, (double)st->bytes);
    if (st->dense_warmup)
        cJSON_AddBoolToObject(o, SPK_DENSE_WARMUP, 1);
    if (rep->nstats) {
        cJSON *so = cJSON_AddObjectToObject(o, SPK_STATS);
        for (int i = 0; i < rep->nstats; i++) {
            if (!st->stat_count[i])
                continue;
            cJSON *x = cJSON_AddObjectToObject(so, rep->stat_names[i]);
            cJSON_AddNumberToObject(x, SPK_MIN, st->stat_min[i]);
            cJSON_AddNumberToObject(x, SPK_MEAN, st->stat_sum[i] / st->stat_count[i]);
            cJSON_AddNumberToObject(x, SPK_MAX, st->stat_max[i]);
        }
    }
    cJSON *po = cJSON_AddObjectToObject(o, SPK_PHASES);
    for (int ph = 0; ph < rep->nphases; ph++) {
        if (!sp_report_phase_used(rep, ph))
            continue;
        cJSON *x = cJSON_AddObjectToObject(po, rep->phase_names[ph]);
        cJSON_AddNumberToObject(x, SPK_TIME, st->phase_time[ph]);
        cJSON_AddNumberToObject(x, SPK_VOLUME_BYTES, (double)st->phase_volume[ph]);
        cJSON_AddNumberToObject(x, SPK_SENT_MAX, (double)st->phase_sent_max[ph]);
        cJSON_AddNumberToObject(x, SPK_RECV_MAX, (double)st->phase_recv_max[ph]);
    }
    cJSON_AddItemToArray(its, o);
}

static double ratio(double a, double b) { return b > 0 ? a / b : 0; }

/* what disturbed the run, against the same run undisturbed, and its
 * critical path phase by phase */
static void add_disturbance(cJSON *root, const sp_report *rep)
{
    const sp_report_disturb *d = rep->disturb;
    cJSON *o = cJSON_AddObjectToObject(root, SPK_DISTURBANCE);
    if (d->stragglers) {
        cJSON *x = cJSON_AddObjectToObject(o, SPK_D_STRAGGLERS);
        cJSON *ch = cJSON_AddArrayToObject(x, SPK_D_CHOSEN);
        for (int i = 0; i < d->nchosen; i++)
            cJSON_AddItemToArray(ch, cJSON_CreateNumber(d->chosen[i]));
        cJSON_AddNumberToObject(x, SPK_D_FRACTION, d->straggler_fraction);
        cJSON_AddNumberToObject(x, SPK_D_FACTOR, d->straggler_factor);
        cJSON_AddNumberToObject(x, SPK_D_CV, d->straggler_cv);
        cJSON_AddNumberToObject(x, SPK_D_COMPUTE, d->compute_s);
    }
    if (d->noise) {
        cJSON *x = cJSON_AddObjectToObject(o, SPK_D_NOISE);
        cJSON_AddNumberToObject(x, SPK_D_FRACTION, d->noise_fraction);
        cJSON_AddNumberToObject(x, SPK_D_LENGTH, d->noise_length);
        cJSON_AddStringToObject(x, SPK_D_KIND, d->noise_kind);
        cJSON_AddNumberToObject(x, SPK_D_DETOURS, (double)d->detours);
        cJSON_AddNumberToObject(x, SPK_D_HELD, d->detour_s);
    }
    if (d->links) {
        cJSON *x = cJSON_AddObjectToObject(o, SPK_D_LINKS);
        cJSON_AddStringToObject(x, SPK_D_TARGET, d->link_target);
        cJSON_AddNumberToObject(x, SPK_D_DEGRADED, d->links_degraded);
        cJSON_AddNumberToObject(x, SPK_D_OF, d->links_in_target);
        cJSON_AddNumberToObject(x, SPK_D_BW_FACTOR, d->bw_factor);
        cJSON_AddNumberToObject(x, SPK_D_EXTRA_LAT, d->extra_latency);
        cJSON *nm = cJSON_AddArrayToObject(x, SPK_D_NAMES);
        for (int i = 0; i < d->links_degraded && i < SP_REPORT_NAMED; i++)
            cJSON_AddItemToArray(nm, cJSON_CreateString(d->link_names[i]));
    }
    if (d->background) {
        cJSON *x = cJSON_AddObjectToObject(o, SPK_D_BACKGROUND);
        cJSON_AddNumberToObject(x, SPK_D_LOAD, d->bg_load);
        cJSON_AddStringToObject(x, SPK_D_PATTERN, d->bg_pattern);
        cJSON_AddNumberToObject(x, SPK_D_FLOW, (double)d->bg_flow);
        cJSON_AddNumberToObject(x, SPK_D_RATE, d->bg_rate);
        cJSON_AddNumberToObject(x, SPK_D_HOSTS, d->bg_hosts);
        cJSON_AddNumberToObject(x, SPK_D_FLOWS, (double)d->bg_flows);
        cJSON_AddNumberToObject(x, SPK_BYTES, (double)d->bg_bytes);
    }
    double tb = sp_report_base_time(rep);
    if (d->have_baseline) {
        sp_report_figures f;
        sp_report_figures_of(rep, &f);
        cJSON *b = cJSON_AddObjectToObject(o, SPK_D_BASELINE);
        cJSON_AddNumberToObject(cJSON_AddObjectToObject(b, SPK_TIME_PER_ITER), SPK_MEAN, tb);
        cJSON *bp = cJSON_AddObjectToObject(b, SPK_PHASES);
        cJSON *ps = cJSON_CreateObject();
        for (int ph = 0; ph < rep->nphases; ph++) {
            double t0 = sp_report_phase_mean(rep, ph, 1);
            if (!sp_report_phase_used(rep, ph) && !(t0 > 0))
                continue;
            cJSON_AddNumberToObject(bp, rep->phase_names[ph], t0);
            cJSON_AddNumberToObject(ps, rep->phase_names[ph], ratio(sp_report_phase_mean(rep, ph, 0), t0));
        }
        cJSON_AddNumberToObject(o, SPK_D_SLOWDOWN, ratio(f.t_mean, tb));
        cJSON_AddItemToObject(o, SPK_D_PHASE_SLOWDOWN, ps);
    }
    cJSON *its = cJSON_AddArrayToObject(o, SPK_ITERATIONS);
    for (int it = 0; it < rep->niters; it++) {
        const sp_iter_stats *st = &rep->iters[it];
        cJSON *x = cJSON_CreateObject();
        double t = st->t_end - st->t_start;
        cJSON_AddNumberToObject(x, SPK_ITER, st->index);
        cJSON_AddNumberToObject(x, SPK_TIME, t);
        if (d->have_baseline) {
            cJSON_AddNumberToObject(x, SPK_D_BASE_TIME, d->base_time[it]);
            cJSON_AddNumberToObject(x, SPK_D_SLOWDOWN, ratio(t, d->base_time[it]));
        }
        if (d->stragglers) {
            cJSON_AddNumberToObject(x, SPK_D_SLOWEST_RANK, d->slowest_rank[it]);
            cJSON_AddNumberToObject(x, SPK_D_SLOWEST_FACTOR, d->slowest_factor[it]);
            cJSON_AddNumberToObject(x, SPK_D_SLOWED, d->slowed[it]);
        }
        cJSON *po = cJSON_AddObjectToObject(x, SPK_PHASES);
        for (int ph = 0; ph < rep->nphases; ph++) {
            const sp_report_crit *c = &d->crit[(size_t)it * SP_MAX_PHASES + (size_t)ph];
            double b = d->have_baseline ? d->base_phase[(size_t)it * SP_MAX_PHASES + (size_t)ph] : 0;
            if (!(st->phase_time[ph] > 0) && !(b > 0))
                continue;
            cJSON *y = cJSON_AddObjectToObject(po, rep->phase_names[ph]);
            cJSON_AddNumberToObject(y, SPK_TIME, st->phase_time[ph]);
            if (d->have_baseline) {
                cJSON_AddNumberToObject(y, SPK_D_BASE_TIME, b);
                cJSON_AddNumberToObject(y, SPK_D_SLOWDOWN, ratio(st->phase_time[ph], b));
            }
            cJSON_AddNumberToObject(y, SPK_D_LAST_RANK, c->last_rank);
            cJSON_AddNumberToObject(y, SPK_D_CRIT_RANK, c->crit_rank);
            cJSON_AddNumberToObject(y, SPK_D_CRIT_WORK, c->crit_work);
            if (c->msg_src >= 0) {
                cJSON *m = cJSON_AddObjectToObject(y, SPK_D_CRIT_MSG);
                cJSON_AddNumberToObject(m, SPK_D_SRC, c->msg_src);
                cJSON_AddNumberToObject(m, SPK_D_DST, c->msg_dst);
                cJSON_AddNumberToObject(m, SPK_TIME, c->msg_secs);
                cJSON *r = cJSON_AddArrayToObject(m, SPK_D_ROUTE);
                char buf[sizeof c->route];
                snprintf(buf, sizeof buf, "%s", c->route);
                char *save = NULL;
                for (char *l = strtok_r(buf, ",", &save); l; l = strtok_r(NULL, ",", &save))
                    cJSON_AddItemToArray(r, cJSON_CreateString(l));
            }
        }
        cJSON_AddItemToArray(its, x);
    }
    cJSON_AddNumberToObject(o, SPK_D_SLICES, (double)d->slices);
    cJSON_AddNumberToObject(o, SPK_D_SLICES_DROPPED, (double)d->slices_dropped);
}

static cJSON *build(const char *version, const char *backend, cJSON *config, const sp_report *rep)
{
    sp_report_figures f;
    sp_report_figures_of(rep, &f);
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, SPK_SCHEMA, SPK_SCHEMA_VERSION);
    cJSON_AddStringToObject(root, SPK_VERSION, version);
    cJSON_AddItemToObject(root, SPK_CONFIG, config ? config : cJSON_CreateObject());
    cJSON_AddStringToObject(root, SPK_BACKEND, backend);
    cJSON_AddNumberToObject(root, SPK_K, (double)rep->k);
    cJSON *plat = cJSON_AddObjectToObject(root, SPK_PLATFORM);
    cJSON_AddNumberToObject(plat, SPK_ALPHA, rep->alpha);
    cJSON_AddNumberToObject(plat, SPK_BANDWIDTH, rep->beta > 0 ? 1.0 / rep->beta : 0);

    cJSON *phases = cJSON_AddArrayToObject(root, SPK_PHASES);
    for (int ph = 0; ph < rep->nphases; ph++)
        if (sp_report_phase_used(rep, ph))
            cJSON_AddItemToArray(phases, cJSON_CreateString(rep->phase_names[ph]));
    cJSON *its = cJSON_AddArrayToObject(root, SPK_ITERATIONS);
    for (int it = 0; it < rep->niters; it++)
        add_iteration(its, rep, it);

    cJSON *tpi = cJSON_AddObjectToObject(root, SPK_TIME_PER_ITER);
    cJSON_AddNumberToObject(tpi, SPK_MEAN, f.t_mean);
    cJSON_AddNumberToObject(tpi, SPK_MAX, f.t_max);
    cJSON_AddNumberToObject(tpi, SPK_MIN, f.t_min);
    cJSON *vol = cJSON_AddObjectToObject(root, SPK_VOLUME);
    cJSON_AddStringToObject(vol, SPK_DEFINITION,
                            "per phase, max over ranks of max(bytes sent, bytes received); summed over phases");
    cJSON_AddNumberToObject(vol, SPK_VOL_MEAN, f.vol_mean);
    cJSON_AddNumberToObject(vol, SPK_VOL_MAX, (double)f.vol_max);
    cJSON_AddNumberToObject(vol, SPK_VOL_WORDS_MAX, (double)f.vol_max / 4.0);

    const sp_report_bound *b = &rep->bound;
    if (b->known) {
        cJSON *bo = cJSON_AddObjectToObject(root, SPK_BOUND);
        cJSON_AddStringToObject(bo, SPK_FORMULA, b->formula);
        cJSON_AddStringToObject(bo, SPK_SOURCE, b->source);
        cJSON_AddNumberToObject(bo, SPK_WORDS, b->words);
        cJSON_AddNumberToObject(bo, SPK_BYTES_KEY, 4.0 * b->words);
        cJSON_AddNumberToObject(bo, SPK_RATIO, b->words > 0 ? (double)f.vol_max / (4.0 * b->words) : 0);
        if (b->floor_words > 0)
            cJSON_AddNumberToObject(bo, SPK_FLOOR_WORDS, b->floor_words);
        cJSON_AddStringToObject(bo, SPK_LOWER_FORMULA, b->lower_formula);
        cJSON_AddNumberToObject(bo, SPK_LOWER_WORDS, b->lower_words);
        cJSON_AddNumberToObject(bo, SPK_LOWER_BYTES, 4.0 * b->lower_words);
    }
    if (rep->predicted_s >= 0) {
        cJSON *pr = cJSON_AddObjectToObject(root, SPK_PREDICTION);
        cJSON_AddStringToObject(pr, SPK_MODEL, "alpha-beta, uncontended, compute not included");
        cJSON_AddNumberToObject(pr, SPK_TIME, rep->predicted_s);
        cJSON_AddNumberToObject(pr, SPK_MEASURED_OVER_PREDICTED,
                                rep->predicted_s > 0 ? f.t_mean / rep->predicted_s : 0);
    }
    cJSON *ranks = cJSON_AddObjectToObject(root, SPK_RANKS);
    cJSON_AddNumberToObject(ranks, SPK_SENT_MEAN, f.sent_mean);
    cJSON_AddNumberToObject(ranks, SPK_SENT_MAX_R, (double)f.sent_max);
    cJSON_AddNumberToObject(ranks, SPK_RECV_MEAN, f.recv_mean);
    cJSON_AddNumberToObject(ranks, SPK_RECV_MAX_R, (double)f.recv_max);
    cJSON *sa = cJSON_AddArrayToObject(ranks, SPK_SENT_ARRAY);
    cJSON *ra = cJSON_AddArrayToObject(ranks, SPK_RECV_ARRAY);
    for (int r = 0; r < rep->nranks; r++) {
        cJSON_AddItemToArray(sa, cJSON_CreateNumber((double)rep->rank_sent[r]));
        cJSON_AddItemToArray(ra, cJSON_CreateNumber((double)rep->rank_recv[r]));
    }
    if (rep->gpus_per_node) {
        cJSON_AddNumberToObject(ranks, SPK_GPUS_PER_NODE, rep->gpus_per_node);
        cJSON_AddNumberToObject(ranks, SPK_NODES, rep->nranks / rep->gpus_per_node);
        cJSON *so = cJSON_AddArrayToObject(ranks, SPK_SENT_OFF_ARRAY);
        cJSON *ro = cJSON_AddArrayToObject(ranks, SPK_RECV_OFF_ARRAY);
        for (int r = 0; r < rep->nranks; r++) {
            cJSON_AddItemToArray(so, cJSON_CreateNumber((double)rep->rank_sent_off[r]));
            cJSON_AddItemToArray(ro, cJSON_CreateNumber((double)rep->rank_recv_off[r]));
        }
    }
    cJSON_AddNumberToObject(root, SPK_MESSAGES, (double)rep->total_msgs);
    cJSON_AddNumberToObject(root, SPK_BYTES, (double)rep->total_bytes);
    cJSON_AddNumberToObject(root, SPK_WALL, rep->wall_seconds);
    cJSON_AddNumberToObject(root, SPK_MSG_RATE, sp_report_message_rate(rep));
    cJSON_AddNumberToObject(root, SPK_TRACE_DROPPED, (double)rep->trace_dropped);
    const sp_wall_profile *wp = &rep->wall_profile;
    if (wp->samples) {
        cJSON *w = cJSON_AddObjectToObject(root, SPK_WALL_PROFILE);
        cJSON_AddNumberToObject(w, SPK_WP_SAMPLES, (double)wp->samples);
        cJSON_AddNumberToObject(w, SPK_WP_CPU, wp->cpu_s);
        static const char *const name[SP_WALL_NCLASS] = {SPK_WP_MODEL, SPK_WP_ENGINE, SPK_WP_SPARSIM, SPK_WP_LIBS};
        for (int c = 0; c < SP_WALL_NCLASS; c++)
            cJSON_AddNumberToObject(w, name[c], sp_report_wall_share(rep, c));
    }
    const sp_flow_solver *fs = &rep->flow_solver;
    if (fs->on) {
        cJSON *w = cJSON_AddObjectToObject(root, SPK_FLOW_SOLVER);
        cJSON_AddNumberToObject(w, SPK_FS_SOLVES, (double)fs->solves);
        cJSON_AddNumberToObject(w, SPK_FS_RERATED, (double)fs->rerated);
        cJSON_AddNumberToObject(w, SPK_FS_SOLVED, (double)fs->solved);
        cJSON_AddNumberToObject(w, SPK_FS_OPENED, (double)fs->opened);
        cJSON_AddNumberToObject(w, SPK_FS_ALONE, (double)fs->alone);
        cJSON_AddNumberToObject(w, SPK_FS_SWITCHES, (double)fs->switches);
        cJSON_AddNumberToObject(w, SPK_FS_LOOKED, (double)fs->looked);
    }
    sp_nccl_figures nc;
    sp_nccl_figures_of((double)rep->n, rep->nranks, f.t_mean, &nc);
    cJSON *no = cJSON_AddObjectToObject(root, SPK_NCCL);
    cJSON_AddNumberToObject(no, SPK_NC_SIZE, nc.size_bytes);
    cJSON_AddBoolToObject(no, SPK_NC_EFFECTIVE, rep->sparse);
    if (rep->sparse) /* what a rank selects: k pairs of an int32 index and a float32 value */
        cJSON_AddNumberToObject(no, SPK_NC_PAYLOAD, 8.0 * (double)rep->k);
    cJSON_AddNumberToObject(no, SPK_TIME, nc.time_s);
    cJSON_AddNumberToObject(no, SPK_NC_ALGBW, nc.algbw_Bps);
    cJSON_AddNumberToObject(no, SPK_NC_BUSBW, nc.busbw_Bps);
    cJSON_AddNumberToObject(no, SPK_NC_FACTOR, nc.bus_factor);
    if (rep->training.on) {
        const sp_report_training *t = &rep->training;
        cJSON *tr = cJSON_AddObjectToObject(root, SPK_TRAINING);
        cJSON_AddStringToObject(tr, SPK_TR_MODEL, t->model);
        cJSON_AddNumberToObject(tr, SPK_TR_COMPUTE, t->compute_s);
        cJSON_AddNumberToObject(tr, SPK_TR_FWD, t->fwd_s);
        cJSON_AddNumberToObject(tr, SPK_TR_BWD, t->bwd_s);
        cJSON_AddStringToObject(tr, SPK_TR_SOURCE, t->compute_source);
        cJSON_AddNumberToObject(tr, SPK_TR_BATCH, t->batch);
        cJSON_AddBoolToObject(tr, SPK_TR_OVERLAP, t->overlap);
        cJSON_AddBoolToObject(tr, SPK_TR_OVERLAPPED, t->overlapped);
        cJSON_AddStringToObject(tr, SPK_TR_RULE, t->overlap_rule);
        cJSON_AddNumberToObject(tr, SPK_TR_ALLREDUCE, t->comm_s);
        cJSON_AddNumberToObject(tr, SPK_TR_ITER, t->iter_s);
        cJSON_AddNumberToObject(tr, SPK_TR_SAMPLES, t->samples_per_s);
    }
    if (rep->disturb)
        add_disturbance(root, rep);
    return root;
}

int sp_summary_write(const char *path, const char *version, const char *backend, cJSON *config,
                     const sp_report *rep, char *err, size_t errlen)
{
    cJSON *root = build(version, backend, config, rep);
    int rc = sp_json_write(path, root, err, errlen);
    cJSON_Delete(root);
    return rc;
}
