/* resolve.h - the plan resolved once, for one algorithm.
 *
 * Options make an sp_plan (plan.h); sp_resolve turns a plan and one of its
 * algorithms into everything a run needs decided: the algorithm's row, the
 * device profile, the workload's profile, n and the iterations (a gradient
 * file may set them), k, the payload mode (`auto` decided here and nowhere
 * else), the memory the run needs, and for a run the gradient source and the
 * model.  Every check of the plan happens here, so that validation
 * (sp_plan_validate, which resolves each algorithm of a list), the run, the
 * sweep's memory estimate, training and a disturbed run's baseline take the
 * same object and never look anything up again.
 */
#ifndef SPARSIM_RESOLVE_H
#define SPARSIM_RESOLVE_H

#include "sim/driver/plan.h"
#include "sim/shim/error.h"
#include "sim/workload/profile.h"
#include "topologies/device.h"
#include "traces/gradients.h"

struct sp_model;

typedef enum {
    SP_RESOLVE_CHECK, /* decide and check only: nothing is read past a file's header, nothing is built */
    SP_RESOLVE_RUN    /* also what a run needs: the memory check, the trace read once, the generator, the model */
} sp_resolve_depth;

typedef struct {
    sp_plan plan;             /* the effective plan: n and iters as run, the payload decided (never auto) */
    const sp_algorithm *algo; /* its registry row */
    const sp_device *dev;     /* the device profile */
    sp_algo_opts opts;        /* every "as the preset says" resolved */
    uint64_t k;               /* entries a sparse algorithm selects per rank */
    int have_profile;         /* profile holds the workload (not with a gradient file) */
    sp_profile profile;
    double memory;            /* bytes this process needs for the run */
    double limit;             /* bytes this process may still take (-1: unknown) */
    sp_algo_layer *layers;    /* the tensors as matrices (sim/driver/layers.c) */
    int nlayers;
    /* SP_RESOLVE_RUN only */
    sp_grad_source *source;   /* the gradients: the trace, or the generator where values are needed; or NULL */
    struct sp_model *model;  /* the model of a model workload (sparse algorithms), or NULL */
    /* a node-aware form's models: its sparse algorithm's ranks are the
     * nodes; rail: one model per rail of its shard's entries (G of them,
     * and model NULL); leader: model alone, of the whole gradient */
    struct sp_model **rail_models;
    int nrail_models;
} sp_resolved;

/* Resolves `plan` for `algo` (NULL: the plan's --algo, which must name one
 * algorithm).  0, or -1 with e filled (its status: 2 for a plan or an input
 * that cannot run, 1 for a failure of this machine).  On success the caller
 * frees r with sp_resolved_free; on failure nothing is left to free. */
/* What the platform decides where the plan leaves it open (GPUs per node,
 * --network platform, the device of a platform that names its GPU), in
 * place; checks that G divides P.  0, or -1 with e filled (status 2). */
int sp_resolve_platform(sp_plan *p, sp_error *e);

/* What --algo nccl runs on the plan's platform: NCCL's choice of its ring or
 * its tree by their closed forms on the platform's two link classes
 * (analysis/bounds.h, sp_nccl_choose), or NULL on a platform without nodes. */
const char *sp_resolve_nccl(const sp_plan *p);

int sp_resolve(const sp_plan *plan, const sp_algorithm *algo, sp_resolve_depth depth, sp_resolved *r, sp_error *e);

void sp_resolved_free(sp_resolved *r);

/* The registry's row of one algorithm by name, or NULL with e saying the
 * names it knows. */
const sp_algorithm *sp_resolve_algorithm(const char *name, sp_error *e);

/* The memory a run of the plan needs, by the estimate the run itself checks
 * (the payload `auto` resolves to, as the run decides it), and in *limit
 * (may be NULL) what this process may still take (-1: unknown). */
double sp_resolve_memory_estimate(const sp_plan *plan, double *limit);

#endif
