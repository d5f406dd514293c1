/* profile.c - workload profiles: built in, read, written, checked, scaled.
 *
 * Built-in profiles:
 *  - generic: L layers (--grad-layers) of sizes spread over three decades
 *    (real models mix tensors of tens to hundreds of thousands of entries),
 *    medians log-uniform in [1/S, S] (--grad-spread), the within-layer
 *    spread, zeros, sharing, persistence and drift of the kinds' defaults.
 *  - vgg16, lstm, bert, resnet20, alexnet, resnet50, lstm-ptb: the papers'
 *    models with their real layer tables (paper_models.c), and gpt2-xl
 *    (GPT-2 XL's table, 1.56B), each tensor given its kind's parameters.
 * Kind parameters (relative log10 scale, within-layer log10 spread, zeros)
 * and the global ones come from recorded traces of real training (the CNN,
 * LSTM and transformer of traces/record_gradients.py, fitted by `sparsim
 * profile`); bench/README.md shows the fit against those traces.
 */
#include "profile.h"
#include "hash.h"
#include "paper_models.h"
#include "traces/trace.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Per family of models and kind of tensor: the median log10 scale relative
 * to the family's weight matrices, the spread of log10 scales within a
 * tensor of that kind, and the share of exact zeros; and per family the
 * global parameters.  Fitted to the recorded traces of traces/
 * record_gradients.py (P = 8, iterations 50-81 and 200-231): `sparsim
 * profile --grad-file TRACE --match 6`, then traces/kind_table.py PROFILE
 * LAYERS --c FAMILY prints these rows (bench/README.md section 6 has the
 * commands and the fit against the traces). */
typedef struct {
    const char *family, *kind;
    double log10_scale, log10_spread, zeros;
} kind_params;

static const kind_params kinds[] = {
    /* a VGG-like CNN with BatchNorm on digits (66k entries in conv weights) */
    {"cnn", "bn_bias", 0.202, 0.114, 0.0},
    {"cnn", "bn_weight", 0.305, 0.120, 0.0},
    {"cnn", "conv_weight", 0.000, 0.140, 0.0},
    {"cnn", "linear_bias", -0.406, 0.137, 0.1469},
    {"cnn", "linear_weight", -0.381, 0.719, 0.1622},
    /* a two-layer character LSTM */
    {"lstm", "embedding", -0.044, 0.369, 0.5748},
    {"lstm", "linear_bias", 1.020, 0.366, 0.0},
    {"lstm", "linear_weight", 0.407, 0.457, 0.0},
    {"lstm", "lstm_bias", 0.474, 0.328, 0.0},
    {"lstm", "lstm_weight_hh", 0.000, 0.269, 0.0},
    {"lstm", "lstm_weight_ih", 0.267, 0.303, 0.0},
    /* a small transformer encoder trained with masked-token prediction */
    {"transformer", "embedding", 0.767, 0.337, 0.0},
    {"transformer", "layernorm_bias", 1.136, 0.194, 0.0},
    {"transformer", "layernorm_weight", 1.050, 0.214, 0.0},
    {"transformer", "linear_bias", 0.706, 1.095, 0.0026},
    {"transformer", "linear_weight", 0.000, 0.774, 0.0},
};

typedef struct {
    const char *family;
    double common, mean, refresh, keep, scale_sd, scale_corr, spikes, spike_scale;
} family_globals;

static const family_globals globals[] = {
    {"cnn", 0.003614, 0.03931, 225, 0, 0.05659, 0.7679, 0.006185, 4.296},
    {"lstm", 0.06533, 0.0729, 0, 0, 0.02647, 0.6457, 0.2372, 1.555},
    {"transformer", 0.02983, 0.03069, 39.22, 0, 0.1053, 0.6094, 0.003889, 5.375},
};

