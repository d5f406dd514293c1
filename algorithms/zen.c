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
 *    for an owner whose share has s indices travels as a bitmap of s bits
 *    (ceil(s/32) 4-byte words: every block keeps 4-byte alignment) plus the
 *    c values when c >= F s, else as c (index, value) pairs.  The default
 *    F = 1/32 is where the two sizes meet (s/8 + 4c = 8c, up to the last
 *    word), so the smaller encoding is chosen.  It applies to the push (a
 *    rank's block for one owner) and the pull (an owner's reduced set) alike.
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
    return use_bitmap(cnt, share, at) ? 4 * ((share + 31) / 32) + 4 * cnt : 8 * cnt;
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
    size_t bm = (size_t)(4 * ((share + 31) / 32));
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
        for (uint64_t j = 0; j < cnt; j++) {
            sp_pair q;
            memcpy(&q, buf + j * sizeof q, sizeof q);
            add((uint64_t)q.idx, q.val, arg);
        }
        return;
    }
    size_t bm = (size_t)(4 * ((share + 31) / 32));
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

/* what one rank's iteration holds from step to step */
typedef struct {
    sp_ctx *c;
    sp_algo_io *io;
    int P, r, m, me, exact;
    double at;
    zhash h;
    sp_set sel;
    int *rank_owner;                        /* the owner a rank is, or -1 */
    uint32_t *scnt, *rcnt; /* sent to / received from each rank (n < 2^31) */
    uint64_t *nnz, *ocnt;  /* owners' sums, mine per owner */
    size_t *out_off, *out_len, *in_off, *in_len;
    sp_pair *sorted;                        /* exact: my selection grouped by owner */
    unsigned char *out, *in, *packed, *gathered;
    uint64_t my_share, recv_total, recv_max, mine, total;
    zsum sum;
} zrun;

/* how many of my entries each owner gets, and my push encoded (model: an
 * even split, the remainder to the owners after mine in rotation) */
static int hash_and_encode(zrun *z)
{
    int m = z->m, P = z->P;
    uint64_t n = z->h.n;
    if (z->exact) {
        for (uint64_t j = 0; j < z->sel.count; j++)
            z->ocnt[owner_of(&z->h, (uint64_t)z->sel.pairs[j].idx)]++;
        z->sorted = malloc((z->sel.count ? z->sel.count : 1) * sizeof *z->sorted);
        uint64_t *at_o = calloc((size_t)m + 1, sizeof *at_o);
        if (!z->sorted || !at_o) {
            free(at_o);
            return SP_ERR_MEM;
        }
        for (int o = 0; o < m; o++)
            at_o[o + 1] = at_o[o] + z->ocnt[o];
        for (uint64_t j = 0; j < z->sel.count; j++) /* stable: index order kept within an owner */
            z->sorted[at_o[owner_of(&z->h, (uint64_t)z->sel.pairs[j].idx)]++] = z->sel.pairs[j];
        free(at_o);
    } else {
        uint64_t q = z->sel.count / (uint64_t)m, rem = z->sel.count % (uint64_t)m;
        for (int o = 0; o < m; o++)
            z->ocnt[o] = q + ((uint64_t)((o - z->r % m + m) % m) < rem ? 1 : 0);
    }
    sp_compute(z->c, SP_K_THRESHOLD, (double)z->sel.count);
    size_t total_out = 0;
    int push_bm = 0;
    for (int o = 0; o < m; o++) {
        int d = owner_rank(o, P, m);
        uint64_t sh = sp_zen_share(n, m, o);
        z->scnt[d] = (uint32_t)z->ocnt[o];
        z->out_off[d] = total_out;
        z->out_len[d] = (size_t)sp_zen_block_bytes(z->ocnt[o], sh, z->at);
        total_out += z->out_len[d];
        push_bm += z->ocnt[o] && use_bitmap(z->ocnt[o], sh, z->at) && d != z->r;
    }
    sp_stat(z->c, "push_bitmaps", push_bm);
    if (!z->exact)
        return SP_OK;
    if (!(z->out = malloc(total_out ? total_out : 1)))
        return SP_ERR_MEM;
    uint64_t from = 0;
    for (int o = 0; o < m; o++) {
        encode(&z->h, z->sorted + from, z->ocnt[o], sp_zen_share(n, m, o), z->at, z->out + z->out_off[owner_rank(o, P, m)]);
        from += z->ocnt[o];
    }
    return SP_OK;
}

