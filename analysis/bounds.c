/* bounds.c - the facts table: every algorithm's closed-form volume and
 * alpha-beta prediction, each with its citation, and what it consumes from
 * the residual; and the lower bound of each class.
 *
 * One row per algorithm of the registry (algorithms/registry.c; a test holds
 * the two tables against each other), found by name once; every command
 * reads its bounds and predictions from here.
 */
#include "bounds.h"
#include "nccl_model.h"
#include "algorithms/algorithm.h"
#include "algorithms/nccl_topo.h"

#include <math.h>
#include <string.h>

static int pow2_floor(int P)
{
    int p2 = 1;
    while (p2 * 2 <= P)
        p2 *= 2;
    return p2;
}

static int ceil_log2(int P)
{
    int r = 0;
    while ((1 << r) < P)
        r++;
    return r;
}

static sp_shape shape_of(int P, uint64_t n, uint64_t k)
{
    sp_shape s = {.P = P, .n = (double)n, .k = (double)k, .p2 = pow2_floor(P), .ceil_log2_P = ceil_log2(P)};
    s.rem = P - s.p2;
    s.log2_p2 = log2((double)s.p2);
    s.G = 1;
    s.channels = 1;
    s.chunk_bytes = SP_NCCL_DEFAULT_CHUNK;
    s.quant_bits = 4;
    s.quant_block = 256;
    sp_powersgd_sizes ps; /* without the run's tensors: n as one, most nearly square, rank 4, the ring */
    sp_powersgd_sizes_of(NULL, 0, n, 4, &ps);
    s.lowrank_m1 = (double)(ps.p + ps.dense);
    s.lowrank_m2 = (double)ps.q;
    s.lowrank_inner = "ring";
    s.spardl_teams = 1;
    return s;
}

/* ---- volumes, in words per rank ------------------------------------------ */

/* Patarasuk & Yuan, JPDC 2009; the gTop-k paper's cost model (Shi et al., ICDCS 2019) */
static double ring_words(const sp_shape *s, double *floor_words)
{
    (void)floor_words;
    return 2.0 * s->n * (s->P - 1) / s->P;
}

/* Thakur, Rabenseifner & Gropp, IJHPCA 19(1) 2005: n log2 P; the
 * non-power-of-two fold adds one vector in and one out */
static double recdoubling_words(const sp_shape *s, double *floor_words)
{
    (void)floor_words;
    return s->n * s->log2_p2 + (s->rem ? 2.0 * s->n : 0.0);
}

/* Rabenseifner, ICCS 2004; Thakur et al., IJHPCA 2005: 2n(p2-1)/p2, and
 * the fold as above */
static double rabenseifner_words(const sp_shape *s, double *floor_words)
{
    (void)floor_words;
    return 2.0 * s->n * (s->p2 - 1) / s->p2 + (s->rem ? 2.0 * s->n : 0.0);
}

/* Li & Hoefler, PPoPP 2022, Table 1; Renggli et al., SC 2019: 2k(P-1);
 * Gaussian-k's allgather of about k pairs per rank counts the same */
static double allgather_words(const sp_shape *s, double *floor_words)
{
    (void)floor_words;
    return 2.0 * s->k * (s->P - 1);
}

/* Shi et al., ICDCS 2019: reduction 2k log P words, plus the broadcast */
static double gtopk_words(const sp_shape *s, double *floor_words)
{
    (void)floor_words;
    return 4.0 * s->k * s->ceil_log2_P;
}

/* Renggli et al., SC 2019; Li & Hoefler, PPoPP 2022, Table 1: between
 * 4k(P-1)/P (sparse to the end) and (2k+n)(P-1)/P (a dense allgather) */
static double topkdsa_words(const sp_shape *s, double *floor_words)
{
    *floor_words = 4.0 * s->k * (s->P - 1) / s->P;
    return (2.0 * s->k + s->n) * (s->P - 1) / s->P;
}

/* Li & Hoefler, PPoPP 2022, Eq. 3 */
static double oktopk_words(const sp_shape *s, double *floor_words)
{
    (void)floor_words;
    return 6.0 * s->k * (s->P - 1) / s->P;
}

/* Wang et al., ZEN, OSDI 2025 (push to hashed owners, pull of their sums):
 * a push of at most k pairs, the pull of at most min(Pk, n) reduced entries
 * as pairs (bitmaps, at the default rule, are never larger); the balanced
 * form, whose owners receive about as much as a rank pushes */
static double zen_words(const sp_shape *s, double *floor_words)
{
    (void)floor_words;
    double u = s->P * s->k < s->n ? s->P * s->k : s->n;
    return 2.0 * s->k + 2.0 * u;
}

/* SparDL (Zhao et al., arXiv 2304.00737; algorithms/spardl.c): with d teams
 * of W = P/d, k_b = floor(k/W) pairs a block, h = floor(share k_b): W - 1
 * reduce-scatter steps of k_b pairs, and for d > 1 Bruck's allgather of h
 * pairs across the d teams and of 8-byte counts in the team; the team's
 * allgather of W - 1 blocks of h pairs (d = 1) or at most k_b (d > 1).
 * d = 1, W | k: 4k(P-1)/P words, exact. */
