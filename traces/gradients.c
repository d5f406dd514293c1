/* gradients.c - recorded gradient traces as a gradient source.
 *
 * A trace is a .npy of float32, shape (I, P, n) (or (P, n) for one
 * iteration), as traces/record_gradients.py writes it, with a layers.json
 * beside it (layer table, recorded iterations, losses).  The array is memory
 * mapped and read one (iteration, rank) slice at a time, so a trace larger
 * than memory works; every value read is checked to be finite.
 */
#include "gradients.h"
#include "npy.h"
#include "trace.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    void *map;
    size_t map_len;
    const float *data; /* I x P x n */
    char path[1100];
} trace_impl;

static int trace_fill(sp_grad_source *s, int it, int rank, float *out, int add, char *err, size_t errlen)
{
    trace_impl *t = s->impl;
    if (it < 0 || it >= s->iters || rank < 0 || rank >= s->ranks) {
        snprintf(err, errlen, "%s holds no iteration %d of rank %d", t->path, it, rank);
        return -1;
    }
    /* The header's length need not leave the data 4-byte aligned (NumPy pads
     * it to 64 bytes, other writers may not), so values are read by memcpy. */
    const char *g = (const char *)t->data + ((uint64_t)it * (uint64_t)s->ranks + (uint64_t)rank) * s->n * 4;
    int bad = 0;
    float v;
    if (add)
        for (uint64_t i = 0; i < s->n; i++) {
            memcpy(&v, g + 4 * i, 4);
            bad |= !isfinite(v);
            out[i] += v;
        }
    else
        for (uint64_t i = 0; i < s->n; i++) {
            memcpy(&v, g + 4 * i, 4);
            bad |= !isfinite(v);
            out[i] = v;
        }
    if (bad) {
        for (uint64_t i = 0; i < s->n; i++)
            if (memcpy(&v, g + 4 * i, 4), !isfinite(v)) {
                snprintf(err, errlen, "%s: non-finite value in iteration %d, rank %d, index %llu", t->path, it,
                         rank, (unsigned long long)i);
                break;
            }
        return -1;
    }
    return 0;
}

static void trace_close(sp_grad_source *s)
{
    if (!s)
        return;
    trace_impl *t = s->impl;
    if (t && t->map)
        munmap(t->map, t->map_len);
    free(t);
    free(s->layers);
    free((void *)s->iter_ids);
    free(s);
}

/* a layer's "shape" (optional): its dimensions, whose product is its size;
 * rows is the first of two or more (a conv weight (out, in, kh, kw) is out
 * x in kh kw, as PowerSGD reshapes it), 0 for one dimension */
static int read_shape(const cJSON *l, sp_layer *ly)
{
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(l, "shape"), *d;
    if (!shape)
        return 0;
    if (!cJSON_IsArray(shape))
        return -1;
    double prod = 1, first = 0;
    int dims = 0;
    cJSON_ArrayForEach(d, shape)
    {
        if (!cJSON_IsNumber(d) || !(d->valuedouble >= 1) || d->valuedouble != floor(d->valuedouble))
            return -1;
        prod *= d->valuedouble;
        if (dims++ == 0)
            first = d->valuedouble;
    }
    if (dims == 0 ? ly->size != 1 : prod != (double)ly->size)
        return -1;
    ly->shaped = 1;
    ly->rows = dims >= 2 ? (uint64_t)first : 0;
    return 0;
}

/* layers.json beside the data: the layer table (covering [0, n) in order)
 * and the recorded iteration numbers; absent is fine, wrong is an error */
