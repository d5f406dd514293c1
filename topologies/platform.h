/* platform.h - built-in platforms and user platform files.
 *
 * Built-ins are generated as SimGrid XML for the requested number of ranks;
 * a user file is passed through after a readability check.  Rank i runs on
 * the i-th host (built-ins name them node-0 .. node-(N-1)).
 */
#ifndef SPARSIM_PLATFORM_H
#define SPARSIM_PLATFORM_H

#include <stddef.h>

typedef struct {
    char xml_path[1100];   /* file to load */
    int generated;         /* 1 if xml_path is a temporary file to remove */
    char host_prefix[32];  /* "node-" for built-ins; "" for user files */
    char builder[16];      /* non-empty: the simulated backend builds it in code (daint), no file */
} sp_platform;

/* Resolves `name` ("1gbe", "daint", "daint-simgrid" or a file) for P ranks.  Returns -1 with
 * a one-line message on error. */
int sp_platform_prepare(const char *name, int P, sp_platform *out, char *err, size_t errlen);
void sp_platform_release(sp_platform *p);

/* Writes the XML of a built-in platform for P ranks to `f`. */
int sp_platform_write_builtin(const char *name, int P, void *f /* FILE* */, char *err, size_t errlen);

int sp_platform_is_builtin(const char *name);

/* Writes a SimGrid cluster of `hosts` hosts whose routes have the measured
 * one-way latency `alpha` (s) and bandwidth `bw` (bytes/s), and whose hosts
 * each have a limiter link of `limiter` bytes/s shared by what they send and
 * receive (sparsim-mpi calibrate measures these). */
int sp_platform_write_calibrated(void *f /* FILE* */, int hosts, double alpha, double bw, double both_ways_bw,
                                 double limiter);

#endif