/* How much the workers' gradient sizes differ within an iteration (rank_sd:
 * the standard deviation of ln of a rank's own scale; rank_corr: its
 * persistence from one iteration to the next), per family and batch per
 * worker: `sparsim profile` fitted on traces of traces/record_gradients.py,
 * P = 8 workers, 300 iterations, iterations 20-35 and 284-299 recorded
 * (bench/rank_scale.py; the table and the commands in bench/README.md
 * section 22).  The batches are the papers' own where the family holds a
 * paper model at it (algorithms.md: Ok-Topk's VGG-16 16, gTop-k's VGG-16 and
 * ResNet-20 32, ResNet-50 64; Ok-Topk's LSTM 2, gTop-k's AN4 LSTM 8 and PTB
 * LSTM 20; BERT 8) and a small and a large one around them.  The traces are
 * the recorder's models (100-300k parameters on digits and Debian's texts),
 * not the papers' at their size: a chosen stand-in.  Rows in ascending
 * batch within a family. */
typedef struct {
    const char *family;
    int batch;
    double rank_sd, rank_corr;
} rank_row;

static const rank_row rank_rows[] = {
    /* family, images or sequences per worker, rank_sd, rank_corr */
    {"cnn", 4, 2.180, 0.00},          {"cnn", 16, 1.592, 0.00},         {"cnn", 32, 1.016, 0.03},
    {"cnn", 64, 0.675, 0.00},         {"lstm", 2, 0.215, 0.00},         {"lstm", 8, 0.136, 0.10},
    {"lstm", 20, 0.124, 0.03},        {"lstm", 32, 0.111, 0.11},        {"transformer", 2, 0.225, 0.03},
    {"transformer", 8, 0.118, 0.00},  {"transformer", 32, 0.085, 0.08},
};

/* rank_sd and rank_corr of a family at a batch per worker: interpolated in
 * ln(batch) between the recorded batches, the nearest row's outside them */
static void rank_scale_at(const char *family, int batch, double *sd, double *corr)
{
    const rank_row *lo = NULL, *hi = NULL;
    for (size_t i = 0; i < sizeof rank_rows / sizeof rank_rows[0]; i++) {
        const rank_row *r = &rank_rows[i];
        if (strcmp(r->family, family) != 0)
            continue;
        if (r->batch <= batch)
            lo = r;
        if (r->batch >= batch && !hi)
            hi = r;
    }
    if (!lo)
        lo = hi;
    if (!hi)
        hi = lo;
    if (!lo) {
        *sd = *corr = 0;
        return;
    }
    double f = hi->batch > lo->batch ? (log(batch) - log(lo->batch)) / (log(hi->batch) - log(lo->batch)) : 0;
    *sd = lo->rank_sd + f * (hi->rank_sd - lo->rank_sd);
    *corr = lo->rank_corr + f * (hi->rank_corr - lo->rank_corr);
}

/* a kind the family's trace does not hold takes a related one's values */
static const char *const kind_fallback[][2] = {
    {"conv_bias", "bn_bias"},          {"bn_weight", "layernorm_weight"}, {"bn_bias", "layernorm_bias"},
    {"layernorm_weight", "bn_weight"}, {"layernorm_bias", "bn_bias"},    {"lstm_bias", "linear_bias"},
    {"conv_weight", "linear_weight"},  {"lstm_weight_ih", "linear_weight"}, {"lstm_weight_hh", "linear_weight"},
    {"embedding", "linear_weight"},    {"linear_bias", "bn_bias"},       {"linear_weight", "conv_weight"},
};

/* the generic profile: the LSTM's fit (the trace the fit matches best) */
#define GENERIC_FAMILY "lstm"
#define DEFAULT_TAIL 0.30  /* the LSTM's weight matrices: 0.27-0.30 */
#define DEFAULT_ZEROS 0.01 /* the LSTM's share of exact zeros (gradients.md) */

static const char *const builtin[] = {"generic", "vgg16",    "lstm",     "bert", "resnet20",
                                      "alexnet", "resnet50", "lstm-ptb", "gpt2-xl", NULL};

const char *const *sp_profile_builtin_names(void) { return builtin; }

int sp_profile_is_builtin(const char *name)
{
    for (int i = 0; builtin[i]; i++)
        if (!strcmp(builtin[i], name))
            return 1;
    return 0;
}

void sp_profile_free(sp_profile *p)
{
    free(p->layers);
    memset(p, 0, sizeof *p);
}

int sp_profile_copy(sp_profile *dst, const sp_profile *src)
{
    *dst = *src;
    dst->layers = malloc((size_t)src->nlayers * sizeof *dst->layers);
    if (!dst->layers) {
        memset(dst, 0, sizeof *dst);
        return -1;
    }
    memcpy(dst->layers, src->layers, (size_t)src->nlayers * sizeof *dst->layers);
    return 0;
}

