/* routes.h - what the flow engine needs of the platform SimGrid loaded: the
 * route between two ranks' hosts as the fluid network's links, and how the
 * network model prices a flow on it.
 *
 * SimGrid keeps the platform (built-in or a user's file) and answers
 * routes; the flow engine never starts SimGrid's simulation.  A route comes
 * back as the ids of its shared links in the fluid network (fluid.h), made
 * the first time a link is met, with the flow's latency, bound and
 * penalty as the chosen network model (CM02, LV08 or SMPI, with or without
 * cross-traffic) sets them for a message of that size.  Routes are kept in
 * a cache of bounded size: an all-to-all at thousands of ranks meets
 * millions of pairs.
 */
#ifndef SPARSIM_FLOW_ROUTES_H
#define SPARSIM_FLOW_ROUTES_H

#include "fluid.h"

#include <simgrid/forward.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct spf_routes spf_routes;

/* what the network model makes of one message */
typedef struct {
    const int *links;    /* shared links of the fluid network, the reverse route's after the route's */
    const double *coefs; /* their consumptions (1 on the route, the model's share on the reverse) */
    int nlinks;
    double latency;      /* seconds, the model's latency factor applied */
    double bound;        /* the most the sharing may give it, in the links' bytes per second */
    double penalty;      /* its weight in the sharing is 1 / penalty */
    double rf;           /* bytes per second it moves per unit the sharing gives (bandwidth factor) */
} spf_route_info;

/* the model of the configuration SimGrid was set to (network/model and its
 * factors, network/crosstraffic); NULL with a message */
spf_routes *spf_routes_new(spf_net *net, char *err, size_t errlen);
void spf_routes_free(spf_routes *r);

/* For the tests: every route through SimGrid's global routing, as a user's
 * platform is routed, instead of asking a zone of sparsim's own directly
 * (call before the first route). */
void spf_routes_global(spf_routes *r);

/* the route from one host to another for a message of `bytes`; 0, or -1
 * when there is no route.  The info stays valid until the next call. */
int spf_route(spf_routes *r, sg_host_t from, int from_id, sg_host_t to, int to_id, double bytes, spf_route_info *out);

#ifdef __cplusplus
}
#endif

#endif
