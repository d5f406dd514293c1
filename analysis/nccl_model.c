/* nccl_model.c - closed forms of nccl-ring, nccl-tree and nccl-nvls on ranks grouped
 * into nodes, in the alpha-beta model (Thakur, Rabenseifner & Gropp, IJHPCA
 * 2005: a message of L bytes costs alpha + L beta), with two classes of
 * links (inside a node, between nodes) and the sharing of a rank's port by
 * its concurrent flows.  The shapes (rings, chains, trees) are the
 * algorithms' own, algorithms/nccl_topo.h.
 *
 * Ring (Patarasuk & Yuan, JPDC 2009, per channel): 2(P-1) steps; in each a
 * rank sends and receives one block of b = ceil(ceil(n/C)/P) floats on each
 * of its C channels at once.  Of a GPU's C flows, e leave the node (the
 * channels whose crossing it is: ceil(C/G) or floor(C/G); none on a single
 * node; all C when G = 1) and C - e stay on NVLink.  A step costs
 *   separate ports: max(alpha_inter + 4b e beta_inter, alpha_intra + 4b (C-e) beta_intra)
 *   one port:       max alpha + 4b (e beta_inter + (C-e) beta_intra)
 * at the GPU where it is largest; one class: alpha + 4bC beta, which is
 * 2(P-1)(alpha + 4 ceil(n/P) beta) when CP divides n, the flat ring's.
 *
 * Tree (Sanders, Speck & Traeff, Parallel Computing 2009: pipelined trees in
 * the alpha-beta model): each phase (reduce, broadcast) is D + K - 1 hops,
 * D = G - 1 + d the hops from the deepest GPU to its lane's root (d the
 * trees' depth over the N nodes), K the chunks of the largest lane.  Hop
 * sigma holds every transfer of the algorithm's slot schedule from a slot
 * sigma - 1 send to a slot sigma receive, all at once; it lasts what the
 * busiest port costs with those transfers on it (per class, or summed on one
 * port, as for the ring).  The hops in the middle, where every lane of every
 * rank has a chunk, cost the same and are counted rather than walked.
 * Exact on cm02 where every hop's transfers start together at every port
 * and the busiest port paces the hop (G = 1 at an even node count; C = G
 * once chunks pipeline; dgx-h100 at 2 to 8 nodes but 6).  Not a closed form
 * elsewhere: a rank waits for its own slot's transfers only
 * (algorithms/nccl_tree.c), not for the hop across the job, so a rank whose
 * ports carried less starts its next slot early, and from then on the
 * transfers of one port start at different times; what max-min sharing then
 * gives depends on the whole history.  Both ways, measured:
 *   - below the form (to -5.6% on the tests' grid, -5.3% at dgx-h100:11 and
 *     :13 with one chunk a lane): a transfer that starts ahead of the others
 *     on its port ends before the port's cost, and its receiver moves on;
 *   - above it (to +3.2% at dgx-h100 from 9 to 32 nodes with 1M floats
 *     in 64 KiB chunks, +1.4% at 16M): the early rank's next chunk reaches its
 *     receiver before that receiver has posted the receive, and holds one
 *     of the receiver's SimGrid gets (the transport keeps as many as it has
 *     posted receives, sim/backends/simgrid/transport.c) while a transfer
 *     whose receive is posted, on the critical path, waits for one.  The
 *     gap is a fixed amount of the fill: in seconds it does not grow with
 *     the chunks per lane (dgx-h100:16: 3.65 us at 8, 16 and 32 chunks of
 *     512 KiB a lane).  Posting every receive one slot or more ahead (an
 *     experiment, not the algorithm) takes this part away at dgx-h100
 *     (0.94 to 0.998 at 6 to 32 nodes) but breaks the cases that are exact
 *     here (dgx-h100:8 to 0.989, 1gbe P = 64, G = 8 to 1.004): early
 *     arrivals then flow at once, and ranks drift further apart.
 * What the gaps are not: the two lanes a NIC carries (tree 0 of one channel,
 * tree 1 of another) are both on its port in the hops above, and every tree
 * edge joins two heads of one rail, so within one leaf of a rail-optimised
 * fabric (dgx-h100: 32 nodes) no transfer crosses the spine.  Beyond it a
 * route between two leaves crosses three switches, not the one the
 * inter-node class counts (topologies/platforms.c), and the form leaves
 * those 2 x 130 ns out.  tests/test_nccl.c holds the measured gaps.
 */
