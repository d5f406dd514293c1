/* plan.c - flags and JSON config files into one validated sp_plan.
 *
 * A config file holds the same keys as the long flags ("ranks", "grad-file",
 * ...); flags given on the command line override it.  Every value is checked
 * here, with a message that names the flag and what was wrong.
 */
#include "plan.h"
#include "../algorithms/algorithm.h"
#include "../topologies/device.h"
#include "../topologies/platform.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SP_MAX_RANKS 30000 /* SimGrid needs two memory maps per actor; Linux allows ~65k */

void sp_plan_defaults(sp_plan *p)
{
    memset(p, 0, sizeof *p);
    snprintf(p->algo, sizeof p->algo, "all");
    p->ranks = 64;
    snprintf(p->platform, sizeof p->platform, "1gbe");
    snprintf(p->network, sizeof p->network, "lv08");
    snprintf(p->device, sizeof p->device, "none");
    p->n = 1u << 20;
    p->density = 0.01;
    p->iters = 1;
    p->seed = 1;
    snprintf(p->out, sizeof p->out, "sparsim-out");
    p->payload = SP_PAYLOAD_AUTO;
    p->write_csv = 1;
    p->write_trace = 1;
    p->trace_msgs = 200000;
    p->warmup = 0;
    sp_algo_opts_defaults(&p->opts);
    p->grad_layers = 16;
    p->grad_spread = 10.0;
    p->grad_shared = 0.5;
    p->grad_persistence = 0.5;
}

int sp_plan_algorithms(const sp_plan *p, char names[][64], int max)
{
    int count = 0;
    if (strcmp(p->algo, "all") == 0) {
        int n;
        const sp_algorithm *a = sp_algorithm_list(&n);
        for (int i = 0; i < n && count < max; i++)
            snprintf(names[count++], 64, "%s", a[i].name);
        return count;
    }
    char buf[sizeof p->algo];
    snprintf(buf, sizeof buf, "%s", p->algo);
    for (char *s = strtok(buf, ","); s && count < max; s = strtok(NULL, ","))
        snprintf(names[count++], 64, "%.63s", s);
    return count;
}

uint64_t sp_plan_k(const sp_plan *p)
{
    return (uint64_t)floor((double)p->n * p->density);
}

