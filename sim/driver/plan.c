/* plan.c - the options of `sparsim run`, one row each, and the plan they make.
 *
 * A config file holds the same keys as the long flags ("ranks", "grad-file",
 * ...); flags given on the command line override it.  Every value is checked
 * by its row (options.c), with a message that names the flag and what is
 * allowed; cross-field checks follow in sp_plan_validate.
 */
#include "plan.h"
#include "resolve.h"
#include "training.h"
#include "topologies/device.h"
#include "topologies/platform.h"
#include "sim/workload/profile.h"
#include "sim/shim/backend.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define F(field) .offset = offsetof(sp_plan, field), .size = sizeof(((sp_plan *)0)->field)

static const sp_opt_choice network_choices[] = {{"platform", 3}, {"cm02", 0}, {"lv08", 1}, {"smpi", 2}, {NULL, 0}};
static const sp_opt_choice crosstraffic_choices[] = {{"model", -1}, {"on", 1}, {"off", 0}, {NULL, 0}};
static const sp_opt_choice engine_choices[] = {{"simgrid", 0}, {"flow", 1}, {NULL, 0}};
static const sp_opt_choice payload_choices[] = {{"auto", SP_PAYLOAD_AUTO},
                                                {"exact", SP_PAYLOAD_EXACT},
                                                {"size", SP_PAYLOAD_SIZE},
                                                {"model", SP_PAYLOAD_MODEL},
                                                {NULL, 0}};
static const sp_opt_choice gaussian_choices[] = {{"authors", 0}, {"oktopk", 1}, {NULL, 0}};
static const sp_opt_choice preset_choices[] = {{"vgg16", 0}, {"lstm", 1}, {"bert", 2}, {NULL, 0}};
static const sp_opt_choice balance_choices[] = {{"on", 1}, {"off", 0}, {"preset", -1}, {NULL, 0}};
static const sp_opt_choice packing_choices[] = {{"pairs", 0}, {"separate", 1}, {NULL, 0}};
static const sp_opt_choice ablation_choices[] = {{"none", 0}, {"uniform", 1}, {"disjoint", 2}, {NULL, 0}};
static const sp_opt_choice quantile_choices[] = {{"authors", 0}, {"exact", 1}, {NULL, 0}};
static const sp_opt_choice noise_choices[] = {{"periodic", SP_NOISE_PERIODIC}, {"random", SP_NOISE_RANDOM}, {NULL, 0}};
static const sp_opt_choice train_choices[] = {{"none", 0},     {"vgg16", 1},    {"lstm", 2},     {"bert", 3},
                                              {"resnet20", 4}, {"alexnet", 5},  {"resnet50", 6}, {"lstm-ptb", 7},
                                              {"gpt2-xl", 8},  {NULL, 0}};
static const sp_opt_choice select_choices[] = {{"cpu", 0}, {"cuda", 1}, {NULL, 0}};
/* the indices sp_powersgd_allreduce_name reads (algorithms/powersgd.c) */
static const sp_opt_choice psgd_allreduce_choices[] = {{"ring", 0},      {"recdoubling", 1}, {"rabenseifner", 2},
                                                       {"nccl-ring", 3}, {"nccl-tree", 4},   {NULL, 0}};
static const sp_opt_choice zen_form_choices[] = {{"balanced", 0}, {"central", 1}, {NULL, 0}};
static const sp_opt_choice spardl_residual_choices[] = {{"collect", 0}, {"code", 1}, {NULL, 0}};
static const sp_opt_choice bg_choices[] = {{"uniform", SP_BG_UNIFORM}, {"shift", SP_BG_SHIFT}, {NULL, 0}};

#define MAXI 1e6
#define U64MAX 1.8446744073709552e19

/* --algo's and --platform's help, written from the registry and the platform table */
static const char *algo_help(void)
{
    static char text[1024];
    if (!text[0]) {
        int n;
        const sp_algorithm *a = sp_algorithm_list(&n);
        size_t at = (size_t)snprintf(text, sizeof text, "algorithm: ");
        for (int i = 0; i < n && at < sizeof text; i++)
            at += (size_t)snprintf(text + at, sizeof text - at, "%s%s", a[i].name, i + 1 < n ? ", " : "");
        if (at < sizeof text)
            snprintf(text + at, sizeof text - at,
                     "; nccl-nvls, NCCL's NVLS, where the nodes' NVSwitch reduces (dgx-*, roce; not in 'all'); "
                     "nccl, NCCL's choice of nccl-ring, nccl-tree or nccl-nvls on a platform of nodes; rail:X or leader:X, "
                     "node-aware forms of a sparse X (ranks on nodes, not in 'all'); a comma list; or 'all' for every "
                     "one");
    }
    return text;
}

static const char *platform_help(void)
{
    static char text[1024];
    if (!text[0])
        sp_platform_help(text, sizeof text);
    return text;
}

static const char *platform_brief(void)
{
    static char text[512];
    if (!text[0]) {
        size_t at = sp_platform_names(text, sizeof text, ", ", 0);
        if (at < sizeof text)
            snprintf(text + at, sizeof text - at, ", or a SimGrid platform XML file");
    }
    return text;
}