/* counts, then every rank's blocks to their owners */
static int push(zrun *z)
{
    sp_phase(z->c, "counts");
    int rc = sp_alltoall_counts(z->c, z->scnt, z->rcnt, TAG_COUNTS);
    if (rc)
        return rc;
    sp_phase(z->c, "push");
    size_t total_in = 0;
    for (int j = 0; z->me >= 0 && j < z->P; j++) {
        z->in_off[j] = total_in;
        z->in_len[j] = (size_t)sp_zen_block_bytes(z->rcnt[j], z->my_share, z->at);
        total_in += z->in_len[j];
        z->recv_total += z->rcnt[j];
        if (z->rcnt[j] > z->recv_max)
            z->recv_max = z->rcnt[j];
    }
    if (z->exact && !(z->in = malloc(total_in ? total_in : 1)))
        return SP_ERR_MEM;
    if (z->m == z->P)
        return sp_alltoallv(z->c, z->out, z->out_off, z->out_len, z->in, z->in_off, z->in_len, z->io->opts->bucket,
                            TAG_PUSH);
    return push_central(z->c, z->out, z->out_off, z->out_len, z->in, z->in_off, z->in_len, z->rank_owner);
}

/* the owner's one-shot sum (model: 1/m of the ranks' union over [0, n)) */
static int reduce(zrun *z)
{
    sp_phase(z->c, "reduce");
    if (z->me >= 0) {
        if (z->exact) {
            z->sum.vals = calloc(z->my_share ? z->my_share : 1, sizeof(float));
            z->sum.touched = calloc(z->my_share ? z->my_share : 1, 1);
            if (!z->sum.vals || !z->sum.touched)
                return SP_ERR_MEM;
            for (int j = 0; j < z->P; j++)
                decode(&z->h, (uint64_t)z->me, z->in + z->in_off[j], z->rcnt[j], z->my_share, z->at, sum_add, &z->sum);
            for (uint64_t pos = 0; pos < z->my_share; pos++)
                z->mine += z->sum.touched[pos];
        } else {
            uint64_t n = z->h.n;
            uint64_t u = sp_model_union(z->c, z->sel.thr, 0, (int64_t)n, 0, n) / (uint64_t)z->m;
            uint64_t most = z->recv_total < z->my_share ? z->recv_total : z->my_share;
            z->mine = u < z->recv_max ? z->recv_max : u > most ? most : u;
        }
        sp_compute(z->c, SP_K_SCATTER_ADD, (double)z->recv_total);
    }
    sp_stat(z->c, "reduced_nnz", (double)z->mine);
    return SP_OK;
}

/* the owner's sum as index-sorted pairs, encoded into z->packed */
static int pack_mine(zrun *z, size_t bytes)
{
    z->packed = malloc(bytes ? bytes : 1);
    sp_pair *mp = malloc((z->mine ? z->mine : 1) * sizeof *mp);
    if (!z->packed || !mp) {
        free(mp);
        return SP_ERR_MEM;
    }
    uint64_t w = 0;
    for (uint64_t pos = 0; z->me >= 0 && pos < z->my_share; pos++)
        if (z->sum.touched[pos]) {
            mp[w].idx = (int32_t)index_at(&z->h, (uint64_t)z->me, pos);
            mp[w].val = z->sum.vals[pos];
            w++;
        }
    encode(&z->h, mp, z->mine, z->my_share, z->at, z->packed);
    free(mp);
    return SP_OK;
}

