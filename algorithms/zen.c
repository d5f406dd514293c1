/* zen.c - a ZEN-style hashed sparse synchronisation (Wang, Xu, Xi, Wang,
 * Shrivastava & Ng, "ZEN: Empowering Distributed Training with
 * Sparsity-driven Data Synchronization", OSDI 2025).
 *
 * What the paper publishes, and this file follows: the non-zero indices of a
 * sparse gradient are given owners by hashing, so that every owner gets an
 * even share however the non-zeros cluster (the paper's "hierarchical
 * hashing"); every rank pushes its non-zeros to their owners point to point,
 * each owner sums what it received once (one-shot aggregation), and every
 * rank pulls the owners' sums; the owners' results can travel as a bitmap
 * over the owner's share of the index space plus the values (the paper's
 * hash-bitmap encoding) instead of (index, value) pairs.  The paper weighs a
 * balanced-parallel scheme (every rank an owner of a hashed share) against a
 * hierarchical-centralised one (fewer aggregators).
 *
 * What it does not publish in a form we could check, and this file chooses
 * (each one a parameter):
 *  - The hash.  The paper's hierarchical hashing is a GPU hash-table
 *    construction; we keep its promise (a uniform, balanced owner for every
 *    index) with a two-level hash of our own: index i lies in row i / m of m
 *    consecutive indices, and its slot i mod m is rotated by a mixed hash of
 *    the row (the splitmix64 finaliser, salt chosen) to give its owner.  Every
 *    owner thus holds exactly one index of every full row (shares differ by at
 *    most one index), any contiguous hot range spreads over all owners, and a
 *    stride-m pattern (a matrix column) does not land on one owner.  Position
 *    i / m in the owner's share is its bit in the bitmap.
 *  - The bitmap-versus-pairs rule (--zen-bitmap-at F): a block of c entries
 *    for an owner whose share has s indices travels as a bitmap (ceil(s/8)
 *    bytes) plus c values when c >= F s, else as c (index, value) pairs.  The
 *    default F = 1/32 is where the two sizes meet (s/8 + 4c = 8c), so the
 *    smaller encoding is always chosen.  It applies to the push (a rank's block
 *    for one owner) and the pull (an owner's reduced set) alike.
 *  - The centralised form's shape (--zen-form central, --zen-owners M): M
 *    owners, ranks floor(o P / M) for o < M, take the hashed shares; every
 *    rank pushes to them, they reduce, every rank pulls; M = 0 means
 *    ceil(sqrt(P)) (a chosen figure: a two-tier hierarchy of sqrt P
 *    aggregators).  --zen-form balanced is M = P.
 *  - The collectives: counts by sp_alltoall_counts, the balanced push by
 *    destination rotation (sp_alltoallv), the centralised push as one
 *    message from every rank to every owner, all in flight at once; the pull
 *    as an allgatherv (Bruck) of the owners' encoded sets.
 *  - The selection: each rank's exact local top-k (as TopkDSA), every
 *    selected entry consumed from the residual.
 *
 * Model payloads (no vectors): the hash spreads a selection evenly, so a
 * rank's c selected entries go c / M to each owner (the remainder to the
 * owners after it in rotation; an exact run's counts spread about it
 * binomially), and an owner holds 1/M of the distinct entries the ranks'
 * selections cover over the whole index space (sp_model_union over [0, n)
 * divided by M, kept between the largest block it received and the sum).
 *
 * Volume per rank: a push of at most k pairs (2k words) plus the pull of
 * the owners' reduced sets (at most min(Pk, n) entries: 2 min(Pk, n) words
 * as pairs, fewer as bitmaps); the centralised form's owners receive P/M
 * times a balanced owner's push.  Reports "reduced_nnz" (this rank's owned
 * sum, 0 for a non-owner), "owners" (M), "push_bitmaps" (blocks this rank
 * pushed as bitmaps) and "pull_bitmaps" (owners whose set travelled as a
 * bitmap).
 */
#include "algorithm.h"
#include "collectives.h"
#include "sparse_set.h"
#include "sim/shim/workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TAG_COUNTS 3200
#define TAG_PUSH 3201
#define TAG_NNZ 3202
#define TAG_PULL 3203

#define ZEN_SALT 0x5a454e2d48415348ull /* chosen: any fixed salt will do */

typedef struct {
    uint64_t n, m; /* indices, owners */
} zhash;

/* the splitmix64 finaliser (Steele, Lea & Flood, OOPSLA 2014) */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

static uint64_t row_rot(const zhash *h, uint64_t row) { return mix64(row ^ ZEN_SALT) % h->m; }

int sp_zen_owner_of(uint64_t n, int m, uint64_t i)
{
    zhash h = {n, (uint64_t)m};
    return (int)((i % h.m + row_rot(&h, i / h.m)) % h.m);
}