static const sp_opt run_options[] = {
    {.name = "algo", .type = SP_OT_STRING, .group = "run", F(algo), .dflt = "all",
     .flags = SP_OPT_EVERYDAY | SP_OPT_LIST, .metavar = "NAME",
     .brief = "algorithms: a comma list of names (sparsim list), or all", .help_of = algo_help},
    {.name = "ranks", .type = SP_OT_INT, .group = "run", F(ranks), .min = 1, .max = SP_MAX_RANKS, .dflt = "64",
     .flags = SP_OPT_EVERYDAY | SP_OPT_LIST, .metavar = "P",
     .brief = "number of ranks",
     .help = "number of ranks"},
    {.name = "platform", .type = SP_OT_STRING, .group = "network", F(platform), .dflt = "1gbe",
     .flags = SP_OPT_EVERYDAY | SP_OPT_LIST, .metavar = "NAME", .brief_of = platform_brief, .help_of = platform_help},
    {.name = "gpus-per-node", .type = SP_OT_INT, .group = "network", F(gpus_per_node), .min = 0, .max = 1024,
     .dflt = "0", .metavar = "G",
     .help = "GPUs per node: rank r is GPU r mod G (its local rank) of node r / G, and outputs name both; 0 (the "
     "default) takes the platform's (8 on dgx-h100, 1 on platforms without nodes). G must divide --ranks; on a "
     "platform with nodes it must be the platform's"},
    {.name = "network", .type = SP_OT_CHOICE, .group = "network", F(network), .dflt = "platform",
     .choices = network_choices, .flags = SP_OPT_EVERYDAY, .metavar = "MODEL",
     .brief = "platform (the platform's own), cm02 (alpha-beta: matches the closed forms), lv08 (TCP), smpi",
     .help = "platform (the default: the model the platform's row names, lv08 for Ethernet and user files, cm02 for "
     "NVLink, InfiniBand, RoCE, Aries and Slingshot), cm02 (pure alpha-beta with max-min sharing: matches the closed "
     "forms), lv08 (SimGrid's TCP-calibrated model), smpi (piecewise MPI model)"},
    {.name = "crosstraffic", .type = SP_OT_CHOICE, .group = "network", F(crosstraffic), .dflt = "model",
     .choices = crosstraffic_choices, .metavar = "MODE",
     .help = "whether a flow also loads the reverse direction of its links, as TCP's acknowledgements do: model (what "
     "--network implies: on for lv08 and smpi, off for cm02), on, or off. Off suits networks that are not TCP, such "
     "as daint's Aries, and makes large runs there many times faster to simulate (bench/README.md, section 9)"},
    {.name = "engine", .type = SP_OT_CHOICE, .group = "network", F(engine), .dflt = "simgrid",
     .choices = engine_choices, .metavar = "ENGINE",
     .help = "what runs the simulation: simgrid (the default: every message a SimGrid activity) or flow (sparsim's own "
     "event loop with the same network model: SimGrid's platform and routes, the links shared max-min as SimGrid "
     "shares them, without SimGrid's per-message machinery: up to 18x faster at P = 1024, P = 65,536 in seconds; the "
     "same simulated times as simgrid within 1% on 99 of the 106 runs of bench/README.md section 28, the others apart "
     "where two messages reach one receive slot at the same instant). flow does not take degraded links, background "
     "traffic, a failed rank or NVLS (the nccl-nvls algorithm)"},
    {.name = "flow-slack", .type = SP_OT_DOUBLE, .group = "network", F(flow_slack), .min = 0, .max = 0.5,
     .dflt = "0", .metavar = "SHARE",
     .help = "--engine flow only: when a flow ends, what it took of a link stays unused, and the link's other flows "
     "keep their rates, until what ended flows left on that link passes SHARE of its capacity; then the link is "
     "solved again. A flow that joins it takes its part at their level from what they left, where that is enough. Each flow's rate is off the exact sharing's by about SHARE of its links, and "
     "so are the times (tests/test_flow_engine.c: 0.4% on average at 0.02). On daint, where hundreds of flows share one aggregate link and each end re-rated them all, 0.02 makes "
     "Ok-Topk at P = 1024 1.5x faster to simulate and moves its time by 0.3% (bench/README.md, section 28). "
     "0 (the default): exact max-min sharing"},
    {.name = "unshared-below", .type = SP_OT_U64, .group = "network", F(unshared_below), .min = 0,
     .max = 1099511627776.0, .dflt = "0", .flags = SP_OPT_SUFFIX, .metavar = "BYTES",
     .help = "messages smaller than BYTES skip SimGrid's bandwidth sharing: each takes the time it would take alone "
     "on its route (the network model's latency and bandwidth with its factors) and its send completes at once, as an "
     "eager MPI send; 0 (the default) shares every message. For P^2 small messages at thousands of ranks, where "
     "re-solving the sharing at every message's start and end is most of the run (bench/README.md, section 13); K, M "
     "suffixes"},
    {.name = "device", .type = SP_OT_STRING, .group = "run", F(device), .dflt = "none", .flags = SP_OPT_EVERYDAY,
     .metavar = "NAME",
     .brief = "device profile that prices local kernels (sparsim list), or a JSON file",
     .help = "device profile for local kernels: none (local compute is free), p100, p102, v100, a100, h100, h200, "
     "b200, gh200, or a JSON file (sparsim-mpi calibrate writes one); a platform that names its GPU (dgx-h100: "
     "h100) makes that the default instead of none"},
    {.name = "n", .type = SP_OT_U64, .group = "run", F(n), .min = 1, .max = 2147483647.0, .dflt = "1M",
     .flags = SP_OPT_EVERYDAY | SP_OPT_SUFFIX | SP_OPT_LIST, .metavar = "N",
     .range = "an integer in 1..2^31-1 (int32 indices)",
     .brief = "gradient length in floats; K, M, G suffixes",
     .help = "gradient length in floats; K, M, G suffixes are powers of 1024"},
    {.name = "density", .type = SP_OT_DOUBLE, .group = "run", F(density), .min = 0, .max = 1, .dflt = "0.01",
     .flags = SP_OPT_EVERYDAY | SP_OPT_OPEN_MIN | SP_OPT_LIST, .metavar = "D",
     .brief = "fraction of entries a sparse algorithm selects; k = floor(n * D)",
     .help = "fraction of entries a sparse algorithm selects; k = floor(n * D)"},
    {.name = "iters", .type = SP_OT_INT, .group = "run", F(iters), .min = 1, .max = MAXI, .dflt = "1",
     .flags = SP_OPT_EVERYDAY, .metavar = "I",
     .brief = "iterations, with error feedback between them",
     .help = "iterations, with error feedback between them"},
    {.name = "iters-at", .type = SP_OT_STRING, .group = "run", F(iters_at), .dflt = "", .metavar = "LIST",
     .help = "simulate only these training iterations of a long run, e.g. 0,1,64,127 or 0-3,1000 (increasing); the "
     "state between them (residual, thresholds) comes from the model, so it needs --payload model for sparse "
     "algorithms"},
    {.name = "seed", .type = SP_OT_U64, .group = "run", F(seed), .min = 0, .max = U64MAX, .dflt = "1",
     .flags = SP_OPT_EVERYDAY, .metavar = "S", .range = "a non-negative integer",
     .brief = "seed of every random stream",
     .help = "seed of every random stream"},
    {.name = "out", .type = SP_OT_STRING, .group = "outputs", F(out), .dflt = "sparsim-out",
     .flags = SP_OPT_EVERYDAY | SP_OPT_NO_ECHO, .metavar = "DIR",
     .brief = "output folder",
     .help = "output folder"},
    {.name = "grad-file", .type = SP_OT_STRING, .group = "run", F(grad_file), .dflt = "", .flags = SP_OPT_EVERYDAY,
     .metavar = "F",
     .brief = "gradients from a float32 .npy of shape (P, n) or (I, P, n)",
     .help = "gradients from a .npy of float32, shape (P, n) for one iteration or (I, P, n); sets n"},
    {.name = "grad-live", .type = SP_OT_INT, .group = "run", F(grad_live), .min = -1, .max = 1048576, .dflt = "-1",
     .flags = SP_OPT_NO_ECHO, .metavar = "FD", .range = "-1 (off) or an open file descriptor",
     .help = "gradients from a trainer beside the run, over the connected socket FD it hands over: each iteration's "
     "gradients in, the global result out, applied as the update before the next (closed-loop training: "
     "traces/train_live.py, docs/accuracy.md); exact payloads, one algorithm, needs --n",
     .dflt_help = "off"},
    {.name = "dump-result", .type = SP_OT_STRING, .group = "run", F(dump_result), .dflt = "",
     .flags = SP_OPT_EVERYDAY | SP_OPT_NO_ECHO, .metavar = "F",
     .brief = "write the last iteration's global result as a float32 .npy",
     .help = "write the last iteration's global result (float32, (n,)); with several --algo, each algorithm's to F "
             "with its name before the extension (r.npy: r.ring.npy, r.topka.npy)"},
    {.name = "payload", .type = SP_OT_CHOICE, .group = "run", F(payload), .dflt = "auto", .choices = payload_choices,
     .flags = SP_OPT_EVERYDAY, .metavar = "MODE",
     .brief = "exact (real vectors), model (a statistical model: paper scale), size, or auto",
     .help = "exact (real vectors, real values travel; results checked), model (no vector of length n: a statistical "
     "model of the workload says what each rank selects, where it lies and how selections overlap; for paper scale), "
     "size (only sizes travel: algorithms whose sizes do not depend on data), auto (exact when it fits in memory, "
     "else model)"},
    {.name = "warmup", .type = SP_OT_INT, .group = "run", F(warmup), .min = 0, .max = MAXI, .dflt = "0",
     .flags = SP_OPT_EVERYDAY, .metavar = "W", .range = "a non-negative integer",
     .brief = "run the first W iterations as dense ring allreduce",
     .help = "run the first W iterations as dense ring allreduce (as the reference codes warm up)"},
    {.name = "gaussian-variant", .type = SP_OT_CHOICE, .group = "algorithms", F(opts.gaussian_oktopk),
     .dflt = "authors", .choices = gaussian_choices,
     .help = "Gaussian-k threshold adjustment: the Gaussian-k authors' loop (x0.5 / x1.5, 3 passes, band [2k/3, "
     "4k/3]) or the Ok-Topk authors' (x/÷1.02, 20 passes, band [3k/4, 5k/4])"},
    {.name = "dsa-dense-at", .type = SP_OT_DOUBLE, .group = "algorithms", F(opts.dsa_dense_at), .min = 0, .max = 1,
     .dflt = "0.3333333333333333", .flags = SP_OPT_OPEN_MIN, .metavar = "F", .range = "a fraction in (0, 1]",
     .help = "TopkDSA all-gathers densely once the reduced non-zeros reach F x n (1/3 as in Ok-Topk's TopkDSA code)",
     .dflt_help = "1/3"},
    {.name = "bucket", .type = SP_OT_INT, .group = "algorithms", F(opts.bucket), .min = 0, .max = MAXI, .dflt = "0",
     .metavar = "B", .range = "a non-negative integer (0: min(4, P))",
     .help = "steps per bucket of destination-rotation exchanges (TopkDSA, Ok-Topk, onebit's reduce-scatter); 0 is "
             "min(4, P), the authors' rule"},
    {.name = "quant-bits", .type = SP_OT_INT, .group = "algorithms", F(opts.quant_bits), .min = 2, .max = 8,
     .dflt = "4", .metavar = "B", .range = "an integer in 2..8",
     .help = "qgz: bits a quantized entry takes: 4 is ZeRO++'s INT4 (qgZ), 8 INT8"},
    {.name = "quant-block", .type = SP_OT_INT, .group = "algorithms", F(opts.quant_block), .min = 1, .max = 1 << 24,
     .dflt = "256", .metavar = "E", .range = "an integer in 1..16M",
     .help = "qgz: entries that share one scale (block-wise quantization; 256 is a chosen figure, ZeRO++ publishes "
             "none we could check)"},
    {.name = "powersgd-rank", .type = SP_OT_INT, .group = "algorithms", F(opts.powersgd_rank), .min = 1, .max = 256,
     .dflt = "4", .metavar = "R", .range = "an integer in 1..256",
     .help = "powersgd: rank of each tensor's approximation P Q^T (4 is a chosen default; the PowerSGD paper trains "
             "with ranks 1 to 4); a tensor of rows x cols is sent dense unless R(rows + cols) < rows cols"},
    {.name = "powersgd-allreduce", .type = SP_OT_CHOICE, .group = "algorithms", F(opts.powersgd_allreduce),
     .dflt = "ring", .choices = psgd_allreduce_choices, .metavar = "ALGO",
     .help = "powersgd: the dense allreduce that sums its P and Q factors (and the tensors sent dense): ring, "
             "recdoubling, rabenseifner, nccl-ring or nccl-tree"},
    {.name = "zen-form", .type = SP_OT_CHOICE, .group = "algorithms", F(opts.zen_form), .dflt = "balanced",
     .choices = zen_form_choices,
     .help = "zen: balanced (every rank owns a hashed share of the indices) or central (--zen-owners owners take "
             "the shares, a two-tier hierarchy)"},
    {.name = "zen-owners", .type = SP_OT_INT, .group = "algorithms", F(opts.zen_owners), .min = 0, .max = MAXI,
     .dflt = "0", .metavar = "M", .range = "a non-negative integer (0: ceil(sqrt(P)))",
     .help = "zen, central form: the owners (ranks floor(o P / M)); 0 is ceil(sqrt(P)), a chosen figure; more than "
             "P is P"},
    {.name = "zen-bitmap-at", .type = SP_OT_DOUBLE, .group = "algorithms", F(opts.zen_bitmap_at), .min = 0,
     .max = 2, .dflt = "0.03125", .metavar = "F", .range = "a number in [0, 2]",
     .help = "zen: a block of c entries for an owner of s indices travels as a bitmap of s bits plus the values when "
             "c >= F s, else as pairs; 1/32 (chosen) is where the two sizes meet, above 1 never",
     .dflt_help = "1/32"},
    {.name = "spardl-teams", .type = SP_OT_INT, .group = "algorithms", F(opts.spardl_teams), .min = 1, .max = MAXI,
     .dflt = "1", .metavar = "D", .range = "a positive integer that divides --ranks",
     .help = "spardl: d, teams of P/d ranks; a team reduce-scatters its P/d blocks, the d holders of a block "
             "all-gather across teams (Bruck), then each team all-gathers (Bruck); 1 is one team of all P"},
    {.name = "spardl-residual", .type = SP_OT_CHOICE, .group = "algorithms", F(opts.spardl_residual),
     .dflt = "collect", .choices = spardl_residual_choices,
     .help = "spardl: collect (the paper's global residual collection: every partial sum a rank drops stays in its "
             "residual) or code (the authors' code: a rank keeps its own entries outside the global result, and the "
             "partial sums it dropped at indices inside it)"},
    {.name = "spardl-share", .type = SP_OT_DOUBLE, .group = "algorithms", F(opts.spardl_share), .min = 0, .max = 1,
     .dflt = "0", .metavar = "F", .range = "a fraction in [0, 1] (0: 1/d)",
     .help = "spardl: h = F x k_b entries a block's holder sends across teams (k_b = k/(P/d) a block); 0 is 1/d, "
             "the authors' starting value (their code then adapts h between iterations; here it stays fixed)",
     .dflt_help = "1/d"},
    {.name = "oktopk-preset", .type = SP_OT_CHOICE, .group = "algorithms", F(opts.oktopk_preset), .dflt = "bert",
     .choices = preset_choices,
     .help = "the authors' settings per model: density (0.02, 0.02, 0.01) and warm-up (512, 128, 0) unless given, "
     "tau' (32, 32, 128), feedback factors, balancing (off, off, on); when not given, bert's factors without changing "
     "density or warm-up"},
    {.name = "tau", .type = SP_OT_INT, .group = "algorithms", F(opts.tau), .min = 1, .max = MAXI, .dflt = "64",
     .metavar = "N", .range = "a positive integer",
     .help = "iterations between space repartitions"},
    {.name = "tau-prime", .type = SP_OT_INT, .group = "algorithms", F(opts.tau_prime), .min = 1, .max = MAXI,
     .metavar = "N", .range = "a positive integer",
     .help = "iterations between exact threshold recomputations",
     .dflt_help = "the preset's"},
    {.name = "balance", .type = SP_OT_CHOICE, .group = "algorithms", F(opts.balance), .dflt = "preset",
     .choices = balance_choices,
     .help = "data balancing before the allgatherv"},
    {.name = "quantiles", .type = SP_OT_CHOICE, .group = "algorithms", F(opts.exact_quantiles), .dflt = "authors",
     .choices = quantile_choices,
     .help = "region boundaries at positions i*floor(m/P) of each rank's sorted selection (the authors' code: the "
     "last region gets the remainder) or at floor(i*m/P)"},
    {.name = "packing", .type = SP_OT_CHOICE, .group = "algorithms", F(opts.separate), .dflt = "pairs",
     .choices = packing_choices,
     .help = "one message of (index, value) pairs per peer, or the authors' separate index and value messages"},
    {.name = "nccl-channels", .type = SP_OT_INT, .group = "algorithms", F(opts.nccl_channels), .min = 0, .max = 64,
     .dflt = "0", .metavar = "C", .range = "an integer in 0..64 (0: min(G, 8))",
     .help = "nccl-ring and nccl-tree: channels that run at once, each over all ranks with 1/C of the vector; 0 is "
     "min(G, 8) for G GPUs per node: one channel per GPU, so that every GPU's NIC carries one channel's crossing "
     "(8 NICs on a rail-optimised node)"},
    {.name = "nccl-chunk", .type = SP_OT_U64, .group = "algorithms", F(opts.nccl_chunk), .min = 0,
     .max = 1073741824.0, .dflt = "0", .flags = SP_OPT_SUFFIX, .metavar = "BYTES",
     .range = "bytes in 0..1G (0: 512K)",
     .help = "nccl-tree and nccl-nvls: the pipeline's chunk; each lane's half of a channel moves up and down its "
     "tree (each GPU's shard through the NVSwitch) in chunks of at most BYTES. 0 is 512 KiB: NCCL's default buffer "
     "of 4 MiB (NCCL_BUFFSIZE) over its 8 pipeline steps (assumed from NCCL's documentation and code, not "
     "measured); K, M, G suffixes"},
    {.name = "workload", .type = SP_OT_STRING, .group = "gradients", F(workload), .dflt = "generic",
     .flags = SP_OPT_EVERYDAY, .metavar = "NAME",
     .brief = "generic, a paper's model (vgg16, lstm, bert, ...), or a profile JSON file",
     .help = "the gradients' profile: generic, the papers' models vgg16, lstm, bert, resnet20, alexnet, resnet50, "
     "lstm-ptb (their real layer tables), gpt2-xl (GPT-2 XL's layer table, 1.56B), or a profile JSON file (sparsim profile writes one); scaled to --n when it "
     "differs"},
    {.name = "grad-layers", .type = SP_OT_INT, .group = "gradients", F(grad_layers), .min = 1, .max = 4096,
     .dflt = "16", .metavar = "L",
     .help = "generic profile: layers, of sizes spread over three decades"},
    {.name = "grad-spread", .type = SP_OT_DOUBLE, .group = "gradients", F(grad_spread), .min = 1, .max = 1e6,
     .dflt = "10", .metavar = "S",
     .help = "generic profile: layer scales log-uniform in [1/S, S]"},
    {.name = "grad-tail", .type = SP_OT_DOUBLE, .group = "gradients", F(grad_tail), .min = 0, .max = 3, .metavar = "T",
     .help = "spread of log10 scales within every layer (heavy tails within a layer)",
     .dflt_help = "the profile's"},
    {.name = "grad-zeros", .type = SP_OT_DOUBLE, .group = "gradients", F(grad_zeros), .min = 0, .max = 0.999,
     .metavar = "F",
     .help = "fraction of entries exactly zero in every layer",
     .dflt_help = "the profile's"},
    {.name = "grad-shared", .type = SP_OT_DOUBLE, .group = "gradients", F(grad_shared), .min = 0, .max = 0.999,
     .metavar = "F",
     .help = "variance fraction shared by all ranks in an iteration",
     .dflt_help = "the profile's"},
    {.name = "grad-mean", .type = SP_OT_DOUBLE, .group = "gradients", F(grad_mean), .min = 0, .max = 0.999,
     .metavar = "F",
     .help = "variance fraction of a per-coordinate direction that persists across iterations and ranks (a gradient's "
     "mean cosine with the others of a run of iterations)",
     .dflt_help = "the profile's"},
    {.name = "grad-refresh", .type = SP_OT_DOUBLE, .group = "gradients", F(grad_refresh), .min = 0, .max = 1e9,
     .metavar = "R",
     .help = "iterations over which a coordinate's scale is redrawn (0: never)",
     .dflt_help = "the profile's"},
    {.name = "grad-persistence", .type = SP_OT_DOUBLE, .group = "gradients", F(grad_persistence), .min = 0, .max = 1,
     .metavar = "F",
     .help = "share of a coordinate's log-scale variance that survives a redraw",
     .dflt_help = "the profile's"},
    {.name = "grad-spikes", .type = SP_OT_DOUBLE, .group = "gradients", F(grad_spikes), .min = 0, .max = 0.5,
     .metavar = "F",
     .help = "probability that a rank's own noise is a spike (heavy tails of per-sample noise)",
     .dflt_help = "the profile's"},
    {.name = "grad-spike-scale", .type = SP_OT_DOUBLE, .group = "gradients", F(grad_spike_scale), .min = 1, .max = 100,
     .metavar = "K",
     .help = "a spike's standard deviation over the other draws'",
     .dflt_help = "the profile's"},
    {.name = "grad-scale-sd", .type = SP_OT_DOUBLE, .group = "gradients", F(grad_scale_sd), .min = 0, .max = 3,
     .metavar = "S",
     .help = "standard deviation of the log of the overall scale over iterations",
     .dflt_help = "the profile's"},
    {.name = "grad-scale-corr", .type = SP_OT_DOUBLE, .group = "gradients", F(grad_scale_corr), .min = 0, .max = 0.999,
     .metavar = "R",
     .help = "correlation of the log overall scale from one iteration to the next",
     .dflt_help = "the profile's"},
    {.name = "grad-rank-sd", .type = SP_OT_DOUBLE, .group = "gradients", F(grad_rank_sd), .min = 0, .max = 3,
     .metavar = "S",
     .help = "standard deviation of the log of a rank's own gradient scale: how much the workers' gradient sizes "
             "differ within an iteration (0: alike)",
     .dflt_help = "the profile's; a built-in one's at --batch"},
    {.name = "grad-rank-corr", .type = SP_OT_DOUBLE, .group = "gradients", F(grad_rank_corr), .min = 0, .max = 0.999,
     .metavar = "R",
     .help = "correlation of a rank's log scale from one iteration to the next",
     .dflt_help = "the profile's"},
    {.name = "settle", .type = SP_OT_INT, .group = "gradients", F(settle), .min = 0, .max = MAXI, .dflt = "0",
     .flags = SP_OPT_EVERYDAY, .metavar = "N", .range = "a non-negative integer",
     .brief = "start from the residual after N iterations of local error feedback",
     .help = "start from a settled residual: N iterations of local error feedback (each rank consumes its exact "
     "top-k) before the first simulated one, which then uses iteration N's gradient"},
    {.name = "model-ablation", .type = SP_OT_CHOICE, .group = "gradients", F(model_ablation), .dflt = "none",
     .choices = ablation_choices,
     .help = "for checking the model: leave out where large entries sit (uniform: selections spread evenly over the "
     "index space) or the overlap of the ranks' selections (disjoint); --payload model only"},
    {.name = "dump-grads", .type = SP_OT_STRING, .group = "gradients", F(dump_grads), .dflt = "",
     .flags = SP_OPT_NO_ECHO, .metavar = "F",
     .help = "write every gradient the run used as float32 .npy of shape (I, P, n)"},
    /* whole training iterations (training.c) */
    {.name = "train-model", .type = SP_OT_CHOICE, .group = "training", F(train_model), .dflt = "none",
     .choices = train_choices, .flags = SP_OPT_EVERYDAY,
     .brief = "report whole training iterations of this model (--help=training)",
     .help = "report whole training iterations of this model: its forward and backward compute on --device (FLOPs per "
     "sample x --batch over the device's sustained FLOP/s; sources in sim/workload/paper_models.c) added to the "
     "simulated allreduce, as iteration time, samples/s and speedup over the fastest dense allreduce run alongside"},
    {.name = "train-compute", .type = SP_OT_DOUBLE, .group = "training", F(train_compute), .min = 0, .max = 1e6,
     .dflt = "0", .metavar = "S",
     .help = "seconds of forward + backward per iteration on one rank, instead of the model's FLOPs on the device (a "
     "measured number); turns training iterations on (with --batch when no --train-model)",
     .dflt_help = "from --train-model and --device"},
    {.name = "train-flops", .type = SP_OT_DOUBLE, .group = "training", F(train_flops), .min = 0, .max = 1e18,
     .dflt = "0", .metavar = "F",
     .help = "forward FLOPs per sample of your own model: its forward and backward (3 x F x --batch) over --device's "
     "sustained FLOP/s is the compute of a training iteration; turns training iterations on (needs --batch)",
     .dflt_help = "none"},
    {.name = "batch", .type = SP_OT_INT, .group = "training", F(batch), .min = 0, .max = MAXI, .dflt = "0",
     .metavar = "B", .range = "a non-negative integer",
     .help = "samples per rank per iteration: with training, throughput = P x B / iteration time; on a built-in "
     "workload, how much the workers' gradient sizes differ (its rank_sd, from traces recorded at several batches "
     "per worker: the smaller the batch, the more they differ)",
     .dflt_help = "the model's"},
    {.name = "overlap", .type = SP_OT_BOOL, .group = "training", F(overlap), .dflt = "false",
     .help = "overlap communication with the backward pass layer by layer where the algorithm allows it (dense "
     "allreduces; a sparse one selects over the whole gradient after backward)"},
    /* disturbances (sim/shim/disturb.h): each at its zero level by default */
    {.name = "compute", .type = SP_OT_DOUBLE, .group = "disturbances", F(disturb.compute), .min = 0, .max = 1e6,
     .dflt = "0", .metavar = "S",
     .help = "seconds of local compute (a backward pass) every rank does at the start of each iteration, in a phase "
     "of its own, before the allreduce; stragglers and noise act on it as on the device's kernels"},
    {.name = "straggler-ranks", .type = SP_OT_STRING, .group = "disturbances", F(disturb.straggler_ranks), .dflt = "",
     .metavar = "LIST",
     .help = "ranks whose local compute is --straggler-factor times slower, e.g. 3 or 0,5,7"},
    {.name = "straggler-fraction", .type = SP_OT_DOUBLE, .group = "disturbances", F(disturb.straggler_fraction),
     .min = 0, .max = 1, .dflt = "0", .metavar = "F",
     .help = "a fraction of the ranks, drawn afresh every iteration, is --straggler-factor times slower"},
    {.name = "straggler-factor", .type = SP_OT_DOUBLE, .group = "disturbances", F(disturb.straggler_factor), .min = 1,
     .max = 1e6, .dflt = "2", .metavar = "X",
     .help = "how much slower a straggler's local compute is (1: not at all)"},
    {.name = "straggler-cv", .type = SP_OT_DOUBLE, .group = "disturbances", F(disturb.straggler_cv), .min = 0,
     .max = 100, .dflt = "0", .metavar = "C",
     .help = "every rank's local compute in every iteration slowed by a log-normal factor of mean 1 and this "
     "coefficient of variation (stragglers need local compute to slow: a device profile or --compute)"},
    {.name = "noise", .type = SP_OT_DOUBLE, .group = "disturbances", F(disturb.noise), .min = 0, .max = 0.9,
     .dflt = "0", .metavar = "F",
     .help = "system noise: detours take this fraction of every rank's time; a detour stretches compute it overlaps, "
     "holds a send about to be posted and holds a rank whose wait ends inside it"},
    {.name = "noise-length", .type = SP_OT_DOUBLE, .group = "disturbances", F(disturb.noise_length), .min = 0,
     .max = 1e3, .dflt = "0.0001", .flags = SP_OPT_OPEN_MIN, .metavar = "S", .range = "a positive number of seconds",
     .help = "seconds per detour",
     .dflt_help = "100 us"},
    {.name = "noise-kind", .type = SP_OT_CHOICE, .group = "disturbances", F(disturb.noise_kind), .dflt = "periodic",
     .choices = noise_choices,
     .help = "periodic detours (a daemon's tick, each rank at its own offset) or random ones (exponential gaps)"},
    {.name = "degrade-links", .type = SP_OT_STRING, .group = "disturbances", F(disturb.degrade_links), .dflt = "",
     .metavar = "CLASS",
     .help = "links to degrade: nic (every rank's host link), green, black, blue (the dragonfly's links within a "
     "chassis, between chassis, between groups), all, or the name of a link (or the start of names)"},
    {.name = "degrade-nic", .type = SP_OT_INT, .group = "disturbances", F(disturb.degrade_nic), .min = -1,
     .max = SP_MAX_RANKS, .dflt = "-1", .metavar = "R", .range = "a rank, or -1 (none)",
     .help = "degrade the link by which rank R's host reaches the network",
     .dflt_help = "none"},
    {.name = "degrade-fraction", .type = SP_OT_DOUBLE, .group = "disturbances", F(disturb.degrade_fraction), .min = 0,
     .max = 1, .dflt = "1", .flags = SP_OPT_OPEN_MIN, .metavar = "F",
     .help = "degrade this fraction of the --degrade-links class, drawn with the seed"},
    {.name = "degrade-count", .type = SP_OT_INT, .group = "disturbances", F(disturb.degrade_count), .min = 0,
     .max = 1e6, .dflt = "0", .metavar = "N",
     .help = "degrade N links of the --degrade-links class, drawn with the seed (0: as --degrade-fraction says)"},
    {.name = "degrade-bw", .type = SP_OT_DOUBLE, .group = "disturbances", F(disturb.degrade_bw), .min = 0, .max = 1,
     .dflt = "1", .flags = SP_OPT_OPEN_MIN, .metavar = "X",
     .help = "a degraded link's bandwidth, as a factor of its own"},
    {.name = "degrade-latency", .type = SP_OT_DOUBLE, .group = "disturbances", F(disturb.degrade_latency), .min = 0,
     .max = 1e3, .dflt = "0", .metavar = "S",
     .help = "seconds of latency a degraded link adds"},
    {.name = "bg-load", .type = SP_OT_DOUBLE, .group = "disturbances", F(disturb.bg_load), .min = 0, .max = 0.99,
     .dflt = "0", .metavar = "L",
     .help = "background traffic: other jobs' flows from every host of the platform at this share of its injection "
     "bandwidth (Poisson arrivals), sharing links with the run"},
    {.name = "bg-pattern", .type = SP_OT_CHOICE, .group = "disturbances", F(disturb.bg_pattern), .dflt = "uniform",
     .choices = bg_choices,
     .help = "where background flows go: a uniform random other host, or the host half the machine away"},
    {.name = "bg-flow", .type = SP_OT_U64, .group = "disturbances", F(disturb.bg_flow), .min = 1,
     .max = 1099511627776.0, .dflt = "1M", .flags = SP_OPT_SUFFIX, .metavar = "B",
     .help = "bytes per background flow; K, M, G suffixes"},
    {.name = "fail-rank", .type = SP_OT_INT, .group = "disturbances", F(disturb.fail_rank), .min = -1,
     .max = SP_MAX_RANKS, .dflt = "-1", .metavar = "R", .range = "a rank, or -1 (none)",
     .help = "rank R stops at --fail-at: the run ends with one line naming it, where it was and the ranks left "
     "waiting on it, and writes nothing",
     .dflt_help = "none"},
    {.name = "fail-at", .type = SP_OT_DOUBLE, .group = "disturbances", F(disturb.fail_at), .min = 0, .max = 1e9,
     .dflt = "0", .metavar = "S",
     .help = "simulated seconds at which --fail-rank stops"},
    {.name = "disturb-baseline", .type = SP_OT_BOOL, .group = "disturbances", F(disturb.baseline), .dflt = "true",
     .flags = SP_OPT_NO_ECHO,
     .help = "do not run the plan undisturbed (same seed) too: no slowdowns in summary.json"},
    {.name = "csv", .type = SP_OT_BOOL, .group = "outputs", F(write_csv), .dflt = "true",
     .flags = SP_OPT_EVERYDAY | SP_OPT_NO_ECHO,
     .help = "do not write messages.csv"},
    {.name = "trace", .type = SP_OT_BOOL, .group = "outputs", F(write_trace), .dflt = "true",
     .flags = SP_OPT_EVERYDAY | SP_OPT_NO_ECHO,
     .help = "do not write trace.json"},
    {.name = "trace-msgs", .type = SP_OT_U64, .group = "outputs", F(trace_msgs), .min = 0, .max = U64MAX,
     .dflt = "200000", .flags = SP_OPT_SUFFIX | SP_OPT_NO_ECHO, .metavar = "N", .range = "a non-negative integer",
     .help = "at most N message events in trace.json"},
    {.name = "quiet", .type = SP_OT_BOOL, .group = "outputs", F(quiet), .dflt = "false",
     .flags = SP_OPT_EVERYDAY | SP_OPT_NO_ECHO,
     .help = "no summary on stdout"},
    {.name = "config", .type = SP_OT_STRING, .group = "run", F(config), .dflt = "",
     .flags = SP_OPT_EVERYDAY | SP_OPT_NO_ECHO | SP_OPT_CLI_ONLY, .metavar = "FILE",
     .help = "read options from a JSON object first (keys: the long option names)"},
};