int sp_profile_slice(sp_profile *dst, const sp_profile *src, uint64_t lo, uint64_t hi)
{
    memset(dst, 0, sizeof *dst);
    if (!(lo < hi && hi <= src->n))
        return -1;
    *dst = *src;
    dst->n = hi - lo;
    dst->nlayers = 0;
    dst->layers = malloc((size_t)src->nlayers * sizeof *dst->layers);
    if (!dst->layers) {
        memset(dst, 0, sizeof *dst);
        return -1;
    }
    for (int i = 0; i < src->nlayers; i++) {
        const sp_profile_layer *l = &src->layers[i];
        uint64_t a = l->offset > lo ? l->offset : lo, b = l->offset + l->size < hi ? l->offset + l->size : hi;
        if (a >= b)
            continue;
        sp_profile_layer *d = &dst->layers[dst->nlayers++];
        *d = *l;
        d->offset = a - lo;
        d->size = b - a;
    }
    return 0;
}

int sp_profile_layer_of(const sp_profile *p, uint64_t i)
{
    int lo = 0, hi = p->nlayers - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (p->layers[mid].offset <= i)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

int sp_profile_check(const sp_profile *p, char *err, size_t errlen)
{
    const char *who = p->name[0] ? p->name : "profile";
    if (p->n < 1 || p->n > 2147483647ull) {
        snprintf(err, errlen, "%s: \"n\" must be in 1..2^31-1", who);
        return -1;
    }
    if (p->nlayers < 1) {
        snprintf(err, errlen, "%s: \"layers\" must hold at least one layer", who);
        return -1;
    }
    uint64_t at = 0;
    for (int i = 0; i < p->nlayers; i++) {
        const sp_profile_layer *l = &p->layers[i];
        if (l->offset != at || l->size < 1) {
            snprintf(err, errlen, "%s: layer %d (%s) must start at %llu and hold at least one entry", who, i, l->name,
                     (unsigned long long)at);
            return -1;
        }
        if (!isfinite(l->log10_scale) || fabs(l->log10_scale) > 30) {
            snprintf(err, errlen, "%s: layer %d (%s): \"log10_scale\" must be a number in [-30, 30]", who, i,
                     l->name);
            return -1;
        }
        if (!(l->log10_spread >= 0 && l->log10_spread <= 3)) {
            snprintf(err, errlen, "%s: layer %d (%s): \"log10_spread\" must be in [0, 3]", who, i, l->name);
            return -1;
        }
        if (!(l->zeros >= 0 && l->zeros < 1)) {
            snprintf(err, errlen, "%s: layer %d (%s): \"zeros\" must be in [0, 1)", who, i, l->name);
            return -1;
        }
        at += l->size;
    }
    if (at != p->n) {
        snprintf(err, errlen, "%s: the layers cover %llu entries, \"n\" is %llu", who, (unsigned long long)at,
                 (unsigned long long)p->n);
        return -1;
    }
    if (!(p->common >= 0 && p->common < 1)) {
        snprintf(err, errlen, "%s: \"common\" must be in [0, 1)", who);
        return -1;
    }
    if (!(p->mean >= 0 && p->common + p->mean < 1)) {
        snprintf(err, errlen, "%s: \"mean\" must be at least 0, with common + mean below 1", who);
        return -1;
    }
    if (!(p->refresh >= 0 && p->refresh <= 1e9)) {
        snprintf(err, errlen, "%s: \"refresh\" must be in [0, 1e9] iterations", who);
        return -1;
    }
    if (!(p->keep >= 0 && p->keep <= 1)) {
        snprintf(err, errlen, "%s: \"keep\" must be in [0, 1]", who);
        return -1;
    }
    if (!(p->scale_sd >= 0 && p->scale_sd <= 3)) {
        snprintf(err, errlen, "%s: \"scale_sd\" must be in [0, 3]", who);
        return -1;
    }
    if (!(p->spikes >= 0 && p->spikes <= 0.5)) {
        snprintf(err, errlen, "%s: \"spikes\" must be in [0, 0.5]", who);
        return -1;
    }
    if (!(p->spike_scale >= 1 && p->spike_scale <= 100)) {
        snprintf(err, errlen, "%s: \"spike_scale\" must be in [1, 100]", who);
        return -1;
    }
    if (!(p->scale_corr >= 0 && p->scale_corr < 1)) {
        snprintf(err, errlen, "%s: \"scale_corr\" must be in [0, 1)", who);
        return -1;
    }
    if (!(p->rank_sd >= 0 && p->rank_sd <= 3)) {
        snprintf(err, errlen, "%s: \"rank_sd\" must be in [0, 3]", who);
        return -1;
    }
    if (!(p->rank_corr >= 0 && p->rank_corr < 1)) {
        snprintf(err, errlen, "%s: \"rank_corr\" must be in [0, 1)", who);
        return -1;
    }
    if (p->nnoise < 0 || p->nnoise > SP_NOISE_ROWS) {
        snprintf(err, errlen, "%s: \"noise\" must hold at most %d rows", who, SP_NOISE_ROWS);
        return -1;
    }
    for (int b = 0; b < p->nnoise; b++) {
        const sp_noise_row *w = &p->noise[b];
        if (!(w->spikes >= 0 && w->spikes <= 0.5) || !(w->spike_scale >= 1 && w->spike_scale <= 100)) {
            snprintf(err, errlen, "%s: noise row %d: \"spikes\" must be in [0, 0.5] and \"spike_scale\" in [1, 100]",
                     who, b);
            return -1;
        }
        if (b < p->nnoise - 1 && (!isfinite(w->upto) || (b > 0 && !(w->upto > p->noise[b - 1].upto)))) {
            snprintf(err, errlen, "%s: noise row %d: \"upto\" must be finite and above the row before's", who, b);
            return -1;
        }
    }
    return 0;
}

int sp_profile_scale_to(sp_profile *p, uint64_t n, char *err, size_t errlen)
{
    if (n == p->n)
        return 0;
    if (n < 1) {
        snprintf(err, errlen, "n must be at least 1");
        return -1;
    }
    /* keep the layers whose share survives (at least one entry each while n allows) */
    int L = p->nlayers;
    if ((uint64_t)L > n) {
        /* more layers than entries: merge the smallest trailing ones into one */
        L = (int)n;
    }
    uint64_t old = p->n, at = 0;
    double cum = 0;
    for (int i = 0; i < L; i++) {
        cum += (double)p->layers[i].size / (double)old;
        uint64_t end = i == L - 1 ? n : (uint64_t)llround(cum * (double)n);
        if (end < at + 1)
            end = at + 1;
        if (end > n - (uint64_t)(L - 1 - i))
            end = n - (uint64_t)(L - 1 - i);
        p->layers[i].offset = at;
        p->layers[i].size = end - at;
        p->layers[i].shaped = 0; /* another n: the tensors' shapes no longer hold */
        p->layers[i].rows = 0;
        at = end;
    }
    p->nlayers = L;
    p->n = n;
    return 0;
}

static const kind_params *kind_in(const char *family, const char *kind)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(kinds[i].family, family) && !strcmp(kinds[i].kind, kind))
            return &kinds[i];
    return NULL;
}

