/* test_nodes_platforms.c - the platforms of multi-GPU nodes
 * (sim/backends/simgrid/simgrid_nodes.cpp, their numbers in
 * topologies/platforms.c): their names' node counts, their link counts and
 * routes equal hand-computed ones, an oversubscribed leaf shares its uplinks'
 * bandwidth, and the CLI runs them and refuses what they cannot hold. */
#include "helpers.h"
#include "topologies/platform.h"

#include <criterion/criterion.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <simgrid/mailbox.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xbt/config.h>
#include <xbt/dynar.h>
#include <xbt/log.h>

int spg_build_nodes(const sp_fabric *f, int ranks, char *err, size_t errlen);

/* ---- the names ------------------------------------------------------------ */

static void nodes_are(const char *name, int want_g, int want_nodes)
{
    int g = -1, nodes = -1;
    char err[300] = "";
    cr_assert_eq(sp_platform_nodes(name, &g, &nodes, err, sizeof err), 0, "%s: %s", name, err);
    cr_assert_eq(g, want_g, "%s: %d GPUs per node", name, g);
    cr_assert_eq(nodes, want_nodes, "%s: %d nodes", name, nodes);
}

static void nodes_refused(const char *name, const char *needle)
{
    int g, nodes;
    char err[300] = "";
    cr_assert_eq(sp_platform_nodes(name, &g, &nodes, err, sizeof err), -1, "%s taken", name);
    cr_assert(err[0] && !strchr(err, '\n'), "%s: one line: %s", name, err);
    cr_assert(strstr(err, needle), "%s: %s", name, err);
}

Test(nodes, names_give_gpus_per_node_and_nodes)
{
    nodes_are("dgx-h100:4", 8, 4);
    nodes_are("dgx-h100", 8, 0);
    nodes_are("dgx-b200:3:2", 8, 3);
    nodes_are("roce:2:4", 8, 2);
    nodes_are("alps:3", 4, 3);
    nodes_are("alps", 4, 0);
    nodes_are("1gbe", 1, 0);
    nodes_are("daint", 1, 0);
    nodes_are("no-such-file.xml", 1, 0);
    nodes_refused("dgx-h100:0", "write dgx-h100, dgx-h100:N or dgx-h100:N:S");
    nodes_refused("dgx-h100:x", "N the nodes");
    nodes_refused("dgx-h100:4:0", "oversubscription (1..64)");
    nodes_refused("dgx-h100:4:", "dgx-h100:N:S");
    nodes_refused("dgx-h100x", "dgx-h100:N");
    nodes_refused("alps:3:2", "write alps or alps:N");
    nodes_refused("alps:2689", "(1..2688)");
}

