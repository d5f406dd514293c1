/* bounds.h - what is known of every algorithm in closed form: one row of
 * facts per algorithm of the registry (algorithms/registry.c), read by every
 * command that holds a run against a bound or a prediction.
 *
 * A row holds the algorithm's closed-form volume (its formula as printed and
 * its citation), its alpha-beta prediction of one iteration's communication,
 * and what an iteration consumes from the residual.  The class (dense,
 * sparse, compressed) stays the registry's; the lower bound of each class is
 * a row of its own.  Volumes are the bandwidth terms of the papers'
 * alpha-beta models, per rank on full-duplex links, in 4-byte words as the
 * papers write them; callers convert (bytes = 4 x words).
 */
#ifndef SPARSIM_BOUNDS_H
#define SPARSIM_BOUNDS_H

#include <stdint.h>

typedef struct {
    double words;        /* the algorithm's own closed-form volume per rank */
    const char *formula; /* as printed, e.g. "2n(P-1)/P" */
    const char *source;  /* citation */
    double floor_words;  /* the algorithm's own best case, where it has one (TopkDSA), else 0 */
    double lower_words;  /* lower bound for its class (dense or sparse) */
    const char *lower_formula;
    const char *lower_source; /* the lower bound's citation */
} sp_bound;

/* The sizes a closed form reads: P ranks, n entries, k selected per rank,
 * and p2 = 2^floor(log2 P) with rem = P - p2 (the fold of the recursive
 * algorithms for P not a power of two). */
typedef struct {
    double P, n, k;
    int p2, rem, ceil_log2_P;
    double log2_p2; /* log2 p2, as a double */
    /* nodes, for the algorithms that know them (nccl-ring, nccl-tree): G GPUs
     * per node (1 without nodes), their channels and chunk, resolved */
    int G, channels;
    double chunk_bytes;
    /* qgz: bits a code and entries a scale; onebit, qgz: steps per bucket of their rotation (0: min(4, peers)) */
    int quant_bits, quant_block, bucket;
    /* powersgd: its two allreduces' floats (the P factors with the tensors
     * sent dense, the Q factors) and the dense algorithm they run on */
    double lowrank_m1, lowrank_m2;
    const char *lowrank_inner;
    /* spardl: d teams (1: one team of P) and h / k_b (0: 1/d) */
    int spardl_teams;
    double spardl_share;
} sp_shape;

/* Two classes of routes where ranks sit on nodes: between GPUs of one node
 * (NVLink) and between nodes (the NICs), each as the latency alpha (s) and the
 * inverse bandwidth beta (s/byte) of one flow alone on its route.  one_port
 * says how a rank's concurrent flows share: 0, the node's case, a GPU's
 * flows inside the node share its NVLink port and its flows off the node
 * share its NIC, separately; 1, every flow of a rank shares one link (a flat
 * crossbar whose hosts are only named nodes, as 1gbe with --gpus-per-node). */
typedef struct {
    double intra_alpha, intra_beta, inter_alpha, inter_beta;
    int one_port;
    /* where the nodes' switch reduces (NVLS): the bytes/s it takes in
     * (sp_platform_nvls); 0: it does not.  A GPU's port to it is half of
     * the intra class (its alpha / 2, its beta) */
    double nvls_bw;
} sp_link_classes;

/* Where the ranks sit, for the node-aware forms: G GPUs per node, and the
 * NCCL algorithms' channels and chunk (0: their defaults, as the run's
 * options have them). */
typedef struct {
    int G, channels;
    uint64_t chunk_bytes;
    int quant_bits, quant_block; /* qgz's (0: its defaults, 4 and 256) */
    int bucket;                  /* --bucket (0: min(4, peers)) */
    /* powersgd's two allreduces of the run's tensors (sp_powersgd_sizes_of)
     * and its dense algorithm; m1 0: one tensor of n, most nearly square,
     * at rank 4 on the ring */
    uint64_t lowrank_m1, lowrank_m2;
    const char *lowrank_inner;
    int spardl_teams;    /* spardl's d (0: 1) */
    double spardl_share; /* spardl's h / k_b (0: 1/d) */
} sp_nodes;

