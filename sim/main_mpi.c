/* main_mpi.c - sparsim-mpi: the same algorithms on real MPI processes.
 *
 *   mpirun -np P sparsim-mpi run [the options of sparsim run] [--watchdog S]
 *   mpirun -np 2 sparsim-mpi calibrate --out DIR [--hosts N]
 *
 * Every process parses the same arguments, so bad input is found by all of
 * them and reported once, by rank 0.  Several algorithms run one after the
 * other in the same job, each into DIR/NAME.
 */
#include "plan.h"
#include "run.h"
#include "../algorithms/algorithm.h"
#include "../algorithms/select.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sp_mpi_set_watchdog(double seconds);
int sp_mkdirs(const char *path, char *err, size_t errlen);

static int rank0(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r == 0;
}

static int say(int code, const char *fmt, const char *what)
{
    if (rank0()) {
        fprintf(stderr, fmt, what);
        fflush(stderr);
    }
    return code;
}

static int cmd_run(int argc, char **argv)
{
    double watchdog = 60;
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    int nrest = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--watchdog") && i + 1 < argc) {
            char *end;
            watchdog = strtod(argv[i + 1], &end);
            if (*end || !(watchdog > 0)) {
                free(rest);
                return say(2, "sparsim-mpi: --watchdog must be a positive number of seconds, got '%s'\n", argv[i + 1]);
            }
            i++;
            continue;
        }
        rest[nrest++] = argv[i];
    }
    sp_mpi_set_watchdog(watchdog);
    sp_plan p;
    sp_plan_defaults(&p);
    char err[600] = "";
    int rc = sp_plan_parse(&p, nrest, rest, err, sizeof err);
    free(rest);
    if (rc == 1) {
        if (rank0()) {
            sp_plan_print_help("sparsim-mpi");
            printf("  --watchdog S      end the job when a wait makes no progress for S seconds\n"
                   "                    (default: 60)\n");
        }
        return 0;
    }
    if (rc != 0 || sp_plan_validate(&p, err, sizeof err) != 0)
        return say(2, "sparsim-mpi: %s\n", err);
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
            return say(rc, "sparsim-mpi: %s\n", err);
        }
        if (rank0() && !q.quiet)
            sp_print_summary(&q, &rep);
        sp_report_free(&rep);
    }
    return 0;
}

/* ---- calibrate ------------------------------------------------------------ */