void sp_plan_print_help(const char *prog)
{
    printf("usage: %s run [options]\n"
           "\n"
           "Simulates P ranks running one allreduce algorithm (or several, one after\n"
           "the other) and writes what every message did.\n"
           "\n"
           "options (a JSON --config file takes the same names as keys; flags override it):\n"
           "  --algo NAME       algorithm: ring, recdoubling, rabenseifner, topka, gtopk,\n"
           "                    gaussiank, topkdsa, oktopk; a comma\n"
           "                    list; or 'all' for every one (default: all)\n"
           "  --ranks P         number of ranks, 1..%d (default: 64)\n"
           "  --platform NAME   1gbe (1 Gbps Ethernet crossbar), daint (Cray Aries\n"
           "                    dragonfly, up to 6144 ranks), or a SimGrid platform XML\n"
           "                    file (rank i on its i-th host) (default: 1gbe)\n"
           "  --network MODEL   cm02 (pure alpha-beta with max-min sharing: matches the\n"
           "                    closed forms), lv08 (SimGrid's default TCP-calibrated\n"
           "                    model), smpi (piecewise MPI model) (default: lv08)\n"
           "  --device NAME     device profile for local kernels: none, p100, p102, or a\n"
           "                    JSON file (sparsim-mpi calibrate writes one)\n"
           "                    (default: none, local compute is free)\n"
           "  --n N             gradient length in floats; K, M, G suffixes are powers of\n"
           "                    1024 (default: 1M)\n"
           "  --density D       fraction of entries a sparse algorithm selects, in (0, 1];\n"
           "                    k = floor(n * D) (default: 0.01)\n"
           "  --iters I         iterations, with error feedback between them (default: 1)\n"
           "  --seed S          seed of every random stream (default: 1)\n"
           "  --out DIR         output folder (default: sparsim-out)\n"
           "  --grad-file F     gradients from a .npy of float32, shape (P, n) for one\n"
           "                    iteration or (I, P, n); sets n\n"
           "  --dump-result F   write the last iteration's global result (float32, (n,))\n"
           "  --payload MODE    exact (real values travel; results checked), size (only\n"
           "                    sizes travel, for scale), auto (exact when it fits in\n"
           "                    memory) (default: auto)\n"
           "  --warmup W        run the first W iterations as dense ring allreduce\n"
           "                    (as the reference codes warm up) (default: 0)\n"
           "  --gaussian-variant authors|oktopk\n"
           "                    Gaussian-k threshold adjustment: the Gaussian-k authors'\n"
           "                    loop (x0.5 / x1.5, 3 passes, band [2k/3, 4k/3]) or the\n"
           "                    Ok-Topk authors' (x/÷1.02, 20 passes, band [3k/4, 5k/4])\n"
           "                    (default: authors)\n"
           "  --dsa-dense-at F  TopkDSA all-gathers densely once the reduced non-zeros\n"
           "                    reach F x n (default: 1/3, as in Ok-Topk's TopkDSA code)\n"
           "  --bucket B        steps per bucket of destination-rotation exchanges\n"
           "                    (default: 0 = min(4, P))\n"
           "  Ok-Topk:\n"
           "  --oktopk-preset vgg16|lstm|bert\n"
           "                    the authors' settings per model: density (0.02, 0.02,\n"
           "                    0.01) and warm-up (512, 128, 0) unless given, tau' (32,\n"
           "                    32, 128), feedback factors, balancing (off, off, on)\n"
           "                    (default: bert's factors, without changing density or\n"
           "                    warm-up)\n"
           "  --tau N           iterations between space repartitions (default: 64)\n"
           "  --tau-prime N     iterations between exact threshold recomputations\n"
           "                    (default: the preset's)\n"
           "  --balance on|off  data balancing before the allgatherv (default: preset)\n"
           "  --quantiles authors|exact\n"
           "                    region boundaries at positions i*floor(m/P) of each rank's\n"
           "                    sorted selection (the authors' code: the last region gets\n"
           "                    the remainder) or at floor(i*m/P) (default: authors)\n"
           "  --packing pairs|separate\n"
           "                    one message of (index, value) pairs per peer, or the\n"
           "                    authors' separate index and value messages\n"
           "                    (default: pairs)\n"
           "  synthetic gradients (sim/workload.c documents the model):\n"
           "  --grad-layers L   contiguous layers with their own scale (default: 16)\n"
           "  --grad-spread S   layer scales log-uniform in [1/S, S] (default: 10)\n"
           "  --grad-shared F   variance fraction shared by all ranks (default: 0.5)\n"
           "  --grad-persistence F\n"
           "                    variance fraction repeated across iterations (default: 0.5)\n"
           "  --no-csv          do not write messages.csv\n"
           "  --no-trace        do not write trace.json\n"
           "  --trace-msgs N    at most N message events in trace.json (default: 200000)\n"
           "  --config FILE     read options from a JSON object first\n"
           "  --quiet           no summary on stdout\n"
           "  -h, --help        this help\n"
           "\n"
           "outputs in DIR (per algorithm in DIR/NAME when several run):\n"
           "  messages.csv   iter,phase,src,dst,tag,bytes,t_post,t_done (seconds)\n"
           "  summary.json   configuration, time per iteration and phase, bytes per rank,\n"
           "                 volume as the bounds count it, bound and ratio\n"
           "  trace.json     Chrome trace event format: open in https://ui.perfetto.dev\n"
           "\n"
           "exit status: 0 success, 1 the run failed, 2 bad input\n",
           prog, SP_MAX_RANKS);
}

