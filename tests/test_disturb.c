/* test_disturb.c - disturbances against the real engine: a straggler on a
 * ring on cm02 lengthens each step by exactly the extra compute the closed
 * form gives; zero levels leave messages.csv byte for byte as it was; a
 * degraded link halves the bandwidth of exactly the flows that cross it; the
 * same seed gives the same disturbed run (and another seed another one);
 * noise stretches compute by its share; background traffic slows a run that
 * shares its links; a failed rank ends the run in one line with nothing
 * written; bad values get one clear line. */
#include "helpers.h"
#include "algorithms/algorithm.h"
#include "topologies/device.h"
#include "traces/trace.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1gbe on cm02: a route is two 50 us links at 125 MB/s */
#define ALPHA 100e-6
#define BETA (1.0 / 125e6)

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static cJSON *summary_of(const char *dir)
{
    char *text = t_read_file(t_path(dir, "summary.json"), NULL);
    cr_assert_not_null(text, "no summary.json in %s", dir);
    cJSON *j = cJSON_Parse(text);
    free(text);
    cr_assert_not_null(j, "summary.json is not JSON");
    return j;
}

static double num(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b)
        x = cJSON_GetObjectItemCaseSensitive(x, b);
    cr_assert(cJSON_IsNumber(x), "no number at %s/%s", a, b ? b : "");
    return x->valuedouble;
}

/* ---- stragglers ---------------------------------------------------------------
 * Ring allreduce, size payloads (no copy before the ring), P ranks in lock
 * step: a reduce-scatter step is alpha + m beta of transfer then the dense
 * sum t of the received block.  A straggler's sum takes f t, so it starts
 * each step (f - 1) t later than the one before; its neighbours wait for it
 * one hop further every step, and in the allgather its lateness reaches every
 * rank.  Time per iteration: 2(P-1)(alpha + m beta) + (P-1) f t, against
 * 2(P-1)(alpha + m beta) + (P-1) t undisturbed. */
Test(stragglers, ring_step_lengthens_by_the_extra_compute)
{
    const int P = 8, S = 3;
    const double f = 4.0;
    const uint64_t n = (uint64_t)P * 65536;
    const char *dir = t_tmpdir();
    sp_plan p;
    t_plan(&p, "ring", P, n, 0.01);
    p.payload = SP_PAYLOAD_SIZE;
    p.iters = 2;
    snprintf(p.device, sizeof p.device, "p100");
    snprintf(p.disturb.straggler_ranks, sizeof p.disturb.straggler_ranks, "%d", S);
    p.disturb.straggler_factor = f;
    snprintf(p.out, sizeof p.out, "%s", dir);
    p.write_trace = 1;
    sp_report rep = t_run_ok(&p);

    double m = 4.0 * (double)(n / P), t = sp_device_time(sp_device_find("p100"), SP_DEV_DENSE_SUM, (double)(n / P));
    cr_assert(t > 0);
    double step = ALPHA + m * BETA;
    double undisturbed = 2.0 * (P - 1) * step + (P - 1) * t, disturbed = undisturbed + (P - 1) * (f - 1) * t;
    cr_assert_not_null(rep.disturb);
    cr_assert(rep.disturb->have_baseline);
    for (int it = 0; it < rep.niters; it++) {
        cr_assert_float_eq(rep.iters[it].t_end - rep.iters[it].t_start, disturbed, 1e-12, "iteration %d: %.12g, closed form %.12g",
                           it, rep.iters[it].t_end - rep.iters[it].t_start, disturbed);
        cr_assert_float_eq(rep.disturb->base_time[it], undisturbed, 1e-12, "baseline %d: %.12g, closed form %.12g", it,
                           rep.disturb->base_time[it], undisturbed);
    }
    /* each of the straggler's reduce-scatter steps is (f - 1) t longer:
     * it posts its step-j send at j (alpha + m beta + f t) */
    sp_msg_list l;
    char err[300];
    cr_assert_eq(sp_csv_read(t_path(dir, "messages.csv"), &l, err, sizeof err), 0, "%s", err);
    int seen = 0;
    for (size_t i = 0; i < l.n; i++) {
        const sp_msg_event *e = &l.ev[i];
        if (e->iter != 0 || e->src != S || strcmp(l.phase_names[e->phase], "reduce-scatter") != 0)
            continue;
        int j = e->tag == 100 ? seen++ : -1;
        cr_assert(j >= 0);
        cr_assert_float_eq(e->t_post - rep.iters[0].t_start, j * (step + f * t), 2e-9, "step %d posted at %.12g, closed form %.12g",
                           j, e->t_post - rep.iters[0].t_start, j * (step + f * t));
    }
    cr_assert_eq(seen, P - 1);
    /* the straggler ended the reduce-scatter and is named on its critical path */
    int rs = -1;
    for (int ph = 0; ph < rep.nphases; ph++)
        if (!strcmp(rep.phase_names[ph], "reduce-scatter"))
            rs = ph;
    const sp_report_crit *c = &rep.disturb->crit[rs];
    cr_assert_eq(c->crit_rank, S, "critical rank %d", c->crit_rank);
    cr_assert_float_eq(c->crit_work, (P - 1) * f * t, 1e-12);
    cr_assert_eq(rep.disturb->slowest_rank[0], S);
    cr_assert_eq(rep.disturb->slowed[0], 1);
    sp_msg_list_free(&l);
    /* summary.json holds the same, and the trace shows the straggler's compute */
    cJSON *j = summary_of(dir);
    const cJSON *d = cJSON_GetObjectItem(j, "disturbance");
    cr_assert_float_eq(num(d, "slowdown", NULL), disturbed / undisturbed, 1e-9);
    cr_assert_float_eq(num(cJSON_GetObjectItem(d, "baseline"), "time_per_iter_s", "mean"), undisturbed, 1e-12);
    cJSON_Delete(j);
    char *tr = t_read_file(t_path(dir, "trace.json"), NULL);
    cJSON *tj = cJSON_Parse(tr);
    cr_assert_not_null(tj);
    int slices = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(tj, "traceEvents"))
    {
        const cJSON *cat = cJSON_GetObjectItem(e, "cat");
        if (!cJSON_IsString(cat) || strcmp(cat->valuestring, "disturbance"))
            continue;
        slices++;
        cr_assert_eq((int)num(e, "tid", NULL), S);
        cr_assert_str_eq(cJSON_GetObjectItem(e, "name")->valuestring, "straggler");
        cr_assert_float_eq(num(e, "dur", NULL), f * t * 1e6, 1.5e-3); /* microseconds, ns resolution */
    }
    cr_assert_eq(slices, 2 * (P - 1), "%d straggler slices", slices);
    cJSON_Delete(tj);
    free(tr);
    sp_report_free(&rep);
}

