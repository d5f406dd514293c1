/* test_aries.c - the daint platforms, wired as Aries is (sim/backends/simgrid/simgrid_aries.cpp):
 * their link counts and routes equal hand-computed ones; on daint (spread)
 * flows share the summed bandwidth of a router's green links, of the black
 * links between two chassis and of the global links between two groups, on
 * daint-static each takes one path of single links; and the CLI runs them
 * and refuses what they cannot hold. */
#include "helpers.h"

#include <criterion/criterion.h>
#include <math.h>
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

int spg_build_aries(int nodes, int spread, char *err, size_t errlen);

/* spread: daint's routing between groups, else daint-static's; with the
 * pure alpha-beta model (cm02, no reverse traffic), so that times have
 * closed forms */
static void build_as(int nodes, int spread)
{
    int argc = 1;
    char *argv[] = {"test", NULL};
    xbt_log_control_set("root.thresh:critical");
    simgrid_init(&argc, argv);
    sg_cfg_set_string("network/model", "CM02");
    sg_cfg_set_boolean("network/crosstraffic", "no");
    char err[300] = "";
    cr_assert_eq(spg_build_aries(nodes, spread, err, sizeof err), 0, "%s", err);
}

static void build(int nodes) { build_as(nodes, 0); }

/* the full-duplex links whose names start with `prefix` (each is two
 * SimGrid links, _UP and _DOWN) */

/* P = 768: two whole groups of 6 chassis x 16 routers; per chassis 16 x 15
 * / 2 green links, per group and slot 6 x 5 / 2 black ones, 50 global links
 * between the two groups (960 ports per group over the machine's 19 other
 * groups) */
Test(aries, link_counts_two_groups)
{
    build(768);
    cr_assert_eq(t_count_links("aries_nic_"), 768);
    cr_assert_eq(t_count_links("green_link_"), 12 * 120);
    cr_assert_eq(t_count_links("black_link_"), 2 * 16 * 15);
    cr_assert_eq(t_count_links("blue_link_"), 50);
}

/* daint (spread) has the same links, and its aggregates: one per router (its
 * 15 green links), one per pair of chassis of a group (their 16 black links,
 * one per slot), one per pair of groups (their 50 global links) */
Test(aries, link_counts_spread)
{
    build_as(1152, 1);
    cr_assert_eq(t_count_links("aries_nic_"), 1152);
    cr_assert_eq(t_count_links("green_link_"), 18 * 120);
    cr_assert_eq(t_count_links("black_link_"), 3 * 16 * 15);
    cr_assert_eq(t_count_links("blue_link_"), 3 * 50);
    cr_assert_eq(t_count_links("__green_router_"), 18 * 16);
    cr_assert_eq(t_count_links("__black_pair_"), 3 * 15);
    cr_assert_eq(t_count_links("__blue_pair_"), 3);
    sg_link_t agg = sg_link_by_name("__blue_pair_0_2_UP");
    cr_assert(agg);
    cr_assert_float_eq(sg_link_get_bandwidth(agg), 50 * 3 * 12.5e9 / 8, 1e-3);
    cr_assert_float_eq(sg_link_get_bandwidth(sg_link_by_name("__green_router_287_DOWN")), 15 * 5.25e9, 1e-3);
    /* chassis 12 and 17 are the first and last of group 2 */
    cr_assert_float_eq(sg_link_get_bandwidth(sg_link_by_name("__black_pair_12_17_UP")), 16 * 3 * 5.25e9, 1e-3);
    cr_assert_eq(t_count_links("__black_pair_5_6_"), 0, "chassis 5 and 6 are in different groups");
}

/* P = 64: one group is still built whole (its routers switch traffic) */
Test(aries, link_counts_one_group)
{
    build(64);
    cr_assert_eq(t_count_links("aries_nic_"), 64);
    cr_assert_eq(t_count_links("green_link_"), 6 * 120);
    cr_assert_eq(t_count_links("black_link_"), 16 * 15);
    cr_assert_eq(t_count_links("blue_link_"), 0);
}


