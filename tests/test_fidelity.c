/* test_fidelity.c - host and copy overheads charged exactly where the rule
 * says (sim/backends/simgrid/transport.c: o_send and a device-to-host copy per message
 * posted, o_recv and a host-to-device copy per message received, call_o per
 * wait), and the finite-backplane switch of 1gbe-switch against its
 * closed form (topologies/platforms.c). */
#include "helpers.h"
#include "traces/trace.h"
#include "traces/summary_keys.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* the simulated time per iteration of one run through the CLI (cm02) */
static double run_time(const char *algo, int P, const char *n, const char *device, const char *platform,
                       double *msgs)
{
    const char *dir = t_tmpdir();
    char ranks[16];
    snprintf(ranks, sizeof ranks, "%d", P);
    const char *args[] = {"run", "--algo", algo, "--ranks", ranks, "--n", n, "--network", "cm02", "--device",
                          device, "--platform", platform, "--payload", "size", "--out", dir, "--no-trace",
                          "--no-csv", NULL};
    t_proc r = t_run(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    t_proc_free(&r);
    cJSON *j = sp_json_file(t_path(dir, "summary.json"));
    cr_assert(j);
    double t = sp_json_num(j, SPK_TIME_PER_ITER, SPK_MEAN);
    if (msgs)
        *msgs = sp_json_num(j, SPK_MESSAGES, NULL);
    cJSON_Delete(j);
    return t;
}

static const char *profile(const char *json)
{
    const char *path = t_path(t_tmpdir(), "dev.json");
    cr_assert_eq(t_write_file(path, json), 0);
    return path;
}

/* o = 1 ms per message posted: a ring's 2(P-1) steps each post one send per
 * rank, all ranks alike, so every step is 1 ms longer: exactly 2(P-1) ms */
Test(overheads, send_o_once_per_message)
{
    const int P = 4;
    double msgs;
    double base = run_time("ring", P, "64K", "none", "1gbe", &msgs);
    cr_assert_eq(msgs, 2.0 * (P - 1) * P);
    double with = run_time("ring", P, "64K",
                           profile("{\"launch\":0,\"mem_bw\":0,\"topk_coeff\":0,\"scatter_bw\":0,\"send_o\":0.001}"),
                           "1gbe", NULL);
    cr_assert_float_eq(with - base, 2.0 * (P - 1) * 1e-3, 1e-12, "%.17g - %.17g", with, base);
}

/* every overhead at once: per step o_send + copy + o_recv + copy + call_o,
 * a copy of one ring block (4n/P bytes) costing copy_lat + bytes / copy_bw */
Test(overheads, all_overheads_closed_form)
{
    const int P = 4;
    const double n = 65536, block = 4.0 * n / P;
    double base = run_time("ring", P, "64K", "none", "1gbe", NULL);
    double with = run_time("ring", P, "64K",
                           profile("{\"launch\":0,\"mem_bw\":0,\"topk_coeff\":0,\"scatter_bw\":0,\"send_o\":0.001,"
                                   "\"recv_o\":0.002,\"call_o\":0.0005,\"copy_lat\":1e-5,\"copy_bw\":1e9}"),
                           "1gbe", NULL);
    double copy = 1e-5 + block / 1e9;
    double step = 0.001 + copy + 0.002 + copy + 0.0005;
    cr_assert_float_eq(with - base, 2.0 * (P - 1) * step, 1e-12, "%.17g vs %.17g", with - base, 2.0 * (P - 1) * step);
}

/* o_recv = 1 ms: charged once per message received, after the wait that
 * completes it: a ring step's one receive adds 1 ms, 2(P-1) ms in all */
Test(overheads, recv_o_once_per_message)
{
    const int P = 8;
    double base = run_time("ring", P, "64K", "none", "1gbe", NULL);
    double with = run_time("ring", P, "64K",
                           profile("{\"launch\":0,\"mem_bw\":0,\"topk_coeff\":0,\"scatter_bw\":0,\"recv_o\":0.001}"),
                           "1gbe", NULL);
    cr_assert_float_eq(with - base, 2.0 * (P - 1) * 1e-3, 1e-12);
}

/* the none profile charges nothing: ring on cm02 equals alpha-beta exactly */
Test(overheads, none_is_free)
{
    const int P = 8;
    const double n = 65536, alpha = 100e-6, bw = 125e6;
    double t = run_time("ring", P, "64K", "none", "1gbe", NULL);
    cr_assert_float_eq(t, 2.0 * (P - 1) * (alpha + 4.0 * n / P / bw), 1e-12);
}

/* dense ring at P = 32: 32 flows cross the switch at once; a backplane of G
 * Gbps gives each min(125 MB/s, G/8 GB/s / 32): by 8 Gbps, 31.25 MB/s, so
 * each step's transfer takes 4x the crossbar's.  Both against their closed
 * forms 2(P-1)(alpha + (4n/P) / bw_flow) */
Test(backplane, switch_ring_p32)
{
    const int P = 32;
    const double n = 1048576, alpha = 100e-6, block = 4.0 * n / P;
    double xbar = run_time("ring", P, "1M", "none", "1gbe", NULL);
    double sw = run_time("ring", P, "1M", "none", "1gbe-switch", NULL);
    double sw4 = run_time("ring", P, "1M", "none", "1gbe-switch:4", NULL);
    double wide = run_time("ring", P, "1M", "none", "1gbe-switch:64", NULL);
    cr_assert_float_eq(xbar, 2.0 * (P - 1) * (alpha + block / 125e6), 1e-12);
    cr_assert_float_eq(sw, 2.0 * (P - 1) * (alpha + block / (1e9 / P)), 1e-12);
    cr_assert_float_eq(sw4, 2.0 * (P - 1) * (alpha + block / (0.5e9 / P)), 1e-12);
    cr_assert_float_eq(wide, xbar, 1e-12); /* 64 Gbps >= 32 x 1 Gbps: non-blocking */
    /* the bandwidth term is 4x: (sw - latency) / (xbar - latency) */
    double lat = 2.0 * (P - 1) * alpha;
    cr_assert_float_eq((sw - lat) / (xbar - lat), 4.0, 1e-9);
}

static void refused(const char *device, const char *platform, const char *needle)
{
    const char *args[] = {"run", "--algo", "ring", "--ranks", "2", "--device", device, "--platform", platform,
                          "--out", t_tmpdir(), NULL};
    t_proc r = t_run(args);
    cr_assert_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    cr_assert_eq(t_count_lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, needle), "%s", r.err);
    t_proc_free(&r);
}

Test(overheads, bad_input_one_line)
{
    refused(profile("{\"launch\":0,\"mem_bw\":1,\"topk_coeff\":0,\"scatter_bw\":0,\"send_o\":-1}"), "1gbe",
            "\"send_o\" must be a non-negative number");
    refused(profile("{\"launch\":0,\"mem_bw\":1,\"topk_coeff\":0,\"scatter_bw\":0,\"copy_lat\":1e-6}"), "1gbe",
            "needs \"copy_bw\"");
    refused(profile("{\"launch\":0,\"mem_bw\":1,\"topk_coeff\":0,\"scatter_bw\":0,\"recv_o\":\"x\"}"), "1gbe",
            "\"recv_o\"");
    refused("none", "1gbe-switch:0", "1gbe-switch:G");
    refused("none", "1gbe-switch:abc", "1gbe-switch:G");
    refused("none", "1gbe-switchy", "1gbe-switch:G");
}
