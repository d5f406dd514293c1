/* helpers.h - what the tests share: running the real binary, temp folders,
 * reference computations written the simplest way. */
#ifndef SPARSIM_TEST_HELPERS_H
#define SPARSIM_TEST_HELPERS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int exited;   /* 1 if it exited normally */
    int status;   /* exit status, or the signal */
    char *out;    /* stdout */
    char *err;    /* stderr */
} t_proc;

/* Runs SPARSIM_BIN with the NULL-terminated args; captures both streams. */
t_proc t_run(const char *const *args);
void t_proc_free(t_proc *p);

/* A fresh temporary folder (removed by the OS's tmp cleaning; tests keep it
 * for inspection on failure). */
const char *t_tmpdir(void);

char *t_read_file(const char *path, size_t *len);

/* "dir/name" in one of 8 rotating static buffers (for building arguments) */
char *t_path(const char *dir, const char *name);
int t_write_file(const char *path, const char *text);

/* number of '\n' in s */
int t_count_lines(const char *s);

/* Runs SPARSIM_BIN with args and fails the test unless it is refused as bad
 * input: it exits with status 2 and one line on stderr that holds needle. */
void t_refused(const char *const *args, const char *needle);

#include "sim/driver/run.h"

/* SimGrid's links and routes, in a test that built a platform: the full-duplex
 * links whose names start with prefix (each two SimGrid links, _UP and _DOWN),
 * and the route from host node-a to node-b as its links' names joined by
 * spaces, held against `want`, with its latency against `lat` (s) */
int t_count_links(const char *prefix);
void t_route_is(int a, int b, const char *want, double lat);
/* the same between two hosts by name (a node's switch: nvswitch-N) */
void t_route_hosts(const char *a, const char *b, const char *want, double lat);

/* Flows between hosts as pairs of SimGrid actors, in a test that built a
 * platform: each actor's one argument is the flow's index i (< T_FLOWS_MAX);
 * t_flow_send puts T_FLOW_BYTES into the mailbox "to-i", t_flow_recv takes
 * them and writes the clock into t_flow_end[i]. */
enum { T_FLOWS_MAX = 64 };
#define T_FLOW_BYTES 1e8
extern double t_flow_end[T_FLOWS_MAX];
void t_flow_send(int argc, char **argv);
void t_flow_recv(int argc, char **argv);

/* A plan for an in-process run: exact payloads, the cm02 network, no output
 * files. */
void t_plan(sp_plan *p, const char *algo, int P, uint64_t n, double density);

/* Runs the plan in this process and fails the test if the run fails. */
sp_report t_run_ok(const sp_plan *p);
/* Sorts the indices idx[0..m) by |vals[i]|, largest first, then by the
 * smaller index: the order of the exact top-k (a reference for the tests). */
void t_sort_by_magnitude(int32_t *idx, size_t m, const float *vals);

/* Runs the plan in a child process (SimGrid starts once per process) and
 * hands back two numbers per iteration that f takes from the child's report,
 * a[it] and b[it] for it < iters; fails the test unless the run succeeds
 * with iters iterations on the payload the plan asks for. */
#define T_CHILD_MAX_ITERS 16
void t_child_pairs(const sp_plan *p, int iters, void (*f)(const sp_report *r, int it, double *a, double *b),
                   double *a, double *b);
/* p on the wire alone: no device (the platform's would price kernels), size-only payloads */
void t_wire_only(sp_plan *p);

/* Sum over iterations and ranks of the synthetic gradients of plan p, and
 * of their magnitudes (mag may be NULL).  The caller frees. */
double *t_gradient_sum(const sp_plan *p, double **mag);

/* The generator a run of plan p uses (the caller frees it). */
struct sp_generator;
struct sp_generator *t_generator(const sp_plan *p);

#endif
