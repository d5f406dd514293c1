/* analyze_cmd.c - `sparsim analyze` and `sparsim compare`: the command lines
 * around the analysis of finished runs (analysis/analyze.c, compare.c). */
#include "cli.h"
#include "analysis/analyze.h"

#include <stdio.h>
#include <string.h>

static int is_help(const char *a) { return !strcmp(a, "--help") || !strcmp(a, "-h"); }

int sp_cmd_analyze(int argc, char **argv)
{
    static const char *const formats[] = {"text", "csv", "json", "markdown"};
    const char *path = NULL;
    int format = SP_ANALYZE_TEXT, bad = 0;
    for (int i = 0; i < argc; i++) {
        const char *f = NULL;
        if (is_help(argv[i])) {
            path = NULL;
            bad = -1;
            break;
        }
        if (!strcmp(argv[i], "--format") && i + 1 < argc)
            f = argv[++i];
        else if (!strncmp(argv[i], "--format=", 9))
            f = argv[i] + 9;
        else if (!strcmp(argv[i], "--format") || (!strncmp(argv[i], "--", 2) && argv[i][2]) || path)
            bad = 1;
        else
            path = argv[i];
        if (f) {
            format = -1;
            for (int k = 0; k < 4; k++)
                if (!strcmp(f, formats[k]))
                    format = k;
            if (format < 0) {
                char shown[80], msg[200];
                snprintf(msg, sizeof msg, "--format must be text, csv, json or markdown, got '%s'",
                         sp_opts_printable(f, shown, sizeof shown));
                sp_opts_print_error(msg);
                return 2;
            }
        }
    }
    if (bad > 0 || (!path && bad == 0)) {
        sp_opts_print_error("usage: sparsim analyze [--format text|csv|json|markdown] DIR_OR_CSV (sparsim analyze "
                            "--help says more)");
        return 2;
    }
    if (bad < 0) {
        fprintf(stdout, "usage: sparsim analyze [--format text|csv|json|markdown] DIR_OR_CSV\n"
                   "  DIR: a run folder (sparsim run --out), every summary.json two levels below it\n"
                   "  CSV: a sweep CSV (sparsim sweep --out)\n"
                   "For each run: volume per iteration as the bounds count it (per phase the\n"
                   "largest over ranks of max(sent, received), summed) against the algorithm's\n"
                   "closed-form bound and the lower bound of its class, in words (4 bytes) with\n"
                   "bytes beside; time per iteration against the alpha-beta prediction from the\n"
                   "platform's route latency and bandwidth; and the figures nccl-tests prints for\n"
                   "an allreduce (size 4n bytes, for sparse algorithms their effective size, the\n"
                   "dense gradient they reduce; algbw = size / time; busbw = algbw x 2(P-1)/P).\n"
                   "Formulas and papers are listed below the table.\n"
                   "--format csv|json|markdown: one row per run for a data frame or a paper, with\n"
                   "the columns algo, ranks, n, k, platform, volume_bytes, volume_words,\n"
                   "bound_words, bound_ratio, lower_words, lower_ratio, time_per_iter_s,\n"
                   "predicted_s, time_over_predicted, size_bytes, effective_size, algbw_Bps,\n"
                   "busbw_Bps, bus_factor, iteration_s, samples_per_s (bytes, words of 4 bytes,\n"
                   "seconds, bytes per second); a figure that does not apply is empty in csv,\n"
                   "null in json ({\"schema_version\", \"columns\", \"runs\": [{...}]}), - in markdown.\n"
                   "Exit status: 0, or 2 with one line for input that is not a run folder or a sweep\n"
                   "CSV (malformed rows, fields that are not numbers or are negative, a summary.json\n"
                   "that is not JSON).\n");
        return 0;
    }
    char err[600] = "";
    int rc = sp_analyze_as(path, format, err, sizeof err);
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
