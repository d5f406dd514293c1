/* clock_alignment.c - one common time for the ranks of an MPI run.
 *
 * Each rank estimates its clock's offset to rank 0's with a few ping-pongs
 * (the one with the shortest round trip wins, as its midpoint is the most
 * certain), and rank 0 then fixes a common origin, so that the timelines of
 * all ranks line up in one trace.  Every wait is watched (watchdog.c).
 */
#include "mpi_internal.h"

struct spm_clock spm_clock;

/* offset to rank 0's clock: the ping-pong with the shortest round trip */
void spm_align_clocks(void)
{
    const int rounds = 8;
    spm_clock.offset = 0;
    const char *where = "clock alignment";
    MPI_Request rq;
    for (int r = 1; r < spm_run.size; r++) {
        if (spm_run.rank == 0) {
            for (int i = 0; i < rounds; i++) {
                double t;
                MPI_Irecv(&t, 1, MPI_DOUBLE, r, 7001, MPI_COMM_WORLD, &rq);
                spm_wait_for(&rq, where, -1, 0);
                t = MPI_Wtime();
                MPI_Isend(&t, 1, MPI_DOUBLE, r, 7002, MPI_COMM_WORLD, &rq);
                spm_wait_for(&rq, where, -1, 0);
            }
        } else if (spm_run.rank == r) {
            double best = 1e30;
            for (int i = 0; i < rounds; i++) {
                double t1 = MPI_Wtime(), t2;
                MPI_Isend(&t1, 1, MPI_DOUBLE, 0, 7001, MPI_COMM_WORLD, &rq);
                spm_wait_for(&rq, where, -1, 0);
                MPI_Irecv(&t2, 1, MPI_DOUBLE, 0, 7002, MPI_COMM_WORLD, &rq);
                spm_wait_for(&rq, where, -1, 0);
                double t3 = MPI_Wtime();
                if (t3 - t1 < best) {
                    best = t3 - t1;
                    spm_clock.offset = t2 - (t1 + t3) / 2;
                }
            }
        }
    }
    MPI_Ibarrier(MPI_COMM_WORLD, &rq);
    spm_wait_for(&rq, where, -1, 0);
    double origin = MPI_Wtime() + spm_clock.offset;
    MPI_Ibcast(&origin, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &rq);
    spm_wait_for(&rq, where, -1, 0);
    /* every rank reads its clock after rank 0 fixed the origin, so with exact
     * offsets each reads a time >= 0; an offset's error (up to half a round
     * trip: milliseconds on a loaded machine) can make one read less.  The
     * origin then moves back by the most negative reading, so that no time
     * of the run is negative (a messages.csv with one is refused) */
    double mine = MPI_Wtime() + spm_clock.offset - origin, least = 0;
    MPI_Iallreduce(&mine, &least, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD, &rq);
    spm_wait_for(&rq, where, -1, 0);
    spm_clock.origin = least < 0 ? origin + least : origin;
}