typedef struct {
    double W, d, kb, h;
} spardl_sizes;

static spardl_sizes spardl_of(const sp_shape *s)
{
    spardl_sizes z;
    z.d = s->spardl_teams > 0 ? s->spardl_teams : 1;
    z.W = floor(s->P / z.d);
    z.kb = floor(s->k / z.W);
    if (z.kb < 1)
        z.kb = 1;
    double share = s->spardl_share > 0 ? s->spardl_share : 1.0 / z.d;
    z.h = floor(share * z.kb + 1e-9);
    z.h = z.h < 1 ? 1 : z.h > z.kb ? z.kb : z.h;
    return z;
}

static double spardl_words(const sp_shape *s, double *floor_words)
{
    (void)floor_words;
    spardl_sizes z = spardl_of(s);
    if (z.d == 1)
        return 2.0 * z.kb * (z.W - 1) + 2.0 * z.h * (z.W - 1);
    return 2.0 * z.kb * (z.W - 1) + 2.0 * z.h * (z.d - 1) + 2.0 * (z.W - 1) + 2.0 * z.kb * (z.W - 1);
}

static int ceil_log2_d(double x)
{
    int r = 0;
    while ((double)(1 << r) < x)
        r++;
    return r;
}

static double spardl_seconds(const sp_shape *s, double alpha, double beta)
{
    spardl_sizes z = spardl_of(s);
    double t = (z.W - 1) * (alpha + 8.0 * z.kb * beta) + ceil_log2_d(z.W) * alpha;
    if (z.d == 1)
        return t + 8.0 * z.h * (z.W - 1) * beta;
    return t + ceil_log2_d(z.d) * alpha + 8.0 * z.h * (z.d - 1) * beta + ceil_log2_d(z.W) * alpha +
           8.0 * (z.W - 1) * beta + 8.0 * z.kb * (z.W - 1) * beta;
}

/* the run's teams (the shape's d); on nodes at the inter-node class */
static double spardl_seconds2(const sp_shape *s, const sp_link_classes *l)
{
    return spardl_seconds(s, l->inter_alpha, l->inter_beta);
}

/* ---- alpha-beta predictions (one message of L bytes: alpha + L beta) ------ */

/* 2(P-1) steps of one block; the largest block paces each step */
static double ring_seconds(const sp_shape *s, double alpha, double beta)
{
    double blk = ceil(s->n / s->P);
    return 2.0 * (s->P - 1) * (alpha + 4.0 * blk * beta);
}

static double recdoubling_seconds(const sp_shape *s, double alpha, double beta)
{
    return (s->log2_p2 + (s->rem ? 2 : 0)) * (alpha + 4.0 * s->n * beta);
}

static double rabenseifner_seconds(const sp_shape *s, double alpha, double beta)
{
    return 2.0 * s->log2_p2 * alpha + 2.0 * 4.0 * s->n * (s->p2 - 1) / s->p2 * beta +
           (s->rem ? 2.0 * (alpha + 4.0 * s->n * beta) : 0.0);
}

/* Bruck allgather: ceil(log2 P) rounds, (P-1) blocks of 8k bytes */
static double topka_seconds(const sp_shape *s, double alpha, double beta)
{
    return s->ceil_log2_P * alpha + 8.0 * s->k * (s->P - 1) * beta;
}

/* ceil(log2 P) rounds of one 8k-byte message up the tree and down again */
static double gtopk_seconds(const sp_shape *s, double alpha, double beta)
{
    return 2.0 * s->ceil_log2_P * (alpha + 8.0 * s->k * beta);
}

/* Li & Hoefler, PPoPP 2022, Eq. 3: (2P + 2 log P) alpha + 6k(P-1)/P words */
static double oktopk_seconds(const sp_shape *s, double alpha, double beta)
{
    return (2.0 * s->P + 2.0 * s->ceil_log2_P) * alpha + 4.0 * 6.0 * s->k * (s->P - 1) / s->P * beta;
}

/* Renggli et al., SC 2019 (as Table 1 of Li & Hoefler): (P + 2 log P) alpha,
 * and the sparse end of its bandwidth term, 4k(P-1)/P words */
static double topkdsa_seconds(const sp_shape *s, double alpha, double beta)
{
    return (s->P + 2.0 * s->ceil_log2_P) * alpha + 4.0 * 4.0 * s->k * (s->P - 1) / s->P * beta;
}

/* ZEN's balanced form with disjoint selections (the sparse end): counts
 * (ceil(log2 P) rounds), the push by rotation in buckets of min(4, P)
 * (ceil((P-1)/b) rounds of 8k/P bytes per peer), the owners' counts and an
 * allgatherv of Pk reduced pairs (ceil(log2 P) rounds each) */
static double zen_seconds(const sp_shape *s, double alpha, double beta)
{
    double b = s->bucket > 0 ? s->bucket : s->P < 4 ? s->P : 4;
    double rounds = s->P > 1 ? ceil((s->P - 1) / b) : 0;
    double u = s->P * s->k < s->n ? s->P * s->k : s->n;
    return (3.0 * s->ceil_log2_P + rounds) * alpha + 8.0 * s->k * (s->P - 1) / s->P * beta +
           8.0 * u * (s->P - 1) / s->P * beta;
}

