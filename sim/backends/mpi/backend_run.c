/* backend_run.c - sp_backend_run on MPI: the steps of one run in order.
 *
 * Every rank agrees first that the run can start (the ranks that could not
 * meet it here through sp_mpi_agree in the command), the clocks are
 * aligned (clock_alignment.c), the shim's events go to the recording sink
 * while this process runs its rank (transport.c), and at the end either
 * the failure every rank knows is reported, or a failure only this rank
 * knows ends the job (watchdog.c), or the events are gathered and replayed
 * into the driver's sink on rank 0 (replay.c).
 */
#include "mpi_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct spm_run spm_run;

/* the run; its status (0, or the SP_STATUS_* of a failure) with err saying why */
static int run(sp_shim *sh, const sp_backend_config *cfg, char *err, size_t errlen)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &spm_run.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &spm_run.size);
    /* every rank that starts the run meets here the ranks that could not
     * (they come from sp_mpi_agree in the command): all learn why */
    char why[300] = "", msg[600];
    if (spm_run.size != cfg->ranks)
        snprintf(why, sizeof why, "--ranks is %d but the job has %d processes (mpirun -np)", cfg->ranks,
                 spm_run.size);
    int rc = sp_mpi_agree(why[0] ? 2 : 0, why, "the start of the run", 0, msg, sizeof msg);
    if (rc != 0) {
        snprintf(err, errlen, "%s", msg);
        spm_run.stage = 2;
        return rc;
    }
    spm_recorded_reset();
    spm_run.fail_agreed = 0;
    spm_align_clocks();
    /* every process records its events; rank 0 replays them into the driver's sink at the end */
    sp_sink driver_sink = sh->sink;
    sh->sink = spm_recording_sink();
    sh->want_times = 1;
    /* the routing facts of the network are unknown here */
    sh->rep->alpha = sh->rep->beta = 0;
    rc = 1;
    sp_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        sh->failed = 1;
        snprintf(sh->errmsg, sizeof sh->errmsg, "out of memory starting the run");
    } else {
        c->rank = spm_run.rank;
        c->size = spm_run.size;
        c->be = &spm_transport;
        c->shim = sh;
        sh->rank_main(c, sh->rank_arg);
    }
    if (sh->failed && !spm_run.fail_agreed) {
        /* the others may be waiting for this rank's messages: end the job */
        spm_name_failure(msg, sizeof msg, spm_run.rank, sh->errmsg);
        spm_fail_now(1, msg);
    }
    if (sh->failed) {
        snprintf(err, errlen, "%s", sh->errmsg); /* the same on every rank */
        rc = 1;
    } else {
        rc = spm_gather_and_replay(sh, &driver_sink, err, errlen);
    }
    spm_run.stage = rc ? 2 : 1;
    sh->sink = driver_sink;
    free(c);
    spm_transport_free();
    spm_recorded_free();
    return rc;
}

int sp_backend_run(sp_shim *sh, const sp_backend_config *cfg, sp_error *e)
{
    char err[sizeof e->msg] = "";
    int rc = run(sh, cfg, err, sizeof err);
    if (rc == 0)
        return 0;
    return sp_error_from(e, rc == SP_STATUS_USAGE ? SP_STATUS_USAGE : SP_STATUS_FAILED, err[0] ? err : sh->errmsg);
}