static int parse_u64(const char *s, uint64_t *out, int allow_suffix)
{
    if (!s || !*s || *s == '-')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno)
        return -1;
    uint64_t mul = 1;
    if (allow_suffix && *end) {
        switch (*end) {
        case 'K': case 'k': mul = 1ull << 10; break;
        case 'M': case 'm': mul = 1ull << 20; break;
        case 'G': case 'g': mul = 1ull << 30; break;
        default: return -1;
        }
        end++;
    }
    if (*end)
        return -1;
    if (v > UINT64_MAX / mul)
        return -1;
    *out = v * mul;
    return 0;
}

static int parse_double(const char *s, double *out)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

static int copy_str(char *dst, size_t cap, const char *v, const char *name, char *err, size_t errlen)
{
    if (strlen(v) >= cap) {
        snprintf(err, errlen, "value of --%s is too long", name);
        return -1;
    }
    snprintf(dst, cap, "%s", v);
    return 0;
}

/* one option by name, value as text; shared by flags and the JSON reader */
static int set_option(sp_plan *p, const char *name, const char *v, char *err, size_t errlen)
{
    uint64_t u;
    double d;
    if (strcmp(name, "algo") == 0)
        return copy_str(p->algo, sizeof p->algo, v, name, err, errlen);
    if (strcmp(name, "platform") == 0)
        return copy_str(p->platform, sizeof p->platform, v, name, err, errlen);
    if (strcmp(name, "network") == 0)
        return copy_str(p->network, sizeof p->network, v, name, err, errlen);
    if (strcmp(name, "device") == 0)
        return copy_str(p->device, sizeof p->device, v, name, err, errlen);
    if (strcmp(name, "out") == 0)
        return copy_str(p->out, sizeof p->out, v, name, err, errlen);
    if (strcmp(name, "grad-file") == 0)
        return copy_str(p->grad_file, sizeof p->grad_file, v, name, err, errlen);
    if (strcmp(name, "dump-result") == 0)
        return copy_str(p->dump_result, sizeof p->dump_result, v, name, err, errlen);
    if (strcmp(name, "ranks") == 0) {
        long long r;
        char *end;
        errno = 0;
        r = strtoll(v, &end, 10);
        if (!*v || *end || errno || r < 1 || r > SP_MAX_RANKS) {
            snprintf(err, errlen, "--ranks must be an integer in 1..%d, got '%s'", SP_MAX_RANKS, v);
            return -1;
        }
        p->ranks = (int)r;
        p->ranks_given = 1;
        return 0;
    }
    if (strcmp(name, "n") == 0) {
        if (parse_u64(v, &u, 1) != 0 || u < 1 || u > 2147483647ull) {
            snprintf(err, errlen, "--n must be an integer in 1..2^31-1 (int32 indices), got '%s'", v);
            return -1;
        }
        p->n = u;
        p->n_given = 1;
        return 0;
    }
    if (strcmp(name, "density") == 0) {
        if (parse_double(v, &d) != 0 || !(d > 0.0 && d <= 1.0)) {
            snprintf(err, errlen, "--density must be a number in (0, 1], got '%s'", v);
            return -1;
        }
        p->density = d;
        p->density_given = 1;
        return 0;
    }
    if (strcmp(name, "iters") == 0) {
        if (parse_u64(v, &u, 0) != 0 || u < 1 || u > 1000000) {
            snprintf(err, errlen, "--iters must be an integer in 1..1000000, got '%s'", v);
            return -1;
        }
        p->iters = (int)u;
        p->iters_given = 1;
        return 0;
    }
    if (strcmp(name, "seed") == 0) {
        if (parse_u64(v, &u, 0) != 0) {
            snprintf(err, errlen, "--seed must be a non-negative integer, got '%s'", v);
            return -1;
        }
        p->seed = u;
        return 0;
    }
    if (strcmp(name, "payload") == 0) {
        if (strcmp(v, "auto") == 0)
            p->payload = SP_PAYLOAD_AUTO;
        else if (strcmp(v, "exact") == 0)
            p->payload = SP_PAYLOAD_EXACT;
        else if (strcmp(v, "size") == 0)
            p->payload = SP_PAYLOAD_SIZE;
        else {
            snprintf(err, errlen, "--payload must be exact, size or auto, got '%s'", v);
            return -1;
        }
        return 0;
    }
    if (strcmp(name, "trace-msgs") == 0) {
        if (parse_u64(v, &u, 1) != 0) {
            snprintf(err, errlen, "--trace-msgs must be a non-negative integer, got '%s'", v);
            return -1;
        }
        p->trace_msgs = u;
        return 0;
    }
    if (strcmp(name, "warmup") == 0) {
        if (parse_u64(v, &u, 0) != 0 || u > 1000000) {
            snprintf(err, errlen, "--warmup must be a non-negative integer, got '%s'", v);
            return -1;
        }
        p->warmup = (int)u;
        p->warmup_given = 1;
        return 0;
    }
    if (strcmp(name, "gaussian-variant") == 0) {
        if (strcmp(v, "authors") == 0)
            p->opts.gaussian_oktopk = 0;
        else if (strcmp(v, "oktopk") == 0)
            p->opts.gaussian_oktopk = 1;
        else {
            snprintf(err, errlen, "--gaussian-variant must be authors or oktopk, got '%s'", v);
            return -1;
        }
        return 0;
    }
    if (strcmp(name, "dsa-dense-at") == 0) {
        if (parse_double(v, &d) != 0 || !(d > 0.0 && d <= 1.0)) {
            snprintf(err, errlen, "--dsa-dense-at must be a fraction in (0, 1], got '%s'", v);
            return -1;
        }
        p->opts.dsa_dense_at = d;
        return 0;
    }
    if (strcmp(name, "bucket") == 0) {
        if (parse_u64(v, &u, 0) != 0 || u > 1000000) {
            snprintf(err, errlen, "--bucket must be a non-negative integer (0: min(4, P)), got '%s'", v);
            return -1;
        }
        p->opts.bucket = (int)u;
        return 0;
    }
    if (strcmp(name, "oktopk-preset") == 0) {
        if (!sp_oktopk_preset_find(v, &p->opts.oktopk_preset)) {
            snprintf(err, errlen, "--oktopk-preset must be vgg16, lstm or bert, got '%s'", v);
            return -1;
        }
        p->preset_given = 1;
        return 0;
    }
    if (strcmp(name, "tau") == 0 || strcmp(name, "tau-prime") == 0) {
        if (parse_u64(v, &u, 0) != 0 || u < 1 || u > 1000000) {
            snprintf(err, errlen, "--%s must be a positive integer, got '%s'", name, v);
            return -1;
        }
        if (strcmp(name, "tau") == 0)
            p->opts.tau = (int)u;
        else
            p->opts.tau_prime = (int)u;
        return 0;
    }
    if (strcmp(name, "balance") == 0) {
        if (strcmp(v, "on") && strcmp(v, "off")) {
            snprintf(err, errlen, "--balance must be on or off, got '%s'", v);
            return -1;
        }
        p->opts.balance = strcmp(v, "on") == 0;
        return 0;
    }
    if (strcmp(name, "quantiles") == 0) {
        if (strcmp(v, "authors") && strcmp(v, "exact")) {
            snprintf(err, errlen, "--quantiles must be authors or exact, got '%s'", v);
            return -1;
        }
        p->opts.exact_quantiles = strcmp(v, "exact") == 0;
        return 0;
    }
    if (strcmp(name, "packing") == 0) {
        if (strcmp(v, "pairs") && strcmp(v, "separate")) {
            snprintf(err, errlen, "--packing must be pairs or separate, got '%s'", v);
            return -1;
        }
        p->opts.separate = strcmp(v, "separate") == 0;
        return 0;
    }
    if (strcmp(name, "grad-layers") == 0) {
        if (parse_u64(v, &u, 0) != 0 || u < 1 || u > 256) {
            snprintf(err, errlen, "--grad-layers must be an integer in 1..256, got '%s'", v);
            return -1;
        }
        p->grad_layers = (int)u;
        return 0;
    }
    if (strcmp(name, "grad-spread") == 0) {
        if (parse_double(v, &d) != 0 || d < 1.0) {
            snprintf(err, errlen, "--grad-spread must be a number >= 1, got '%s'", v);
            return -1;
        }
        p->grad_spread = d;
        return 0;
    }
    if (strcmp(name, "grad-shared") == 0 || strcmp(name, "grad-persistence") == 0) {
        if (parse_double(v, &d) != 0 || d < 0.0 || d > 1.0) {
            snprintf(err, errlen, "--%s must be a number in [0, 1], got '%s'", name, v);
            return -1;
        }
        if (name[5] == 's')
            p->grad_shared = d;
        else
            p->grad_persistence = d;
        return 0;
    }
    snprintf(err, errlen, "unknown option '--%s' (see --help)", name);
    return -1;
}

