/* calibrate.c - `sparsim-mpi calibrate`: this machine's network and kernels,
 * measured, as a SimGrid platform and a device profile the simulator reads.
 *
 * Point-to-point latency and bandwidth between ranks 0 and 1 (one way, and
 * both ways at once), the host overheads of a small message (LogGP's o, on
 * each side), and the local kernels timed while every rank runs them at
 * once, as ranks of an allreduce do.  topologies/ writes the files.
 *
 * LogP's split of a small message's one-way time (Culler et al., PPoPP
 * 1993): o_send on the sender's CPU, the wire's latency L, o_recv on the
 * receiver's CPU.  The simulator charges o on the ranks' clocks (the device
 * profile's send_o and recv_o, sim/shim/simgrid.c) and L on the routes, so
 * the platform written gets L = alpha - o_send - o_recv, and a simulated
 * ping-pong on both files takes the measured time.
 *
 * With --select cuda the kernels are the GPU's (algorithms/select_cuda.h),
 * timed on vectors in GPU memory, and the host-device copies are measured
 * too: device.json then prices the GPU kernels and the copies around them.
 *
 * As in `run`, the ranks agree on how each stands at every point where one
 * could fail alone, and every wait is watched (--watchdog): the job ends
 * with one line, never hangs.
 */
#include "cli.h"
#include "mpi_cmd.h"
#include "algorithms/select.h"
#include "algorithms/select_cuda.h"
#include "topologies/device.h"
#include "topologies/platform.h"

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
    int select;
    unsigned char given[4];
} calibrate_opts;

static const sp_opt_choice select_choices[] = {{"cpu", 0}, {"cuda", 1}, {NULL, 0}};

#define C(field) .offset = offsetof(calibrate_opts, field), .size = sizeof(((calibrate_opts *)0)->field)

