/* plan.h - one validated description of a run.
 *
 * Flags and JSON config files are parsed into an sp_plan exactly once; every
 * later stage trusts it.  Validation happens here, so that bad input is
 * caught before any rank starts and reported as one clear line.
 */
#ifndef SPARSIM_PLAN_H
#define SPARSIM_PLAN_H

#include "../algorithms/algorithm.h"
#include <stddef.h>
#include <stdint.h>

typedef enum { SP_PAYLOAD_AUTO = 0, SP_PAYLOAD_EXACT, SP_PAYLOAD_SIZE } sp_payload_mode;

typedef struct {
    char algo[64];          /* registry name, or "all" */
    int ranks;              /* P */
    char platform[1024];    /* "1gbe", "daint", or a SimGrid platform XML file */
    char network[16];       /* cm02 | lv08 | smpi */
    char device[1024];      /* device profile name, or a JSON file */
    uint64_t n;             /* gradient length (floats) */
    double density;         /* k / n */
    int iters;              /* iterations */
    uint64_t seed;
    char out[1024];         /* output folder */
    char grad_file[1024];   /* optional .npy (float32, (P,n) or (I,P,n)) */
    char dump_result[1024]; /* optional .npy written with the last global result */
    sp_payload_mode payload;
    int write_csv;          /* messages.csv */
    int write_trace;        /* trace.json */
    uint64_t trace_msgs;    /* cap on message events in trace.json */
    int quiet;              /* no human summary on stdout */
    int warmup;             /* first iterations run as dense ring allreduce */
    sp_algo_opts opts;
    /* synthetic gradient generator (sim/workload.c says what each controls) */
    int grad_layers;
    double grad_spread, grad_shared, grad_persistence;
    /* set by sp_plan_parse when the user gave them explicitly */
    int n_given, iters_given, ranks_given, density_given, warmup_given, preset_given;
} sp_plan;

void sp_plan_defaults(sp_plan *p);

/* Parses `sparsim run` arguments (argv[0] is the first option).  A --config
 * file is read first and flags override it.  Returns 0, 1 when --help was
 * printed, or -1 with a one-line message in err. */
int sp_plan_parse(sp_plan *p, int argc, char **argv, char *err, size_t errlen);

/* Applies a JSON config text (keys as the long flag names). */
int sp_plan_apply_json(sp_plan *p, const char *text, const char *origin, char *err, size_t errlen);

/* Cross-field checks (algorithm exists, k >= 1, files readable, ...). */
int sp_plan_validate(sp_plan *p, char *err, size_t errlen);

/* The algorithms --algo names ("all", one, or a comma list), at most max. */
int sp_plan_algorithms(const sp_plan *p, char names[][64], int max);

/* k, the number of entries a top-k algorithm selects per rank. */
uint64_t sp_plan_k(const sp_plan *p);

void sp_plan_print_help(const char *prog);

#endif
