/* powersgd.c - PowerSGD, low-rank compression by one step of power
 * iteration (Vogels, Karimireddy & Jaggi, "PowerSGD: Practical Low-Rank
 * Gradient Compression for Distributed Optimization", NeurIPS 2019,
 * Algorithms 1 and 2), on one of sparsim's dense allreduces.
 *
 * Every tensor of the gradient is a matrix M of rows x cols (the driver
 * resolves the shapes: sim/driver/layers.c); acc holds M, this rank's
 * gradient plus its residual (error feedback, the paper's Algorithm 2).  A
 * tensor is compressed at rank r when r(rows + cols) < rows cols, as
 * PyTorch's PowerSGD hook decides (the paper's own code compresses every
 * tensor of two or more dimensions); the others (vectors, small matrices)
 * go dense.  Per iteration, with Q (cols x r) the previous iteration's (warm
 * start; the first from a normal stream keyed by the seed and the tensor,
 * the same on every rank):
 *   1. P = M Q for every compressed tensor, packed into one buffer with the
 *      dense tensors' values; one allreduce of it (P summed over ranks)
 *   2. P orthonormalised column by column (Gram-Schmidt, each column
 *      normalised, then removed from the columns after it); a column of
 *      norm 0 stays 0 (a choice: the authors' code divides by the norm
 *      plus 1e-8, which differs only for columns of norm near 0)
 *   3. Q = M^T P, packed; one allreduce of it (Q summed)
 *   4. the result is P Q^T with the summed Q: the sum over ranks of each
 *      rank's approximation, as algorithm.h's result is the sum (the paper
 *      averages, dividing Q by the W workers); the dense tensors' sums are
 *      delivered whole
 *   5. error feedback: acc = M - P Q^T / W, the rank's share of the
 *      approximation, as the authors' implementation keeps it (M minus the
 *      averaged approximation); the dense tensors' entries leave acc (0);
 *      the next iteration starts from Q / W, the averaged Q, as theirs does.
 * The ranks' residuals sum to the inputs' sum minus the result: nothing is
 * lost, the compression only delays it.
 *
 * Chosen: the dense tensors travel in the P allreduce's buffer (the
 * authors' code reduces them concurrently with the P factors; one buffer is
 * the same bytes at one latency).  The allreduces run on --powersgd-allreduce
 * (the ring by default), which names the phases.  The message sizes do not
 * depend on the data: size-only and model payloads send the same messages.
 *
 * Compute, as the device profile prices it (sp_compute_flops: FLOPs over
 * the device's sustained FLOP/s or bytes over its memory bandwidth,
 * whichever is longer, a launch each): per compressed tensor M Q, the
 * orthogonalisation, M^T P and the decompression with the residual's
 * update, one kernel each; the dense tensors' copy into the buffer.
 */
#include "algorithm.h"
#include "select.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const allreduce_names[] = {"ring", "recdoubling", "rabenseifner", "nccl-ring", "nccl-tree"};

const char *sp_powersgd_allreduce_name(int index)
{
    int n = (int)(sizeof allreduce_names / sizeof allreduce_names[0]);
    return index >= 0 && index < n ? allreduce_names[index] : NULL;
}

uint64_t sp_most_square_rows(uint64_t size)
{
    uint64_t best = 1;
    for (uint64_t d = 1; d <= size / d; d++)
        if (size % d == 0)
            best = d;
    return best;
}

/* whether a tensor of `rows` rows (0: a vector) and `size` entries is
 * compressed at rank r, and its columns */
static int compresses(uint64_t rows, uint64_t size, int r, uint64_t *cols)
{
    if (rows < 1 || size % rows)
        return 0;
    *cols = size / rows;
    return (double)r * (double)(rows + *cols) < (double)rows * (double)*cols;
}

