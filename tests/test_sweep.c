/* test_sweep.c - sweep, analyze and crossover through the binary: one row per
 * run, resuming, refusing to overwrite, analysis against the closed forms,
 * a crossover whose two sides really are on either side, and a later win
 * past it.  And the pieces they share: the RFC 4180 reader and quoter
 * (traces/csv.h), the sweep CSV's column table (traces/sweep_columns.h) and
 * the one definition of the speedup over dense (analysis/speedup.h). */
#include "helpers.h"
#include "analysis/speedup.h"
#include "traces/csv.h"
#include "traces/sweep_columns.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

Test(sweep, rows_resume_and_refuse_to_overwrite)
{
    const char *dir = t_tmpdir();
    char csv[512];
    snprintf(csv, sizeof csv, "%s", t_path(dir, "s.csv"));
    const char *a1[] = {"sweep", "--algo", "ring,topka", "--ranks", "2,3", "--n", "1000", "--out", csv, NULL};
    t_proc p = t_run(a1);
    cr_assert(p.exited && p.status == 0, "%s", p.err);
    t_proc_free(&p);
    char *text = t_read_file(csv, NULL);
    cr_assert_eq(t_count_lines(text), 1 + 4);
    cr_assert(strncmp(text, "algo,ranks,n,density,k,platform", 31) == 0);
    cr_assert(strstr(text, "\ntopka,3,1000,0.01,10,1gbe,"), "%s", text);
    free(text);

    /* the same file again without --resume: refused, untouched */
    p = t_run(a1);
    cr_assert(p.exited && p.status == 2);
    cr_assert(strstr(p.err, "--resume"), "%s", p.err);
    t_proc_free(&p);

    /* drop the last row as an interrupted sweep would, then resume with one
     * more rank count: only the missing three runs happen */
    text = t_read_file(csv, NULL);
    char *last = text + strlen(text) - 1;
    while (last > text && last[-1] != '\n')
        last--;
    *last = '\0';
    t_write_file(csv, text);
    free(text);
    const char *a2[] = {"sweep", "--algo", "ring,topka", "--ranks", "2,3,4", "--n", "1000", "--out", csv, "--resume",
                        NULL};
    p = t_run(a2);
    cr_assert(p.exited && p.status == 0, "%s", p.err);
    cr_assert(strstr(p.out, "3 runs (0 failed), 3 already"), "%s", p.out);
    t_proc_free(&p);
    text = t_read_file(csv, NULL);
    cr_assert_eq(t_count_lines(text), 1 + 6);
    free(text);
}

/* every row records its run's peak resident memory: the third field from the
 * end (peak_rss_bytes, status, phase_times).  Exact payloads hold 8n bytes
 * per rank (gradient and result), so at n = 65536 the run at P = 64 holds
 * 32 MiB more than the one at P = 4 (2 MiB); both include the parent's few
 * MiB at the fork. */
Test(sweep, rows_carry_peak_memory)
{
    const char *dir = t_tmpdir();
    const char *a[] = {"sweep", "--algo", "ring", "--ranks", "4,64", "--n", "65536", "--out", t_path(dir, "s.csv"),
                       NULL};
    t_proc p = t_run(a);
    cr_assert(p.exited && p.status == 0, "%s", p.err);
    t_proc_free(&p);
    char *text = t_read_file(t_path(dir, "s.csv"), NULL);
    cr_assert(strstr(text, ",messages_per_wall_s,wall_share_model,wall_share_engine,wall_share_sparsim,wall_s,"
                            "peak_rss_bytes,status,phase_times\n"), "%s", text);
    double rss[2];
    int rows = 0;
    for (char *line = strchr(text, '\n') + 1; *line && rows < 2; rows++) {
        char *end = strchr(line, '\n');
        *end = '\0';
        cr_assert(!strncmp(line, rows ? "ring,64," : "ring,4,", rows ? 8 : 7), "%s", line);
        char *c3 = strrchr(line, ',');
        *c3 = '\0';
        char *c2 = strrchr(line, ',');
        *c2 = '\0';
        char *c1 = strrchr(line, ',');
        cr_assert_str_eq(c2 + 1, "ok");
        rss[rows] = strtod(c1 + 1, NULL);
        line = end + 1;
    }
    cr_assert_eq(rows, 2);
    cr_assert(rss[0] > 1048576.0, "peak %g bytes at P = 4", rss[0]);
    cr_assert(rss[1] - rss[0] > 24.0 * 1048576.0, "peaks %g and %g bytes: the 32 MiB of exact payloads are missing",
              rss[0], rss[1]);
    free(text);
}

