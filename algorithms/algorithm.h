/* algorithm.h - the one signature every allreduce algorithm implements.
 *
 * As in MPICH's collectives: one algorithm per file, a uniform entry point,
 * chosen by name from a table (registry.c).  An algorithm sees only the shim.
 *
 * Contract, per rank and iteration:
 *   acc     in:  this rank's gradient plus residual (n floats)
 *           out: the residual: every entry this algorithm delivered into the
 *                global result is set to 0, the rest stays (error feedback)
 *   result  out: the global result, the sum over ranks (not divided by P),
 *                identical on every rank (n floats)
 * In size-only mode both are NULL and only message sizes matter; with a model
 * workload both are NULL too, and the data is asked of the model through
 * sparse_set.h.
 */
#ifndef SPARSIM_ALGORITHM_H
#define SPARSIM_ALGORITHM_H

#include "sim/shim/shim.h"
#include <stdint.h>

/* Options of individual algorithms (flags of sparsim run; their defaults and
 * bounds are rows of the run's option table, sim/driver/plan.c).  The driver
 * resolves every "as the preset says" before an algorithm sees them. */
typedef struct {
    int gaussian_oktopk;  /* Gaussian-k adjustment: 0 the authors' loop, 1 the Ok-Topk authors' variant */
    double dsa_dense_at;  /* TopkDSA: all-gather dense once the reduced non-zeros reach this fraction of n */
    int bucket;           /* destination-rotation bucket size; 0 = min(4, P), the authors' rule */
    /* Ok-Topk (oktopk.c) */
    int oktopk_preset;    /* index into the presets: 0 vgg16, 1 lstm, 2 bert */
    int tau;              /* region repartition interval */
    int tau_prime;        /* exact threshold recompute interval (the driver puts the preset's where not given) */
    int balance;          /* data balancing before the allgatherv: 0 off, 1 on (likewise) */
    int separate;         /* indices and values as two messages (the authors' code) instead of pairs */
    int exact_quantiles;  /* region boundaries at index floor(i m / P) of the selection, not i floor(m / P) */
    /* NCCL's dense allreduces (nccl_ring.c, nccl_tree.c) */
    int nccl_channels;    /* channels; 0 = min(G, 8), one per GPU's NIC (nccl_topo.h) */
    uint64_t nccl_chunk;  /* nccl-tree's pipeline chunk in bytes; 0 = SP_NCCL_DEFAULT_CHUNK */
    /* quantized reduce-scatter and allgather (qgz.c) */
    int quant_bits;       /* 4 or 8 */
    int quant_block;      /* entries that share one scale */
    /* PowerSGD (powersgd.c) */
    int powersgd_rank;      /* r, the rank of the approximation */
    int powersgd_allreduce; /* its dense allreduce: an index of sp_powersgd_allreduce_name */
    /* ZEN-style hashed synchronisation (zen.c) */
    int zen_form;           /* 0 balanced (every rank an owner), 1 central (zen_owners owners) */
    int zen_owners;         /* the central form's owners; 0 = ceil(sqrt(P)) */
    double zen_bitmap_at;   /* a block of c entries over a share of s travels as a bitmap when c >= this x s */
    /* SparDL (spardl.c) */
    int spardl_teams;       /* d: teams of P/d ranks (d divides P) */
    int spardl_residual;    /* 0 collect (every dropped partial sum stays where dropped), 1 the authors' code */
    double spardl_share;    /* h / k_b, the part of a block a team's holder sends across teams; 0: 1/d */
    uint64_t seed;          /* the run's seed (not an option of its own: --seed) */
} sp_algo_opts;

/* Ok-Topk's presets: the authors' settings per model (Li & Hoefler, PPoPP 2022,
 * and their code), see oktopk.c. */