/* counts, then about k pairs per rank, both by Bruck's allgather */
static double gaussiank_seconds(const sp_shape *s, double alpha, double beta)
{
    return 2.0 * s->ceil_log2_P * alpha + 8.0 * (s->P - 1) * beta + 8.0 * s->k * (s->P - 1) * beta;
}

/* ---- the table ------------------------------------------------------------ */

#define DENSE_CONSUMES "every entry: the whole vector enters the result"

/* onebit.c: a message is a scale and a bit per entry of a chunk of
 * ceil(n/P): m = 4 + ceil(ceil(n/P)/8) bytes; P-1 of them each way in the
 * reduce-scatter and in the allgather */
static double onebit_msg(const sp_shape *s) { return 4.0 + ceil(ceil(s->n / s->P) / 8.0); }

static double onebit_words(const sp_shape *s, double *floor_words)
{
    (void)floor_words;
    return 2.0 * (s->P - 1) * onebit_msg(s) / 4.0; /* bytes to words: 4 bytes a word */
}

/* the buckets of a rotation among `peers` ranks: b steps each (--bucket,
 * 0: min(4, peers)) */
static double rotation_buckets(int peers, int bucket)
{
    double b = bucket > 0 ? bucket : peers < 4 ? peers : 4;
    return peers > 1 ? ceil((peers - 1) / b) : 0;
}

/* the rotation's buckets, then Bruck's ceil(log2 P) rounds; P-1 messages
 * each way in both */
static double onebit_seconds(const sp_shape *s, double alpha, double beta)
{
    return (rotation_buckets((int)s->P, s->bucket) + s->ceil_log2_P) * alpha + 2.0 * (s->P - 1) * onebit_msg(s) * beta;
}

/* on nodes, the inter-node class for every message: exact on one class of
 * links (flat platforms), an upper bound where some messages stay on NVLink */
static double onebit_seconds2(const sp_shape *s, const sp_link_classes *l)
{
    return onebit_seconds(s, l->inter_alpha, l->inter_beta);
}

/* qgz.c: every message carries shards of ceil(n/P) entries at b bits a
 * code and a 4-byte scale a block; with G GPUs a node and N nodes, a rank
 * sends G-1 messages of N shards in the node, N-1 of one along its rail,
 * and gathers N-1 along the rail and (G-1)N in the node: 2(P-1) shards */
static double qgz_shard_bytes(const sp_shape *s)
{
    return (double)sp_qgz_bytes((uint64_t)ceil(s->n / s->P), s->quant_bits, s->quant_block);
}

static double qgz_words(const sp_shape *s, double *floor_words)
{
    (void)floor_words;
    return 2.0 * (s->P - 1) * qgz_shard_bytes(s) / 4.0; /* bytes to words: 4 bytes a word */
}

/* the rotation's buckets of min(4, peers) then Bruck's rounds, in the node
 * (intra class) and along the rail (inter class) */
static double qgz_seconds2(const sp_shape *s, const sp_link_classes *l)
{
    int P = (int)s->P, G = s->G > 0 && P % s->G == 0 ? s->G : 1, N = P / G;
    double q = qgz_shard_bytes(s);
    double node = (G > 1 ? rotation_buckets(G, s->bucket) + ceil(log2(G)) : 0) * l->intra_alpha +
                  2.0 * (G - 1) * N * q * l->intra_beta;
    double rail = (N > 1 ? rotation_buckets(N, s->bucket) + ceil(log2(N)) : 0) * l->inter_alpha +
                  2.0 * (N - 1) * q * l->inter_beta;
    return node + rail;
}

static double qgz_seconds(const sp_shape *s, double alpha, double beta)
{
    sp_link_classes l = {alpha, beta, alpha, beta, 1, 0};
    return qgz_seconds2(s, &l);
}

/* powersgd.c: two allreduces on a dense algorithm, of m1 = r sum rows +
 * (the tensors sent dense) floats and of m2 = r sum cols (Vogels et al.,
 * NeurIPS 2019, Algorithm 1); each costs what that algorithm's row says for
 * its size (m2 = 0: no tensor compressed, no second allreduce) */
static const sp_algo_facts *lowrank_inner(const sp_shape *s);

static double lowrank_sum(const sp_shape *s, double (*one)(const sp_algo_facts *f, const sp_shape *x, const void *arg),
                          const void *arg)
{
    const sp_algo_facts *f = lowrank_inner(s);
    double t = 0, m[2] = {s->lowrank_m1, s->lowrank_m2};
    for (int i = 0; f && i < 2; i++)
        if (m[i] > 0) {
            sp_shape x = *s;
            x.n = m[i];
            t += one(f, &x, arg);
        }
    return t;
}

static double lowrank_one_words(const sp_algo_facts *f, const sp_shape *x, const void *arg)
{
    (void)arg;
    double fl = 0;
    return f->words(x, &fl);
}

