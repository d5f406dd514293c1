/* disturb.c - the disturbances of a simulated run (see disturb.h): who is
 * slow in which iteration, when detours take a rank's CPU, the critical path
 * each rank carries, and what the report says of them.  Everything random is
 * a pure function of the seed and of keys (rank, iteration, detour number),
 * so a run is the same every time it is repeated with the same seed. */
#include "disturb.h"
#include "backend.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SLICES 200000 /* disturbance slices in trace.json */

/* streams of draws, one per use */
enum { ST_NOISE_OFFSET = 1, ST_NOISE_GAP, ST_DRAW, ST_LOGNORMAL };

int sp_disturb_stragglers_on(const sp_disturb_opts *o)
{
    return ((o->straggler_ranks[0] || o->straggler_fraction > 0) && o->straggler_factor != 1.0) ||
           o->straggler_cv > 0;
}
int sp_disturb_noise_on(const sp_disturb_opts *o) { return o->noise > 0; }
int sp_disturb_links_on(const sp_disturb_opts *o)
{
    return (o->degrade_links[0] || o->degrade_nic >= 0) && (o->degrade_bw != 1.0 || o->degrade_latency > 0);
}
int sp_disturb_background_on(const sp_disturb_opts *o) { return o->bg_load > 0; }
int sp_disturb_failure_on(const sp_disturb_opts *o) { return o->fail_rank >= 0; }

int sp_disturb_any(const sp_disturb_opts *o)
{
    return sp_disturb_stragglers_on(o) || sp_disturb_noise_on(o) || sp_disturb_links_on(o) ||
           sp_disturb_background_on(o) || sp_disturb_failure_on(o);
}

void sp_disturb_clear(sp_disturb_opts *o)
{
    o->straggler_ranks[0] = '\0';
    o->straggler_fraction = 0;
    o->straggler_cv = 0;
    o->noise = 0;
    o->degrade_links[0] = '\0';
    o->degrade_nic = -1;
    o->bg_load = 0;
    o->fail_rank = -1;
}

int sp_disturb_parse_ranks(const char *text, int *out, int max)
{
    int n = 0;
    const char *s = text;
    while (*s) {
        while (*s == ' ')
            s++;
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (end == s || errno || v < 0 || v > 1000000000L)
            return -1;
        if (n < max)
            out[n] = (int)v;
        n++;
        while (*end == ' ')
            end++;
        if (*end == ',') {
            s = end + 1;
            if (!*s)
                return -1;
        } else if (*end) {
            return -1;
        } else {
            s = end;
        }
    }
    return n;
}

/* a shown value with control characters escaped (a message stays one line) */
static const char *shown(const char *text, char *buf, size_t n)
{
    size_t w = 0;
    for (const unsigned char *s = (const unsigned char *)text; *s && w + 5 < n; s++) {
        if (*s < 0x20 || *s == 0x7f)
            w += (size_t)snprintf(buf + w, n - w, "\\x%02x", *s);
        else
            buf[w++] = (char)*s;
    }
    buf[w < n ? w : n - 1] = '\0';
    return buf;
}

