/* job.c - the MPI job's side that the commands call (sparsim-mpi's main
 * and calibrate): MPI_Init under the watchdog, the start of the job (every
 * rank's place, the first agreement), the agreements at each point where
 * every rank can learn how the others stand, the watch over a command's own
 * blocking calls, and the end of the job.  The commands declare these
 * calls themselves (sim/commands/main_mpi.c, calibrate.c); the watchdog
 * behind them is watchdog.c.
 */
#include "mpi_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the message of a failure every rank must know: "rank R: why" unless why
 * names rank R already */
void spm_name_failure(char *out, size_t len, int rank, const char *why)
{
    char name[32];
    snprintf(name, sizeof name, "rank %d", rank);
    const char *at = strstr(why, name);
    if (at && (at[strlen(name)] < '0' || at[strlen(name)] > '9'))
        snprintf(out, len, "%s", why);
    else
        snprintf(out, len, "%s: %s", name, why);
}

/* Every rank says how it stands: rc 0, 1 (a failure) or 2 (bad input), err
 * why.  All learn the lowest failing rank's code and reason (msg: naming
 * that rank, unless every rank failed for the same reason); rank 0 prints
 * it.  `where` names the point for the watchdog; `patient`: the others may
 * wait there for rank 0's writing. */
int sp_mpi_agree(int rc, const char *err, const char *where, int patient, char *msg, size_t msglen)
{
    int me = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint32_t h = 2166136261u;
    for (const char *s = err; rc && s && *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    /* one maximum: the first failing rank, whether all failed, and the range of their reasons */
    long long mine[4] = {rc ? size - me : 0, rc ? 0 : 1, rc ? (long long)h : -1, rc ? -(long long)h : -(1ll << 40)};
    long long all[4];
    MPI_Request rq;
    MPI_Iallreduce(mine, all, 4, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD, &rq);
    spm_wait_for(&rq, where, -1, patient);
    msg[0] = '\0';
    if (!all[0])
        return 0;
    int first = size - (int)all[0];
    struct {
        int rc;
        char why[500];
    } b;
    memset(&b, 0, sizeof b);
    if (me == first) {
        b.rc = rc;
        snprintf(b.why, sizeof b.why, "%s", err ? err : "");
    }
    MPI_Ibcast(&b, (int)sizeof b, MPI_BYTE, first, MPI_COMM_WORLD, &rq);
    spm_wait_for(&rq, where, -1, patient);
    b.why[sizeof b.why - 1] = '\0';
    /* a reason every rank gave (bad options) needs no rank */
    if ((all[1] == 0 && all[2] == -all[3]) || size == 1)
        snprintf(msg, msglen, "%s", b.why);
    else
        spm_name_failure(msg, msglen, first, b.why);
    return b.rc ? b.rc : 1;
}

/* MPI_Init under the watchdog (a rank that never comes would hold the
 * others in it): its period from --watchdog on the command line (60 s
 * without), the rank and the job's name from the launcher's environment. */
void sp_mpi_job_init(int *argc, char ***argv)
{
#ifndef SPARSIM_SMPI /* under smpirun every rank shares one process, its signals and its timer */
    spm_job.period = 60;
    for (int i = 1; i + 1 < *argc; i++)
        if (!strcmp((*argv)[i], "--watchdog")) {
            double w = strtod((*argv)[i + 1], NULL);
            if (w > 0 && w <= 1e9)
                spm_job.period = w;
        }
    const char *r = getenv("PMIX_RANK"), *ns = getenv("PMIX_NAMESPACE");
    if (!r)
        r = getenv("OMPI_COMM_WORLD_RANK");
    spm_job.rank = r ? atoi(r) : 0;
    if (ns)
        snprintf(spm_job.lock_name, sizeof spm_job.lock_name, "sparsim-mpi.%.40s", ns);
    spm_catch_signals();
    spm_start_timer();
    spm_wait_begin(WAIT_COLL, "the start of MPI (MPI_Init)", -1, 0, 0);
#endif
    MPI_Init(argc, argv);
#ifndef SPARSIM_SMPI
    spm_wait_end();
#endif
}

/* The start of the job: every rank's place (pid, host) to every rank, the
 * watchdog on its period (`watchdog`; <= 0: as it is), and the first
 * agreement (rc, err: this rank's options).  The rest as sp_mpi_agree. */
int sp_mpi_job_start(double watchdog, int rc, const char *err, char *msg, size_t msglen)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &spm_job.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &spm_job.size);
    if (watchdog > 0 || spm_job.period <= 0)
        spm_job.period = watchdog > 0 ? watchdog : 60;
#ifndef SPARSIM_SMPI
    spm_start_timer();
    rank_place me;
    memset(&me, 0, sizeof me);
    me.pid = (int32_t)getpid();
    me.nonce = (uint32_t)(MPI_Wtime() * 1e6) ^ ((uint32_t)getpid() << 16);
    gethostname(me.host, sizeof me.host - 1);
    spm_job.roster = calloc((size_t)spm_job.size, sizeof *spm_job.roster);
    if (!spm_job.roster)
        spm_fail_now(1, "out of memory at the start of the job");
    MPI_Request rq;
    MPI_Iallgather(&me, (int)sizeof me, MPI_BYTE, spm_job.roster, (int)sizeof me, MPI_BYTE, MPI_COMM_WORLD, &rq);
    spm_wait_for(&rq, "the start of the job", -1, 0);
    /* one lock per host and job: the launcher's name of the job, or rank 0's pid and nonce */
    if (!spm_job.lock_name[0])
        snprintf(spm_job.lock_name, sizeof spm_job.lock_name, "sparsim-mpi.%ld.%lu", (long)spm_job.roster[0].pid,
                 (unsigned long)spm_job.roster[0].nonce);
#endif
    return sp_mpi_agree(rc, err, "the start of the job", 0, msg, msglen);
}

/* Blocking MPI calls of a command follow (`where` names them), under the
 * watchdog; NULL: they are over.  sp_mpi_progress: one step of them is done. */
void sp_mpi_watch(const char *where)
{
    if (where)
        spm_wait_begin(WAIT_COLL, where, -1, 0, 0);
    else
        spm_wait_end();
}

void sp_mpi_progress(void) { spm_job.done++; }

/* Before each run: sp_mpi_run_stage then says how it went on this rank: 0
 * it did not start here, 1 it ended well, 2 it failed and every rank knows. */
void sp_mpi_run_begin(void) { spm_run.stage = 0; }
int sp_mpi_run_stage(void) { return spm_run.stage; }

/* The end of the job: MPI_Finalize (watched), then the watchdog stops.
 * Returns rc. */
int sp_mpi_job_end(int rc)
{
    /* a rank that has gone from here on ended as agreed (mpirun ends the
     * others when one ends with a failure's code) */
    spm_job.ending = 1;
    sp_mpi_watch("the end of the job");
    MPI_Finalize();
    sp_mpi_watch(NULL);
#ifndef SPARSIM_SMPI
    spm_stop_timer();
    sigset_t old;
    spm_block_signals(&old);
    if (spm_job.lock_fd >= 0)
        close(spm_job.lock_fd);
    spm_job.lock_fd = -1;
    free(spm_job.roster);
    spm_job.roster = NULL;
    sigprocmask(SIG_SETMASK, &old, NULL);
#endif
    return rc;
}
