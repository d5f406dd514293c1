/* test_tables.c - the tables of facts held against each other and against
 * themselves: every registered algorithm has exactly one row of facts
 * (analysis/bounds.c) and every row an algorithm, each with its formulas and
 * citations, and the lower bound of the registry's class; every platform row
 * (topologies/platforms.c) is found by its name, says how it is built and
 * why it holds the ranks it holds. */
#include "algorithms/algorithm.h"
#include "analysis/bounds.h"
#include "topologies/device.h"
#include "topologies/platform.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static int filled(const char *s) { return s && s[0]; }

Test(facts, one_row_per_registered_algorithm)
{
    int na, nf;
    const sp_algorithm *a = sp_algorithm_list(&na);
    const sp_algo_facts *f = sp_algo_facts_list(&nf);
    cr_assert_gt(na, 0);
    for (int i = 0; i < na; i++) {
        int rows = 0;
        for (int j = 0; j < nf; j++)
            rows += strcmp(f[j].name, a[i].name) == 0;
        cr_assert_eq(rows, 1, "%s has %d rows of facts", a[i].name, rows);
        cr_assert_str_eq(sp_algo_facts_find(a[i].name)->name, a[i].name);
    }
    for (int j = 0; j < nf; j++) {
        int regs = 0;
        for (int i = 0; i < na; i++)
            regs += strcmp(f[j].name, a[i].name) == 0;
        cr_assert_eq(regs, 1, "the facts row %s names no registered algorithm", f[j].name);
    }
    cr_assert_eq(na, nf);
    /* in the same order, so that listings read the same from either table */
    for (int i = 0; i < na; i++)
        cr_assert_str_eq(f[i].name, a[i].name);
    cr_assert_null(sp_algo_facts_find("nosuch"));
}

Test(facts, every_row_has_formulas_citations_and_its_class_lower_bound)
{
    int nf;
    const sp_algo_facts *f = sp_algo_facts_list(&nf);
    for (int j = 0; j < nf; j++) {
        cr_assert(filled(f[j].formula) && filled(f[j].source), "%s: volume formula and citation", f[j].name);
        cr_assert(filled(f[j].time_formula) && filled(f[j].time_source), "%s: prediction and citation", f[j].name);
        cr_assert(f[j].words && f[j].seconds, "%s: closed forms", f[j].name);
        cr_assert(filled(f[j].consumes), "%s: what it consumes from the residual", f[j].name);
        const sp_algorithm *a = sp_algorithm_find(f[j].name);
        cr_assert_not_null(a);
        const sp_lower_bound *lb = sp_lower_bound_of(a->cls);
        cr_assert_not_null(lb, "%s: no lower bound for class %s", f[j].name, sp_algo_class_name(a->cls));
        cr_assert(filled(lb->formula) && filled(lb->source));
        /* the bound a run reports takes the class's lower bound: in n for a
         * dense allreduce, in k for a sparse one */
        sp_bound b;
        cr_assert_eq(sp_facts_bound(&f[j], 8, 800, 8, &b), 0);
        cr_assert_str_eq(b.lower_formula, lb->formula);
        static const char *const lower[] = {[SP_ALGO_DENSE] = "2n(P-1)/P", [SP_ALGO_SPARSE] = "2k(P-1)/P",
                                            [SP_ALGO_COMPRESSED] = "2n(P-1)/(32P)"};
        static const double lower_words[] = {[SP_ALGO_DENSE] = 2.0 * 800 * 7 / 8, [SP_ALGO_SPARSE] = 2.0 * 8 * 7 / 8,
                                             [SP_ALGO_COMPRESSED] = 2.0 * 800 * 7 / 8 / 32};
        cr_assert_str_eq(b.lower_formula, lower[a->cls], "%s", f[j].name);
        cr_assert_float_eq(b.lower_words, lower_words[a->cls], 1e-9, "%s", f[j].name);
        cr_assert_str_eq(b.formula, f[j].formula);
        cr_assert(b.words > 0 && sp_facts_predict(&f[j], 8, 800, 8, 1e-6, 1e-9) > 0, "%s", f[j].name);
    }
}

Test(facts, two_class_forms_reduce_to_one_class)
{
    /* where a row knows nodes, its two-class form with both classes equal on
     * one port is its one-class form: on a flat platform, or nodes of 4 */
    int nf, with = 0;
    const sp_algo_facts *f = sp_algo_facts_list(&nf);
    sp_link_classes one = {1e-6, 1e-9, 1e-6, 1e-9, 1, 0};
    for (int j = 0; j < nf; j++) {
        if (!f[j].seconds2) {
            cr_assert_eq(sp_facts_predict_nodes(&f[j], 8, 800, 8, NULL, &one), -1.0, "%s", f[j].name);
            continue;
        }
        with++;
        double flat = sp_facts_predict(&f[j], 8, 800, 8, 1e-6, 1e-9);
        cr_assert_float_eq(sp_facts_predict_nodes(&f[j], 8, 800, 8, NULL, &one), flat, 1e-15, "%s", f[j].name);
        sp_nodes nd = {.G = 4};
        cr_assert_gt(sp_facts_predict_nodes(&f[j], 8, 800, 8, &nd, &one), 0, "%s", f[j].name);
    }
    cr_assert_geq(with, 2, "nccl-ring and nccl-tree know nodes");
}

Test(facts, diagnostics_have_none)
{
    /* the registry's diagnostics run by name but have no closed form */
    cr_assert_not_null(sp_algorithm_find("selftest-unmatched"));
    cr_assert_null(sp_algo_facts_find("selftest-unmatched"));
    sp_bound b;
    cr_assert_neq(sp_bound_volume("selftest-unmatched", 8, 800, 8, &b), 0);
    cr_assert_eq(sp_predict_time("selftest-unmatched", 8, 800, 8, 1e-6, 1e-9), -1.0);
    cr_assert_eq(sp_predict_time("nosuch", 1, 800, 8, 1e-6, 1e-9), 0.0);
}