typedef struct {
    const char *name;
    double density;
    int tau_prime, warmup, balance;
    double local_a, local_s;                 /* local feedback: c < a k: thr /= s; c > 5k/4: thr *= s */
    double glob_lo, glob_div, glob_hi, glob_mul; /* global: T < lo k: thr /= div; T > hi k: thr *= mul */
} sp_oktopk_preset;

const sp_oktopk_preset *sp_oktopk_preset_find(const char *name, int *index);
const sp_oktopk_preset *sp_oktopk_preset_at(int index);

/* One tensor of the flattened gradient as a matrix: rows x (size / rows);
 * rows 0 for a vector (a bias, a norm's scale).  The driver resolves the
 * shapes (sim/driver/layers.c says from what). */
typedef struct {
    uint64_t offset, size, rows;
} sp_algo_layer;

typedef struct {
    uint64_t n; /* gradient length */
    uint64_t k; /* entries a top-k algorithm selects per rank */
    float *acc;
    float *result;
    const sp_algo_opts *opts; /* never NULL */
    /* the tensors, covering [0, n) in order (NULL: the whole vector as one
     * tensor of unknown shape); only PowerSGD reads them */
    const sp_algo_layer *layers;
    int nlayers;
} sp_algo_io;

/* What an algorithm is, for every command that compares: a dense allreduce
 * (the baseline every speedup is over), a sparse one (selects k entries per
 * rank; needs k >= 1), or a compressed one (quantised or low-rank). */
typedef enum { SP_ALGO_DENSE = 0, SP_ALGO_SPARSE, SP_ALGO_COMPRESSED } sp_algo_class;

/* How an algorithm meets the nodes: flat (among all P ranks, the table's
 * rows) or a node-aware form of a flat sparse one (node_aware.h): rail:X,
 * leader:X. */
typedef enum { SP_FORM_FLAT = 0, SP_FORM_RAIL, SP_FORM_LEADER } sp_algo_form;

typedef struct sp_algorithm_s {
    const char *name;
    const char *summary;
    int (*run)(sp_ctx *c, sp_algo_io *io);
    sp_algo_class cls; /* SP_ALGO_SPARSE: selects k = floor(n * density) entries per rank (needs k >= 1) */
    int size_only_ok; /* can run with size-only payloads (message sizes do not depend on data) */
    int model_ok;     /* reads its data through sparse_set.h: runs on a model workload too */
    /* bytes an exact-mode run needs over all P ranks, beyond acc and result */
    double (*exact_extra_bytes)(int P, uint64_t n, uint64_t k);
    /* bytes per rank pair at the run's peak, any payload: the arrays of P
     * entries every rank holds at once (per-peer counts, boundaries, a
     * collective's scratch and the messages in flight), measured as peak RSS
     * at P = 1024, 2048 and 4096 with a fifth or more of margin (bench/README.md, section 28) */
    double pair_bytes;
    /* node-aware forms only: which form, and the flat algorithm it runs among nodes */
    sp_algo_form form;
    const struct sp_algorithm_s *inner;
    /* 1: runs only where the nodes' switch reduces (sp_node_switch: NVLS on the
     * simulated dgx-*, roce platforms), so "all" leaves it out */
    int needs_switch;
} sp_algorithm;

/* By name: a row of the table, a diagnostic, or a node-aware form
 * "rail:X" / "leader:X" of a sparse row X. */
const sp_algorithm *sp_algorithm_find(const char *name);
/* The table's rows (flat algorithms only: the forms need nodes, so "all"
 * and the listings leave them out, as they do nccl-nvls, which needs
 * a reducing switch: sp_algorithm_switch_list). */
const sp_algorithm *sp_algorithm_list(int *count);
/* The rows that need a reducing switch in the nodes (needs_switch). */
const sp_algorithm *sp_algorithm_switch_list(int *count);
/* The form a name asks for by its prefix ("rail:", "leader:"; else
 * SP_FORM_FLAT) and, in *inner, the name after the prefix. */
sp_algo_form sp_algorithm_form_of(const char *name, const char **inner);
/* The form's prefix as names write it: "rail", "leader" ("" for flat). */
const char *sp_algo_form_name(sp_algo_form form);

