/* test_cli.c - the sparsim binary as a user runs it: outputs, determinism,
 * config files, gradient files, and bad input (one clear line, exit 2, no
 * crash, no output that looks complete). */
#include "helpers.h"
#include "traces/npy.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

Test(cli, help_lists_every_option)
{
    /* --help: the everyday options, and how to see every other group */
    const char *args[] = {"run", "--help", NULL};
    t_proc p = t_run(args);
    cr_assert(p.exited && p.status == 0);
    const char *everyday[] = {"--algo",  "--ranks",     "--platform",    "--network", "--device",  "--n",
                              "--density", "--iters",   "--seed",        "--out",     "--grad-file", "--dump-result",
                              "--payload", "--no-csv",  "--no-trace",    "--config",  "--help=all", "--help=outputs",
                              "--help=disturbances", "--help=gradients", "--help=network"};
    for (size_t i = 0; i < sizeof everyday / sizeof everyday[0]; i++)
        cr_assert(strstr(p.out, everyday[i]), "--help does not mention %s", everyday[i]);
    cr_assert(!strstr(p.out, "--watchdog") && !strstr(p.out, "--select"),
              "sparsim run --help shows sparsim-mpi's options");
    int short_lines = t_count_lines(p.out);
    t_proc_free(&p);
    /* --help=all: every option, the everyday ones included */
    const char *all_args[] = {"run", "--help=all", NULL};
    p = t_run(all_args);
    cr_assert(p.exited && p.status == 0);
    const char *more[] = {"--algo",       "--trace-msgs", "--crosstraffic", "--tau-prime",  "--grad-mean",
                          "--batch",      "--noise-kind", "--bg-flow",      "--no-disturb-baseline", "--config"};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
        cr_assert(strstr(p.out, more[i]), "--help=all does not mention %s", more[i]);
    cr_assert(!strstr(p.out, "--watchdog"), "sparsim run --help=all shows sparsim-mpi's --watchdog");
    cr_assert(2 * short_lines < t_count_lines(p.out), "--help (%d lines) is not the short one", short_lines);
    t_proc_free(&p);
    /* --help=GROUP: that group only; an unknown one is bad input */
    const char *group_args[] = {"run", "--help=outputs", NULL};
    p = t_run(group_args);
    cr_assert(p.exited && p.status == 0);
    cr_assert(strstr(p.out, "--trace-msgs") && !strstr(p.out, "--algo"), "--help=outputs: %s", p.out);
    t_proc_free(&p);
    const char *bad_args[] = {"run", "--help=nonesuch", NULL};
    p = t_run(bad_args);
    cr_assert(p.exited && p.status == 2 && strstr(p.err, "no such group") && !p.out[0], "%d %s", p.status, p.err);
    t_proc_free(&p);
}

Test(cli, outputs_open_in_the_usual_tools)
{
    const char *dir = t_tmpdir();
    const char *args[] = {"run", "--algo", "topka", "--ranks", "5", "--n", "2000", "--out", dir, NULL};
    t_proc p = t_run(args);
    cr_assert(p.exited && p.status == 0, "status %d: %s", p.status, p.err);
    cr_assert(strstr(p.out, "bound 2k(P-1)"), "summary lacks the bound: %s", p.out);
    char *csv = t_read_file(t_path(dir, "messages.csv"), NULL);
    cr_assert_not_null(csv);
    cr_assert(strncmp(csv, "iter,phase,src,dst,tag,bytes,t_post,t_done\n", 43) == 0);
    /* Bruck allgather at P = 5: 3 rounds, one message per rank per round */
    cr_assert_eq(t_count_lines(csv), 1 + 15);
    char *sum = t_read_file(t_path(dir, "summary.json"), NULL);
    cJSON *j = cJSON_Parse(sum);
    cr_assert_not_null(j, "summary.json is not JSON");
    cJSON *bound = cJSON_GetObjectItem(j, "bound");
    cr_assert_float_eq(cJSON_GetObjectItem(bound, "ratio")->valuedouble, 1.0, 1e-9);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "ranks"), "sent_bytes")), 5);
    cJSON_Delete(j);
    char *tr = t_read_file(t_path(dir, "trace.json"), NULL);
    cJSON *t = cJSON_Parse(tr);
    cr_assert_not_null(t, "trace.json is not JSON");
    cJSON *ev = cJSON_GetObjectItem(t, "traceEvents");
    cr_assert(cJSON_IsArray(ev) && cJSON_GetArraySize(ev) > 15 * 2);
    int spans = 0, names = 0;
    cJSON *e;
    cJSON_ArrayForEach(e, ev)
    {
        const char *ph = cJSON_GetObjectItem(e, "ph")->valuestring;
        spans += strcmp(ph, "X") == 0;
        names += strcmp(ph, "M") == 0;
    }
    cr_assert_gt(spans, 0);
    cr_assert_eq(names, 1 + 2 * 5); /* process name, then a name and an order per rank */
    cJSON_Delete(t);
    free(csv);
    free(sum);
    free(tr);
    t_proc_free(&p);
}

