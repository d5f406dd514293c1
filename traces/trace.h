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

#include "report.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A message's end that is a node's switch rather than a rank (the NVSwitch
 * where it reduces and multicasts: NVLink SHARP, sp_switch_push): -1 - the
 * node, so that ranks stay >= 0.  Its node and local rank, as the outputs'
 * node columns write them, are that node and -1. */
#define SP_SWITCH_END(node) (-1 - (node))
static inline int sp_end_node(int end, int gpn) { return end >= 0 ? end / gpn : -1 - end; }
static inline int sp_end_local(int end, int gpn) { return end >= 0 ? end % gpn : -1; }

typedef struct {
    int iter;
    int phase; /* index into the writer's phase-name table */
    int src, dst, tag;
    uint64_t bytes;
    double t_post; /* seconds: when the sender posted the message */
    double t_done; /* seconds: when the message was delivered to the receiver */
} sp_msg_event;

/* A rank's stay in one phase of one iteration, [t0, t1] (may be empty). */
typedef struct {
    int iter, phase, rank;
    double t0, t1;
} sp_span_event;

/* A figure a rank recorded in an iteration (a selected count, a threshold):
 * `stat` indexes the report's statistic names; a later one of the same
 * (iter, rank, stat) replaces an earlier one. */
typedef struct {
    int iter, rank, stat;
    double value;
} sp_stat_event;

/* A slice of a rank's timeline that a disturbance made (a detour, a
 * straggler's compute), or a flow of background traffic (rank -1). */
typedef struct {
    int rank;         /* a rank, or -1: background traffic */
    const char *name; /* a literal */
    double t0, t1;
    int iter;
    double factor;    /* a straggler's slowdown (0: none) */
    int src, dst;     /* a background flow's hosts */
    double bytes;
} sp_slice_event;

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
/* Installs handlers for SIGINT, SIGTERM, SIGHUP and SIGQUIT (those not
 * ignored) that remove the open temporaries and then end the process as the
 * signal would have, and the same removal at exit(). */
void sp_part_cleanup_on_signals(void);

/* A process that writes several outputs holds them: each stays NAME.part
 * when closed, until sp_part_publish renames them all (0, or -1 with a
 * message), or sp_part_discard removes them. */
void sp_part_hold(void);
int sp_part_publish(char *err, size_t errlen);
void sp_part_discard(void);
/* A file (not a .part) that a signal's cleanup removes too, until untracked: list
 * it before creating it.  0, or -1 when no more can be listed (four at once). */
int sp_part_track(const char *path);
void sp_part_untrack(const char *path);

/* ---- messages.csv ------------------------------------------------------ */
typedef struct sp_csv_writer sp_csv_writer;

#define SP_CSV_HEADER "iter,phase,src,dst,tag,bytes,t_post,t_done"
/* where ranks are GPUs on nodes of G > 1: each end's node and local rank
 * follow (src_node = src / G, src_local = src mod G) */
#define SP_CSV_NODE_COLUMNS ",src_node,src_local,dst_node,dst_local"

/* Opens `path`.part for writing (with the node columns when gpus_per_node
 * > 1); returns NULL with a message in err. */
sp_csv_writer *sp_csv_open(const char *path, const char *const *phase_names, int gpus_per_node, char *err,
                           size_t errlen);
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
/* `gpus_per_node` > 1: each node is a process of its own ("node N"), its
 * ranks its threads ("rank R (GPU J)"); else every rank is a thread of one. */
sp_chrome_writer *sp_chrome_open(const char *path, int nranks, int gpus_per_node, const char *const *phase_names,
                                 uint64_t max_msgs, char *err, size_t errlen);
void sp_chrome_span(sp_chrome_writer *w, const sp_span_event *e);
void sp_chrome_msg(sp_chrome_writer *w, const sp_msg_event *e);
/* a disturbance's slice: on its rank's track (nested in the rank's phase
 * spans), or a background flow on a track of its own */
void sp_chrome_slice(sp_chrome_writer *w, const sp_slice_event *e);
int sp_chrome_close(sp_chrome_writer *w, int ok, uint64_t *dropped, char *err, size_t errlen);

/* ---- summary.json (keys in summary_keys.h) ------------------------------- */
struct cJSON;

/* Writes summary.json for a finished run: `config` (the options echoed, an
 * object this call takes over) and the report's figures.  0, or -1 with a
 * message. */
int sp_summary_write(const char *path, const char *version, const char *backend, struct cJSON *config,
                     const sp_report *rep, char *err, size_t errlen);

/* ---- reading outputs back ------------------------------------------------ */

/* The whole of a file as NUL-terminated text of *len bytes (NUL bytes inside
 * are the caller's to refuse), or NULL with one line in err: "cannot read
 * PATH: why", "PATH is larger than N bytes" or "out of memory reading PATH".
 * The caller frees. */
char *sp_read_file(const char *path, size_t max_bytes, size_t *len, char *err, size_t errlen);
/* Writes doc to path as every output is written (under a .part name, renamed
 * when whole); 0, or -1 with a message. */
int sp_json_write(const char *path, const struct cJSON *doc, char *err, size_t errlen);
/* A JSON output file (summary.json, a device profile) parsed, or NULL. */
struct cJSON *sp_json_file(const char *path);
/* A JSON file: the parsed object, or NULL with a one-line message (missing,
 * unreadable, larger than max_bytes, not JSON, or something after the value). */
struct cJSON *sp_json_file_checked(const char *path, size_t max_bytes, char *err, size_t errlen);
/* o[a][b] (b may be NULL) as a number (-1 if absent) or a string ("-"). */
double sp_json_num(const struct cJSON *o, const char *a, const char *b);
const char *sp_json_str(const struct cJSON *o, const char *a, const char *b);

typedef struct {
    sp_msg_event *ev;
    char **phase_names; /* phase strings, indexed by ev[i].phase */
    int nphases;
    size_t n;
} sp_msg_list;

int sp_csv_read(const char *path, sp_msg_list *out, char *err, size_t errlen);
void sp_msg_list_free(sp_msg_list *l);

#endif