/* the family's values for a kind, a related kind's, or its weight matrices' */
static kind_params kind_of(const char *family, const char *kind)
{
    const kind_params *k = kind_in(family, kind);
    for (size_t i = 0; !k && i < sizeof kind_fallback / sizeof kind_fallback[0]; i++)
        if (!strcmp(kind_fallback[i][0], kind))
            k = kind_in(family, kind_fallback[i][1]);
    for (size_t i = 0; !k && i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(kinds[i].family, family) && kinds[i].log10_scale == 0.0)
            k = &kinds[i]; /* the reference kind */
    return *k;
}

static void set_globals(sp_profile *p, const char *family)
{
    const family_globals *g = &globals[0];
    for (size_t i = 0; i < sizeof globals / sizeof globals[0]; i++)
        if (!strcmp(globals[i].family, family))
            g = &globals[i];
    p->common = g->common;
    p->mean = g->mean;
    p->refresh = g->refresh;
    p->keep = g->keep;
    p->scale_sd = g->scale_sd;
    p->scale_corr = g->scale_corr;
    p->spikes = g->spikes;
    p->spike_scale = g->spike_scale;
}

static double unit(uint64_t seed, uint64_t stream, uint64_t l) { return sp_unit(sp_mix64(sp_stream_key(seed, stream, 0, 0) + l * SP_GOLD)); }