int sp_disturb_check(const sp_disturb_opts *o, int P, const char *platform, int compute_priced, char *err,
                     size_t errlen)
{
    (void)platform;
    char b[300];
    if (o->straggler_ranks[0]) {
        int ranks[64];
        int n = sp_disturb_parse_ranks(o->straggler_ranks, ranks, 64);
        if (n <= 0) {
            snprintf(err, errlen, "--straggler-ranks: '%s' is not a list of ranks (e.g. 3 or 0,5,7)",
                     shown(o->straggler_ranks, b, sizeof b));
            return -1;
        }
        if (n > 64) {
            snprintf(err, errlen, "--straggler-ranks: at most 64 ranks (use --straggler-fraction for more)");
            return -1;
        }
        for (int i = 0; i < n; i++)
            if (ranks[i] >= P) {
                snprintf(err, errlen, "--straggler-ranks: rank %d is out of range (--ranks %d: 0..%d)", ranks[i], P,
                         P - 1);
                return -1;
            }
    }
    if (sp_disturb_stragglers_on(o) && !compute_priced) {
        snprintf(err, errlen,
                 "stragglers slow down local compute, which is free here (--device none and no --compute): give a "
                 "device profile (--device p100) or a base compute per iteration (--compute SECONDS)");
        return -1;
    }
    if (o->degrade_nic >= P) {
        snprintf(err, errlen, "--degrade-nic: rank %d is out of range (--ranks %d: 0..%d)", o->degrade_nic, P, P - 1);
        return -1;
    }
    if ((o->degrade_bw != 1.0 || o->degrade_latency > 0) && !o->degrade_links[0] && o->degrade_nic < 0) {
        snprintf(err, errlen, "--degrade-bw and --degrade-latency need the links they act on: --degrade-links CLASS "
                              "or --degrade-nic RANK");
        return -1;
    }
    if (o->degrade_count > 0 && o->degrade_fraction < 1.0) {
        snprintf(err, errlen, "--degrade-count and --degrade-fraction both say how many links: give one");
        return -1;
    }
    if ((o->degrade_count > 0 || o->degrade_fraction < 1.0) && !o->degrade_links[0]) {
        snprintf(err, errlen, "--degrade-count and --degrade-fraction choose among the links of --degrade-links CLASS");
        return -1;
    }
    if (sp_disturb_background_on(o) && P < 2) {
        snprintf(err, errlen, "--bg-load needs at least two hosts (--ranks 2 or more)");
        return -1;
    }
    if (o->fail_rank >= P) {
        snprintf(err, errlen, "--fail-rank: rank %d is out of range (--ranks %d: 0..%d)", o->fail_rank, P, P - 1);
        return -1;
    }
    return 0;
}

/* ---- draws ------------------------------------------------------------------ */

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

double sp_disturb_uniform(uint64_t seed, uint64_t stream, uint64_t a, uint64_t b)
{
    uint64_t h = mix(mix(mix(seed ^ 0x6a09e667f3bcc908ull) ^ stream) ^ a);
    h = mix(h ^ b);
    return (double)(h >> 11) * (1.0 / 9007199254740992.0);
}

/* a standard normal (Box-Muller on two draws of the keys) */
static double normal(uint64_t seed, uint64_t stream, uint64_t a, uint64_t b)
{
    double u1 = sp_disturb_uniform(seed, stream, a, 2 * b), u2 = sp_disturb_uniform(seed, stream, a, 2 * b + 1);
    return sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * M_PI * u2);
}

/* ---- the run's state ---------------------------------------------------------- */

typedef struct {
    double a, b;  /* the detour [a, b) at the cursor */
    uint64_t k;   /* its number */
    double own;   /* own work in this iteration */
    sp_path path; /* what the messages it heard carried */
} rank_state;

struct sp_disturb {
    sp_disturb_opts o;
    uint64_t seed;
    sp_report *rep;
    sp_report_disturb *out;
    int P;
    rank_state *ranks;
    unsigned char *chosen; /* chosen stragglers */
    unsigned char *drawn;  /* drawn stragglers of iteration drawn_iter */
    int *perm;
    int drawn_iter;
    double period; /* noise: mean time from one detour's start to the next */
    void (*slice)(void *, const sp_slice_event *);
    void *slice_to;
};

static void next_detour(const sp_disturb *d, int r, rank_state *s)
{
    double L = d->o.noise_length;
    if (d->o.noise_kind == SP_NOISE_PERIODIC) {
        double off = sp_disturb_uniform(d->seed, ST_NOISE_OFFSET, (uint64_t)r, 0) * d->period;
        s->a = off + (double)s->k * d->period;
    } else if (s->k == 0) {
        s->a = sp_disturb_uniform(d->seed, ST_NOISE_OFFSET, (uint64_t)r, 0) * d->period;
    } else {
        /* the gap after a detour is exponential, so that a detour starts on
         * average every `period` seconds */
        double u = sp_disturb_uniform(d->seed, ST_NOISE_GAP, (uint64_t)r, s->k);
        s->a = s->b - (d->period - L) * log(1.0 - u);
    }
    s->b = s->a + L;
    s->k++;
}

/* the cursor at the first detour that ends after t */
static void noise_to(const sp_disturb *d, int r, rank_state *s, double t)
{
    while (s->b <= t)
        next_detour(d, r, s);
}