void sp_powersgd_sizes_of(const sp_algo_layer *layers, int nlayers, uint64_t n, int r, sp_powersgd_sizes *out)
{
    sp_algo_layer whole = {0, n, sp_most_square_rows(n)};
    if (!layers) {
        layers = &whole;
        nlayers = 1;
    }
    memset(out, 0, sizeof *out);
    for (int l = 0; l < nlayers; l++) {
        uint64_t cols;
        if (compresses(layers[l].rows, layers[l].size, r, &cols)) {
            out->p += (uint64_t)r * layers[l].rows;
            out->q += (uint64_t)r * cols;
            out->matrices++;
        } else {
            out->dense += layers[l].size;
        }
    }
}

/* a 64-bit mix (Steele, Lea & Flood's SplitMix64 finaliser) */
static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

float sp_powersgd_q0(uint64_t seed, uint64_t matrix, uint64_t i)
{
    uint64_t h = mix(mix(mix(seed ^ 0x5057525347440000ull) + matrix) + i); /* "PWRSGD" */
    double u1 = ((double)(h >> 11) + 0.5) * (1.0 / 9007199254740992.0); /* (0, 1) */
    double u2 = (double)(mix(h) >> 11) * (1.0 / 9007199254740992.0);
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2)); /* Box-Muller */
}

/* a compressed tensor: where M, its P and its Q lie */
typedef struct {
    uint64_t off, rows, cols, p_at, q_at;
} mat;

/* out[rows x r] = M Q, M rows x cols (row-major), Q cols x r */
static void m_times_q(const float *m, uint64_t rows, uint64_t cols, const float *q, int r, float *out, double *acc)
{
    for (uint64_t i = 0; i < rows; i++) {
        const float *row = m + i * cols;
        for (int k = 0; k < r; k++)
            acc[k] = 0;
        for (uint64_t j = 0; j < cols; j++)
            for (int k = 0; k < r; k++)
                acc[k] += (double)row[j] * q[j * (uint64_t)r + (uint64_t)k];
        for (int k = 0; k < r; k++)
            out[i * (uint64_t)r + (uint64_t)k] = (float)acc[k];
    }
}

/* out[cols x r] = M^T P */
static void mt_times_p(const float *m, uint64_t rows, uint64_t cols, const float *p, int r, float *out, double *acc)
{
    memset(acc, 0, cols * (uint64_t)r * sizeof *acc);
    for (uint64_t i = 0; i < rows; i++) {
        const float *row = m + i * cols, *pi = p + i * (uint64_t)r;
        for (uint64_t j = 0; j < cols; j++)
            for (int k = 0; k < r; k++)
                acc[j * (uint64_t)r + (uint64_t)k] += (double)row[j] * pi[k];
    }
    for (uint64_t x = 0; x < cols * (uint64_t)r; x++)
        out[x] = (float)acc[x];
}

/* the columns of p (rows x r) orthonormal: each normalised, then taken out
 * of the columns after it */
static void orthonormalise(float *p, uint64_t rows, int r)
{
    for (int k = 0; k < r; k++) {
        double ss = 0;
        for (uint64_t i = 0; i < rows; i++)
            ss += (double)p[i * (uint64_t)r + (uint64_t)k] * p[i * (uint64_t)r + (uint64_t)k];
        double norm = sqrt(ss);
        for (uint64_t i = 0; norm > 0 && i < rows; i++)
            p[i * (uint64_t)r + (uint64_t)k] = (float)(p[i * (uint64_t)r + (uint64_t)k] / norm);
        for (int k2 = k + 1; k2 < r; k2++) {
            double d = 0;
            for (uint64_t i = 0; i < rows; i++)
                d += (double)p[i * (uint64_t)r + (uint64_t)k] * p[i * (uint64_t)r + (uint64_t)k2];
            for (uint64_t i = 0; i < rows; i++)
                p[i * (uint64_t)r + (uint64_t)k2] =
                    (float)(p[i * (uint64_t)r + (uint64_t)k2] - d * p[i * (uint64_t)r + (uint64_t)k]);
        }
    }
}