/* the generic profile: L layers, sizes spread over three decades */
static int build_generic(sp_profile *p, uint64_t n, uint64_t seed, int L, double spread, char *err, size_t errlen)
{
    if (n < 1) {
        snprintf(err, errlen, "the generic profile needs n");
        return -1;
    }
    if ((uint64_t)L > n)
        L = (int)n;
    p->layers = calloc((size_t)L, sizeof *p->layers);
    if (!p->layers) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    snprintf(p->name, sizeof p->name, "generic");
    snprintf(p->source, sizeof p->source,
             "generic: %d layers of sizes spread over three decades, medians log-uniform in [1/%g, %g]; within-layer "
             "spread, zeros, sharing, persistence and drift fitted to recorded traces of real training",
             L, spread, spread);
    double w[4096], sum = 0;
    if (L > 4096)
        L = 4096;
    for (int l = 0; l < L; l++) {
        w[l] = pow(10.0, 3.0 * unit(seed, SP_ST_LAYER_SIZE, (uint64_t)l));
        sum += w[l];
    }
    p->nlayers = L;
    p->n = n;
    uint64_t at = 0;
    double cum = 0;
    double ls = log10(spread > 1 ? spread : 1);
    for (int l = 0; l < L; l++) {
        cum += w[l] / sum;
        uint64_t end = l == L - 1 ? n : (uint64_t)llround(cum * (double)n);
        if (end < at + 1)
            end = at + 1;
        if (end > n - (uint64_t)(L - 1 - l))
            end = n - (uint64_t)(L - 1 - l);
        sp_profile_layer *ly = &p->layers[l];
        snprintf(ly->name, sizeof ly->name, "layer%d", l);
        snprintf(ly->kind, sizeof ly->kind, "other");
        ly->offset = at;
        ly->size = end - at;
        ly->log10_scale = (2.0 * unit(seed, SP_ST_LAYER_SCALE, (uint64_t)l) - 1.0) * ls;
        ly->log10_spread = DEFAULT_TAIL;
        ly->zeros = DEFAULT_ZEROS;
        at = end;
    }
    set_globals(p, GENERIC_FAMILY);
    return 0;
}

static int build_paper(sp_profile *p, const sp_paper_model *m, char *err, size_t errlen)
{
    p->layers = calloc((size_t)m->nlayers, sizeof *p->layers);
    if (!p->layers) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    snprintf(p->name, sizeof p->name, "%s", m->name);
    snprintf(p->source, sizeof p->source,
             "%s: layer table from the authors' code (sim/workload/paper_models.c); each tensor's scale, spread "
             "and zeros those of its kind, fitted to recorded traces of real training",
             m->description);
    p->nlayers = m->nlayers;
    p->n = m->n;
    uint64_t at = 0;
    for (int i = 0; i < m->nlayers; i++) {
        sp_profile_layer *ly = &p->layers[i];
        kind_params k = kind_of(m->family, m->layers[i].kind);
        snprintf(ly->name, sizeof ly->name, "%s", m->layers[i].name);
        snprintf(ly->kind, sizeof ly->kind, "%s", m->layers[i].kind);
        ly->offset = at;
        ly->size = m->layers[i].size;
        ly->log10_scale = k.log10_scale;
        ly->log10_spread = k.log10_spread;
        ly->zeros = k.zeros;
        at += ly->size;
    }
    set_globals(p, m->family);
    return 0;
}

static int get_num(const cJSON *o, const char *key, double *v, int required, const char *origin, const char *where,
                   char *err, size_t errlen)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!x) {
        if (required) {
            snprintf(err, errlen, "%s: %s\"%s\" is missing", origin, where, key);
            return -1;
        }
        return 0;
    }
    if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble)) {
        snprintf(err, errlen, "%s: %s\"%s\" must be a number", origin, where, key);
        return -1;
    }
    *v = x->valuedouble;
    return 0;
}

