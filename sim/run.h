/* run.h - the run driver: P ranks of one algorithm on one backend.
 *
 * The driver owns everything around the algorithm: the rank loop over
 * iterations, gradients (workload), error feedback, phase and volume
 * accounting, and the writers.  Backends only start ranks and move messages.
 */
#ifndef SPARSIM_RUN_H
#define SPARSIM_RUN_H

#include "plan.h"
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
} sp_iter_stats;

typedef struct {
    int nranks, niters;
    uint64_t n, k;
    int exact;                    /* payloads carried real data */
    const char *phase_names[SP_MAX_PHASES];
    int nphases;
    const char *stat_names[SP_MAX_STATS];
    int nstats;
    sp_iter_stats *iters;         /* niters */
    uint64_t *rank_sent, *rank_recv; /* per rank, whole run (bytes) */
    uint64_t total_msgs, total_bytes;
    float *result;                /* exact mode: global result of the last iteration (n) */
    double *result_sum;           /* exact mode: sum over iterations of the global result (n) */
    double *residual_sum;         /* exact mode: sum over ranks of the final residual (n) */
    double *stat_last;            /* [stat * nranks + rank]: value in the last iteration that set it */
    double wall_seconds;
    uint64_t trace_dropped;
    /* platform facts for the alpha-beta prediction */
    double alpha, beta;           /* route latency (s), inverse bandwidth (s/byte) */
} sp_report;

/* Runs the plan (single algorithm).  Writes outputs under plan->out unless
 * out is empty.  On failure returns -1 with a one-line message. */
int sp_run(const sp_plan *plan, sp_report *rep, char *err, size_t errlen);

/* The same with an algorithm given directly (tests drive the shim this way). */
struct sp_algorithm_s;
int sp_run_algorithm(const sp_plan *plan, const struct sp_algorithm_s *algo, sp_report *rep, char *err,
                     size_t errlen);

void sp_report_free(sp_report *rep);

/* Writes summary.json for a finished run. */
int sp_write_summary(const sp_plan *plan, const sp_report *rep, const char *path, char *err, size_t errlen);

/* Prints the human summary of one run to stdout. */
void sp_print_summary(const sp_plan *plan, const sp_report *rep);

#endif
