/* trace.h - the trace event model and its writers.
 *
 * One message is one event (sp_msg_event).  Phase spans (one per rank, phase
 * and iteration) feed the timeline.  Writers stream events straight to files
 * so that memory does not grow with the number of messages, and they write
 * under a temporary name that is renamed into place only when the run
 * succeeds: a half-written file is never presented as complete.
 *
 * Nothing here knows about algorithms; phases are plain names.
 */
#ifndef SPARSIM_TRACE_H
#define SPARSIM_TRACE_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

typedef struct {
    int iter;
    int phase; /* index into the writer's phase-name table */
    int src, dst, tag;
    uint64_t bytes;
    double t_post; /* seconds: when the sender posted the message */
    double t_done; /* seconds: when the message was delivered to the receiver */
} sp_msg_event;

typedef struct {
    int iter, phase, rank;
    double t0, t1;
} sp_span_event;

/* An output file written under a temporary name (path + ".part") and renamed
 * into place only when the run succeeded. */
typedef struct {
    FILE *f;
    char *path, *part;
} sp_part_file;

/* Opens path.part for writing; -1 with a message on failure. */
int sp_part_open(sp_part_file *pf, const char *path, char *err, size_t errlen);
/* Closes; renames into place if ok and nothing failed, else removes the
 * temporary.  Returns 0, or -1 with a message. */
int sp_part_close(sp_part_file *pf, int ok, char *err, size_t errlen);
/* Removes every temporary still open; async-signal-safe, for the handlers
 * of signals that end a run (interrupt, termination, the MPI watchdog). */
void sp_part_remove_all(void);
/* Installs handlers for SIGINT, SIGTERM and SIGHUP (those not ignored) that
 * remove the open temporaries and then end the process as the signal would
 * have, and the same removal at exit(). */
void sp_part_cleanup_on_signals(void);
/* While `child` (> 0) runs, those handlers pass the signal on to it instead;
 * 0 stops that.  sp_part_forwarded_signal() is the signal passed on, or 0. */
void sp_part_forward_signals_to(pid_t child);
int sp_part_forwarded_signal(void);
/* Holds back (1) or lets through (0) those signals, so that setting or
 * clearing the child to forward to is not raced by them. */
void sp_part_block_signals(int block);

/* ---- messages.csv ------------------------------------------------------ */
typedef struct sp_csv_writer sp_csv_writer;

#define SP_CSV_HEADER "iter,phase,src,dst,tag,bytes,t_post,t_done"

/* Opens `path`.part for writing; returns NULL with a message in err. */
sp_csv_writer *sp_csv_open(const char *path, const char *const *phase_names, char *err, size_t errlen);
void sp_csv_write(sp_csv_writer *w, const sp_msg_event *e);
/* Flushes, closes and (if ok) renames into place; frees w.  Returns 0 on success. */
int sp_csv_close(sp_csv_writer *w, int ok, char *err, size_t errlen);

/* Formats `t` seconds with nanosecond resolution ("12.000100250") into buf
 * (at least 32 bytes); returns the length.  Shared by the writers. */
int sp_format_seconds(char *buf, double t);

/* ---- trace.json (Chrome trace event format, opens in Perfetto) ---------- */
typedef struct sp_chrome_writer sp_chrome_writer;

/* `max_msgs`: message events beyond this count are dropped (phase spans are
 * always kept); the count of dropped ones is reported by sp_chrome_close. */
sp_chrome_writer *sp_chrome_open(const char *path, int nranks, const char *const *phase_names,
                                 uint64_t max_msgs, char *err, size_t errlen);
void sp_chrome_span(sp_chrome_writer *w, const sp_span_event *e);
void sp_chrome_msg(sp_chrome_writer *w, const sp_msg_event *e);
int sp_chrome_close(sp_chrome_writer *w, int ok, uint64_t *dropped, char *err, size_t errlen);

/* ---- reading outputs back ------------------------------------------------ */

/* A JSON output file (summary.json, a device profile) parsed, or NULL. */
struct cJSON;
struct cJSON *sp_json_file(const char *path);

typedef struct {
    sp_msg_event *ev;
    char **phase_names; /* phase strings, indexed by ev[i].phase */
    int nphases;
    size_t n;
} sp_msg_list;

int sp_csv_read(const char *path, sp_msg_list *out, char *err, size_t errlen);
void sp_msg_list_free(sp_msg_list *l);

#endif
