/* cli.h - what the sparsim commands share (main.c and its rooms). */
#ifndef SPARSIM_CLI_H
#define SPARSIM_CLI_H

#include "sim/driver/plan.h"
#include "sim/driver/run.h"
#include "traces/csv.h"

#include <cjson/cJSON.h>

/* Runs the plan in this process and prints its summary unless quiet.
 * Returns the exit status: 0, 1 (failed run) or 2 (bad input). */
int sp_cli_run_one(const sp_plan *p);

/* The same in a child process (see child_run.c); the _rss form also gives
 * the child's peak resident memory in bytes (-1 if it could not be had; it
 * includes the few MiB the parent held when it forked). */
int sp_cli_run_in_child(const sp_plan *p);
/* The signals that end a command and that it passes on to its children
 * (child_run.c), and blocking (1) or unblocking (0) them all at once. */
#define SP_NSIG_END 4
extern const int sp_end_signals[SP_NSIG_END];
void sp_block_end_signals(int block);
int sp_cli_run_in_child_rss(const sp_plan *p, double *peak_rss_bytes);
/* When a signal passed to a run's child ends the command, fn(run, arg) is
 * called first, to remove what the command made (temporary folders). */
void sp_cli_on_interrupt(void (*fn)(const sp_plan *run, void *arg), void *arg);

/* Removes a run's outputs in dir: messages.csv, trace.json and summary.json,
 * each with `suffix` appended ("" for finished ones, ".part" for partial). */
void sp_cli_remove_outputs(const char *dir, const char *suffix);

/* One run in a child; on success *summary holds its summary.json (the
 * caller deletes it).  rss as for sp_cli_run_in_child_rss (may be NULL). */
int sp_cli_run_and_read(const sp_plan *p, cJSON **summary, double *rss);
/* The summary.json of a finished run (p->out), or NULL after printing its
 * line (the caller deletes it). */
cJSON *sp_cli_read_summary(const sp_plan *p);
/* Removes a run's outputs and its folder. */
void sp_cli_remove_run_dir(const char *dir);

/* A comma list split into at most `max` items of 128 bytes; -1 with a
 * message when it is empty or too long. */
#define SP_CLI_MAX_LIST 64
typedef struct {
    char items[SP_CLI_MAX_LIST][128];
    int count;
} sp_cli_list;
int sp_cli_split(const char *text, sp_cli_list *l, const char *name, char *err, size_t errlen);

/* Seconds on a monotonic clock. */
double sp_cli_now(void);

/* The human summary of one run, on stdout. */
void sp_cli_print_summary(const sp_plan *p, const sp_report *rep, const char *backend);

/* the commands */
int sp_cmd_run(int argc, char **argv);
int sp_cmd_sweep(int argc, char **argv);
int sp_cmd_crossover(int argc, char **argv);
int sp_cmd_analyze(int argc, char **argv);
int sp_cmd_compare(int argc, char **argv);
int sp_cmd_merge(int argc, char **argv);
int sp_cmd_workload_stats(int argc, char **argv);
int sp_cmd_profile(int argc, char **argv);

#endif
