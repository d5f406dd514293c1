/* disturb.h - what disturbs a simulated run, and what it changed.
 *
 * A run can be disturbed in five ways, each seeded and reproducible:
 *  - stragglers: chosen ranks, or a fraction of the ranks drawn afresh every
 *    iteration, whose local compute takes `factor` times as long; and/or a
 *    slowdown of every rank in every iteration drawn from a log-normal of
 *    mean 1 and a given coefficient of variation.  Local compute is what the
 *    device profile prices (sp_compute) and the stated base compute of an
 *    iteration (--compute); with neither there is nothing to slow down;
 *  - system noise: detours of a given length that take a given fraction of
 *    every rank's time, periodic (a daemon's tick, each rank at its own
 *    offset) or random (exponential gaps).  A detour stretches local compute
 *    that overlaps it, holds a send the rank is about to post, and holds the
 *    rank after a wait until it ends (the model of Hoefler, Schneider and
 *    Lumsdaine, "Characterizing the Influence of System Noise on Large-Scale
 *    Applications by Simulation", SC 2010: the CPU is taken away, the network
 *    goes on);
 *  - degraded links: a link class, one rank's NIC, or a fraction (or a count)
 *    of a class's links, at a factor of their bandwidth and/or with extra
 *    latency;
 *  - background traffic: other jobs' flows between the platform's hosts
 *    (uniform random pairs, or each host to the one half the machine away) at
 *    a given share of a host's injection bandwidth, sharing links with the
 *    run;
 *  - the failure of one rank at a chosen time: the run ends with one line
 *    naming the rank, its phase and iteration and the ranks left waiting on
 *    it, and publishes nothing.
 *
 * The shim core and the SimGrid backend apply them; the run driver runs the
 * same plan undisturbed (same seed) to report slowdowns.  While a run is
 * disturbed each rank carries, for the messages that reached it during the
 * iteration (directly, or through the ranks that sent them), the rank with
 * the most own work (local compute with its straggling, and detours) by the
 * time its message left, and the longest transfer among them (from when
 * both sides were there to delivery): a message carries its sender's, the
 * receiver keeps the larger of each.  At every phase's end the report keeps
 * what the rank that left it last carried.
 */
#ifndef SPARSIM_DISTURB_H
#define SPARSIM_DISTURB_H

#include "shim.h"
#include "traces/trace.h"

#include <stddef.h>
#include <stdint.h>

enum { SP_NOISE_PERIODIC = 0, SP_NOISE_RANDOM = 1 };
enum { SP_BG_UNIFORM = 0, SP_BG_SHIFT = 1 };

/* The options, as the run's option table sets them. */
typedef struct {
    char straggler_ranks[256]; /* "" or a comma list of ranks */
    double straggler_fraction; /* [0, 1]: ranks drawn per iteration */
    double straggler_factor;   /* >= 1 */
    double straggler_cv;       /* >= 0: log-normal slowdown of every rank */
    double compute;            /* s of base compute per iteration and rank (not a disturbance) */
    double noise;              /* [0, 1): share of time in detours */
    double noise_length;       /* s per detour */
    int noise_kind;            /* SP_NOISE_* */
    char degrade_links[256];   /* "" or a class, or a link name (prefix) */
    int degrade_nic;           /* -1 or a rank whose NIC is degraded */
    double degrade_fraction;   /* (0, 1] of the class's links */
    int degrade_count;         /* > 0: this many of the class's links instead */
    double degrade_bw;         /* (0, 1]: bandwidth factor */
    double degrade_latency;    /* s added */
    double bg_load;            /* [0, 1): share of a host's injection bandwidth */
    int bg_pattern;            /* SP_BG_* */
    uint64_t bg_flow;          /* bytes per background flow */
    int fail_rank;             /* -1 or the rank that stops */
    double fail_at;            /* s of simulated time */
    int baseline;              /* run undisturbed too, for the slowdowns */
} sp_disturb_opts;

/* What acts at a non-zero level. */
int sp_disturb_stragglers_on(const sp_disturb_opts *o);
int sp_disturb_noise_on(const sp_disturb_opts *o);
int sp_disturb_links_on(const sp_disturb_opts *o);
int sp_disturb_background_on(const sp_disturb_opts *o);
int sp_disturb_failure_on(const sp_disturb_opts *o);
/* any of them (the base compute is not a disturbance) */
int sp_disturb_any(const sp_disturb_opts *o);

/* Every disturbance at its zero level (what the baseline runs). */
void sp_disturb_clear(sp_disturb_opts *o);

/* Checks against the run (P ranks on `platform`; `compute_priced`: the
 * device profile prices local kernels).  0, or -1 with one line. */
int sp_disturb_check(const sp_disturb_opts *o, int P, const char *platform, int compute_priced, char *err,
                     size_t errlen);

/* The chosen straggler ranks (at most max), -1 if the list is malformed. */
int sp_disturb_parse_ranks(const char *text, int *out, int max);

/* ---- the run's disturbance -------------------------------------------------- */

typedef struct sp_disturb sp_disturb;

/* What the run reports into (rep->disturb is made here). */
sp_disturb *sp_disturb_new(const sp_disturb_opts *o, uint64_t seed, sp_report *rep, char *err, size_t errlen);
void sp_disturb_free(sp_disturb *d);
const sp_disturb_opts *sp_disturb_options(const sp_disturb *d);
uint64_t sp_disturb_seed(const sp_disturb *d);
/* where slices go (NULL: nowhere) */
void sp_disturb_set_slices(sp_disturb *d, void (*slice)(void *to, const sp_slice_event *e), void *to);
void sp_disturb_slice(sp_disturb *d, const sp_slice_event *e);

/* Local compute of `seconds` (nominal) starting now on rank c: the seconds
 * it takes, stretched by the rank's slowdown and by the detours it meets. */
double sp_disturb_compute(sp_disturb *d, sp_ctx *c, double seconds);
/* The seconds rank c is held at `now` by a detour (0: none), counted as
 * its own work and shown as a slice. */
double sp_disturb_hold(sp_disturb *d, sp_ctx *c, double now);

/* What a rank carries (see above). */
typedef struct {
    int crit_rank;    /* -1: none yet */
    double crit_work;
    int msg_src, msg_dst;
    double msg_secs;
} sp_path;
/* what a message rank c sends now carries */
sp_path sp_disturb_path_out(const sp_disturb *d, const sp_ctx *c);
/* rank c heard a message from src carrying `p`, whose transfer ran from
 * t_start (both sides there) to t_done */
void sp_disturb_heard(sp_disturb *d, const sp_ctx *c, const sp_path *p, int src, double t_start, double t_done);
/* a new iteration: every rank's path starts afresh */
void sp_disturb_iteration_begin(sp_disturb *d, const sp_ctx *c);
/* rank c left phase `phase` of iteration `iter` at t1 */
void sp_disturb_phase_closed(sp_disturb *d, const sp_ctx *c, int iter, int phase, double t1);
/* the critical records whose messages need their routes named: calls
 * name(arg, src, dst, buf, len) for each and stores the text */
void sp_disturb_name_routes(sp_disturb *d, void (*name)(void *arg, int src, int dst, char *buf, size_t len),
                            void *arg);

/* Stragglers: rank r's slowdown in iteration `iter` (1: none). */
double sp_disturb_factor(sp_disturb *d, int rank, int iter);

/* Uniform draws in [0, 1) that depend only on the seed and the keys. */
double sp_disturb_uniform(uint64_t seed, uint64_t stream, uint64_t a, uint64_t b);

#endif
