/* layers.h - the gradient's tensors as matrices (layers.c says from what),
 * resolved once per run and handed to the algorithms in sp_algo_io. */
#ifndef SPARSIM_LAYERS_H
#define SPARSIM_LAYERS_H

#include "algorithms/algorithm.h"
#include "sim/workload/profile.h"
#include "traces/gradients.h"

/* The table of a trace (src with a layer table) or else of a profile (prof
 * with layers), else one tensor of n.  0 and *out (the caller frees), or -1
 * out of memory. */
int sp_layers_build(const sp_grad_source *src, const sp_profile *prof, uint64_t n, sp_algo_layer **out, int *nl);

#endif
