/* training.c - whole training iterations: compute, then the allreduce,
 * overlapped where the algorithm allows it.
 *
 * Compute per iteration on one rank is forward + backward: the model
 * preset's forward FLOPs per sample (sim/workload/paper_models.c, sources
 * there) x 3 (backward is twice forward: Kaplan et al. 2020, arXiv
 * 2001.08361, section 2.1) x the batch, over the device's sustained FLOP/s
 * (topologies/devices.c); or the user's own model's forward FLOPs per
 * sample (--train-flops) the same way; or the user's --train-compute seconds.
 *
 * Without overlap (the papers' codes: one allreduce over the flattened
 * gradient after backward, reference notes section 1):
 *     iteration = compute + allreduce
 * where the allreduce is the simulated time per iteration (its selection
 * kernels and its messages), exactly.
 *
 * With --overlap, the rule: a dense allreduce (ring, recdoubling,
 * rabenseifner) overlaps with the backward pass layer by layer, as
 * wait-free backpropagation does (Zhang et al., Poseidon, USENIX ATC 2017;
 * Shi et al., MG-WFBP, INFOCOM 2019): layer l's gradient is ready when
 * backward has covered it, at fwd + bwd x (parameters of layers 1..l) / n
 * (backward time taken proportional to parameters: an approximation), in
 * the order of the workload's layer table (for vgg16 and lstm the authors'
 * reverse parameter order, which is the order backward produces them; for
 * bert the order of its parameter groups); layer l's allreduce then takes
 * allreduce x size_l / n and the layers' allreduces run one after another:
 *     done_l = max(ready_l, done_{l-1}) + allreduce x size_l / n
 *     iteration = done_L
 * (splitting one allreduce's time by size leaves out the latency each
 * layer's own call would add: an optimistic bound on overlap).  A sparse
 * algorithm selects the top k of the whole gradient, which needs backward
 * to have finished: it does not overlap (iteration = compute + allreduce).
 */
#include "training.h"
#include "topologies/device.h"
#include "sim/workload/paper_models.h"
#include "sim/workload/profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sp_training_on(const sp_plan *p)
{
    return strcmp(p->train_model, "none") != 0 || p->train_compute > 0 || p->train_flops > 0;
}

int sp_training_validate(const sp_plan *p, const sp_device *d, char *err, size_t errlen)
{
    if (!sp_training_on(p)) {
        /* --batch also sets a built-in workload's per-worker batch (its workers' own scales) */
        int batch_used = !p->grad_file[0] && sp_profile_is_builtin(p->workload);
        const char *stray = sp_plan_given(p, "batch") && !batch_used ? "--batch" : p->overlap ? "--overlap" : NULL;
        if (stray) {
            char names[200];
            snprintf(err, errlen, "%s needs training iterations%s: give --train-model %s or --train-compute S", stray,
                     stray[2] == 'b' ? " or a built-in --workload" : "", sp_paper_model_names("|", names, sizeof names));
            return -1;
        }
        return 0;
    }
    if (p->disturb.compute > 0) {
        snprintf(err, errlen, "--compute and training iterations (--train-model, --train-compute) both add a "
                              "backward pass: give one");
        return -1;
    }
    const sp_paper_model *m = sp_paper_model_find(p->train_model);
    if (m && p->train_flops > 0) {
        snprintf(err, errlen, "--train-model and --train-flops both say the model's FLOPs: give one");
        return -1;
    }
    if (!m && p->train_flops > 0 && p->batch <= 0) {
        snprintf(err, errlen, "--train-flops needs --batch (samples per rank per iteration)");
        return -1;
    }
    if (!m && p->batch <= 0) {
        snprintf(err, errlen, "--train-compute without --train-model needs --batch (samples per rank per iteration)");
        return -1;
    }
    if (p->train_compute <= 0) {
        if (!d || d->train_flops <= 0) {
            snprintf(err, errlen, "--%s on --device %s has no compute time: give a device with training "
                                  "FLOP/s (p100, p102) or --train-compute S",
                     m ? "train-model" : "train-flops", p->device);
            return -1;
        }
    }
    return 0;
}

