/* flow_engine.h - `--engine flow` (flow_engine.c says what and why). */
#ifndef SPARSIM_FLOW_ENGINE_H
#define SPARSIM_FLOW_ENGINE_H

#include "sim/shim/backend.h"

#include <simgrid/forward.h>
#include <stddef.h>

/* runs sh's ranks, rank r on hosts[r] of the platform SimGrid has loaded
 * (its network model set); messages under `below` bytes skip the sharing
 * (--unshared-below); `slack`: the sharing's (fluid.h, spf_net_slack;
 * --flow-slack); 0, or 1 with a message */
int spf_run(sp_shim *sh, int P, sg_host_t *hosts, double below, double slack, char *err, size_t errlen);

#endif