static int owner_of(const zhash *h, uint64_t i) { return (int)((i % h->m + row_rot(h, i / h->m)) % h->m); }

/* the index of owner o's entry in row `row` (may be >= n in the last row) */
static uint64_t index_at(const zhash *h, uint64_t o, uint64_t row)
{
    return row * h->m + (o + h->m - row_rot(h, row)) % h->m;
}

/* indices owner o holds */
uint64_t sp_zen_share(uint64_t n, int m, int o)
{
    zhash h = {n, (uint64_t)m};
    uint64_t rows = n / h.m, tail = n % h.m;
    return rows + (tail && (uint64_t)(o + m - (int)row_rot(&h, rows)) % h.m < tail ? 1 : 0);
}

static int use_bitmap(uint64_t cnt, uint64_t share, double at) { return cnt > 0 && (double)cnt >= at * (double)share; }

uint64_t sp_zen_block_bytes(uint64_t cnt, uint64_t share, double at)
{
    if (!cnt)
        return 0;
    return use_bitmap(cnt, share, at) ? (share + 7) / 8 + 4 * cnt : 8 * cnt;
}

/* encodes cnt index-sorted pairs of owner o into buf */
static void encode(const zhash *h, const sp_pair *p, uint64_t cnt, uint64_t share, double at, unsigned char *buf)
{
    if (!cnt)
        return;
    if (!use_bitmap(cnt, share, at)) {
        memcpy(buf, p, cnt * sizeof *p);
        return;
    }
    size_t bm = (size_t)((share + 7) / 8);
    memset(buf, 0, bm);
    float *vals = (float *)(buf + bm);
    for (uint64_t j = 0; j < cnt; j++) {
        uint64_t pos = (uint64_t)p[j].idx / h->m;
        buf[pos / 8] |= (unsigned char)(1u << (pos % 8));
        memcpy(vals + j, &p[j].val, sizeof(float));
    }
}

/* calls add(index, value) for each entry of owner o's block of cnt entries */
typedef void (*zen_add_fn)(uint64_t idx, float val, void *arg);
static void decode(const zhash *h, uint64_t o, const unsigned char *buf, uint64_t cnt, uint64_t share, double at,
                   zen_add_fn add, void *arg)
{
    if (!cnt)
        return;
    if (!use_bitmap(cnt, share, at)) {
        const sp_pair *p = (const sp_pair *)buf;
        for (uint64_t j = 0; j < cnt; j++)
            add((uint64_t)p[j].idx, p[j].val, arg);
        return;
    }
    size_t bm = (size_t)((share + 7) / 8);
    const unsigned char *vals = buf + bm;
    uint64_t j = 0;
    for (uint64_t pos = 0; pos < share && j < cnt; pos++)
        if (buf[pos / 8] & (1u << (pos % 8))) {
            float v;
            memcpy(&v, vals + 4 * j, sizeof v);
            add(index_at(h, o, pos), v, arg);
            j++;
        }
}

/* an owner's sum over its share, by position i / m */
typedef struct {
    const zhash *h;
    float *vals;
    unsigned char *touched;
} zsum;

static void sum_add(uint64_t idx, float val, void *arg)
{
    zsum *s = arg;
    uint64_t pos = idx / s->h->m;
    s->vals[pos] += val;
    s->touched[pos] = 1;
}

static void result_put(uint64_t idx, float val, void *arg) { ((float *)arg)[idx] = val; }

/* the owners among the ranks: owner o is rank o P / m */
static int owner_rank(int o, int P, int m) { return (int)((int64_t)o * P / m); }

int sp_zen_owners(int P, int form, int owners)
{
    if (form == 0 || P <= 1)
        return P;
    int m = owners > 0 ? owners : (int)ceil(sqrt((double)P));
    return m > P ? P : m;
}

/* the centralised push: every rank sends its block to every owner, one
 * message each, all in flight together (owners receive from all) */
static int push_central(sp_ctx *c, const unsigned char *out, const size_t *out_off, const size_t *out_len,
                        unsigned char *in, const size_t *in_off, const size_t *in_len, const int *rank_owner)
{
    int P = sp_size(c), r = sp_rank(c), nq = 0;
    sp_req **q = malloc(2 * (size_t)P * sizeof *q);
    if (!q)
        return SP_ERR_MEM;
    if (out && in && rank_owner[r] >= 0)
        memcpy(in + in_off[r], out + out_off[r], out_len[r]);
    for (int t = 1; t < P; t++) {
        int from = (r - t + P) % P, to = (r + t) % P;
        if (rank_owner[r] >= 0)
            q[nq++] = sp_irecv(c, from, TAG_PUSH, in ? in + in_off[from] : NULL, in_len[from]);
        if (rank_owner[to] >= 0)
            q[nq++] = sp_isend(c, to, TAG_PUSH, out ? out + out_off[to] : NULL, out_len[to]);
    }
    int rc = sp_waitall(c, q, nq, NULL);
    free(q);
    return rc;
}

