/* platform.h - the platforms: a table of built-ins, and user platform files.
 *
 * Built-ins are generated as SimGrid XML for the requested number of ranks;
 * a user file is passed through after a readability check.  Rank i runs on
 * the i-th host (built-ins name them node-0 .. node-(N-1)).
 */
#ifndef SPARSIM_PLATFORM_H
#define SPARSIM_PLATFORM_H

#include "topologies/fabric.h"

#include <stddef.h>

typedef struct {
    char xml_path[1100];   /* file to load */
    int generated;         /* 1 if xml_path is a temporary file to remove */
    char host_prefix[32];  /* "node-" for built-ins; "" for user files */
    char builder[16];      /* non-empty: the simulated backend builds it in code (daint), no file */
    sp_fabric fabric;      /* builder "nodes": the multi-GPU nodes and their network (fabric.h) */
} sp_platform;

/* How a platform comes to be. */
typedef enum {
    SP_PLATFORM_XML = 0, /* built in: written as SimGrid XML for P ranks */
    SP_PLATFORM_CODE,    /* built in: the simulated backend builds it in code (`builder`), no XML */
    SP_PLATFORM_FILE     /* the user's SimGrid XML file: every name no built-in row takes */
} sp_platform_kind;

/* One platform: a row of the table in platforms.c, which drives `sparsim
 * list`, the help's list, the validation of --platform and its messages. */
typedef struct {
    const char *name;        /* as --platform takes it */
    const char *syntax;      /* as help writes it, with its parameter: "1gbe-switch[:G]" */
    const char *summary;     /* a few words, for --help */
    const char *description; /* for `sparsim list`; '\n' where the listing breaks the line */
    sp_platform_kind kind;
    const char *builder;     /* SP_PLATFORM_CODE: the backend's builder of it ("aries") */
    const char *why_code;    /* SP_PLATFORM_CODE: why it has no SimGrid XML */
    /* SP_PLATFORM_XML: writes it for P ranks (name as given, with its parameter) */
    int (*write_xml)(const char *name, int P, void *f /* FILE* */, char *err, size_t errlen);
    const char *param;       /* the parameter after "NAME:" (NULL: none); such a row takes every
                                name that begins with its own, and its writer reads the rest */
    int max_ranks;           /* the most ranks it holds; 0: as many as a run takes */
    const char *ranks_why;   /* why max_ranks, as the refusal says it */
    const char *network;     /* the --network model it wants by default ("cm02", "lv08"); NULL: --network's
                                default.  The row says why in platforms.c */
    int gpus_per_node;       /* G, GPUs per node: rank r is local GPU r mod G of node r / G (0 or 1: flat) */
    const char *device;      /* the device profile of its GPUs (topologies/devices.c); NULL: none */
    const sp_fabric *fabric; /* builder "nodes": its nodes and network, the node count and S left to the name */
    int max_nodes;           /* with fabric: the most nodes it holds (0: 100000) */
    int unlisted;            /* 1: an older name, still taken, listed under its row's description */
} sp_platform_row;

/* The node shape of a platform name: GPUs per node (1 for flat built-ins and
 * for files) and the nodes the name gives (0 when it names no count: as many
 * as P needs, or a file).  0, or -1 with one line (unknown parameter, malformed
 * count).  P is checked against nodes x G in sp_platform_prepare. */
int sp_platform_nodes(const char *name, int *gpus_per_node, int *nodes, char *err, size_t errlen);

/* The built-in row that takes `name`, or NULL (a file's name). */
const sp_platform_row *sp_platform_find(const char *name);
/* Every row in the listing's order, the file row last. */
const sp_platform_row *sp_platform_rows(int *count);
/* The listing of `sparsim list`: one "  NAME  description" entry per listed row. */
void sp_platform_write_list(void *f /* FILE* */);
/* The platforms as --platform's help says them, "1gbe (...), ..., or a SimGrid
 * platform XML file (...)", into buf; returns the length it needs (as snprintf). */
size_t sp_platform_help(char *buf, size_t len);
/* The listed built-ins' syntaxes joined by sep ("1gbe, 1gbe-switch[:G], ..."); only those
 * with SimGrid XML when xml_only.  Returns the length it needs (as snprintf). */
size_t sp_platform_names(char *buf, size_t len, const char *sep, int xml_only);

/* The node shape of a platform name: GPUs per node (1 for flat built-ins and
 * for files) and the nodes the name gives (0 when it names no count: as many
 * as P needs, or a file).  0, or -1 with one line (unknown parameter, malformed
 * count).  P is checked against nodes x G in sp_platform_prepare. */
int sp_platform_nodes(const char *name, int *gpus_per_node, int *nodes, char *err, size_t errlen);

/* The alpha-beta figures of a platform of nodes, for closed forms that tell
 * its two link classes apart: alpha (s) and beta (s per byte) of a route
 * between two GPUs of one node, and of one between the GPUs of one rail on
 * two nodes that share a leaf (or a chassis switch), as the simulated
 * backend routes them.  0, or -1 when the platform has no nodes. */
int sp_platform_link_classes(const char *name, double *intra_alpha, double *intra_beta, double *inter_alpha,
                             double *inter_beta);

/* The in-switch reduction of the platform's nodes (NVLink SHARP, sp_fabric's
 * nvls_bw): the bytes/s a node's switch takes in; 0 where the nodes' switch
 * does not reduce (alps, flat platforms, files). */
double sp_platform_nvls(const char *name);

/* Resolves `name` (a built-in row's, or a file) for P ranks.  Returns -1 with
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