Test(cli, same_seed_gives_identical_traces)
{
    char a[256], b[256];
    snprintf(a, sizeof a, "%s", t_tmpdir());
    snprintf(b, sizeof b, "%s", t_tmpdir());
    for (int i = 0; i < 2; i++) {
        const char *args[] = {"run", "--algo", "topka,ring", "--ranks", "7", "--n", "3000", "--seed", "42", "--out",
                              i ? b : a, NULL};
        t_proc p = t_run(args);
        cr_assert(p.exited && p.status == 0, "%s", p.err);
        t_proc_free(&p);
    }
    const char *algos[] = {"topka", "ring"};
    for (int i = 0; i < 2; i++) {
        char pa[512], pb[512];
        snprintf(pa, sizeof pa, "%s/%s/messages.csv", a, algos[i]);
        snprintf(pb, sizeof pb, "%s/%s/messages.csv", b, algos[i]);
        size_t la, lb;
        char *x = t_read_file(pa, &la), *y = t_read_file(pb, &lb);
        cr_assert(x && y);
        cr_assert(la == lb && memcmp(x, y, la) == 0, "%s: messages.csv differs between runs", algos[i]);
        free(x);
        free(y);
    }
}

static void write_grads(const char *path, uint64_t I, uint64_t P, uint64_t n, float (*f)(uint64_t, uint64_t, uint64_t))
{
    float *g = malloc(I * P * n * sizeof *g);
    for (uint64_t it = 0; it < I; it++)
        for (uint64_t r = 0; r < P; r++)
            for (uint64_t i = 0; i < n; i++)
                g[(it * P + r) * n + i] = f(it, r, i);
    uint64_t shape3[3] = {I, P, n}, shape2[2] = {P, n};
    char err[256];
    int rc = I == 1 ? sp_npy_write(path, g, 2, shape2, err, sizeof err) : sp_npy_write(path, g, 3, shape3, err, sizeof err);
    cr_assert_eq(rc, 0, "%s", err);
    free(g);
}

static float grad_a(uint64_t it, uint64_t r, uint64_t i)
{
    (void)it;
    return (float)((double)(r + 1) * sin((double)i * 0.37) + 0.01 * (double)i);
}

static float grad_ones(uint64_t it, uint64_t r, uint64_t i)
{
    (void)it;
    (void)r;
    (void)i;
    return 1.0f;
}

Test(cli, grad_file_and_dump_result)
{
    const char *dir = t_tmpdir();
    write_grads(t_path(dir, "g.npy"), 1, 3, 40, grad_a);
    const char *args[] = {"run", "--algo", "ring", "--ranks", "3", "--grad-file", t_path(dir, "g.npy"),
                          "--dump-result", t_path(dir, "r.npy"), "--out", t_path(dir, "o"), "--quiet", NULL};
    t_proc p = t_run(args);
    cr_assert(p.exited && p.status == 0, "%s", p.err);
    cr_assert_str_empty(p.out);
    sp_npy r;
    char err[256];
    cr_assert_eq(sp_npy_read(t_path(dir, "r.npy"), &r, err, sizeof err), 0, "%s", err);
    cr_assert_eq(r.ndim, 1);
    cr_assert_eq(r.shape[0], 40);
    for (uint64_t i = 0; i < 40; i++) {
        double ref = 0;
        for (uint64_t k = 0; k < 3; k++)
            ref += grad_a(0, k, i);
        cr_assert(fabs(r.data[i] - ref) < 1e-5, "result[%llu] = %g, expected %g", (unsigned long long)i, r.data[i], ref);
    }
    sp_npy_free(&r);
    t_proc_free(&p);
}

