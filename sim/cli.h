/* cli.h - helpers shared by the sparsim commands (main.c, sweep.c). */
#ifndef SPARSIM_CLI_H
#define SPARSIM_CLI_H

#include "plan.h"
#include "run.h"

#include <cjson/cJSON.h>

/* Runs the plan in this process and prints its summary unless quiet.
 * Returns the exit status: 0, 1 (failed run) or 2 (bad input). */
int sp_cli_run_one(const sp_plan *p);

/* The same in a child process (see child_run.c); the _rss form also gives
 * the child's peak resident memory in bytes (-1 if it could not be had; it
 * includes the few MiB the parent held when it forked). */
int sp_cli_run_in_child(const sp_plan *p);
int sp_cli_run_in_child_rss(const sp_plan *p, double *peak_rss_bytes);
/* When a signal passed to a run's child ends the command, fn(run, arg) is
 * called first, to remove what the command made (temporary folders). */
void sp_cli_on_interrupt(void (*fn)(const sp_plan *run, void *arg), void *arg);

/* A JSON file, or NULL. */
cJSON *sp_json_read(const char *path);
/* o[a][b] (b may be NULL) as a number (-1 if absent) or a string ("-"). */
double sp_json_num(cJSON *o, const char *a, const char *b);
const char *sp_json_str(cJSON *o, const char *a, const char *b);

int sp_mkdirs(const char *path, char *err, size_t errlen);

/* Removes a run's outputs in dir: messages.csv, trace.json and summary.json,
 * each with `suffix` appended ("" for finished ones, ".part" for partial). */
void sp_cli_remove_outputs(const char *dir, const char *suffix);

/* the commands (sweep.c) */
int sp_cmd_sweep(int argc, char **argv);
int sp_cmd_crossover(int argc, char **argv);

#endif