static int set_flag(sp_plan *p, const char *name, int on, char *err, size_t errlen)
{
    if (strcmp(name, "csv") == 0)
        p->write_csv = on;
    else if (strcmp(name, "trace") == 0)
        p->write_trace = on;
    else if (strcmp(name, "quiet") == 0)
        p->quiet = on;
    else {
        snprintf(err, errlen, "unknown option '%s'", name);
        return -1;
    }
    return 0;
}

int sp_plan_apply_json(sp_plan *p, const char *text, const char *origin, char *err, size_t errlen)
{
    cJSON *root = cJSON_Parse(text);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        long off = at ? (long)(at - text) : -1;
        snprintf(err, errlen, "%s: malformed JSON near byte %ld", origin, off);
        return -1;
    }
    if (!cJSON_IsObject(root)) {
        snprintf(err, errlen, "%s: the config must be a JSON object", origin);
        cJSON_Delete(root);
        return -1;
    }
    int rc = 0;
    char e2[300];
    for (cJSON *it = root->child; it && rc == 0; it = it->next) {
        const char *k = it->string;
        char val[1100];
        if (strcmp(k, "csv") == 0 || strcmp(k, "trace") == 0 || strcmp(k, "quiet") == 0) {
            if (!cJSON_IsBool(it)) {
                snprintf(err, errlen, "%s: \"%s\" must be true or false", origin, k);
                rc = -1;
                break;
            }
            rc = set_flag(p, k, cJSON_IsTrue(it), e2, sizeof e2);
            continue;
        }
        if (strcmp(k, "config") == 0) {
            snprintf(err, errlen, "%s: a config file cannot include another", origin);
            rc = -1;
            break;
        }
        if (cJSON_IsString(it)) {
            snprintf(val, sizeof val, "%s", it->valuestring);
        } else if (cJSON_IsNumber(it)) {
            double d = it->valuedouble;
            if (strcmp(k, "density") == 0)
                snprintf(val, sizeof val, "%.17g", d);
            else if (d == floor(d) && fabs(d) < 1e18)
                snprintf(val, sizeof val, "%lld", (long long)d);
            else
                snprintf(val, sizeof val, "%.17g", d);
        } else {
            snprintf(err, errlen, "%s: \"%s\" must be a string or a number", origin, k);
            rc = -1;
            break;
        }
        rc = set_option(p, k, val, e2, sizeof e2);
        if (rc)
            snprintf(err, errlen, "%s: %s", origin, e2);
    }
    cJSON_Delete(root);
    return rc;
}

