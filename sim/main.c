/* main.c - the sparsim command line.
 *
 *   sparsim run [options]   simulate one algorithm, or several side by side
 *   sparsim list            algorithms, platforms and device profiles
 *
 * Only this file exits.  Usage errors exit 2, failed runs 1, each with one
 * line on stderr.  Several algorithms run one per child process (a SimGrid
 * engine runs once per process) and are compared in a table.
 */
#include "plan.h"
#include "run.h"
#include "cli.h"
#include "../analysis/analyze.h"
#include "../algorithms/algorithm.h"
#include "../topologies/device.h"
#include "../topologies/platform.h"
#include "../traces/trace.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int sp_mkdirs(const char *path, char *err, size_t errlen);

static void usage(FILE *f)
{
    fprintf(f, "usage: sparsim run [options]   simulate sparse and dense allreduce (see sparsim run --help)\n"
               "       sparsim sweep [options] runs over lists of algorithms, ranks, n, densities,\n"
               "                               platforms, one CSV row each (sparsim sweep --help)\n"
               "       sparsim crossover [options]   the P at which sparse stops beating dense\n"
               "       sparsim analyze DIR_OR_CSV   volumes and times against the closed forms\n"
               "       sparsim compare RUN_A RUN_B  same messages? times side by side\n"
               "       sparsim list            list algorithms, platforms and device profiles\n"
               "       sparsim platform NAME [--ranks P]   print a built-in platform as SimGrid XML\n"
               "       sparsim --version\n");
}