static double powersgd_words(const sp_shape *s, double *floor_words)
{
    (void)floor_words;
    return lowrank_sum(s, lowrank_one_words, NULL);
}

static double lowrank_one_seconds2(const sp_algo_facts *f, const sp_shape *x, const void *arg)
{
    const sp_link_classes *l = arg;
    return f->seconds2 ? f->seconds2(x, l) : f->seconds(x, l->inter_alpha, l->inter_beta);
}

static double powersgd_seconds2(const sp_shape *s, const sp_link_classes *l)
{
    return lowrank_sum(s, lowrank_one_seconds2, l);
}

static double powersgd_seconds(const sp_shape *s, double alpha, double beta)
{
    sp_link_classes l = {alpha, beta, alpha, beta, 1, 0};
    return powersgd_seconds2(s, &l);
}

static const sp_algo_facts facts[] = {
    {.name = "ring",
     .formula = "2n(P-1)/P",
     .source = "Patarasuk & Yuan, JPDC 69(2) 2009",
     .words = ring_words,
     .time_formula = "2(P-1)(alpha + 4 ceil(n/P) beta)",
     .time_source = "Patarasuk & Yuan, JPDC 69(2) 2009",
     .seconds = ring_seconds,
     .consumes = DENSE_CONSUMES},
    {.name = "recdoubling",
     .formula = "n log2 P",
     .formula_any = "n(log2 p2 + 2), p2 = 2^floor(log2 P)",
     .source = "Thakur, Rabenseifner & Gropp, IJHPCA 19(1) 2005",
     .words = recdoubling_words,
     .time_formula = "log2 P (alpha + 4n beta); (log2 p2 + 2)(alpha + 4n beta) for P not a power of two",
     .time_source = "Thakur, Rabenseifner & Gropp, IJHPCA 19(1) 2005",
     .seconds = recdoubling_seconds,
     .consumes = DENSE_CONSUMES},
    {.name = "rabenseifner",
     .formula = "2n(P-1)/P",
     .formula_any = "2n(p2-1)/p2 + 2n, p2 = 2^floor(log2 P)",
     .source = "Rabenseifner, ICCS 2004; Thakur et al., IJHPCA 2005",
     .words = rabenseifner_words,
     .time_formula = "2 log2 p2 alpha + 8n(p2-1)/p2 beta, plus 2(alpha + 4n beta) for P not a power of two",
     .time_source = "Rabenseifner, ICCS 2004; Thakur et al., IJHPCA 2005",
     .seconds = rabenseifner_seconds,
     .consumes = DENSE_CONSUMES},
    {.name = "topka",
     .formula = "2k(P-1)",
     .source = "Li & Hoefler, PPoPP 2022, Table 1",
     .words = allgather_words,
     .time_formula = "ceil(log2 P) alpha + 8k(P-1) beta (Bruck's allgather)",
     .time_source = "Bruck et al., IEEE TPDS 8(11) 1997; Li & Hoefler, PPoPP 2022, Table 1",
     .seconds = topka_seconds,
     .consumes = "its own exact top-k, all of which enter the result"},
    {.name = "gtopk",
     .formula = "4k ceil(log2 P)",
     .source = "Shi et al., ICDCS 2019; Li & Hoefler, PPoPP 2022, Table 1",
     .words = gtopk_words,
     .time_formula = "2 ceil(log2 P)(alpha + 8k beta)",
     .time_source = "Shi et al., ICDCS 2019",
     .seconds = gtopk_seconds,
     .consumes = "its own exact top-k entries whose index is among the global top k (the authors' rule; "
                 "not mass-preserving for P >= 3)"},
    {.name = "gaussiank",
     .formula = "2k(P-1) (about: counts vary)",
     .source = "Li & Hoefler, PPoPP 2022, Table 1",
     .words = allgather_words,
     .time_formula = "2 ceil(log2 P) alpha + 8(P-1) beta + 8k(P-1) beta (counts, then pairs, by Bruck's allgather)",
     .time_source = "Li & Hoefler, PPoPP 2022, Table 1; Bruck et al., IEEE TPDS 8(11) 1997",
     .seconds = gaussiank_seconds,
     .consumes = "its selection (|acc| above the normal fit's threshold, as adjusted), all of which enters the "
                 "result"},
    {.name = "topkdsa",
     .formula = "(2k+n)(P-1)/P, at least 4k(P-1)/P",
     .source = "Renggli et al., SC 2019; Li & Hoefler, PPoPP 2022, Table 1",
     .words = topkdsa_words,
     .time_formula = "(P + 2 ceil(log2 P)) alpha + 16k(P-1)/P beta (the sparse end)",
     .time_source = "Renggli et al., SC 2019; Li & Hoefler, PPoPP 2022, Table 1",
     .seconds = topkdsa_seconds,
     .consumes = "its own exact top-k, all of which enter the result"},
    {.name = "oktopk",
     .formula = "6k(P-1)/P",
     .source = "Li & Hoefler, PPoPP 2022, Eq. 3",
     .words = oktopk_words,
     .time_formula = "(2P + 2 ceil(log2 P)) alpha + 24k(P-1)/P beta",
     .time_source = "Li & Hoefler, PPoPP 2022, Eq. 3",
     .seconds = oktopk_seconds,
     .consumes = "its local selection (|acc| above its local threshold) at the indices that entered the global "
                 "result (above the global threshold, or the exact global top k when it is recomputed)"},
    /* nccl_model.c: the forms, their sharing and where they are exact */
    {.name = "nccl-ring",
     .formula = "2n(P-1)/P",
     .source = "Patarasuk & Yuan, JPDC 69(2) 2009 (per channel, C channels of n/C)",
     .words = sp_nccl_ring_words,
     .time_formula = "2(P-1) max_GPU(alpha + 4b(e beta_inter + (C-e) beta_intra)), b = ceil(ceil(n/C)/P), e of a "
                     "GPU's C flows off the node (ceil or floor of C/G); separate NVLink and NIC ports take the max of "
                     "the two classes instead; one class: 2(P-1)(alpha + 4bC beta)",
     .time_source = "Patarasuk & Yuan, JPDC 69(2) 2009; the alpha-beta model as Thakur, Rabenseifner & Gropp, "
                    "IJHPCA 19(1) 2005",
     .seconds = sp_nccl_ring_seconds,
     .seconds2 = sp_nccl_ring_seconds2,
     .consumes = DENSE_CONSUMES},
    {.name = "nccl-tree",
     .formula = "2 max_r max(sent_r, recv_r) over the 2C lanes of n/2C (2n for G = 1, C = 1, N >= 3)",
     .source = "Sanders, Speck & Traeff, Parallel Computing 35(12) 2009; NCCL 2.4's double binary trees",
     .words = sp_nccl_tree_words,
     .time_formula = "sum over 2(D + K - 1) hops of the busiest port's alpha + bytes beta: D = G-1 + floor(log2(N-1)) "
                     "+ 1, K chunks per lane; (D + K - 1) 2(alpha + 4c F beta) when every hop has F chunks of c floats "
                     "on the busiest port",
     .time_source = "Sanders, Speck & Traeff, Parallel Computing 35(12) 2009 (pipelined trees); the alpha-beta "
                    "model as Thakur, Rabenseifner & Gropp, IJHPCA 19(1) 2005",
     .seconds = sp_nccl_tree_seconds,
     .seconds2 = sp_nccl_tree_seconds2,
     .consumes = DENSE_CONSUMES},
    {.name = "onebit",
     .formula = "2(P-1)(4 + ceil(ceil(n/P)/8))/4: a 4-byte scale and a bit per entry of a chunk, P-1 chunks each "
                "way in the reduce-scatter and the allgather",
     .source = "Tang et al., 1-bit Adam, ICML 2021 (the compressed allreduce: 1 bit an entry and a scale)",
     .words = onebit_words,
     .time_formula = "(ceil((P-1)/b) + ceil(log2 P)) alpha + 2(P-1) m beta, m = 4 + ceil(ceil(n/P)/8) bytes, b = "
                     "--bucket or min(4,P) (the rotation's buckets, then Bruck's allgather; on nodes at the inter-node "
                     "class)",
     .time_source = "Tang et al., ICML 2021; Bruck et al., IEEE TPDS 8(11) 1997; the alpha-beta model as Thakur, "
                    "Rabenseifner & Gropp, IJHPCA 19(1) 2005",
     .seconds = onebit_seconds,
     .seconds2 = onebit_seconds2,
     .consumes = "nothing whole: the residual keeps x - scale sign(x) of every chunk, what the worker's "
                 "compression lost (error feedback); the server keeps its own residual of its chunk"},
    {.name = "qgz",
     .formula = "2(P-1) m / 4, m = 4 ceil(ceil(n/P)/block) + ceil(ceil(n/P) b / 8) bytes: a shard at b bits an entry "
                "and a scale a block, P-1 shards each way",
     .source = "Wang et al., ZeRO++, ICLR 2024 (qgZ: block-wise INT4 quantization, a hierarchical all-to-all)",
     .words = qgz_words,
     .time_formula = "(ceil((G-1)/b_G) + ceil(log2 G)) alpha_intra + 2(G-1) N m beta_intra + (ceil((N-1)/b_N) + "
                     "ceil(log2 N)) alpha_inter + 2(N-1) m beta_inter, b_X = --bucket or min(4,X) (the rotations, then "
                     "Bruck's allgathers)",
     .time_source = "Wang et al., ICLR 2024; Bruck et al., IEEE TPDS 8(11) 1997; the alpha-beta model as Thakur, "
                    "Rabenseifner & Gropp, IJHPCA 19(1) 2005",
     .seconds = qgz_seconds,
     .seconds2 = qgz_seconds2,
     .consumes = DENSE_CONSUMES " (quantized: what the codes lose is lost, as in ZeRO++)"},
    {.name = "powersgd",
     .formula = "the dense algorithm's volume of m1 plus that of m2 (the ring: 2(m1 + m2)(P-1)/P), m1 = r sum rows + "
                "(the tensors sent dense), m2 = r sum cols over the tensors compressed (r(rows + cols) < rows cols)",
     .source = "Vogels, Karimireddy & Jaggi, PowerSGD, NeurIPS 2019, Algorithm 1 (an allreduce of the P factors, "
               "one of the Q factors)",
     .words = powersgd_words,
     .time_formula = "the dense algorithm's time for m1 floats plus its time for m2 (the ring: 2(P-1)(2 alpha + "
                     "4(ceil(m1/P) + ceil(m2/P)) beta))",
     .time_source = "Vogels et al., NeurIPS 2019; the dense algorithm's own row",
     .seconds = powersgd_seconds,
     .seconds2 = powersgd_seconds2,
     .consumes = "nothing whole: the residual keeps M - P Q^T / W of every compressed tensor, what the rank's "
                 "share of the approximation left (error feedback); the tensors sent dense leave it whole"},
    {.name = "zen",
     .formula = "2k + 2 min(Pk, n): a push of at most k pairs, the pull of the owners' sums (at most min(Pk, n) "
                "entries; bitmaps, at the default rule, are never larger than pairs)",
     .source = "Wang et al., ZEN, OSDI 2025 (hashed owners, push and pull, hash-bitmap encoding)",
     .words = zen_words,
     .time_formula = "(3 ceil(log2 P) + ceil((P-1)/b)) alpha + 8k(P-1)/P beta + 8 min(Pk, n)(P-1)/P beta, b = --bucket "
                     "or min(4,P) (disjoint selections, the balanced form: counts, the push by rotation, the owners' "
                     "counts and sums by Bruck's allgather)",
     .time_source = "Wang et al., OSDI 2025; Bruck et al., IEEE TPDS 8(11) 1997; the alpha-beta model as Thakur, "
                    "Rabenseifner & Gropp, IJHPCA 19(1) 2005",
     .seconds = zen_seconds,
     .consumes = "its own exact top-k, all of which enter the result"},
    {.name = "spardl",
     .formula = "4k(P-1)/P for d = 1 (2k_b(W-1) + 2h(W-1), W = P/d, k_b = floor(k/W), h = floor(k_b/d)); for d > 1 "
                "at most 2k_b(W-1) + 2h(d-1) + 2(W-1) + 2k_b(W-1)",
     .source = "Zhao et al., SparDL, arXiv 2304.00737 (Spar-Reduce-Scatter of k/P a block, Spar-All-Gather by Bruck "
               "in d teams), counted from the algorithm and the authors' code",
     .words = spardl_words,
     .time_formula = "(W-1)(alpha + 8k_b beta) + ceil(log2 W) alpha + 8h(W-1) beta for d = 1; d > 1 adds ceil(log2 d) "
                     "alpha + 8h(d-1) beta (across teams) and ceil(log2 W) alpha + 8(W-1) beta (the counts), the "
                     "allgather at most 8k_b(W-1) beta",
     .time_source = "Zhao et al., arXiv 2304.00737; Bruck et al., IEEE TPDS 8(11) 1997",
     .seconds = spardl_seconds,
     .seconds2 = spardl_seconds2,
     .consumes = "collect (default): what it forwarded, every partial sum it dropped stays (global residual "
                 "collection); code: as the authors' code, its own entries outside the global result stay, and the "
                 "partial sums it dropped at indices inside it"},
};

