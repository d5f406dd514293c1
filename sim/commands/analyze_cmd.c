/* analyze_cmd.c - `sparsim analyze` and `sparsim compare`: the command lines
 * around the analysis of finished runs (analysis/analyze.c, compare.c). */
#include "cli.h"
#include "../../analysis/analyze.h"

#include <stdio.h>
#include <string.h>

static int is_help(const char *a) { return !strcmp(a, "--help") || !strcmp(a, "-h"); }

int sp_cmd_analyze(int argc, char **argv)
{
    if (argc != 1) {
        sp_opts_print_error("usage: sparsim analyze DIR_OR_CSV (sparsim analyze --help says more)");
        return 2;
    }
    if (is_help(argv[0])) {
        fprintf(stdout, "usage: sparsim analyze DIR_OR_CSV\n"
                   "  DIR: a run folder (sparsim run --out), every summary.json two levels below it\n"
                   "  CSV: a sweep CSV (sparsim sweep --out)\n"
                   "For each run: volume per iteration as the bounds count it (per phase the\n"
                   "largest over ranks of max(sent, received), summed) against the algorithm's\n"
                   "closed-form bound and the lower bound of its class, in words (4 bytes) with\n"
                   "bytes beside; time per iteration against the alpha-beta prediction from the\n"
                   "platform's route latency and bandwidth.  Formulas and papers are listed below\n"
                   "the table.\n"
                   "Exit status: 0, or 2 with one line for input that is not a run folder or a sweep\n"
                   "CSV (malformed rows, fields that are not numbers or are negative, a summary.json\n"
                   "that is not JSON).\n");
        return 0;
    }
    char err[600] = "";
    int rc = sp_analyze(argv[0], err, sizeof err);
    if (rc != 0)
        sp_opts_print_error(err);
    return rc;
}

int sp_cmd_compare(int argc, char **argv)
{
    if (argc != 2) {
        int help = argc == 1 && is_help(argv[0]);
        if (!help) {
            sp_opts_print_error("usage: sparsim compare RUN_A RUN_B (sparsim compare --help says more)");
            return 2;
        }
        fprintf(stdout,
                "usage: sparsim compare RUN_A RUN_B   (two --out folders, from any backends)\n"
                "Compares the message lists (iter, phase, src, dst, tag, bytes) and the times per\n"
                "iteration and phase.  Exit status: 0 the lists match, 1 they differ, 2 bad input.\n");
        return 0;
    }
    char err[600] = "";
    int rc = sp_compare(argv[0], argv[1], err, sizeof err);
    if (rc == 2)
        sp_opts_print_error(err);
    return rc;
}
