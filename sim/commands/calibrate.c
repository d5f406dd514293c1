/* calibrate.c - `sparsim-mpi calibrate`: this machine's network and kernels,
 * measured, as a SimGrid platform and a device profile the simulator reads.
 *
 * Point-to-point latency and bandwidth between ranks 0 and 1 (one way, and
 * both ways at once), and the local kernels timed while every rank runs them
 * at once, as ranks of an allreduce do.  topologies/ writes the files.
 *
 * As in `run`, the ranks agree on how each stands at every point where one
 * could fail alone, and every wait is watched (--watchdog): the job ends
 * with one line, never hangs.
 */
#include "cli.h"
#include "mpi_cmd.h"
#include "../../algorithms/select.h"
#include "../../topologies/device.h"
#include "../../topologies/platform.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the job's side of the MPI backend (sim/shim/mpi.c) */
int sp_mpi_job_start(double watchdog, int rc, const char *err, char *msg, size_t msglen);
int sp_mpi_agree(int rc, const char *err, const char *where, int patient, char *msg, size_t msglen);
void sp_mpi_watch(const char *where);
void sp_mpi_progress(void);

typedef struct {
    char out[1024];
    int hosts;
    double watchdog;
    unsigned char given[4];
} calibrate_opts;

#define C(field) offsetof(calibrate_opts, field), sizeof(((calibrate_opts *)0)->field)

static const sp_opt calibrate_rows[] = {
    {"out", SP_OT_STRING, C(out), 0, 0, "calibration", NULL, 0, "DIR", NULL, "where the files go", NULL, NULL},
    {"hosts", SP_OT_INT, C(hosts), 2, SP_MAX_RANKS, "64", NULL, 0, "N", NULL, "hosts of the platform written", NULL,
     NULL},
    {"watchdog", SP_OT_DOUBLE, C(watchdog), 0, 1e9, "60", NULL, SP_OPT_OPEN_MIN, "S", "a positive number of seconds",
     "end the job when a wait makes no progress for S seconds", NULL, NULL},
};

/* a blocking barrier under the watchdog */
static void barrier(const char *where)
{
    sp_mpi_watch(where);
    MPI_Barrier(MPI_COMM_WORLD);
    sp_mpi_watch(NULL);
}


