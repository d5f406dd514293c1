/* mpi_internal.h - what the files of the MPI backend share.
 *
 * The backend is split by job: transport.c moves messages (MPI_Isend,
 * MPI_Irecv, watched waits, the synchronisation between iterations),
 * watchdog.c watches every wait and ends a failing job with one line,
 * job.c is the job's side that the commands call (its start, its
 * agreements, its end), clock_alignment.c lines up the ranks' clocks,
 * replay.c records each process's half-messages and replays whole ones
 * into the driver's sink on rank 0, and backend_run.c runs the steps in
 * order.  One process runs one rank; the globals below are that process's
 * (spm_job: the job and its watchdog; spm_run: this run; spm_clock: the
 * common time; spm_recorded: the events kept for the replay).
 */
#ifndef SPARSIM_MPI_INTERNAL_H
#define SPARSIM_MPI_INTERNAL_H

#include "sim/shim/backend.h"

#include <mpi.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

struct sp_req {
    MPI_Request mpi;
    int is_send, peer, tag;
    size_t cap;
    size_t rec; /* receives: its record in spm_recorded.recvs */
    struct sp_req *next_free;
};

/* half a message, as one side saw it */
typedef struct {
    int iter, phase, src, dst, tag;
    uint32_t seq; /* posting order on the rank that recorded it */
    uint64_t bytes;
    double t;
} half_event;

/* a growable array of fixed-size records */
typedef struct {
    void *e;
    size_t n, cap, size;
} rec_list;

/* ---- the job and its watchdog (watchdog.c) ---- */

#define TICKS 16          /* per watchdog period */
#define P2P_TICKS 12      /* a wait for messages gives up after 12 to 13 ticks */
#define COLL_TICKS 13     /* a collective one tick later */
#define PATIENT_TICKS 160 /* waiting for rank 0's writing: ten periods, unless a rank is seen stopped or gone */

enum { WAIT_P2P = 1, WAIT_COLL = 2 };

/* where a rank runs: exchanged at the start of the job */
typedef struct {
    int32_t pid;
    uint32_t nonce; /* rank 0's names the job */
    char host[56];
} rank_place;

extern struct spm_job {
    int rank, size;
    double period;           /* --watchdog */
    rank_place *roster;      /* every rank's place; NULL where unknown */
    char lock_name[64];
    int lock_fd;             /* >= 0: this process holds its host's lock */
    volatile sig_atomic_t quiet;   /* another rank tells: end without a word */
    volatile sig_atomic_t ending;  /* every rank agreed to end: one gone has not died */
    /* the wait under way, read by the handler */
    volatile sig_atomic_t waiting, kind, patient, pollable, expired, idle;
    volatile unsigned done;  /* bumped as waits start and end; wraps */
    const char *volatile where; /* a collective: what it is */
    const char *volatile phase; /* messages: the phase */
    volatile int iter;
    sp_req **volatile reqs;  /* messages: the requests waited for */
    volatile int nreqs;
    char line[640];          /* the line being told */
} spm_job;

/* a wait starts (of `kind`; where, iter and patient as spm_wait_for says;
 * pollable: its loop tells when the watchdog expires), and ends */
void spm_wait_begin(int kind, const char *where, int iter, int patient, int pollable);
void spm_wait_end(void);
/* waits for one request under the watchdog; `where` names it, at iteration
 * `iter` (-1: none); `patient`: the wait is for rank 0's writing */
void spm_wait_for(MPI_Request *rq, const char *where, int iter, int patient);
/* a polled wait found the watchdog expired: tell, and end the job */
void spm_expire(void);
/* this rank failed where the others would wait for it: tell, end the job */
void spm_fail_now(int rc, const char *why) __attribute__((noreturn));
void spm_start_timer(void);
void spm_stop_timer(void);
void spm_catch_signals(void);
void spm_block_signals(sigset_t *old);

/* ---- this run (backend_run.c) ---- */
extern struct spm_run {
    int rank, size;
    int fail_agreed; /* every rank knows of the failure (agreed at a synchronisation) */
    int stage;       /* of the last run: 0 not started here, 1 ended well, 2 failed, every rank knows */
} spm_run;

/* ---- the job's side that the commands call (job.c; they declare these
 * themselves, sim/commands/main_mpi.c and calibrate.c) ---- */
void sp_mpi_job_init(int *argc, char ***argv);
int sp_mpi_job_start(double watchdog, int rc, const char *err, char *msg, size_t msglen);
int sp_mpi_agree(int rc, const char *err, const char *where, int patient, char *msg, size_t msglen);
void sp_mpi_watch(const char *where);
void sp_mpi_progress(void);
void sp_mpi_run_begin(void);
int sp_mpi_run_stage(void);
int sp_mpi_job_end(int rc);
/* "rank R: why" unless why names rank R already */
void spm_name_failure(char *out, size_t len, int rank, const char *why);

/* ---- point to point (transport.c) ---- */
extern const sp_backend spm_transport;
double spm_now(const sp_ctx *c);
/* the buffers and requests kept for reuse */
void spm_transport_free(void);

/* ---- the common time (clock_alignment.c) ---- */
extern struct spm_clock {
    double offset, origin; /* local clock + offset - origin = common time */
} spm_clock;
void spm_align_clocks(void);

/* ---- the events kept for the replay (replay.c) ---- */
extern struct spm_recorded {
    rec_list sends, recvs, spans, stats;
    uint32_t seq; /* posting order of this rank's sends and receives */
    int oom;      /* a record could not be kept: the run fails at the end */
} spm_recorded;
/* appends a record; its place, or NULL (and oom set) */
void *spm_record(rec_list *l, const void *e);
void spm_recorded_reset(void);
void spm_recorded_free(void);
/* the sink a process's shim writes into during the run */
sp_sink spm_recording_sink(void);
/* the end of a run: every event to rank 0, replayed into driver_sink; 0, or
 * 1 with a message (the same on every rank) */
int spm_gather_and_replay(sp_shim *sh, const sp_sink *driver_sink, char *err, size_t errlen);

#endif