/* equal magnitudes everywhere: ties go to the smaller index */
Test(cli, topka_breaks_ties_by_index)
{
    const char *dir = t_tmpdir();
    write_grads(t_path(dir, "g.npy"), 1, 4, 100, grad_ones);
    const char *args[] = {"run", "--algo", "topka", "--ranks", "4", "--density", "0.1", "--grad-file",
                          t_path(dir, "g.npy"), "--dump-result", t_path(dir, "r.npy"), "--out", t_path(dir, "o"), NULL};
    t_proc p = t_run(args);
    cr_assert(p.exited && p.status == 0, "%s", p.err);
    sp_npy r;
    char err[256];
    cr_assert_eq(sp_npy_read(t_path(dir, "r.npy"), &r, err, sizeof err), 0, "%s", err);
    for (int i = 0; i < 100; i++)
        cr_assert_eq(r.data[i], i < 10 ? 4.0f : 0.0f, "result[%d] = %g", i, r.data[i]);
    sp_npy_free(&r);
    t_proc_free(&p);
}

/* several algorithms: each result in the file with its name before the
 * extension (the dense sum, and TopkA's ten smallest indices), none in the
 * file as given */
Test(cli, several_algorithms_dump_each_result)
{
    const char *dir = t_tmpdir();
    write_grads(t_path(dir, "g.npy"), 1, 4, 100, grad_ones);
    const char *args[] = {"run", "--algo", "ring,topka", "--ranks", "4", "--density", "0.1", "--grad-file",
                          t_path(dir, "g.npy"), "--dump-result", t_path(dir, "r.npy"), "--out", t_path(dir, "o"),
                          "--quiet", NULL};
    t_proc p = t_run(args);
    cr_assert(p.exited && p.status == 0, "%s", p.err);
    const char *files[] = {"r.ring.npy", "r.topka.npy"};
    for (int a = 0; a < 2; a++) {
        sp_npy r;
        char err[256];
        cr_assert_eq(sp_npy_read(t_path(dir, files[a]), &r, err, sizeof err), 0, "%s", err);
        for (int i = 0; i < 100; i++)
            cr_assert_eq(r.data[i], a == 0 || i < 10 ? 4.0f : 0.0f, "%s: result[%d] = %g", files[a], i, r.data[i]);
        sp_npy_free(&r);
    }
    cr_assert(access(t_path(dir, "r.npy"), F_OK) != 0, "the file as given was written too");
    t_proc_free(&p);
}

Test(cli, config_file_and_flags_override)
{
    const char *dir = t_tmpdir();
    t_write_file(t_path(dir, "c.json"), "{\"algo\": \"ring\", \"ranks\": 3, \"n\": 100, \"network\": \"cm02\"}");
    const char *args[] = {"run", "--config", t_path(dir, "c.json"), "--ranks", "4", "--out", t_path(dir, "o"), NULL};
    t_proc p = t_run(args);
    cr_assert(p.exited && p.status == 0, "%s", p.err);
    char *s = t_read_file(t_path(dir, "o/summary.json"), NULL);
    cJSON *j = cJSON_Parse(s);
    cJSON *cfg = cJSON_GetObjectItem(j, "config");
    cr_assert_eq(cJSON_GetObjectItem(cfg, "ranks")->valueint, 4);
    cr_assert_eq(cJSON_GetObjectItem(cfg, "n")->valueint, 100);
    cr_assert_str_eq(cJSON_GetObjectItem(cfg, "network")->valuestring, "cm02");
    cJSON_Delete(j);
    free(s);
    t_proc_free(&p);
}

/* ---- bad input ----------------------------------------------------------- */

/* a bad command line, and what its one line must say */
typedef struct {
    char name[32];
    char args[8][40]; /* "@x" names a file prepared in the temp folder */
    char expect[40];  /* substring of the error line */
} bad_case;

