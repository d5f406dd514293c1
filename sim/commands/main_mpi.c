/* main_mpi.c - sparsim-mpi: the same algorithms on real MPI processes.
 *
 *   mpirun -np P sparsim-mpi run [the options of sparsim run, and --watchdog S]
 *   mpirun -np 2 sparsim-mpi calibrate --out DIR [--hosts N]   (calibrate.c)
 *
 * Every process parses the same arguments, so bad input is found by all of
 * them and reported once, by rank 0.  Several algorithms run one after the
 * other in the same job, each into DIR/NAME.
 */
#include "cli.h"
#include "mpi_cmd.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    char err[600] = "";
    int rc = sp_plan_parse(&p, argc, argv, err, sizeof err);
    if (rc == 1) {
        if (sp_mpi_rank0())
            sp_plan_print_help("sparsim-mpi", stdout);
        return 0;
    }
    if (rc != 0 || sp_plan_validate(&p, err, sizeof err) != 0)
        return sp_mpi_say(2, "sparsim-mpi: %s\n", err);
    char names[32][64];
    int count = sp_plan_algorithms(&p, names, 32);
    for (int i = 0; i < count; i++) {
        sp_plan q = p;
        snprintf(q.algo, sizeof q.algo, "%.63s", names[i]);
        if (count > 1)
            snprintf(q.out, sizeof q.out, "%.900s/%.63s", p.out, names[i]);
        sp_report rep;
        rc = sp_run(&q, &rep, err, sizeof err);
        if (rc != 0) {
            sp_report_free(&rep);
            return sp_mpi_say(rc, "sparsim-mpi: %s\n", err);
        }
        if (sp_mpi_rank0() && !q.quiet)
            sp_cli_print_summary(&q, &rep, "mpi");
        sp_report_free(&rep);
    }
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rc;
    if (argc < 2)
        rc = sp_mpi_say(2, "usage: mpirun -np P sparsim-mpi run [options] | calibrate [options]%s\n", "");
    else if (!strcmp(argv[1], "run"))
        rc = cmd_run(argc - 2, argv + 2);
    else if (!strcmp(argv[1], "calibrate"))
        rc = sp_mpi_calibrate(argc - 2, argv + 2);
    else if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        if (sp_mpi_rank0())
            printf("usage: mpirun -np P sparsim-mpi run [options]   (see: sparsim-mpi run --help)\n"
                   "       mpirun -np 2 sparsim-mpi calibrate [--out DIR]\n");
        rc = 0;
    } else
        rc = sp_mpi_say(2, "sparsim-mpi: unknown command '%s'\n", argv[1]);
    MPI_Finalize();
    return rc;
}
