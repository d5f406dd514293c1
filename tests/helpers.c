/* helpers.c - running the real binary and small file helpers for tests. */
#define _GNU_SOURCE
#include "helpers.h"
#include "sim/workload/generator.h"

#include <criterion/criterion.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <simgrid/mailbox.h>
#include <xbt/dynar.h>
#include <math.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

char *t_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap);
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

char *t_path(const char *dir, const char *name)
{
    static char buf[8][512];
    static int slot;
    char *p = buf[slot++ % 8];
    snprintf(p, 512, "%s/%s", dir, name);
    return p;
}

int t_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

const char *t_tmpdir(void)
{
    static char path[256];
    const char *base = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/sparsim-test-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(path))
        return NULL;
    return path;
}

t_proc t_run(const char *const *args)
{
    t_proc p = {0};
    char outp[] = "/tmp/sparsim-out-XXXXXX", errp[] = "/tmp/sparsim-err-XXXXXX";
    int fo = mkstemp(outp), fe = mkstemp(errp);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fo, 1);
        dup2(fe, 2);
        int n = 0;
        while (args[n])
            n++;
        char **argv = calloc((size_t)n + 2, sizeof *argv);
        argv[0] = (char *)SPARSIM_BIN;
        for (int i = 0; i < n; i++)
            argv[i + 1] = (char *)args[i];
        execv(SPARSIM_BIN, argv);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    close(fo);
    close(fe);
    p.exited = WIFEXITED(st);
    p.status = p.exited ? WEXITSTATUS(st) : WTERMSIG(st);
    p.out = t_read_file(outp, NULL);
    p.err = t_read_file(errp, NULL);
    unlink(outp);
    unlink(errp);
    return p;
}

void t_proc_free(t_proc *p)
{
    free(p->out);
    free(p->err);
}

int t_count_lines(const char *s)
{
    int n = 0;
    for (; s && *s; s++)
        n += *s == '\n';
    return n;
}

void t_refused(const char *const *args, const char *needle)
{
    t_proc p = t_run(args);
    cr_assert(p.exited && p.status == 2, "exit %d: %s", p.status, p.err);
    cr_assert_eq(t_count_lines(p.err), 1, "%s", p.err);
    cr_assert(strstr(p.err, needle), "%s", p.err);
    t_proc_free(&p);
}

void t_plan(sp_plan *p, const char *algo, int P, uint64_t n, double density)
{
    sp_plan_defaults(p);
    snprintf(p->algo, sizeof p->algo, "%s", algo);
    snprintf(p->network, sizeof p->network, "cm02");
    p->ranks = P;
    p->n = n;
    p->density = density;
    p->out[0] = '\0';
    p->payload = SP_PAYLOAD_EXACT;
}

void t_wire_only(sp_plan *p)
{
    char err[256];
    cr_assert_eq(sp_plan_set(p, "device", "none", err, sizeof err), 0, "%s", err);
    p->payload = SP_PAYLOAD_SIZE;
}

sp_report t_run_ok(const sp_plan *p)
{
    sp_report rep;
    sp_error e;
    int rc = sp_run(p, &rep, &e);
    cr_assert_eq(rc, 0, "%s P=%d: run failed: %s", p->algo, p->ranks, e.msg);
    return rep;
}

sp_generator *t_generator(const sp_plan *p)
{
    sp_profile prof;
    char err[300];
    cr_assert_eq(sp_plan_profile(p, &prof, err, sizeof err), 0, "%s", err);
    sp_generator *g = sp_generator_new(&prof, p->seed, err, sizeof err);
    cr_assert_not_null(g, "%s", err);
    sp_profile_free(&prof);
    return g;
}

double *t_gradient_sum(const sp_plan *p, double **mag)
{
    sp_generator *gen = t_generator(p);
    float *g = malloc(p->n * sizeof *g);
    double *sum = calloc(p->n, sizeof *sum), *m = calloc(p->n, sizeof *m);
    for (int it = 0; it < p->iters; it++)
        for (int r = 0; r < p->ranks; r++) {
            sp_generator_fill(gen, r, it, g, 0);
            for (uint64_t i = 0; i < p->n; i++) {
                sum[i] += g[i];
                m[i] += fabs(g[i]);
            }
        }
    sp_generator_free(gen);
    free(g);
    if (mag)
        *mag = m;
    else
        free(m);
    return sum;
}

