/* fit.h - a workload profile fitted to any gradient source (fit.c says how). */
#ifndef SPARSIM_FIT_H
#define SPARSIM_FIT_H

#include "profile.h"
#include "traces/gradients.h"

/* Fits a profile to the first max_iters (0: all) iterations of src; density
 * sets the top-k sets the persistence is measured on; layers larger than
 * n / bins are fitted in pieces (bins 0: whole layers).  0, or -1 with a
 * one-line message. */
int sp_profile_fit(sp_grad_source *src, int max_iters, double density, int bins, sp_profile *out, char *err,
                   size_t errlen);

/* Refines the global knobs of prof (the within-layer spread as a factor,
 * spikes, sharing, persistence, the overall scale) so that the generator's
 * statistics (P ranks, `iters` iterations, at the target's density) come as
 * close as the search finds to `target`'s, in at most `rounds` rounds.
 * Progress goes to log (may be NULL).  0, or -1 with a message. */
#include "analysis/workload_stats.h"
int sp_profile_match(const sp_wstats *target, const sp_wstats_opts *o, int iters, uint64_t seed, int rounds,
                     sp_profile *prof, FILE *log, char *err, size_t errlen);

#endif