static void prepare_bad_files(const char *dir)
{
    t_write_file(t_path(dir, "bad.json"), "{\"ranks\": 4,,}");
    t_write_file(t_path(dir, "unknown.json"), "{\"rnaks\": 4}");
    t_write_file(t_path(dir, "broken.xml"),
                 "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                 "<platform version=\"4.1\">\n  <cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-3\"\n");
    t_write_file(t_path(dir, "notxml.xml"), "this is not a platform\n");
    t_write_file(t_path(dir, "small.xml"),
                 "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                 "<platform version=\"4.1\">\n  <cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-1\" "
                 "speed=\"1Gf\" bw=\"125MBps\" lat=\"50us\"/>\n</platform>\n");
    t_write_file(t_path(dir, "radicals.xml"),
                 "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                 "<platform version=\"4.1\">\n  <cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-3\" "
                 "speed=\"1Gf\" bw=\"1GBps\" lat=\"1us\" topology=\"DRAGONFLY\" topo_parameters=\"2,1;2,1;16,1;1\"/>\n"
                 "</platform>\n");
    t_write_file(t_path(dir, "groups.xml"),
                 "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                 "<platform version=\"4.1\">\n  <cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-543\" "
                 "speed=\"1Gf\" bw=\"1GBps\" lat=\"1us\" topology=\"DRAGONFLY\" topo_parameters=\"17,1;2,1;16,1;1\"/>\n"
                 "</platform>\n");
    write_grads(t_path(dir, "p3.npy"), 1, 3, 50, grad_a);
    write_grads(t_path(dir, "i2.npy"), 2, 4, 50, grad_a);
    /* float64 array: right magic, wrong dtype */
    FILE *f = fopen(t_path(dir, "f8.npy"), "wb");
    const char hdr[] = "{'descr': '<f8', 'fortran_order': False, 'shape': (4, 2), }";
    char h[128];
    memset(h, ' ', sizeof h);
    memcpy(h, hdr, strlen(hdr));
    h[117] = '\n';
    fwrite("\x93NUMPY\x01\x00\x76\x00", 1, 10, f);
    fwrite(h, 1, 118, f);
    double z[8] = {0};
    fwrite(z, sizeof z[0], 8, f);
    fclose(f);
    t_write_file(t_path(dir, "garbage.npy"), "not numpy at all");
}

/* the cases run in one test, one process each (under the sanitizers a
 * test's own process costs a third of a second to start) */
static const bad_case bad_cases[] = {
    {"unknown algorithm", {"--algo", "nosuch"}, "unknown algorithm 'nosuch'"},
    {"zero ranks", {"--ranks", "0"}, "--ranks"},
    {"negative ranks", {"--ranks", "-3"}, "--ranks"},
    {"ranks not a number", {"--ranks", "abc"}, "--ranks"},
    {"density zero", {"--density", "0"}, "--density"},
    {"density above one", {"--density", "1.5"}, "--density"},
    {"density nan", {"--density", "nan"}, "--density"},
    {"n zero", {"--n", "0"}, "--n"},
    {"iters zero", {"--iters", "0"}, "--iters"},
    {"unknown flag", {"--frobnicate", "1"}, "unknown option"},
    {"missing value", {"--ranks"}, "needs a value"},
    {"unknown network", {"--network", "tcp"}, "--network"},
    {"unknown device", {"--device", "tpu"}, "device"},
    {"nothing selected", {"--algo", "topka", "--n", "10", "--density", "0.01"}, "selects no entry"},
    {"missing platform file", {"--platform", "/nonexistent/platform.xml"}, "cannot read platform file"},
    {"broken platform xml", {"--platform", "@broken.xml"}, "invalid platform file"},
    {"platform not xml", {"--platform", "@notxml.xml"}, "platform file"},
    {"platform too small", {"--platform", "@small.xml", "--ranks", "4"}, "fewer than --ranks"},
    {"platform aborts in SimGrid", {"--platform", "@radicals.xml"}, "radicals"},
    {"dragonfly too many groups", {"--platform", "@groups.xml"}, "17 groups"},
    {"malformed json", {"--config", "@bad.json"}, "malformed JSON"},
    {"unknown json key", {"--config", "@unknown.json"}, "unknown option"},
    {"missing config", {"--config", "/nonexistent/c.json"}, "cannot read config file"},
    {"npy wrong rank count", {"--grad-file", "@p3.npy", "--ranks", "4"}, "has 3 ranks"},
    {"npy too few iterations", {"--grad-file", "@i2.npy", "--ranks", "4", "--iters", "3"}, "holds 2 iteration"},
    {"npy wrong dtype", {"--grad-file", "@f8.npy", "--ranks", "4"}, "dtype"},
    {"npy garbage", {"--grad-file", "@garbage.npy", "--ranks", "4"}, "not a NumPy"},
    {"npy missing", {"--grad-file", "/nonexistent/g.npy"}, "cannot read"},
    {"daint-simgrid too large", {"--platform", "daint-simgrid", "--ranks", "7000", "--payload", "size"}, "at most 6144"},
    {"daint too large", {"--platform", "daint", "--ranks", "7681", "--payload", "size"}, "holds 1 to 7680"},
    {"gaussian variant", {"--gaussian-variant", "fast"}, "--gaussian-variant"},
    {"dsa dense point", {"--dsa-dense-at", "0"}, "--dsa-dense-at"},
    {"grad shared", {"--grad-shared", "2"}, "--grad-shared"},
    {"warmup negative", {"--warmup", "-1"}, "--warmup"},
    {"size-only sparse", {"--algo", "gaussiank", "--payload", "size"}, "needs exact payloads"},
    {"oktopk preset", {"--algo", "oktopk", "--oktopk-preset", "gpt"}, "--oktopk-preset"},
    {"oktopk tau", {"--algo", "oktopk", "--tau", "0"}, "--tau"},
    {"oktopk balance", {"--algo", "oktopk", "--balance", "yes"}, "--balance"},
    {"oktopk packing", {"--algo", "oktopk", "--packing", "zip"}, "--packing"},
};