static double pingpong(int peer, int me, size_t bytes, int reps, char *buf)
{
    double best = 1e30;
    for (int i = 0; i < reps; i++) {
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
    return best;
}

/* 1 on every rank if `ok` holds on every rank: a rank must not leave a
 * collective sequence that the others go on with */
static int all_ranks_ok(int ok)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

/* both ranks send `bytes` to each other at once: the time of one exchange
 * (shared memory or a NIC may not carry both directions at full speed) */
static double exchange(int peer, int me, size_t bytes, int reps, char *sbuf, char *rbuf)
{
    double best = 1e30;
    for (int i = 0; i < reps; i++) {
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
    return best;
}

static double now(void) { return MPI_Wtime(); }

static int cmd_calibrate(int argc, char **argv)
{
    const char *out = "calibration";
    int hosts = 64;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            if (rank0())
                printf("usage: mpirun -np 2 sparsim-mpi calibrate [--out DIR] [--hosts N]\n"
                       "Measures point-to-point latency and bandwidth between ranks 0 and 1 over\n"
                       "message sizes from 1 B to 16 MiB (one way, and both ways at once), and the\n"
                       "speed of the local kernels while every rank runs them at once (the slowest\n"
                       "rank's time: ranks of an allreduce compete for memory bandwidth),\n"
                       "then writes DIR/platform.xml (a SimGrid cluster of N hosts, default 64, whose\n"
                       "routes have the measured latency and bandwidth), DIR/device.json (a device\n"
                       "profile for --device) and DIR/calibration.txt (the measurements).\n");
            return 0;
        }
        if (!strcmp(argv[i], "--out") && i + 1 < argc)
            out = argv[++i];
        else if (!strcmp(argv[i], "--hosts") && i + 1 < argc) {
            hosts = atoi(argv[++i]);
            if (hosts < 2 || hosts > 30000)
                return say(2, "sparsim-mpi: --hosts must be in 2..30000, got '%s'\n", argv[i]);
        } else
            return say(2, "sparsim-mpi: calibrate: unknown option '%s'\n", argv[i]);
    }
    int me, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2)
        return say(2, "sparsim-mpi: calibrate needs at least 2 processes (mpirun -np 2)%s\n", "");
    char err[300] = "";
    if (!all_ranks_ok(me != 0 || sp_mkdirs(out, err, sizeof err) == 0))
        return say(2, "sparsim-mpi: %s\n", err);
    size_t maxb = 16u << 20;
    char *buf = calloc(1, maxb), *buf2 = calloc(1, maxb);
    if (!all_ranks_ok(buf && buf2)) {
        free(buf);
        free(buf2);
        return say(1, "sparsim-mpi: calibrate: out of memory%s\n", "");
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
    if (!all_ranks_ok(x && y && pairs)) {
        free(x);
        free(y);
        free(pairs);
        return say(1, "sparsim-mpi: calibrate: out of memory%s\n", "");
    }
    unsigned seed = 1;
    for (uint64_t i = 0; i < n; i++) {
        x[i] = (float)rand_r(&seed) / (float)RAND_MAX - 0.5f;
        y[i] = x[i];
    }
    double tk[4];
    MPI_Barrier(MPI_COMM_WORLD);
    double t = now();
    for (uint64_t i = 0; i < n; i++)
        y[i] += x[i];
    tk[0] = now() - t;
    MPI_Barrier(MPI_COMM_WORLD);
    t = now();
    uint64_t cnt = sp_threshold_select(x, n, 0.495f, pairs, m);
    tk[1] = now() - t;
    uint64_t nk = 1u << 22;
    MPI_Barrier(MPI_COMM_WORLD);
    t = now();
    sp_topk_exact(x, nk, nk / 100, pairs);
    tk[2] = now() - t;
    for (uint64_t i = 0; i < m; i++) {
        pairs[i].idx = (int32_t)(rand_r(&seed) % n);
        pairs[i].val = 1.0f;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t = now();
    for (uint64_t i = 0; i < m; i++)
        y[pairs[i].idx] += pairs[i].val;
    tk[3] = now() - t;
    double tmax[4];
    MPI_Allreduce(tk, tmax, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double t_sum = tmax[0], t_thr = tmax[1], t_topk = tmax[2], t_sc = tmax[3];
    int rc = 0;
    if (me == 0) {
        double mem_bw = 12.0 * (double)n / t_sum;
        double topk_coeff = t_topk / ((double)nk * log2((double)nk));
        double scatter_bw = 1.0 / (t_sc / (double)m / 8.0 - 16.0 / mem_bw);
        if (!(scatter_bw > 0))
            scatter_bw = 8.0 * (double)m / t_sc;
        char path[1100];
        snprintf(path, sizeof path, "%s/platform.xml", out);
        FILE *f = fopen(path, "w");
        if (!f) {
            fprintf(stderr, "sparsim-mpi: cannot write %s\n", path);
            rc = 1;
        } else {
            fprintf(f,
                    "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                    "<platform version=\"4.1\">\n"
                    "  <!-- measured by sparsim-mpi calibrate: one-way latency %.3g s, bandwidth %.4g B/s,\n"
                    "       %.4g B/s each way while both directions are busy; a route crosses two links,\n"
                    "       so each link has half the latency, and each host's limiter link (shared by\n"
                    "       what it sends and receives) carries twice the both-ways figure -->\n"
                    "  <cluster id=\"calibrated\" prefix=\"node-\" suffix=\"\" radical=\"0-%d\" speed=\"1Gf\"\n"
                    "           bw=\"%.6gBps\" lat=\"%.6gs\" sharing_policy=\"SPLITDUPLEX\"\n"
                    "           limiter_link=\"%.6gBps\"/>\n"
                    "</platform>\n",
                    alpha, bw, xbw, hosts - 1, bw, alpha / 2, limiter);
            fclose(f);
        }
        snprintf(path, sizeof path, "%s/device.json", out);
        f = fopen(path, "w");
        if (f) {
            fprintf(f,
                    "{\n  \"name\": \"calibrated\",\n  \"description\": \"this machine's CPU, measured by sparsim-mpi "
                    "calibrate\",\n  \"launch\": 0,\n  \"mem_bw\": %.6g,\n  \"topk_coeff\": %.6g,\n  \"scatter_bw\": "
                    "%.6g\n}\n",
                    mem_bw, topk_coeff, scatter_bw);
            fclose(f);
        }
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
        printf("calibrated: latency %.3g s, bandwidth %.4g MB/s (%.4g MB/s each way both ways at once); memory "
               "%.3g GB/s, top-k %.3g s per n log2 n\n"
               "wrote %s/platform.xml, %s/device.json, %s/calibration.txt\n",
               alpha, bw / 1e6, xbw / 1e6, mem_bw / 1e9, topk_coeff, out, out, out);
    }
    free(x);
    free(y);
    free(pairs);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return rc;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rc;
    if (argc < 2)
        rc = say(2, "usage: mpirun -np P sparsim-mpi run [options] | calibrate [options]%s\n", "");
    else if (!strcmp(argv[1], "run"))
        rc = cmd_run(argc - 2, argv + 2);
    else if (!strcmp(argv[1], "calibrate"))
        rc = cmd_calibrate(argc - 2, argv + 2);
    else if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        if (rank0())
            printf("usage: mpirun -np P sparsim-mpi run [options]   (see: sparsim-mpi run --help)\n"
                   "       mpirun -np 2 sparsim-mpi calibrate [--out DIR]\n");
        rc = 0;
    } else
        rc = say(2, "sparsim-mpi: unknown command '%s'\n", argv[1]);
    MPI_Finalize();
    return rc;
}
