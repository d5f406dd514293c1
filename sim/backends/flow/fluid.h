/* fluid.h - the flow engine's network: flows sharing links by max-min
 * fairness, as SimGrid's network models share them, without SimGrid's
 * per-message machinery.
 *
 * A flow of S bytes waits its route's latency, then moves at the rate the
 * sharing gives it until its bytes are through.  Rates are the weighted
 * max-min fair allocation (progressive filling: the most loaded link
 * saturates first and fixes the rates of the flows through it, each in
 * inverse proportion to its penalty; a flow's own bound caps it), re-solved
 * only over the flows a change reaches (first the changed links' own flows,
 * grown until the rates are one max-min allocation again), once per instant
 * however many flows start and end in it.  A link of SimGrid's FATPIPE
 * policy does not share: it is a bound of each flow through it, which the
 * caller folds into the flow's bound.
 */
#ifndef SPARSIM_FLOW_FLUID_H
#define SPARSIM_FLOW_FLUID_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct spf_net spf_net;

spf_net *spf_net_new(void);
void spf_net_free(spf_net *n);

/* a shared link of `capacity` bytes per second: its id, or -1 (memory) */
int spf_net_add_link(spf_net *n, double capacity);

/* a flow posted at `now`: `bytes` after `latency` seconds, through links[i]
 * with consumption coefs[i] (NULL: all 1).  The sharing solves for a value
 * x per flow in the links' units, at most `bound` (<= 0: none), weighted by
 * 1 / penalty (> 0); the flow moves rf x bytes per second (SimGrid applies
 * its bandwidth factor after the solve, as rf).
 * owner comes back when it ends.  0, or -1 (memory). */
int spf_flow_start(spf_net *n, double now, double bytes, double latency, double bound, double penalty, double rf,
                   const int *links, const double *coefs, int nlinks, void *owner);

/* the rates after the changes made since the last solve, at time now */
void spf_net_solve(spf_net *n, double now);
/* when the next flow event is due (a latency over, a flow through): INFINITY when none */
double spf_net_next(const spf_net *n);
/* processes every flow event due at t, the next (spf_net_next), or within
 * 1e-9 s after it, as at t: done(ctx, owner, t) for each flow that ends */
void spf_net_advance(spf_net *n, double t, void (*done)(void *ctx, void *owner, double t), void *ctx);

/* on: every solve takes in all that a change reaches through any link, and
 * every flow in it, whatever its level (the plain max-min solve, which the
 * pruned one must equal: tests) */
void spf_net_whole(spf_net *n, int on);

/* share in [0, 1): a flow's end leaves what it took of a link unused, and
 * the link unsolved, while what ended flows left on it stays under that
 * share of its capacity; the link is solved again, and gives it back, when
 * it passes that, or when a flow leaves it otherwise.  A flow that joins it
 * takes its part at the level of the ended ones from what they left, where
 * that is enough, else the link is solved again.  The other flows keep their
 * rates meanwhile, off the exact sharing's by about the share.  0 (the
 * default): exact. */
void spf_net_slack(spf_net *n, double share);

/* counters of the solver's work: solves, flows re-rated, flows taken into
 * the solves' fills (every try), and links a local try had to open, summed
 * over all solves; and flows rated alone on their links, with no solve
 * (gathered, opened, alone: NULL when not wanted) */
void spf_net_work(const spf_net *n, uint64_t *solves, uint64_t *rerated, uint64_t *gathered, uint64_t *opened,
                  uint64_t *alone);

#ifdef __cplusplus
}
#endif

#endif