/* case c with the files of `inputs` (prepare_bad_files), its output in a
 * folder of its own */
static void one_clear_line(const bad_case *c, const char *inputs)
{
    const char *dir = t_tmpdir();
    const char *args[24];
    int n = 0;
    args[n++] = "run";
    args[n++] = "--algo";
    args[n++] = "ring";
    args[n++] = "--ranks";
    args[n++] = "4";
    args[n++] = "--out";
    args[n++] = t_path(dir, "out");
    static char expanded[8][512];
    for (int i = 0; i < 8 && c->args[i][0]; i++) {
        if (c->args[i][0] == '@') {
            snprintf(expanded[i], sizeof expanded[i], "%s/%s", inputs, c->args[i] + 1);
            args[n++] = expanded[i];
        } else
            args[n++] = c->args[i];
    }
    args[n] = NULL;
    t_proc p = t_run(args);
    cr_assert(p.exited, "%s: died with signal %d", c->name, p.status);
    cr_assert_eq(p.status, 2, "%s: exit status %d, stderr: %s", c->name, p.status, p.err);
    cr_assert_eq(t_count_lines(p.err), 1, "%s: stderr is not one line: [%s]", c->name, p.err);
    cr_assert(strncmp(p.err, "sparsim: ", 9) == 0, "%s: [%s]", c->name, p.err);
    cr_assert(strstr(p.err, c->expect), "%s: stderr [%s] lacks [%s]", c->name, p.err, c->expect);
    cr_assert_str_empty(p.out, "%s: stdout not empty: %s", c->name, p.out);
    cr_assert(access(t_path(dir, "out/summary.json"), F_OK) != 0, "%s: a summary.json was written", c->name);
    cr_assert(access(t_path(dir, "out/messages.csv"), F_OK) != 0, "%s: a messages.csv was written", c->name);
    t_proc_free(&p);
}

Test(bad_input, one_clear_line)
{
    char inputs[256]; /* t_tmpdir's size */
    snprintf(inputs, sizeof inputs, "%s", t_tmpdir());
    prepare_bad_files(inputs);
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++)
        one_clear_line(&bad_cases[i], inputs);
}

/* Interrupting a run, or the `sparsim run` parent of one (a shell's kill,
 * a batch system's SIGTERM), leaves neither temporaries nor complete-looking
 * outputs: the parent passes the signal to the simulating child, which
 * removes its NAME.part files.  The run is long (ring, P = 1024, 1M floats,
 * several seconds) and is interrupted once its messages.csv.part exists. */
struct interrupt_case {
    int sig;
    int at_child; /* 1: signal the simulating child's process group too */
};

ParameterizedTestParameters(cli, interrupted_run_leaves_nothing)
{
    static struct interrupt_case c[] = {{SIGINT, 0}, {SIGTERM, 0}, {SIGINT, 1}};
    return cr_make_param_array(struct interrupt_case, c, sizeof c / sizeof c[0]);
}

ParameterizedTest(struct interrupt_case *c, cli, interrupted_run_leaves_nothing)
{
    const char *dir = t_tmpdir();
    char out[512];
    snprintf(out, sizeof out, "%s", t_path(dir, "o"));
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        dup2(devnull, 2);
        execl(SPARSIM_BIN, SPARSIM_BIN, "run", "--algo", "ring", "--ranks", "1024", "--n", "1M", "--out", out,
              (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid);
    const char *part = t_path(out, "messages.csv.part");
    int seen = 0;
    for (int i = 0; i < 600 && !seen; i++) {
        seen = access(part, F_OK) == 0;
        if (!seen)
            usleep(50000);
    }
    cr_assert(seen, "the run never started writing %s", part);
    usleep(200000);
    if (c->at_child)
        kill(-pid, c->sig); /* as a terminal's Ctrl-C: the whole process group */
    else
        kill(pid, c->sig);
    int st = 0;
    waitpid(pid, &st, 0);
    cr_assert(WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) != 0), "the run was not interrupted");
    usleep(200000); /* a child that outlived its parent would still be writing */
    const char *names[] = {"messages.csv.part", "trace.json.part", "summary.json.part", "messages.csv", "trace.json",
                           "summary.json"};
    for (int i = 0; i < 6; i++)
        cr_assert(access(t_path(out, names[i]), F_OK) != 0, "left %s behind", names[i]);
}