/* the base compute of --compute, slowed on a chosen straggler: the phase
 * "compute" lasts f C on it, so every iteration is (f - 1) C longer */
Test(stragglers, base_compute_slows_the_whole_iteration)
{
    sp_plan p;
    t_plan(&p, "ring", 4, 4 * 4096, 0.01);
    p.payload = SP_PAYLOAD_SIZE;
    p.disturb.compute = 1e-3;
    snprintf(p.disturb.straggler_ranks, sizeof p.disturb.straggler_ranks, "2");
    p.disturb.straggler_factor = 3;
    sp_report rep = t_run_ok(&p);
    double T = rep.iters[0].t_end - rep.iters[0].t_start, T0 = rep.disturb->base_time[0];
    cr_assert_float_eq(T - T0, 2e-3, 1e-12, "disturbed %.12g, undisturbed %.12g", T, T0);
    int ph = -1;
    for (int i = 0; i < rep.nphases; i++)
        if (!strcmp(rep.phase_names[i], "compute"))
            ph = i;
    cr_assert(ph >= 0);
    cr_assert_float_eq(rep.iters[0].phase_time[ph], 3e-3, 1e-12);
    sp_report_free(&rep);
}

/* drawn stragglers: round(F x P) ranks per iteration, not the same ones
 * every iteration */
Test(stragglers, a_fraction_is_drawn_every_iteration)
{
    sp_plan p;
    t_plan(&p, "ring", 16, 16 * 1024, 0.01);
    p.payload = SP_PAYLOAD_SIZE;
    p.iters = 6;
    p.disturb.compute = 1e-4;
    p.disturb.straggler_fraction = 0.25;
    p.disturb.straggler_factor = 5;
    p.disturb.baseline = 0;
    sp_report rep = t_run_ok(&p);
    int differs = 0;
    for (int it = 0; it < rep.niters; it++) {
        cr_assert_eq(rep.disturb->slowed[it], 4);
        cr_assert_float_eq(rep.disturb->slowest_factor[it], 5.0, 1e-12);
        differs |= rep.disturb->slowest_rank[it] != rep.disturb->slowest_rank[0];
    }
    cr_assert(differs, "the same slowest rank in every iteration");
    sp_report_free(&rep);
}