/* routes by hand (4 nodes per router, 16 routers per chassis, 6 chassis per
 * group; 0.5 us per NIC, 100 ns per router-to-router link) */
Test(aries, routes_by_hand)
{
    build(800);
    /* same router: the two NICs */
    t_route_is(0, 1, "aries_nic_0_UP aries_nic_1_DOWN", 1.0e-6);
    /* routers 0 and 1 of chassis 0: node 0 of a router takes the direct
     * green link (from the lower end: _UP) */
    t_route_is(0, 5, "aries_nic_0_UP green_link_0_0_1_UP aries_nic_5_DOWN", 1.1e-6);
    /* node 5 is node 1 of router 1: through slot 1 XOR 3 = 2 */
    t_route_is(5, 0, "aries_nic_5_UP green_link_0_1_2_UP green_link_0_0_2_DOWN aries_nic_0_DOWN", 1.2e-6);
    /* node 3 (node 3 of router 0) to router 1, a ring's step: through slot 0 XOR 6 = 6 */
    t_route_is(3, 4, "aries_nic_3_UP green_link_0_0_6_UP green_link_0_1_6_DOWN aries_nic_4_DOWN", 1.2e-6);
    /* node 70: router 17 = chassis 1, slot 1; green to slot 1 in chassis 0,
     * then the black link of slot 1 between chassis 0 and 1 */
    t_route_is(0, 70, "aries_nic_0_UP green_link_0_0_1_UP black_link_0_1_0_1_UP aries_nic_70_DOWN", 1.2e-6);
    /* node 500: router 125 of group 1 (chassis 7, slot 13).  Global link
     * (0 + 2 x 500) mod 50 = 0 between groups 0 and 1: port 0 of group 0 is
     * on router 0, port 0 of group 1 on its router 0 (router 96: chassis 6,
     * slot 0); then green to slot 13 and black to chassis 7 (1 in the group) */
    t_route_is(0, 500,
             "aries_nic_0_UP blue_link_0_1_0_UP green_link_6_0_13_UP black_link_1_13_0_1_UP aries_nic_500_DOWN",
             1.3e-6);
    /* back: (500 + 0) mod 50 = 0, the same global link the other way */
    t_route_is(500, 0,
             "aries_nic_500_UP green_link_7_0_13_DOWN black_link_1_0_0_1_DOWN blue_link_0_1_0_DOWN aries_nic_0_DOWN",
             1.3e-6);
    /* node 1: (500 + 2) mod 50 = 2: port 2 on router 2 of group 0 (chassis 0,
     * slot 2) and on router 98 of group 1 (chassis 6, slot 2) */
    t_route_is(500, 1,
             "aries_nic_500_UP green_link_7_2_13_DOWN black_link_1_2_0_1_DOWN blue_link_0_1_2_DOWN "
             "green_link_0_0_2_DOWN aries_nic_1_DOWN",
             1.4e-6);
}

/* daint (spread): the NICs and the aggregates, at the latency of the
 * minimal path (daint-static's, the direct green link within a chassis):
 * within a chassis the two routers' green aggregates, between chassis of a
 * group their black aggregate, between groups the pair's global one */
Test(aries, routes_by_hand_spread)
{
    build_as(800, 1);
    t_route_is(0, 1, "aries_nic_0_UP aries_nic_1_DOWN", 1.0e-6);
    /* node 5 (router 1) to node 0 (router 0): daint-static detours through
     * slot 2, daint's latency is the direct link's */
    t_route_is(5, 0, "aries_nic_5_UP __green_router_1_UP __green_router_0_DOWN aries_nic_0_DOWN", 1.1e-6);
    t_route_is(3, 4, "aries_nic_3_UP __green_router_0_UP __green_router_1_DOWN aries_nic_4_DOWN", 1.1e-6);
    /* router 0 (chassis 0, slot 0) to router 17 (chassis 1, slot 1): green
     * then black, two hops; back the other way of the same aggregate */
    t_route_is(0, 70, "aries_nic_0_UP __black_pair_0_1_UP aries_nic_70_DOWN", 1.2e-6);
    t_route_is(70, 0, "aries_nic_70_UP __black_pair_0_1_DOWN aries_nic_0_DOWN", 1.2e-6);
    /* router 1 to router 17: the same slot, the black link alone */
    t_route_is(4, 68, "aries_nic_4_UP __black_pair_0_1_UP aries_nic_68_DOWN", 1.1e-6);
    /* group 1: chassis 6 to 11 */
    t_route_is(384, 767, "aries_nic_384_UP __black_pair_6_11_UP aries_nic_767_DOWN", 1.2e-6);
    t_route_is(0, 500, "aries_nic_0_UP __blue_pair_0_1_UP aries_nic_500_DOWN", 1.3e-6);
    t_route_is(500, 1, "aries_nic_500_UP __blue_pair_0_1_DOWN aries_nic_1_DOWN", 1.4e-6);
}

