/* internal.h - what the shim, the driver and the backends share.
 *
 * The public shim header (shim.h) is all an algorithm sees.  Behind it, each
 * backend fills an sp_backend table; the shim core (shim.c) does the
 * accounting that must be identical on every backend (bytes per phase, one
 * trace event per message) and then calls the backend.
 */
#ifndef SPARSIM_INTERNAL_H
#define SPARSIM_INTERNAL_H

#include "run.h"
#include "shim.h"
#include "../topologies/device.h"
#include "../traces/trace.h"

typedef struct sp_backend {
    const char *name;
    sp_req *(*isend)(sp_ctx *c, int dst, int tag, const void *buf, size_t bytes, double t_post);
    sp_req *(*irecv)(sp_ctx *c, int src, int tag, void *buf, size_t cap);
    int (*waitall)(sp_ctx *c, sp_req **reqs, int n, size_t *sizes);
    double (*now)(const sp_ctx *c);
    void (*advance)(sp_ctx *c, double seconds); /* modelled compute time */
    void (*barrier)(sp_ctx *c);                 /* untraced, free synchronisation between iterations */
} sp_backend;

/* Shared state of one run (one per process). */
typedef struct sp_runstate {
    const sp_plan *plan;
    sp_report *rep;
    const sp_device *dev;
    sp_csv_writer *csv;
    sp_chrome_writer *chrome;
    sp_algo_opts opts;
    const float *grad_file_data; /* I x P x n from --grad-file, or NULL */
    int grad_file_iters;
    int failed;
    char errmsg[256];
    int ranks_done_iter;          /* ranks that folded the current iteration */
    const float *first_result;    /* last iteration: first finishing rank's result */
    int first_result_rank;
    /* set by backends that gather the timeline at the end instead of streaming it */
    void (*on_span)(sp_ctx *c, const sp_span_event *e);
} sp_runstate;

/* One rank.  What every message touches comes first and each phase's
 * counters share a cache line: thousands of ranks take turns on one core,
 * and a rank's state is cold each time its turn comes. */
struct sp_ctx {
    int rank, size;
    const sp_backend *be;
    void *be_state;
    sp_runstate *run;
    int iter;
    int phase;                       /* current phase id */
    uint64_t it_msgs, it_bytes;      /* current iteration, sent by this rank */
    double phase_t0;
    struct {
        uint64_t sent, recv;         /* current iteration, bytes in this phase */
        double time;                 /* current iteration, seconds in this phase */
    } ph[SP_MAX_PHASES];
    void *algo_state;                /* sp_rank_state */
    double stat_val[SP_MAX_STATS];   /* current iteration, sp_stat */
    unsigned char stat_set[SP_MAX_STATS];
};

/* Interns a phase name; returns its id (creates it on first use). */
int sp_phase_id(sp_runstate *rs, const char *name);

/* Closes the current phase span (end of an iteration). */
void sp_phase_close(sp_ctx *c);

/* Called by a backend when a message has been delivered to rank `c`. */
void sp_deliver(sp_ctx *c, const sp_msg_event *e);

/* Records a failure (first one wins); ranks stop at the next iteration. */
void sp_fail(sp_runstate *rs, const char *fmt, ...);

/* The per-rank program every backend runs. */
void sp_rank_main(sp_ctx *c);

/* The backend linked into this program (backend_simgrid.c or backend_mpi.c):
 * runs the ranks; 0 on success, 2 for bad input (platform), 1 for a failed
 * run.  Every process calls it; on MPI only the root's report is complete. */
int sp_backend_run(sp_runstate *rs, char *err, size_t errlen);
const char *sp_backend_name(void);
/* 1 in the process that writes the outputs */
int sp_backend_is_root(void);

#endif