sp_disturb *sp_disturb_new(const sp_disturb_opts *o, uint64_t seed, sp_report *rep, char *err, size_t errlen)
{
    sp_disturb *d = calloc(1, sizeof *d);
    sp_report_disturb *out = calloc(1, sizeof *out);
    int P = rep->nranks, I = rep->niters > 0 ? rep->niters : 1;
    if (!d || !out)
        goto oom;
    d->o = *o;
    d->seed = seed;
    d->rep = rep;
    d->out = out;
    d->P = P;
    d->drawn_iter = -1;
    d->ranks = calloc((size_t)P, sizeof *d->ranks);
    d->chosen = calloc((size_t)P, 1);
    d->drawn = calloc((size_t)P, 1);
    d->perm = calloc((size_t)P, sizeof *d->perm);
    out->slowest_rank = calloc((size_t)I, sizeof *out->slowest_rank);
    out->slowest_factor = calloc((size_t)I, sizeof *out->slowest_factor);
    out->slowed = calloc((size_t)I, sizeof *out->slowed);
    out->base_time = calloc((size_t)I, sizeof *out->base_time);
    out->base_phase = calloc((size_t)I * SP_MAX_PHASES, sizeof *out->base_phase);
    out->crit = calloc((size_t)I * SP_MAX_PHASES, sizeof *out->crit);
    if (!d->ranks || !d->chosen || !d->drawn || !d->perm || !out->slowest_rank || !out->slowest_factor ||
        !out->slowed || !out->base_time || !out->base_phase || !out->crit)
        goto oom;
    for (size_t i = 0; i < (size_t)I * SP_MAX_PHASES; i++) {
        out->crit[i].last_rank = out->crit[i].crit_rank = -1;
        out->crit[i].msg_src = out->crit[i].msg_dst = -1;
    }
    for (int it = 0; it < I; it++) {
        out->slowest_rank[it] = -1;
        out->slowest_factor[it] = 1.0;
    }
    out->compute_s = o->compute;
    if (sp_disturb_stragglers_on(o)) {
        out->stragglers = 1;
        out->straggler_factor = o->straggler_factor;
        out->straggler_cv = o->straggler_cv;
        out->straggler_fraction = o->straggler_fraction;
        int ranks[64];
        int n = o->straggler_ranks[0] ? sp_disturb_parse_ranks(o->straggler_ranks, ranks, 64) : 0;
        for (int i = 0; i < n && i < 64; i++) {
            if (ranks[i] < 0 || ranks[i] >= P)
                continue;
            if (!d->chosen[ranks[i]] && out->nchosen < SP_REPORT_NAMED)
                out->chosen[out->nchosen++] = ranks[i];
            d->chosen[ranks[i]] = 1;
        }
    }
    if (sp_disturb_noise_on(o)) {
        out->noise = 1;
        out->noise_fraction = o->noise;
        out->noise_length = o->noise_length;
        out->noise_kind = o->noise_kind == SP_NOISE_PERIODIC ? "periodic" : "random";
        d->period = o->noise_length / o->noise;
        for (int r = 0; r < P; r++) {
            d->ranks[r].b = -INFINITY;
            noise_to(d, r, &d->ranks[r], 0.0);
        }
    }
    if (sp_disturb_links_on(o)) {
        out->links = 1;
        out->bw_factor = o->degrade_bw;
        out->extra_latency = o->degrade_latency;
        if (o->degrade_nic >= 0)
            snprintf(out->link_target, sizeof out->link_target, "the NIC of rank %d", o->degrade_nic);
        else if (o->degrade_count > 0)
            snprintf(out->link_target, sizeof out->link_target, "%d of the links '%.200s'", o->degrade_count,
                     o->degrade_links);
        else if (o->degrade_fraction < 1.0)
            snprintf(out->link_target, sizeof out->link_target, "a fraction %g of the links '%.200s'",
                     o->degrade_fraction, o->degrade_links);
        else
            snprintf(out->link_target, sizeof out->link_target, "the links '%.200s'", o->degrade_links);
    }
    if (sp_disturb_background_on(o)) {
        out->background = 1;
        out->bg_load = o->bg_load;
        out->bg_pattern = o->bg_pattern == SP_BG_UNIFORM ? "uniform" : "shift";
        out->bg_flow = o->bg_flow;
    }
    out->fail_rank = o->fail_rank;
    out->fail_at = o->fail_at;
    for (int r = 0; r < P; r++)
        d->ranks[r].path = (sp_path){-1, 0, -1, -1, 0};
    rep->disturb = out;
    return d;
oom:
    if (d) {
        d->out = out;
        sp_disturb_free(d);
    } else {
        sp_report_disturb_free(out);
    }
    snprintf(err, errlen, "out of memory for the disturbances of %d ranks", P);
    return NULL;
}

