/* report.h - the figures of one run, as every output holds them.
 *
 * The driver's accounting fills an sp_report from the run's events (messages,
 * phase spans, per-rank figures); the writers (summary.json, the human
 * summary) and the tests read it.  Plain data: nothing here knows about
 * algorithms, backends or files.
 */
#ifndef SPARSIM_REPORT_H
#define SPARSIM_REPORT_H

#include <stdint.h>

#define SP_MAX_PHASES 16
#define SP_MAX_STATS 16

/* Per-iteration figures, reduced over ranks. */
typedef struct {
    double t_start, t_end;                 /* common start, last rank's end (s) */
    double phase_time[SP_MAX_PHASES];      /* max over ranks of time in phase (s) */
    uint64_t phase_volume[SP_MAX_PHASES];  /* max over ranks of max(sent, recv) (bytes) */
    uint64_t phase_sent_max[SP_MAX_PHASES];
    uint64_t phase_recv_max[SP_MAX_PHASES];
    uint64_t msgs;                         /* messages in this iteration */
    uint64_t bytes;                        /* bytes in this iteration, all ranks */
    double stat_min[SP_MAX_STATS], stat_max[SP_MAX_STATS], stat_sum[SP_MAX_STATS];
    int stat_count[SP_MAX_STATS];          /* ranks that recorded it */
    int dense_warmup;                      /* this iteration ran the dense warm-up */
    int index;                             /* the training iteration it simulated (--iters-at skips some) */
} sp_iter_stats;

/* A closed-form volume bound, as the analysis states it (words of 4 bytes). */
typedef struct {
    int known;                 /* 0: the algorithm has no closed form */
    double words, floor_words, lower_words;
    const char *formula, *source, *lower_formula;
} sp_report_bound;

/* On the critical path of one phase of one iteration (disturbed runs). */
typedef struct {
    int last_rank;        /* the rank that left the phase last (-1: nobody was in it) */
    double t_end;         /* when it left */
    int crit_rank;        /* of the ranks whose messages reached it this iteration (directly or through
                             others), the one with the most own work (compute, straggling, detours) */
    double crit_work;     /* that work (s), by the time its message left */
    int msg_src, msg_dst; /* the longest transfer among those messages (-1: none) */
    double msg_secs;
    char route[400];      /* that transfer's links, comma-separated */
} sp_report_crit;

#define SP_REPORT_NAMED 8 /* degraded links and chosen ranks listed by name */

/* What disturbed a run and what it changed (absent when nothing did). */
typedef struct {
    /* stragglers */
    int stragglers;
    double straggler_factor, straggler_cv, straggler_fraction;
    int nchosen, chosen[SP_REPORT_NAMED];     /* the chosen ranks (the first ones) */
    int *slowest_rank;                        /* per iteration: the slowest rank, */
    double *slowest_factor;                   /* its slowdown, */
    int *slowed;                              /* and how many ranks were slowed (factor > 1) */
    double compute_s;                         /* base compute per iteration (s) */
    /* noise */
    int noise;
    double noise_fraction, noise_length;
    const char *noise_kind;
    uint64_t detours;                         /* detours that held a rank */
    double detour_s;                          /* the time they held ranks, summed over ranks */
    /* degraded links */
    int links;
    char link_target[300];                    /* as asked */
    int links_degraded, links_in_target;      /* full-duplex links */
    double bw_factor, extra_latency;
    char link_names[SP_REPORT_NAMED][128];
    /* background traffic */
    int background;
    double bg_load, bg_rate;                  /* flows per second per host */
    const char *bg_pattern;
    uint64_t bg_flow, bg_flows, bg_bytes;     /* flows started and their bytes */
    int bg_hosts;
    /* the failure of a rank (a run that ends by it publishes no report) */
    int fail_rank;
    double fail_at;
    /* the same run undisturbed (same seed) */
    int have_baseline;
    double *base_time;                        /* per iteration */
    double *base_phase;                       /* [iteration * SP_MAX_PHASES + phase], by this run's phases */
    /* per iteration and phase */
    sp_report_crit *crit;                     /* [iteration * SP_MAX_PHASES + phase] */
    uint64_t slices, slices_dropped;          /* disturbance slices in trace.json */
} sp_report_disturb;

/* A whole training iteration around the allreduce (absent unless asked for:
 * sim/driver/training.h). */
typedef struct {
    int on;
    char model[16];           /* vgg16, lstm, bert, or "" (the user's compute time) */
    double compute_s;         /* forward + backward per iteration on one rank */
    double fwd_s, bwd_s;      /* its two passes (backward twice forward) */
    char compute_source[400]; /* where compute_s comes from */
    int batch;                /* samples per rank per iteration */
    int overlap;              /* asked for */
    int overlapped;           /* applied (the algorithm allows it) */
    char overlap_rule[200];   /* why or why not */
    double comm_s;            /* the allreduce per iteration: selection and communication, simulated */
    double iter_s;            /* the whole iteration */
    double samples_per_s;     /* P x batch / iter_s */
} sp_report_training;

/* where the run's time went (sim/driver/wall_profile.h says how it is
 * sampled and what each class holds) */