/* --resume on a CSV that is not this version's sweep: refused, untouched */
Test(sweep, resume_refuses_a_foreign_csv)
{
    const char *dir = t_tmpdir();
    const char *csv = t_path(dir, "s.csv");
    const char *old = "algo,ranks,n\nring,2,1000\n";
    t_write_file(csv, old);
    const char *a[] = {"sweep", "--algo", "ring", "--ranks", "2", "--n", "1000", "--out", csv, "--resume", NULL};
    t_proc p = t_run(a);
    cr_assert(p.exited && p.status == 2, "status %d", p.status);
    cr_assert_eq(t_count_lines(p.err), 1);
    cr_assert(strstr(p.err, "columns"), "%s", p.err);
    t_proc_free(&p);
    char *text = t_read_file(csv, NULL);
    cr_assert_str_eq(text, old);
    free(text);
}

Test(sweep, config_file_with_lists)
{
    const char *dir = t_tmpdir();
    t_write_file(t_path(dir, "c.json"), "{\"algos\": [\"ring\", \"gtopk\"], \"ranks\": [2, 4], \"n\": 2000, "
                                    "\"platforms\": \"1gbe,daint\", \"iters\": 1}");
    const char *a[] = {"sweep", "--config", t_path(dir, "c.json"), "--out", t_path(dir, "s.csv"), NULL};
    t_proc p = t_run(a);
    cr_assert(p.exited && p.status == 0, "%s", p.err);
    t_proc_free(&p);
    char *text = t_read_file(t_path(dir, "s.csv"), NULL);
    cr_assert_eq(t_count_lines(text), 1 + 8);
    cr_assert(strstr(text, "\ngtopk,4,2000,0.01,20,daint,cm02,none,1,"), "%s", text);
    free(text);
}

Test(sweep, bad_lists_are_refused_before_running)
{
    const char *dir = t_tmpdir();
    const char *a[] = {"sweep", "--ranks", "2,0", "--out", t_path(dir, "s.csv"), NULL};
    t_proc p = t_run(a);
    cr_assert(p.exited && p.status == 2);
    cr_assert_eq(t_count_lines(p.err), 1);
    cr_assert(strstr(p.err, "--ranks"), "%s", p.err);
    cr_assert_null(t_read_file(t_path(dir, "s.csv"), NULL), "a CSV was written");
    t_proc_free(&p);
}

