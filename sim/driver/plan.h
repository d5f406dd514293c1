/* plan.h - one validated description of a run.
 *
 * Flags and JSON config files are parsed into an sp_plan exactly once, by the
 * option table of `sparsim run` (plan.c); every later stage trusts it.
 * Validation happens here, so that bad input is caught before any rank
 * starts and reported as one clear line.
 */
#ifndef SPARSIM_PLAN_H
#define SPARSIM_PLAN_H

#include "options.h"
#include "sim/shim/disturb.h"
#include "algorithms/algorithm.h"
#include <stddef.h>
#include <stdint.h>

/* 65,536 ranks start: past about 32,000 the actors' stacks go without guard
 * pages (sim/backends/simgrid/engine.c, set_contexts) */
#define SP_MAX_RANKS 65536

typedef enum { SP_PAYLOAD_AUTO = 0, SP_PAYLOAD_EXACT, SP_PAYLOAD_SIZE, SP_PAYLOAD_MODEL } sp_payload_mode;

#define SP_PLAN_MAX_OPTS 96
#define SP_PLAN_MAX_AT 1024 /* iterations --iters-at may name */

typedef struct {
    char algo[256];         /* registry name, a comma list, or "all" */
    int ranks;              /* P */
    int gpus_per_node;      /* G: rank r is GPU r mod G of node r / G; 0 the platform's (1 without nodes) */
    char platform[1024];    /* "1gbe", "daint", or a SimGrid platform XML file */
    char network[16];       /* cm02 | lv08 | smpi, or platform: the platform's own (resolve.c) */
    int crosstraffic;       /* -1 the network model's own (on for lv08 and smpi), 0 off, 1 on */
    uint64_t unshared_below; /* bytes: smaller messages bypass bandwidth sharing (0: none) */
    int engine;             /* 0 SimGrid, 1 sparsim's flow engine (sim/backends/flow) */
    double flow_slack;      /* --engine flow: share of a link ended flows may leave unused (0: exact) */
    char device[1024];      /* device profile name, or a JSON file */
    uint64_t n;             /* gradient length (floats) */
    double density;         /* k / n */
    int iters;              /* iterations simulated */
    char iters_at[1024];    /* --iters-at as given: which training iterations are simulated */
    int at[SP_PLAN_MAX_AT]; /* parsed: the training iteration of each simulated one (iters of them) */
    int at_given;           /* 0: iterations 0..iters-1 */
    uint64_t seed;
    char out[1024];         /* output folder */
    char grad_file[1024];   /* optional .npy (float32, (P,n) or (I,P,n)) */
    char dump_result[1024]; /* optional .npy written with the last global result */
    int grad_live;          /* -1, or the socket of a trainer's live gradients (traces/live.c) */
    int payload;            /* sp_payload_mode */
    int write_csv;          /* messages.csv */
    int write_trace;        /* trace.json */
    uint64_t trace_msgs;    /* cap on message events in trace.json */
    int quiet;              /* no human summary on stdout */
    int warmup;             /* first iterations run as dense ring allreduce */
    sp_algo_opts opts;
    /* the workload: a profile of the gradients (sim/workload/profile.h) */
    char workload[1024];    /* built-in profile name or JSON profile file */
    int grad_layers;        /* generic profile: layers */
    double grad_spread;     /* generic profile: layer medians log-uniform in [1/S, S] */
    double grad_tail, grad_zeros, grad_shared, grad_mean, grad_refresh, grad_persistence; /* overrides, when given */
    double grad_scale_sd, grad_scale_corr, grad_spikes, grad_spike_scale, grad_rank_sd, grad_rank_corr;
    int settle;             /* iterations of local error feedback before the first simulated one */
    int model_ablation;     /* sp_model_ablation: what a model run leaves out, for checking the model */
    char dump_grads[1024];  /* optional .npy of every gradient the run used, (I, P, n) */
    double watchdog;        /* sparsim-mpi: seconds a wait may make no progress */
    int select_dev;         /* sparsim-mpi: where selection runs, 0 the CPU, 1 CUDA (select_device.h) */
    sp_disturb_opts disturb; /* stragglers, noise, degraded links, background traffic, a failed rank */
    /* whole training iterations (training.h) */
    char train_model[16];   /* none, vgg16, lstm, bert */
    double train_compute;   /* s of forward + backward per iteration (0: the model's FLOPs on the device) */
    double train_flops;     /* forward FLOPs per sample of the user's own model (0: none) */
    int batch;              /* samples per rank per iteration (0: the model's) */
    int overlap;            /* overlap communication with the backward pass where the algorithm allows */
    char config[1024];      /* the --config file, if any */
    unsigned char given[SP_PLAN_MAX_OPTS]; /* per option row: set explicitly */
} sp_plan;

