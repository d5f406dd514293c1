/* test_aries.c - the daint platform, wired as Aries is (sim/shim/simgrid_aries.cpp):
 * its link counts and routes equal hand-computed ones, and the CLI runs it
 * and refuses what it cannot hold. */
#include "helpers.h"

#include <criterion/criterion.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xbt/dynar.h>
#include <xbt/log.h>

int spg_build_aries(int nodes, char *err, size_t errlen);

static void build(int nodes)
{
    int argc = 1;
    char *argv[] = {"test", NULL};
    xbt_log_control_set("root.thresh:critical");
    simgrid_init(&argc, argv);
    char err[300] = "";
    cr_assert_eq(spg_build_aries(nodes, err, sizeof err), 0, "%s", err);
}

/* the full-duplex links whose names start with `prefix` (each is two
 * SimGrid links, _UP and _DOWN) */
static int count(const char *prefix)
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

/* P = 768: two whole groups of 6 chassis x 16 routers; per chassis 16 x 15
 * / 2 green links, per group and slot 6 x 5 / 2 black ones, 50 global links
 * between the two groups (960 ports per group over the machine's 19 other
 * groups) */
Test(aries, link_counts_two_groups)
{
    build(768);
    cr_assert_eq(count("aries_nic_"), 768);
    cr_assert_eq(count("green_link_"), 12 * 120);
    cr_assert_eq(count("black_link_"), 2 * 16 * 15);
    cr_assert_eq(count("blue_link_"), 50);
}

/* P = 64: one group is still built whole (its routers switch traffic) */
Test(aries, link_counts_one_group)
{
    build(64);
    cr_assert_eq(count("aries_nic_"), 64);
    cr_assert_eq(count("green_link_"), 6 * 120);
    cr_assert_eq(count("black_link_"), 16 * 15);
    cr_assert_eq(count("blue_link_"), 0);
}

static void route_is(int a, int b, const char *want, double lat)
{
    char na[32], nb[32], got[1024] = "";
    snprintf(na, sizeof na, "node-%d", a);
    snprintf(nb, sizeof nb, "node-%d", b);
    sg_host_t ha = sg_host_by_name(na), hb = sg_host_by_name(nb);
    cr_assert(ha && hb);
    xbt_dynar_t d = xbt_dynar_new(sizeof(sg_link_t), NULL);
    sg_host_get_route(ha, hb, d);
    for (unsigned long i = 0; i < xbt_dynar_length(d); i++) {
        strcat(got, i ? " " : "");
        strcat(got, sg_link_get_name(xbt_dynar_get_as(d, i, sg_link_t)));
    }
    xbt_dynar_free(&d);
    cr_assert_str_eq(got, want, "%d -> %d", a, b);
    cr_assert_float_eq(sg_host_get_route_latency(ha, hb), lat, 1e-15, "%d -> %d", a, b);
}

/* routes by hand (4 nodes per router, 16 routers per chassis, 6 chassis per
 * group; 0.5 us per NIC, 100 ns per router-to-router link) */
Test(aries, routes_by_hand)
{
    build(800);
    /* same router: the two NICs */
    route_is(0, 1, "aries_nic_0_UP aries_nic_1_DOWN", 1.0e-6);
    /* routers 0 and 1 of chassis 0: node 0 of a router takes the direct
     * green link (from the lower end: _UP) */
    route_is(0, 5, "aries_nic_0_UP green_link_0_0_1_UP aries_nic_5_DOWN", 1.1e-6);
    /* node 5 is node 1 of router 1: through slot 1 XOR 3 = 2 */
    route_is(5, 0, "aries_nic_5_UP green_link_0_1_2_UP green_link_0_0_2_DOWN aries_nic_0_DOWN", 1.2e-6);
    /* node 3 (node 3 of router 0) to router 1, a ring's step: through slot 0 XOR 6 = 6 */
    route_is(3, 4, "aries_nic_3_UP green_link_0_0_6_UP green_link_0_1_6_DOWN aries_nic_4_DOWN", 1.2e-6);
    /* node 70: router 17 = chassis 1, slot 1; green to slot 1 in chassis 0,
     * then the black link of slot 1 between chassis 0 and 1 */
    route_is(0, 70, "aries_nic_0_UP green_link_0_0_1_UP black_link_0_1_0_1_UP aries_nic_70_DOWN", 1.2e-6);
    /* node 500: router 125 of group 1 (chassis 7, slot 13).  Global link
     * (0 + 2 x 500) mod 50 = 0 between groups 0 and 1: port 0 of group 0 is
     * on router 0, port 0 of group 1 on its router 0 (router 96: chassis 6,
     * slot 0); then green to slot 13 and black to chassis 7 (1 in the group) */
    route_is(0, 500,
             "aries_nic_0_UP blue_link_0_1_0_UP green_link_6_0_13_UP black_link_1_13_0_1_UP aries_nic_500_DOWN",
             1.3e-6);
    /* back: (500 + 0) mod 50 = 0, the same global link the other way */
    route_is(500, 0,
             "aries_nic_500_UP green_link_7_0_13_DOWN black_link_1_0_0_1_DOWN blue_link_0_1_0_DOWN aries_nic_0_DOWN",
             1.3e-6);
    /* node 1: (500 + 2) mod 50 = 2: port 2 on router 2 of group 0 (chassis 0,
     * slot 2) and on router 98 of group 1 (chassis 6, slot 2) */
    route_is(500, 1,
             "aries_nic_500_UP green_link_7_2_13_DOWN black_link_1_2_0_1_DOWN blue_link_0_1_2_DOWN "
             "green_link_0_0_2_DOWN aries_nic_1_DOWN",
             1.4e-6);
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
    /* its earlier name is the same platform */
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

static double time_of(const char *algo, const char *platform)
{
    const char *dir = t_tmpdir();
    const char *args[] = {"run", "--algo", algo, "--ranks", "64", "--n", "16M", "--platform", platform, "--network",
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

/* Rabenseifner at P = 64 (one chassis): on SimGrid's dragonfly
 * (daint-simgrid) the 4 nodes of a router share one green link to their
 * partner router in each step of recursive halving, 3.8x the ring; with the
 * detours of daint's Aries wiring the 4 flows take 4 disjoint paths and
 * Rabenseifner is within 5% of the ring */
Test(aries, rabenseifner_spreads_within_a_chassis)
{
    double ring_d = time_of("ring", "daint-simgrid"), rab_d = time_of("rabenseifner", "daint-simgrid");
    double ring_a = time_of("ring", "daint"), rab_a = time_of("rabenseifner", "daint");
    cr_assert(rab_d / ring_d > 3.0, "daint-simgrid: %g / %g", rab_d, ring_d);
    cr_assert(rab_a / ring_a < 1.05, "daint: %g / %g", rab_a, ring_a);
    cr_assert(ring_a / ring_d > 0.99 && ring_a / ring_d < 1.02, "ring %g against %g", ring_a, ring_d);
}