/* the groups of --help=GROUP, in the order --help=all prints them */
static const sp_opt_group run_groups[] = {
    {.key = "run", .title = "what runs"},
    {.key = "network", .title = "platform and network"},
    {.key = "algorithms", .title = "settings of Gaussian-k, TopkDSA and Ok-Topk"},
    {.key = "gradients", .title = "gradients and their model"},
    {.key = "training", .title = "training iterations"},
    {.key = "disturbances", .title = "disturbances (simulated runs only)"},
    {.key = "outputs", .title = "outputs"},
};

/* sparsim-mpi's own options: flags and config keys of sparsim-mpi run only.
 * The simulator checks their values as sparsim-mpi would, then refuses them
 * by name, so that a command line meant for the other binary says so. */
static const sp_opt mpi_options[] = {
    {.name = "watchdog", .type = SP_OT_DOUBLE, F(watchdog), .min = 0, .max = 1e9, .dflt = "60",
     .flags = SP_OPT_OPEN_MIN | SP_OPT_NO_ECHO, .metavar = "S", .range = "a positive number of seconds",
     .help = "end the job when a wait makes no progress for S seconds"},
    {.name = "select", .type = SP_OT_CHOICE, F(select_dev), .dflt = "cpu", .choices = select_choices,
     .flags = SP_OPT_NO_ECHO,
     .help = "where the selection kernels run: cpu, or cuda (each rank's residual on a GPU, rank "
     "modulo the GPUs; only selected pairs come to the host, in a phase gpu-copy)"},
};

