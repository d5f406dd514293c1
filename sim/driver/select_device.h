/* select_device.h - sparsim-mpi --select cuda: a rank's residual on a GPU.
 *
 * The rank's accumulated vector (gradient plus residual) lives on the GPU:
 * each iteration's gradient is uploaded (it stands for a backward pass that
 * would have made it there) and added there; the selection kernels run
 * there (algorithms/select_cuda.h) and only the selected pairs come back to
 * the host for the messages.  The host keeps a mirror of the vector, updated
 * with the same float operations, for what reads it whole (dense algorithms,
 * the check of the results); the run ends by checking the two are equal bit
 * for bit.  The copies of selected pairs to the host are a phase of their
 * own, "gpu-copy", in the trace and the per-phase times; per iteration the
 * run records gpu_copy_s, gpu_kernel_s and gpu_upload_s (seconds, rank stats).
 */
#ifndef SPARSIM_SELECT_DEVICE_H
#define SPARSIM_SELECT_DEVICE_H

#include "sim/shim/shim.h"
#include "traces/gradients.h"

#include <stddef.h>
#include <stdint.h>

typedef struct sp_seldev sp_seldev;

/* Before the run starts: 0 when --select cuda can run with this plan; -1
 * with a one-line reason when the plan cannot (not the MPI backend, no exact
 * payloads, a build without CUDA), -2 when this machine cannot (no GPU). */
int sp_seldev_check(int exact, const char *backend, char *err, size_t errlen);

/* Opens rank c's GPU (rank modulo the GPUs), copies acc (n floats) there and
 * sends the selection kernels on acc to it.  NULL with a one-line reason. */
sp_seldev *sp_seldev_open(sp_ctx *c, float *acc, uint64_t n, char *err, size_t errlen);
/* acc += the gradient of (iteration it, rank) from src, on both copies */
int sp_seldev_gradient(sp_seldev *d, sp_grad_source *src, int it, int rank, char *err, size_t errlen);
/* records this iteration's copy, kernel and upload seconds; -1 with a reason
 * when a kernel failed during the iteration */
int sp_seldev_iteration_done(sp_seldev *d, sp_ctx *c, char *err, size_t errlen);
/* the GPU's vector equals the host's, bit for bit; -1 with a reason if not */
int sp_seldev_verify(sp_seldev *d, char *err, size_t errlen);
/* back to the CPU; frees everything */
void sp_seldev_close(sp_seldev *d);

#endif
