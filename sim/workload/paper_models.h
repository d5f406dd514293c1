/* paper_models.h - layer tables of the models the sparse-allreduce papers
 * (Ok-Topk, gTop-k) train (paper_models.c says where each comes from). */
#ifndef SPARSIM_PAPER_MODELS_H
#define SPARSIM_PAPER_MODELS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *name, *kind;
    uint64_t size;
} sp_paper_layer;

typedef struct {
    const char *name, *description;
    const char *family; /* the recorded trace whose kinds it takes: cnn, lstm, transformer */
    uint64_t n;
    const sp_paper_layer *layers;
    int nlayers;
    /* one training iteration (sim/driver/training.c): forward FLOPs per
     * sample, the per-GPU batch of the authors' scripts (Ok-Topk's for
     * vgg16, lstm and bert, gTop-k's for the others), and where each comes
     * from (paper_models.c) */
    double fwd_flops;
    int batch;
    const char *train_source;
} sp_paper_model;

/* vgg16, lstm, bert, resnet20, alexnet, resnet50, lstm-ptb or gpt2-xl; NULL for
 * another name */
const sp_paper_model *sp_paper_model_find(const char *name);

/* every model's name, joined by sep, into buf (for messages that list them) */
const char *sp_paper_model_names(const char *sep, char *buf, size_t len);

#endif
