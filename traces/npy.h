/* npy.h - NumPy .npy files of float32 (read and write), C order only. */
#ifndef SPARSIM_NPY_H
#define SPARSIM_NPY_H

#include "trace.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int ndim;
    uint64_t shape[8];
    float *data; /* product(shape) floats */
} sp_npy;

/* The shape of a .npy of float32, and where its data starts; the file's
 * size is checked against the header.  0, or -1 with a one-line message. */
typedef struct {
    int ndim;
    uint64_t shape[8];
    uint64_t count;       /* product of the shape */
    uint64_t data_offset; /* bytes from the start of the file */
} sp_npy_info;
int sp_npy_info_read(const char *path, sp_npy_info *info, char *err, size_t errlen);

/* Reads a little-endian float32 C-order array.  Returns -1 with a one-line
 * message naming the problem (not .npy, wrong dtype, Fortran order, short
 * file, non-finite value). */
int sp_npy_read(const char *path, sp_npy *out, char *err, size_t errlen);
void sp_npy_free(sp_npy *a);

/* Writes a float32 array of the given shape (under path.part, renamed into
 * place when complete). */
int sp_npy_write(const char *path, const float *data, int ndim, const uint64_t *shape, char *err, size_t errlen);

/* The same, streamed: the header first, then the data in any number of
 * pieces; close renames into place only if ok and exactly the shape's count
 * was written. */
typedef struct {
    sp_part_file pf;
    uint64_t count, written;
    int ok;
    int error; /* errno of the first write that failed */
} sp_npy_stream;
int sp_npy_stream_open(sp_npy_stream *st, const char *path, int ndim, const uint64_t *shape, char *err,
                       size_t errlen);
void sp_npy_stream_write(sp_npy_stream *st, const float *data, uint64_t count);
int sp_npy_stream_close(sp_npy_stream *st, int ok, char *err, size_t errlen);

#endif