/* "noise": [{"upto": log10 sigma, "spikes": e, "spike_scale": k}, ..., {"spikes": e, "spike_scale": k}] */
static int parse_noise(const cJSON *j, const char *origin, sp_profile *out, char *err, size_t errlen)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "noise");
    out->nnoise = 0;
    if (!a)
        return 0;
    int nr = cJSON_GetArraySize(a);
    if (!cJSON_IsArray(a) || nr < 1 || nr > SP_NOISE_ROWS) {
        snprintf(err, errlen, "%s: \"noise\" must be an array of 1 to %d rows", origin, SP_NOISE_ROWS);
        return -1;
    }
    const cJSON *x;
    cJSON_ArrayForEach(x, a)
    {
        char where[32];
        sp_noise_row *w = &out->noise[out->nnoise];
        snprintf(where, sizeof where, "noise row %d: ", out->nnoise);
        int last = out->nnoise == nr - 1;
        if (!cJSON_IsObject(x) || get_num(x, "spikes", &w->spikes, 1, origin, where, err, errlen) != 0 ||
            get_num(x, "spike_scale", &w->spike_scale, 1, origin, where, err, errlen) != 0 ||
            (!last && get_num(x, "upto", &w->upto, 1, origin, where, err, errlen) != 0)) {
            if (!cJSON_IsObject(x))
                snprintf(err, errlen, "%s: %smust be an object", origin, where);
            return -1;
        }
        if (last)
            w->upto = INFINITY;
        out->nnoise++;
    }
    return 0;
}

int sp_profile_parse(const char *text, const char *origin, sp_profile *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithOpts(text, &end, 1);
    if (!j) {
        snprintf(err, errlen, "%s: malformed JSON", origin);
        return -1;
    }
    int rc = -1;
    if (!cJSON_IsObject(j)) {
        snprintf(err, errlen, "%s: a profile is a JSON object", origin);
        goto out;
    }
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(j, "name");
    snprintf(out->name, sizeof out->name, "%s", cJSON_IsString(nm) ? nm->valuestring : "profile");
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(j, "source");
    snprintf(out->source, sizeof out->source, "%s", cJSON_IsString(src) ? src->valuestring : origin);
    double n = 0;
    if (get_num(j, "n", &n, 1, origin, "", err, errlen) != 0)
        goto out;
    if (!(n >= 1 && n <= 2147483647.0) || n != floor(n)) {
        snprintf(err, errlen, "%s: \"n\" must be a whole number in 1..2^31-1", origin);
        goto out;
    }
    out->n = (uint64_t)n;
    set_globals(out, GENERIC_FAMILY);
    if (get_num(j, "common", &out->common, 1, origin, "", err, errlen) != 0 ||
        get_num(j, "mean", &out->mean, 1, origin, "", err, errlen) != 0 ||
        get_num(j, "refresh", &out->refresh, 1, origin, "", err, errlen) != 0 ||
        get_num(j, "keep", &out->keep, 1, origin, "", err, errlen) != 0 ||
        get_num(j, "scale_sd", &out->scale_sd, 1, origin, "", err, errlen) != 0 ||
        get_num(j, "scale_corr", &out->scale_corr, 1, origin, "", err, errlen) != 0 ||
        get_num(j, "spikes", &out->spikes, 0, origin, "", err, errlen) != 0 ||
        get_num(j, "spike_scale", &out->spike_scale, 0, origin, "", err, errlen) != 0 ||
        get_num(j, "rank_sd", &out->rank_sd, 0, origin, "", err, errlen) != 0 ||
        get_num(j, "rank_corr", &out->rank_corr, 0, origin, "", err, errlen) != 0)
        goto out;
    if (parse_noise(j, origin, out, err, errlen) != 0)
        goto out;
    const cJSON *layers = cJSON_GetObjectItemCaseSensitive(j, "layers");
    int nl = cJSON_GetArraySize(layers);
    if (!cJSON_IsArray(layers) || nl < 1 || nl > 10000000) {
        snprintf(err, errlen, "%s: \"layers\" must be a non-empty array", origin);
        goto out;
    }
    out->layers = calloc((size_t)nl, sizeof *out->layers);
    if (!out->layers) {
        snprintf(err, errlen, "out of memory reading %s", origin);
        goto out;
    }
    uint64_t at = 0;
    const cJSON *l;
    cJSON_ArrayForEach(l, layers)
    {
        char where[64];
        snprintf(where, sizeof where, "layer %d: ", out->nlayers);
        sp_profile_layer *ly = &out->layers[out->nlayers];
        double size = 0, zeros = 0;
        if (!cJSON_IsObject(l)) {
            snprintf(err, errlen, "%s: %sa layer is an object", origin, where);
            goto out;
        }
        if (get_num(l, "size", &size, 1, origin, where, err, errlen) != 0 ||
            get_num(l, "log10_scale", &ly->log10_scale, 1, origin, where, err, errlen) != 0 ||
            get_num(l, "log10_spread", &ly->log10_spread, 1, origin, where, err, errlen) != 0 ||
            get_num(l, "zeros", &zeros, 0, origin, where, err, errlen) != 0)
            goto out;
        if (!(size >= 1) || size != floor(size) || size > 2147483647.0) {
            snprintf(err, errlen, "%s: %s\"size\" must be a positive whole number", origin, where);
            goto out;
        }
        ly->size = (uint64_t)size;
        ly->zeros = zeros;
        const cJSON *rw = cJSON_GetObjectItemCaseSensitive(l, "rows");
        if (rw) {
            if (!cJSON_IsNumber(rw) || !(rw->valuedouble >= 0) || rw->valuedouble != floor(rw->valuedouble) ||
                rw->valuedouble > 2147483647.0) {
                snprintf(err, errlen, "%s: %s\"rows\" must be a whole number >= 0", origin, where);
                goto out;
            }
            ly->rows = (uint64_t)rw->valuedouble;
            ly->shaped = 1;
        }
        ly->offset = at;
        at += ly->size;
        const cJSON *ln = cJSON_GetObjectItemCaseSensitive(l, "name"), *lk = cJSON_GetObjectItemCaseSensitive(l, "kind");
        snprintf(ly->name, sizeof ly->name, "%s", cJSON_IsString(ln) ? ln->valuestring : "layer");
        snprintf(ly->kind, sizeof ly->kind, "%s", cJSON_IsString(lk) ? lk->valuestring : "");
        out->nlayers++;
    }
    char e2[300];
    if (sp_profile_check(out, e2, sizeof e2) != 0) {
        snprintf(err, errlen, "%s: %s", origin, e2);
        goto out;
    }
    rc = 0;
out:
    cJSON_Delete(j);
    if (rc)
        sp_profile_free(out);
    return rc;
}

