/* fuzz_summary.c - a run's summary.json, read back by `sparsim analyze` (the
 * run against its bounds) and by `sparsim compare` (the times side by side;
 * the run's messages.csv is a fixed, valid one). */
#include "fuzz_input.h"
#include "analysis/analyze.h"

static const char messages[] = "iter,phase,src,dst,tag,bytes,t_post,t_done\n"
                               "0,reduce-scatter,0,1,0,4096,0.000000000,0.000100000\n"
                               "0,reduce-scatter,1,0,0,4096,0.000000000,0.000100000\n"
                               "0,allgather,0,1,1,4096,0.000100000,0.000200000\n"
                               "0,allgather,1,0,1,4096,0.000100000,0.000200000\n";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet_stdout();
    fuzz_file("run/messages.csv", (const uint8_t *)messages, sizeof messages - 1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file("run/summary.json", data, size);
    char dir[512], err[2400];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    sp_analyze(dir, err, sizeof err);
    sp_compare(dir, dir, err, sizeof err);
    return 0;
}