/* a degraded green or black link takes its lost bandwidth off every
 * aggregate it belongs to, in its own direction: green link 0-1 of chassis 0
 * from router 0 to router 1 is out of router 0 and into router 1 */
Test(aries, degraded_links_within_a_group_spread)
{
    build_as(400, 1);
    const double green = 5.25e9, black = 3 * 5.25e9;
    sg_link_set_bandwidth(sg_link_by_name("green_link_0_0_1_UP"), 0.5 * green);
    cr_assert_float_eq(sg_link_get_bandwidth(sg_link_by_name("__green_router_0_UP")), 14.5 * green, 1e-3);
    cr_assert_float_eq(sg_link_get_bandwidth(sg_link_by_name("__green_router_1_DOWN")), 14.5 * green, 1e-3);
    cr_assert_float_eq(sg_link_get_bandwidth(sg_link_by_name("__green_router_1_UP")), 15 * green, 1e-3);
    cr_assert_float_eq(sg_link_get_bandwidth(sg_link_by_name("__green_router_0_DOWN")), 15 * green, 1e-3);
    sg_link_set_bandwidth(sg_link_by_name("black_link_0_3_2_4_DOWN"), 0.25 * black);
    cr_assert_float_eq(sg_link_get_bandwidth(sg_link_by_name("__black_pair_2_4_DOWN")), 15.25 * black, 1e-3);
    cr_assert_float_eq(sg_link_get_bandwidth(sg_link_by_name("__black_pair_2_4_UP")), 16 * black, 1e-3);
}

/* a degraded global link takes its lost bandwidth off its pair's aggregate,
 * in its own direction, and its latency adds 1/50 of the extra to the
 * pair's routes in that direction */
Test(aries, degraded_global_link_spread)
{
    build_as(800, 1);
    const double blue = 3 * 12.5e9 / 8;
    sg_link_t one = sg_link_by_name("blue_link_0_1_7_UP");
    cr_assert(one);
    sg_link_set_bandwidth(one, 0.25 * blue);
    sg_link_set_latency(one, 100e-9 + 50e-6);
    cr_assert_float_eq(sg_link_get_bandwidth(sg_link_by_name("__blue_pair_0_1_UP")), 49.25 * blue, 1e-3);
    cr_assert_float_eq(sg_link_get_bandwidth(sg_link_by_name("__blue_pair_0_1_DOWN")), 50 * blue, 1e-3);
    t_route_is(0, 500, "aries_nic_0_UP __blue_pair_0_1_UP aries_nic_500_DOWN", 1.3e-6 + 1e-6);
    t_route_is(500, 0, "aries_nic_500_UP __blue_pair_0_1_DOWN aries_nic_0_DOWN", 1.3e-6);
}

/* FLOWS flows of T_FLOW_BYTES at once from group 0 to group 1, node i to node
 * 384 + i */
enum { FLOWS = 64 };

/* `count` flows of T_FLOW_BYTES at once on `nodes` nodes, flow i from node
 * from + i to node to + (i + shift) mod count */
