/* progress.h - one line on a terminal while a long run goes.
 *
 * The command decides (stdout and stderr terminals, no --quiet) and hands a
 * descriptor of the terminal over before it starts the run's child; the
 * accounting reports each message and each finished iteration here.  The
 * line shows itself only once the run has gone on for a while, is redrawn
 * in place a few times a second, and is wiped before the summary.
 */
#ifndef SPARSIM_PROGRESS_H
#define SPARSIM_PROGRESS_H

#include <stdint.h>

/* Shows progress on `fd` (a terminal; -1 turns it off) for the runs this
 * process and its children start from now on. */
void sp_progress_enable(int fd);
/* A run of `iters` iterations (settling ones included) starts here. */
void sp_progress_start(int iters);
/* A message of iteration `iter` in phase `phase` arrived at simulated `t`. */
void sp_progress_message(int iter, const char *phase, double t);
/* Every rank has finished iteration `iter` (counted from 0). */
void sp_progress_iteration(int iter);
/* The run ends: the line, when shown, is wiped. */
void sp_progress_end(void);
/* This process will not show progress (a helper process of a run). */
void sp_progress_disable(void);

/* "1m05s"-style text of s seconds into buf (at least 16 bytes). */
const char *sp_progress_duration(char *buf, unsigned long n, double s);

#endif