#include "nccl_model.h"
#include "algorithms/blocks.h"
#include "algorithms/nccl_topo.h"

#include <math.h>
#include <stdlib.h>

/* ---- ring ------------------------------------------------------------------ */

double sp_nccl_ring_words(const sp_shape *s, double *floor_words)
{
    (void)floor_words;
    return 2.0 * s->n * (s->P - 1) / s->P;
}

/* the cost of one step at a GPU with e of its C flows off the node */
static double ring_step(int C, int e, double bytes, const sp_link_classes *l)
{
    double in = 0, out = 0;
    if (l->one_port) {
        double a = e ? l->inter_alpha : 0;
        if (C - e > 0 && l->intra_alpha > a)
            a = l->intra_alpha;
        return a + bytes * (e * l->inter_beta + (C - e) * l->intra_beta);
    }
    if (e)
        out = l->inter_alpha + bytes * e * l->inter_beta;
    if (C - e)
        in = l->intra_alpha + bytes * (C - e) * l->intra_beta;
    return out > in ? out : in;
}

double sp_nccl_ring_seconds2(const sp_shape *s, const sp_link_classes *l)
{
    int P = (int)s->P, G = s->G > 0 && P % s->G == 0 ? s->G : 1, C = s->channels, N = P / G;
    double b = ceil(ceil(s->n / C) / s->P), bytes = 4.0 * b;
    double step;
    if (N == 1)
        step = ring_step(C, 0, bytes, l);
    else {
        double hi = ring_step(C, (C + G - 1) / G, bytes, l), lo = ring_step(C, C / G, bytes, l);
        step = hi > lo ? hi : lo;
    }
    return 2.0 * (s->P - 1) * step;
}

double sp_nccl_ring_seconds(const sp_shape *s, double alpha, double beta)
{
    sp_link_classes l = {alpha, beta, alpha, beta, 1, 0};
    return sp_nccl_ring_seconds2(s, &l);
}

/* ---- tree ------------------------------------------------------------------ */

static double lane_len(const sp_shape *s, int k)
{
    uint64_t n = (uint64_t)s->n, clen = sp_block_len(n, s->channels, k / 2);
    return (double)sp_block_len(clen, 2, k % 2);
}

double sp_nccl_tree_words(const sp_shape *s, double *floor_words)
{
    (void)floor_words;
    int P = (int)s->P, G = s->G > 0 && P % s->G == 0 ? s->G : 1, L = 2 * s->channels;
    double worst = 0;
    for (int r = 0; r < P; r++) {
        double sent = 0, recv = 0;
        for (int k = 0; k < L; k++) {
            sp_nccl_lane nb = sp_nccl_lane_of(P, G, k / 2, k % 2, r);
            sent += nb.parent >= 0 ? lane_len(s, k) : 0;
            recv += nb.nkids * lane_len(s, k);
        }
        worst = fmax(worst, fmax(sent, recv));
    }
    return 2.0 * worst; /* the broadcast mirrors the reduce */
}

/* what a port costs that carries bi bytes in ni flows inside the node and
 * be bytes in ne flows off it at once */
static double port(int ni, double bi, int ne, double be, const sp_link_classes *l)
{
    if (l->one_port) {
        double a = ni ? l->intra_alpha : 0;
        if (ne && l->inter_alpha > a)
            a = l->inter_alpha;
        return a + bi * l->intra_beta + be * l->inter_beta;
    }
    double i = ni ? l->intra_alpha + bi * l->intra_beta : 0;
    double e = ne ? l->inter_alpha + be * l->inter_beta : 0;
    return i > e ? i : e;
}

/* rank r's neighbours and slot offset on lane k, for one phase */
typedef struct {
    sp_nccl_lane nb;
    int lambda;
} lane_at;

typedef struct {
    const sp_shape *s;
    const sp_link_classes *l;
    int P, G, L, down;
    double chunk;
    lane_at *at; /* P x L */
} tree_model;

/* bytes of lane k's chunk j (0 where there is none) */
static double chunk_bytes(const tree_model *m, int k, int j)
{
    double len = lane_len(m->s, k), a = j * m->chunk;
    return j < 0 || a >= len ? 0 : 4.0 * fmin(m->chunk, len - a);
}

/* hop sigma: every transfer from a slot sigma-1 send to a slot sigma
 * receive at once; it lasts what its busiest port costs */
