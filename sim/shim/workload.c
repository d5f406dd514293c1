/* workload.c - the workload questions of workload.h, forwarded to the
 * run's model.
 *
 * The driver puts the model's table (sim/workload/model.c) and its state
 * into the shim (backend.h, sp_model_ops); each call here adds the asking
 * rank and its iteration, so that the model's draws are keyed by (seed,
 * rank, iteration) whatever order the ranks ask in.
 */
#include "backend.h"
#include "workload.h"

#include <stdlib.h>

static void *model_of(const sp_ctx *c)
{
    const sp_shim *sh = c->shim;
    return sh->rail_models ? sh->rail_models[c->rank % sh->gpus_per_node] : sh->model_state;
}

/* the rank the model knows: a node under a node-aware form */
static int model_rank(const sp_ctx *c)
{
    return c->shim->model_per_node && c->shim->gpus_per_node > 1 ? c->rank / c->shim->gpus_per_node : c->rank;
}

int sp_model_on(const sp_ctx *c) { return c->shim->model != NULL; }

uint64_t sp_model_count_above(sp_ctx *c, double thr)
{
    return c->shim->model->count_above(model_of(c), model_rank(c), c->iter, thr);
}

double sp_model_kth(sp_ctx *c, uint64_t k) { return c->shim->model->kth(model_of(c), model_rank(c), c->iter, k); }

double sp_model_std(sp_ctx *c) { return c->shim->model->std(model_of(c), model_rank(c), c->iter); }

sp_model_set *sp_model_select(sp_ctx *c, double thr, uint64_t count)
{
    return c->shim->model->select(model_of(c), model_rank(c), c->iter, thr, count);
}

void sp_model_set_free(sp_model_set *s)
{
    /* every model's sets are freed the same way (plain allocations) */
    free(s);
}

int64_t sp_model_index_at(sp_ctx *c, const sp_model_set *s, uint64_t pos)
{
    return c->shim->model->index_at(model_of(c), s, pos);
}

void sp_model_split(sp_ctx *c, const sp_model_set *s, const int32_t *bounds, int nreg, uint32_t *counts)
{
    c->shim->model->split(model_of(c), model_rank(c), c->iter, s, bounds, nreg, counts);
}

uint64_t sp_model_union(sp_ctx *c, double thr, int64_t lo, int64_t hi, uint64_t at_least, uint64_t at_most)
{
    return c->shim->model->union_count(model_of(c), model_rank(c), c->iter, thr, lo, hi, at_least, at_most);
}

uint64_t sp_model_team_union(sp_ctx *c, int W, int d, uint64_t h, int64_t lo, int64_t hi, uint64_t cap)
{
    return c->shim->model->team_union(model_of(c), model_rank(c), c->iter, W, d, h, lo, hi, cap);
}

uint64_t sp_model_reduced_above(sp_ctx *c, double thr, int64_t lo, int64_t hi, double thr_global, uint64_t at_most)
{
    return c->shim->model->reduced_above(model_of(c), model_rank(c), c->iter, thr, lo, hi, thr_global, at_most);
}

double sp_model_global_kth(sp_ctx *c, double thr, uint64_t K)
{
    return c->shim->model->global_kth(model_of(c), model_rank(c), c->iter, thr, K);
}

void sp_model_consume(sp_ctx *c, double thr, double thr_global)
{
    c->shim->model->consume(model_of(c), model_rank(c), c->iter, thr, thr_global);
}
