/* speedup.c - the speedup over the fastest dense allreduce (speedup.h). */
#include "speedup.h"
#include "algorithms/algorithm.h"

#include <stdio.h>
#include <string.h>

void sp_speedup_level(const char *name, const char *level, char *out, size_t n)
{
    snprintf(out, n, "%s%s%s", name, name[0] ? "=" : "", name[0] ? level : "");
}

int sp_speedup_is_dense(const char *algo)
{
    const sp_algorithm *a = sp_algorithm_find(algo);
    return a && a->cls == SP_ALGO_DENSE;
}

int sp_speedup_same_setting(const sp_speedup_run *a, const sp_speedup_run *b)
{
    return a->ranks == b->ranks && a->n == b->n && a->k == b->k && !strcmp(a->platform, b->platform) &&
           !strcmp(a->level, b->level);
}

double sp_speedup_vs_dense(const sp_speedup_run *runs, int count, const sp_speedup_run *run, int *dense)
{
    double best = 0;
    int at = -1;
    for (int i = 0; run->iter > 0 && i < count; i++) {
        const sp_speedup_run *d = &runs[i];
        if (d->iter > 0 && (at < 0 || d->iter < best) && sp_speedup_is_dense(d->algo) &&
            sp_speedup_same_setting(d, run)) {
            best = d->iter;
            at = i;
        }
    }
    if (dense)
        *dense = at;
    return at < 0 ? 0 : best / run->iter;
}