static int read_layers(sp_grad_source *s, const char *json_path, char *err, size_t errlen)
{
    if (access(json_path, F_OK) != 0)
        return 0;
    char jerr[600];
    cJSON *j = sp_json_file_checked(json_path, 64u << 20, jerr, sizeof jerr);
    if (!j) {
        snprintf(err, errlen, "layer table %s", jerr);
        return -1;
    }
    int rc = -1;
    const cJSON *layers = cJSON_GetObjectItemCaseSensitive(j, "layers");
    const cJSON *iters = cJSON_GetObjectItemCaseSensitive(j, "iterations");
    if (layers) {
        int nl = cJSON_GetArraySize(layers);
        if (!cJSON_IsArray(layers) || nl < 1) {
            snprintf(err, errlen, "%s: \"layers\" must be a non-empty array", json_path);
            goto out;
        }
        s->layers = calloc((size_t)nl, sizeof *s->layers);
        if (!s->layers) {
            snprintf(err, errlen, "out of memory reading %s", json_path);
            goto out;
        }
        uint64_t at = 0;
        const cJSON *l;
        cJSON_ArrayForEach(l, layers)
        {
            double off = sp_json_num(l, "offset", NULL), size = sp_json_num(l, "size", NULL);
            const char *name = sp_json_str(l, "name", NULL);
            if (!(size >= 1) || size != floor(size) || (cJSON_GetObjectItem(l, "offset") && off != (double)at)) {
                snprintf(err, errlen,
                         "%s: layer %d (%s) does not continue the table at offset %llu with a positive size",
                         json_path, s->nlayers, name, (unsigned long long)at);
                goto out;
            }
            sp_layer *ly = &s->layers[s->nlayers++];
            snprintf(ly->name, sizeof ly->name, "%s", name);
            ly->offset = at;
            ly->size = (uint64_t)size;
            if (read_shape(l, ly) != 0) {
                snprintf(err, errlen, "%s: layer %d (%s): \"shape\" must be a list of positive integers whose "
                         "product is its size %llu", json_path, s->nlayers - 1, name, (unsigned long long)ly->size);
                goto out;
            }
            at += ly->size;
        }
        if (at != s->n) {
            snprintf(err, errlen, "%s: the layer table covers %llu entries, the gradient has n = %llu", json_path,
                     (unsigned long long)at, (unsigned long long)s->n);
            goto out;
        }
    }
    if (iters) {
        if (!cJSON_IsArray(iters) || cJSON_GetArraySize(iters) != s->iters) {
            snprintf(err, errlen, "%s: \"iterations\" must list %d iteration numbers (the trace holds %d)", json_path,
                     s->iters, s->iters);
            goto out;
        }
        int *ids = calloc((size_t)s->iters, sizeof *ids);
        if (!ids) {
            snprintf(err, errlen, "out of memory reading %s", json_path);
            goto out;
        }
        int i = 0, prev = -1;
        const cJSON *v;
        cJSON_ArrayForEach(v, iters)
        {
            if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble <= prev ||
                v->valuedouble > 1e9) {
                snprintf(err, errlen, "%s: \"iterations\" must be increasing whole numbers", json_path);
                free(ids);
                goto out;
            }
            prev = ids[i++] = (int)v->valuedouble;
        }
        s->iter_ids = ids;
    }
    rc = 0;
out:
    cJSON_Delete(j);
    return rc;
}

sp_grad_source *sp_trace_open(const char *path, char *err, size_t errlen)
{
    char npy[1100], json[1100];
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(npy, sizeof npy, "%.1000s/grads.npy", path);
        snprintf(json, sizeof json, "%.1000s/layers.json", path);
    } else {
        snprintf(npy, sizeof npy, "%s", path);
        const char *slash = strrchr(path, '/');
        snprintf(json, sizeof json, "%.*s%slayers.json", slash ? (int)(slash - path) : 0, path, slash ? "/" : "");
    }
    sp_npy_info info;
    if (sp_npy_info_read(npy, &info, err, errlen) != 0)
        return NULL;
    uint64_t I, P, n;
    if (info.ndim == 3) {
        I = info.shape[0];
        P = info.shape[1];
        n = info.shape[2];
    } else if (info.ndim == 2) {
        I = 1;
        P = info.shape[0];
        n = info.shape[1];
    } else {
        snprintf(err, errlen, "%s has %d dimensions; expected (P, n) or (I, P, n)", npy, info.ndim);
        return NULL;
    }
    if (I < 1 || I > 1000000 || P < 1 || P > 1000000 || n < 1 || n > 2147483647ull) {
        snprintf(err, errlen, "%s: shape (%llu, %llu, %llu) out of range (iterations 1..10^6, ranks 1..10^6, "
                              "n 1..2^31-1)",
                 npy, (unsigned long long)I, (unsigned long long)P, (unsigned long long)n);
        return NULL;
    }
    sp_grad_source *s = calloc(1, sizeof *s);
    trace_impl *t = calloc(1, sizeof *t);
    if (!s || !t) {
        free(s);
        free(t);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->impl = t;
    s->n = n;
    s->ranks = (int)P;
    s->iters = (int)I;
    s->fill = trace_fill;
    s->close = trace_close;
    snprintf(t->path, sizeof t->path, "%s", npy);
    int fd = open(npy, O_RDONLY);
    if (fd < 0) {
        snprintf(err, errlen, "cannot read %s: %s", npy, strerror(errno));
        trace_close(s);
        return NULL;
    }
    t->map_len = (size_t)(info.data_offset + info.count * sizeof(float));
    t->map = mmap(NULL, t->map_len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (t->map == MAP_FAILED) {
        t->map = NULL;
        snprintf(err, errlen, "cannot map %s: %s", npy, strerror(errno));
        trace_close(s);
        return NULL;
    }
    t->data = (const float *)((const char *)t->map + info.data_offset);
    if (read_layers(s, json, err, errlen) != 0) {
        trace_close(s);
        return NULL;
    }
    return s;
}
