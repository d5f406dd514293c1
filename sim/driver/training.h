/* training.h - one whole training iteration around an allreduce.
 *
 * A data-parallel training iteration is a forward and a backward pass on
 * every rank (the model's compute), then the gradient's allreduce (the
 * simulated part: its selection kernels and its messages).  This turns a
 * model preset's FLOPs and a device's sustained FLOP/s (or a time the user
 * gives) into compute seconds and puts the iteration together, with the
 * backward pass overlapping communication where the algorithm allows it
 * (training.c states the rule).
 */
#ifndef SPARSIM_TRAINING_H
#define SPARSIM_TRAINING_H

#include "resolve.h"
#include "traces/report.h"

/* Whether the plan asks for whole training iterations (--train-model or
 * --train-compute). */
int sp_training_on(const sp_plan *p);

/* Cross-field checks of the training options (part of sp_plan_validate):
 * 0, or -1 with a one-line message. */
int sp_training_validate(const sp_plan *p, const sp_device *dev, char *err, size_t errlen);

/* The iteration of the resolved run whose allreduce takes `comm_s` seconds
 * per iteration (selection and communication, as simulated), into `t`: the
 * device and the workload's layers as resolved.  0, or -1 out of memory. */
int sp_training_eval(const sp_resolved *r, double comm_s, sp_report_training *t);

/* The iteration time with layer-by-layer overlap of a dense allreduce with
 * the backward pass: layers in the order backward produces their gradients,
 * `sizes` of them (nl), the forward and backward seconds and the allreduce's
 * seconds for the whole gradient. */
double sp_training_overlapped(const uint64_t *sizes, int nl, double fwd_s, double bwd_s, double comm_s);

#endif