static void flows(int nodes, int spread, int count, int from, int to, int shift)
{
    build_as(nodes, spread);
    for (int i = 0; i < count; i++) {
        char name[32], arg[16];
        snprintf(arg, sizeof arg, "%d", i);
        char *av[] = {name, arg, NULL};
        snprintf(name, sizeof name, "node-%d", from + i);
        sg_actor_create("send", sg_host_by_name(name), t_flow_send, 2, av);
        snprintf(name, sizeof name, "node-%d", to + (i + shift) % count);
        sg_actor_create("recv", sg_host_by_name(name), t_flow_recv, 2, av);
    }
    simgrid_run();
}

static void flows_between_groups(int spread) { flows(768, spread, FLOWS, 0, 384, 0); }

static double latency_of(int a, int b)
{
    char na[32], nb[32];
    snprintf(na, sizeof na, "node-%d", a);
    snprintf(nb, sizeof nb, "node-%d", b);
    return sg_host_get_route_latency(sg_host_by_name(na), sg_host_by_name(nb));
}

/* daint: the 64 flows share the pair's 50 x 4.69 GB/s (3.66 GB/s each on
 * average, under the NICs' 10).  cm02 shares a link in inverse proportion
 * to each flow's route latency (1.2 to 1.5 us here: TCP's RTT bias), so the
 * flows end at different times, but the aggregate stays full until the
 * last: it ends at 64 S / 234 GB/s after the longest latency (tolerance:
 * the 0.3 us over which the flows start, in 27 ms) */
Test(aries, flows_between_groups_spread)
{
    flows_between_groups(1);
    const double agg = 50 * 3 * 12.5e9 / 8;
    double last = 0, lat = 0;
    for (int i = 0; i < FLOWS; i++) {
        last = t_flow_end[i] > last ? t_flow_end[i] : last;
        lat  = latency_of(i, 384 + i) > lat ? latency_of(i, 384 + i) : lat;
        cr_assert(t_flow_end[i] > T_FLOW_BYTES / agg * FLOWS / 2, "flow %d: %.9g", i, t_flow_end[i]);
    }
    double want = lat + FLOWS * T_FLOW_BYTES / agg;
    cr_assert_float_eq(last, want, 1e-5 * want, "last flow at %.9g, want %.9g", last, want);
}

/* daint-static: flow i takes global link (i + 2 (384 + i)) mod 50 = (3i +
 * 18) mod 50, so 14 of the 50 links carry two of the 64 flows and 36 carry
 * one: a flow ends no sooner than S / 4.69 GB/s after its latency, the
 * later of two on a link no sooner than 2 S / 4.69 GB/s (the paths within
 * the groups to and from the routers that hold the links are shared too,
 * and slow some flows further), so the last ends at least 1.5x later than
 * all 64 do on daint */
Test(aries, flows_between_groups_static)
{
    flows_between_groups(0);
    const double blue = 3 * 12.5e9 / 8, agg = 50 * blue;
    int on_link[50] = {0};
    double end[50] = {0}, last = 0;
    for (int i = 0; i < FLOWS; i++) {
        int l = (3 * i + 18) % 50;
        on_link[l]++;
        end[l] = t_flow_end[i] > end[l] ? t_flow_end[i] : end[l];
        last   = t_flow_end[i] > last ? t_flow_end[i] : last;
        cr_assert(t_flow_end[i] >= latency_of(i, 384 + i) + T_FLOW_BYTES / blue, "flow %d: %.9g", i, t_flow_end[i]);
    }
    int alone = 0;
    for (int l = 0; l < 50; l++) {
        cr_assert(on_link[l] == 1 || on_link[l] == 2, "link %d: %d flows", l, on_link[l]);
        alone += on_link[l] == 1;
        cr_assert(end[l] >= on_link[l] * T_FLOW_BYTES / blue, "link %d (%d flows): %.9g", l, on_link[l], end[l]);
    }
    cr_assert_eq(alone, 36);
    cr_assert(last > 1.5 * FLOWS * T_FLOW_BYTES / agg, "last flow at %.9g", last);
}