/* ---- platforms (topologies/platforms.c) ---------------------------------- */

/* the number after "up to " in text, or -1 */
static long up_to(const char *text)
{
    const char *u = strstr(text, "up to ");
    return u ? strtol(u + 6, NULL, 10) : -1;
}

Test(platforms, every_row_is_whole_and_found_by_its_name)
{
    int n;
    const sp_platform_row *r = sp_platform_rows(&n);
    cr_assert_gt(n, 1);
    cr_assert_eq(r[n - 1].kind, SP_PLATFORM_FILE, "the file row comes last");
    char help[2000];
    cr_assert_lt(sp_platform_help(help, sizeof help), sizeof help);
    for (int i = 0; i < n; i++) {
        cr_assert(filled(r[i].name) && filled(r[i].syntax) && filled(r[i].summary) && filled(r[i].description),
                  "row %d", i);
        /* a network model it wants is one --network takes; a device it names is a profile */
        cr_assert(!r[i].network || !strcmp(r[i].network, "cm02") || !strcmp(r[i].network, "lv08"), "%s: network %s",
                  r[i].name, r[i].network);
        cr_assert(r[i].kind == SP_PLATFORM_FILE || r[i].network, "%s: no network model", r[i].name);
        cr_assert(!r[i].device || sp_device_find(r[i].device), "%s: device %s", r[i].name, r[i].device);
        cr_assert(!r[i].fabric || (r[i].kind == SP_PLATFORM_CODE && r[i].gpus_per_node == r[i].fabric->gpus_per_node),
                  "%s: its nodes", r[i].name);
        if (!r[i].unlisted)
            cr_assert_not_null(strstr(help, r[i].syntax), "%s is not in the help's list", r[i].name);
        if (r[i].kind == SP_PLATFORM_FILE) {
            cr_assert_null(sp_platform_find(r[i].name));
            continue;
        }
        cr_assert_eq(sp_platform_find(r[i].name), &r[i], "%s", r[i].name);
        cr_assert(r[i].kind == SP_PLATFORM_XML ? r[i].write_xml && !r[i].builder
                                               : filled(r[i].builder) && filled(r[i].why_code) && !r[i].write_xml,
                  "%s: how it is built", r[i].name);
        cr_assert(!r[i].max_ranks || filled(r[i].ranks_why), "%s: why it holds %d ranks", r[i].name, r[i].max_ranks);
        /* a limit the prose states is the row's */
        long stated = up_to(r[i].description) >= 0 ? up_to(r[i].description) : up_to(r[i].summary);
        cr_assert(stated < 0 || stated == r[i].max_ranks, "%s says up to %ld ranks, holds %d", r[i].name, stated,
                  r[i].max_ranks);
        cr_assert_eq(strncmp(r[i].syntax, r[i].name, strlen(r[i].name)), 0, "%s", r[i].name);
        cr_assert_eq(!!r[i].param, strcmp(r[i].syntax, r[i].name) != 0, "%s: a parameter is in its syntax", r[i].name);
    }
    cr_assert_null(sp_platform_find("nosuch.xml"));
    cr_assert_not_null(sp_platform_find("1gbe-switch:4"));
}

Test(platforms, ranks_beyond_a_row_are_refused_with_its_reason)
{
    int n;
    const sp_platform_row *r = sp_platform_rows(&n);
    for (int i = 0; i < n; i++) {
        if (!r[i].max_ranks)
            continue;
        sp_platform p;
        char err[400] = "";
        cr_assert_neq(sp_platform_prepare(r[i].name, r[i].max_ranks + 1, &p, err, sizeof err), 0, "%s", r[i].name);
        cr_assert_not_null(strstr(err, r[i].ranks_why), "%s: %s", r[i].name, err);
        if (r[i].kind == SP_PLATFORM_CODE) { /* built in code: nothing to write, the limit itself is fine */
            cr_assert_eq(sp_platform_prepare(r[i].name, r[i].max_ranks, &p, err, sizeof err), 0, "%s", err);
            sp_platform_release(&p);
        }
    }
}

/* ---- devices (topologies/devices.c) and Ok-Topk's presets ---------------- */

Test(devices, every_row_is_named_once_and_sourced)
{
    int n;
    const sp_device *d = sp_device_list(&n);
    for (int i = 0; i < n; i++) {
        cr_assert(filled(d[i].name) && filled(d[i].description) && filled(d[i].source), "row %d", i);
        cr_assert_eq(sp_device_find(d[i].name), &d[i], "%s is not found as itself", d[i].name);
        cr_assert(d[i].copy_lat == 0 || d[i].copy_bw > 0, "%s: copies need a bandwidth", d[i].name);
    }
    char err[600];
    cr_assert_null(sp_device_load("no-such-device", err, sizeof err));
    for (int i = 0; i < n; i++)
        cr_assert_not_null(strstr(err, d[i].name), "the unknown-device message lacks %s: %s", d[i].name, err);
}

Test(presets, every_preset_is_found_by_its_name)
{
    for (int i = 0; i < 3; i++) {
        const sp_oktopk_preset *p = sp_oktopk_preset_at(i);
        int at = -1;
        cr_assert_eq(sp_oktopk_preset_find(p->name, &at), p);
        cr_assert_eq(at, i);
        cr_assert(p->density > 0 && p->tau_prime > 0 && p->local_s > 1 && p->glob_div > 1 && p->glob_mul > 1,
                  "%s", p->name);
    }
}
