/* main.c - the sparsim command line: which command, and the small ones.
 *
 *   sparsim run | sweep | crossover | analyze | compare   (each in its own file)
 *   sparsim list              algorithms, platforms and device profiles
 *   sparsim platform NAME     a built-in platform as SimGrid XML
 *
 * Commands return the exit status and only main exits: 0 when everything
 * asked was done and written, 1 a failed run, 2 bad input, each failure with
 * one line on stderr (docs/reliability.md states the whole contract).
 */
#include "cli.h"
#include "algorithms/algorithm.h"
#include "topologies/device.h"
#include "topologies/platform.h"
#include "traces/trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: sparsim run [options]   simulate sparse and dense allreduce (see sparsim run --help)\n"
               "       sparsim sweep [options] runs over lists of algorithms, ranks, n, densities,\n"
               "                               platforms, one CSV row each (sparsim sweep --help)\n"
               "       sparsim merge --out FILE SHARD.csv ...   join the CSVs of a sweep's shards\n"
               "       sparsim crossover [options]   the P at which sparse stops beating dense\n"
               "       sparsim analyze DIR_OR_CSV   volumes and times against the closed forms\n"
               "       sparsim compare RUN_A RUN_B  same messages? times side by side\n"
               "       sparsim workload-stats [options]   statistics of gradients that decide volumes\n"
               "       sparsim profile --out F.json [options]   fit a workload profile to gradients\n"
               "       sparsim list            list algorithms, platforms and device profiles\n"
               "       sparsim platform NAME [--ranks P]   print a built-in platform as SimGrid XML\n"
               "       sparsim --version\n");
}

/* sparsim platform NAME [--ranks P]: prints a built-in platform's XML */
static int cmd_platform(int argc, char **argv)
{
    char xml[300], known[300];
    sp_platform_names(xml, sizeof xml, "|", 1);
    sp_platform_names(known, sizeof known, ", ", 1);
    if (argc < 1 || strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        fprintf(argc < 1 ? stderr : stdout,
                "usage: sparsim platform %s [--ranks P]   print the SimGrid XML of a built-in\n"
                "       platform (daint is built in code and has none)\n",
                xml);
        return argc < 1 ? 2 : 0;
    }
    sp_plan p;
    sp_plan_defaults(&p);
    char err[300] = "";
    if (argc == 3 && strcmp(argv[1], "--ranks") == 0) {
        if (sp_plan_set(&p, "ranks", argv[2], err, sizeof err) != 0) {
            sp_opts_print_error(err);
            return 2;
        }
    } else if (argc != 1) {
        fprintf(stderr, "sparsim: usage: sparsim platform %s [--ranks P]\n", xml);
        return 2;
    }
    if (!sp_platform_is_builtin(argv[0])) {
        char msg[700], shown[160];
        snprintf(msg, sizeof msg, "unknown built-in platform '%s' (known: %s)",
                 sp_opts_printable(argv[0], shown, sizeof shown), known);
        sp_opts_print_error(msg);
        return 2;
    }
    if (sp_platform_write_builtin(argv[0], p.ranks, stdout, err, sizeof err) != 0) {
        sp_opts_print_error(err);
        return 2;
    }
    return 0;
}

static int cmd_list(void)
{
    int n;
    const sp_algorithm *a = sp_algorithm_list(&n);
    printf("algorithms:\n");
    for (int i = 0; i < n; i++)
        printf("  %-14s %s\n", a[i].name, a[i].summary);
    printf("platforms:\n");
    sp_platform_write_list(stdout);
    const sp_device *d = sp_device_list(&n);
    printf("device profiles:\n");
    for (int i = 0; i < n; i++)
        printf("  %-14s %s\n", d[i].name, d[i].description);
    return 0;
}

static int run_command(int argc, char **argv);

int main(int argc, char **argv)
{
    int rc = run_command(argc, argv);
    /* what a command printed is part of what it was asked: a stdout that
     * could not take it (a full disk, a closed pipe) fails the command */
    if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout))) {
        char msg[200];
        snprintf(msg, sizeof msg, "cannot write on stdout: %s", strerror(errno));
        sp_opts_print_error(msg);
        rc = 1;
    }
    return rc;
}

static int run_command(int argc, char **argv)
{
    sp_part_cleanup_on_signals(); /* an interrupted run leaves no NAME.part behind */
    sp_run_keep_freed_memory();
    if (argc < 2) { /* bad input is one line, as everywhere */
        sp_opts_print_error("no command given (run, sweep, crossover, analyze, compare, workload-stats, profile, list, "
                            "platform; sparsim --help says more)");
        return 2;
    }
    if (strcmp(argv[1], "run") == 0)
        return sp_cmd_run(argc - 2, argv + 2);
    if (strcmp(argv[1], "list") == 0)
        return cmd_list();
    if (strcmp(argv[1], "platform") == 0)
        return cmd_platform(argc - 2, argv + 2);
    if (strcmp(argv[1], "sweep") == 0)
        return sp_cmd_sweep(argc - 2, argv + 2);
    if (strcmp(argv[1], "merge") == 0)
        return sp_cmd_merge(argc - 2, argv + 2);
    if (strcmp(argv[1], "crossover") == 0)
        return sp_cmd_crossover(argc - 2, argv + 2);
    if (strcmp(argv[1], "analyze") == 0)
        return sp_cmd_analyze(argc - 2, argv + 2);
    if (strcmp(argv[1], "compare") == 0)
        return sp_cmd_compare(argc - 2, argv + 2);
    if (strcmp(argv[1], "workload-stats") == 0)
        return sp_cmd_workload_stats(argc - 2, argv + 2);
    if (strcmp(argv[1], "profile") == 0)
        return sp_cmd_profile(argc - 2, argv + 2);
    if (strcmp(argv[1], "--version") == 0) {
        printf("sparsim %s\n", SPARSIM_VERSION);
        return 0;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    char msg[300], shown[160];
    snprintf(msg, sizeof msg, "unknown command '%s' (sparsim --help lists them)",
             sp_opts_printable(argv[1], shown, sizeof shown));
    sp_opts_print_error(msg);
    return 2;
}