Test(analyze, sweep_csv_and_run_folder)
{
    const char *dir = t_tmpdir();
    const char *a1[] = {"sweep", "--algo", "ring,gtopk", "--ranks", "4", "--n", "4000", "--network", "cm02", "--iters",
                        "1", "--out", t_path(dir, "s.csv"), NULL};
    t_proc p = t_run(a1);
    cr_assert(p.exited && p.status == 0, "%s", p.err);
    t_proc_free(&p);
    const char *a2[] = {"analyze", t_path(dir, "s.csv"), NULL};
    p = t_run(a2);
    cr_assert(p.exited && p.status == 0, "%s", p.err);
    /* on cm02 without contention both match their closed forms exactly */
    cr_assert(strstr(p.out, "ring") && strstr(p.out, "2n(P-1)/P") && strstr(p.out, "Patarasuk & Yuan"), "%s", p.out);
    cr_assert(strstr(p.out, "4k ceil(log2 P)") && strstr(p.out, "Shi et al."), "%s", p.out);
    int ones = 0;
    for (const char *s = p.out; (s = strstr(s, " 1.000")); s++)
        ones++;
    cr_assert_geq(ones, 4, "volume and time ratios of 1.000 expected:\n%s", p.out);
    t_proc_free(&p);

    const char *a3[] = {"run", "--algo", "topka,oktopk", "--ranks", "4", "--n", "4000", "--out", t_path(dir, "runs"),
                        "--quiet", NULL};
    p = t_run(a3);
    cr_assert(p.exited && p.status == 0, "%s", p.err);
    t_proc_free(&p);
    const char *a4[] = {"analyze", t_path(dir, "runs"), NULL};
    p = t_run(a4);
    cr_assert(p.exited && p.status == 0, "%s", p.err);
    cr_assert(strstr(p.out, "topka") && strstr(p.out, "oktopk") && strstr(p.out, "6k(P-1)/P"), "%s", p.out);
    cr_assert(strstr(p.out, "Theorem 3.1"), "%s", p.out);
    t_proc_free(&p);

    const char *a5[] = {"analyze", t_path(dir, "nothing-here"), NULL};
    p = t_run(a5);
    cr_assert(p.exited && p.status == 2);
    cr_assert_eq(t_count_lines(p.err), 1);
    t_proc_free(&p);
}

Test(crossover, both_sides_of_the_crossing)
{
    const char *a[] = {"crossover", "--algo", "oktopk", "--n", "16384", "--max-ranks", "64", "--network", "cm02",
                       "--iters", "1", NULL};
    t_proc p = t_run(a);
    cr_assert(p.exited && p.status == 0, "%s", p.err);
    const char *s = strstr(p.out, "stops beating dense at P = ");
    cr_assert_not_null(s, "%s", p.out);
    int cross, lo, hi;
    double ts_lo, td_lo, ts_hi, td_hi;
    char d1[32], d2[32];
    int got = sscanf(s, "stops beating dense at P = %d: P = %d %lf s vs %31s %lf s; P = %d %lf s vs %31s %lf s", &cross,
                     &lo, &ts_lo, d1, &td_lo, &hi, &ts_hi, d2, &td_hi);
    cr_assert_eq(got, 9, "%s", p.out);
    cr_assert_eq(hi, cross);
    cr_assert_eq(lo, cross - 1);
    cr_assert_lt(ts_lo, td_lo, "below the crossover the sparse algorithm must win");
    cr_assert_geq(ts_hi, td_hi, "at the crossover it must not");
    t_proc_free(&p);
}

/* Ok-Topk's few iterations start with an exact recompute of its thresholds,
 * which a training pays once in tau' = 128: crossover takes it at that
 * steady state, (t0 + 127 t1) / 128 from the same run's two iterations, not
 * their mean (with --iters 1 there is no reuse to weigh: the mean) */