/* the owners' counts, then every owner's sum to every rank */
static int pull(zrun *z)
{
    sp_phase(z->c, "counts");
    int rc = sp_allgather_count(z->c, z->mine, z->nnz, &z->total, TAG_NNZ);
    if (rc)
        return rc;
    sp_phase(z->c, "pull");
    uint64_t n = z->h.n;
    size_t *bytes = z->out_len; /* reused: each rank's block of the allgatherv */
    size_t all = 0;
    int pull_bm = 0;
    for (int j = 0; j < z->P; j++) {
        uint64_t sh = z->rank_owner[j] >= 0 ? sp_zen_share(n, z->m, z->rank_owner[j]) : 0;
        bytes[j] = (size_t)sp_zen_block_bytes(z->nnz[j], sh, z->at);
        pull_bm += z->nnz[j] && use_bitmap(z->nnz[j], sh, z->at);
        all += bytes[j];
    }
    sp_stat(z->c, "pull_bitmaps", pull_bm);
    if (z->exact && ((rc = pack_mine(z, bytes[z->r])) != SP_OK || !(z->gathered = malloc(all ? all : 1))))
        return rc ? rc : SP_ERR_MEM;
    if ((rc = sp_allgatherv(z->c, z->packed, bytes, z->gathered, TAG_PULL)) != SP_OK)
        return rc;
    sp_phase(z->c, "update");
    if (z->exact) {
        memset(z->io->result, 0, n * sizeof(float));
        size_t off = 0;
        for (int j = 0; j < z->P; j++) {
            int o = z->rank_owner[j];
            if (o >= 0)
                decode(&z->h, (uint64_t)o, z->gathered + off, z->nnz[j], sp_zen_share(n, z->m, o), z->at, result_put,
                       z->io->result);
            off += bytes[j];
        }
    }
    sp_compute(z->c, SP_K_SCATTER_ADD, (double)z->total);
    return SP_OK;
}

static void zrun_free(zrun *z)
{
    sp_set_free(&z->sel);
    void *p[] = {z->rank_owner, z->scnt, z->rcnt, z->nnz, z->ocnt, z->out_off, z->out_len, z->in_off, z->in_len,
                 z->sorted, z->out, z->in, z->packed, z->gathered, z->sum.vals, z->sum.touched};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
        free(p[i]);
}

int sp_zen(sp_ctx *c, sp_algo_io *io)
{
    zrun z = {.c = c, .io = io, .P = sp_size(c), .r = sp_rank(c), .exact = sp_data_exact(io),
              .at = io->opts->zen_bitmap_at};
    int P = z.P;
    uint64_t n = io->n, k = io->k < io->n ? io->k : io->n;
    z.m = sp_zen_owners(P, io->opts->zen_form, io->opts->zen_owners);
    z.h = (zhash){n, (uint64_t)z.m};
    z.sum.h = &z.h;
    z.rank_owner = malloc((size_t)P * sizeof *z.rank_owner);
    z.scnt = calloc((size_t)P, sizeof *z.scnt);
    z.rcnt = calloc((size_t)P, sizeof *z.rcnt);
    z.nnz = calloc((size_t)P, sizeof *z.nnz);
    z.ocnt = calloc((size_t)z.m, sizeof *z.ocnt);
    z.out_off = calloc((size_t)P, sizeof(size_t));
    z.out_len = calloc((size_t)P, sizeof(size_t));
    z.in_off = calloc((size_t)P, sizeof(size_t));
    z.in_len = calloc((size_t)P, sizeof(size_t));
    int rc = SP_ERR_MEM;
    if (!z.rank_owner || !z.scnt || !z.rcnt || !z.nnz || !z.ocnt || !z.out_off || !z.out_len || !z.in_off || !z.in_len)
        goto out;
    for (int j = 0; j < P; j++)
        z.rank_owner[j] = -1;
    for (int o = 0; o < z.m; o++)
        z.rank_owner[owner_rank(o, P, z.m)] = o;
    z.me = z.rank_owner[z.r];
    z.my_share = z.me >= 0 ? sp_zen_share(n, z.m, z.me) : 0;
    sp_stat(c, "owners", z.m);

    sp_phase(c, "select");
    if ((rc = sp_set_topk(c, io, k, &z.sel)) != SP_OK)
        goto out;
    sp_compute(c, SP_K_TOPK, (double)n);
    sp_set_consume(c, io, &z.sel);
    sp_phase(c, "hash");
    if ((rc = hash_and_encode(&z)) == SP_OK && (rc = push(&z)) == SP_OK && (rc = reduce(&z)) == SP_OK)
        rc = pull(&z);
out:
    zrun_free(&z);
    return rc;
}