static const sp_opt calibrate_rows[] = {
    {.name = "out", .type = SP_OT_STRING, C(out), .dflt = "calibration", .metavar = "DIR",
     .help = "where the files go"},
    {.name = "hosts", .type = SP_OT_INT, C(hosts), .min = 2, .max = SP_MAX_RANKS, .dflt = "64", .metavar = "N",
     .help = "hosts of the platform written"},
    {.name = "watchdog", .type = SP_OT_DOUBLE, C(watchdog), .min = 0, .max = 1e9, .dflt = "60",
     .flags = SP_OPT_OPEN_MIN, .metavar = "S", .range = "a positive number of seconds",
     .help = "end the job when a wait makes no progress for S seconds"},
    {.name = "select", .type = SP_OT_CHOICE, C(select), .dflt = "cpu", .choices = select_choices,
     .help = "whose kernels to measure: this machine's CPU, or its GPUs (cuda: rank modulo the GPUs; the profile then "
     "has the host-device copies too)"},
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

/* LogGP's o for an 8-byte message (Alexandrov et al., SPAA 1995), the best
 * of reps as for the ping-pong whose alpha it splits: o_send is rank 0's time in a blocking send, which an MPI
 * library completes eagerly once the data is copied out; o_recv is rank 1's
 * time in a receive whose message has already arrived (it waits 200 us
 * after both ranks passed a barrier that follows the send).  Each rank
 * returns what it measured, 0 for the other. */
static void overheads(int me, int reps, char *buf, double *o_send, double *o_recv)
{
    double best_s = 1e30, best_r = 1e30;
    sp_mpi_watch("the overheads of calibration");
    for (int i = 0; i < reps; i++, sp_mpi_progress()) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0) {
            double t = MPI_Wtime();
            MPI_Send(buf, 8, MPI_BYTE, 1, 3, MPI_COMM_WORLD);
            t = MPI_Wtime() - t;
            if (t < best_s)
                best_s = t;
            MPI_Send(buf, 8, MPI_BYTE, 1, 4, MPI_COMM_WORLD);
        } else if (me == 1) {
            MPI_Recv(buf, 8, MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 1) {
            for (double w = MPI_Wtime(); MPI_Wtime() - w < 200e-6;)
                ;
            double t = MPI_Wtime();
            MPI_Recv(buf, 8, MPI_BYTE, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            t = MPI_Wtime() - t;
            if (t < best_r)
                best_r = t;
        }
    }
    sp_mpi_watch(NULL);
    *o_send = me == 0 ? best_s : 0;
    *o_recv = me == 1 ? best_r : 0;
}

/* The GPU's kernels on n floats and m pairs in GPU memory, best of a few
 * runs each (the first one warms up): tk[] = dense add, threshold filter,
 * exact top-1% of nk, scatter-add, Gaussian moments, launch (an add of one
 * float), and the copies: cp[] = latency (4 bytes), seconds for `big` bytes
 * to the device and back.  0, or -1 with a reason. */
static int gpu_kernels(int me, const float *x, uint64_t n, uint64_t nk, sp_pair *pairs, uint64_t m, double tk[6],
                       double cp[3], size_t big, uint64_t *cnt, char *name, size_t namelen, char *err, size_t errlen)
{
    char why[300];
    sp_cuda *g = sp_cuda_open(me, why, sizeof why);
    if (!g) {
        snprintf(err, errlen, "calibrate --select cuda: %s", why);
        return -1;
    }
    snprintf(name, namelen, "%s", sp_cuda_name(g));
    float *dx = sp_cuda_alloc(g, n * sizeof *x), *dy = sp_cuda_alloc(g, n * sizeof *x);
    sp_pair *dp = sp_cuda_alloc(g, (m > n ? m : n) * sizeof *pairs);
    char *hb = malloc(big);
    int rc = dx && dy && dp && hb ? 0 : -1;
    if (rc == 0)
        rc = sp_cuda_put(g, dx, x, n * sizeof *x) | sp_cuda_put(g, dy, x, n * sizeof *x) |
             sp_cuda_put(g, dp, pairs, m * sizeof *pairs);
    for (int j = 0; j < 6; j++)
        tk[j] = 1e30;
    for (int j = 0; j < 3; j++)
        cp[j] = 1e30;
    for (int rep = 0; rc == 0 && rep < 6; rep++) {
        double t[9], sh, s, q;
        int64_t c;
        t[0] = now();
        rc |= sp_cuda_add(g, dy, dx, n);
        t[1] = now();
        c = sp_cuda_threshold(g, dx, n, 0.495f, dp, m);
        rc |= c < 0;
        t[2] = now();
        rc |= sp_cuda_topk(g, dx, nk, nk / 100, dp) < 0;
        t[3] = now();
        rc |= sp_cuda_scatter_add(g, dy, dp, m); /* indices may repeat: a timing, not a sum */
        t[4] = now();
        rc |= sp_cuda_moments(g, dx, n, &sh, &s, &q);
        t[5] = now();
        rc |= sp_cuda_add(g, dy, dx, 1);
        t[6] = now();
        rc |= sp_cuda_get(g, hb, dx, 4);
        t[7] = now();
        rc |= sp_cuda_put(g, dy, hb, big) | sp_cuda_get(g, hb, dy, big);
        t[8] = now();
        if (rep == 0) /* warm-up */
            continue;
        *cnt = (uint64_t)c;
        for (int j = 0; j < 6; j++)
            if (t[j + 1] - t[j] < tk[j])
                tk[j] = t[j + 1] - t[j];
        if (t[7] - t[6] < cp[0])
            cp[0] = t[7] - t[6];
        if ((t[8] - t[7]) / 2 < cp[1])
            cp[1] = (t[8] - t[7]) / 2;
    }
    if (rc != 0)
        snprintf(err, errlen, "calibrate --select cuda: %s", sp_cuda_error(g));
    free(hb);
    sp_cuda_free(g, dx);
    sp_cuda_free(g, dy);
    sp_cuda_free(g, dp);
    sp_cuda_close(g);
    return rc ? -1 : 0;
}

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

/* what calibration measured, and what follows from it */
typedef struct {
    int me;
    double sizes[13], times[13], xtimes[13]; /* message sizes, one-way and exchange times */
    int ns;
    double o_send, o_recv; /* LogGP's o, each side (this rank's until the kernels' allreduce) */
    double alpha, bw, xbw, limiter, wire;
    uint64_t n, m, nk, cnt; /* the kernels' sizes: floats, pairs, top-k input; entries the filter kept */
    size_t big;             /* bytes of the GPU's copies */
    char gpu[200];          /* its name */
    double tk[6], cp[3];    /* this rank's kernel and copy times */
    double tmax[11];        /* the slowest rank's: tk, cp, o_send, o_recv */
} calibration;

static void calibrate_help(const sp_opt_table *table)
{
    if (!sp_mpi_rank0())
        return;
    printf("usage: mpirun -np 2 sparsim-mpi calibrate [options]\n"
           "Measures point-to-point latency and bandwidth between ranks 0 and 1 over\n"
           "message sizes from 1 B to 16 MiB (one way, and both ways at once), and the\n"
           "speed of the local kernels while every rank runs them at once (the slowest\n"
           "rank's time: ranks of an allreduce compete for memory bandwidth),\n"
           "then writes DIR/platform.xml (a SimGrid cluster whose routes have the\n"
           "measured latency and bandwidth), DIR/device.json (a device profile for\n"
           "--device) and DIR/calibration.txt (the measurements).  With --select cuda the\n"
           "kernels are the GPU's (and the profile has its host-device copies).\n\n");
    sp_opts_help(table, stdout);
}

/* the ping-pongs, exchanges and overheads between ranks 0 and 1, and the
 * network they imply: alpha, the bandwidth one way and both ways, the
 * limiter.  0, or the exit status (said) */
static int measure_network(calibration *cal, char *msg, size_t msglen)
{
    const int me = cal->me;
    size_t maxb = 16u << 20;
    char *buf = calloc(1, maxb), *buf2 = calloc(1, maxb);
    int rc = buf && buf2 ? 0 : 1;
    if ((rc = sp_mpi_agree(rc, "calibrate: out of memory", "the start of the calibration", 0, msg, msglen))) {
        free(buf);
        free(buf2);
        return sp_mpi_say(rc, "sparsim-mpi: %s\n", msg);
    }
    double *sizes = cal->sizes, *times = cal->times, *xtimes = cal->xtimes;
    int ns = 0;
    for (size_t b = 1; b <= maxb; b *= 4) {
        sizes[ns] = (double)b;
        times[ns] = pingpong(1, me, b, b < (1u << 20) ? 50 : 10, buf);
        xtimes[ns] = exchange(1, me, b, b < (1u << 20) ? 50 : 10, buf, buf2);
        ns++;
    }
    cal->ns = ns;
    overheads(me, 200, buf, &cal->o_send, &cal->o_recv);
    free(buf);
    free(buf2);
    /* alpha: the smallest message; bandwidth: the slope over the largest ones */
    cal->alpha = times[0];
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
    cal->bw = bw;
    cal->xbw = xbw;
    cal->limiter = 2.0 * (xbw < bw ? xbw : bw);
    return 0;
}

/* the CPU's kernels on x (y a copy), timed between barriers */
static void cpu_kernels(calibration *cal, const float *x, float *y, sp_pair *pairs, unsigned *seed)
{
    const uint64_t n = cal->n, m = cal->m, nk = cal->nk;
    barrier(KERNELS);
    double t = now();
    for (uint64_t i = 0; i < n; i++)
        y[i] += x[i];
    cal->tk[0] = now() - t;
    barrier(KERNELS);
    t = now();
    cal->cnt = sp_threshold_select(x, n, 0.495f, pairs, m);
    cal->tk[1] = now() - t;
    barrier(KERNELS);
    t = now();
    sp_topk_exact(x, nk, nk / 100, pairs);
    cal->tk[2] = now() - t;
    for (uint64_t i = 0; i < m; i++) {
        pairs[i].idx = (int32_t)(rand_r(seed) % n);
        pairs[i].val = 1.0f;
    }
    barrier(KERNELS);
    t = now();
    for (uint64_t i = 0; i < m; i++)
        y[pairs[i].idx] += pairs[i].val;
    cal->tk[3] = now() - t;
}

/* kernels: every rank runs each one at the same time, as ranks do in an
 * allreduce, so the profile includes their contention for memory
 * bandwidth; the slowest rank's time counts (tmax).  0, or the exit status (said) */
static int measure_kernels(calibration *cal, int select, char *err, size_t errlen, char *msg, size_t msglen)
{
    const uint64_t n = cal->n = 1u << 24, m = cal->m = 1u << 20;
    cal->nk = 1u << 22;
    cal->big = 64u << 20;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    sp_pair *pairs = malloc(m * sizeof *pairs);
    int rc = x && y && pairs ? 0 : 1;
    if ((rc = sp_mpi_agree(rc, "calibrate: out of memory", "the kernels of calibration", 0, msg, msglen))) {
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
    if (select) {
        /* random indices for the scatter-add, as on the CPU */
        for (uint64_t i = 0; i < m; i++) {
            pairs[i].idx = (int32_t)(rand_r(&seed) % n);
            pairs[i].val = 1.0f;
        }
        barrier(KERNELS);
        rc = gpu_kernels(cal->me, x, n, cal->nk, pairs, m, cal->tk, cal->cp, cal->big, &cal->cnt, cal->gpu,
                         sizeof cal->gpu, err, errlen)
                 ? 1
                 : 0;
        rc = sp_mpi_agree(rc, err, "the GPU kernels of calibration", 0, msg, msglen);
    } else
        cpu_kernels(cal, x, y, pairs, &seed);
    free(x);
    free(y);
    free(pairs);
    if (rc)
        return sp_mpi_say(rc, "sparsim-mpi: %s\n", msg);
    const double *tk = cal->tk, *cp = cal->cp;
    double tall[11] = {tk[0], tk[1], tk[2], tk[3], tk[4], tk[5], cp[0], cp[1], cp[2], cal->o_send, cal->o_recv};
    sp_mpi_watch(KERNELS);
    MPI_Allreduce(tall, cal->tmax, 11, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    sp_mpi_watch(NULL);
    /* the wire's latency is what o leaves of alpha; where noise makes o
     * the larger, o is scaled down to 90% of alpha (the split, not the
     * total, is then uncertain) */
    cal->o_send = cal->tmax[9];
    cal->o_recv = cal->tmax[10];
    if (cal->o_send + cal->o_recv > 0.9 * cal->alpha) {
        double f = cal->o_send + cal->o_recv > 0 ? 0.9 * cal->alpha / (cal->o_send + cal->o_recv) : 0;
        cal->o_send *= f;
        cal->o_recv *= f;
    }
    cal->wire = cal->alpha - cal->o_send - cal->o_recv;
    return 0;
}

/* DIR/device.json, opened as f (NULL: not opened): the GPU's profile with
 * its launch term and copies, or the CPU's.  Whether it was not written whole */
static int write_device(FILE *f, const calibration *cal, int select, double mem_bw, double topk_coeff,
                        double scatter_bw)
{
    if (!select)
        return !f || sp_device_write_json(f, "calibrated", "this machine's CPU, measured by sparsim-mpi calibrate", 0,
                                          mem_bw, topk_coeff, scatter_bw, cal->o_send, cal->o_recv) != 0;
    /* the GPU's launch term, and its copies: latency, and the bandwidth
     * of `big` bytes each way (pageable host memory, as the runs use) */
    const double *tmax = cal->tmax;
    double launch = tmax[5], copy_lat = tmax[6], copy_bw = (double)cal->big / (tmax[7] - copy_lat);
    if (!(copy_bw > 0) || !isfinite(copy_bw))
        copy_bw = (double)cal->big / tmax[7];
    char desc[300];
    snprintf(desc, sizeof desc, "%.200s, measured by sparsim-mpi calibrate --select cuda", cal->gpu);
    for (char *c = desc; *c; c++)
        if (*c == '"' || *c == '\\')
            *c = '\'';
    return !f || fprintf(f,
                         "{\n  \"name\": \"calibrated-gpu\",\n  \"description\": \"%s\",\n  \"launch\": %.9g,\n"
                         "  \"mem_bw\": %.9g,\n  \"topk_coeff\": %.9g,\n  \"scatter_bw\": %.9g,\n"
                         "  \"send_o\": %.9g,\n  \"recv_o\": %.9g,\n"
                         "  \"copy_lat\": %.9g,\n  \"copy_bw\": %.9g\n}\n",
                         desc, launch, mem_bw, topk_coeff, scatter_bw, cal->o_send, cal->o_recv, copy_lat,
                         copy_bw) < 0;
}

/* DIR/calibration.txt: every measurement (best effort) */
static void write_log(const char *path, const calibration *cal, int select)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    const double *tmax = cal->tmax;
    fprintf(f, "# half round trip between ranks 0 and 1, and one exchange both ways at once (best of "
               "repetitions)\n# bytes one-way-seconds exchange-seconds\n");
    for (int i = 0; i < cal->ns; i++)
        fprintf(f, "%.0f %.9g %.9g\n", cal->sizes[i], cal->times[i], cal->xtimes[i]);
    fprintf(f, "# alpha %.9g s, bandwidth %.6g B/s, both ways %.6g B/s each\n", cal->alpha, cal->bw, cal->xbw);
    fprintf(f, "# overheads of an 8-byte message (best of 200): o_send %.9g s, o_recv %.9g s; "
               "the platform's latency (alpha less both) %.9g s\n",
            cal->o_send, cal->o_recv, cal->wire);
    fprintf(f, "# dense sum of %llu floats: %.6g s; threshold filter: %.6g s (%llu kept); exact top-1%% of "
               "%llu: %.6g s; scatter-add of %llu pairs: %.6g s\n",
            (unsigned long long)cal->n, tmax[0], tmax[1], (unsigned long long)cal->cnt, (unsigned long long)cal->nk,
            tmax[2], (unsigned long long)cal->m, tmax[3]);
    if (select)
        fprintf(f, "# on %s: Gaussian moments of %llu floats: %.6g s; launch (add of one float): %.6g s; "
                   "copy of 4 bytes to the host: %.6g s; of %zu bytes, each way: %.6g s\n",
                cal->gpu, (unsigned long long)cal->n, tmax[4], tmax[5], tmax[6], cal->big, tmax[7]);
    fclose(f);
}

/* rank 0: the platform, the device profile, the log, and the summary line.
 * 0, or 1 with a message in err */
static int write_calibration(const calibration *cal, const calibrate_opts *o, char *err, size_t errlen)
{
    const char *out = o->out;
    int rc = 0;
    double t_sum = cal->tmax[0], t_topk = cal->tmax[2], t_sc = cal->tmax[3];
    double mem_bw = 12.0 * (double)cal->n / t_sum;
    double topk_coeff = t_topk / ((double)cal->nk * log2((double)cal->nk));
    double scatter_bw = 1.0 / (t_sc / (double)cal->m / 8.0 - 16.0 / mem_bw);
    if (!(scatter_bw > 0))
        scatter_bw = 8.0 * (double)cal->m / t_sc;
    char path[1100];
    snprintf(path, sizeof path, "%s/platform.xml", out);
    FILE *f = fopen(path, "w");
    int bad = !f || sp_platform_write_calibrated(f, o->hosts, cal->wire, cal->bw, cal->xbw, cal->limiter) != 0;
    if (closed_badly(f, bad, path, err, errlen))
        rc = 1;
    snprintf(path, sizeof path, "%s/device.json", out);
    f = fopen(path, "w");
    bad = write_device(f, cal, o->select, mem_bw, topk_coeff, scatter_bw);
    if (closed_badly(f, bad, path, rc ? NULL : err, errlen))
        rc = 1;
    snprintf(path, sizeof path, "%s/calibration.txt", out);
    write_log(path, cal, o->select);
    if (!rc)
        printf("calibrated: latency %.3g s (o_send %.3g s, o_recv %.3g s), bandwidth %.4g MB/s (%.4g MB/s each "
               "way both ways at once); memory %.3g GB/s, top-k %.3g s per n log2 n\n"
               "wrote %s/platform.xml, %s/device.json, %s/calibration.txt\n",
               cal->alpha, cal->o_send, cal->o_recv, cal->bw / 1e6, cal->xbw / 1e6, mem_bw / 1e9, topk_coeff, out,
               out, out);
    return rc;
}

int sp_mpi_calibrate(int argc, char **argv)
{
    const sp_opt_table table = SP_OPT_TABLE(calibrate_rows);
    calibrate_opts o;
    memset(&o, 0, sizeof o);
    sp_opts_defaults(&table, &o);
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            calibrate_help(&table);
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
    calibration cal;
    memset(&cal, 0, sizeof cal);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &cal.me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2)
        return sp_mpi_say(2, "sparsim-mpi: calibrate needs at least 2 processes (mpirun -np 2)%s\n", "");
    rc = cal.me == 0 && sp_mkdirs(o.out, err, sizeof err) != 0 ? 2 : 0;
    if ((rc = sp_mpi_agree(rc, err, "the start of the calibration", 0, msg, sizeof msg)) != 0)
        return sp_mpi_say(rc, "sparsim-mpi: %s\n", msg);
    if ((rc = measure_network(&cal, msg, sizeof msg)) != 0 ||
        (rc = measure_kernels(&cal, o.select, err, sizeof err, msg, sizeof msg)) != 0)
        return rc;
    err[0] = '\0';
    if (cal.me == 0)
        rc = write_calibration(&cal, &o, err, sizeof err);
    /* the others wait while rank 0 writes */
    if ((rc = sp_mpi_agree(rc, err, "the writing of the calibration by rank 0", 1, msg, sizeof msg)) != 0)
        return sp_mpi_say(rc, "sparsim-mpi: %s\n", msg);
    return 0;
}