int t_count_links(const char *prefix)
{
    int n = 0, up = 0;
    sg_link_t *links = sg_link_list();
    for (int i = 0, total = sg_link_count(); i < total; i++) {
        const char *name = sg_link_get_name(links[i]);
        if (strncmp(name, prefix, strlen(prefix)) == 0) {
            n++;
            up += strstr(name, "_UP") != NULL;
        }
    }
    free(links);
    cr_assert_eq(n, 2 * up, "%s: %d links, %d of them _UP", prefix, n, up);
    return up;
}

void t_route_is(int a, int b, const char *want, double lat)
{
    char na[32], nb[32];
    snprintf(na, sizeof na, "node-%d", a);
    snprintf(nb, sizeof nb, "node-%d", b);
    t_route_hosts(na, nb, want, lat);
}

void t_route_hosts(const char *na, const char *nb, const char *want, double lat)
{
    char got[1024] = "";
    sg_host_t ha = sg_host_by_name(na), hb = sg_host_by_name(nb);
    cr_assert(ha && hb, "hosts %s and %s", na, nb);
    xbt_dynar_t d = xbt_dynar_new(sizeof(sg_link_t), NULL);
    sg_host_get_route(ha, hb, d);
    for (unsigned long i = 0; i < xbt_dynar_length(d); i++) {
        strcat(got, i ? " " : "");
        strcat(got, sg_link_get_name(xbt_dynar_get_as(d, i, sg_link_t)));
    }
    xbt_dynar_free(&d);
    cr_assert_str_eq(got, want, "%s -> %s", na, nb);
    cr_assert_float_eq(sg_host_get_route_latency(ha, hb), lat, 1e-15, "%s -> %s", na, nb);
}

double t_flow_end[T_FLOWS_MAX];
static int flow_token; /* SimGrid sends no null payload */

void t_flow_recv(int argc, char **argv)
{
    char box[32];
    snprintf(box, sizeof box, "to-%s", argv[1]);
    sg_mailbox_get(sg_mailbox_by_name(box));
    t_flow_end[atoi(argv[1])] = simgrid_get_clock();
    (void)argc;
}

void t_flow_send(int argc, char **argv)
{
    char box[32];
    snprintf(box, sizeof box, "to-%s", argv[1]);
    sg_mailbox_put(sg_mailbox_by_name(box), &flow_token, (long)T_FLOW_BYTES);
    (void)argc;
}

void t_child_pairs(const sp_plan *p, int iters, void (*f)(const sp_report *r, int it, double *a, double *b),
                   double *a, double *b)
{
    cr_assert(iters > 0 && iters <= T_CHILD_MAX_ITERS);
    int fd[2];
    cr_assert_eq(pipe(fd), 0);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    double v[2 * T_CHILD_MAX_ITERS + 1] = {0};
    if (pid == 0) {
        close(fd[0]);
        sp_report rep;
        sp_error e;
        if (sp_run(p, &rep, &e) == 0 && rep.niters == iters && rep.model == (p->payload == SP_PAYLOAD_MODEL)) {
            v[0] = 1;
            for (int it = 0; it < iters; it++)
                f(&rep, it, &v[1 + it], &v[1 + iters + it]);
        }
        _exit(write(fd[1], v, sizeof v) == (ssize_t)sizeof v ? 0 : 1);
    }
    close(fd[1]);
    cr_assert_eq(read(fd[0], v, sizeof v), (ssize_t)sizeof v);
    close(fd[0]);
    waitpid(pid, NULL, 0);
    cr_assert_eq(v[0], 1, "%s: the run failed", p->algo);
    memcpy(a, v + 1, (size_t)iters * sizeof *a);
    memcpy(b, v + 1 + iters, (size_t)iters * sizeof *b);
}

static const float *mag_vals;
static int by_magnitude(const void *a, const void *b)
{
    int32_t i = *(const int32_t *)a, j = *(const int32_t *)b;
    float x = fabsf(mag_vals[i]), y = fabsf(mag_vals[j]);
    if (x != y)
        return x > y ? -1 : 1;
    return i < j ? -1 : (i > j);
}

void t_sort_by_magnitude(int32_t *idx, size_t m, const float *vals)
{
    mag_vals = vals;
    qsort(idx, m, sizeof *idx, by_magnitude);
}
