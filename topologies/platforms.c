/* platforms.c - the platform table: built-in platforms, generated as SimGrid
 * XML for P ranks or built in code by the simulated backend, and the checks
 * of a user's platform file.  One row per platform (name, syntax, summary,
 * listing, how it is built, the ranks it holds) drives `sparsim list`, the
 * help's list and the validation of --platform.
 *
 *   1gbe   crossbar cluster of 1 Gbps Ethernet: every node has a private
 *          full-duplex link of 125 MB/s and 50 us to a non-blocking switch,
 *          so a route is two links (alpha = 100 us, beta = 1 / 125 MB/s).
 *   1gbe-switch[:G]  the same nodes and links behind one switch whose
 *          backplane carries G Gbps in all (default 8: 1 GB/s), shared by
 *          every flow that crosses it (SimGrid's cluster backbone, shared,
 *          no latency of its own).  A non-blocking switch needs G of at
 *          least P Gbps; below that, P flows at once (a dense ring) each get
 *          G/P Gbps instead of 1, as on an oversubscribed Ethernet fabric
 *          (edge switches joined by uplinks).  The 8 Gbps default is a
 *          chosen figure, not a measured one: the gTop-k paper does not name
 *          its switch.  Routes keep alpha = 100 us and 125 MB/s.
 *   daint  Piz Daint wired as Aries is: 4 nodes per router, 16 routers
 *          per chassis, 6 chassis per group, global links spread over every
 *          router, 50 between each pair of groups, and traffic spread as
 *          adaptive routing spreads it: over a router's 15 green links within
 *          a chassis, the 16 black links between two chassis, the 50 global
 *          links between two groups (each set's summed bandwidth shared by
 *          the flows that may take it).
 *          sim/backends/simgrid/simgrid_aries.cpp says how and where the numbers come
 *          from.  SimGrid's XML cannot express its routing, so the simulated
 *          backend builds it in code; up to the machine's 20 groups (7680
 *          ranks).
 *   daint-static  the same wiring with static minimal paths: one global
 *          link per pair of nodes between groups, one path of single green
 *          and black links within a group (what `daint` was from the Aries
 *          wiring until the spread routing; `daint-aries` is its first name).
 *
 *   daint-simgrid  SimGrid 3.32's own DRAGONFLY cluster with Piz Daint's
 *          sizes (what `daint` was before the Aries wiring; kept to compare
 *          and to reproduce results recorded with it): up to 16 groups
 *          (SimGrid 3.32 needs groups <= routers per chassis; beyond it
 *          crashes), links of 5.25 GB/s (3 lanes of 14 Gbps) and 100 ns per
 *          hop.  Injection is the node's own full-duplex link to its router,
 *          5.25 GB/s each way (10.5 GB/s both ways, near the ~10 GB/s PCIe
 *          Gen3 x16 NIC).  SimGrid's limiter_link is not used: in 3.32 the
 *          dragonfly also puts one on every router, which would cap a whole
 *          router at its rate (measured: a 4-rank ring on one router ran 2.1x
 *          slower).  Groups hold 384 nodes; SimGrid 3.32 joins each pair of
 *          groups by one aggregated link (10 links here, one router's global
 *          ports) attached to a single router per group, with minimal
 *          routing, where Aries spreads global links over routers and routes
 *          adaptively: traffic between groups (P > 384) is pessimistic.
 *
 *   dgx-h100[:N[:S]], dgx-h200[:N[:S]], dgx-b200[:N[:S]], roce[:N[:S]],
 *   alps[:N]  N nodes of several GPUs, a rank a GPU: NVLink inside a node, a
 *          NIC per GPU, a rail-optimized (DGX) or rack-wired (roce) two-tier
 *          fat-tree with S:1 leaf uplinks, or Alps' Slingshot dragonfly.  The
 *          numbers and their sources are below (sp_fabric rows);
 *          sim/backends/simgrid/simgrid_nodes.cpp builds them in code.
 *
 * A user platform file is read before SimGrid sees it, for what SimGrid
 * would abort or crash on instead of saying what is wrong: a bandwidth that
 * is not positive, a negative latency or speed, fewer hosts than ranks, and
 * two of the ranks' hosts without a route between them (a zone routed
 * None, a Full zone missing the route, a Floyd or Dijkstra zone whose
 * routes do not join them).  What this reading does not check is left to
 * SimGrid's own parser, whose errors the backend turns into one line.
 */
#include "platform.h"
#include "traces/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
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
/* the sizes as daint-simgrid's row says them */
_Static_assert(DAINT_MAX_GROUPS == 16 && DAINT_NODES_PER_GROUP == 384, "daint-simgrid's ranks_why states the sizes");

#define ARIES_MAX_NODES (20 * 384) /* sim/backends/simgrid/simgrid_aries.cpp: 20 groups of 384 nodes */
#define GBE_SWITCH_DEFAULT_GBPS 8.0

static const char xml_head[] = "<?xml version='1.0'?>\n"
                               "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                               "<platform version=\"4.1\">\n";

static int write_1gbe(const char *name, int P, void *fp, char *err, size_t errlen)
{
    (void)name;
    (void)err;
    (void)errlen;
    FILE *f = fp;
    fprintf(f, "%s", xml_head);
    fprintf(f,
            "  <!-- 1 Gbps Ethernet crossbar: private 125 MB/s, 50 us full-duplex link per node -->\n"
            "  <cluster id=\"gbe\" prefix=\"node-\" suffix=\"\" radical=\"0-%d\" speed=\"1Gf\"\n"
            "           bw=\"125MBps\" lat=\"50us\" sharing_policy=\"SPLITDUPLEX\"/>\n"
            "</platform>\n",
            P - 1);
    return 0;
}

/* the backplane of 1gbe-switch[:G] in Gbps (what follows the row's name);
 * -1 when the name is malformed */
static double gbe_switch_gbps(const char *rest)
{
    if (!*rest)
        return GBE_SWITCH_DEFAULT_GBPS;
    if (*rest != ':' || !rest[1] || rest[1] == ' ')
        return -1;
    char *end;
    errno = 0;
    double g = strtod(rest + 1, &end);
    return *end || errno || !(g >= 0.001) || g > 1e6 ? -1 : g;
}

static int write_1gbe_switch(const char *name, int P, void *fp, char *err, size_t errlen)
{
    FILE *f = fp;
    double g = gbe_switch_gbps(name + strlen("1gbe-switch"));
    if (g < 0) {
        snprintf(err, errlen, "platform '%.60s': write 1gbe-switch or 1gbe-switch:G with G the backplane in Gbps "
                              "(0.001..1e6)", name);
        return -1;
    }
    fprintf(f, "%s", xml_head);
    fprintf(f,
            "  <!-- 1 Gbps Ethernet behind one switch: private 125 MB/s, 50 us full-duplex link per node,\n"
            "       a backplane of %g Gbps shared by every flow that crosses it -->\n"
            "  <cluster id=\"gbe\" prefix=\"node-\" suffix=\"\" radical=\"0-%d\" speed=\"1Gf\"\n"
            "           bw=\"125MBps\" lat=\"50us\" sharing_policy=\"SPLITDUPLEX\"\n"
            "           bb_bw=\"%.17gBps\" bb_lat=\"0us\" bb_sharing_policy=\"SHARED\"/>\n"
            "</platform>\n",
            g, P - 1, g * 1e9 / 8.0);
    return 0;
}