/* the 4 nodes of router 0 to the 4 of router 1 (a step of recursive halving
 * at distance 4): on daint the two routers' green aggregates (78.75 GB/s)
 * carry the 4 flows at their NICs' 10 GB/s, each ending exactly S / 10 GB/s
 * after its latency; on daint-static each flow takes its own path of one or
 * two green links (5.25 GB/s) */
Test(aries, flows_within_a_chassis)
{
    flows(64, 1, 4, 0, 4, 0);
    for (int i = 0; i < 4; i++) {
        double want = 1.1e-6 + T_FLOW_BYTES / 10e9;
        cr_assert_float_eq(t_flow_end[i], want, 1e-9 * want, "daint, flow %d: %.12g, want %.12g", i, t_flow_end[i],
                           want);
    }
}

Test(aries, flows_within_a_chassis_static)
{
    flows(64, 0, 4, 0, 4, 0);
    for (int i = 0; i < 4; i++) {
        double lat = latency_of(i, 4 + i), want = lat + T_FLOW_BYTES / 5.25e9;
        cr_assert_float_eq(t_flow_end[i], want, 1e-9 * want, "daint-static, flow %d: %.12g, want %.12g", i,
                           t_flow_end[i], want);
    }
}

/* the 64 nodes of chassis 0 to those of chassis 1, node i to node 64 + (i +
 * 4) mod 64 (router r to the router of the next slot): on daint they share
 * the 16 black links between the two chassis as one of 252 GB/s (3.9 GB/s
 * each, under the NICs' 10), which stays full until the last flow ends at
 * 64 S / 252 GB/s after the longest latency (as between groups above); on
 * daint-static the 4 flows of a router take the green link to the next slot
 * (5.25 GB/s, 1.3 GB/s each) and that slot's black link, so none ends
 * sooner than 4 S / 5.25 GB/s, 3x later than on daint */
Test(aries, flows_between_chassis)
{
    flows(128, 1, 64, 0, 64, 4);
    const double agg = 16 * 3 * 5.25e9;
    double last = 0, lat = 0;
    for (int i = 0; i < 64; i++) {
        int to = 64 + (i + 4) % 64;
        last   = t_flow_end[i] > last ? t_flow_end[i] : last;
        lat    = latency_of(i, to) > lat ? latency_of(i, to) : lat;
        cr_assert(t_flow_end[i] > T_FLOW_BYTES / agg * 64 / 2, "flow %d: %.9g", i, t_flow_end[i]);
    }
    double want = lat + 64 * T_FLOW_BYTES / agg;
    cr_assert_float_eq(last, want, 1e-5 * want, "last flow at %.9g, want %.9g", last, want);
}

Test(aries, flows_between_chassis_static)
{
    flows(128, 0, 64, 0, 64, 4);
    double first = 1e30;
    for (int i = 0; i < 64; i++)
        first = t_flow_end[i] < first ? t_flow_end[i] : first;
    cr_assert(first >= 4 * T_FLOW_BYTES / 5.25e9, "first flow at %.9g", first);
}

Test(aries, cli)
{
    const char *dir = t_tmpdir();
    const char *ok[] = {"run", "--algo", "ring", "--ranks", "8", "--n", "64K", "--platform", "daint", "--network",
                        "cm02", "--payload", "size", "--out", dir, NULL};
    t_proc r = t_run(ok);
    cr_assert_eq(r.status, 0, "%s", r.err);
    t_proc_free(&r);
    const char *big[] = {"run", "--algo", "ring", "--ranks", "7681", "--platform", "daint", "--out", dir, NULL};
    r = t_run(big);
    cr_assert_eq(r.status, 2);
    cr_assert_eq(t_count_lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, "daint holds 1 to 7680 ranks"), "%s", r.err);
    t_proc_free(&r);
    /* the static routing, under its name and its first one */
    const char *stat[] = {"run", "--algo", "ring", "--ranks", "7681", "--platform", "daint-static", "--out", dir, NULL};
    r = t_run(stat);
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "daint-static holds 1 to 7680 ranks"), "%s", r.err);
    t_proc_free(&r);
    const char *alias[] = {"run", "--algo", "ring", "--ranks", "7681", "--platform", "daint-aries", "--out", dir, NULL};
    r = t_run(alias);
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "daint-aries holds 1 to 7680 ranks"), "%s", r.err);
    t_proc_free(&r);
    const char *xml[] = {"platform", "daint", NULL};
    r = t_run(xml);
    cr_assert_eq(r.status, 2);
    cr_assert_eq(t_count_lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, "built in code"), "%s", r.err);
    t_proc_free(&r);
    /* the earlier daint, SimGrid's own dragonfly, is still there as XML */
    const char *sg[] = {"platform", "daint-simgrid", "--ranks", "400", NULL};
    r = t_run(sg);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "topology=\"DRAGONFLY\""), "%s", r.out);
    t_proc_free(&r);
}

