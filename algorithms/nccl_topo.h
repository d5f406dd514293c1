/* nccl_topo.h - the shapes NCCL's dense allreduces run on, for ranks grouped
 * into N nodes of G GPUs (rank r is GPU r mod G of node r / G): the rings of
 * nccl-ring's channels and the chains and double binary trees of nccl-tree's
 * lanes.  Both the algorithms and their closed forms (analysis/bounds.c) read
 * the shapes from here, so that a form counts the same neighbours the
 * algorithm talks to.
 *
 * Ring of channel c: within a node the ring visits the node's G GPUs one
 * after another (NVLink); from node i it crosses to node i+1 once.  The order
 * inside a node alternates: an even node is walked x, x+1, ..., x-1 (x = c
 * mod G), an odd node x-1, x-2, ..., x, so that the ring leaves node i from
 * the local GPU it enters node i+1 at: every crossing stays on one rail.
 * With N odd the wrap from the last (even) node to node 0 goes from local x-1
 * to local x, the one crossing that changes rail.
 *
 * Trees: the data of channel c is halved; half t runs on lane (c, t), whose
 * head GPU in every node is local h = (c + t G/2) mod G.  Inside a node the
 * lane is a chain h, h+1, ..., h-1 toward the head; across nodes the heads
 * form binary tree t over the N nodes.  Tree 0 is the in-order binary tree
 * over positions 0..N-1 (a position's level is its lowest set bit; position 0
 * is the root, with one child): its leaves are the odd positions.  Tree 1
 * mirrors it (node N-1-i at position i) when N is even, so that every node
 * is a leaf in one tree and interior in the other, and shifts it by one
 * (node i at position i-1 mod N) when N is odd, where node 0 is interior
 * in both: tree 0's root, tree 1's position N-1 (Sanders, Speck & Traeff,
 * Parallel Computing 35(12) 2009; NCCL's ncclGetBtree and ncclGetDtree,
 * src/graph/trees.cc, whose trees these are node for node).
 */
#ifndef SPARSIM_NCCL_TOPO_H
#define SPARSIM_NCCL_TOPO_H

#include <stdint.h>

/* channels when none are given: one per GPU of a node (each GPU's NIC is
 * then the exit of one channel), at most 8 as NCCL's rail-optimised nodes
 * have 8 NICs */
int sp_nccl_default_channels(int G);
/* nccl-tree's chunk when none is given, in bytes */
#define SP_NCCL_DEFAULT_CHUNK 524288
/* nccl-nvls tags every chunk of every shard (two tags each): at most this
 * many chunks in all, G x ceil(ceil(n/G) / chunk floats) */
#define SP_NVLS_MAX_CHUNKS (1 << 28)

/* ring of channel c: the rank at ring position p, and rank r's position */
int sp_nccl_ring_rank(int P, int G, int c, int p);
int sp_nccl_ring_pos(int P, int G, int c, int r);

/* binary tree t over N nodes: the parent node of `node` (-1 at the root)
 * and its children nodes (0 to 2 written to kids; the count is returned) */
int sp_nccl_tree_parent(int N, int t, int node);
int sp_nccl_tree_children(int N, int t, int node, int kids[2]);

/* rank r's neighbours on lane (c, t): its parent rank (-1 at the root of the
 * lane: the head of tree t's root node) and its children ranks (up to 3: the
 * next GPU of the chain, and at the head the children nodes' heads). */
typedef struct {
    int parent;
    int nkids;
    int kids[3];
} sp_nccl_lane;

sp_nccl_lane sp_nccl_lane_of(int P, int G, int c, int t, int r);

/* the depth of both binary trees over N nodes (they have the same):
 * 0 for N = 1, else floor(log2(N-1)) + 1 (position 1 and its ancestors
 * 2, 4, ... all exist); and rank r's hops to the root of lane (c, t): its
 * place in its node's chain plus its node's depth in tree t.  The deepest
 * rank of every lane is G-1 + that depth away from the root. */
int sp_nccl_tree_depth(int N);
int sp_nccl_lane_depth(int P, int G, int c, int t, int r);

#endif