/* ---- zero levels ---------------------------------------------------------------- */

static char *run_csv(const char *algo, const char *const *extra, const char *tag)
{
    const char *dir = t_tmpdir();
    const char *args[40] = {"run", "--algo", algo, "--ranks", "6", "--n", "6144", "--network", "cm02", "--device",
                            "p100", "--iters", "2", "--quiet", "--out", dir};
    int a = 16;
    for (int i = 0; extra && extra[i]; i++)
        args[a++] = extra[i];
    args[a] = NULL;
    t_proc pr = t_run(args);
    cr_assert(pr.exited && pr.status == 0, "%s %s: status %d: %s", algo, tag, pr.status, pr.err);
    t_proc_free(&pr);
    char *csv = t_read_file(t_path(dir, "messages.csv"), NULL);
    cr_assert_not_null(csv);
    return csv;
}

Test(zero, zero_levels_give_the_same_messages)
{
    const char *const zero[] = {"--straggler-ranks", "1,4", "--straggler-factor", "1", "--straggler-fraction", "0",
                                "--straggler-cv", "0", "--noise", "0", "--degrade-links", "nic", "--degrade-bw", "1",
                                "--degrade-latency", "0", "--bg-load", "0", NULL};
    /* every disturbance machine running (a failure planned after the end),
     * none acting: the critical path is followed, times must not move */
    const char *const idle[] = {"--fail-rank", "2", "--fail-at", "1e6", NULL};
    const char *algos[] = {"ring", "topka", "oktopk", "gtopk"};
    for (size_t i = 0; i < sizeof algos / sizeof algos[0]; i++) {
        char *plain = run_csv(algos[i], NULL, "undisturbed");
        char *z = run_csv(algos[i], zero, "zero levels");
        char *w = run_csv(algos[i], idle, "idle failure");
        cr_assert(strlen(plain) > 100);
        cr_assert_str_eq(z, plain, "%s: zero levels changed messages.csv", algos[i]);
        cr_assert_str_eq(w, plain, "%s: following the critical path changed messages.csv", algos[i]);
        free(plain);
        free(z);
        free(w);
    }
}

/* ---- degraded links ------------------------------------------------------------- */

#define FLOW (1 << 20)

/* every rank sends FLOW bytes to the next one, all at once */
static int shift_algo(sp_ctx *c, sp_algo_io *io)
{
    (void)io;
    sp_phase(c, "shift");
    int P = sp_size(c), r = sp_rank(c);
    sp_req *q[2] = {sp_irecv(c, (r + P - 1) % P, 7, NULL, FLOW), sp_isend(c, (r + 1) % P, 7, NULL, FLOW)};
    return sp_waitall(c, q, 2, NULL);
}

static sp_msg_list run_shift(int P, const char *links, int nic, double bw, double lat, const char *platform)
{
    static sp_algorithm a;
    a.name = "shift";
    a.summary = "shift";
    a.run = shift_algo;
    a.size_only_ok = 1;
    a.model_ok = 1;
    const char *dir = t_tmpdir();
    sp_plan p;
    t_plan(&p, "shift", P, 16, 0.5);
    p.payload = SP_PAYLOAD_SIZE;
    snprintf(p.platform, sizeof p.platform, "%s", platform);
    snprintf(p.out, sizeof p.out, "%s", dir);
    p.write_trace = 0;
    if (links)
        snprintf(p.disturb.degrade_links, sizeof p.disturb.degrade_links, "%s", links);
    p.disturb.degrade_nic = nic;
    p.disturb.degrade_bw = bw;
    p.disturb.degrade_latency = lat;
    p.disturb.baseline = 0;
    sp_report rep;
    char err[400] = "";
    sp_error e;
    int rc = sp_run_algorithm(&p, &a, &rep, &e);
    cr_assert_eq(rc, 0, "%s", e.msg);
    sp_report_free(&rep);
    sp_msg_list l;
    cr_assert_eq(sp_csv_read(t_path(dir, "messages.csv"), &l, err, sizeof err), 0, "%s", err);
    cr_assert_eq((int)l.n, P);
    return l;
}