/* sparsim platform NAME [--ranks P]: prints a built-in platform's XML */
static int cmd_platform(int argc, char **argv)
{
    if (argc < 1 || strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        fprintf(argc < 1 ? stderr : stdout,
                "usage: sparsim platform 1gbe|daint [--ranks P]   print the SimGrid XML of a built-in platform\n");
        return argc < 1 ? 2 : 0;
    }
    int P = 64;
    if (argc == 3 && strcmp(argv[1], "--ranks") == 0) {
        char *end;
        long v = strtol(argv[2], &end, 10);
        if (*end || v < 1 || v > 30000) {
            fprintf(stderr, "sparsim: --ranks must be an integer in 1..30000, got '%s'\n", argv[2]);
            return 2;
        }
        P = (int)v;
    } else if (argc != 1) {
        fprintf(stderr, "sparsim: usage: sparsim platform 1gbe|daint [--ranks P]\n");
        return 2;
    }
    if (!sp_platform_is_builtin(argv[0])) {
        fprintf(stderr, "sparsim: unknown built-in platform '%s' (known: 1gbe, daint)\n", argv[0]);
        return 2;
    }
    char err[300] = "";
    if (sp_platform_write_builtin(argv[0], P, stdout, err, sizeof err) != 0) {
        fprintf(stderr, "sparsim: %s\n", err);
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
    printf("platforms:\n"
           "  %-14s %s\n  %-14s %s\n  %-14s %s\n",
           "1gbe", "1 Gbps Ethernet crossbar: 125 MB/s, 50 us per link",
           "daint", "Cray Aries dragonfly (Piz Daint): 5.25 GB/s links, 100 ns per hop, up to 6144 ranks\n"
           "                 in groups of 384, joined by one link per pair of groups (pessimistic past 384)",
           "FILE.xml", "any SimGrid platform; rank i runs on the platform's i-th host");
    const sp_device *d = sp_device_list(&n);
    printf("device profiles:\n");
    for (int i = 0; i < n; i++)
        printf("  %-14s %s\n", d[i].name, d[i].description);
    return 0;
}

/* several algorithms: one child process each, then a comparison table */
static int run_many(const sp_plan *base, char names[][64], int count)
{
    char err[600];
    if (sp_mkdirs(base->out, err, sizeof err) != 0) {
        fprintf(stderr, "sparsim: %s\n", err);
        return 2;
    }
    for (int i = 0; i < count; i++) {
        sp_plan p = *base;
        snprintf(p.algo, sizeof p.algo, "%.63s", names[i]);
        if ((size_t)snprintf(p.out, sizeof p.out, "%s/%s", base->out, names[i]) >= sizeof p.out) {
            fprintf(stderr, "sparsim: --out path is too long\n");
            return 2;
        }
        p.quiet = 1;
        int rc = sp_cli_run_in_child(&p);
        if (rc != 0)
            return rc;
    }
    char path[2200];
    snprintf(path, sizeof path, "%s/comparison.csv", base->out);
    FILE *csv = fopen(path, "w");
    if (!csv) {
        fprintf(stderr, "sparsim: cannot write %s\n", path);
        return 1;
    }
    fprintf(csv, "algo,ranks,n,density,k,platform,network,device,iters,payload,time_per_iter_s,volume_bytes,"
                 "bound_formula,bound_bytes,bound_ratio,sent_bytes_max,recv_bytes_max,messages,wall_s\n");
    if (!base->quiet) {
        printf("P = %d on %s (%s network, device %s), n = %llu, density %g, %d iteration%s\n", base->ranks,
               base->platform, base->network, base->device, (unsigned long long)base->n, base->density,
               base->iters, base->iters == 1 ? "" : "s");
        printf("%-14s %14s %16s %14s %10s %14s %10s\n", "algorithm", "time/iter (s)", "volume/rank (B)",
               "bound (B)", "vol/bound", "max sent (B)", "messages");
    }
    for (int i = 0; i < count; i++) {
        snprintf(path, sizeof path, "%.1023s/%.63s/summary.json", base->out, names[i]);
        cJSON *j = sp_json_read(path);
        if (!j) {
            fprintf(stderr, "sparsim: cannot read %s\n", path);
            fclose(csv);
            return 1;
        }
        double t = sp_json_num(j, "time_per_iter_s", "mean"), vol = sp_json_num(j, "volume", "bytes_per_iter_max");
        double bw = sp_json_num(j, "bound", "words"), ratio = sp_json_num(j, "bound", "ratio");
        double smax = sp_json_num(j, "ranks", "sent_bytes_max"), rmax = sp_json_num(j, "ranks", "recv_bytes_max");
        double msgs = sp_json_num(j, "messages", NULL), k = sp_json_num(j, "k", NULL), wall = sp_json_num(j, "wall_seconds", NULL);
        const char *formula = sp_json_str(j, "bound", "formula");
        fprintf(csv, "%s,%d,%llu,%.17g,%.0f,%s,%s,%s,%d,%s,%.9g,%.0f,\"%s\",%.0f,%.6f,%.0f,%.0f,%.0f,%.3f\n",
                names[i], base->ranks, (unsigned long long)sp_json_num(j, "config", "n"), base->density, k,
                base->platform, base->network, base->device, (int)sp_json_num(j, "config", "iters"),
                sp_json_str(j, "config", "payload"), t, vol, formula, 4.0 * bw, ratio, smax, rmax, msgs, wall);
        if (!base->quiet) {
            printf("%-14s %14.6g %16.0f %14.0f %10.4f %14.0f %10.0f\n", names[i], t, vol, 4.0 * bw, ratio, smax,
                   msgs);
        }
        cJSON_Delete(j);
    }
    fclose(csv);
    if (!base->quiet)
        printf("bound: each algorithm's closed-form volume per rank (formulas and sources in summary.json)\n"
               "outputs: %s/NAME/{messages.csv,summary.json,trace.json}, table in %s/comparison.csv\n", base->out,
               base->out);
    return 0;
}

static int cmd_run(int argc, char **argv)
{
    sp_plan p;
    sp_plan_defaults(&p);
    char err[600] = "";
    int rc = sp_plan_parse(&p, argc, argv, err, sizeof err);
    if (rc == 1) {
        sp_plan_print_help("sparsim");
        return 0;
    }
    if (rc != 0 || sp_plan_validate(&p, err, sizeof err) != 0) {
        fprintf(stderr, "sparsim: %s\n", err);
        return 2;
    }
    char names[32][64];
    int count = sp_plan_algorithms(&p, names, 32);
    if (count == 1) {
        snprintf(p.algo, sizeof p.algo, "%s", names[0]);
        return sp_cli_run_in_child(&p);
    }
    if (p.dump_result[0] || p.grad_file[0] == '\0') {
        if (p.dump_result[0]) {
            fprintf(stderr, "sparsim: --dump-result needs a single --algo\n");
            return 2;
        }
    }
    return run_many(&p, names, count);
}

int main(int argc, char **argv)
{
    sp_part_cleanup_on_signals(); /* an interrupted run leaves no NAME.part behind */
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "run") == 0)
        return cmd_run(argc - 2, argv + 2);
    if (strcmp(argv[1], "list") == 0)
        return cmd_list();
    if (strcmp(argv[1], "platform") == 0)
        return cmd_platform(argc - 2, argv + 2);
    if (strcmp(argv[1], "sweep") == 0)
        return sp_cmd_sweep(argc - 2, argv + 2);
    if (strcmp(argv[1], "crossover") == 0)
        return sp_cmd_crossover(argc - 2, argv + 2);
    if (strcmp(argv[1], "analyze") == 0)
        return sp_cmd_analyze(argc - 2, argv + 2);
    if (strcmp(argv[1], "compare") == 0)
        return sp_cmd_compare(argc - 2, argv + 2);
    if (strcmp(argv[1], "--version") == 0) {
        printf("sparsim 0.1.0\n");
        return 0;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "sparsim: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