Test(crossover, oktopk_at_its_steady_state)
{
    const char *a[] = {"crossover", "--algo", "oktopk", "--n", "16384", "--min-ranks", "8", "--max-ranks", "8",
                       "--network", "cm02", "--iters", "2", NULL};
    t_proc p = t_run(a);
    cr_assert(p.exited && p.status == 0, "%s", p.err);
    cr_assert_not_null(strstr(p.out, "Ok-Topk at its steady state over tau' = 128"), "%s", p.out);
    const char *at = strstr(p.out, "(at 8: ");
    cr_assert_not_null(at, "%s", p.out);
    double got = strtod(at + strlen("(at 8: "), NULL);
    t_proc_free(&p);
    const char *dir = t_tmpdir();
    const char *b[] = {"run", "--algo", "oktopk", "--ranks", "8", "--n", "16384", "--network", "cm02", "--iters", "2",
                       "--no-csv", "--no-trace", "--quiet", "--out", dir, NULL};
    p = t_run(b);
    cr_assert(p.exited && p.status == 0, "%s", p.err);
    t_proc_free(&p);
    char *text = t_read_file(t_path(dir, "summary.json"), NULL);
    cr_assert_not_null(text);
    cJSON *j = cJSON_Parse(text);
    free(text);
    const cJSON *its = cJSON_GetObjectItemCaseSensitive(j, "iterations");
    cr_assert_eq(cJSON_GetArraySize(its), 2);
    double t0 = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(its, 0), "time_s")->valuedouble;
    double t1 = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(its, 1), "time_s")->valuedouble;
    cJSON_Delete(j);
    double want = (t0 + 127 * t1) / 128;
    cr_assert(t0 > 1.05 * t1, "the recompute iteration costs more than the reuse: %g, %g", t0, t1);
    cr_assert(fabs(got - want) <= 1e-5 * want, "crossover's %.9g s is the steady state %.9g s, not the mean %.9g s",
              got, want, (t0 + t1) / 2);
}

/* the simulated time per iteration of one run, from the binary's summary */
static double run_time(const char *algo, const char *ranks, const char *dir)
{
    const char *a[] = {"run", "--algo", algo, "--ranks", ranks, "--n", "4096", "--density", "0.09", "--network",
                       "cm02", "--iters", "1", "--no-csv", "--no-trace", "--out", dir, NULL};
    t_proc p = t_run(a);
    cr_assert(p.exited && p.status == 0, "%s", p.err);
    const char *s = strstr(p.out, "simulated time per iteration: ");
    cr_assert_not_null(s, "%s", p.out);
    double t = strtod(s + strlen("simulated time per iteration: "), NULL);
    t_proc_free(&p);
    return t;
}

/* A crossover is not always the last: past a loss, doubling goes on and a
 * later win is reported.  Recursive doubling pays an extra fold at P = 12
 * (not a power of two), where Gaussian-k, slower at P = 4 and 8, wins. */
Test(crossover, a_later_win_is_reported)
{
    const char *a[] = {"crossover", "--algo", "gaussiank", "--dense", "recdoubling", "--min-ranks", "4", "--max-ranks",
                       "12", "--n", "4096", "--density", "0.09", "--network", "cm02", "--iters", "1", NULL};
    t_proc p = t_run(a);
    cr_assert(p.exited && p.status == 0, "%s", p.err);
    cr_assert(strstr(p.out, "no faster than dense already at P = 4 "), "%s", p.out);
    const char *s = strstr(p.out, "but wins again at P = ");
    cr_assert_not_null(s, "%s", p.out);
    int P;
    double ts, td;
    cr_assert_eq(sscanf(s, "but wins again at P = %d: %lf s vs recdoubling %lf s", &P, &ts, &td), 3, "%s", p.out);
    t_proc_free(&p);
    cr_assert_eq(P, 12);
    cr_assert_lt(ts, td);
    /* the times are those of the runs themselves, and P = 8 (skipped) loses */
    const char *dir = t_tmpdir();
    cr_assert_float_eq(run_time("gaussiank", "12", t_path(dir, "g12")), ts, 1e-6 * ts);
    cr_assert_float_eq(run_time("recdoubling", "12", t_path(dir, "r12")), td, 1e-6 * td);
    cr_assert_geq(run_time("gaussiank", "8", t_path(dir, "g8")), run_time("recdoubling", "8", t_path(dir, "r8")));
}

/* ---- the pieces the sweep's writer and readers share -------------------------- */

