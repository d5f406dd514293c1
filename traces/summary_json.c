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

static cJSON *build(const char *version, const char *backend, cJSON *config, const sp_report *rep)
{
    sp_report_figures f;
    sp_report_figures_of(rep, &f);
    cJSON *root = cJSON_CreateObject();
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
    cJSON_AddNumberToObject(root, SPK_MESSAGES, (double)rep->total_msgs);
    cJSON_AddNumberToObject(root, SPK_BYTES, (double)rep->total_bytes);
    cJSON_AddNumberToObject(root, SPK_WALL, rep->wall_seconds);
    cJSON_AddNumberToObject(root, SPK_TRACE_DROPPED, (double)rep->trace_dropped);
    return root;
}

int sp_summary_write(const char *path, const char *version, const char *backend, cJSON *config,
                     const sp_report *rep, char *err, size_t errlen)
{
    cJSON *root = build(version, backend, config, rep);
    char *text = root ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (!text) {
        snprintf(err, errlen, "out of memory writing %s", path);
        return -1;
    }
    sp_part_file pf;
    if (sp_part_open(&pf, path, err, errlen) != 0) {
        free(text);
        return -1;
    }
    int ok = fputs(text, pf.f) >= 0 && fputc('\n', pf.f) != EOF;
    free(text);
    if (sp_part_close(&pf, ok, err, errlen) != 0 || !ok) {
        if (!ok)
            snprintf(err, errlen, "error writing %s", path);
        return -1;
    }
    return 0;
}