static double hop(const tree_model *m, int sigma)
{
    double worst = 0;
    for (int r = 0; r < m->P; r++) {
        int ni[2] = {0, 0}, ne[2] = {0, 0};
        double bi[2] = {0, 0}, be[2] = {0, 0}; /* [0] in, [1] out */
        for (int k = 0; k < m->L; k++) {
            const lane_at *a = &m->at[(size_t)r * m->L + k];
            double rb = chunk_bytes(m, k, sigma - a->lambda), sb = chunk_bytes(m, k, sigma - 1 - a->lambda);
            int from[3], nf = 0, to[3], nt = 0;
            if (m->down) {
                if (a->nb.parent >= 0 && rb > 0)
                    from[nf++] = a->nb.parent;
                for (int i = 0; sb > 0 && i < a->nb.nkids; i++)
                    to[nt++] = a->nb.kids[i];
            } else {
                for (int i = 0; rb > 0 && i < a->nb.nkids; i++)
                    from[nf++] = a->nb.kids[i];
                if (a->nb.parent >= 0 && sb > 0)
                    to[nt++] = a->nb.parent;
            }
            for (int i = 0; i < nf; i++)
                from[i] / m->G == r / m->G ? (ni[0]++, bi[0] += rb) : (ne[0]++, be[0] += rb);
            for (int i = 0; i < nt; i++)
                to[i] / m->G == r / m->G ? (ni[1]++, bi[1] += sb) : (ne[1]++, be[1] += sb);
        }
        for (int d = 0; d < 2; d++)
            worst = fmax(worst, port(ni[d], bi[d], ne[d], be[d], m->l));
    }
    return worst;
}

/* one phase: hops 1 .. D + K - 1; those in the middle, where every lane of
 * every rank has a chunk, all cost the same and are counted, not walked */
static double tree_phase_seconds(tree_model *m)
{
    int D = m->G - 1 + sp_nccl_tree_depth(m->P / m->G), K = 0, Kmin = -1;
    for (int k = 0; k < m->L; k++) {
        int kk = (int)ceil(lane_len(m->s, k) / m->chunk);
        K = kk > K ? kk : K;
        Kmin = Kmin < 0 || kk < Kmin ? kk : Kmin;
    }
    for (int r = 0; r < m->P; r++)
        for (int k = 0; k < m->L; k++) {
            lane_at *a = &m->at[(size_t)r * m->L + k];
            a->nb = sp_nccl_lane_of(m->P, m->G, k / 2, k % 2, r);
            int depth = sp_nccl_lane_depth(m->P, m->G, k / 2, k % 2, r);
            a->lambda = m->down ? depth : D - depth;
        }
    double t = 0;
    int mid_lo = D + 1, mid_hi = Kmin - 1; /* hops with every lane busy everywhere */
    for (int sigma = 1; sigma <= D + K - 1; sigma++) {
        if (sigma == mid_lo && mid_hi > mid_lo) {
            t += (mid_hi - mid_lo + 1) * hop(m, sigma);
            sigma = mid_hi;
            continue;
        }
        t += hop(m, sigma);
    }
    return t;
}

double sp_nccl_tree_seconds2(const sp_shape *s, const sp_link_classes *l)
{
    int P = (int)s->P, G = s->G > 0 && P % s->G == 0 ? s->G : 1;
    tree_model m = {.s = s, .l = l, .P = P, .G = G, .L = 2 * s->channels};
    m.chunk = fmax(1.0, floor(s->chunk_bytes / 4.0));
    m.at = malloc((size_t)P * (size_t)m.L * sizeof *m.at);
    if (!m.at)
        return -1.0;
    double t = tree_phase_seconds(&m);
    m.down = 1;
    t += tree_phase_seconds(&m);
    free(m.at);
    return t;
}

double sp_nccl_tree_seconds(const sp_shape *s, double alpha, double beta)
{
    sp_link_classes l = {alpha, beta, alpha, beta, 1, 0};
    return sp_nccl_tree_seconds2(s, &l);
}

