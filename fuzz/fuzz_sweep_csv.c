/* fuzz_sweep_csv.c - a sweep CSV, read back as `sparsim sweep --resume`
 * reads it (which rows are done, what a repair keeps, the dense rows the
 * speedups of later rows are measured against) and as `sparsim analyze` does
 * (the table), both through the one reader of traces/csv.c and the column
 * table of traces/sweep_columns.h.  The sweep's file is included to reach
 * its static functions. */
#include "fuzz_input.h"
#include "analysis/analyze.h"
#include "sim/commands/sweep.c"

/* the sweep a resumed CSV must belong to (the seeds were written by it:
 * sparsim sweep --algo ring,topka --ranks 4,8 --n 4096 --iters 1) */
static sp_plan *plans;
static int nplans;
static char settings[8192];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet_stdout();
    char *args[] = {"--algo", "ring,topka", "--ranks", "4,8", "--n", "4096", "--iters", "1", NULL};
    static sweep_opts o;
    sp_opts_defaults(&sweep_table, &o);
    sp_plan base;
    sp_plan_defaults(&base);
    char err[2400];
    int help, status;
    if (parse_sweep(8, args, &o, &base, &help, err, sizeof err) != 0) {
        fprintf(stderr, "fuzz_sweep_csv: %s\n", err);
        abort();
    }
    base.iters = o.iters;
    if (!(plans = make_plans(&o, &base, &nplans, &status, err, sizeof err))) {
        fprintf(stderr, "fuzz_sweep_csv: %s\n", err);
        abort();
    }
    settings_text(&plans[0], settings, sizeof settings);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file("sweep.csv", data, size);
    char err[2400];
    previous pv;
    read_previous(path, settings, plans, nplans, &pv, err, sizeof err);
    previous_free(&pv);
    sp_analyze(path, err, sizeof err);
    return 0;
}