/* The class's name as outputs write it: "dense", "sparse", "compressed". */
const char *sp_algo_class_name(sp_algo_class cls);

/* the algorithms */
int sp_ring_allreduce(sp_ctx *c, sp_algo_io *io);
int sp_recdoubling_allreduce(sp_ctx *c, sp_algo_io *io);
int sp_rabenseifner_allreduce(sp_ctx *c, sp_algo_io *io);
int sp_topka(sp_ctx *c, sp_algo_io *io);
int sp_gtopk(sp_ctx *c, sp_algo_io *io);
int sp_gaussiank(sp_ctx *c, sp_algo_io *io);
int sp_topkdsa(sp_ctx *c, sp_algo_io *io);
int sp_oktopk(sp_ctx *c, sp_algo_io *io);
int sp_nccl_ring(sp_ctx *c, sp_algo_io *io);
int sp_nccl_tree(sp_ctx *c, sp_algo_io *io);
int sp_nccl_nvls(sp_ctx *c, sp_algo_io *io);
int sp_onebit(sp_ctx *c, sp_algo_io *io);
int sp_qgz(sp_ctx *c, sp_algo_io *io);
int sp_powersgd(sp_ctx *c, sp_algo_io *io);
int sp_zen(sp_ctx *c, sp_algo_io *io);

/* ---- ZEN's hash and encodings (zen.c runs them; tests and bounds read them) ----
 * The owners a run of form (0 balanced, 1 central) has among P ranks; the
 * owner of index i among m owners; the indices owner o holds; the bytes of
 * a block of cnt entries of a share of `share` indices (a bitmap plus values
 * when cnt >= at x share, else pairs). */
int sp_zen_owners(int P, int form, int owners);
int sp_zen_owner_of(uint64_t n, int m, uint64_t i);
uint64_t sp_zen_share(uint64_t n, int m, int o);
uint64_t sp_zen_block_bytes(uint64_t cnt, uint64_t share, double at);
int sp_spardl(sp_ctx *c, sp_algo_io *io);

/* qgz's message of `len` entries at `bits` a code and one 4-byte scale a
 * block of `block` entries (algorithms/qgz.c; analysis/bounds.c prices it) */
static inline uint64_t sp_qgz_bytes(uint64_t len, int bits, int block)
{
    return 4 * ((len + (uint64_t)block - 1) / (uint64_t)block) + (len * (uint64_t)bits + 7) / 8;
}

/* ---- PowerSGD's sizes (powersgd.c runs them; analysis/bounds.c prices them) ----
 * A tensor of rows x cols is compressed at rank r when r(rows + cols) <
 * rows cols (the reference implementation's rule), else sent dense.  The
 * sizes do not depend on the data. */
typedef struct {
    uint64_t p;        /* floats of the P factors: r rows over the compressed tensors */
    uint64_t q;        /* floats of the Q factors: r cols over them */
    uint64_t dense;    /* floats of the tensors sent dense */
    uint64_t matrices; /* compressed tensors */
} sp_powersgd_sizes;

/* The rows of the most nearly square factorisation of `size`: its largest
 * divisor <= sqrt(size) (1 for a prime: a vector) */
uint64_t sp_most_square_rows(uint64_t size);
/* The sizes over `layers` (NULL: one tensor of n, most nearly square) */
void sp_powersgd_sizes_of(const sp_algo_layer *layers, int nlayers, uint64_t n, int r, sp_powersgd_sizes *out);
/* The dense allreduces PowerSGD runs on, by index (NULL past the last) */
const char *sp_powersgd_allreduce_name(int index);
/* The first Q's entry i of compressed tensor `matrix`: a standard normal of
 * a stream keyed by (seed, matrix), the same on every rank */
float sp_powersgd_q0(uint64_t seed, uint64_t matrix, uint64_t i);

#endif