static const sp_algo_facts *lowrank_inner(const sp_shape *s)
{
    return sp_algo_facts_find(s->lowrank_inner ? s->lowrank_inner : "ring");
}

/* The rows of the registry's switch_rows (algorithms that need a reducing
 * switch), apart from the table above as they are from "all". */
static const sp_algo_facts switch_facts[] = {
    {.name = "nccl-nvls",
     .formula = "n + ceil(n/G) on one node; 2n + 2 ceil(ceil(n/G)/N)(N-1) on N nodes",
     .source = "NCCL 2.17's NVLS (NVLink SHARP in the NVSwitch, gen 3 on): every GPU pushes n, the switch sends "
               "each owner its shard's sum and multicasts it back",
     .words = sp_nccl_nvls_words,
     .time_formula = "one node: 4 alpha_p + c(max(G beta_p, G^2 beta_s) + beta_p + max(beta_p, G beta_s) + G beta_p) "
                     "+ (K-1) c max((G+1) beta_p, G(G+1) beta_s), c the chunk's bytes, K chunks a shard, beta_p a "
                     "GPU's port, beta_s the switch's intake; several nodes add the rail's ring (analysis/nccl_model.c)",
     .time_source = "the alpha-beta model as Thakur, Rabenseifner & Gropp, IJHPCA 19(1) 2005, with the switch's "
                    "intake as a shared link",
     .seconds = sp_nccl_nvls_seconds,
     .seconds2 = sp_nccl_nvls_seconds2,
     .consumes = DENSE_CONSUMES},
};