Test(links, a_degraded_nic_halves_exactly_the_flows_through_it)
{
    const int P = 6, D = 2;
    sp_msg_list l = run_shift(P, NULL, D, 0.5, 0, "1gbe");
    for (size_t i = 0; i < l.n; i++) {
        const sp_msg_event *e = &l.ev[i];
        int crosses = e->src == D || e->dst == D; /* its UP or its DOWN half */
        double expect = ALPHA + (crosses ? 2.0 : 1.0) * FLOW * BETA;
        cr_assert_float_eq(e->t_done - e->t_post, expect, 2e-9, "%d->%d took %.9g, expected %.9g", e->src, e->dst,
                           e->t_done - e->t_post, expect);
    }
    sp_msg_list_free(&l);
}

/* the same by a link's name, with extra latency on it alone (a SimGrid
 * engine runs once per process: one run per test) */
Test(links, extra_latency_on_one_named_link)
{
    const int P = 6;
    sp_msg_list l = run_shift(P, "gbe_link_4", -1, 1.0, 1e-3, "1gbe");
    for (size_t i = 0; i < l.n; i++) {
        const sp_msg_event *e = &l.ev[i];
        double expect = ALPHA + FLOW * BETA + (e->src == 4 || e->dst == 4 ? 1e-3 : 0);
        cr_assert_float_eq(e->t_done - e->t_post, expect, 2e-9, "%d->%d took %.9g, expected %.9g", e->src, e->dst,
                           e->t_done - e->t_post, expect);
    }
    sp_msg_list_free(&l);
}

/* a run's critical path names the degraded link */
Test(links, the_critical_path_crosses_the_degraded_nic)
{
    const char *dir = t_tmpdir();
    const char *args[] = {"run", "--algo", "ring", "--ranks", "6", "--n", "60000", "--network", "cm02", "--payload",
                          "size", "--degrade-nic", "3", "--degrade-bw", "0.25", "--quiet", "--out", dir, NULL};
    t_proc pr = t_run(args);
    cr_assert(pr.exited && pr.status == 0, "%s", pr.err);
    t_proc_free(&pr);
    cJSON *j = summary_of(dir);
    const cJSON *d = cJSON_GetObjectItem(j, "disturbance");
    cr_assert_eq((int)num(cJSON_GetObjectItem(d, "links"), "degraded", NULL), 1);
    cr_assert(num(d, "slowdown", NULL) > 1.5);
    const cJSON *ph = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "iterations"), 0), "phases"),
                                          "reduce-scatter");
    const cJSON *m = cJSON_GetObjectItem(ph, "critical_message");
    cr_assert_not_null(m);
    int src = (int)num(m, "src", NULL), dst = (int)num(m, "dst", NULL);
    cr_assert(src == 3 || dst == 3, "critical transfer %d->%d misses rank 3", src, dst);
    int found = 0;
    const cJSON *lk;
    cJSON_ArrayForEach(lk, cJSON_GetObjectItem(m, "links")) found |= !strncmp(lk->valuestring, "gbe_link_3_", 11);
    cr_assert(found, "the critical transfer's links do not include rank 3's");
    cJSON_Delete(j);
}

/* ---- noise ------------------------------------------------------------------------ */

/* periodic detours of L every L/F: a compute of C seconds meets about
 * C F / (L (1 - F)) of them and lasts C / (1 - F), within a detour */
Test(noise, periodic_detours_stretch_compute_by_their_share)
{
    sp_plan p;
    t_plan(&p, "ring", 3, 3 * 256, 0.01);
    p.payload = SP_PAYLOAD_SIZE;
    p.disturb.compute = 0.5;
    p.disturb.noise = 0.1;
    p.disturb.noise_length = 1e-3;
    p.disturb.baseline = 0;
    sp_report rep = t_run_ok(&p);
    int ph = -1;
    for (int i = 0; i < rep.nphases; i++)
        if (!strcmp(rep.phase_names[i], "compute"))
            ph = i;
    cr_assert(ph >= 0);
    double t = rep.iters[0].phase_time[ph];
    cr_assert(fabs(t - 0.5 / 0.9) <= 1e-3 + 1e-12, "compute lasted %.9g, expected %.9g within 1 ms", t, 0.5 / 0.9);
    /* every held second is a whole detour or the end of one */
    cr_assert(rep.disturb->detours >= 3 * 55);
    cr_assert(rep.disturb->detour_s > 3 * 0.05 && rep.disturb->detour_s <= 3 * 0.0575);
    sp_report_free(&rep);
}

