/* nccl_model.h - the closed forms of NCCL's ring and tree allreduces
 * (nccl_model.c), rows of the facts table in bounds.c. */
#ifndef SPARSIM_NCCL_MODEL_H
#define SPARSIM_NCCL_MODEL_H

#include "bounds.h"

double sp_nccl_ring_words(const sp_shape *s, double *floor_words);
double sp_nccl_ring_seconds(const sp_shape *s, double alpha, double beta);
double sp_nccl_ring_seconds2(const sp_shape *s, const sp_link_classes *l);
double sp_nccl_tree_words(const sp_shape *s, double *floor_words);
double sp_nccl_tree_seconds(const sp_shape *s, double alpha, double beta);
double sp_nccl_tree_seconds2(const sp_shape *s, const sp_link_classes *l);
double sp_nccl_nvls_words(const sp_shape *s, double *floor_words);
double sp_nccl_nvls_seconds(const sp_shape *s, double alpha, double beta);
double sp_nccl_nvls_seconds2(const sp_shape *s, const sp_link_classes *l);

#endif