_Static_assert(sizeof run_options / sizeof run_options[0] <= SP_PLAN_MAX_OPTS, "sp_plan.given is too small");

const sp_opt_table *sp_plan_options(void)
{
    static const sp_opt_table t = SP_OPT_TABLE_GROUPED(run_options, run_groups);
    return &t;
}

const sp_opt_table *sp_plan_mpi_options(void)
{
    static const sp_opt_table t = SP_OPT_TABLE(mpi_options);
    return &t;
}

void sp_plan_defaults(sp_plan *p)
{
    memset(p, 0, sizeof *p);
    sp_opts_defaults(sp_plan_options(), p);
    sp_opts_defaults(sp_plan_mpi_options(), p);
}

int sp_plan_set(sp_plan *p, const char *name, const char *value, char *err, size_t errlen)
{
    int rc = sp_opts_set(sp_plan_options(), p, p->given, name, value, err, errlen);
    if (rc == 1)
        snprintf(err, errlen, "unknown option '--%s' (see --help)", name);
    return rc ? -1 : 0;
}

int sp_plan_given(const sp_plan *p, const char *name)
{
    int i = sp_opts_index(sp_plan_options(), name);
    return i >= 0 && p->given[i];
}

/* Options from --config, then flags over them.  The run's rows first; what
 * they do not know goes to sparsim-mpi's rows, which refuse it unless `mpi`. */
