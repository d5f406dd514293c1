/* test_tables.c - the tables of facts held against each other: every
 * registered algorithm has exactly one row of facts (analysis/bounds.c) and
 * every row an algorithm, each with its formulas and citations, and the
 * lower bound of the registry's class. */
#include "algorithms/algorithm.h"
#include "analysis/bounds.h"

#include <criterion/criterion.h>
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
        cr_assert_str_eq(b.lower_formula, a->cls == SP_ALGO_DENSE ? "2n(P-1)/P" : "2k(P-1)/P", "%s", f[j].name);
        cr_assert_float_eq(b.lower_words, a->cls == SP_ALGO_DENSE ? 2.0 * 800 * 7 / 8 : 2.0 * 8 * 7 / 8, 1e-9);
        cr_assert_str_eq(b.formula, f[j].formula);
        cr_assert(b.words > 0 && sp_facts_predict(&f[j], 8, 800, 8, 1e-6, 1e-9) > 0, "%s", f[j].name);
    }
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
