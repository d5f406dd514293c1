/* analyze.h - reading runs back: held against the closed forms (analyze)
 * and against each other (compare).  Both read files only; they run nothing. */
#ifndef SPARSIM_ANALYZE_H
#define SPARSIM_ANALYZE_H

#include <stddef.h>

/* Prints the table of `path` (a run folder or a sweep CSV) to stdout.
 * 0, or 2 with a message for input that is not there or not a run. */
int sp_analyze(const char *path, char *err, size_t errlen);
/* The same in another format: a table with one row per run for a paper or a
 * data frame (columns, their units and empty figures: analyze.c, table_cols). */
enum { SP_ANALYZE_TEXT, SP_ANALYZE_CSV, SP_ANALYZE_JSON, SP_ANALYZE_MARKDOWN };
int sp_analyze_as(const char *path, int format, char *err, size_t errlen);

/* Prints whether two run folders carry the same messages, and their times.
 * 0 the message lists match, 1 they differ, 2 with a message for bad input. */
int sp_compare(const char *run_a, const char *run_b, char *err, size_t errlen);

#endif