static double pingpong(int peer, int me, size_t bytes, int reps, char *buf)
{
    double best = 1e30;
    sp_mpi_watch("the ping-pong of calibration");
    for (int i = 0; i < reps; i++, sp_mpi_progress()) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t = MPI_Wtime();
        if (me == 0) {
            MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (me == peer) {
            MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
        t = (MPI_Wtime() - t) / 2;
        if (t < best)
            best = t;
    }
    MPI_Bcast(&best, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    sp_mpi_watch(NULL);
    return best;
}

/* both ranks send `bytes` to each other at once: the time of one exchange
 * (shared memory or a NIC may not carry both directions at full speed) */
static double exchange(int peer, int me, size_t bytes, int reps, char *sbuf, char *rbuf)
{
    double best = 1e30;
    sp_mpi_watch("the exchange of calibration");
    for (int i = 0; i < reps; i++, sp_mpi_progress()) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t = MPI_Wtime();
        if (me == 0 || me == peer)
            MPI_Sendrecv(sbuf, (int)bytes, MPI_BYTE, me == 0 ? peer : 0, 2, rbuf, (int)bytes, MPI_BYTE,
                         me == 0 ? peer : 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        t = MPI_Wtime() - t;
        double worst = 0;
        MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (worst < best)
            best = worst;
    }
    sp_mpi_watch(NULL);
    return best;
}

static double now(void) { return MPI_Wtime(); }

/* closes a file written (f may be NULL); 1 with a message in err (unless
 * err is NULL) if it was not written whole */
static int closed_badly(FILE *f, int bad, const char *path, char *err, size_t errlen)
{
    if (f && fclose(f) != 0)
        bad = 1;
    if (bad && err)
        snprintf(err, errlen, "cannot write %.500s", path);
    return bad;
}

#define KERNELS "the kernels of calibration"

int sp_mpi_calibrate(int argc, char **argv)
{
    const sp_opt_table table = SP_OPT_TABLE(calibrate_rows);
    calibrate_opts o;
    memset(&o, 0, sizeof o);
    sp_opts_defaults(&table, &o);
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            if (sp_mpi_rank0()) {
                printf("usage: mpirun -np 2 sparsim-mpi calibrate [options]\n"
                       "Measures point-to-point latency and bandwidth between ranks 0 and 1 over\n"
                       "message sizes from 1 B to 16 MiB (one way, and both ways at once), and the\n"
                       "speed of the local kernels while every rank runs them at once (the slowest\n"
                       "rank's time: ranks of an allreduce compete for memory bandwidth),\n"
                       "then writes DIR/platform.xml (a SimGrid cluster whose routes have the\n"
                       "measured latency and bandwidth), DIR/device.json (a device profile for\n"
                       "--device) and DIR/calibration.txt (the measurements).\n\n");
                sp_opts_help(&table, stdout);
            }
            return 0;
        }
    char err[600] = "", msg[700];
    int rc = 0;
    if (sp_opts_parse_argv(&table, &o, o.given, argc, argv, NULL, NULL, err, sizeof err) != 0) {
        char e2[sizeof err];
        snprintf(e2, sizeof e2, "%s", err);
        snprintf(err, sizeof err, "calibrate: %.580s", e2);
        rc = 2;
    }
    if ((rc = sp_mpi_job_start(o.watchdog, rc, err, msg, sizeof msg)) != 0)
        return sp_mpi_say(rc, "sparsim-mpi: %s\n", msg);
    const char *out = o.out;
    int hosts = o.hosts;
    int me, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2)
        return sp_mpi_say(2, "sparsim-mpi: calibrate needs at least 2 processes (mpirun -np 2)%s\n", "");
    rc = me == 0 && sp_mkdirs(out, err, sizeof err) != 0 ? 2 : 0;
    if ((rc = sp_mpi_agree(rc, err, "the start of the calibration", 0, msg, sizeof msg)) != 0)
        return sp_mpi_say(rc, "sparsim-mpi: %s\n", msg);
    size_t maxb = 16u << 20;
    char *buf = calloc(1, maxb), *buf2 = calloc(1, maxb);
    rc = buf && buf2 ? 0 : 1;
    if ((rc = sp_mpi_agree(rc, "calibrate: out of memory", "the start of the calibration", 0, msg, sizeof msg))) {
        free(buf);
        free(buf2);
        return sp_mpi_say(rc, "sparsim-mpi: %s\n", msg);
    }
    double sizes[13], times[13], xtimes[13];
    int ns = 0;
    for (size_t b = 1; b <= maxb; b *= 4) {
        sizes[ns] = (double)b;
        times[ns] = pingpong(1, me, b, b < (1u << 20) ? 50 : 10, buf);
        xtimes[ns] = exchange(1, me, b, b < (1u << 20) ? 50 : 10, buf, buf2);
        ns++;
    }
    free(buf);
    free(buf2);
    /* alpha: the smallest message; bandwidth: the slope over the largest ones */
    double alpha = times[0];
    double bw = (sizes[ns - 1] - sizes[ns - 3]) / (times[ns - 1] - times[ns - 3]);
    /* per direction while both directions are busy; a host's limiter link
     * (SimGrid's cluster limiter_link, shared by its traffic in and out)
     * of twice that reproduces it (one-way traffic then gets the smaller of
     * the link and the limiter).  Noise can make a slope meaningless: then
     * the one-way figure stands for both. */
    if (!(bw > 0) || !isfinite(bw))
        bw = sizes[ns - 1] / times[ns - 1];
    double xbw = (sizes[ns - 1] - sizes[ns - 3]) / (xtimes[ns - 1] - xtimes[ns - 3]);
    if (!(xbw > 0) || !isfinite(xbw))
        xbw = bw;
    double limiter = 2.0 * (xbw < bw ? xbw : bw);
    /* kernels: every rank runs each one at the same time, as ranks do in an
     * allreduce, so the profile includes their contention for memory
     * bandwidth; the slowest rank's time counts */
    uint64_t n = 1u << 24, m = 1u << 20;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    sp_pair *pairs = malloc(m * sizeof *pairs);
    rc = x && y && pairs ? 0 : 1;
    if ((rc = sp_mpi_agree(rc, "calibrate: out of memory", "the kernels of calibration", 0, msg, sizeof msg))) {
        free(x);
        free(y);
        free(pairs);
        return sp_mpi_say(rc, "sparsim-mpi: %s\n", msg);
    }
    unsigned seed = 1;
    for (uint64_t i = 0; i < n; i++) {
        x[i] = (float)rand_r(&seed) / (float)RAND_MAX - 0.5f;
        y[i] = x[i];
    }
    double tk[4];
    barrier(KERNELS);
    double t = now();
    for (uint64_t i = 0; i < n; i++)
        y[i] += x[i];
    tk[0] = now() - t;
    barrier(KERNELS);
    t = now();
    uint64_t cnt = sp_threshold_select(x, n, 0.495f, pairs, m);
    tk[1] = now() - t;
    uint64_t nk = 1u << 22;
    barrier(KERNELS);
    t = now();
    sp_topk_exact(x, nk, nk / 100, pairs);
    tk[2] = now() - t;
    for (uint64_t i = 0; i < m; i++) {
        pairs[i].idx = (int32_t)(rand_r(&seed) % n);
        pairs[i].val = 1.0f;
    }
    barrier(KERNELS);
    t = now();
    for (uint64_t i = 0; i < m; i++)
        y[pairs[i].idx] += pairs[i].val;
    tk[3] = now() - t;
    double tmax[4];
    sp_mpi_watch(KERNELS);
    MPI_Allreduce(tk, tmax, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    sp_mpi_watch(NULL);
    double t_sum = tmax[0], t_thr = tmax[1], t_topk = tmax[2], t_sc = tmax[3];
    err[0] = '\0';
    if (me == 0) {
        double mem_bw = 12.0 * (double)n / t_sum;
        double topk_coeff = t_topk / ((double)nk * log2((double)nk));
        double scatter_bw = 1.0 / (t_sc / (double)m / 8.0 - 16.0 / mem_bw);
        if (!(scatter_bw > 0))
            scatter_bw = 8.0 * (double)m / t_sc;
        char path[1100];
        snprintf(path, sizeof path, "%s/platform.xml", out);
        FILE *f = fopen(path, "w");
        int bad = !f || sp_platform_write_calibrated(f, hosts, alpha, bw, xbw, limiter) != 0;
        if (closed_badly(f, bad, path, err, sizeof err))
            rc = 1;
        snprintf(path, sizeof path, "%s/device.json", out);
        f = fopen(path, "w");
        bad = !f || sp_device_write_json(f, "calibrated", "this machine's CPU, measured by sparsim-mpi calibrate", 0,
                                         mem_bw, topk_coeff, scatter_bw) != 0;
        if (closed_badly(f, bad, path, rc ? NULL : err, sizeof err))
            rc = 1;
        snprintf(path, sizeof path, "%s/calibration.txt", out);
        f = fopen(path, "w");
        if (f) {
            fprintf(f, "# half round trip between ranks 0 and 1, and one exchange both ways at once (best of "
                       "repetitions)\n# bytes one-way-seconds exchange-seconds\n");
            for (int i = 0; i < ns; i++)
                fprintf(f, "%.0f %.9g %.9g\n", sizes[i], times[i], xtimes[i]);
            fprintf(f, "# alpha %.9g s, bandwidth %.6g B/s, both ways %.6g B/s each\n", alpha, bw, xbw);
            fprintf(f, "# dense sum of %llu floats: %.6g s; threshold filter: %.6g s (%llu kept); exact top-1%% of "
                       "%llu: %.6g s; scatter-add of %llu pairs: %.6g s\n",
                    (unsigned long long)n, t_sum, t_thr, (unsigned long long)cnt, (unsigned long long)nk, t_topk,
                    (unsigned long long)m, t_sc);
            fclose(f);
        }
        if (!rc)
            printf("calibrated: latency %.3g s, bandwidth %.4g MB/s (%.4g MB/s each way both ways at once); memory "
                   "%.3g GB/s, top-k %.3g s per n log2 n\n"
                   "wrote %s/platform.xml, %s/device.json, %s/calibration.txt\n",
                   alpha, bw / 1e6, xbw / 1e6, mem_bw / 1e9, topk_coeff, out, out, out);
    }
    free(x);
    free(y);
    free(pairs);
    /* the others wait while rank 0 writes */
    if ((rc = sp_mpi_agree(rc, err, "the writing of the calibration by rank 0", 1, msg, sizeof msg)) != 0)
        return sp_mpi_say(rc, "sparsim-mpi: %s\n", msg);
    return 0;
}