/* the dense lower bound: every rank must receive the other ranks' share of
 * each of its reduced entries and send its own (Patarasuk & Yuan, 2009) */
static double dense_lower(const sp_shape *s) { return 2.0 * s->n * (s->P - 1) / s->P; }

/* the sparse lower bound, Li & Hoefler, PPoPP 2022, Theorem 3.1 */
static double sparse_lower(const sp_shape *s) { return 2.0 * s->k * (s->P - 1) / s->P; }

/* a compressed allreduce still moves every entry, at one bit at least: the
 * dense bound at 1/32 of a word (Patarasuk & Yuan, 2009, with 1-bit entries
 * as Tang et al., ICML 2021, send them) */
static double compressed_lower(const sp_shape *s) { return 2.0 * s->n * (s->P - 1) / s->P / 32.0; }

static const sp_lower_bound lower_bounds[] = {
    [SP_ALGO_DENSE] = {.formula = "2n(P-1)/P", .source = "Patarasuk & Yuan, JPDC 2009", .words = dense_lower},
    [SP_ALGO_SPARSE] = {.formula = "2k(P-1)/P", .source = "Li & Hoefler, PPoPP 2022, Theorem 3.1",
                        .words = sparse_lower},
    [SP_ALGO_COMPRESSED] = {.formula = "2n(P-1)/(32P)",
                            .source = "Patarasuk & Yuan, JPDC 2009, at one bit an entry (Tang et al., ICML 2021)",
                            .words = compressed_lower},
};

