/* live.c - gradients from a trainer that runs beside the simulator.
 *
 * Closed-loop training (docs/accuracy.md): a trainer process computes every
 * worker's gradient, sparsim's algorithm aggregates them, and the trainer
 * applies the global result as its update before it computes the next
 * iteration's gradients.  The two talk over one connected stream socket the
 * trainer hands over as a file descriptor (--grad-live FD); a socket, so that
 * a trainer gone away is an error on send, not a signal.
 *
 * The protocol, in the host's byte order (both ends run on one machine):
 *   sparsim -> trainer, once:  "sparsim-live 1 n=N ranks=P iters=I\n"
 *   trainer -> sparsim, per iteration i:  u32 'GRAD' tag, u32 i, then P x n
 *       float32: every rank's gradient, rank by rank
 *   sparsim -> trainer, per iteration i:  u32 'RSLT' tag, u32 i, then n
 *       float32: the algorithm's global result of iteration i
 * The result of iteration i goes out when the first rank's algorithm returns
 * it; every other rank's result must be equal, byte for byte.  A rank asks
 * for iteration i + 1 only after its own algorithm returned iteration i's
 * result, so the result has always gone out before the next gradients are
 * read, and SimGrid runs one actor at a time, so a blocking read here costs
 * wall time, never simulated time.
 */
#include "gradients.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define TAG_GRAD 0x44415247u /* "GRAD" read as a little-endian u32 */
#define TAG_RSLT 0x544c5352u /* "RSLT" */

typedef struct {
    int fd;
    int loaded;       /* the iteration whose gradients are in grads, or -1 */
    int sent;         /* the last iteration whose result went out, or -1 */
    float *grads;     /* P x n */
    float *result;    /* the result that went out last */
    char broken[400]; /* the first failure: every later call repeats it (no
                       * other rank may read on from the middle of a block) */
} live_impl;

/* the first failure, kept: -1 with its message, now and on every later call */
static int fail_once(live_impl *l, char *err, size_t errlen)
{
    if (!l->broken[0])
        snprintf(l->broken, sizeof l->broken, "%s", err);
    snprintf(err, errlen, "%s", l->broken);
    return -1;
}

static int send_all(int fd, const void *buf, size_t len, char *err, size_t errlen)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            snprintf(err, errlen, "the trainer's channel (--grad-live) closed: %s", w < 0 ? strerror(errno) : "EOF");
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