static int read_file(const char *path, char **out, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot read config file '%s': %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 == cap) {
            if (cap > (1u << 24)) {
                fclose(f);
                free(buf);
                snprintf(err, errlen, "config file '%s' is too large", path);
                return -1;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    buf[len] = '\0';
    *out = buf;
    return 0;
}

int sp_plan_parse(sp_plan *p, int argc, char **argv, char *err, size_t errlen)
{
    /* pass 1: --help and --config */
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return 1;
        if (strcmp(argv[i], "--config") == 0 || strncmp(argv[i], "--config=", 9) == 0) {
            const char *path = argv[i][8] == '=' ? argv[i] + 9 : (i + 1 < argc ? argv[i + 1] : NULL);
            if (!path) {
                snprintf(err, errlen, "--config needs a file");
                return -1;
            }
            char *text;
            if (read_file(path, &text, err, errlen) != 0)
                return -1;
            int rc = sp_plan_apply_json(p, text, path, err, errlen);
            free(text);
            if (rc)
                return -1;
        }
    }
    /* pass 2: flags override */
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0) {
            snprintf(err, errlen, "unexpected argument '%s' (options start with --; see --help)", a);
            return -1;
        }
        const char *name = a + 2;
        char namebuf[64];
        const char *val = NULL;
        const char *eq = strchr(name, '=');
        if (eq) {
            size_t nl = (size_t)(eq - name);
            if (nl >= sizeof namebuf) {
                snprintf(err, errlen, "unknown option '%s'", a);
                return -1;
            }
            memcpy(namebuf, name, nl);
            namebuf[nl] = '\0';
            name = namebuf;
            val = eq + 1;
        }
        if (strcmp(name, "no-csv") == 0 || strcmp(name, "no-trace") == 0 || strcmp(name, "quiet") == 0) {
            if (val) {
                snprintf(err, errlen, "--%s takes no value", name);
                return -1;
            }
            if (set_flag(p, strcmp(name, "quiet") == 0 ? "quiet" : name + 3, strcmp(name, "quiet") == 0, err,
                         errlen))
                return -1;
            continue;
        }
        if (!val) {
            if (i + 1 >= argc) {
                snprintf(err, errlen, "--%s needs a value", name);
                return -1;
            }
            val = argv[++i];
        }
        if (strcmp(name, "config") == 0)
            continue;
        if (set_option(p, name, val, err, errlen) != 0)
            return -1;
    }
    return 0;
}