/* The option table of `sparsim run` (and of sparsim-mpi run). */
const sp_opt_table *sp_plan_options(void);

/* The options sparsim-mpi run takes besides those (--watchdog, --select). */
const sp_opt_table *sp_plan_mpi_options(void);

/* Every field at its default. */
void sp_plan_defaults(sp_plan *p);

/* Parses `sparsim run` arguments (argv[0] is the first option).  A --config
 * file is read first and flags override it.  Returns 0, 1 when --help was
 * asked for, or -1 with a one-line message in err. */
int sp_plan_parse(sp_plan *p, int argc, char **argv, char *err, size_t errlen);

/* The same for sparsim-mpi run, which also takes sp_plan_mpi_options(). */
int sp_plan_parse_mpi(sp_plan *p, int argc, char **argv, char *err, size_t errlen);

/* Sets one option from its text, as a flag would (0, or -1 with a message). */
int sp_plan_set(sp_plan *p, const char *name, const char *value, char *err, size_t errlen);

/* 1 if option `name` was given explicitly (flag or config file). */
int sp_plan_given(const sp_plan *p, const char *name);

/* Cross-field checks (algorithm exists, k >= 1, files readable, ...) and
 * what a named preset implies.  0, or -1 with a message. */
int sp_plan_validate(sp_plan *p, char *err, size_t errlen);

/* A named --oktopk-preset brings its density and warm-up, unless given. */
void sp_plan_apply_preset(sp_plan *p);

/* The algorithm options with every "as the preset says" resolved. */
sp_algo_opts sp_plan_algo_opts(const sp_plan *p);

/* The algorithms --algo names ("all", one, or a comma list), at most max. */
int sp_plan_algorithms(const sp_plan *p, char names[][64], int max);

/* One of `count` algorithms' own plan, named `name`: with several, its
 * outputs go to DIR/NAME and its result to the --dump-result file with the
 * name before the extension (r.npy -> r.ring.npy); with one, the plan as
 * given.  0, or -1 where a path would not fit. */
int sp_plan_for_algorithm(const sp_plan *base, const char *name, int count, sp_plan *q);

/* k, the number of entries a top-k algorithm selects per rank. */
uint64_t sp_plan_k(const sp_plan *p);

/* The training iteration that simulated iteration `slot` stands for. */
int sp_plan_iter_index(const sp_plan *p, int slot);

/* The workload's profile for this plan (n from the plan).  0, or -1 with a
 * message. */
struct sp_profile_s;
int sp_plan_profile(const sp_plan *p, struct sp_profile_s *profile, char *err, size_t errlen);

/* The configuration echoed into summary.json; `profile` (an sp_profile, or
 * NULL with a gradient file) is the workload's, as the run resolved it. */
struct cJSON *sp_plan_echo(const sp_plan *p, const struct sp_profile_s *profile);

/* `sparsim run --help[=WHICH]`: WHICH "" the everyday options and one line
 * per group, "all" every option, a group's key that group, "markdown" the
 * reference (docs/options.md).  `mpi`: sparsim-mpi run's help, with its own
 * options.  0, or -1 when WHICH names nothing (a message in err). */
int sp_plan_print_help(const char *which, int mpi, FILE *f, char *err, size_t errlen);

#endif
