/* npy.h - NumPy .npy files of float32 (read and write), C order only. */
#ifndef SPARSIM_NPY_H
#define SPARSIM_NPY_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int ndim;
    uint64_t shape[8];
    float *data; /* product(shape) floats */
} sp_npy;

/* Reads a little-endian float32 C-order array.  Returns -1 with a one-line
 * message naming the problem (not .npy, wrong dtype, Fortran order, short
 * file, non-finite value). */
int sp_npy_read(const char *path, sp_npy *out, char *err, size_t errlen);
void sp_npy_free(sp_npy *a);

/* Writes a float32 array of the given shape. */
int sp_npy_write(const char *path, const float *data, int ndim, const uint64_t *shape, char *err, size_t errlen);

#endif