int sp_plan_validate(sp_plan *p, char *err, size_t errlen)
{
    if (p->preset_given) { /* a named preset brings its density and warm-up, unless given */
        const sp_oktopk_preset *pre = sp_oktopk_preset_at(p->opts.oktopk_preset);
        if (!p->density_given)
            p->density = pre->density;
        if (!p->warmup_given)
            p->warmup = pre->warmup;
    }
    char names[32][64];
    int count = sp_plan_algorithms(p, names, 32), any_sparse = 0;
    for (int i = 0; i < count; i++) {
        const sp_algorithm *a = sp_algorithm_find(names[i]);
        if (!a) {
            int cnt;
            const sp_algorithm *list = sp_algorithm_list(&cnt);
            char known[256] = "";
            for (int j = 0; j < cnt; j++) {
                strncat(known, list[j].name, sizeof known - strlen(known) - 1);
                strncat(known, j + 1 < cnt ? ", " : "", sizeof known - strlen(known) - 1);
            }
            snprintf(err, errlen, "unknown algorithm '%s' (known: %s, all)", names[i], known);
            return -1;
        }
        any_sparse |= a->sparse;
    }
    if (strcmp(p->network, "cm02") && strcmp(p->network, "lv08") && strcmp(p->network, "smpi")) {
        snprintf(err, errlen, "--network must be cm02, lv08 or smpi, got '%s'", p->network);
        return -1;
    }
    if (!sp_device_find(p->device) && !sp_device_load(p->device, err, errlen))
        return -1;
    if (!sp_platform_is_builtin(p->platform) && access(p->platform, R_OK) != 0) {
        snprintf(err, errlen, "cannot read platform file '%s': %s (built-in platforms: 1gbe, daint)", p->platform,
                 strerror(errno));
        return -1;
    }
    if (!p->out[0]) {
        snprintf(err, errlen, "--out must name a folder");
        return -1;
    }
    if (any_sparse && !p->grad_file[0] && sp_plan_k(p) < 1) {
        snprintf(err, errlen, "n x density = %g selects no entry: raise --n or --density", (double)p->n * p->density);
        return -1;
    }
    if (p->grad_file[0] && p->payload == SP_PAYLOAD_SIZE) {
        snprintf(err, errlen, "--grad-file needs exact payloads (not --payload size)");
        return -1;
    }
    if (p->dump_result[0] && p->payload == SP_PAYLOAD_SIZE) {
        snprintf(err, errlen, "--dump-result needs exact payloads (not --payload size)");
        return -1;
    }
    return 0;
}
