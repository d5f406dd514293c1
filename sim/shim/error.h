/* error.h - one error type from the shim up to main: the exit status a
 * failure asks for and the one line that says why.
 *
 * Whoever finds the failure decides its status, so no caller sets an exit
 * code ahead of a jump: bad input (a flag, a file, a plan that cannot run)
 * is SP_STATUS_USAGE, a run that started and failed is SP_STATUS_FAILED.
 * Functions that fail return -1 (or NULL) and fill the sp_error; main prints
 * e.msg and exits with e.status.
 */
#ifndef SPARSIM_ERROR_H
#define SPARSIM_ERROR_H

#include <stdarg.h>
#include <stdio.h>

enum { SP_STATUS_OK = 0, SP_STATUS_FAILED = 1, SP_STATUS_USAGE = 2 };

typedef struct {
    int status;    /* SP_STATUS_*: the exit status this failure asks for */
    char msg[600]; /* one line, no trailing newline */
} sp_error;

/* Fills e with the status and a printf-style message; returns -1. */
__attribute__((format(printf, 3, 4))) static inline int sp_error_set(sp_error *e, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->status = status;
    return -1;
}

/* The same with a message some callee wrote into a buffer of its own. */
static inline int sp_error_from(sp_error *e, int status, const char *msg)
{
    return sp_error_set(e, status, "%s", msg);
}

#endif
