/* fabric.h - the shape and numbers of a platform of multi-GPU nodes, as the
 * platform table (platforms.c) states them and the simulated backend builds
 * them (sim/backends/simgrid/simgrid_nodes.cpp).
 *
 * A plain C struct, so that the backend builds only what it is told: every
 * number here comes from the table, where its source is written beside it.
 * A rank is a GPU: host i is GPU i mod G of node i / G.
 */
#ifndef SPARSIM_FABRIC_H
#define SPARSIM_FABRIC_H

typedef enum {
    SP_FABRIC_NONE = 0,
    SP_FABRIC_LEAF_SPINE, /* a two-tier fat-tree: leaves, their uplink aggregates, a non-blocking spine */
    SP_FABRIC_DRAGONFLY   /* switches all-to-all within a group, groups joined by global links */
} sp_fabric_kind;

typedef struct {
    sp_fabric_kind kind;
    int nodes;         /* the nodes built (links, NICs and switches of whole nodes) */
    int gpus_per_node; /* G */
    /* inside a node, per direction: LEAF_SPINE, one port link per GPU to a
     * non-blocking switch (NVSwitch); DRAGONFLY, one link per pair of GPUs */
    double gpu_bw, gpu_lat; /* bytes/s, s */
    /* one NIC per GPU (NIC j is GPU j's), per direction */
    double nic_bw, nic_lat;
    double switch_lat; /* s per network switch a route crosses */
    /* LEAF_SPINE: the NVSwitch's in-network reduction (NVLink SHARP, NCCL's
     * NVLS), as the bytes/s that the node's switch takes in for reducing and
     * multicasting (every GPU's pushes, all together); 0: the node has none */
    double nvls_bw;
    /* LEAF_SPINE */
    int rail_optimized; /* 1: a leaf carries rail j of nodes_per_leaf nodes; 0: all G NICs of them */
    int nodes_per_leaf; /* rail-optimized: the scalable unit */
    double oversub;     /* S: a leaf's uplinks carry its downlinks x nic_bw / S */
    /* DRAGONFLY */
    int nodes_per_group;
    int nics_per_switch;  /* nodes per chassis: NIC j of each goes to the chassis' switch j */
    int links_per_pair;   /* global links between two groups */
    double local_bw;      /* a switch-to-switch link within a group */
    double global_bw;     /* one global link */
} sp_fabric;

#endif