static int parse(sp_plan *p, int mpi, int argc, char **argv, char *err, size_t errlen)
{
    const sp_opt_table *run = sp_plan_options(), *own = sp_plan_mpi_options();
    if (sp_opts_help_arg(argc, argv))
        return 1;
    /* pass 1: --config */
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--config") == 0 || strncmp(argv[i], "--config=", 9) == 0) {
            const char *path = argv[i][8] == '=' ? argv[i] + 9 : (i + 1 < argc ? argv[i + 1] : NULL);
            if (!path) {
                snprintf(err, errlen, "--config needs a value");
                return -1;
            }
            cJSON *j = sp_opts_read_config(path, err, errlen);
            if (!j)
                return -1;
            int rc = sp_opts_apply_json(run, p, p->given, j, mpi, path, err, errlen);
            if (rc == 0 && mpi)
                rc = sp_opts_apply_json(own, p, NULL, j, 0, path, err, errlen);
            cJSON_Delete(j);
            if (rc)
                return -1;
        }
    }
    /* pass 2: flags override */
    char **rest = malloc(((size_t)argc + 1) * sizeof *rest);
    unsigned char given[sizeof mpi_options / sizeof mpi_options[0]] = {0};
    int nrest = 0, rc = -1;
    if (!rest) {
        snprintf(err, errlen, "out of memory reading the options");
        return -1;
    }
    if (sp_opts_parse_argv(run, p, p->given, argc, argv, rest, &nrest, err, errlen) == 0 &&
        sp_opts_parse_argv(own, p, given, nrest, rest, NULL, NULL, err, errlen) == 0) {
        rc = 0;
        for (int i = 0; !mpi && i < own->count; i++)
            if (given[i]) {
                snprintf(err, errlen, "--%s is an option of sparsim-mpi (real MPI processes), not of the simulator",
                         own->rows[i].name);
                rc = -1;
                break;
            }
    }
    free(rest);
    return rc;
}

