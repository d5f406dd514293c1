/* platforms.c - built-in platforms, generated as SimGrid XML for P ranks.
 *
 *   1gbe   crossbar cluster of 1 Gbps Ethernet: every node has a private
 *          full-duplex link of 125 MB/s and 50 us to a non-blocking switch,
 *          so a route is two links (alpha = 100 us, beta = 1 / 125 MB/s).
 *   daint  Cray Aries dragonfly as on Piz Daint: 4 nodes per router, 16
 *          routers per chassis, 6 chassis per group, up to 16 groups (SimGrid
 *          3.32 needs groups <= routers per chassis; beyond it crashes), links
 *          of 5.25 GB/s (3 lanes of 14 Gbps) and 100 ns per hop.  Injection
 *          is the node's own full-duplex link to its router, 5.25 GB/s each
 *          way (10.5 GB/s both ways, near the ~10 GB/s PCIe Gen3 x16 NIC).
 *          SimGrid's limiter_link is not used: in 3.32 the dragonfly also
 *          puts one on every router, which would cap a whole router at its
 *          rate (measured: a 4-rank ring on one router ran 2.1x slower).
 *          Groups hold 384 nodes; SimGrid 3.32 joins each pair of groups by
 *          one aggregated link (10 links here, one router's global ports)
 *          attached to a single router per group, with minimal routing,
 *          where Aries spreads global links over routers and routes
 *          adaptively: traffic between groups (P > 384) is pessimistic.
 *
 * A user platform file is passed to SimGrid as it is.
 */
#include "platform.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DAINT_NODES_PER_ROUTER 4
#define DAINT_ROUTERS_PER_CHASSIS 16
#define DAINT_CHASSIS_PER_GROUP 6
#define DAINT_MAX_GROUPS 16
#define DAINT_NODES_PER_CHASSIS (DAINT_NODES_PER_ROUTER * DAINT_ROUTERS_PER_CHASSIS)
#define DAINT_NODES_PER_GROUP (DAINT_NODES_PER_CHASSIS * DAINT_CHASSIS_PER_GROUP)

int sp_platform_is_builtin(const char *name)
{
    return strcmp(name, "1gbe") == 0 || strcmp(name, "daint") == 0;
}

static const char xml_head[] = "<?xml version='1.0'?>\n"
                               "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                               "<platform version=\"4.1\">\n";

int sp_platform_write_builtin(const char *name, int P, void *fp, char *err, size_t errlen)
{
    FILE *f = fp;
    if (P < 1) {
        snprintf(err, errlen, "platform needs at least one rank");
        return -1;
    }
    if (strcmp(name, "1gbe") == 0) {
        fprintf(f, "%s", xml_head);
        fprintf(f,
                "  <!-- 1 Gbps Ethernet crossbar: private 125 MB/s, 50 us full-duplex link per node -->\n"
                "  <cluster id=\"gbe\" prefix=\"node-\" suffix=\"\" radical=\"0-%d\" speed=\"1Gf\"\n"
                "           bw=\"125MBps\" lat=\"50us\" sharing_policy=\"SPLITDUPLEX\"/>\n"
                "</platform>\n",
                P - 1);
        return 0;
    }
    if (strcmp(name, "daint") == 0) {
        int groups = (P + DAINT_NODES_PER_GROUP - 1) / DAINT_NODES_PER_GROUP;
        if (groups > DAINT_MAX_GROUPS) {
            snprintf(err, errlen,
                     "platform daint holds at most %d ranks (%d dragonfly groups of %d nodes; SimGrid 3.32 "
                     "crashes with more groups than routers per chassis)",
                     DAINT_MAX_GROUPS * DAINT_NODES_PER_GROUP, DAINT_MAX_GROUPS, DAINT_NODES_PER_GROUP);
            return -1;
        }
        int chassis = DAINT_CHASSIS_PER_GROUP;
        if (groups == 1)
            chassis = (P + DAINT_NODES_PER_CHASSIS - 1) / DAINT_NODES_PER_CHASSIS;
        int nodes = groups * chassis * DAINT_NODES_PER_CHASSIS;
        fprintf(f, "%s", xml_head);
        fprintf(f,
                "  <!-- Cray Aries dragonfly (Piz Daint): %d group(s) x %d chassis x %d routers x %d nodes;\n"
                "       5.25 GB/s full-duplex links, 100 ns per hop -->\n"
                "  <cluster id=\"daint\" prefix=\"node-\" suffix=\"\" radical=\"0-%d\" speed=\"1Gf\"\n"
                "           bw=\"5.25GBps\" lat=\"100ns\" sharing_policy=\"SPLITDUPLEX\"\n"
                "           topology=\"DRAGONFLY\" topo_parameters=\"%d,10;%d,3;%d,1;%d\"/>\n"
                "</platform>\n",
                groups, chassis, DAINT_ROUTERS_PER_CHASSIS, DAINT_NODES_PER_ROUTER, nodes - 1, groups, chassis,
                DAINT_ROUTERS_PER_CHASSIS, DAINT_NODES_PER_ROUTER);
        return 0;
    }
    snprintf(err, errlen, "unknown built-in platform '%s'", name);
    return -1;
}