/* ---- background traffic ------------------------------------------------------------- */

Test(background, other_flows_on_the_same_links_slow_the_run)
{
    sp_plan p;
    t_plan(&p, "ring", 8, 8 * 65536, 0.01);
    p.payload = SP_PAYLOAD_SIZE;
    p.disturb.bg_load = 0.3;
    p.disturb.bg_flow = 256 * 1024;
    sp_report rep = t_run_ok(&p);
    cr_assert(rep.disturb->bg_flows > 10, "%llu flows", (unsigned long long)rep.disturb->bg_flows);
    cr_assert_eq(rep.disturb->bg_hosts, 8);
    /* 0.3 x 125 MB/s / 256 KiB per host */
    cr_assert_float_eq(rep.disturb->bg_rate, 0.3 * 125e6 / (256 * 1024), 1e-9);
    double T = rep.iters[0].t_end - rep.iters[0].t_start, T0 = rep.disturb->base_time[0];
    cr_assert(T > 1.05 * T0, "background at 30%% load: %.6g s against %.6g s undisturbed", T, T0);
    sp_report_free(&rep);
}

/* ---- reproducible ---------------------------------------------------------------------- */

static void run_all_disturbances(const char *dir, const char *seed)
{
    const char *args[] = {"run", "--algo", "topkdsa", "--ranks", "12", "--n", "24K", "--device", "p100", "--iters", "3",
                          "--seed", seed, "--straggler-fraction", "0.25", "--straggler-cv", "0.5", "--noise", "0.02",
                          "--noise-kind", "random", "--noise-length", "2e-5", "--degrade-links", "nic",
                          "--degrade-fraction", "0.25", "--degrade-bw", "0.3", "--bg-load", "0.2", "--bg-flow", "64K",
                          "--quiet", "--out", dir, NULL};
    t_proc pr = t_run(args);
    cr_assert(pr.exited && pr.status == 0, "status %d: %s", pr.status, pr.err);
    t_proc_free(&pr);
}

static char *disturbance_text(const char *dir)
{
    cJSON *j = summary_of(dir);
    char *t = cJSON_PrintUnformatted(cJSON_GetObjectItem(j, "disturbance"));
    cJSON_Delete(j);
    return t;
}

Test(reproducible, the_same_seed_gives_the_same_disturbed_run)
{
    char *a = strdup(t_tmpdir()), *b = strdup(t_tmpdir()), *c = strdup(t_tmpdir()); /* one static buffer */
    run_all_disturbances(a, "7");
    run_all_disturbances(b, "7");
    run_all_disturbances(c, "8");
    char *ma = t_read_file(t_path(a, "messages.csv"), NULL), *mb = t_read_file(t_path(b, "messages.csv"), NULL);
    char *mc = t_read_file(t_path(c, "messages.csv"), NULL);
    cr_assert_str_eq(ma, mb, "the same seed gave other messages");
    cr_assert_str_neq(ma, mc, "another seed gave the same messages");
    char *da = disturbance_text(a), *db = disturbance_text(b);
    cr_assert_str_eq(da, db);
    cr_assert(strstr(da, "\"stragglers\"") && strstr(da, "\"noise\"") && strstr(da, "\"links\"") &&
              strstr(da, "\"background\""), "%s", da);
    free(ma);
    free(mb);
    free(mc);
    free(da);
    free(db);
    free(a);
    free(b);
    free(c);
}

/* ---- a failed rank ------------------------------------------------------------------------- */