int sp_zen(sp_ctx *c, sp_algo_io *io)
{
    int P = sp_size(c), r = sp_rank(c);
    uint64_t n = io->n, k = io->k < io->n ? io->k : io->n;
    int exact = sp_data_exact(io);
    double at = io->opts->zen_bitmap_at;
    int m = sp_zen_owners(P, io->opts->zen_form, io->opts->zen_owners);
    zhash h = {n, (uint64_t)m};
    sp_set sel = {0};
    int *rank_owner = malloc((size_t)P * sizeof *rank_owner);
    uint64_t *scnt = calloc((size_t)P, sizeof *scnt), *rcnt = calloc((size_t)P, sizeof *rcnt);
    uint64_t *nnz = calloc((size_t)P, sizeof *nnz), *ocnt = calloc((size_t)m, sizeof *ocnt);
    size_t *out_off = calloc((size_t)P, sizeof(size_t)), *out_len = calloc((size_t)P, sizeof(size_t));
    size_t *in_off = calloc((size_t)P, sizeof(size_t)), *in_len = calloc((size_t)P, sizeof(size_t));
    sp_pair *sorted = NULL;
    unsigned char *out = NULL, *in = NULL, *packed = NULL, *gathered = NULL;
    zsum sum = {&h, NULL, NULL};
    int rc = SP_OK;
    if (!rank_owner || !scnt || !rcnt || !nnz || !ocnt || !out_off || !out_len || !in_off || !in_len) {
        rc = SP_ERR_MEM;
        goto out;
    }
    for (int j = 0; j < P; j++)
        rank_owner[j] = -1;
    for (int o = 0; o < m; o++)
        rank_owner[owner_rank(o, P, m)] = o;
    int me = rank_owner[r];
    uint64_t my_share = me >= 0 ? sp_zen_share(n, m, me) : 0;
    sp_stat(c, "owners", m);

    sp_phase(c, "select");
    if ((rc = sp_set_topk(c, io, k, &sel)) != SP_OK)
        goto out;
    sp_compute(c, SP_K_TOPK, (double)n);
    sp_set_consume(c, io, &sel);

    /* the hash: how many of my entries each owner gets (model: an even
     * split, the remainder to the owners after mine in rotation) */
    sp_phase(c, "hash");
    if (exact) {
        for (uint64_t j = 0; j < sel.count; j++)
            ocnt[owner_of(&h, (uint64_t)sel.pairs[j].idx)]++;
        sorted = malloc((sel.count ? sel.count : 1) * sizeof *sorted);
        uint64_t *at_o = calloc((size_t)m + 1, sizeof *at_o);
        if (!sorted || !at_o) {
            free(at_o);
            rc = SP_ERR_MEM;
            goto out;
        }
        for (int o = 0; o < m; o++)
            at_o[o + 1] = at_o[o] + ocnt[o];
        for (uint64_t j = 0; j < sel.count; j++) /* stable: index order kept within an owner */
            sorted[at_o[owner_of(&h, (uint64_t)sel.pairs[j].idx)]++] = sel.pairs[j];
        free(at_o);
    } else {
        uint64_t q = sel.count / (uint64_t)m, rem = sel.count % (uint64_t)m;
        for (int o = 0; o < m; o++)
            ocnt[o] = q + ((uint64_t)((o - r % m + m) % m) < rem ? 1 : 0);
    }
    sp_compute(c, SP_K_THRESHOLD, (double)sel.count);
    size_t total_out = 0;
    for (int o = 0; o < m; o++) {
        int d = owner_rank(o, P, m);
        scnt[d] = ocnt[o];
        out_off[d] = total_out;
        out_len[d] = (size_t)sp_zen_block_bytes(ocnt[o], sp_zen_share(n, m, o), at);
        total_out += out_len[d];
    }
    int push_bm = 0;
    for (int o = 0; o < m; o++)
        push_bm += ocnt[o] && use_bitmap(ocnt[o], sp_zen_share(n, m, o), at) && owner_rank(o, P, m) != r;
    sp_stat(c, "push_bitmaps", push_bm);
    if (exact) {
        out = malloc(total_out ? total_out : 1);
        if (!out) {
            rc = SP_ERR_MEM;
            goto out;
        }
        uint64_t from = 0;
        for (int o = 0; o < m; o++) {
            encode(&h, sorted + from, ocnt[o], sp_zen_share(n, m, o), at, out + out_off[owner_rank(o, P, m)]);
            from += ocnt[o];
        }
    }

    sp_phase(c, "counts");
    if ((rc = sp_alltoall_counts(c, scnt, rcnt, TAG_COUNTS)) != SP_OK)
        goto out;

    sp_phase(c, "push");
    size_t total_in = 0;
    uint64_t recv_total = 0, recv_max = 0;
    for (int j = 0; j < P; j++) {
        in_off[j] = total_in;
        in_len[j] = me >= 0 ? (size_t)sp_zen_block_bytes(rcnt[j], my_share, at) : 0;
        total_in += in_len[j];
        recv_total += me >= 0 ? rcnt[j] : 0;
        if (me >= 0 && rcnt[j] > recv_max)
            recv_max = rcnt[j];
    }
    if (exact) {
        in = malloc(total_in ? total_in : 1);
        if (!in) {
            rc = SP_ERR_MEM;
            goto out;
        }
    }
    if (m == P)
        rc = sp_alltoallv(c, out, out_off, out_len, in, in_off, in_len, io->opts->bucket, TAG_PUSH);
    else
        rc = push_central(c, out, out_off, out_len, in, in_off, in_len, rank_owner);
    if (rc)
        goto out;

    /* the owner's one-shot sum */
    sp_phase(c, "reduce");
    uint64_t mine = 0;
    if (me >= 0) {
        if (exact) {
            sum.vals = calloc(my_share ? my_share : 1, sizeof(float));
            sum.touched = calloc(my_share ? my_share : 1, 1);
            if (!sum.vals || !sum.touched) {
                rc = SP_ERR_MEM;
                goto out;
            }
            for (int j = 0; j < P; j++)
                decode(&h, (uint64_t)me, in + in_off[j], rcnt[j], my_share, at, sum_add, &sum);
            for (uint64_t pos = 0; pos < my_share; pos++)
                mine += sum.touched[pos];
        } else {
            uint64_t u = sp_model_union(c, sel.thr, 0, (int64_t)n, 0, n) / (uint64_t)m;
            uint64_t most = recv_total < my_share ? recv_total : my_share;
            mine = u < recv_max ? recv_max : u > most ? most : u;
        }
        sp_compute(c, SP_K_SCATTER_ADD, (double)recv_total);
    }
    sp_stat(c, "reduced_nnz", (double)mine);

    sp_phase(c, "counts");
    uint64_t total;
    if ((rc = sp_allgather_count(c, mine, nnz, &total, TAG_NNZ)) != SP_OK)
        goto out;

    sp_phase(c, "pull");
    size_t *bytes = out_len; /* reused: each rank's block of the allgatherv */
    size_t all = 0;
    int pull_bm = 0;
    for (int j = 0; j < P; j++) {
        uint64_t sh = rank_owner[j] >= 0 ? sp_zen_share(n, m, rank_owner[j]) : 0;
        bytes[j] = (size_t)sp_zen_block_bytes(nnz[j], sh, at);
        pull_bm += nnz[j] && use_bitmap(nnz[j], sh, at);
        all += bytes[j];
    }
    sp_stat(c, "pull_bitmaps", pull_bm);
    if (exact) {
        packed = malloc(bytes[r] ? bytes[r] : 1);
        gathered = malloc(all ? all : 1);
        if (!packed || !gathered) {
            rc = SP_ERR_MEM;
            goto out;
        }
        sp_pair *mp = malloc((mine ? mine : 1) * sizeof *mp);
        if (!mp) {
            rc = SP_ERR_MEM;
            goto out;
        }
        uint64_t w = 0;
        for (uint64_t pos = 0; me >= 0 && pos < my_share; pos++)
            if (sum.touched[pos]) {
                mp[w].idx = (int32_t)index_at(&h, (uint64_t)me, pos);
                mp[w].val = sum.vals[pos];
                w++;
            }
        encode(&h, mp, mine, my_share, at, packed);
        free(mp);
    }
    if ((rc = sp_allgatherv(c, packed, bytes, gathered, TAG_PULL)) != SP_OK)
        goto out;
    sp_phase(c, "update");
    if (exact) {
        memset(io->result, 0, n * sizeof(float));
        size_t off = 0;
        for (int j = 0; j < P; j++) {
            if (rank_owner[j] >= 0)
                decode(&h, (uint64_t)rank_owner[j], gathered + off, nnz[j], sp_zen_share(n, m, rank_owner[j]), at,
                       result_put, io->result);
            off += bytes[j];
        }
    }
    sp_compute(c, SP_K_SCATTER_ADD, (double)total);
out:
    sp_set_free(&sel);
    free(rank_owner);
    free(scnt);
    free(rcnt);
    free(nnz);
    free(ocnt);
    free(out_off);
    free(out_len);
    free(in_off);
    free(in_len);
    free(sorted);
    free(out);
    free(in);
    free(packed);
    free(gathered);
    free(sum.vals);
    free(sum.touched);
    return rc;
}