void sp_disturb_free(sp_disturb *d)
{
    if (!d)
        return;
    if (d->out && (!d->rep || d->rep->disturb != d->out))
        sp_report_disturb_free(d->out); /* never handed to the report */
    free(d->ranks);
    free(d->chosen);
    free(d->drawn);
    free(d->perm);
    free(d);
}

const sp_disturb_opts *sp_disturb_options(const sp_disturb *d) { return &d->o; }
uint64_t sp_disturb_seed(const sp_disturb *d) { return d->seed; }

void sp_disturb_set_slices(sp_disturb *d, void (*slice)(void *, const sp_slice_event *), void *to)
{
    d->slice = slice;
    d->slice_to = to;
}

void sp_disturb_slice(sp_disturb *d, const sp_slice_event *e)
{
    if (!d->slice)
        return;
    if (d->out->slices >= MAX_SLICES) {
        d->out->slices_dropped++;
        return;
    }
    d->out->slices++;
    d->slice(d->slice_to, e);
}

/* ---- stragglers ------------------------------------------------------------------ */

/* the ranks drawn as stragglers in iteration `iter`: round(fraction x P),
 * a partial shuffle keyed by the iteration */
static void draw(sp_disturb *d, int iter)
{
    if (d->drawn_iter == iter)
        return;
    int P = d->P, m = (int)floor(d->o.straggler_fraction * P + 0.5);
    memset(d->drawn, 0, (size_t)P);
    for (int i = 0; i < P; i++)
        d->perm[i] = i;
    for (int j = 0; j < m && j < P; j++) {
        int pick = j + (int)(sp_disturb_uniform(d->seed, ST_DRAW, (uint64_t)iter, (uint64_t)j) * (P - j));
        if (pick >= P)
            pick = P - 1;
        int t = d->perm[j];
        d->perm[j] = d->perm[pick];
        d->perm[pick] = t;
        d->drawn[d->perm[j]] = 1;
    }
    d->drawn_iter = iter;
}

double sp_disturb_factor(sp_disturb *d, int rank, int iter)
{
    const sp_disturb_opts *o = &d->o;
    if (!d->out->stragglers || rank < 0 || rank >= d->P)
        return 1.0;
    double f = 1.0;
    int slow = d->chosen[rank];
    if (!slow && o->straggler_fraction > 0) {
        draw(d, iter);
        slow = d->drawn[rank];
    }
    if (slow)
        f = o->straggler_factor;
    if (o->straggler_cv > 0) {
        /* log-normal of mean 1 and coefficient of variation cv */
        double s2 = log1p(o->straggler_cv * o->straggler_cv);
        f *= exp(-0.5 * s2 + sqrt(s2) * normal(d->seed, ST_LOGNORMAL, (uint64_t)rank, (uint64_t)iter));
    }
    return f;
}

/* ---- noise ------------------------------------------------------------------------ */

static void detour_slice(sp_disturb *d, const sp_ctx *c, double t0, double t1)
{
    d->out->detours++;
    d->out->detour_s += t1 - t0;
    sp_slice_event e = {c->rank, "noise", t0, t1, c->iter, 0, -1, -1, 0};
    sp_disturb_slice(d, &e);
}

/* work of `w` seconds from t on rank c, with the CPU taken by detours: when
 * it is done */
static double stretch(sp_disturb *d, const sp_ctx *c, double t, double w)
{
    if (!d->out->noise)
        return t + w;
    rank_state *s = &d->ranks[c->rank];
    double T = t, rem = w;
    for (;;) {
        noise_to(d, c->rank, s, T);
        if (s->a <= T) { /* in a detour: the work waits for its end */
            detour_slice(d, c, T, s->b);
            T = s->b;
            continue;
        }
        if (s->a >= T + rem)
            return T + rem;
        rem -= s->a - T;
        T = s->a;
    }
}