/* One algorithm's facts (the rows are in bounds.c). */
typedef struct {
    const char *name;        /* the registry's name */
    const char *formula;     /* the volume per rank in words, as printed (P a power of two) */
    const char *formula_any; /* the same for P not a power of two; NULL: formula holds for every P */
    const char *source;      /* the volume's citation */
    /* the volume in words; *floor_words its own best case where it has one */
    double (*words)(const sp_shape *s, double *floor_words);
    const char *time_formula; /* the alpha-beta prediction as written (L bytes cost alpha + L beta) */
    const char *time_source;  /* its citation */
    /* seconds of one iteration's communication, uncontended, P >= 2 */
    double (*seconds)(const sp_shape *s, double alpha, double beta);
    /* the same with two classes of links where the ranks sit on nodes (the
     * shape's G); NULL where the algorithm does not know nodes */
    double (*seconds2)(const sp_shape *s, const sp_link_classes *l);
    const char *consumes; /* which residual entries an iteration zeroes (algorithm.h's contract) */
} sp_algo_facts;

/* The lower bound of a class of algorithms (sp_algo_class). */
typedef struct {
    const char *formula, *source;
    double (*words)(const sp_shape *s);
} sp_lower_bound;

/* The facts of a registered algorithm, or NULL (an unknown name, or a
 * diagnostic of the registry that has none). */
const sp_algo_facts *sp_algo_facts_find(const char *name);
/* Every row, in the registry's order. */
const sp_algo_facts *sp_algo_facts_list(int *count);
/* The rows of the algorithms that need a reducing switch (nccl-nvls), in
 * the order of sp_algorithm_switch_list. */
const sp_algo_facts *sp_algo_facts_switch_list(int *count);
/* The lower bound of class `cls` (an sp_algo_class), or NULL where the
 * class has none here. */
const sp_lower_bound *sp_lower_bound_of(int cls);

/* The volume of `f` at (P, n, k): 0 and b filled, or -1 when f is NULL or
 * the registry does not know its class. */
int sp_facts_bound(const sp_algo_facts *f, int P, uint64_t n, uint64_t k, sp_bound *b);
/* alpha-beta prediction of one iteration's communication time (seconds) on
 * an uncontended network with route latency alpha and inverse bandwidth beta
 * (s/byte); 0 for P <= 1, -1 when f is NULL. */
double sp_facts_predict(const sp_algo_facts *f, int P, uint64_t n, uint64_t k, double alpha, double beta);

/* The same where ranks sit on nodes (nd NULL: no nodes).  The volume of a
 * node-aware row counts its real neighbours; the prediction takes the row's
 * two-class form, or -1 where it has none (a flat algorithm: use the above). */
int sp_facts_bound_nodes(const sp_algo_facts *f, int P, uint64_t n, uint64_t k, const sp_nodes *nd, sp_bound *b);
double sp_facts_predict_nodes(const sp_algo_facts *f, int P, uint64_t n, uint64_t k, const sp_nodes *nd,
                              const sp_link_classes *l);

/* NCCL's choice between its ring and its tree, as its tuner makes it: the
 * faster by the two forms above at P ranks in nodes of G, n floats, the
 * default channels and chunk; "nccl-ring" or "nccl-tree" (the ring on a tie), or
 * "nccl-nvls" where l->nvls_bw says the switch reduces and its form is the
 * fastest. */
const char *sp_nccl_choose(int P, int G, uint64_t n, const sp_link_classes *l);

/* The same by name (one look-up, then the above): for callers that hold a
 * name only. */
int sp_bound_volume(const char *algo, int P, uint64_t n, uint64_t k, sp_bound *b);
double sp_predict_time(const char *algo, int P, uint64_t n, uint64_t k, double alpha, double beta);

/* ---- node-aware forms (algorithms/node_aware.c) ----------------------------
 * The volume of rail:X and leader:X per link class, per rank, in words, as
 * the bounds count it (per phase, the largest over ranks of max(sent,
 * received)): inside a node (NVLink) and between nodes (the NIC). */
typedef struct {
    int G, N;                  /* GPUs per node, nodes */
    double intra_words;        /* inside a node */
    const char *intra_formula; /* as printed */
    double inter_words;        /* between nodes: X's own bound on its group */
    double inter_floor_words;  /* X's own best case, where it has one */
    const char *inter_formula; /* X's formula; read with P -> N, n -> n_inner, k -> k_inner */
    uint64_t n_inner, k_inner; /* what X sees: rail n/G (the largest shard) and k/G; leader n and k */
    const char *source;        /* X's citation */
    /* the whole, as a run reports it (the sum over all phases): intra + inter */
    double words, floor_words;
    const char *formula;
    double lower_words;        /* the lower bound of X's class at (P, n, k) */
    const char *lower_formula;
} sp_node_bound;

/* The node volume of form `algo` ("rail:topka", ...) at P ranks on nodes of
 * G: 0 and b filled, or -1 when algo is no form, G < 1 or G does not divide P. */
int sp_node_bound_volume(const char *algo, int P, int G, uint64_t n, uint64_t k, sp_node_bound *b);

#endif