/* P within the row's groups (its max_ranks, checked before) */
static int write_daint_simgrid(const char *name, int P, void *fp, char *err, size_t errlen)
{
    (void)name;
    (void)err;
    (void)errlen;
    FILE *f = fp;
    int groups = (P + DAINT_NODES_PER_GROUP - 1) / DAINT_NODES_PER_GROUP;
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

/* ---- multi-GPU nodes (built in code: sim/backends/simgrid/simgrid_nodes.cpp) ----
 *
 * A rank is a GPU: rank r is local GPU r mod G of node r / G.  Sources:
 *  [ML]    S. Bekman, "Machine Learning Engineering", network/README.md
 *          (github.com/stas00/ml-engineering): NVLink 4 18 links, 450 GB/s
 *          per direction per GPU (H100, H200, GH200); NVLink 5 900 GB/s per
 *          direction (B200); 8 NICs of 400 Gb/s per DGX H100 node, one per
 *          GPU (rails); DGX SuperPOD scalable units of 32 nodes; 51.2 Tb/s
 *          Ethernet switches (64 x 800 GbE).
 *  [NCCL]  NVIDIA/nccl issue 1264: H100 point to point over NVLink measured
 *          at about 380 of 450 GB/s one way.
 *  [SimAI] aliyun/SimAI docs/Tutorial.md, its topology templates: 25 ns per
 *          NVLink, 500 ns per NIC.
 *  [ALCF]  alcf.anl.gov, Aurora interconnect: Slingshot's Rosetta switch has
 *          64 ports of 200 Gb/s; dragonfly of diameter 3 switch hops.
 *  [CSCS]  eth-cscs/cscs-docs docs/alps/hardware.md: 2,688 GH200 nodes in 24
 *          cabinets of 112 (8 chassis x 7 blades x 2 nodes), 4 GH200 and 4
 *          NICs per node.
 *  [GK]    G. Lockwood, glennklockwood.com/garden/dragonfly: a typical Cray
 *          EX group has 32 Slingshot switches of 64 ports, each with up to 16
 *          ports to endpoints, 31 to the other switches of its group and up
 *          to 16 to other groups.
 * NVLink bandwidth is the data sheet's, not [NCCL]'s measured 380 GB/s: the
 * measurement exists for H100 only, and the three DGX rows keep one rule
 * (line rates, as every other link here).  Switch latencies are assumed:
 * no data sheet we could check states them. */
#define NIC_400G (400e9 / 8) /* 400 Gb/s, ConnectX-7 NDR / 400 GbE, per direction [ML] */
#define NVLINK4 450e9        /* per direction per GPU [ML] */
#define NVLINK5 900e9        /* per direction per GPU [ML] */
#define NVLINK_LAT 25e-9     /* per link [SimAI] */
#define NIC_LAT 500e-9       /* per NIC [SimAI] */
/* per InfiniBand switch crossed: assumed, of the order of IB switches' port-to-port latency */
#define IB_SWITCH_LAT 130e-9
#define MAX_NODES 100000     /* a node count's sanity bound where the machine states none */

/* DGX H100 / H200 / B200 SuperPOD: 8 GPUs on NVSwitch; NIC j (rail j) to the
 * leaf of rail j of its scalable unit of 32 nodes [ML]; leaves joined by a
 * spine layer; a leaf's uplinks carry its 32 downlinks x 400 Gb/s / S.  DGX
 * H200 and DGX B200 keep DGX H100's 8 ConnectX-7 NICs of 400 Gb/s (their
 * data sheets as recalled, not checked here) */
/* NVLink SHARP (NVLS): what a node's NVSwitch takes in per second for
 * reducing and multicasting, every GPU's pushes together.  No data sheet
 * states it; each is fitted to one published nccl-tests figure of NCCL's
 * default (NVLS) allreduce on one node, whose large-size bus bandwidth is
 * 2(G-1) E / (G(G+1)) on this model (analysis/nccl_model.c), so
 * E = busbw G(G+1) / (2(G-1)) with G = 8:
 *   H100, NVSwitch gen 3: 476 GB/s busbw (nccl-tests issue 290, a maintainer
 *     gives ~480 in issue 212) -> 2448 GB/s; H200 has the same NVSwitch, and
 *     its own measurement (475 GB/s, nccl-tests issue 272) is the check;
 *   B200, NVSwitch gen 4: 830 GB/s busbw (nccl issue 1807) -> 4269 GB/s.
 * bench/modern.md rows M5-M7 say which is a fit and which a check. */
#define NVLS_H100 (476e9 * 72 / 14)
#define NVLS_B200 (830e9 * 72 / 14)
#define DGX_FABRIC(nvlink, nvls)                                                                                     \
    {.kind = SP_FABRIC_LEAF_SPINE, .gpus_per_node = 8, .gpu_bw = (nvlink), .gpu_lat = NVLINK_LAT,                    \
     .nic_bw = NIC_400G, .nic_lat = NIC_LAT, .switch_lat = IB_SWITCH_LAT, .nvls_bw = (nvls), .rail_optimized = 1,    \
     .nodes_per_leaf = 32, .oversub = 1}
static const sp_fabric dgx_h100_fabric = DGX_FABRIC(NVLINK4, NVLS_H100);
static const sp_fabric dgx_h200_fabric = DGX_FABRIC(NVLINK4, NVLS_H100); /* H200: NVLink 4 as H100 [ML] */
static const sp_fabric dgx_b200_fabric = DGX_FABRIC(NVLINK5, NVLS_B200);
/* The same H100 nodes on a 400 GbE RoCE leaf-spine wired by racks, not rails:
 * a leaf takes all 8 NICs of 8 nodes, 64 ports of 400 GbE down and, at 1:1,
 * 64 up (a 51.2 Tb/s switch run as 128 x 400 GbE [ML]; 8 nodes a leaf is a
 * chosen figure); 300 ns per Ethernet switch crossed, assumed. */
static const sp_fabric roce_fabric = {.kind = SP_FABRIC_LEAF_SPINE, .gpus_per_node = 8, .gpu_bw = NVLINK4,
                                      .gpu_lat = NVLINK_LAT, .nic_bw = NIC_400G, .nic_lat = NIC_LAT,
                                      .switch_lat = 300e-9, .nvls_bw = NVLS_H100, .rail_optimized = 0,
                                      .nodes_per_leaf = 8, .oversub = 1};
/* Alps (CSCS): 4 GH200 per node [CSCS], each pair of GPUs joined directly by
 * 6 NVLink 4 links of 25 GB/s per direction (150 GB/s; recalled, not checked:
 * the quad-GH200 blade wires its GPUs all to all).  4 Slingshot-11 NICs of
 * 200 Gb/s per node [CSCS, ALCF].  Assumed wiring: a dragonfly group is one
 * cabinet of 112 nodes [CSCS], 4 switches per chassis (32 per group, as
 * [GK]'s typical group), NIC j of the 14 nodes of a chassis on its switch j
 * (14 endpoint ports of a switch's 16); one 200 Gb/s link between every two
 * switches of a group [GK] (built as one aggregate per switch, adaptive
 * routing's fluid limit within a group); 16 global ports per switch [GK],
 * so 512 per group over the 23 other groups of the 24 GH200 cabinets: floor(512 / 23)
 * = 22 global links per pair of groups (Alps' real global wiring, and the
 * groups of its other partitions, are not in any source we found).  300 ns
 * per Rosetta switch crossed, assumed. */
static const sp_fabric alps_fabric = {.kind = SP_FABRIC_DRAGONFLY, .gpus_per_node = 4, .gpu_bw = 150e9,
                                      .gpu_lat = NVLINK_LAT, .nic_bw = 200e9 / 8, .nic_lat = NIC_LAT,
                                      .switch_lat = 300e-9, .nodes_per_group = 112, .nics_per_switch = 14,
                                      .links_per_pair = 22, .local_bw = 200e9 / 8, .global_bw = 200e9 / 8};
#define ALPS_NODES (24 * 112) /* [CSCS] */
#define NODES_WHY_CODE "its routes are chosen per pair of GPUs over rails and aggregates, which SimGrid's XML " \
                       "could only list pair by pair"

#define ARIES_WHY_CODE                                                                                             \
    "its routing picks a global link per pair of nodes, which the XML cannot say; daint-simgrid has XML"
#define ARIES_RANKS_WHY "20 groups of 384 nodes, as Piz Daint"
#define LIST_INDENT "\n                 " /* a listing's continuation line, under the description */

/* a DGX SuperPOD row: its name, GPU, NVLink, device profile and fabric */
#define DGX_ROW(nm, gpu, nvl, dev, fab)                                                                              \
    {.name = nm,                                                                                                     \
     .syntax = nm "[:N[:S]]",                                                                                        \
     .summary = "N DGX " gpu " nodes on InfiniBand rails, S:1 leaf uplinks",                                        \
     .description = "N nodes of 8 " gpu " on NVSwitch (" nvl "), 8 NICs of 400 Gb/s, one a rail;" LIST_INDENT      \
                    "a leaf per rail per 32 nodes, a spine; leaf uplinks S:1 (" nm ":N:S, 1 by default)",          \
     .kind = SP_PLATFORM_CODE,                                                                                       \
     .builder = "nodes",                                                                                             \
     .why_code = NODES_WHY_CODE,                                                                                     \
     .param = "N, the nodes (as many as the ranks need by default), and S, the uplinks' oversubscription (1..64)", \
     .network = RDMA_MODEL,                                                                                          \
     .gpus_per_node = 8,                                                                                             \
     .device = dev,                                                                                                  \
     .fabric = &fab}

/* The platforms, in the order `sparsim list` and the help show them.
 *
 * `network`, the SimGrid network model each row wants, for the plan to
 * apply where --network is not given (until it does, --network's own
 * default applies to every row): lv08 for the 1 GbE rows, whose MPI runs
 * over TCP (LV08's latency and bandwidth factors and its cross-traffic, the
 * acknowledgements on the reverse path, are TCP's); cm02 for Aries, NVLink,
 * InfiniBand, RoCE and Slingshot, which are not TCP: their links carry a
 * message at their rate after their latency, with no TCP factors and no
 * reverse traffic (RDMA and credit-based flow control). */
#define TCP_MODEL "lv08"
#define RDMA_MODEL "cm02"
static const sp_platform_row platforms[] = {
    {.name = "1gbe",
     .syntax = "1gbe",
     .summary = "1 Gbps Ethernet crossbar",
     .description = "1 Gbps Ethernet crossbar: 125 MB/s, 50 us per link",
     .kind = SP_PLATFORM_XML,
     .write_xml = write_1gbe,
     .network = TCP_MODEL},
    {.name = "1gbe-switch",
     .syntax = "1gbe-switch[:G]",
     .summary = "the same behind a G Gbps backplane",
     .description = "the same behind one switch with a backplane of G Gbps shared by all flows" LIST_INDENT
                    "(1gbe-switch:G; 8 by default, so P > 8 ranks sending at once contend)",
     .kind = SP_PLATFORM_XML,
     .write_xml = write_1gbe_switch,
     .param = "G, the backplane in Gbps (0.001..1e6; 8 by default)",
     .network = TCP_MODEL},
    {.name = "daint",
     .syntax = "daint",
     .summary = "Piz Daint's Cray Aries dragonfly, wired as Aries is, traffic spread over parallel links as "
                "adaptive routing spreads it, up to 7680 ranks",
     .description = "Piz Daint's Cray Aries dragonfly wired as Aries is: groups of 384 nodes, global links" LIST_INDENT
                    "on every router, 50 per pair of groups; traffic spread over a router's green" LIST_INDENT
                    "links, the black links between two chassis and the global links between two" LIST_INDENT
                    "groups (adaptive routing's fluid limit); up to 7680 ranks",
     .kind = SP_PLATFORM_CODE,
     .builder = "aries",
     .why_code = ARIES_WHY_CODE,
     .max_ranks = ARIES_MAX_NODES,
     .ranks_why = ARIES_RANKS_WHY,
     .network = RDMA_MODEL},
    {.name = "daint-static",
     .syntax = "daint-static",
     .summary = "the same wiring, static minimal paths (one global link per pair of nodes)",
     .description = "the same wiring, static minimal paths: one global link picked per pair of" LIST_INDENT
                    "nodes, single green and black links within a group (daint-aries: the same)",
     .kind = SP_PLATFORM_CODE,
     .builder = "aries-static",
     .why_code = ARIES_WHY_CODE,
     .max_ranks = ARIES_MAX_NODES,
     .ranks_why = ARIES_RANKS_WHY,
     .network = RDMA_MODEL},
    {.name = "daint-aries", /* the first name of daint-static */
     .syntax = "daint-aries",
     .summary = "daint-static's first name",
     .description = "daint-static's first name",
     .kind = SP_PLATFORM_CODE,
     .builder = "aries-static",
     .why_code = ARIES_WHY_CODE,
     .max_ranks = ARIES_MAX_NODES,
     .ranks_why = ARIES_RANKS_WHY,
     .network = RDMA_MODEL,
     .unlisted = 1},
    {.name = "daint-simgrid", /* SimGrid's own dragonfly, `daint` until the Aries wiring */
     .syntax = "daint-simgrid",
     .summary = "SimGrid's own dragonfly with Daint's sizes, the earlier daint, up to 6144 ranks",
     .description = "SimGrid 3.32's own dragonfly with Daint's sizes (the earlier daint): one link" LIST_INDENT
                    "per pair of groups on one router (pessimistic past 384); up to 6144 ranks",
     .kind = SP_PLATFORM_XML,
     .write_xml = write_daint_simgrid,
     .max_ranks = DAINT_MAX_GROUPS * DAINT_NODES_PER_GROUP,
     .ranks_why = "16 dragonfly groups of 384 nodes; SimGrid 3.32 crashes with more groups than routers per chassis",
     .network = RDMA_MODEL},
    DGX_ROW("dgx-h100", "H100", "NVLink 4: 450 GB/s", "h100", dgx_h100_fabric),
    DGX_ROW("dgx-h200", "H200", "NVLink 4: 450 GB/s", "h200", dgx_h200_fabric),
    DGX_ROW("dgx-b200", "B200", "NVLink 5: 900 GB/s", "b200", dgx_b200_fabric),
    {.name = "roce",
     .syntax = "roce[:N[:S]]",
     .summary = "the same H100 nodes on a 400 GbE RoCE leaf-spine, S:1",
     .description = "N nodes of 8 H100 on NVSwitch, 8 NICs of 400 GbE, all 8 of 8 nodes on one leaf" LIST_INDENT
                    "(by racks, not rails), a spine; leaf uplinks S:1 (roce:N:S, 1 by default)",
     .kind = SP_PLATFORM_CODE,
     .builder = "nodes",
     .why_code = NODES_WHY_CODE,
     .param = "N, the nodes (as many as the ranks need by default), and S, the leaf uplinks' oversubscription (1..64)",
     .network = RDMA_MODEL,
     .gpus_per_node = 8,
     .device = "h100",
     .fabric = &roce_fabric},
    {.name = "alps",
     .syntax = "alps[:N]",
     .summary = "N Alps nodes of 4 GH200, Slingshot-11 dragonfly, up to 10752 ranks",
     .description = "Alps (CSCS): N nodes of 4 GH200 on NVLink, 4 Slingshot-11 NICs of 200 Gb/s;" LIST_INDENT
                    "dragonfly groups of 112 nodes, 22 global links per pair of groups spread as" LIST_INDENT
                    "daint spreads them; up to 10752 ranks (alps:N; as the ranks need by default)",
     .kind = SP_PLATFORM_CODE,
     .builder = "nodes",
     .why_code = NODES_WHY_CODE,
     .param = "N, the nodes (1..2688; as many as the ranks need by default)",
     .max_ranks = ALPS_NODES * 4,
     .ranks_why = "2688 nodes of 4 GH200, as Alps",
     .network = RDMA_MODEL,
     .gpus_per_node = 4,
     .device = "gh200",
     .fabric = &alps_fabric,
     .max_nodes = ALPS_NODES},
    {.name = "FILE.xml",
     .syntax = "a SimGrid platform XML file",
     .summary = "rank i on its i-th host",
     .description = "any SimGrid platform; rank i runs on the platform's i-th host",
     .kind = SP_PLATFORM_FILE},
};

#define NPLATFORMS ((int)(sizeof platforms / sizeof platforms[0]))

const sp_platform_row *sp_platform_find(const char *name)
{
    for (int i = 0; i < NPLATFORMS; i++) {
        const sp_platform_row *r = &platforms[i];
        if (r->kind != SP_PLATFORM_FILE &&
            (r->param ? strncmp(name, r->name, strlen(r->name)) == 0 : strcmp(name, r->name) == 0))
            return r;
    }
    return NULL;
}

const sp_platform_row *sp_platform_rows(int *count)
{
    *count = NPLATFORMS;
    return platforms;
}

int sp_platform_is_builtin(const char *name) { return sp_platform_find(name) != NULL; }

void sp_platform_write_list(void *fp)
{
    FILE *f = fp;
    for (int i = 0; i < NPLATFORMS; i++)
        if (!platforms[i].unlisted)
            fprintf(f, "  %-14s %s\n", platforms[i].name, platforms[i].description);
}

size_t sp_platform_help(char *buf, size_t len)
{
    size_t w = 0;
    for (int i = 0; i < NPLATFORMS; i++) {
        const sp_platform_row *r = &platforms[i];
        if (r->unlisted)
            continue;
        int n = snprintf(buf + (w < len ? w : len), w < len ? len - w : 0, "%s%s%s (%s)", w ? ", " : "",
                         r->kind == SP_PLATFORM_FILE ? "or " : "", r->syntax, r->summary);
        w += n > 0 ? (size_t)n : 0;
    }
    return w;
}

size_t sp_platform_names(char *buf, size_t len, const char *sep, int xml_only)
{
    size_t w = 0;
    if (len)
        buf[0] = '\0';
    for (int i = 0; i < NPLATFORMS; i++) {
        const sp_platform_row *r = &platforms[i];
        if (r->unlisted || r->kind == SP_PLATFORM_FILE || (xml_only && r->kind != SP_PLATFORM_XML))
            continue;
        int n = snprintf(buf + (w < len ? w : len), w < len ? len - w : 0, "%s%s", w ? sep : "", r->syntax);
        w += n > 0 ? (size_t)n : 0;
    }
    return w;
}

/* P within what the row holds: 0, or -1 with the line that says so */
static int check_ranks(const sp_platform_row *r, const char *name, int P, char *err, size_t errlen)
{
    if (P >= 1 && (!r->max_ranks || P <= r->max_ranks))
        return 0;
    if (r->kind == SP_PLATFORM_CODE && r->max_ranks) /* nothing before has refused P < 1 */
        snprintf(err, errlen, "platform %s holds 1 to %d ranks (%s)", name, r->max_ranks, r->ranks_why);
    else if (P >= 1)
        snprintf(err, errlen, "platform %s holds at most %d ranks (%s)", name, r->max_ranks, r->ranks_why);
    else
        snprintf(err, errlen, "platform needs at least one rank");
    return -1;
}

/* a fabric row's name: "NAME", "NAME:N" or, on a leaf-spine, "NAME:N:S";
 * the node count (0: not given) and S (1 when not given).  0, or -1 with the
 * line that says what the name may be */
static int parse_nodes(const sp_platform_row *r, const char *name, int *nodes, double *oversub, char *err,
                       size_t errlen)
{
    const char *rest = name + strlen(r->name);
    int leaf_spine = r->fabric->kind == SP_FABRIC_LEAF_SPINE;
    int most = r->max_nodes ? r->max_nodes : MAX_NODES;
    *nodes = 0;
    *oversub = 1;
    int ok = 1;
    if (*rest) {
        char *end = NULL;
        long n = -1;
        ok = rest[0] == ':' && rest[1] >= '0' && rest[1] <= '9';
        if (ok) {
            errno = 0;
            n = strtol(rest + 1, &end, 10);
            ok = !errno && n >= 1 && n <= most && (!*end || (leaf_spine && *end == ':'));
        }
        if (ok && *end) { /* ":S" */
            const char *sv = end + 1;
            ok = *sv >= '0' && *sv <= '9';
            double sx = ok ? strtod(sv, &end) : 0;
            ok = ok && !*end && sx >= 1 && sx <= 64;
            *oversub = sx;
        }
        *nodes = ok ? (int)n : 0;
    }
    if (ok)
        return 0;
    if (leaf_spine)
        snprintf(err, errlen, "platform '%.60s': write %s, %s:N or %s:N:S with N the nodes (1..%d) and S the leaf "
                 "uplinks' oversubscription (1..64)", name, r->name, r->name, r->name, most);
    else
        snprintf(err, errlen, "platform '%.60s': write %s or %s:N with N the nodes (1..%d)", name, r->name, r->name,
                 most);
    return -1;
}

int sp_platform_nodes(const char *name, int *gpus_per_node, int *nodes, char *err, size_t errlen)
{
    const sp_platform_row *r = sp_platform_find(name);
    *gpus_per_node = r && r->gpus_per_node > 1 ? r->gpus_per_node : 1;
    *nodes = 0;
    double oversub;
    return r && r->fabric ? parse_nodes(r, name, nodes, &oversub, err, errlen) : 0;
}

/* a fabric row's nodes for P ranks into f: 0, or -1 with the line that says
 * why they do not hold P */
static int prepare_fabric(const sp_platform_row *r, const char *name, int P, sp_fabric *f, char *err, size_t errlen)
{
    int nodes;
    double oversub;
    if (parse_nodes(r, name, &nodes, &oversub, err, errlen) != 0)
        return -1;
    int G = r->fabric->gpus_per_node, most = r->max_nodes ? r->max_nodes : MAX_NODES;
    if (!nodes && (P + G - 1) / G > most) {
        snprintf(err, errlen, "platform %s holds at most %d nodes of %d GPUs (%d ranks)", name, most, G, most * G);
        return -1;
    }
    if (nodes && (long)nodes * G < P) {
        snprintf(err, errlen, "platform %s holds %ld ranks (%d node%s of %d GPUs), fewer than --ranks %d", name,
                 (long)nodes * G, nodes, nodes == 1 ? "" : "s", G, P);
        return -1;
    }
    *f = *r->fabric;
    f->nodes = nodes ? nodes : (P + G - 1) / G;
    f->oversub = oversub;
    return 0;
}

int sp_platform_link_classes(const char *name, double *intra_alpha, double *intra_beta, double *inter_alpha,
                             double *inter_beta)
{
    const sp_platform_row *r = sp_platform_find(name);
    if (!r || !r->fabric)
        return -1;
    const sp_fabric *f = r->fabric;
    /* as simgrid_nodes.cpp routes them: a leaf-spine node's two NVSwitch
     * ports, a dragonfly node's one GPU-to-GPU link; between nodes, the two
     * NICs and the one switch of a shared leaf or chassis switch */
    *intra_alpha = (f->kind == SP_FABRIC_LEAF_SPINE ? 2 : 1) * f->gpu_lat;
    *intra_beta = 1.0 / f->gpu_bw;
    *inter_alpha = 2 * f->nic_lat + f->switch_lat;
    *inter_beta = 1.0 / f->nic_bw;
    return 0;
}

double sp_platform_nvls(const char *name)
{
    const sp_platform_row *r = sp_platform_find(name);
    if (!r || !r->fabric || r->fabric->kind != SP_FABRIC_LEAF_SPINE || !(r->fabric->nvls_bw > 0))
        return 0.0;
    return r->fabric->nvls_bw;
}

int sp_platform_write_builtin(const char *name, int P, void *fp, char *err, size_t errlen)
{
    if (P < 1) {
        snprintf(err, errlen, "platform needs at least one rank");
        return -1;
    }
    const sp_platform_row *r = sp_platform_find(name);
    if (!r) {
        snprintf(err, errlen, "unknown built-in platform '%s'", name);
        return -1;
    }
    if (r->kind == SP_PLATFORM_CODE) {
        snprintf(err, errlen, "platform %s is built in code, not as SimGrid XML (%s)", name, r->why_code);
        return -1;
    }
    if (check_ranks(r, name, P, err, errlen) != 0)
        return -1;
    return r->write_xml(name, P, fp, err, errlen);
}

/* ---- checking a platform file --------------------------------------------- */

#define MAX_PLATFORM_BYTES ((size_t)256 << 20)

typedef struct {
    char *id;
    int zone;  /* the zone it is in; -1 for the outermost zone itself */
    int kind;  /* NODE_HOST, NODE_ROUTER, NODE_ZONE */
    int zone_of; /* NODE_ZONE: the zone it stands for */
} pnode;

enum { NODE_HOST, NODE_ROUTER, NODE_ZONE };

typedef struct {
    char id[128], routing[32];
    int parent, node;
} pzone;

typedef struct {
    int zone, sym;
    char *src, *dst;
    int s, d; /* resolved: node indices, or -1 */
} proute;

typedef struct {
    const char *path; /* as shown in messages */
    const char *text;
    pnode *nodes;
    int nnodes, capnodes;
    pzone *zones;
    int nzones, capzones;
    proute *routes;
    int nroutes, caproutes;
    int oom;
} pcheck;

static void *grow(void *p, int *cap, int need, size_t size, int *oom)
{
    if (need <= *cap)
        return p;
    int nc = *cap ? *cap * 2 : 64;
    while (nc < need)
        nc *= 2;
    void *np = realloc(p, (size_t)nc * size);
    if (!np) {
        *oom = 1;
        return NULL;
    }
    *cap = nc;
    return np;
}

static int add_node(pcheck *c, const char *id, size_t idlen, int zone, int kind, int zone_of)
{
    pnode *nn = grow(c->nodes, &c->capnodes, c->nnodes + 1, sizeof *nn, &c->oom);
    if (!nn)
        return -1;
    c->nodes = nn;
    char *copy = strndup(id, idlen);
    if (!copy) {
        c->oom = 1;
        return -1;
    }
    c->nodes[c->nnodes] = (pnode){copy, zone, kind, zone_of};
    return c->nnodes++;
}

static int line_of(const pcheck *c, const char *at)
{
    int line = 1;
    for (const char *s = c->text; s < at; s++)
        line += *s == '\n';
    return line;
}

/* the attributes of one tag, decoded */
#define MAX_ATTRS 32
typedef struct {
    char name[MAX_ATTRS][32];
    char *value[MAX_ATTRS];
    int count;
} pattrs;

static void attrs_free(pattrs *a)
{
    for (int i = 0; i < a->count; i++)
        free(a->value[i]);
    a->count = 0;
}

static const char *attr(const pattrs *a, const char *name)
{
    for (int i = 0; i < a->count; i++)
        if (strcmp(a->name[i], name) == 0)
            return a->value[i];
    return NULL;
}

/* a quoted value with the five XML entities decoded */
static char *decode(const char *s, size_t n)
{
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    size_t w = 0;
    static const struct {
        const char *ent;
        char c;
    } ents[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
    for (size_t i = 0; i < n;) {
        int done = 0;
        for (size_t e = 0; s[i] == '&' && e < 5 && !done; e++) {
            size_t el = strlen(ents[e].ent);
            if (i + el <= n && strncmp(s + i, ents[e].ent, el) == 0) {
                out[w++] = ents[e].c;
                i += el;
                done = 1;
            }
        }
        if (!done)
            out[w++] = s[i++];
    }
    out[w] = '\0';
    return out;
}

/* the number at the start of a SimGrid quantity ("125MBps", "-5us") and
 * whether it is one at all; the unit is SimGrid's to check */
static int leading_number(const char *v, double *x)
{
    char *end;
    while (*v == ' ' || *v == '\t')
        v++;
    *x = strtod(v, &end);
    return end != v;
}

/* checks the bandwidths, latencies and speeds a tag sets */
static int check_quantities(const pcheck *c, const char *tag, const char *elem, const pattrs *a, char *err,
                            size_t errlen)
{
    static const char *const bws[] = {"bandwidth", "bw", "bb_bw", "limiter_link", "loopback_bw", "bw_in", "bw_out"};
    static const char *const lats[] = {"latency", "lat", "bb_lat", "loopback_lat"};
    const char *id = attr(a, "id");
    char where[300];
    snprintf(where, sizeof where, "platform file '%s' line %d: %s%s%.100s%s", c->path, line_of(c, tag), elem,
             id ? " '" : "", id ? id : "", id ? "'" : "");
    for (size_t i = 0; i < sizeof bws / sizeof bws[0]; i++) {
        const char *v = attr(a, bws[i]);
        /* a wifi link lists one bandwidth per rate */
        for (const char *p = v; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
            double x;
            if (leading_number(p, &x) && !(x > 0 && isfinite(x))) {
                snprintf(err, errlen, "%s has %s=\"%.60s\": a bandwidth must be positive and finite", where, bws[i], v);
                return -1;
            }
        }
    }
    for (size_t i = 0; i < sizeof lats / sizeof lats[0]; i++) {
        const char *v = attr(a, lats[i]);
        double x;
        if (v && leading_number(v, &x) && !(x >= 0 && isfinite(x))) {
            snprintf(err, errlen, "%s has %s=\"%.60s\": a latency must be zero or positive, and finite", where, lats[i],
                     v);
            return -1;
        }
    }
    const char *sp = attr(a, "speed");
    if (sp && (!strcmp(elem, "host") || !strcmp(elem, "cluster") || !strcmp(elem, "cabinet") || !strcmp(elem, "peer")))
        for (const char *p = sp; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
            double x;
            if (leading_number(p, &x) && !(x > 0 && isfinite(x))) {
                snprintf(err, errlen, "%s has speed=\"%.60s\": a speed must be positive and finite", where, sp);
                return -1;
            }
        }
    return 0;
}

/* the hosts a cluster or cabinet makes: prefix, each number of radical
 * ("0-99" or "0-3,8,10-11"), suffix */
static int add_radical_hosts(pcheck *c, const pattrs *a, int zone, const char *tag, char *err, size_t errlen)
{
    const char *pre = attr(a, "prefix"), *suf = attr(a, "suffix"), *rad = attr(a, "radical");
    if (!rad)
        return 0; /* SimGrid says what is missing */
    pre = pre ? pre : "";
    suf = suf ? suf : "";
    for (const char *p = rad; *p;) {
        char *end;
        long lo = strtol(p, &end, 10), hi = lo;
        if (end == p)
            return 0;
        if (*end == '-') {
            const char *q = end + 1;
            hi = strtol(q, &end, 10);
            if (end == q)
                return 0;
        }
        if (lo < 0 || hi < lo || hi - lo > 10000000) {
            snprintf(err, errlen, "platform file '%s' line %d: radical=\"%.60s\" is not a list of ranges of hosts",
                     c->path, line_of(c, tag), rad);
            return -1;
        }
        for (long v = lo; v <= hi; v++) {
            char name[400];
            int len = snprintf(name, sizeof name, "%.180s%ld%.180s", pre, v, suf);
            if (add_node(c, name, (size_t)len, zone, NODE_HOST, -1) < 0)
                return -1;
        }
        p = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end)
            return 0;
    }
    return 0;
}

static int add_zone(pcheck *c, const char *id, const char *routing, int parent)
{
    pzone *nz = grow(c->zones, &c->capzones, c->nzones + 1, sizeof *nz, &c->oom);
    if (!nz)
        return -1;
    c->zones = nz;
    pzone *z = &c->zones[c->nzones];
    snprintf(z->id, sizeof z->id, "%s", id ? id : "");
    snprintf(z->routing, sizeof z->routing, "%s", routing ? routing : "");
    z->parent = parent;
    z->node = -1;
    if (parent >= 0 && (z->node = add_node(c, id ? id : "", id ? strlen(id) : 0, parent, NODE_ZONE, c->nzones)) < 0)
        return -1;
    return c->nzones++;
}

static int add_route(pcheck *c, const pattrs *a, int zone)
{
    const char *src = attr(a, "src"), *dst = attr(a, "dst"), *sym = attr(a, "symmetrical");
    if (!src || !dst || zone < 0)
        return 0;
    proute *nr = grow(c->routes, &c->caproutes, c->nroutes + 1, sizeof *nr, &c->oom);
    if (!nr)
        return -1;
    c->routes = nr;
    proute *r = &c->routes[c->nroutes];
    r->zone = zone;
    r->sym = !(sym && (!strcmp(sym, "NO") || !strcmp(sym, "no") || !strcmp(sym, "false")));
    r->src = strdup(src);
    r->dst = strdup(dst);
    r->s = r->d = -1;
    if (!r->src || !r->dst) {
        free(r->src);
        free(r->dst);
        c->oom = 1;
        return -1;
    }
    c->nroutes++;
    return 0;
}

/* reads the elements: zones, hosts, routers, routes; checks quantities */
static int scan(pcheck *c, char *err, size_t errlen)
{
    int stack[256], depth = 0; /* the zone each open element is in (or is) */
    int seen_platform = 0;
    const char *s = c->text;
    while ((s = strchr(s, '<'))) {
        const char *tag = s;
        if (!strncmp(s, "<!--", 4)) {
            s = strstr(s + 4, "-->");
            if (!s)
                break;
            continue;
        }
        if (!strncmp(s, "<?", 2) || !strncmp(s, "<!", 2)) {
            s = strchr(s + 2, '>');
            if (!s)
                break;
            continue;
        }
        int closing = s[1] == '/';
        s += closing ? 2 : 1;
        size_t nl = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:-.");
        char elem[40];
        snprintf(elem, sizeof elem, "%.*s", (int)(nl < 39 ? nl : 39), s);
        s += nl;
        pattrs a = {.count = 0};
        int self_closing = 0;
        for (;;) {
            s += strspn(s, " \t\r\n");
            if (!*s)
                break;
            if (*s == '>') {
                s++;
                break;
            }
            if (s[0] == '/' && s[1] == '>') {
                self_closing = 1;
                s += 2;
                break;
            }
            size_t an = strcspn(s, "= \t\r\n>/");
            const char *aname = s;
            s += an;
            s += strspn(s, " \t\r\n");
            if (*s != '=') {
                if (an == 0)
                    s++; /* a stray character: skip it */
                continue;
            }
            s++;
            s += strspn(s, " \t\r\n");
            if (*s != '"' && *s != '\'')
                continue;
            char q = *s++;
            const char *ve = strchr(s, q);
            if (!ve)
                break;
            if (a.count < MAX_ATTRS) {
                snprintf(a.name[a.count], sizeof a.name[0], "%.*s", (int)(an < 31 ? an : 31), aname);
                if (!(a.value[a.count] = decode(s, (size_t)(ve - s)))) {
                    c->oom = 1;
                    attrs_free(&a);
                    return -1;
                }
                a.count++;
            }
            s = ve + 1;
        }
        if (closing) {
            if (depth > 0)
                depth--;
            attrs_free(&a);
            continue;
        }
        int zone = depth > 0 ? stack[depth - 1] : -1, here = zone;
        if (!strcmp(elem, "platform"))
            seen_platform = 1;
        if (check_quantities(c, tag, elem, &a, err, errlen) != 0) {
            attrs_free(&a);
            return -1;
        }
        int rc = 0;
        if (!strcmp(elem, "zone") || !strcmp(elem, "AS")) {
            here = add_zone(c, attr(&a, "id"), attr(&a, "routing"), zone);
        } else if (!strcmp(elem, "cluster")) {
            here = add_zone(c, attr(&a, "id"), "Cluster", zone);
            if (here >= 0)
                rc = add_radical_hosts(c, &a, here, tag, err, errlen);
        } else if (!strcmp(elem, "cabinet")) {
            rc = add_radical_hosts(c, &a, zone, tag, err, errlen);
        } else if (!strcmp(elem, "host") || !strcmp(elem, "peer") || !strcmp(elem, "router")) {
            const char *id = attr(&a, "id");
            if (id && zone >= 0)
                rc = add_node(c, id, strlen(id), zone, strcmp(elem, "router") ? NODE_HOST : NODE_ROUTER, -1) < 0;
        } else if (!strcmp(elem, "route") || !strcmp(elem, "zoneRoute") || !strcmp(elem, "ASroute")) {
            rc = add_route(c, &a, zone);
        }
        attrs_free(&a);
        if (rc != 0 || c->oom)
            return -1;
        if (!self_closing) {
            if (depth == (int)(sizeof stack / sizeof stack[0])) {
                snprintf(err, errlen, "platform file '%s' line %d: elements nest too deep", c->path, line_of(c, tag));
                return -1;
            }
            stack[depth++] = here;
        }
    }
    if (!seen_platform) {
        snprintf(err, errlen, "platform file '%s' is not a SimGrid XML platform (no <platform> element)", c->path);
        return -1;
    }
    return 0;
}

/* qsort has no context argument in C11: the node table the comparison reads */
static const pnode *sort_nodes;
static int by_name(const void *a, const void *b)
{
    return strcmp(sort_nodes[*(const int *)a].id, sort_nodes[*(const int *)b].id);
}

/* the node named `id` (ids sorted by name in `order`), or -1 */
static int find_node(const pcheck *c, const int *order, int count, const char *id)
{
    int lo = 0, hi = count - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, cmp = strcmp(c->nodes[order[mid]].id, id);
        if (cmp == 0)
            return order[mid];
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

typedef struct {
    int zone, member, host; /* host: the rank whose host reaches the zone through member */
} touch;

static int by_zone_member(const void *a, const void *b)
{
    const touch *x = a, *y = b;
    if (x->zone != y->zone)
        return x->zone < y->zone ? -1 : 1;
    if (x->member != y->member)
        return x->member < y->member ? -1 : 1;
    return (x->host > y->host) - (x->host < y->host);
}

typedef struct {
    int s, d;
} edge;

static int by_edge(const void *a, const void *b)
{
    const edge *x = a, *y = b;
    if (x->s != y->s)
        return x->s < y->s ? -1 : 1;
    return (x->d > y->d) - (x->d < y->d);
}

/* nodes reachable from `from` over the sorted edges; seen[] marked.  Paths
 * go on through hosts only: SimGrid 3.32's Floyd zones find no route that
 * passes a router (measured: a-r-b aborts with "No route from a to b") */
static void reach(const pcheck *c, const edge *e, int ne, int from, unsigned char *seen, int *queue)
{
    int nnodes = c->nnodes;
    memset(seen, 0, (size_t)nnodes);
    int head = 0, tail = 0;
    queue[tail++] = from;
    seen[from] = 1;
    while (head < tail) {
        int v = queue[head++];
        if (v != from && c->nodes[v].kind == NODE_ROUTER)
            continue;
        edge key = {v, -1};
        int lo = 0, hi = ne;
        while (lo < hi) { /* the first edge from v */
            int mid = (lo + hi) / 2;
            if (by_edge(&e[mid], &key) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (int i = lo; i < ne && e[i].s == v; i++)
            if (!seen[e[i].d]) {
                seen[e[i].d] = 1;
                queue[tail++] = e[i].d;
            }
    }
}

/* whether every two ranks' hosts have a route between them */
static int check_routes(pcheck *c, const int *order, int nnames, const int *rank_host, int P, char *err, size_t errlen)
{
    for (int i = 0; i < c->nroutes; i++) {
        c->routes[i].s = find_node(c, order, nnames, c->routes[i].src);
        c->routes[i].d = find_node(c, order, nnames, c->routes[i].dst);
    }
    /* every (zone, member) a rank's host reaches on its way up */
    int ndepth = 0;
    for (int z = 0; z < c->nzones; z++) {
        int d = 0;
        for (int y = z; y >= 0; y = c->zones[y].parent)
            d++;
        ndepth = d > ndepth ? d : ndepth;
    }
    size_t ntouch = (size_t)P * (size_t)(ndepth ? ndepth : 1);
    touch *t = malloc(ntouch * sizeof *t);
    edge *e = malloc(((size_t)c->nroutes * 2 + 1) * sizeof *e), *re = malloc(((size_t)c->nroutes * 2 + 1) * sizeof *re);
    unsigned char *seen = malloc((size_t)c->nnodes + 1), *seen_back = malloc((size_t)c->nnodes + 1);
    int *queue = malloc(((size_t)c->nnodes + 1) * sizeof *queue);
    int rc = 0;
    if (!t || !e || !re || !seen || !seen_back || !queue) {
        c->oom = 1;
        rc = -1;
        goto out;
    }
    size_t nt = 0;
    for (int r = 0; r < P; r++) {
        int m = rank_host[r];
        for (int z = c->nodes[m].zone; z >= 0 && nt < ntouch; z = c->zones[z].parent) {
            t[nt++] = (touch){z, m, r};
            m = c->zones[z].node;
            if (m < 0)
                break;
        }
    }
    qsort(t, nt, sizeof *t, by_zone_member);
    for (size_t i = 0; i < nt && rc == 0;) {
        size_t j = i;
        while (j < nt && t[j].zone == t[i].zone)
            j++;
        /* the distinct members of zone t[i].zone, each with its first rank */
        size_t nm = 0;
        for (size_t k = i; k < j; k++)
            if (k == i || t[k].member != t[k - 1].member)
                t[i + nm++] = t[k];
        const pzone *z = &c->zones[t[i].zone];
        /* SimGrid 3.32 finds a route in a Full zone only where one is
         * declared, and in a Dijkstra zone too (measured: a-b-c aborts with
         * "dynar is not that long"); a Floyd zone joins declared routes */
        int full = !strcmp(z->routing, "Full") || !strcmp(z->routing, "Dijkstra") ||
                   !strcmp(z->routing, "DijkstraCache");
        int none = !strcmp(z->routing, "None"), graph = !strcmp(z->routing, "Floyd");
        if (nm >= 2 && (full || none || graph)) {
            int ne = 0;
            for (int q = 0; q < c->nroutes; q++) {
                const proute *r = &c->routes[q];
                if (r->zone != t[i].zone || r->s < 0 || r->d < 0)
                    continue;
                e[ne++] = (edge){r->s, r->d};
                if (r->sym)
                    e[ne++] = (edge){r->d, r->s};
            }
            qsort(e, (size_t)ne, sizeof *e, by_edge);
            int a = -1, b = -1; /* two members without a route */
            if (none) {
                a = 0;
                b = 1;
            } else if (full && nm <= 4000) {
                for (size_t x = 0; x < nm && a < 0; x++)
                    for (size_t y = 0; y < nm && a < 0; y++) {
                        edge key = {t[i + x].member, t[i + y].member};
                        if (x != y && !bsearch(&key, e, (size_t)ne, sizeof *e, by_edge)) {
                            a = (int)x;
                            b = (int)y;
                        }
                    }
            } else if (graph) {
                for (int q = 0; q < ne; q++)
                    re[q] = (edge){e[q].d, e[q].s};
                qsort(re, (size_t)ne, sizeof *re, by_edge);
                reach(c, e, ne, t[i].member, seen, queue);
                reach(c, re, ne, t[i].member, seen_back, queue);
                for (size_t x = 1; x < nm && a < 0; x++)
                    if (!seen[t[i + x].member] || !seen_back[t[i + x].member]) {
                        a = seen[t[i + x].member] ? (int)x : 0;
                        b = seen[t[i + x].member] ? 0 : (int)x;
                    }
            }
            if (a >= 0) {
                int ra = t[i + a].host, rb = t[i + b].host;
                snprintf(err, errlen,
                         "platform file '%s': no route from host '%.100s' to host '%.100s' (ranks %d and %d) in zone "
                         "'%.100s' (routing %s)",
                         c->path, c->nodes[rank_host[ra]].id, c->nodes[rank_host[rb]].id, ra, rb, z->id, z->routing);
                rc = -1;
            }
        }
        i = j;
    }
out:
    free(t);
    free(e);
    free(re);
    free(seen);
    free(seen_back);
    free(queue);
    return rc;
}

/* reads and checks a platform file for P ranks; 0, or -1 with a message */
static int check_platform_file(const char *path, int P, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb"); /* a name that is no file may have meant a built-in */
    if (!f) {
        char names[300];
        int why = errno;
        sp_platform_names(names, sizeof names, ", ", 0);
        snprintf(err, errlen, "cannot read platform file '%s': %s (built-in platforms: %s)", path, strerror(why),
                 names);
        return -1;
    }
    fclose(f);
    size_t len;
    char why[1200];
    char *text = sp_read_file(path, MAX_PLATFORM_BYTES, &len, why, sizeof why);
    if (!text) {
        snprintf(err, errlen, "platform file: %s", why);
        return -1;
    }
    if (strlen(text) != len || !strchr(text, '<')) {
        snprintf(err, errlen, "platform file '%s' is not a SimGrid XML platform", path);
        free(text);
        return -1;
    }
    pcheck c = {.path = path, .text = text};
    int rc = scan(&c, err, errlen);
    int *order = NULL, *rank_host = NULL, nhosts = 0;
    if (rc == 0 && !(order = malloc(((size_t)c.nnodes + 1) * sizeof *order)))
        c.oom = 1;
    if (rc == 0 && order) {
        for (int i = 0; i < c.nnodes; i++)
            order[i] = i;
        sort_nodes = c.nodes;
        qsort(order, (size_t)c.nnodes, sizeof *order, by_name);
        /* rank i runs on the i-th host by name, as SimGrid lists them */
        rank_host = malloc(((size_t)P + 1) * sizeof *rank_host);
        for (int i = 0; rank_host && i < c.nnodes; i++)
            if (c.nodes[order[i]].kind == NODE_HOST && (i == 0 || strcmp(c.nodes[order[i]].id, c.nodes[order[i - 1]].id)))
                if (nhosts++ < P)
                    rank_host[nhosts - 1] = order[i];
        if (!rank_host) {
            c.oom = 1;
        } else if (nhosts < P) {
            snprintf(err, errlen, "platform file '%s' has %d host%s, fewer than --ranks %d", path, nhosts,
                     nhosts == 1 ? "" : "s", P);
            rc = -1;
        } else {
            rc = check_routes(&c, order, c.nnodes, rank_host, P, err, errlen);
        }
    }
    if (c.oom) {
        snprintf(err, errlen, "out of memory reading platform file '%s'", path);
        rc = -1;
    }
    for (int i = 0; i < c.nnodes; i++)
        free(c.nodes[i].id);
    for (int i = 0; i < c.nroutes; i++) {
        free(c.routes[i].src);
        free(c.routes[i].dst);
    }
    free(c.nodes);
    free(c.zones);
    free(c.routes);
    free(order);
    free(rank_host);
    free(text);
    return rc;
}

/* A temporary platform file, listed for removal before it exists (as
 * sp_part_open lists its outputs), so that a signal at any moment, even
 * between choosing the name and creating the file, leaves nothing behind:
 * a name of this process's own, created exclusively.  The open descriptor,
 * or -1 with a message. */
static int create_listed_temp(char *path, size_t n, const char *tmpdir, char *err, size_t errlen)
{
    static unsigned serial;
    for (int tries = 0; tries < 100; tries++) {
        snprintf(path, n, "%s/sparsim-platform-%ld-%u", tmpdir, (long)getpid(), serial++);
        if (sp_part_track(path) != 0) {
            snprintf(err, errlen, "cannot create a temporary platform file: too many temporary files at once");
            return -1;
        }
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0)
            return fd;
        int why = errno;
        sp_part_untrack(path);
        if (why != EEXIST) {
            snprintf(err, errlen, "cannot create a temporary platform file in %s: %s", tmpdir, strerror(why));
            return -1;
        }
    }
    snprintf(err, errlen, "cannot create a temporary platform file in %s: every name tried exists", tmpdir);
    return -1;
}

int sp_platform_prepare(const char *name, int P, sp_platform *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const sp_platform_row *row = sp_platform_find(name);
    if (row && row->kind == SP_PLATFORM_CODE) {
        if (check_ranks(row, name, P, err, errlen) != 0)
            return -1;
        if (row->fabric && prepare_fabric(row, name, P, &out->fabric, err, errlen) != 0)
            return -1;
        snprintf(out->builder, sizeof out->builder, "%s", row->builder);
        snprintf(out->host_prefix, sizeof out->host_prefix, "node-");
        return 0;
    }
    if (row) {
        const char *tmpdir = getenv("TMPDIR");
        if (!tmpdir || !*tmpdir)
            tmpdir = "/tmp";
        int fd = create_listed_temp(out->xml_path, sizeof out->xml_path, tmpdir, err, errlen);
        if (fd < 0)
            return -1;
        FILE *f = fdopen(fd, "w");
        if (!f) {
            close(fd);
            unlink(out->xml_path);
            sp_part_untrack(out->xml_path);
            snprintf(err, errlen, "cannot write the platform file: %s", strerror(errno));
            return -1;
        }
        out->generated = 1;
        int wrote = sp_platform_write_builtin(name, P, f, err, errlen) == 0;
        if (fclose(f) != 0 || !wrote) {
            unlink(out->xml_path);
            sp_part_untrack(out->xml_path);
            out->generated = 0;
            if (!err[0])
                snprintf(err, errlen, "cannot write the platform file");
            return -1;
        }
        snprintf(out->host_prefix, sizeof out->host_prefix, "node-");
        return 0;
    }
    if (check_platform_file(name, P, err, errlen) != 0)
        return -1;
    snprintf(out->xml_path, sizeof out->xml_path, "%s", name);
    return 0;
}

int sp_platform_write_calibrated(void *fp, int hosts, double alpha, double bw, double both_ways_bw, double limiter)
{
    FILE *f = fp;
    int w = fprintf(f,
                    "%s"
                    "  <!-- measured by sparsim-mpi calibrate: the wire's one-way latency %.3g s (the measured\n"
                    "       latency less the hosts' send and receive overheads, which its device.json charges),\n"
                    "       bandwidth %.4g B/s, %.4g B/s each way while both directions are busy; a route crosses\n"
                    "       two links, so each link has half the latency, and each host's limiter link (shared by\n"
                    "       what it sends and receives) carries twice the both-ways figure.  The measured\n"
                    "       bandwidth already is what the transport reaches, so SimGrid's TCP window bound\n"
                    "       (gamma / 2 latency, which a slow measured latency would make bind) is off -->\n"
                    "  <config>\n"
                    "    <prop id=\"network/TCP-gamma\" value=\"0\"/>\n"
                    "  </config>\n"
                    "  <cluster id=\"calibrated\" prefix=\"node-\" suffix=\"\" radical=\"0-%d\" speed=\"1Gf\"\n"
                    "           bw=\"%.6gBps\" lat=\"%.6gs\" sharing_policy=\"SPLITDUPLEX\"\n"
                    "           limiter_link=\"%.6gBps\"/>\n"
                    "</platform>\n",
                    xml_head, alpha, bw, both_ways_bw, hosts - 1, bw, alpha / 2, limiter);
    return w > 0 ? 0 : -1;
}

void sp_platform_release(sp_platform *p)
{
    if (p->generated) {
        unlink(p->xml_path);
        sp_part_untrack(p->xml_path);
    }
    p->generated = 0;
}