int sp_plan_parse(sp_plan *p, int argc, char **argv, char *err, size_t errlen)
{
    return parse(p, 0, argc, argv, err, errlen);
}

int sp_plan_parse_mpi(sp_plan *p, int argc, char **argv, char *err, size_t errlen)
{
    return parse(p, 1, argc, argv, err, errlen);
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
    char *save = NULL;
    for (char *s = strtok_r(buf, ",", &save); s && count < max; s = strtok_r(NULL, ",", &save)) {
        const char *nccl = strcmp(s, "nccl") ? NULL : sp_resolve_nccl(p); /* NCCL's tuner's choice */
        snprintf(names[count++], 64, "%.63s", nccl ? nccl : s);
    }
    return count;
}

int sp_plan_for_algorithm(const sp_plan *base, const char *name, int count, sp_plan *q)
{
    *q = *base;
    snprintf(q->algo, sizeof q->algo, "%.63s", name);
    if (count <= 1)
        return 0;
    if ((size_t)snprintf(q->out, sizeof q->out, "%s/%s", base->out, name) >= sizeof q->out)
        return -1;
    if (!base->dump_result[0])
        return 0;
    const char *f = base->dump_result, *slash = strrchr(f, '/'), *dot = strrchr(f, '.');
    size_t stem = dot && dot > (slash ? slash : f) ? (size_t)(dot - f) : strlen(f);
    return (size_t)snprintf(q->dump_result, sizeof q->dump_result, "%.*s.%s%s", (int)stem, f, name,
                            f + stem) >= sizeof q->dump_result
               ? -1
               : 0;
}

int sp_plan_iter_index(const sp_plan *p, int slot) { return p->at_given ? p->at[slot] : slot; }

/* --iters-at: comma-separated iterations or ranges a-b, strictly increasing */
static int parse_iters_at(sp_plan *p, char *err, size_t errlen)
{
    char shown[120];
    const char *s = p->iters_at;
    int count = 0;
    long last = -1;
    while (*s) {
        char *end;
        errno = 0;
        long a = strtol(s, &end, 10), b;
        if (end == s || a < 0 || errno)
            goto bad;
        b = a;
        if (*end == '-') {
            const char *t = end + 1;
            b = strtol(t, &end, 10);
            if (end == t || b < a || errno)
                goto bad;
        }
        if (*end != ',' && *end != '\0')
            goto bad;
        if (a <= last) {
            snprintf(err, errlen, "--iters-at: iterations must increase (%ld comes after %ld)", a, last);
            return -1;
        }
        if (b > INT_MAX - 1 || b - a + 1 > SP_PLAN_MAX_AT - count) {
            snprintf(err, errlen, "--iters-at: at most %d iterations, each below %d", SP_PLAN_MAX_AT, INT_MAX);
            return -1;
        }
        for (long v = a; v <= b; v++)
            p->at[count++] = (int)v;
        last = b;
        s = *end ? end + 1 : end;
        if (*end == ',' && !*s)
            goto bad;
    }
    if (count == 0)
        goto bad;
    p->iters = count;
    p->at_given = 1;
    return 0;
bad:
    snprintf(err, errlen, "--iters-at: '%s' is not a list of iterations (e.g. 0,1,64,127 or 0-3,1000)",
             sp_opts_printable(p->iters_at, shown, sizeof shown));
    return -1;
}

uint64_t sp_plan_k(const sp_plan *p) { return (uint64_t)floor((double)p->n * p->density); }

