/* fit.h - a workload profile fitted to any gradient source (fit.c says how). */
#ifndef SPARSIM_FIT_H
#define SPARSIM_FIT_H

#include "profile.h"
#include "../../traces/gradients.h"

/* Fits a profile to the first max_iters (0: all) iterations of src; density
 * sets the top-k sets the persistence is measured on.  0, or -1 with a
 * one-line message. */
int sp_profile_fit(sp_grad_source *src, int max_iters, double density, sp_profile *out, char *err, size_t errlen);

#endif
