/* layers.c - the gradient's tensors as matrices, for the algorithms that
 * reshape them (PowerSGD: algorithms/powersgd.c).
 *
 * Where a shape comes from, in order:
 *  1. a recorded trace whose layers.json gives each tensor's "shape"
 *     (traces/record_gradients.py writes it): a tensor of two or more
 *     dimensions is its first dimension x the product of the rest (a conv
 *     weight (out, in, kh, kw) is out x in kh kw, as PowerSGD's authors
 *     reshape it); one of one dimension is a vector;
 *  2. a table without shapes (the papers' models, a profile, a trace
 *     without "shape"): a tensor whose kind is a bias or a normalisation's
 *     scale or shift (bn_*, layernorm_*, *_bias) is a vector; a weight with
 *     a bias beside it (the same name with its last "weight" read as
 *     "bias": fc.weight and fc.bias, weight_ih_l0 and bias_ih_l0) has as
 *     many rows as the bias has entries, when that divides its size (an
 *     output's bias has one entry per output row);
 *  3. otherwise, an assumption: the most nearly square factorisation of its
 *     size (the largest divisor <= sqrt(size) rows; a prime size is a
 *     vector).  It is the cheapest shape for PowerSGD (r(rows + cols) is
 *     smallest), so it flatters its volume where the true shape is long and
 *     thin: BERT's word embedding (30522 x 768) becomes 4608 x 5087.
 * A profile fitted to a trace (sparsim profile) cuts large tensors into
 * pieces "name[j]": they are one tensor again here, with the trace's shape
 * where the profile kept it (its layers' "rows").  A profile scaled to
 * another n keeps its layers' names but not their sizes or shapes, so rule
 * 2 rarely holds there and rule 3 decides.
 */
#include "layers.h"

#include <stdlib.h>
#include <string.h>

static int is_vector_kind(const char *kind)
{
    size_t n = strlen(kind);
    return !strncmp(kind, "bn_", 3) || !strncmp(kind, "layernorm_", 10) || (n >= 5 && !strcmp(kind + n - 5, "_bias")) ||
           !strcmp(kind, "bias");
}

/* rows from a bias beside the weight `name` among names[0..nl), or 0 */
static uint64_t rows_from_bias(const char *name, uint64_t size, const char *const *names, const uint64_t *sizes, int nl)
{
    const char *w = NULL;
    for (const char *p = strstr(name, "weight"); p; p = strstr(p + 1, "weight"))
        w = p;
    if (!w)
        return 0;
    char bias[128];
    int pre = (int)(w - name);
    if (snprintf(bias, sizeof bias, "%.*sbias%s", pre, name, w + 6) >= (int)sizeof bias)
        return 0;
    for (int i = 0; i < nl; i++)
        if (!strcmp(names[i], bias) && sizes[i] > 1 && sizes[i] < size && size % sizes[i] == 0)
            return sizes[i];
    return 0;
}

/* the rows of tensor i by rules 2 and 3 */
static uint64_t rows_of(int i, const char *const *names, const char *const *kinds, const uint64_t *sizes, int nl)
{
    if (kinds && kinds[i] && is_vector_kind(kinds[i]))
        return 0;
    uint64_t r = names ? rows_from_bias(names[i], sizes[i], names, sizes, nl) : 0;
    if (!r)
        r = sp_most_square_rows(sizes[i]);
    return r > 1 ? r : 0;
}

/* the length of the tensor's name in a piece's name "tensor[j]", or 0
 * when it is not one */
static size_t piece_base(const char *name)
{
    size_t n = strlen(name);
    if (n < 4 || name[n - 1] != ']')
        return 0;
    const char *b = strrchr(name, '[');
    if (!b || b == name || b[1] == ']')
        return 0;
    for (const char *c = b + 1; c < name + n - 1; c++)
        if (*c < '0' || *c > '9')
            return 0;
    return (size_t)(b - name);
}

static int fill(sp_algo_layer *out, int nl, const char *const *names, const char *const *kinds, const uint64_t *offs,
                const uint64_t *sizes, const sp_layer *shaped)
{
    for (int i = 0; i < nl; i++) {
        out[i].offset = offs[i];
        out[i].size = sizes[i];
        out[i].rows = shaped && shaped[i].shaped ? shaped[i].rows : rows_of(i, names, kinds, sizes, nl);
    }
    return 0;
}

int sp_layers_build(const sp_grad_source *src, const sp_profile *prof, uint64_t n, sp_algo_layer **out, int *nl)
{
    *out = NULL;
    *nl = 0;
    int L = src && src->layers ? src->nlayers : prof && prof->nlayers > 0 ? prof->nlayers : 1;
    sp_algo_layer *t = calloc((size_t)L, sizeof *t);
    const char **names = calloc((size_t)L, sizeof *names), **kinds = calloc((size_t)L, sizeof *kinds);
    uint64_t *offs = calloc((size_t)L, sizeof *offs), *sizes = calloc((size_t)L, sizeof *sizes);
    int rc = -1;
    sp_layer *own = NULL;
    const sp_layer *shaped = NULL;
    if (!t || !names || !kinds || !offs || !sizes)
        goto done;
    if (src && src->layers) {
        for (int i = 0; i < L; i++) {
            names[i] = src->layers[i].name;
            kinds[i] = NULL;
            offs[i] = src->layers[i].offset;
            sizes[i] = src->layers[i].size;
        }
        shaped = src->layers;
    } else if (!src && prof && prof->nlayers > 0) {
        /* a fitted profile cuts large tensors into pieces "name[j]": one
         * tensor again, with the trace's shape where the fit kept it */
        if (!(own = calloc((size_t)L, sizeof *own)))
            goto done;
        int T = 0;
        for (int i = 0; i < L; i++) {
            const sp_profile_layer *ly = &prof->layers[i];
            size_t base = piece_base(ly->name);
            if (T > 0 && base && piece_base(names[T - 1]) == base && !strncmp(names[T - 1], ly->name, base) &&
                offs[T - 1] + sizes[T - 1] == ly->offset) {
                sizes[T - 1] += ly->size;
                continue;
            }
            names[T] = ly->name;
            kinds[T] = ly->kind;
            offs[T] = ly->offset;
            sizes[T] = ly->size;
            own[T].rows = ly->rows;
            own[T].shaped = ly->shaped;
            T++;
        }
        L = T;
        shaped = own;
    } else { /* no table: the whole vector as one tensor */
        names[0] = "";
        kinds[0] = NULL;
        sizes[0] = n;
    }
    fill(t, L, names, kinds, offs, sizes, shaped);
    *out = t;
    *nl = L;
    t = NULL;
    rc = 0;
done:
    free(own);
    free(t);
    free(names);
    free(kinds);
    free(offs);
    free(sizes);
    return rc;
}