/* fields that need quotes get them, and read back as they were */
Test(csv, quoted_fields_read_back)
{
    const char *vals[] = {"plain", "a,b", "say \"hi\"", "two\nlines", "cr\r", "", "-"};
    const int nv = (int)(sizeof vals / sizeof vals[0]);
    char q[64];
    cr_assert_str_eq(sp_csv_field("plain", q, sizeof q), "plain");
    cr_assert_str_eq(sp_csv_field("say \"hi\"", q, sizeof q), "\"say \"\"hi\"\"\"");
    cr_assert_str_eq(sp_csv_field("a,b", q, sizeof q), "\"a,b\"");
    sp_csv_row row = {0};
    for (int rec = 0; rec < 2; rec++) {
        for (int i = 0; i < nv; i++)
            sp_csv_row_text(&row, vals[i]);
        sp_csv_row_num(&row, "%.0f", 42);
        sp_csv_row_empty(&row);
        sp_csv_row_end(&row);
    }
    cr_assert(!row.oom);
    const char *pos = row.text, *end = row.text + row.len;
    for (int rec = 0; rec < 2; rec++) {
        sp_csv_rec r;
        cr_assert_eq(sp_csv_next(&pos, end, &r), 1);
        cr_assert(r.complete);
        cr_assert_eq(r.n, nv + 2);
        for (int i = 0; i < nv; i++)
            cr_assert_str_eq(r.f[i], vals[i], "field %d", i);
        cr_assert_str_eq(r.f[nv], "42");
        cr_assert_str_eq(r.f[nv + 1], "");
        sp_csv_free(&r);
    }
    sp_csv_rec r;
    cr_assert_eq(sp_csv_next(&pos, end, &r), 0);
    sp_csv_row_free(&row);
    /* a record cut short, a quote never closed */
    const char *cut = "a,b", *open = "a,\"b\nc";
    pos = cut;
    cr_assert_eq(sp_csv_next(&pos, cut + strlen(cut), &r), 1);
    cr_assert(!r.complete);
    cr_assert_eq(r.n, 2);
    sp_csv_free(&r);
    pos = open;
    cr_assert_eq(sp_csv_next(&pos, open + strlen(open), &r), -1);
    cr_assert_eq(pos, open + strlen(open));
}

/* the header the sweep writes and its help shows is the table's */
Test(csv, sweep_header_is_the_table)
{
    cr_assert_eq(SP_SC_COUNT, 41);
    size_t w = 0;
    char hdr[2048];
    for (int i = 0; i < SP_SC_COUNT; i++) {
        const sp_sweep_column *c = &sp_sweep_columns[i];
        cr_assert(c->name && c->format && c->meaning && c->meaning[0], "column %d", i);
        cr_assert(c->type == SP_SC_TEXT ? !strcmp(c->format, "%s") : c->format[0] == '%', "%s", c->name);
        for (int j = 0; j < i; j++)
            cr_assert_str_neq(c->name, sp_sweep_columns[j].name);
        w += (size_t)snprintf(hdr + w, sizeof hdr - w, "%s%s", i ? "," : "", c->name);
    }
    cr_assert_str_eq(hdr, SP_SWEEP_HEADER);
    cr_assert_str_eq(sp_sweep_columns[SP_SC_SPEEDUP].name, "speedup_vs_dense");
    const char *dir = t_tmpdir();
    char csv[512];
    snprintf(csv, sizeof csv, "%s", t_path(dir, "h.csv"));
    const char *a[] = {"sweep", "--algo", "ring", "--ranks", "2", "--n", "1000", "--iters", "1", "--out", csv, NULL};
    t_proc p = t_run(a);
    cr_assert(p.exited && p.status == 0, "%s", p.err);
    t_proc_free(&p);
    char *text = t_read_file(csv, NULL);
    cr_assert(!strncmp(text, SP_SWEEP_HEADER, strlen(SP_SWEEP_HEADER)) && text[strlen(SP_SWEEP_HEADER)] == '\n',
              "%s", text);
    free(text);
    const char *h[] = {"sweep", "--help", NULL};
    p = t_run(h);
    char want[2100];
    snprintf(want, sizeof want, "columns: %s\n", SP_SWEEP_HEADER);
    cr_assert(strstr(p.out, want), "%s", p.out);
    t_proc_free(&p);
}