double sp_training_overlapped(const uint64_t *sizes, int nl, double fwd_s, double bwd_s, double comm_s)
{
    double n = 0;
    for (int l = 0; l < nl; l++)
        n += (double)sizes[l];
    if (n <= 0)
        return fwd_s + bwd_s + comm_s;
    double cum = 0, done = 0;
    for (int l = 0; l < nl; l++) {
        cum += (double)sizes[l];
        double ready = fwd_s + bwd_s * cum / n;
        done = (done > ready ? done : ready) + comm_s * (double)sizes[l] / n;
    }
    double end = fwd_s + bwd_s;
    return done > end ? done : end;
}

int sp_training_eval(const sp_resolved *r, double comm_s, sp_report_training *t)
{
    const sp_plan *p = &r->plan;
    memset(t, 0, sizeof *t);
    if (!sp_training_on(p))
        return 0;
    t->on = 1;
    const sp_paper_model *m = sp_paper_model_find(p->train_model);
    if (m)
        snprintf(t->model, sizeof t->model, "%s", m->name);
    t->batch = p->batch > 0 ? p->batch : m ? m->batch : 0;
    if (p->train_compute > 0) {
        t->compute_s = p->train_compute;
        snprintf(t->compute_source, sizeof t->compute_source, "given (--train-compute)");
    } else if (!m) { /* the user's own model: --train-flops */
        const sp_device *d = r->dev;
        t->compute_s = d && d->train_flops > 0 ? 3.0 * p->train_flops * t->batch / d->train_flops : 0;
        snprintf(t->compute_source, sizeof t->compute_source,
                 "3 x %.4g forward FLOPs per sample (--train-flops) x batch %d / %.3g FLOP/s of device %.60s",
                 p->train_flops, t->batch, d ? d->train_flops : 0.0, p->device);
    } else {
        const sp_device *d = r->dev;
        double flops = 3.0 * m->fwd_flops * t->batch; /* forward + backward (2 x forward) */
        t->compute_s = d && d->train_flops > 0 ? flops / d->train_flops : 0;
        snprintf(t->compute_source, sizeof t->compute_source,
                 "3 x %.3g forward FLOPs per sample x batch %d / %.3g FLOP/s of device %.60s; %s", m->fwd_flops, t->batch,
                 d ? d->train_flops : 0.0, p->device, m->train_source);
    }
    t->fwd_s = t->compute_s / 3.0;
    t->bwd_s = t->compute_s - t->fwd_s;
    t->comm_s = comm_s;
    t->overlap = p->overlap;
    t->iter_s = t->compute_s + comm_s;
    if (p->overlap && r->algo->cls == SP_ALGO_DENSE && r->have_profile) {
        const sp_profile *prof = &r->profile;
        uint64_t *sizes = malloc((size_t)(prof->nlayers > 0 ? prof->nlayers : 1) * sizeof *sizes);
        if (!sizes)
            return -1;
        for (int l = 0; l < prof->nlayers; l++)
            sizes[l] = prof->layers[l].size;
        t->iter_s = sp_training_overlapped(sizes, prof->nlayers, t->fwd_s, t->bwd_s, comm_s);
        t->overlapped = 1;
        snprintf(t->overlap_rule, sizeof t->overlap_rule,
                 "dense: layer by layer with backward over the %d layers of workload %.40s (wait-free backpropagation)",
                 prof->nlayers, p->workload);
        free(sizes);
    } else if (p->overlap) {
        snprintf(t->overlap_rule, sizeof t->overlap_rule,
                 "none: a sparse algorithm selects over the whole gradient, after backward");
    } else {
        snprintf(t->overlap_rule, sizeof t->overlap_rule, "none asked: compute, then the allreduce");
    }
    t->samples_per_s = t->iter_s > 0 ? (double)p->ranks * t->batch / t->iter_s : 0;
    return 0;
}
