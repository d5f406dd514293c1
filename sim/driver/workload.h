/* workload.h - where each rank's gradient comes from.
 *
 * Exact mode: a dense gradient per rank and iteration, either from a .npy
 * file or from a seeded synthetic generator.  Every random value is a pure
 * function of (seed, rank, iteration, index), never of scheduling order, so
 * runs are reproducible on every backend.
 */
#ifndef SPARSIM_WORKLOAD_H
#define SPARSIM_WORKLOAD_H

#include <stdint.h>

/* Parameters of the synthetic generator (documented in workload.c). */
typedef struct {
    int layers;          /* index space split into this many "layers" */
    double scale_spread; /* layer scales are log-uniform in [1/s, s] */
    double shared;       /* weight of the component common to all ranks (0..1) */
    double persistence;  /* weight of the component that repeats across iterations (0..1) */
} sp_synth_params;

void sp_synth_defaults(sp_synth_params *p);

/* Adds the synthetic gradient of (rank, iter) to acc[0..n). */
void sp_synth_add(const sp_synth_params *p, uint64_t seed, int rank, int iter, uint64_t n, float *acc);

#endif
