/* node_aware.h - node-aware forms of a sparse allreduce (node_aware.c).
 *
 * On ranks that are GPUs on nodes of G (sp_node_size), a form runs a flat
 * sparse algorithm X among nodes instead of among all P ranks:
 *   rail:X    a dense ring reduce-scatter inside each node, X on each rail
 *             (local rank j of every node) on shard j, a ring allgather of
 *             the result shards inside each node;
 *   leader:X  a binomial-tree reduce to local rank 0, X among the node
 *             leaders on all n entries, a binomial-tree broadcast.
 * The registry (registry.c) makes rows of them for every sparse row.
 */
#ifndef SPARSIM_NODE_AWARE_H
#define SPARSIM_NODE_AWARE_H

#include "algorithm.h"

typedef int (*sp_algo_run_fn)(sp_ctx *c, sp_algo_io *io);

/* The forms, each running `inner` (a sparse algorithm's run function). */
int sp_rail_form(sp_ctx *c, sp_algo_io *io, sp_algo_run_fn inner);
int sp_leader_form(sp_ctx *c, sp_algo_io *io, sp_algo_run_fn inner);

/* Shard j of n entries over G ranks starts at floor(j n / G) (j = G: n). */
uint64_t sp_shard_lo(uint64_t n, int G, int j);
/* Entries X selects on a shard under rail:X: floor(k / G). */
uint64_t sp_rail_k(uint64_t k, int G);

#endif
