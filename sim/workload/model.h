/* model.h - the statistical model of a rank's accumulated gradient, for
 * model workloads: every question an algorithm asks of its data, answered
 * without vectors of length n (model.c says how). */
#ifndef SPARSIM_MODEL_H
#define SPARSIM_MODEL_H

#include "profile.h"
#include "sim/shim/backend.h"

typedef struct sp_model sp_model;

/* Ablations that remove what the model captures, to show that checks against
 * exact runs notice: selections spread uniformly over the index space (no
 * layers), or ranks' selections that never overlap. */
typedef enum { SP_MODEL_FULL = 0, SP_MODEL_UNIFORM, SP_MODEL_DISJOINT } sp_model_ablation;

/* The model of profile p (copied) for P ranks; iteration 0 of the run is
 * gradient iteration `settle`, after that many iterations of local error
 * feedback (each rank consuming its exact top-k, k = floor(n * density)).
 * Run iterations below `warmup` are dense (everything is delivered), also
 * when a run skips them.  NULL with a message. */
sp_model *sp_model_new(const sp_profile *p, uint64_t seed, int ranks, int settle, int warmup, double density,
                       sp_model_ablation ablation, char *err, size_t errlen);
void sp_model_free(sp_model *m);

/* the table the shim forwards sp_model_* calls to (state: an sp_model) */
const sp_model_ops *sp_model_ops_table(void);

/* The union of the P local top-k sets over k, as the model predicts it for
 * gradients with no residual (one iteration, cold). */
double sp_model_union_over_k(sp_model *m, int P, uint64_t k);

#endif
