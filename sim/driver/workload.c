/* workload.c - the seeded synthetic gradient generator.
 *
 * Real gradients are not i.i.d. Gaussian: their tails are heavier, their
 * scale differs by orders of magnitude between layers (so the largest entries
 * cluster in some index regions), ranks see correlated gradients (they train
 * the same model on similar data), and a gradient resembles the previous
 * iteration's.  The generator builds each entry as
 *
 *   g[i] = scale(layer(i)) * ( sqrt(shared) * C(i) + sqrt(1 - shared) * R(rank, i) )
 *   C(i) = sqrt(persistence) * L(seed, i) + sqrt(1 - persistence) * L(seed, iter, i)
 *   R(rank, i) = sqrt(persistence) * L(seed, rank, i) + sqrt(1 - persistence) * L(seed, rank, iter, i)
 *
 * where each L is an independent unit-variance Laplace draw (heavier tails
 * than a normal), from a counter-based hash of its arguments.  Parameters:
 *   layers        number of contiguous layers, sizes drawn from the seed
 *   scale_spread  layer scales are log-uniform in [1/spread, spread]
 *   shared        fraction of variance common to all ranks (cross-rank correlation)
 *   persistence   fraction of variance that repeats across iterations
 */
#include "workload.h"

#include <math.h>

void sp_synth_defaults(sp_synth_params *p)
{
    p->layers = 16;
    p->scale_spread = 10.0;
    p->shared = 0.5;
    p->persistence = 0.5;
}

static inline uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline uint64_t hash4(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    return mix64(mix64(a ^ (b * 0xc2b2ae3d27d4eb4full)) ^ (c * 0x165667b19e3779f9ull) ^
                 (d * 0xd6e8feb86659fd93ull));
}

/* unit-variance Laplace from 64 random bits */
static inline double laplace(uint64_t h)
{
    double u = ((double)(h >> 11) + 0.5) * (1.0 / 9007199254740992.0); /* (0,1) */
    double t = u - 0.5;
    double mag = -log(1.0 - 2.0 * fabs(t));
    return (t < 0 ? -mag : mag) * M_SQRT1_2;
}

enum { S_LAYER = 1, S_SCALE, S_COMMON_STATIC, S_COMMON_ITER, S_RANK_STATIC, S_RANK_ITER };

void sp_synth_add(const sp_synth_params *p, uint64_t seed, int rank, int iter, uint64_t n, float *acc)
{
    int L = p->layers > 0 ? p->layers : 1;
    if ((uint64_t)L > n)
        L = (int)(n ? n : 1);
    /* layer boundaries: L cut points from the seed, sizes vary by up to 4x */
    double weights[256];
    if (L > 256)
        L = 256;
    double wsum = 0;
    for (int l = 0; l < L; l++) {
        double u = (double)(hash4(seed, S_LAYER, (uint64_t)l, 0) >> 11) / 9007199254740992.0;
        weights[l] = 1.0 + 3.0 * u;
        wsum += weights[l];
    }
    double ls = log(p->scale_spread > 1 ? p->scale_spread : 1.0);
    double a_sh = sqrt(p->shared), a_own = sqrt(1.0 - p->shared);
    double a_st = sqrt(p->persistence), a_it = sqrt(1.0 - p->persistence);
    uint64_t start = 0;
    double cum = 0;
    for (int l = 0; l < L; l++) {
        cum += weights[l];
        uint64_t end = (l == L - 1) ? n : (uint64_t)((double)n * cum / wsum);
        double u = (double)(hash4(seed, S_SCALE, (uint64_t)l, 0) >> 11) / 9007199254740992.0;
        double scale = exp((2.0 * u - 1.0) * ls);
        for (uint64_t i = start; i < end; i++) {
            double common = a_st * laplace(hash4(seed, S_COMMON_STATIC, i, 0)) +
                            a_it * laplace(hash4(seed, S_COMMON_ITER, (uint64_t)iter, i));
            double own = a_st * laplace(hash4(seed, S_RANK_STATIC, (uint64_t)rank, i)) +
                         a_it * laplace(hash4(seed ^ ((uint64_t)rank << 32), S_RANK_ITER, (uint64_t)iter, i));
            acc[i] += (float)(scale * (a_sh * common + a_own * own));
        }
        start = end;
    }
}
