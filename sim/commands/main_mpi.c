/* main_mpi.c - sparsim-mpi: the same algorithms on real MPI processes.
 *
 *   mpirun -np P sparsim-mpi run [the options of sparsim run, and its own:
 *                                 --watchdog S, --select cpu|cuda (plan.c)]
 *   mpirun -np 2 sparsim-mpi calibrate --out DIR [--hosts N]   (calibrate.c)
 *
 * Every process parses its own arguments; the ranks then agree on how each
 * stands, so bad input on any one rank is reported once, by rank 0, and every
 * rank ends (sim/shim/mpi.c says how the job ends on the other failures).
 * Several algorithms run one after the other in the same job, each into
 * DIR/NAME (and its --dump-result into FILE.NAME.npy).
 */
#include "cli.h"
#include "mpi_cmd.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the job's side of the MPI backend (sim/shim/mpi.c) */
void sp_mpi_job_init(int *argc, char ***argv);
int sp_mpi_job_start(double watchdog, int rc, const char *err, char *msg, size_t msglen);
int sp_mpi_agree(int rc, const char *err, const char *where, int patient, char *msg, size_t msglen);
void sp_mpi_run_begin(void);
int sp_mpi_run_stage(void);
int sp_mpi_job_end(int rc);

int sp_mpi_rank0(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r == 0;
}

int sp_mpi_say(int code, const char *fmt, const char *what)
{
    if (sp_mpi_rank0()) {
        fprintf(stderr, fmt, what);
        fflush(stderr);
    }
    return code;
}

static int cmd_run(int argc, char **argv)
{
    sp_plan p;
    sp_plan_defaults(&p);
    char err[600] = "", msg[700];
    int rc = sp_plan_parse_mpi(&p, argc, argv, err, sizeof err);
    int help = rc == 1;
    const char *which = help ? sp_opts_help_arg(argc, argv) : "";
    if (help && sp_plan_print_help(which, 1, NULL, err, sizeof err) != 0)
        rc = -1;
    if (rc == 0 && sp_plan_validate(&p, err, sizeof err) != 0)
        rc = -1;
    rc = sp_mpi_job_start(p.watchdog, rc < 0 ? 2 : 0, err, msg, sizeof msg);
    if (rc != 0)
        return sp_mpi_say(rc, "sparsim-mpi: %s\n", msg);
    if (help) {
        if (sp_mpi_rank0())
            sp_plan_print_help(which, 1, stdout, err, sizeof err);
        return 0;
    }
    char names[32][64];
    int count = sp_plan_algorithms(&p, names, 32);
    for (int i = 0; i < count; i++) {
        sp_plan q;
        sp_plan_for_algorithm(&p, names[i], count, &q); /* fits: sp_plan_validate checked */
        sp_report rep;
        sp_mpi_run_begin();
        sp_error e;
        rc = sp_run(&q, &rep, &e);
        snprintf(err, sizeof err, "%s", rc ? e.msg : "");
        /* a run that failed in the backend failed on every rank, for one
         * reason; otherwise the ranks tell each other how they stand: one
         * that could not start it (the others wait at its start), or rank 0
         * that could not write its outputs (the others wait for it here) */
        int stage = sp_mpi_run_stage();
        if (stage == 2)
            snprintf(msg, sizeof msg, "%s", err);
        else
            rc = sp_mpi_agree(rc, err, stage == 0 ? "the start of the run" : "the writing of the outputs by rank 0",
                              stage == 1, msg, sizeof msg);
        if (rc != 0) {
            sp_report_free(&rep);
            return sp_mpi_say(rc, "sparsim-mpi: %s\n", msg);
        }
        if (sp_mpi_rank0() && !q.quiet)
            sp_cli_print_summary(&q, &rep, "mpi");
        sp_report_free(&rep);
    }
    return 0;
}

/* a command line no command takes: every rank knows it at once */
static int refuse(const char *fmt, const char *what)
{
    char err[300], msg[400];
    snprintf(err, sizeof err, fmt, what);
    return sp_mpi_say(sp_mpi_job_start(0, 2, err, msg, sizeof msg), "sparsim-mpi: %s\n", msg);
}

int main(int argc, char **argv)
{
    sp_mpi_job_init(&argc, &argv);
    sp_run_keep_freed_memory();
    int rc;
    if (argc < 2)
        rc = refuse("usage: mpirun -np P sparsim-mpi run [options] | calibrate [options]%s", "");
    else if (!strcmp(argv[1], "run"))
        rc = cmd_run(argc - 2, argv + 2);
    else if (!strcmp(argv[1], "calibrate"))
        rc = sp_mpi_calibrate(argc - 2, argv + 2);
    else if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        char msg[8];
        rc = sp_mpi_job_start(0, 0, "", msg, sizeof msg);
        if (sp_mpi_rank0())
            printf("usage: mpirun -np P sparsim-mpi run [options]   (see: sparsim-mpi run --help)\n"
                   "       mpirun -np 2 sparsim-mpi calibrate [--out DIR]\n");
    } else
        rc = refuse("unknown command '%s'", argv[1]);
    return sp_mpi_job_end(rc);
}