int sp_profile_write(const sp_profile *p, FILE *f)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", p->name);
    cJSON_AddStringToObject(o, "source", p->source);
    cJSON_AddNumberToObject(o, "n", (double)p->n);
    cJSON_AddNumberToObject(o, "common", p->common);
    cJSON_AddNumberToObject(o, "mean", p->mean);
    cJSON_AddNumberToObject(o, "refresh", p->refresh);
    cJSON_AddNumberToObject(o, "keep", p->keep);
    cJSON_AddNumberToObject(o, "scale_sd", p->scale_sd);
    cJSON_AddNumberToObject(o, "scale_corr", p->scale_corr);
    cJSON_AddNumberToObject(o, "spikes", p->spikes);
    cJSON_AddNumberToObject(o, "spike_scale", p->spike_scale);
    cJSON_AddNumberToObject(o, "rank_sd", p->rank_sd);
    cJSON_AddNumberToObject(o, "rank_corr", p->rank_corr);
    cJSON *nt = p->nnoise > 0 ? cJSON_AddArrayToObject(o, "noise") : NULL;
    for (int b = 0; nt && b < p->nnoise; b++) {
        cJSON *x = cJSON_CreateObject();
        if (b < p->nnoise - 1)
            cJSON_AddNumberToObject(x, "upto", p->noise[b].upto);
        cJSON_AddNumberToObject(x, "spikes", p->noise[b].spikes);
        cJSON_AddNumberToObject(x, "spike_scale", p->noise[b].spike_scale);
        cJSON_AddItemToArray(nt, x);
    }
    cJSON *ls = cJSON_AddArrayToObject(o, "layers");
    for (int i = 0; ls && i < p->nlayers; i++) {
        const sp_profile_layer *l = &p->layers[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "name", l->name);
        if (l->kind[0])
            cJSON_AddStringToObject(x, "kind", l->kind);
        cJSON_AddNumberToObject(x, "size", (double)l->size);
        cJSON_AddNumberToObject(x, "log10_scale", l->log10_scale);
        cJSON_AddNumberToObject(x, "log10_spread", l->log10_spread);
        cJSON_AddNumberToObject(x, "zeros", l->zeros);
        if (l->shaped)
            cJSON_AddNumberToObject(x, "rows", (double)l->rows);
        cJSON_AddItemToArray(ls, x);
    }
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    int ok = text && fprintf(f, "%s\n", text) > 0;
    free(text);
    return ok ? 0 : -1;
}

