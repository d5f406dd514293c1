/* hash.h - the counter-based random streams every workload draws from.
 *
 * A value is a pure function of (seed, stream, indices): entry i of the
 * stream with key K is mix64(K + i * GOLD).  The generator, the model and
 * the profiles share these, so that the model's overall scale S(t) is the
 * generator's exactly.
 */
#ifndef SPARSIM_HASH_H
#define SPARSIM_HASH_H

#include <stdint.h>

#define SP_GOLD 0x9e3779b97f4a7c15ull

/* the streams */
enum {
    SP_ST_ZERO = 1, SP_ST_KEEP, SP_ST_REDRAW, SP_ST_PHASE, SP_ST_COMMON, SP_ST_RANK, SP_ST_WALK, SP_ST_MEAN,
    SP_ST_LAYER_SIZE, SP_ST_LAYER_SCALE,
    SP_ST_MODEL_COUNT, SP_ST_MODEL_SELECT, SP_ST_MODEL_SPLIT, SP_ST_MODEL_UNION, SP_ST_MODEL_REDUCED,
    SP_ST_RANK_SCALE,
};

static inline uint64_t sp_mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline uint64_t sp_stream_key(uint64_t seed, uint64_t stream, uint64_t a, uint64_t b)
{
    return sp_mix64(sp_mix64(sp_mix64(seed ^ (stream * 0xd6e8feb86659fd93ull)) + a) + b);
}

/* uniform in [0, 1) from 64 bits */
static inline double sp_unit(uint64_t h) { return (double)(h >> 11) * (1.0 / 9007199254740992.0); }

/* a unit normal from 64 bits (generator.c) */
double sp_normal_from_bits(uint64_t h);

/* W_t, the unit normal that drives ln S at iteration t */
static inline double sp_walk_step(uint64_t seed, int t)
{
    return sp_normal_from_bits(sp_mix64(sp_stream_key(seed, SP_ST_WALK, 0, 0) + (uint64_t)t * SP_GOLD));
}

#endif