sp_algo_opts sp_plan_algo_opts(const sp_plan *p)
{
    sp_algo_opts o = p->opts;
    const sp_oktopk_preset *pre = sp_oktopk_preset_at(o.oktopk_preset);
    if (o.tau_prime <= 0)
        o.tau_prime = pre->tau_prime;
    if (o.balance < 0)
        o.balance = pre->balance;
    o.seed = p->seed; /* PowerSGD's first Q */
    return o;
}

int sp_plan_profile(const sp_plan *p, sp_profile *out, char *err, size_t errlen)
{
    sp_profile_knobs k = {.layers = p->grad_layers, .spread = p->grad_spread, .tail = -1, .zeros = -1,
                          .common = -1, .mean = -1, .refresh = -1, .keep = -1, .scale_sd = -1,
                          .scale_corr = -1, .spikes = -1, .spike_scale = -1, .rank_sd = -1, .rank_corr = -1,
                          .batch = p->batch};
    if (sp_plan_given(p, "grad-tail"))
        k.tail = p->grad_tail;
    if (sp_plan_given(p, "grad-zeros"))
        k.zeros = p->grad_zeros;
    if (sp_plan_given(p, "grad-shared"))
        k.common = p->grad_shared;
    if (sp_plan_given(p, "grad-mean"))
        k.mean = p->grad_mean;
    if (sp_plan_given(p, "grad-spikes"))
        k.spikes = p->grad_spikes;
    if (sp_plan_given(p, "grad-spike-scale"))
        k.spike_scale = p->grad_spike_scale;
    if (sp_plan_given(p, "grad-scale-sd"))
        k.scale_sd = p->grad_scale_sd;
    if (sp_plan_given(p, "grad-scale-corr"))
        k.scale_corr = p->grad_scale_corr;
    if (sp_plan_given(p, "grad-rank-sd"))
        k.rank_sd = p->grad_rank_sd;
    if (sp_plan_given(p, "grad-rank-corr"))
        k.rank_corr = p->grad_rank_corr;
    if (sp_plan_given(p, "grad-refresh"))
        k.refresh = p->grad_refresh;
    if (sp_plan_given(p, "grad-persistence"))
        k.keep = p->grad_persistence;
    /* a profile with an n of its own (the papers' models) keeps it unless --n is given */
    uint64_t n = sp_plan_given(p, "n") || !strcmp(p->workload, "generic") ? p->n : 0;
    return sp_profile_get(p->workload, n, p->seed, &k, out, err, errlen);
}

cJSON *sp_plan_echo(const sp_plan *p, const sp_profile *prof)
{
    sp_plan q = *p;
    q.opts = sp_plan_algo_opts(p); /* what the run used */
    cJSON *o = sp_opts_echo(sp_plan_options(), &q);
    /* the workload's knobs as the run used them: the profile's own values
     * where no flag overrode them; per-layer ones only when given */
    static const char *const per_layer[] = {"grad-tail", "grad-zeros"};
    static const char *const generic_only[] = {"grad-layers", "grad-spread"};
    for (size_t i = 0; i < 2; i++) {
        if (!sp_plan_given(p, per_layer[i]) || p->grad_file[0])
            cJSON_DeleteItemFromObjectCaseSensitive(o, per_layer[i]);
        if (strcmp(p->workload, "generic") != 0 || p->grad_file[0])
            cJSON_DeleteItemFromObjectCaseSensitive(o, generic_only[i]);
    }
    if (p->grad_file[0] || !prof) {
        static const char *const knobs[] = {"grad-shared", "grad-mean", "grad-refresh", "grad-persistence",
                                            "grad-spikes", "grad-spike-scale", "grad-scale-sd", "grad-scale-corr",
                                            "grad-rank-sd", "grad-rank-corr"};
        for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++)
            cJSON_DeleteItemFromObjectCaseSensitive(o, knobs[i]);
        return o;
    }
    const struct {
        const char *name;
        double v;
    } eff[] = {{"grad-shared", prof->common},   {"grad-mean", prof->mean},
               {"grad-refresh", prof->refresh}, {"grad-persistence", prof->keep},
               {"grad-spikes", prof->spikes},   {"grad-spike-scale", prof->spike_scale},
               {"grad-scale-sd", prof->scale_sd}, {"grad-scale-corr", prof->scale_corr},
               {"grad-rank-sd", prof->rank_sd},   {"grad-rank-corr", prof->rank_corr}};
    for (size_t i = 0; i < sizeof eff / sizeof eff[0]; i++)
        cJSON_ReplaceItemInObjectCaseSensitive(o, eff[i].name, cJSON_CreateNumber(eff[i].v));
    cJSON *w = cJSON_AddObjectToObject(o, "workload-profile");
    if (w) {
        cJSON_AddStringToObject(w, "name", prof->name);
        cJSON_AddStringToObject(w, "source", prof->source);
        cJSON_AddNumberToObject(w, "layers", prof->nlayers);
    }
    return o;
}

void sp_plan_apply_preset(sp_plan *p)
{
    if (sp_plan_given(p, "oktopk-preset")) { /* a named preset brings its density and warm-up, unless given */
        const sp_oktopk_preset *pre = sp_oktopk_preset_at(p->opts.oktopk_preset);
        if (!sp_plan_given(p, "density"))
            p->density = pre->density;
        if (!sp_plan_given(p, "warmup"))
            p->warmup = pre->warmup;
    }
}

/* --grad-live: one run of one algorithm reads the trainer's gradients once,
 * every iteration in order, and sends each result back as it comes */
static int live_validate(const sp_plan *p, int count, char *err, size_t errlen)
{
    const char *why = count > 1                      ? "more than one algorithm (the trainer runs one at a time)"
                      : !sp_plan_given(p, "n")       ? "no --n (the trainer's model size)"
                      : p->grad_file[0]              ? "--grad-file"
                      : p->settle > 0                ? "--settle"
                      : p->dump_grads[0]             ? "--dump-grads"
                      : sp_plan_given(p, "iters-at") ? "--iters-at"
                      : sp_disturb_any(&p->disturb)  ? "disturbances (their baseline runs the plan again)"
                      : p->payload != SP_PAYLOAD_AUTO && p->payload != SP_PAYLOAD_EXACT
                          ? "payloads other than exact"
                      : strcmp(sp_backend_name(), "simgrid") != 0 ? "a backend of real processes"
                                                                  : NULL;
    if (why) {
        snprintf(err, errlen, "--grad-live cannot go with %s", why);
        return -1;
    }
    return 0;
}

