/* mpi_cmd.h - what the commands of sparsim-mpi share. */
#ifndef SPARSIM_MPI_CMD_H
#define SPARSIM_MPI_CMD_H

/* 1 on rank 0 */
int sp_mpi_rank0(void);
/* rank 0 prints fmt (with one %s for what) on stderr; returns code */
int sp_mpi_say(int code, const char *fmt, const char *what);
/* sparsim-mpi calibrate */
int sp_mpi_calibrate(int argc, char **argv);

#endif