Test(nodes, prepare_checks_ranks_against_nodes)
{
    sp_platform p;
    char err[400] = "";
    cr_assert_eq(sp_platform_prepare("dgx-h100:4", 32, &p, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(p.builder, "nodes");
    cr_assert_eq(p.fabric.nodes, 4);
    cr_assert_eq(p.fabric.gpus_per_node, 8);
    cr_assert_float_eq(p.fabric.oversub, 1, 0);
    sp_platform_release(&p);
    cr_assert_neq(sp_platform_prepare("dgx-h100:4", 33, &p, err, sizeof err), 0);
    cr_assert(!strchr(err, '\n'), "%s", err);
    cr_assert(strstr(err, "platform dgx-h100:4 holds 32 ranks (4 nodes of 8 GPUs), fewer than --ranks 33"), "%s",
              err);
    /* no count: as many nodes as the ranks need */
    cr_assert_eq(sp_platform_prepare("roce", 17, &p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(p.fabric.nodes, 3);
    cr_assert_eq(sp_platform_prepare("dgx-h100:5:4", 40, &p, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(p.fabric.oversub, 4, 0);
    cr_assert_eq(sp_platform_prepare("alps", 10752, &p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(p.fabric.nodes, 2688);
    cr_assert_neq(sp_platform_prepare("alps", 10753, &p, err, sizeof err), 0);
    cr_assert(strstr(err, "2688 nodes of 4 GH200"), "%s", err);
    cr_assert_neq(sp_platform_prepare("alps:x", 4, &p, err, sizeof err), 0);
    cr_assert(strstr(err, "write alps or alps:N"), "%s", err);
}

Test(nodes, rows_name_their_device_and_network)
{
    const char *names[] = {"dgx-h100", "dgx-h200", "dgx-b200", "roce", "alps"};
    const char *devices[] = {"h100", "h200", "b200", "h100", "gh200"};
    for (int i = 0; i < 5; i++) {
        const sp_platform_row *r = sp_platform_find(names[i]);
        cr_assert(r && r->fabric, "%s", names[i]);
        cr_assert_str_eq(r->device, devices[i]);
        cr_assert_str_eq(r->network, "cm02");
        cr_assert_eq(r->gpus_per_node, r->fabric->gpus_per_node);
    }
}

/* ---- the links and routes, built ---------------------------------------- */

/* name's nodes for P ranks built, with the pure alpha-beta model (cm02, no
 * reverse traffic), so that times have closed forms */
static void build(const char *name, int P)
{
    sp_platform p;
    char err[400] = "";
    cr_assert_eq(sp_platform_prepare(name, P, &p, err, sizeof err), 0, "%s", err);
    int argc = 1;
    char *argv[] = {"test", NULL};
    xbt_log_control_set("root.thresh:critical");
    simgrid_init(&argc, argv);
    sg_cfg_set_string("network/model", "CM02");
    sg_cfg_set_boolean("network/crosstraffic", "no");
    cr_assert_eq(spg_build_nodes(&p.fabric, P, err, sizeof err), 0, "%s", err);
}

/* the full-duplex links whose names start with `prefix` (each is two
 * SimGrid links, _UP and _DOWN) */


/* dgx-h100:66 at P = 528: 66 nodes of 8 GPUs in 3 scalable units of 32 (the
 * last one of 2 nodes); a port link and a NIC per GPU, a leaf per rail per
 * unit: 8 x 3 uplink aggregates, each of 32 x 400 Gb/s / S */
Test(nodes, dgx_link_counts)
{
    build("dgx-h100:66", 528);
    cr_assert_eq(t_count_links("nvlink_"), 528);
    cr_assert_eq(t_count_links("nic_"), 528);
    cr_assert_eq(t_count_links("leaf_up_"), 24);
    cr_assert_float_eq(sg_link_get_bandwidth(sg_link_by_name("leaf_up_7_2_UP")), 32 * 50e9, 1e-3);
    cr_assert_float_eq(sg_link_get_bandwidth(sg_link_by_name("nvlink_65_7_DOWN")), 450e9, 1e-3);
    cr_assert_float_eq(sg_link_get_bandwidth(sg_link_by_name("nic_65_7_UP")), 50e9, 1e-3);
}

/* only the nodes that hold the ranks are built: dgx-h100:1000 at 16 ranks
 * is 2 nodes, one unit's 8 leaves (their uplinks still those of a whole
 * unit's cabling) */
Test(nodes, dgx_builds_the_ranks_nodes)
{
    build("dgx-h100:1000", 16);
    cr_assert_eq(t_count_links("nvlink_"), 16);
    cr_assert_eq(t_count_links("nic_"), 16);
    cr_assert_eq(t_count_links("leaf_up_"), 8);
    cr_assert_float_eq(sg_link_get_bandwidth(sg_link_by_name("leaf_up_0_0_UP")), 32 * 50e9, 1e-3);
}

/* alps at 6 ranks: 2 nodes, but their whole group's switches */
Test(nodes, alps_builds_whole_groups)
{
    build("alps", 6);
    cr_assert_eq(t_count_links("nvlink_"), 2 * 6);
    cr_assert_eq(t_count_links("nic_"), 8);
    cr_assert_eq(t_count_links("local_"), 32);
    cr_assert_eq(t_count_links("global_"), 0);
}

Test(nodes, dgx_oversubscribed_uplinks)
{
    build("dgx-h100:66:4", 528);
    cr_assert_float_eq(sg_link_get_bandwidth(sg_link_by_name("leaf_up_3_0_DOWN")), 32 * 50e9 / 4, 1e-3);
}

/* where the NVSwitch reduces (NVLS), each node has it as an endpoint,
 * nvswitch-N: GPU J of node N reaches it over its port up and the switch's
 * intake (nvls_N, E = 476 GB/s x 72 / 14 on H100), and it reaches the GPU
 * over the port down.  Alps' nodes have no NVSwitch: no endpoint. */
Test(nodes, nvswitch_routes_by_hand)
{
    build("dgx-h100:3", 24);
    cr_assert_eq(t_count_links("nvls_"), 3);
    cr_assert_float_eq(sg_link_get_bandwidth(sg_link_by_name("nvls_2_UP")), 476e9 * 72 / 14, 1e-3);
    t_route_hosts("node-13", "nvswitch-1", "nvlink_1_5_UP nvls_1_UP", 25e-9);
    t_route_hosts("nvswitch-1", "node-13", "nvlink_1_5_DOWN", 25e-9);
    t_route_hosts("node-0", "nvswitch-0", "nvlink_0_0_UP nvls_0_UP", 25e-9);
}

Test(nodes, no_nvswitch_without_nvls)
{
    build("alps", 8);
    cr_assert_eq(t_count_links("nvls_"), 0);
    cr_assert_null(sg_host_by_name("nvswitch-0"));
}

/* routes by hand: 25 ns per NVLink port, 500 ns per NIC, 130 ns per
 * InfiniBand switch crossed (one on a leaf, three through the spine) */
Test(nodes, dgx_routes_by_hand)
{
    build("dgx-h100:66", 528);
    /* same node: GPU 0's port up, GPU 5's down */
    t_route_is(0, 5, "nvlink_0_0_UP nvlink_0_5_DOWN", 50e-9);
    t_route_is(5, 0, "nvlink_0_5_UP nvlink_0_0_DOWN", 50e-9);
    /* rail 3, nodes 0 and 5 of unit 0: one leaf */
    t_route_is(3, 43, "nic_0_3_UP nic_5_3_DOWN", 1e-6 + 130e-9);
    /* rail 3, node 40 in unit 1: through the spine */
    t_route_is(3, 323, "nic_0_3_UP leaf_up_3_0_UP leaf_up_3_1_DOWN nic_40_3_DOWN", 1e-6 + 390e-9);
    /* rail 3 to rail 6 of node 5, the same unit: the spine too */
    t_route_is(3, 46, "nic_0_3_UP leaf_up_3_0_UP leaf_up_6_0_DOWN nic_5_6_DOWN", 1e-6 + 390e-9);
    /* the last, half-filled unit: node 65 GPU 7 back to node 0 GPU 7 */
    t_route_is(527, 7, "nic_65_7_UP leaf_up_7_2_UP leaf_up_7_0_DOWN nic_0_7_DOWN", 1e-6 + 390e-9);
    t_route_is(4, 4, "loopback", sg_host_get_route_latency(sg_host_by_name("node-4"), sg_host_by_name("node-4")));
}

/* roce:16 at P = 128: a leaf per 8 nodes holds all their NICs (rails or not);
 * 300 ns per Ethernet switch */
Test(nodes, roce_leaves_by_racks)
{
    build("roce:16", 128);
    cr_assert_eq(t_count_links("leaf_up_"), 2);
    cr_assert_float_eq(sg_link_get_bandwidth(sg_link_by_name("leaf_up_1_UP")), 64 * 50e9, 1e-3);
    t_route_is(3, 46, "nic_0_3_UP nic_5_6_DOWN", 1e-6 + 300e-9);
    t_route_is(3, 64, "nic_0_3_UP leaf_up_0_UP leaf_up_1_DOWN nic_8_0_DOWN", 1e-6 + 900e-9);
}

/* alps:230 at P = 920: 3 groups of 112 nodes (the last one of 6), 4 GPUs a
 * node joined pairwise (6 links), 4 NICs, 32 switches a group (8 chassis x
 * 4), each with the aggregate of its 31 local links of 200 Gb/s, one
 * aggregate per pair of groups of 22 global links of 200 Gb/s */
Test(nodes, alps_link_counts)
{
    build("alps:230", 920);
    cr_assert_eq(t_count_links("nvlink_"), 230 * 6);
    cr_assert_eq(t_count_links("nic_"), 920);
    cr_assert_eq(t_count_links("local_"), 3 * 32);
    cr_assert_eq(t_count_links("global_"), 3);
    cr_assert_float_eq(sg_link_get_bandwidth(sg_link_by_name("global_1_2_UP")), 22 * 25e9, 1e-3);
    cr_assert_float_eq(sg_link_get_bandwidth(sg_link_by_name("local_2_31_UP")), 31 * 25e9, 1e-3);
    cr_assert_float_eq(sg_link_get_bandwidth(sg_link_by_name("nvlink_229_2_3_UP")), 150e9, 1e-3);
}

/* routes by hand: 25 ns per NVLink, 500 ns per NIC, 300 ns per switch; node
 * n's NIC j on switch (n mod 112) / 14 x 4 + j of its group */
Test(nodes, alps_routes_by_hand)
{
    build("alps:230", 920);
    /* same node: the direct link, from its lower GPU (_UP) or back */
    t_route_is(1, 3, "nvlink_0_1_3_UP", 25e-9);
    t_route_is(3, 1, "nvlink_0_1_3_DOWN", 25e-9);
    /* NIC 2 of nodes 0 and 5 (chassis 0): switch 2 */
    t_route_is(2, 22, "nic_0_2_UP nic_5_2_DOWN", 1e-6 + 300e-9);
    /* NIC 2 of node 20 (chassis 1): switch 6, the local aggregates of 2 and 6 */
    t_route_is(2, 82, "nic_0_2_UP local_0_2_UP local_0_6_DOWN nic_20_2_DOWN", 1e-6 + 600e-9);
    /* another rail: NIC 1 of node 20 on switch 5 */
    t_route_is(2, 81, "nic_0_2_UP local_0_2_UP local_0_5_DOWN nic_20_1_DOWN", 1e-6 + 600e-9);
    t_route_is(81, 2, "nic_20_1_UP local_0_5_UP local_0_2_DOWN nic_0_2_DOWN", 1e-6 + 600e-9);
    /* the last group (6 nodes): node 229 NIC 3 on switch 3 */
    t_route_is(919, 898, "nic_229_3_UP local_2_3_UP local_2_2_DOWN nic_224_2_DOWN", 1e-6 + 600e-9);
    /* other groups: the pair's aggregate, four switches (diameter 3) */
    t_route_is(0, 483, "nic_0_0_UP global_0_1_UP nic_120_3_DOWN", 1e-6 + 1200e-9);
    t_route_is(896, 0, "nic_224_0_UP global_0_2_DOWN nic_0_0_DOWN", 1e-6 + 1200e-9);
}

/* ---- sharing: an oversubscribed leaf ------------------------------------- */

/* dgx-h100:64:16: a leaf's uplinks carry 32 x 50 / 16 = 100 GB/s; the 32
 * GPUs of rail 0 in unit 0 each send T_FLOW_BYTES to rail 0 of unit 1 at once,
 * so each flow gets 100 / 32 GB/s (under its NIC's 50) and all end together
 * at their latency plus 32 S / 100 GB/s */
enum { FLOWS = 32 };

Test(nodes, oversubscribed_leaf_shares_its_uplinks)
{
    build("dgx-h100:64:16", 512);
    for (int i = 0; i < FLOWS; i++) {
        char name[32], arg[16];
        snprintf(arg, sizeof arg, "%d", i);
        char *av[] = {name, arg, NULL};
        snprintf(name, sizeof name, "node-%d", 8 * i);
        sg_actor_create("send", sg_host_by_name(name), t_flow_send, 2, av);
        snprintf(name, sizeof name, "node-%d", 8 * (32 + i));
        sg_actor_create("recv", sg_host_by_name(name), t_flow_recv, 2, av);
    }
    simgrid_run();
    double want = 1e-6 + 390e-9 + FLOWS * T_FLOW_BYTES / 100e9;
    for (int i = 0; i < FLOWS; i++)
        cr_assert_float_eq(t_flow_end[i], want, 1e-6 * want, "flow %d at %.9g, want %.9g", i, t_flow_end[i], want);
}

/* ---- the CLI ------------------------------------------------------------- */

Test(nodes, cli)
{
    const char *dir = t_tmpdir();
    const char *ok[] = {"run", "--platform", "dgx-h100:2", "--ranks", "16", "--algo", "ring", "--n", "64K",
                        "--network", "cm02", "--payload", "size", "--out", dir, NULL};
    t_proc r = t_run(ok);
    cr_assert_eq(r.status, 0, "%s", r.err);
    t_proc_free(&r);
    const char *alps[] = {"run", "--platform", "alps", "--ranks", "12", "--algo", "ring", "--n", "64K",
                          "--network", "cm02", "--payload", "size", "--out", dir, NULL};
    r = t_run(alps);
    cr_assert_eq(r.status, 0, "%s", r.err);
    t_proc_free(&r);
    const char *big[] = {"run", "--platform", "dgx-h100:2", "--ranks", "17", "--algo", "ring", "--out", dir, NULL};
    r = t_run(big);
    cr_assert_eq(r.status, 2);
    cr_assert_eq(t_count_lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, "holds 16 ranks (2 nodes of 8 GPUs), fewer than --ranks 17"), "%s", r.err);
    t_proc_free(&r);
    const char *bad[] = {"run", "--platform", "dgx-h100:4:0", "--ranks", "8", "--algo", "ring", "--out", dir, NULL};
    r = t_run(bad);
    cr_assert_eq(r.status, 2);
    cr_assert_eq(t_count_lines(r.err), 1, "%s", r.err);
    t_proc_free(&r);
    const char *xml[] = {"platform", "dgx-h100", NULL};
    r = t_run(xml);
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "built in code"), "%s", r.err);
    t_proc_free(&r);
}

/* the two link classes the closed forms use are the built routes' own:
 * GPUs 0 and 1 of node 0, and GPU 0 of nodes 0 and 1 (one leaf, one chassis
 * switch); flat platforms have none */
static void classes_are_routes(const char *name, int P, int G)
{
    double ia, ib, xa, xb;
    cr_assert_eq(sp_platform_link_classes(name, &ia, &ib, &xa, &xb), 0, "%s", name);
    build(name, P);
    sg_host_t h0 = sg_host_by_name("node-0"), h1 = sg_host_by_name("node-1");
    char other[32];
    snprintf(other, sizeof other, "node-%d", G);
    sg_host_t hn = sg_host_by_name(other);
    cr_assert_float_eq(sg_host_get_route_latency(h0, h1), ia, 1e-15, "%s", name);
    cr_assert_float_eq(sg_host_get_route_bandwidth(h0, h1), 1.0 / ib, 1e-3, "%s", name);
    cr_assert_float_eq(sg_host_get_route_latency(h0, hn), xa, 1e-15, "%s", name);
    cr_assert_float_eq(sg_host_get_route_bandwidth(h0, hn), 1.0 / xb, 1e-3, "%s", name);
}

Test(nodes, link_classes_dgx) { classes_are_routes("dgx-h100:4", 32, 8); }
Test(nodes, link_classes_roce) { classes_are_routes("roce:4", 32, 8); }
Test(nodes, link_classes_alps) { classes_are_routes("alps:4", 16, 4); }

Test(nodes, flat_platforms_have_no_link_classes)
{
    double a, b, c, d;
    cr_assert_eq(sp_platform_link_classes("1gbe", &a, &b, &c, &d), -1);
    cr_assert_eq(sp_platform_link_classes("daint", &a, &b, &c, &d), -1);
    cr_assert_eq(sp_platform_link_classes("my.xml", &a, &b, &c, &d), -1);
}