Test(failure, a_stopped_rank_ends_the_run_in_one_line_naming_who_waits)
{
    const char *dir = t_tmpdir();
    const char *args[] = {"run", "--algo", "ring", "--ranks", "8", "--n", "512K", "--network", "cm02", "--payload",
                          "size", "--iters", "2", "--fail-rank", "3", "--fail-at", "0.005", "--out", dir, NULL};
    t_proc pr = t_run(args);
    cr_assert(pr.exited && pr.status == 1, "status %d: %s", pr.status, pr.err);
    cr_assert_eq(t_count_lines(pr.err), 1, "%s", pr.err);
    cr_assert(strstr(pr.err, "rank 3 stopped at 0.005 s") && strstr(pr.err, "phase reduce-scatter of iteration 0") &&
                  strstr(pr.err, "2 ranks were left waiting on it: 2, 4"),
              "%s", pr.err);
    cr_assert_eq(count_files(dir), 0, "a failed run left files in %s", dir);
    t_proc_free(&pr);
    /* in the second iteration (the first lasts 30.8 ms) */
    const char *args2[] = {"run", "--algo", "ring", "--ranks", "8", "--n", "512K", "--network", "cm02", "--payload",
                           "size", "--iters", "2", "--fail-rank", "3", "--fail-at", "0.031", "--out", dir, NULL};
    pr = t_run(args2);
    cr_assert(pr.exited && pr.status == 1, "status %d: %s", pr.status, pr.err);
    cr_assert(strstr(pr.err, "rank 3 stopped") && strstr(pr.err, "of iteration 1;"), "%s", pr.err);
    cr_assert_eq(count_files(dir), 0);
    t_proc_free(&pr);
    /* background traffic never ends by itself: it stops with the rank */
    const char *args3[] = {"run", "--algo", "topka", "--ranks", "8", "--n", "512K", "--network", "cm02", "--fail-rank",
                           "5", "--fail-at", "0.002", "--bg-load", "0.2", "--out", dir, NULL};
    pr = t_run(args3);
    cr_assert(pr.exited && pr.status == 1, "status %d: %s", pr.status, pr.err);
    cr_assert_eq(t_count_lines(pr.err), 1, "%s", pr.err);
    cr_assert(strstr(pr.err, "rank 5 stopped at 0.002 s") && strstr(pr.err, "left waiting on it"), "%s", pr.err);
    cr_assert_eq(count_files(dir), 0);
    t_proc_free(&pr);
}

/* ---- bad values ----------------------------------------------------------------------------- */

Test(bad, values_get_one_clear_line)
{
    static const struct {
        const char *flags[6];
        const char *says;
    } cases[] = {
        {{"--straggler-ranks", "1", "--straggler-factor", "-2", "--device", "p100"}, "--straggler-factor must be"},
        {{"--straggler-fraction", "1.5", "--device", "p100", NULL}, "--straggler-fraction must be a number in [0, 1]"},
        {{"--straggler-ranks", "8", "--device", "p100", NULL}, "rank 8 is out of range"},
        {{"--straggler-ranks", "1", NULL}, "free here (--device none and no --compute)"},
        {{"--straggler-cv", "-1", "--device", "p100", NULL}, "--straggler-cv must be"},
        {{"--noise", "1.5", NULL}, "--noise must be"},
        {{"--noise", "0.1", "--noise-length", "0", NULL}, "--noise-length must be"},
        {{"--degrade-links", "purple", "--degrade-bw", "0.5", NULL}, "no link class or link 'purple'"},
        {{"--degrade-links", "blue", "--degrade-bw", "0.5", "--platform", "daint-simgrid"}, "no link class or link 'blue'"},
        {{"--degrade-links", "nic", "--degrade-bw", "-0.5", NULL}, "--degrade-bw must be"},
        {{"--degrade-links", "nic", "--degrade-bw", "1.5", NULL}, "--degrade-bw must be"},
        {{"--degrade-nic", "8", "--degrade-bw", "0.5", NULL}, "rank 8 is out of range"},
        {{"--degrade-bw", "0.5", NULL}, "need the links they act on"},
        {{"--bg-load", "-0.1", NULL}, "--bg-load must be"},
        {{"--fail-rank", "8", NULL}, "rank 8 is out of range"},
        {{"--fail-rank", "1", "--fail-at", "-1", NULL}, "--fail-at must be"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *dir = t_tmpdir();
        const char *args[20] = {"run", "--algo", "ring", "--ranks", "8", "--n", "64K", "--out", dir};
        int a = 9;
        for (int k = 0; k < 6 && cases[i].flags[k]; k++)
            args[a++] = cases[i].flags[k];
        args[a] = NULL;
        t_proc pr = t_run(args);
        cr_assert(pr.exited && pr.status == 2, "case %zu: status %d: %s", i, pr.status, pr.err);
        cr_assert_eq(t_count_lines(pr.err), 1, "case %zu: %s", i, pr.err);
        cr_assert(!strncmp(pr.err, "sparsim: ", 9) && strstr(pr.err, cases[i].says), "case %zu: %s", i, pr.err);
        cr_assert_eq(count_files(dir), 0, "case %zu left files", i);
        t_proc_free(&pr);
    }
}