double sp_disturb_compute(sp_disturb *d, sp_ctx *c, double seconds)
{
    if (!(seconds > 0))
        return 0;
    double f = sp_disturb_factor(d, c->rank, c->iter), now = c->be->now(c);
    double end = stretch(d, c, now, seconds * f);
    if (f > 1.0) {
        sp_slice_event e = {c->rank, "straggler", now, end, c->iter, f, -1, -1, 0};
        sp_disturb_slice(d, &e);
    }
    d->ranks[c->rank].own += end - now;
    return end - now;
}

double sp_disturb_hold(sp_disturb *d, sp_ctx *c, double now)
{
    if (!d->out->noise)
        return 0;
    rank_state *s = &d->ranks[c->rank];
    noise_to(d, c->rank, s, now);
    if (!(s->a <= now))
        return 0;
    double held = s->b - now;
    detour_slice(d, c, now, s->b);
    s->own += held;
    return held;
}

/* ---- the critical path ------------------------------------------------------------ */

static sp_path path_of(const sp_disturb *d, int rank)
{
    const rank_state *s = &d->ranks[rank];
    sp_path p = s->path;
    if (s->own > 0 && (p.crit_rank < 0 || s->own > p.crit_work)) {
        p.crit_rank = rank;
        p.crit_work = s->own;
    }
    return p;
}

sp_path sp_disturb_path_out(const sp_disturb *d, const sp_ctx *c) { return path_of(d, c->rank); }

void sp_disturb_heard(sp_disturb *d, const sp_ctx *c, const sp_path *p, int src, double t_start, double t_done)
{
    rank_state *s = &d->ranks[c->rank];
    sp_path *q = &s->path;
    if (p->crit_rank >= 0 && (q->crit_rank < 0 || p->crit_work > q->crit_work)) {
        q->crit_rank = p->crit_rank;
        q->crit_work = p->crit_work;
    }
    if (p->msg_src >= 0 && (q->msg_src < 0 || p->msg_secs > q->msg_secs)) {
        q->msg_src = p->msg_src;
        q->msg_dst = p->msg_dst;
        q->msg_secs = p->msg_secs;
    }
    if (q->msg_src < 0 || t_done - t_start > q->msg_secs) {
        q->msg_src = src;
        q->msg_dst = c->rank;
        q->msg_secs = t_done - t_start;
    }
}

void sp_disturb_iteration_begin(sp_disturb *d, const sp_ctx *c)
{
    rank_state *s = &d->ranks[c->rank];
    s->own = 0;
    s->path = (sp_path){-1, 0, -1, -1, 0};
    if (c->rank != 0 || !d->out->stragglers)
        return;
    /* who is slow in this iteration (every rank enters it at the same time) */
    int slot = sp_report_slot(d->rep, c->iter);
    if (slot < 0)
        return;
    int slowest = -1, slowed = 0;
    double fmax = 0;
    for (int r = 0; r < d->P; r++) {
        double f = sp_disturb_factor(d, r, c->iter);
        slowed += f > 1.0;
        if (f > fmax) {
            fmax = f;
            slowest = r;
        }
    }
    d->out->slowest_rank[slot] = slowest;
    d->out->slowest_factor[slot] = fmax;
    d->out->slowed[slot] = slowed;
}

void sp_disturb_phase_closed(sp_disturb *d, const sp_ctx *c, int iter, int phase, double t1)
{
    int slot = sp_report_slot(d->rep, iter);
    if (slot < 0 || phase < 0 || phase >= SP_MAX_PHASES)
        return;
    sp_report_crit *rec = &d->out->crit[(size_t)slot * SP_MAX_PHASES + (size_t)phase];
    if (rec->last_rank >= 0 && !(t1 > rec->t_end))
        return;
    sp_path p = sp_disturb_path_out(d, c);
    rec->last_rank = c->rank;
    rec->t_end = t1;
    rec->crit_rank = p.crit_rank;
    rec->crit_work = p.crit_work;
    rec->msg_src = p.msg_src;
    rec->msg_dst = p.msg_dst;
    rec->msg_secs = p.msg_secs;
}

void sp_disturb_name_routes(sp_disturb *d, void (*name)(void *, int, int, char *, size_t), void *arg)
{
    int I = d->rep->niters;
    for (size_t i = 0; i < (size_t)I * SP_MAX_PHASES; i++) {
        sp_report_crit *rec = &d->out->crit[i];
        if (rec->msg_src >= 0 && rec->msg_dst >= 0)
            name(arg, rec->msg_src, rec->msg_dst, rec->route, sizeof rec->route);
    }
}