static int recv_all(int fd, void *buf, size_t len, int it, char *err, size_t errlen)
{
    char *p = buf;
    while (len > 0) {
        ssize_t r = read(fd, p, len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            snprintf(err, errlen, "the trainer's channel (--grad-live) closed before the gradients of iteration %d: %s",
                     it, r < 0 ? strerror(errno) : "end of stream");
            return -1;
        }
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

static int live_fill_block(sp_grad_source *s, int it, int rank, char *err, size_t errlen);

static int live_fill(sp_grad_source *s, int it, int rank, float *out, int add, char *err, size_t errlen)
{
    live_impl *l = s->impl;
    if (l->broken[0] || live_fill_block(s, it, rank, err, errlen) != 0)
        return fail_once(l, err, errlen);
    const float *g = l->grads + (uint64_t)rank * s->n;
    if (add)
        for (uint64_t i = 0; i < s->n; i++)
            out[i] += g[i];
    else
        memcpy(out, g, s->n * sizeof *out);
    return 0;
}

/* iteration it's block read, if it is not yet */
static int live_fill_block(sp_grad_source *s, int it, int rank, char *err, size_t errlen)
{
    live_impl *l = s->impl;
    if (it < 0 || it >= s->iters || rank < 0 || rank >= s->ranks) {
        snprintf(err, errlen, "the live gradients hold no iteration %d of rank %d", it, rank);
        return -1;
    }
    if (it != l->loaded) {
        if (it != l->loaded + 1 || l->sent != it - 1) {
            snprintf(err, errlen, "live gradients are read in order: iteration %d asked after %d", it, l->loaded);
            return -1;
        }
        uint32_t head[2];
        if (recv_all(l->fd, head, sizeof head, it, err, errlen) != 0 ||
            recv_all(l->fd, l->grads, (size_t)s->ranks * s->n * sizeof *l->grads, it, err, errlen) != 0)
            return -1;
        if (head[0] != TAG_GRAD || head[1] != (uint32_t)it) {
            snprintf(err, errlen, "the trainer sent block (tag %08x, iteration %u) where the gradients of iteration "
                                  "%d belong",
                     head[0], head[1], it);
            return -1;
        }
        const float *g = l->grads;
        for (uint64_t i = 0; i < (uint64_t)s->ranks * s->n; i++)
            if (!isfinite(g[i])) {
                snprintf(err, errlen, "the trainer's gradient of iteration %d, rank %llu, index %llu is not finite",
                         it, (unsigned long long)(i / s->n), (unsigned long long)(i % s->n));
                return -1;
            }
        l->loaded = it;
    }
    return 0;
}

static int live_result(sp_grad_source *s, int it, int rank, const float *result, char *err, size_t errlen)
{
    live_impl *l = s->impl;
    size_t bytes = s->n * sizeof *result;
    if (l->broken[0])
        return fail_once(l, err, errlen);
    if (it == l->sent) { /* another rank's copy of the result that went out */
        if (memcmp(result, l->result, bytes) != 0) {
            snprintf(err, errlen, "rank %d's global result of iteration %d differs from the one sent to the trainer",
                     rank, it);
            return fail_once(l, err, errlen);
        }
        return 0;
    }
    if (it != l->sent + 1) {
        snprintf(err, errlen, "the result of iteration %d came before that of iteration %d", it, l->sent + 1);
        return fail_once(l, err, errlen);
    }
    memcpy(l->result, result, bytes);
    uint32_t head[2] = {TAG_RSLT, (uint32_t)it};
    if (send_all(l->fd, head, sizeof head, err, errlen) != 0 || send_all(l->fd, result, bytes, err, errlen) != 0)
        return fail_once(l, err, errlen);
    l->sent = it;
    return 0;
}

static void live_close(sp_grad_source *s)
{
    if (!s)
        return;
    live_impl *l = s->impl;
    if (l) {
        free(l->grads);
        free(l->result);
        free(l);
    }
    free(s);
}

sp_grad_source *sp_live_open(int fd, uint64_t n, int ranks, int iters, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "--grad-live %d: no such open file descriptor", fd);
        return NULL;
    }
    if (!S_ISSOCK(st.st_mode)) {
        snprintf(err, errlen, "--grad-live %d is not a socket (the trainer hands over one end of a socket pair)", fd);
        return NULL;
    }
    sp_grad_source *s = calloc(1, sizeof *s);
    live_impl *l = calloc(1, sizeof *l);
    if (!s || !l) {
        free(s);
        free(l);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->impl = l;
    s->n = n;
    s->ranks = ranks;
    s->iters = iters;
    s->fill = live_fill;
    s->result = live_result;
    s->close = live_close;
    l->fd = fd;
    l->loaded = l->sent = -1;
    l->grads = malloc((size_t)ranks * n * sizeof *l->grads);
    l->result = malloc(n * sizeof *l->result);
    if (!l->grads || !l->result) {
        snprintf(err, errlen, "out of memory for %d live gradients of n = %llu", ranks, (unsigned long long)n);
        live_close(s);
        return NULL;
    }
    char hello[160];
    int len = snprintf(hello, sizeof hello, "sparsim-live 1 n=%llu ranks=%d iters=%d\n", (unsigned long long)n, ranks,
                       iters);
    if (send_all(fd, hello, (size_t)len, err, errlen) != 0) {
        live_close(s);
        return NULL;
    }
    return s;
}