/* An interrupted sweep keeps its finished rows (here: only the header) and
 * leaves no temporary folder behind. */
Test(cli, interrupted_sweep_leaves_no_folders)
{
    char tmp[512], csv[600];
    snprintf(tmp, sizeof tmp, "%s", t_tmpdir());
    snprintf(csv, sizeof csv, "%s/s.csv", tmp);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("TMPDIR", tmp, 1);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        dup2(devnull, 2);
        execl(SPARSIM_BIN, SPARSIM_BIN, "sweep", "--algo", "ring", "--ranks", "1024", "--n", "1M", "--iters", "1",
              "--out", csv, (char *)NULL);
        _exit(127);
    }
    /* the run's folder appears once its child has started */
    int seen = 0;
    for (int i = 0; i < 600 && !seen; i++) {
        DIR *d = opendir(tmp);
        struct dirent *e;
        while (d && (e = readdir(d)))
            if (!strncmp(e->d_name, "sparsim-sweep-", 14)) {
                char sub[1200];
                snprintf(sub, sizeof sub, "%s/%s/ring-P1024-n1048576-d0.01-1gbe", tmp, e->d_name);
                seen = access(sub, F_OK) == 0;
            }
        if (d)
            closedir(d);
        if (!seen)
            usleep(50000);
    }
    cr_assert(seen, "the sweep never started its run");
    usleep(200000);
    kill(pid, SIGINT);
    int st = 0;
    waitpid(pid, &st, 0);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT, "the sweep did not end on the signal");
    usleep(200000);
    DIR *d = opendir(tmp);
    struct dirent *e;
    while ((e = readdir(d)))
        cr_assert(strncmp(e->d_name, "sparsim-sweep-", 14) != 0, "left %s behind", e->d_name);
    closedir(d);
    char *text = t_read_file(csv, NULL);
    cr_assert_not_null(text);
    cr_assert_eq(t_count_lines(text), 1, "%s", text);
    free(text);
}

/* --crosstraffic: "model" is what the network model implies (off for cm02,
 * on for lv08), and the reverse-direction load of "on" slows a ring whose
 * links carry flows both ways (rank r sends to r+1 while receiving from r-1) */
static double ring_time(const char *network, const char *crosstraffic)
{
    const char *dir = t_tmpdir();
    const char *args[] = {"run", "--algo", "ring", "--ranks", "8", "--n", "512K", "--payload", "size", "--network",
                          network, "--crosstraffic", crosstraffic, "--out", dir, "--quiet", NULL};
    t_proc p = t_run(args);
    cr_assert(p.exited && p.status == 0, "%s", p.err);
    t_proc_free(&p);
    char *s = t_read_file(t_path(dir, "summary.json"), NULL);
    cJSON *j = cJSON_Parse(s);
    cr_assert_not_null(j);
    double t = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "time_per_iter_s"), "mean")->valuedouble;
    cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "config"), "crosstraffic")->valuestring,
                     crosstraffic);
    cJSON_Delete(j);
    free(s);
    return t;
}

Test(cli, crosstraffic_model_on_off)
{
    double cm_model = ring_time("cm02", "model"), cm_off = ring_time("cm02", "off"), cm_on = ring_time("cm02", "on");
    cr_assert_eq(cm_model, cm_off, "cm02: model %.9g s, off %.9g s", cm_model, cm_off);
    cr_assert(cm_on > 1.01 * cm_off, "cm02: on %.9g s, off %.9g s", cm_on, cm_off);
    double lv_model = ring_time("lv08", "model"), lv_off = ring_time("lv08", "off"), lv_on = ring_time("lv08", "on");
    cr_assert_eq(lv_model, lv_on, "lv08: model %.9g s, on %.9g s", lv_model, lv_on);
    cr_assert(lv_on > 1.01 * lv_off, "lv08: on %.9g s, off %.9g s", lv_on, lv_off);
}