int sp_platform_prepare(const char *name, int P, sp_platform *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (sp_platform_is_builtin(name)) {
        const char *tmpdir = getenv("TMPDIR");
        if (!tmpdir || !*tmpdir)
            tmpdir = "/tmp";
        snprintf(out->xml_path, sizeof out->xml_path, "%s/sparsim-platform-XXXXXX", tmpdir);
        int fd = mkstemp(out->xml_path);
        if (fd < 0) {
            snprintf(err, errlen, "cannot create a temporary platform file in %s: %s", tmpdir, strerror(errno));
            return -1;
        }
        FILE *f = fdopen(fd, "w");
        if (!f) {
            close(fd);
            unlink(out->xml_path);
            snprintf(err, errlen, "cannot write the platform file: %s", strerror(errno));
            return -1;
        }
        out->generated = 1;
        if (sp_platform_write_builtin(name, P, f, err, errlen) != 0 || fclose(f) != 0) {
            unlink(out->xml_path);
            out->generated = 0;
            if (!err[0])
                snprintf(err, errlen, "cannot write the platform file");
            return -1;
        }
        snprintf(out->host_prefix, sizeof out->host_prefix, "node-");
        return 0;
    }
    FILE *f = fopen(name, "r");
    if (!f) {
        snprintf(err, errlen, "cannot read platform file '%s': %s (built-in platforms: 1gbe, daint)", name,
                 strerror(errno));
        return -1;
    }
    char head[512];
    size_t got = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    head[got] = '\0';
    if (got == 0 || !strstr(head, "<")) {
        snprintf(err, errlen, "platform file '%s' is not a SimGrid XML platform", name);
        return -1;
    }
    snprintf(out->xml_path, sizeof out->xml_path, "%s", name);
    return 0;
}

int sp_platform_write_calibrated(void *fp, int hosts, double alpha, double bw, double both_ways_bw, double limiter)
{
    FILE *f = fp;
    int w = fprintf(f,
                    "%s"
                    "  <!-- measured by sparsim-mpi calibrate: one-way latency %.3g s, bandwidth %.4g B/s,\n"
                    "       %.4g B/s each way while both directions are busy; a route crosses two links,\n"
                    "       so each link has half the latency, and each host's limiter link (shared by\n"
                    "       what it sends and receives) carries twice the both-ways figure -->\n"
                    "  <cluster id=\"calibrated\" prefix=\"node-\" suffix=\"\" radical=\"0-%d\" speed=\"1Gf\"\n"
                    "           bw=\"%.6gBps\" lat=\"%.6gs\" sharing_policy=\"SPLITDUPLEX\"\n"
                    "           limiter_link=\"%.6gBps\"/>\n"
                    "</platform>\n",
                    xml_head, alpha, bw, both_ways_bw, hosts - 1, bw, alpha / 2, limiter);
    return w > 0 ? 0 : -1;
}

void sp_platform_release(sp_platform *p)
{
    if (p->generated)
        unlink(p->xml_path);
    p->generated = 0;
}