const sp_algo_facts *sp_algo_facts_find(const char *name)
{
    for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++)
        if (strcmp(facts[i].name, name) == 0)
            return &facts[i];
    for (size_t i = 0; i < sizeof switch_facts / sizeof switch_facts[0]; i++)
        if (strcmp(switch_facts[i].name, name) == 0)
            return &switch_facts[i];
    return NULL;
}

const sp_algo_facts *sp_algo_facts_switch_list(int *count)
{
    *count = (int)(sizeof switch_facts / sizeof switch_facts[0]);
    return switch_facts;
}

const sp_algo_facts *sp_algo_facts_list(int *count)
{
    *count = (int)(sizeof facts / sizeof facts[0]);
    return facts;
}

const sp_lower_bound *sp_lower_bound_of(int cls)
{
    if (cls < 0 || cls >= (int)(sizeof lower_bounds / sizeof lower_bounds[0]) || !lower_bounds[cls].words)
        return NULL;
    return &lower_bounds[cls];
}

int sp_facts_bound(const sp_algo_facts *f, int P, uint64_t n, uint64_t k, sp_bound *b)
{
    memset(b, 0, sizeof *b);
    const sp_algorithm *a = f ? sp_algorithm_find(f->name) : NULL;
    if (!a)
        return -1;
    sp_shape s = shape_of(P, n, k);
    b->words = f->words(&s, &b->floor_words);
    b->formula = s.rem && f->formula_any ? f->formula_any : f->formula;
    b->source = f->source;
    const sp_lower_bound *lb = sp_lower_bound_of(a->cls);
    if (lb) {
        b->lower_words = lb->words(&s);
        b->lower_formula = lb->formula;
        b->lower_source = lb->source;
    } else {
        b->lower_formula = b->lower_source = "-";
    }
    return 0;
}

double sp_facts_predict(const sp_algo_facts *f, int P, uint64_t n, uint64_t k, double alpha, double beta)
{
    if (P <= 1)
        return 0.0;
    if (!f)
        return -1.0;
    sp_shape s = shape_of(P, n, k);
    return f->seconds(&s, alpha, beta);
}

/* the shape with the ranks' nodes and the NCCL algorithms' settings */
static sp_shape shape_on(int P, uint64_t n, uint64_t k, const sp_nodes *nd)
{
    sp_shape s = shape_of(P, n, k);
    if (nd && nd->G > 1 && P % nd->G == 0)
        s.G = nd->G;
    s.channels = nd && nd->channels > 0 ? nd->channels : sp_nccl_default_channels(s.G);
    if (nd && nd->chunk_bytes)
        s.chunk_bytes = (double)nd->chunk_bytes;
    if (nd && nd->quant_bits)
        s.quant_bits = nd->quant_bits;
    if (nd && nd->quant_block)
        s.quant_block = nd->quant_block;
    if (nd)
        s.bucket = nd->bucket;
    if (nd && nd->lowrank_m1) {
        s.lowrank_m1 = (double)nd->lowrank_m1;
        s.lowrank_m2 = (double)nd->lowrank_m2;
    }
    if (nd && nd->lowrank_inner)
        s.lowrank_inner = nd->lowrank_inner;
    if (nd && nd->spardl_teams > 0 && (int)s.P % nd->spardl_teams == 0)
        s.spardl_teams = nd->spardl_teams;
    if (nd)
        s.spardl_share = nd->spardl_share;
    return s;
}

int sp_facts_bound_nodes(const sp_algo_facts *f, int P, uint64_t n, uint64_t k, const sp_nodes *nd, sp_bound *b)
{
    if (sp_facts_bound(f, P, n, k, b) != 0)
        return -1;
    sp_shape s = shape_on(P, n, k, nd);
    b->floor_words = 0;
    b->words = f->words(&s, &b->floor_words);
    return 0;
}