/* the one definition: over the fastest dense run (by its registry class) of
 * the same P, n, k, platform and disturbance level */
Test(speedup, one_definition)
{
    sp_speedup_run runs[] = {
        {.algo = "ring", .ranks = 8, .n = 1000, .k = 10, .platform = "1gbe", .level = "", .iter = 4},
        {.algo = "rabenseifner", .ranks = 8, .n = 1000, .k = 10, .platform = "1gbe", .level = "", .iter = 2},
        {.algo = "recdoubling", .ranks = 8, .n = 1000, .k = 10, .platform = "1gbe", .level = "", .iter = 2},
        {.algo = "topka", .ranks = 8, .n = 1000, .k = 10, .platform = "1gbe", .level = "", .iter = 1},
        {.algo = "ring", .ranks = 16, .n = 1000, .k = 10, .platform = "1gbe", .level = "", .iter = 0.5},
        {.algo = "ring", .ranks = 8, .n = 1000, .k = 10, .platform = "1gbe", .level = "noise=0.1", .iter = 0.25},
        {.algo = "gtopk", .ranks = 8, .n = 1000, .k = 10, .platform = "1gbe", .level = "", .iter = -1},
        {.algo = "no-such", .ranks = 8, .n = 1000, .k = 10, .platform = "1gbe", .level = "", .iter = 0.1},
    };
    const int n = (int)(sizeof runs / sizeof runs[0]);
    int best;
    cr_assert(sp_speedup_is_dense("ring") && sp_speedup_is_dense("rabenseifner") && !sp_speedup_is_dense("topka"));
    cr_assert(!sp_speedup_is_dense("no-such"));
    cr_assert_float_eq(sp_speedup_vs_dense(runs, n, &runs[3], &best), 2.0, 1e-12);
    cr_assert_eq(best, 1); /* the first of two equally fast */
    cr_assert_float_eq(sp_speedup_vs_dense(runs, n, &runs[0], &best), 0.5, 1e-12);
    cr_assert_float_eq(sp_speedup_vs_dense(runs, n, &runs[1], NULL), 1.0, 1e-12);
    cr_assert_float_eq(sp_speedup_vs_dense(runs, n, &runs[4], &best), 1.0, 1e-12); /* its own P */
    cr_assert_eq(best, 4);
    cr_assert_float_eq(sp_speedup_vs_dense(runs, n, &runs[5], &best), 1.0, 1e-12); /* its own level */
    cr_assert_eq(sp_speedup_vs_dense(runs, n, &runs[6], &best), 0.0); /* no training iteration */
    cr_assert_eq(best, -1);
    cr_assert_eq(sp_speedup_vs_dense(runs, 3, &runs[4], NULL), 0.0); /* no dense run of its setting */
    char lv[64];
    sp_speedup_level("noise", "0.1", lv, sizeof lv);
    cr_assert_str_eq(lv, "noise=0.1");
    sp_speedup_level("", "x", lv, sizeof lv);
    cr_assert_str_eq(lv, "");
}

/* a sweep resumed measures its new rows against the dense rows kept from
 * before it, as against those it writes itself */
