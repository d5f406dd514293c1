/* simgrid_glue.h - the SimGrid calls of simgrid_glue.cpp, simgrid_aries.cpp
 * and simgrid_nodes.cpp, declared for the backend's C files.
 *
 * SimGrid 3.32's C API lacks them or reports errors by C++ exceptions that
 * C cannot catch; the two C++ files wrap them in plain C functions (prefix
 * spg_) that return an error code, and this header is their one list.
 */
#ifndef SPARSIM_SIMGRID_GLUE_H
#define SPARSIM_SIMGRID_GLUE_H

#include "topologies/fabric.h"

#include <simgrid/forward.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* loading and running: 0, or -1 with SimGrid's message in err */
int spg_load_platform(const char *path, char *err, size_t errlen);
int spg_run(char *err, size_t errlen);
/* Piz Daint's Aries dragonfly, built in code (simgrid_aries.cpp) */
int spg_build_aries(int nodes, int spread, char *err, size_t errlen);
int spg_aries_max_nodes(void);
/* multi-GPU nodes and their network as the platform table describes them
 * (simgrid_nodes.cpp): hosts node-0 .. node-(ranks-1) */
int spg_build_nodes(const sp_fabric *f, int ranks, char *err, size_t errlen);

/* waits that also say when the comm finished (simgrid_glue.cpp says more) */
long spg_wait_any(sg_comm_t *comms, size_t count, double *finish_time);
long spg_wait_one(sg_comm_t comm, double *finish_time);
long spg_wait_any_for(sg_comm_t *comms, size_t count, double timeout, double *finish_time);
long spg_comm_sender_pid(sg_comm_t comm);
/* a flow between two hosts that no actor receives, waited for as a comm */
sg_comm_t spg_sendto_async(sg_host_t from, sg_host_t to, double bytes);
void spg_comm_cancel(sg_comm_t comm);

/* other jobs' flows between hosts (disturbances) */
void spg_bg_start(sg_host_t from, sg_host_t to, double bytes, int src, int dst);
void spg_bg_reap(void (*done)(void *arg, int src, int dst, double bytes, double t0, double t1), void *arg);
void spg_bg_cancel_all(void);
/* fn() when no actor can go on */
void spg_on_deadlock(void (*fn)(void));

/* a message alone on its route, and messages that bypass sharing (--unshared-below) */
int spg_uncontended_init(int piecewise);
double spg_uncontended_time(sg_host_t from, sg_host_t to, double bytes);
double spg_unshared_arrival(sg_host_t from, sg_host_t to, double bytes, double start);
/* the model's latency and bandwidth factors for a message of `bytes` */
void spg_model_factors(double bytes, double *lat_factor, double *bw_factor);
void spg_unshared_reset(void);

#ifdef __cplusplus
}
#endif

#endif