static void apply_knobs(sp_profile *p, const sp_profile_knobs *k)
{
    if (!k)
        return;
    for (int i = 0; i < p->nlayers; i++) {
        if (k->tail >= 0)
            p->layers[i].log10_spread = k->tail;
        if (k->zeros >= 0)
            p->layers[i].zeros = k->zeros;
    }
    if (k->common >= 0)
        p->common = k->common;
    if (k->mean >= 0)
        p->mean = k->mean;
    if (k->refresh >= 0)
        p->refresh = k->refresh;
    if (k->keep >= 0)
        p->keep = k->keep;
    if (k->scale_sd >= 0)
        p->scale_sd = k->scale_sd;
    if (k->scale_corr >= 0)
        p->scale_corr = k->scale_corr;
    if (k->spikes >= 0)
        p->spikes = k->spikes;
    if (k->spike_scale >= 0)
        p->spike_scale = k->spike_scale;
    if (k->spikes >= 0 || k->spike_scale >= 0)
        p->nnoise = 0; /* the noise set by hand is every coordinate's */
    if (k->rank_sd >= 0)
        p->rank_sd = k->rank_sd;
    if (k->rank_corr >= 0)
        p->rank_corr = k->rank_corr;
}

int sp_profile_get(const char *name, uint64_t n, uint64_t seed, const sp_profile_knobs *knobs, sp_profile *out,
                   char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    int rc;
    const sp_paper_model *m = NULL;
    if (!strcmp(name, "generic")) {
        rc = build_generic(out, n, seed, knobs && knobs->layers > 0 ? knobs->layers : 16,
                           knobs && knobs->spread >= 1 ? knobs->spread : 10.0, err, errlen);
    } else if ((m = sp_paper_model_find(name))) {
        rc = build_paper(out, m, err, errlen);
    } else {
        char jerr[600];
        if (access(name, R_OK) != 0) {
            char names[200];
            snprintf(err, errlen, "unknown workload '%s' (built in: generic, %s; or a profile JSON file): %s", name,
                     sp_paper_model_names(", ", names, sizeof names), strerror(errno));
            return -1;
        }
        cJSON *j = sp_json_file_checked(name, 256u << 20, jerr, sizeof jerr);
        if (!j) {
            snprintf(err, errlen, "profile %s", jerr);
            return -1;
        }
        char *text = cJSON_PrintUnformatted(j);
        cJSON_Delete(j);
        if (!text) {
            snprintf(err, errlen, "out of memory reading %s", name);
            return -1;
        }
        rc = sp_profile_parse(text, name, out, err, errlen);
        free(text);
    }
    if (rc != 0)
        return -1;
    /* a paper's model at its authors' batch per worker (or --batch); the
     * generic profile only when a batch is given */
    int batch = knobs && knobs->batch > 0 ? knobs->batch : m ? m->batch : 0;
    if (batch > 0 && (m || !strcmp(name, "generic"))) {
        rank_scale_at(m ? m->family : GENERIC_FAMILY, batch, &out->rank_sd, &out->rank_corr);
        size_t len = strlen(out->source);
        snprintf(out->source + len, sizeof out->source - len,
                 "; workers' own scales (rank_sd %.3g, rank_corr %.2g) at %d %s per worker, from recorded traces "
                 "(bench/README.md section 22)",
                 out->rank_sd, out->rank_corr, batch, batch == 1 ? "sample" : "samples");
    }
    apply_knobs(out, knobs);
    if ((n && sp_profile_scale_to(out, n, err, errlen) != 0) || sp_profile_check(out, err, errlen) != 0) {
        sp_profile_free(out);
        return -1;
    }
    return 0;
}
