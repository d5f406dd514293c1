/* fuzz_npy.c - a .npy file: its header, the whole array, and the same file
 * opened as a gradient trace (memory mapped) with every row read. */
#include "fuzz_input.h"
#include "traces/gradients.h"
#include "traces/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file("g.npy", data, size);
    char err[1024];
    sp_npy_info info;
    sp_npy_info_read(path, &info, err, sizeof err);
    sp_npy a;
    if (sp_npy_read(path, &a, err, sizeof err) == 0)
        sp_npy_free(&a);
    sp_grad_source *src = sp_trace_open(path, err, sizeof err);
    if (src) {
        /* a few rows of the first and last iterations, as a run reads them */
        if (src->n <= (1u << 16)) {
            float *row = calloc(src->n ? src->n : 1, sizeof *row);
            for (int it = 0; row && it < src->iters && it < 2; it++)
                for (int r = 0; r < src->ranks && r < 4; r++)
                    src->fill(src, it, r, row, 0, err, sizeof err);
            free(row);
        }
        src->close(src);
    }
    return 0;
}