double sp_facts_predict_nodes(const sp_algo_facts *f, int P, uint64_t n, uint64_t k, const sp_nodes *nd,
                              const sp_link_classes *l)
{
    if (P <= 1)
        return 0.0;
    if (!f || !f->seconds2)
        return -1.0;
    sp_shape s = shape_on(P, n, k, nd);
    return f->seconds2(&s, l);
}

/* NCCL's tuner picks the algorithm its cost model says is fastest for the
 * size (NCCL 2.4 on: ring or tree; 2.17 on: NVLS too, where the NVSwitch
 * reduces); here the forms above decide */
const char *sp_nccl_choose(int P, int G, uint64_t n, const sp_link_classes *l)
{
    sp_nodes nd = {.G = G};
    double ring = sp_facts_predict_nodes(sp_algo_facts_find("nccl-ring"), P, n, 0, &nd, l);
    double tree = sp_facts_predict_nodes(sp_algo_facts_find("nccl-tree"), P, n, 0, &nd, l);
    /* NVLS where the switch reduces (l->nvls_bw) and the ranks fill whole nodes */
    double nvls = l->nvls_bw > 0 && G > 1 && P % G == 0
                      ? sp_facts_predict_nodes(sp_algo_facts_find("nccl-nvls"), P, n, 0, &nd, l)
                      : -1.0;
    if (nvls > 0 && nvls < ring && nvls < tree)
        return "nccl-nvls";
    return tree < ring ? "nccl-tree" : "nccl-ring";
}

int sp_bound_volume(const char *algo, int P, uint64_t n, uint64_t k, sp_bound *b)
{
    return sp_facts_bound(sp_algo_facts_find(algo), P, n, k, b);
}

double sp_predict_time(const char *algo, int P, uint64_t n, uint64_t k, double alpha, double beta)
{
    return P <= 1 ? 0.0 : sp_facts_predict(sp_algo_facts_find(algo), P, n, k, alpha, beta);
}

/* ---- node-aware forms (algorithms/node_aware.c) ----------------------------
 * rail:X: inside a node, a ring reduce-scatter and a ring allgather of G
 * shards (Patarasuk & Yuan, JPDC 2009, on G ranks): each a phase in which
 * every rank sends and receives every shard but one, n - floor(n/G) words at
 * most (the smallest shard is the one left out), so 2(n - floor(n/G)) words,
 * 2n(G-1)/G when G divides n.  Between nodes: X on rail j, N = P/G ranks, on
 * shard j's n_j <= ceil(n/G) entries selecting floor(k/G): X's bound with
 * P -> N, n -> ceil(n/G), k -> floor(k/G).
 * leader:X: inside a node, a binomial-tree reduce to local rank 0 and the
 * binomial broadcast back (sp_bcast): the leader receives, then sends,
 * ceil(log2 G) vectors of n words, 2n ceil(log2 G) in all (every other rank
 * moves fewer; the node's ranks together send 2(G-1)n).  Between nodes: X
 * among the N leaders on all n entries: X's bound with P -> N. */
int sp_node_bound_volume(const char *algo, int P, int G, uint64_t n, uint64_t k, sp_node_bound *b)
{
    memset(b, 0, sizeof *b);
    const sp_algorithm *a = sp_algorithm_find(algo);
    if (!a || a->form == SP_FORM_FLAT || !a->inner || G < 1 || P % G)
        return -1;
    const sp_algo_facts *f = sp_algo_facts_find(a->inner->name);
    if (!f)
        return -1;
    b->G = G;
    b->N = P / G;
    if (a->form == SP_FORM_RAIL) {
        b->n_inner = (n + (uint64_t)G - 1) / (uint64_t)G;
        b->k_inner = k / (uint64_t)G;
        b->intra_words = 2.0 * (double)(n - n / (uint64_t)G);
        b->intra_formula = "2n(G-1)/G (2(n - floor(n/G)) when G does not divide n)";
    } else {
        b->n_inner = n;
        b->k_inner = k;
        b->intra_words = 2.0 * (double)n * ceil_log2(G);
        b->intra_formula = "2n ceil(log2 G)";
    }
    sp_shape s = shape_of(b->N, b->n_inner, b->k_inner);
    b->inter_words = b->N > 1 ? f->words(&s, &b->inter_floor_words) : 0.0;
    b->inter_formula = f->formula;
    b->source = f->source;
    b->words = b->intra_words + b->inter_words;
    b->floor_words = b->inter_floor_words > 0 ? b->intra_words + b->inter_floor_words : 0.0;
    b->formula = a->form == SP_FORM_RAIL ? "2n(G-1)/G inside a node + X's with P -> N, n -> n/G, k -> k/G between nodes"
                                         : "2n ceil(log2 G) inside a node + X's with P -> N between nodes";
    const sp_lower_bound *lb = sp_lower_bound_of(a->cls);
    if (lb) {
        sp_shape whole = shape_of(P, n, k);
        b->lower_words = lb->words(&whole);
        b->lower_formula = lb->formula;
    } else {
        b->lower_formula = "-";
    }
    return 0;
}