/* the simulated time per iteration of one run at P ranks, n = 16M floats */
static double time_at(const char *algo, const char *P, const char *platform)
{
    const char *dir = t_tmpdir();
    const char *args[] = {"run", "--algo", algo, "--ranks", P, "--n", "16M", "--platform", platform, "--network",
                          "cm02", "--payload", "size", "--out", dir, "--no-trace", "--no-csv", NULL};
    t_proc r = t_run(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    t_proc_free(&r);
    char *text = t_read_file(t_path(dir, "summary.json"), NULL);
    cr_assert(text);
    const char *at = strstr(text, "\"time_per_iter_s\"");
    cr_assert(at);
    at = strstr(at, "\"mean\":");
    double t = at ? strtod(at + 7, NULL) : -1;
    free(text);
    return t;
}

static double time_of(const char *algo, const char *platform) { return time_at(algo, "64", platform); }

/* TopkA's Bruck allgather at P = 400 against 384 (one group): on the static
 * paths its flows of distance 128 between routers of different slots meet on
 * one green link (2.4x P = 384's time); with adaptive routing's aggregates
 * inside the group the extra 16 ranks cost what their volume does (bench/README.md
 * section 20) */
Test(aries, topka_past_one_group)
{
    double spread = time_at("topka", "400", "daint") / time_at("topka", "384", "daint");
    double fixed = time_at("topka", "400", "daint-static") / time_at("topka", "384", "daint-static");
    cr_assert(spread > 1.0 && spread < 1.3, "daint: P = 400 is %g x P = 384", spread);
    cr_assert(fixed > 2.0, "daint-static: P = 400 is %g x P = 384", fixed);
}

/* Rabenseifner at P = 64 (one chassis): on SimGrid's dragonfly
 * (daint-simgrid) the 4 nodes of a router share one green link to their
 * partner router in each step of recursive halving, 3.8x the ring; on daint
 * the routers' green aggregates carry them at their NICs' rate, and
 * Rabenseifner is within 5% of the ring.  The ring on daint is NIC-bound:
 * 2 (P - 1) steps of 4n / P bytes at 10 GB/s after the 1.1 us of a flow
 * between two routers (0.5 us per NIC, 100 ns per green link), where
 * daint-simgrid's one green link per ring step holds it to 5.25 GB/s */
Test(aries, rabenseifner_spreads_within_a_chassis)
{
    double ring_d = time_of("ring", "daint-simgrid"), rab_d = time_of("rabenseifner", "daint-simgrid");
    double ring_a = time_of("ring", "daint"), rab_a = time_of("rabenseifner", "daint");
    cr_assert(rab_d / ring_d > 3.0, "daint-simgrid: %g / %g", rab_d, ring_d);
    cr_assert(rab_a / ring_a < 1.05, "daint: %g / %g", rab_a, ring_a);
    const double P = 64, bytes = 4.0 * 16 * 1048576 / P;
    double want = 2 * (P - 1) * (1.1e-6 + bytes / 10e9);
    cr_assert(fabs(ring_a - want) <= 1e-3 * want, "ring on daint %.9g, want %.9g", ring_a, want);
    cr_assert(ring_d > 2 * (P - 1) * bytes / 5.25e9, "ring on daint-simgrid %.9g", ring_d);
}