/* ---- NVLS ------------------------------------------------------------------
 * algorithms/nccl_nvls.c.  The switch reduces and multicasts (NVLink SHARP:
 * NVIDIA, "NVIDIA NVLink and NVSwitch", NVSwitch gen 3; NCCL 2.17's NVLS
 * algorithm).  Volume, per rank and phase as DESIGN counts it: one node,
 * n pushed up and b = ceil(n/G) of this GPU's shard (its multicast), b of
 * its sums and n of multicasts down: n + b.  Several nodes: the reduce n
 * (up), the ring's 2 ceil(b/N)(N-1) on the shard, the multicast n (down).
 *
 * Time, one node, in the alpha-beta model with the sharing of a GPU's port
 * (beta_p = intra_beta, alpha_p = intra_alpha / 2: one port's link) and of
 * the switch's intake (beta_s = 1 / nvls_bw), c = 4 chunk bytes, K chunks
 * of the largest shard:
 *   the first chunk through the four stages, none overlapped:
 *     reduce  alpha_p + c max(G beta_p, G^2 beta_s)   (G pushes a port, G^2 at the switch)
 *     sum     alpha_p + c beta_p                       (down the owner's port)
 *     push    alpha_p + c max(beta_p, G beta_s)        (each owner's chunk, G at the switch)
 *     spread  alpha_p + c G beta_p                     (G multicast copies down each port)
 *   then K - 1 rounds in which each port carries G + 1 pushes up and G + 1
 *   copies down, and the switch G(G+1):  c max((G+1) beta_p, G(G+1) beta_s),
 *   the last of them at the largest shard's last chunk (c' <= c floats).
 * Exact on cm02 for K = 1 (tests/test_nccl.c); for K > 1 the rounds
 * overlap less neatly than the form says (a GPU posts a round's pushes
 * before it waits for the last round's sum), and the tests hold the gap.
 * Several nodes: the reduce as above without the multicast's pushes
 * (rounds of c max(G beta_p, G^2 beta_s)), the flat ring among N GPUs of a
 * rail on the shard (inter class), and the multicast of the whole shard at
 * once: alpha_p + 4b max(beta_p, G beta_s), then alpha_p + 4 n beta_p. */

static uint64_t nvls_chunk_floats(const sp_shape *s)
{
    double bytes = s->chunk_bytes > 0 ? s->chunk_bytes : SP_NCCL_DEFAULT_CHUNK;
    uint64_t c = (uint64_t)(bytes / 4.0);
    return c ? c : 1;
}

static double nvls_shard(const sp_shape *s) { return ceil(s->n / (s->G > 1 ? s->G : 1)); }

double sp_nccl_nvls_words(const sp_shape *s, double *floor_words)
{
    (void)floor_words;
    int G = s->G > 1 ? s->G : 1, N = (int)s->P / G;
    double b = nvls_shard(s);
    if (N <= 1)
        return s->n + b;
    return 2.0 * s->n + 2.0 * ceil(b / N) * (N - 1);
}

/* one class of links says nothing of the switch: no form */
double sp_nccl_nvls_seconds(const sp_shape *s, double alpha, double beta)
{
    (void)s;
    (void)alpha;
    (void)beta;
    return -1.0;
}

double sp_nccl_nvls_seconds2(const sp_shape *s, const sp_link_classes *l)
{
    int G = s->G > 1 ? s->G : 1, N = (int)s->P / G;
    if (!(l->nvls_bw > 0) || G < 2)
        return -1.0;
    double ap = l->intra_alpha / 2, bp = l->intra_beta, bs = 1.0 / l->nvls_bw, g = G;
    double shard = nvls_shard(s);
    uint64_t cf = nvls_chunk_floats(s);
    double K = ceil(shard / (double)cf), c = 4.0 * (shard < (double)cf ? shard : (double)cf);
    if (K < 1)
        K = 1;
    /* the rounds after the first: K - 2 of whole chunks and the last of
     * what is left of the largest shard (a float when n/G is one over a
     * multiple of the chunk) */
    double last = K > 1 ? 4.0 * (shard - (K - 1) * (double)cf) : 0, whole = K > 1 ? K - 2 : 0;
    double reduce = ap + c * fmax(g * bp, g * g * bs), sum = ap + c * bp;
    if (N == 1) {
        double push = ap + c * fmax(bp, g * bs), spread = ap + c * g * bp;
        return reduce + sum + push + spread + (whole * c + last) * fmax((g + 1) * bp, g * (g + 1) * bs);
    }
    double stage1 = reduce + sum + (whole * c + last) * fmax(g * bp, g * g * bs);
    double blk = ceil(shard / N), ring = 2.0 * (N - 1) * (l->inter_alpha + 4.0 * blk * l->inter_beta);
    double stage3 = ap + 4.0 * shard * fmax(bp, g * bs) + ap + 4.0 * s->n * bp;
    return stage1 + ring + stage3;
}