/* result = P Q^T (Q summed over W ranks); acc = M - P Q^T / W */
static void decompress(float *m, float *result, uint64_t rows, uint64_t cols, const float *p, const float *q, int r,
                       int W)
{
    for (uint64_t i = 0; i < rows; i++)
        for (uint64_t j = 0; j < cols; j++) {
            double s = 0;
            for (int k = 0; k < r; k++)
                s += (double)p[i * (uint64_t)r + (uint64_t)k] * q[j * (uint64_t)r + (uint64_t)k];
            result[i * cols + j] = (float)s;
            m[i * cols + j] = (float)((double)m[i * cols + j] - s / W);
        }
}

/* one allreduce of m floats on the chosen dense algorithm: in (its input,
 * left undefined) to out (the sum); both NULL without data */
static int allreduce(sp_ctx *c, const sp_algorithm *inner, const sp_algo_io *io, uint64_t m, float *in, float *out)
{
    sp_algo_io sub = {.n = m, .k = 0, .acc = in, .result = out, .opts = io->opts};
    return inner->run(c, &sub);
}

int sp_powersgd(sp_ctx *c, sp_algo_io *io)
{
    int W = sp_size(c), exact = io->acc != NULL, rc = SP_OK;
    int r = io->opts->powersgd_rank > 0 ? io->opts->powersgd_rank : 4;
    const char *inner_name = sp_powersgd_allreduce_name(io->opts->powersgd_allreduce);
    const sp_algorithm *inner = sp_algorithm_find(inner_name ? inner_name : "ring");
    if (!inner || inner->cls != SP_ALGO_DENSE)
        return SP_ERR_ARG;
    sp_algo_layer whole = {0, io->n, sp_most_square_rows(io->n)};
    const sp_algo_layer *L = io->layers ? io->layers : &whole;
    int nl = io->layers ? io->nlayers : 1;
    sp_powersgd_sizes sz;
    sp_powersgd_sizes_of(L, nl, io->n, r, &sz);
    uint64_t m1 = sz.p + sz.dense, maxcols = 1;

    mat *mats = malloc((sz.matrices ? sz.matrices : 1) * sizeof *mats);
    if (!mats)
        return SP_ERR_MEM;
    uint64_t nm = 0, pa = 0, qa = 0;
    for (int l = 0; l < nl; l++) {
        uint64_t cols;
        if (!compresses(L[l].rows, L[l].size, r, &cols))
            continue;
        mats[nm++] = (mat){L[l].offset, L[l].rows, cols, pa, qa};
        pa += (uint64_t)r * L[l].rows;
        qa += (uint64_t)r * cols;
        maxcols = cols > maxcols ? cols : maxcols;
    }
    float *b1 = NULL, *s1 = NULL, *b2 = NULL, *s2 = NULL;
    double *scratch = NULL;
    uint64_t *state = NULL;
    if (exact) {
        b1 = malloc((m1 + 1) * sizeof *b1);
        s1 = malloc((m1 + 1) * sizeof *s1);
        b2 = malloc((sz.q + 1) * sizeof *b2);
        s2 = malloc((sz.q + 1) * sizeof *s2);
        scratch = malloc(maxcols * (uint64_t)r * sizeof *scratch);
        /* the warm start: a flag, then every tensor's Q (cols x r) */
        state = sp_rank_state(c, sizeof(uint64_t) + (sz.q + 1) * sizeof(float));
        if (!b1 || !s1 || !b2 || !s2 || !scratch || !state) {
            rc = SP_ERR_MEM;
            goto done;
        }
    }
    float *qmem = state ? (float *)(state + 1) : NULL;
    if (state && !state[0]) {
        for (uint64_t t = 0; t < nm; t++)
            for (uint64_t i = 0; i < mats[t].cols * (uint64_t)r; i++)
                qmem[mats[t].q_at + i] = sp_powersgd_q0(io->opts->seed, t, i);
        state[0] = 1;
    }

    sp_phase(c, "compress-p"); /* P = M Q, and the dense tensors beside */
    for (uint64_t t = 0; t < nm; t++) {
        const mat *x = &mats[t];
        if (exact)
            m_times_q(io->acc + x->off, x->rows, x->cols, qmem + x->q_at, r, b1 + x->p_at, scratch);
        sp_compute_flops(c, 2.0 * r * (double)x->rows * (double)x->cols,
                         4.0 * ((double)x->rows * (double)x->cols + r * (double)(x->rows + x->cols)));
    }
    uint64_t at = sz.p;
    for (int l = 0; l < nl; l++) {
        uint64_t cols;
        if (compresses(L[l].rows, L[l].size, r, &cols))
            continue;
        if (exact)
            memcpy(b1 + at, io->acc + L[l].offset, L[l].size * sizeof *b1);
        at += L[l].size;
    }
    if (sz.dense)
        sp_compute(c, SP_K_COPY, 8.0 * (double)sz.dense);
    if ((rc = allreduce(c, inner, io, m1, b1, s1)) != SP_OK)
        goto done;

    if (nm) {
        sp_phase(c, "orthogonalise");
        for (uint64_t t = 0; t < nm; t++) {
            const mat *x = &mats[t];
            if (exact)
                orthonormalise(s1 + x->p_at, x->rows, r);
            /* r columns normalised (3 rows FLOPs each), r(r-1)/2 projections
             * (4 rows each); r passes over P, read and written */
            sp_compute_flops(c, (double)x->rows * (3.0 * r + 2.0 * r * (r - 1)), 8.0 * r * (double)x->rows * r);
        }

        sp_phase(c, "compress-q"); /* Q = M^T P */
        for (uint64_t t = 0; t < nm; t++) {
            const mat *x = &mats[t];
            if (exact)
                mt_times_p(io->acc + x->off, x->rows, x->cols, s1 + x->p_at, r, b2 + x->q_at, scratch);
            sp_compute_flops(c, 2.0 * r * (double)x->rows * (double)x->cols,
                             4.0 * ((double)x->rows * (double)x->cols + r * (double)(x->rows + x->cols)));
        }
        if ((rc = allreduce(c, inner, io, sz.q, b2, s2)) != SP_OK)
            goto done;
    }

    sp_phase(c, "decompress"); /* result = P Q^T; acc = M - P Q^T / W */
    for (uint64_t t = 0; t < nm; t++) {
        const mat *x = &mats[t];
        if (exact) {
            decompress(io->acc + x->off, io->result + x->off, x->rows, x->cols, s1 + x->p_at, s2 + x->q_at, r, W);
            for (uint64_t i = 0; i < x->cols * (uint64_t)r; i++)
                qmem[x->q_at + i] = s2[x->q_at + i] / (float)W;
        }
        /* read M, write M and the result */
        sp_compute_flops(c, 2.0 * r * (double)x->rows * (double)x->cols, 12.0 * (double)x->rows * (double)x->cols);
    }
    at = sz.p;
    for (int l = 0; l < nl; l++) {
        uint64_t cols;
        if (compresses(L[l].rows, L[l].size, r, &cols))
            continue;
        if (exact) {
            memcpy(io->result + L[l].offset, s1 + at, L[l].size * sizeof *s1);
            memset(io->acc + L[l].offset, 0, L[l].size * sizeof *io->acc);
        }
        at += L[l].size;
    }
    if (sz.dense)
        sp_compute(c, SP_K_COPY, 12.0 * (double)sz.dense); /* the sums out, acc zeroed */
    if (exact) /* acc holds the residual now: a device's copy of it follows */
        sp_acc_rewritten(io->acc, io->n);

done:
    free(mats);
    free(b1);
    free(s1);
    free(b2);
    free(s2);
    free(scratch);
    return rc;
}
