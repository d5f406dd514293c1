/* dense_common.c - the start of every dense allreduce and its elementwise sum. */
#include "blocks.h"

#include <stdlib.h>
#include <string.h>

int sp_dense_begin(sp_algo_io *io, float **tmp)
{
    *tmp = NULL;
    if (!io->result)
        return SP_OK;
    size_t bytes = io->n * sizeof(float);
    memcpy(io->result, io->acc, bytes);
    memset(io->acc, 0, bytes);
    *tmp = malloc(bytes ? bytes : 1);
    return *tmp ? SP_OK : SP_ERR_MEM;
}

void sp_dense_charge_copy(sp_ctx *c, const sp_algo_io *io)
{
    /* result = acc, then acc = 0: 4n bytes read, 8n written */
    if (io->result)
        sp_compute(c, SP_K_COPY, 6.0 * (double)io->n);
}

void sp_dense_add(void *buf, const void *in, void *arg)
{
    sp_dense_add_arg *a = arg;
    if (buf)
        for (uint64_t i = 0; i < a->n; i++)
            ((float *)buf)[i] += ((const float *)in)[i];
    sp_compute(a->c, SP_K_DENSE_SUM, (double)a->n);
}
