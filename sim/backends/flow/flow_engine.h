/* flow_engine.h - `--engine flow` (flow_engine.c says what and why). */
#ifndef SPARSIM_FLOW_ENGINE_H
#define SPARSIM_FLOW_ENGINE_H

#include "sim/shim/backend.h"

#include <simgrid/forward.h>
#include <stddef.h>
#include <stdint.h>

/* what the engine did */
typedef struct {
    uint64_t flows;   /* messages moved */
    uint64_t events;  /* instants the loop stopped at */
    uint64_t solves;  /* re-solves of the sharing */
    uint64_t rerated; /* flows whose rate a solve changed, summed */
    uint64_t gathered; /* flows taken into a solve, summed */
} spf_stats;

/* runs sh's ranks, rank r on hosts[r] of the platform SimGrid has loaded
 * (its network model set); messages under `below` bytes skip the sharing
 * (--unshared-below; piecewise: the model's factors are SMPI's); 0, or 1
 * with a message */
int spf_run(sp_shim *sh, int P, sg_host_t *hosts, double below, int piecewise, spf_stats *st, char *err,
            size_t errlen);

#endif