static int plan_validate(sp_plan *p, sp_error *e)
{
    char err[600];
    sp_plan_apply_preset(p);
    char names[32][64];
    int count = sp_plan_algorithms(p, names, 32);
    if (count == 0)
        return sp_error_set(e, SP_STATUS_USAGE, "--algo names no algorithm");
    const sp_algorithm *algos[32];
    for (int i = 0; i < count; i++)
        if (!(algos[i] = sp_resolve_algorithm(names[i], e)))
            return -1;
    if (count > 1 && p->dump_grads[0])
        return sp_error_set(e, SP_STATUS_USAGE,
                            "--dump-grads needs a single --algo (every algorithm would write the same file)");
    for (int i = 0; count > 1 && i < count; i++) {
        sp_plan q;
        if (sp_plan_for_algorithm(p, names[i], count, &q) != 0)
            return sp_error_set(e, SP_STATUS_USAGE,
                                "--out or --dump-result: the path is too long for the outputs of several algorithms");
    }
    if (p->grad_live >= 0 && live_validate(p, count, err, sizeof err) != 0)
        return sp_error_from(e, SP_STATUS_USAGE, err);
    /* a built-in platform is made for P ranks (daint and daint-simgrid have
     * a largest P); a file is read for what SimGrid would abort or crash on */
    sp_platform plat;
    if (sp_platform_prepare(p->platform, p->ranks, &plat, err, sizeof err) != 0)
        return sp_error_from(e, SP_STATUS_USAGE, err);
    sp_platform_release(&plat);
    if (sp_resolve_platform(p, e) != 0)
        return -1;
    if (!p->out[0])
        return sp_error_set(e, SP_STATUS_USAGE, "--out must name a folder");
    p->at_given = 0;
    if (sp_plan_given(p, "iters-at")) {
        if (sp_plan_given(p, "iters"))
            return sp_error_set(e, SP_STATUS_USAGE, "--iters and --iters-at both say which iterations run: give one");
        if (parse_iters_at(p, err, sizeof err) != 0)
            return sp_error_from(e, SP_STATUS_USAGE, err);
        const char *why = p->grad_file[0]      ? "--grad-file"
                          : p->dump_grads[0]   ? "--dump-grads"
                          : p->dump_result[0]  ? "--dump-result"
                          : p->payload == SP_PAYLOAD_EXACT ? "--payload exact"
                                                           : NULL;
        if (why)
            return sp_error_set(e, SP_STATUS_USAGE,
                                "--iters-at cannot go with %s: exact data needs every iteration computed (use --iters)",
                                why);
    }
    const sp_device *dev = NULL;
    for (int i = 0; i < count; i++) {
        sp_resolved r;
        if (sp_resolve(p, algos[i], SP_RESOLVE_CHECK, &r, e) != 0)
            return -1;
        if (!p->grad_file[0])
            p->n = r.plan.n; /* the workload's own n where it has one */
        dev = r.dev;
        sp_resolved_free(&r);
    }
    if (p->unshared_below > 0) {
        const sp_disturb_opts *d = &p->disturb;
        const char *what = sp_disturb_links_on(d)        ? "degraded links"
                           : sp_disturb_background_on(d) ? "background traffic"
                           : sp_disturb_failure_on(d)    ? "a failed rank"
                                                         : NULL;
        if (what)
            return sp_error_set(e, SP_STATUS_USAGE,
                                "--unshared-below cannot go with %s: messages that skip the links' sharing would "
                                "not feel it",
                                what);
    }
    if (p->engine == 1) { /* what the flow engine does not model (sim/backends/flow/flow_engine.c) */
        const sp_disturb_opts *d = &p->disturb;
        const char *what = sp_disturb_links_on(d)        ? "degraded links"
                           : sp_disturb_background_on(d) ? "background traffic"
                           : sp_disturb_failure_on(d)    ? "a failed rank"
                                                         : NULL;
        if (strcmp(sp_backend_name(), "simgrid") != 0)
            return sp_error_set(e, SP_STATUS_USAGE,
                                "--engine flow is for the simulator (sparsim run): sparsim-mpi runs real MPI processes");
        for (int i = 0; !what && i < count; i++)
            if (algos[i]->run == sp_nccl_nvls)
                what = "nccl-nvls (the nodes' reducing switches)";
        if (what)
            return sp_error_set(e, SP_STATUS_USAGE, "--engine flow does not model %s: use --engine simgrid", what);
    } else if (p->flow_slack > 0) {
        return sp_error_set(e, SP_STATUS_USAGE, "--flow-slack is for --engine flow: SimGrid's sharing is always exact");
    }
    if (sp_training_validate(p, dev, err, sizeof err) != 0 ||
        sp_disturb_check(&p->disturb, p->ranks, p->platform, strcmp(p->device, "none") != 0 || p->disturb.compute > 0,
                         err, sizeof err) != 0)
        return sp_error_from(e, SP_STATUS_USAGE, err);
    return 0;
}

/* The plan-wide checks, then every algorithm of the list resolved
 * (resolve.c) as its run will resolve it, before the first one runs. */
int sp_plan_validate(sp_plan *p, char *err, size_t errlen)
{
    sp_error e = {0, ""};
    int rc = plan_validate(p, &e);
    if (rc != 0)
        snprintf(err, errlen, "%s", e.msg);
    return rc;
}

static const char run_outputs_help[] =
    "outputs in DIR (per algorithm in DIR/NAME when several run):\n"
    "  messages.csv   iter,phase,src,dst,tag,bytes,t_post,t_done (seconds)\n"
    "  summary.json   configuration, time per iteration and phase, bytes per rank,\n"
    "                 volume as the bounds count it, bound and ratio\n"
    "  trace.json     Chrome trace event format: open in https://ui.perfetto.dev\n"
    "\n"
    "exit status: 0 success, 1 the run failed, 2 bad input\n";

/* docs/options.md: every row, group by group, then sparsim-mpi's own */
static void print_markdown(FILE *f)
{
    fputs("# Options of `sparsim run`\n"
          "\n"
          "<!-- Generated from the option table (sim/driver/plan.c) by `sparsim run --help=markdown`.\n"
          "     Do not edit: change the table and run that command again; the docs test compares. -->\n"
          "\n"
          "Every option is a flag (`--name value`, `--name=value`) and a key of a JSON object given to\n"
          "`--config` (except those marked as flags only); flags given on the command line override the\n"
          "file. A switch is listed as it changes the default: `--NAME` turns on what is off unless given,\n"
          "`--no-NAME` turns off what is on; in a config file both are the key NAME with `true` or\n"
          "`false`.\n"
          "Values are checked before anything runs; a bad one gets one line naming the option and what it\n"
          "allows, and exit status 2. The configuration a run used is echoed into summary.json's `config`.\n"
          "\n"
          "`sparsim run --help` lists the everyday options; `--help=GROUP` one group below (its key is\n"
          "under its heading); `--help=all` every one.\n"
          "\n",
          f);
    sp_opts_markdown(sp_plan_options(), "##", f);
    fputs("## sparsim-mpi run only\n"
          "\n"
          "`mpirun -np P sparsim-mpi run` takes every option above and these two, which the simulator\n"
          "refuses by name. They are not echoed into summary.json.\n"
          "\n",
          f);
    sp_opts_markdown(sp_plan_mpi_options(), "##", f);
}

int sp_plan_print_help(const char *which, int mpi, FILE *f, char *err, size_t errlen)
{
    const sp_opt_table *t = sp_plan_options(), *own = sp_plan_mpi_options();
    int everyday = !which[0], all = !strcmp(which, "all"), markdown = !strcmp(which, "markdown");
    int own_group = mpi && !strcmp(which, "mpi");
    if (!everyday && !all && !markdown && !own_group && sp_opts_help_group(t, which, NULL) != 0) {
        char known[300] = "";
        for (int g = 0; g < t->ngroups; g++)
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s, ", t->groups[g].key);
        snprintf(err, errlen, "--help=%s: no such group (groups: %s%sall, markdown)", which, known,
                 mpi ? "mpi, " : "");
        return -1;
    }
    if (!f)
        return 0;
    if (markdown) {
        print_markdown(f);
        return 0;
    }
    if (mpi)
        fputs("usage: mpirun -np P sparsim-mpi run [options]\n"
              "\n"
              "Runs the same algorithms on P real MPI processes and writes what every\n"
              "message did, as sparsim run does for a simulated run.\n",
              f);
    else
        fputs("usage: sparsim run [options]\n"
              "\n"
              "Simulates P ranks running one allreduce algorithm (or several, one after\n"
              "the other) and writes what every message did.\n",
              f);
    fputs("\noptions (a JSON --config file takes the same names as keys; flags override it):\n", f);
    if (everyday) {
        sp_opts_help_everyday(t, f);
        if (mpi) {
            fputs("  sparsim-mpi:\n", f);
            sp_opts_help(own, f);
        }
        fputs("  -h, --help        this help\n"
              "\n"
              "more options, one group at a time:\n",
              f);
        sp_opts_help_groups(t, f);
        fputs("  --help=all            every option\n"
              "  --help=markdown       every option as a Markdown reference (docs/options.md)\n"
              "\n",
              f);
        fputs(run_outputs_help, f);
    } else if (all) {
        sp_opts_help(t, f);
        if (mpi) {
            fputs("  sparsim-mpi:\n", f);
            sp_opts_help(own, f);
        }
        fputs("  -h, --help        this help\n\n", f);
        fputs(run_outputs_help, f);
    } else if (own_group) {
        fputs("  sparsim-mpi:\n", f);
        sp_opts_help(own, f);
    } else {
        sp_opts_help_group(t, which, f);
    }
    return 0;
}