Test(speedup, resumed_sweep_counts_the_rows_before)
{
    const char *dir = t_tmpdir();
    char csv[512];
    snprintf(csv, sizeof csv, "%s", t_path(dir, "r.csv"));
    const char *a[] = {"sweep", "--algo", "ring,topka", "--ranks", "4", "--n", "64K", "--network", "cm02",
                       "--train-compute", "0.001", "--batch", "8", "--jobs", "1", "--out", csv, "--resume", NULL};
    t_proc p = t_run(a);
    cr_assert(p.exited && p.status == 0, "%s", p.err);
    t_proc_free(&p);
    char *whole = t_read_file(csv, NULL);
    /* the topka row (the last) goes, as an interrupted sweep leaves it */
    char *cut = strdup(whole), *last = cut + strlen(cut) - 1;
    while (last > cut && last[-1] != '\n')
        last--;
    *last = '\0';
    t_write_file(csv, cut);
    p = t_run(a);
    cr_assert(p.exited && p.status == 0, "%s", p.err);
    cr_assert(strstr(p.out, "1 runs (0 failed), 1 already"), "%s", p.out);
    t_proc_free(&p);
    char *again = t_read_file(csv, NULL);
    const char *pos = again, *end = again + strlen(again);
    sp_csv_rec h, r[2];
    cr_assert_eq(sp_csv_next(&pos, end, &h), 1);
    cr_assert_eq(sp_csv_next(&pos, end, &r[0]), 1);
    cr_assert_eq(sp_csv_next(&pos, end, &r[1]), 1);
    cr_assert_str_eq(r[1].f[SP_SC_ALGO], "topka");
    double it_ring = strtod(r[0].f[SP_SC_ITERATION], NULL), it_topka = strtod(r[1].f[SP_SC_ITERATION], NULL);
    cr_assert(it_ring > 0 && it_topka > 0);
    cr_assert(r[1].f[SP_SC_SPEEDUP][0], "no speedup on the resumed row: %s", again);
    cr_assert_float_eq(strtod(r[1].f[SP_SC_SPEEDUP], NULL), it_ring / it_topka, 1e-5);
    sp_csv_free(&h);
    sp_csv_free(&r[0]);
    sp_csv_free(&r[1]);
    free(whole);
    free(cut);
    free(again);
}

/* analyze holds a disturbed run against the dense runs of its own level */
Test(speedup, analyze_compares_within_a_level)
{
    const char *dir = t_tmpdir();
    char csv[512];
    snprintf(csv, sizeof csv, "%s", t_path(dir, "d.csv"));
    const char *a[] = {"sweep", "--algo", "ring,topka", "--ranks", "4", "--n", "64K", "--network", "cm02",
                       "--train-compute", "0.001", "--batch", "8", "--device", "p100", "--straggler-fraction",
                       "0.5", "--disturb", "straggler-factor=1,3", "--jobs", "1", "--out", csv, NULL};
    t_proc p = t_run(a);
    cr_assert(p.exited && p.status == 0, "%s", p.err);
    t_proc_free(&p);
    char *text = t_read_file(csv, NULL);
    const char *pos = text, *end = text + strlen(text);
    sp_csv_rec h, r;
    cr_assert_eq(sp_csv_next(&pos, end, &h), 1);
    double sp[4] = {0};
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(sp_csv_next(&pos, end, &r), 1);
        sp[i] = strtod(r.f[SP_SC_SPEEDUP], NULL);
        sp_csv_free(&r);
    }
    sp_csv_free(&h);
    free(text);
    /* the sweep's rows: ring, topka at level 1, then at level 3 */
    cr_assert_float_eq(sp[0], 1.0, 1e-9);
    cr_assert_float_eq(sp[2], 1.0, 1e-9);
    const char *b[] = {"analyze", csv, NULL};
    p = t_run(b);
    cr_assert(p.exited && p.status == 0, "%s", p.err);
    char want[2][64];
    for (int i = 0; i < 2; i++) {
        snprintf(want[i], sizeof want[i], "%10.4f\n", sp[2 * i + 1]);
        cr_assert(strstr(p.out, want[i]), "analyze and the sweep disagree on '%s':\n%s", want[i], p.out);
    }
    const char *at = strstr(p.out, "training iterations");
    int ones = 0;
    for (const char *s = at; s && (s = strstr(s, "    1.0000\n")); s++)
        ones++;
    cr_assert_eq(ones, 2, "each level's ring is its own reference:\n%s", p.out);
    t_proc_free(&p);
}
