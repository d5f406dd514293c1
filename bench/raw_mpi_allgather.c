/* raw_mpi_allgather.c - the baseline for the shim overhead on MPI: the
 * messages of TopkA (Bruck's allgather of k 8-byte pairs per rank) sent with
 * plain MPI_Isend / MPI_Irecv / MPI_Waitall, nothing recorded, iterations
 * separated by MPI_Barrier as in sparsim-mpi.
 *
 *   mpirun -np P raw_mpi_allgather K ITERS   prints the mean time per iteration
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    long k = argc > 1 ? atol(argv[1]) : 10000;
    int iters = argc > 2 ? atoi(argv[2]) : 20;
    size_t block = (size_t)k * 8;
    char *buf = calloc((size_t)P, block);
    double total = 0;
    for (int it = 0; it < iters; it++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int held = 1; held < P;) {
            int cnt = held < P - held ? held : P - held;
            MPI_Request q[2];
            MPI_Irecv(buf + (size_t)held * block, (int)((size_t)cnt * block), MPI_BYTE, (r + held) % P, 200,
                      MPI_COMM_WORLD, &q[0]);
            MPI_Isend(buf, (int)((size_t)cnt * block), MPI_BYTE, (r - held + P) % P, 200, MPI_COMM_WORLD, &q[1]);
            MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
            held += cnt;
        }
        /* as sparsim reports it: the last rank's end minus the first rank's
         * start (one machine, one clock) */
        double t1 = MPI_Wtime(), first, last;
        MPI_Reduce(&t0, &first, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
        MPI_Reduce(&t1, &last, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        total += last - first;
    }
    if (r == 0)
        printf("time per iteration %.9f s\n", total / iters);
    free(buf);
    MPI_Finalize();
    return 0;
}