enum { SP_WALL_MODEL, SP_WALL_ENGINE, SP_WALL_SPARSIM, SP_WALL_LIBS, SP_WALL_NCLASS };
typedef struct {
    uint64_t samples;                 /* 0: the profile did not run */
    uint64_t in_class[SP_WALL_NCLASS];
    double cpu_s;                     /* the process's CPU time over the run (user + system) */
} sp_wall_profile;

/* the flow engine's work over the run: its sharing (sim/backends/flow/fluid.h) and its ranks' turns */
typedef struct {
    int on;                           /* 0: not the flow engine */
    uint64_t solves;                  /* instants at which rates were solved again */
    uint64_t rerated;                 /* flows whose rate a solve changed */
    uint64_t solved;                  /* flows taken into the solves (every try) */
    uint64_t opened;                  /* links a solve's local try had to open */
    uint64_t alone;                   /* flows rated alone on their links, without a solve */
    uint64_t switches;                /* turns a rank ran on its own stack (flow_engine.c) */
    uint64_t looked;                  /* wakes in a wait settled without a switch (nothing for it yet) */
} sp_flow_solver;

typedef struct {
    int nranks, niters;
    uint64_t n, k;
    int exact;                    /* payloads carried real data */
    int sparse;                   /* the algorithm sends a selection (its nccl figures use the effective size) */
    int model;                    /* the data was a statistical model */
    const char *phase_names[SP_MAX_PHASES];
    int nphases;
    const char *stat_names[SP_MAX_STATS];
    int nstats;
    sp_iter_stats *iters;         /* niters */
    uint64_t *rank_sent, *rank_recv; /* per rank, whole run (bytes) */
    int gpus_per_node;            /* G > 1: ranks are GPUs on nodes (rank r on node r / G) */
    uint64_t *rank_sent_off, *rank_recv_off; /* G > 1: of those, to and from other nodes (bytes) */
    uint64_t total_msgs, total_bytes;
    float *result;                /* exact mode: global result of the last iteration (n) */
    double *result_sum;           /* exact mode: sum over iterations of the global result (n) */
    double *residual_sum;         /* exact mode: sum over ranks of the final residual (n) */
    double *stat_last;            /* [stat * nranks + rank]: value in the last iteration that set it */
    double wall_seconds;
    sp_wall_profile wall_profile; /* the ranks' run on the simulator */
    sp_flow_solver flow_solver;   /* --engine flow */
    uint64_t trace_dropped;
    /* platform facts for the alpha-beta prediction */
    double alpha, beta;           /* route latency (s), inverse bandwidth (s/byte) */
    /* the analysis' view of this run: its bound and alpha-beta time */
    sp_report_bound bound;
    double predicted_s;           /* < 0: no closed form */
    sp_report_disturb *disturb;   /* NULL: nothing disturbed the run */
    sp_report_training training;  /* training.on = 0: not asked for */
} sp_report;

/* simulated messages per second of wall time (0 for a run too short to time) */
double sp_report_message_rate(const sp_report *rep);
/* the share of the profiled time in class c (SP_WALL_*); -1 when not profiled */
double sp_report_wall_share(const sp_report *rep, int c);

void sp_report_free(sp_report *rep);
void sp_report_disturb_free(sp_report_disturb *d);

/* A disturbed run against its baseline: the mean time per iteration of
 * both (-1 without a baseline), and of phase `ph` (mean over iterations). */
double sp_report_base_time(const sp_report *rep);
double sp_report_phase_mean(const sp_report *rep, int ph, int baseline);

/* The lines of the human summary that say what disturbed the run, what it
 * cost against the same run undisturbed, and who was on the critical path
 * (nothing when nothing disturbed it). */
#include <stdio.h>
void sp_report_print_disturbance(FILE *f, const sp_report *rep);

/* Figures over the whole run (iterations and ranks). */
typedef struct {
    double t_mean, t_max, t_min;
    double vol_mean;
    uint64_t vol_max;
    double sent_mean, recv_mean;
    uint64_t sent_max, recv_max;
} sp_report_figures;

/* The report's slot of training iteration `iter` (events carry training
 * iterations), or -1 when the run did not simulate it. */
int sp_report_slot(const sp_report *rep, int iter);

void sp_report_figures_of(const sp_report *rep, sp_report_figures *f);

/* The figures nccl-tests prints for an allreduce (its PERFORMANCE.md), for
 * n float32 entries on P ranks in t seconds: size S = 4n bytes, algbw = S/t,
 * busbw = algbw x 2(P-1)/P (the bus factor), in bytes per second.  For a
 * sparse algorithm S is its effective size: the dense gradient it reduces
 * in that time, so that its bandwidths hold against a dense allreduce's. */
typedef struct {
    double size_bytes, time_s, algbw_Bps, busbw_Bps, bus_factor;
} sp_nccl_figures;
void sp_nccl_figures_of(double n, int ranks, double time_s, sp_nccl_figures *o);
/* the volume of iteration `it` as the bounds count it (bytes) */
uint64_t sp_report_iter_volume(const sp_report *rep, int it);
/* 1 if phase `ph` took time or moved bytes in some iteration */
int sp_report_phase_used(const sp_report *rep, int ph);

#endif
