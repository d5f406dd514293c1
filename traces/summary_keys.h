/* summary_keys.h - the schema of summary.json: every key, written once.
 *
 * The writer (summary_json.c) and every reader (the commands that tabulate
 * runs, sweeps, analyze, compare) name keys through these macros, so a key
 * cannot drift between them.  Units are in the names: _s seconds, _bytes
 * bytes, _Bps bytes per second; words are 4 bytes.  The keys of "config" are
 * the option names of `sparsim run` (its option table is their schema).
 *
 * The schema is versioned: SPK_SCHEMA is a whole number that grows when a
 * key changes meaning or goes away (adding a key does not change it); files
 * without it predate the versioning (schema 0).  docs/summary-json.md lists
 * every key with its unit: traces/summary_doc.py writes it from this header
 * (the shape below and the #defines), and the docs test keeps it in step.
 *
 * {
 *   SPK_SCHEMA: 1,
 *   SPK_VERSION: "x.y.z",
 *   SPK_CONFIG: { option name: value, ... },
 *   SPK_BACKEND: "simgrid" | "mpi",
 *   SPK_K: k,
 *   SPK_PLATFORM: { SPK_ALPHA: s, SPK_BANDWIDTH: B/s },
 *   SPK_PHASES: [ phase names ],
 *   SPK_ITERATIONS: [ { SPK_ITER, SPK_TIME, SPK_T_START, SPK_T_END, SPK_VOLUME_BYTES, SPK_MESSAGES,
 *                       SPK_BYTES, SPK_DENSE_WARMUP (only when true),
 *                       SPK_STATS: { name: { SPK_MIN, SPK_MEAN, SPK_MAX } },
 *                       SPK_PHASES: { name: { SPK_TIME, SPK_VOLUME_BYTES, SPK_SENT_MAX, SPK_RECV_MAX } } } ],
 *   SPK_TIME_PER_ITER: { SPK_MEAN, SPK_MAX, SPK_MIN },
 *   SPK_VOLUME: { SPK_DEFINITION, SPK_VOL_MEAN, SPK_VOL_MAX, SPK_VOL_WORDS_MAX },
 *   SPK_BOUND: { SPK_FORMULA, SPK_SOURCE, SPK_WORDS, SPK_BYTES_KEY, SPK_RATIO, SPK_FLOOR_WORDS (optional),
 *                SPK_LOWER_FORMULA, SPK_LOWER_WORDS, SPK_LOWER_BYTES }   (absent without a closed form),
 *   SPK_PREDICTION: { SPK_MODEL, SPK_TIME, SPK_MEASURED_OVER_PREDICTED }  (likewise),
 *   SPK_RANKS: { SPK_SENT_MEAN, SPK_SENT_MAX_R, SPK_RECV_MEAN, SPK_RECV_MAX_R, SPK_SENT_ARRAY, SPK_RECV_ARRAY,
 *                SPK_GPUS_PER_NODE, SPK_NODES, SPK_SENT_OFF_ARRAY, SPK_RECV_OFF_ARRAY (these four where ranks
 *                are GPUs on nodes: rank r is GPU r mod G of node r / G) },
 *   SPK_MESSAGES: count, SPK_BYTES: bytes, SPK_WALL: s, SPK_MSG_RATE: messages per wall second,
 *   SPK_TRACE_DROPPED: count,
 *   SPK_WALL_PROFILE: { SPK_WP_SAMPLES, SPK_WP_CPU, SPK_WP_MODEL, SPK_WP_ENGINE, SPK_WP_SPARSIM, SPK_WP_LIBS }
 *       (the simulator only: shares of the ranks' CPU time, sim/driver/wall_profile.h),
 *   SPK_FLOW_SOLVER: { SPK_FS_SOLVES, SPK_FS_RERATED, SPK_FS_SOLVED, SPK_FS_OPENED, SPK_FS_ALONE,
 *                      SPK_FS_SWITCHES, SPK_FS_LOOKED }
 *       (--engine flow only: its work over the run, its sharing's (sim/backends/flow/fluid.h) and its ranks' turns),
 *   SPK_NCCL: { SPK_NC_SIZE, SPK_NC_EFFECTIVE, SPK_NC_PAYLOAD (sparse only), SPK_TIME, SPK_NC_ALGBW,
 *               SPK_NC_BUSBW, SPK_NC_FACTOR }   (nccl-tests' allreduce figures, report.h),
 *   SPK_TRAINING: {   (only with training iterations: sim/driver/training.h)
 *     SPK_TR_MODEL, SPK_TR_COMPUTE, SPK_TR_FWD, SPK_TR_BWD, SPK_TR_SOURCE, SPK_TR_BATCH, SPK_TR_OVERLAP,
 *     SPK_TR_OVERLAPPED, SPK_TR_RULE, SPK_TR_ALLREDUCE, SPK_TR_ITER, SPK_TR_SAMPLES,
 *     SPK_TR_SPEEDUP, SPK_TR_DENSE: { SPK_CFG_ALGO, SPK_TR_ITER }   (these two when a dense allreduce ran
 *                                                                 alongside: sparsim run --algo LIST)
 *   },
 *   SPK_DISTURBANCE: {   (only in a disturbed run)
 *     SPK_D_STRAGGLERS: { SPK_D_CHOSEN: [ranks], SPK_D_FRACTION, SPK_D_FACTOR, SPK_D_CV, SPK_D_COMPUTE },
 *     SPK_D_NOISE: { SPK_D_FRACTION, SPK_D_LENGTH, SPK_D_KIND, SPK_D_DETOURS, SPK_D_HELD },
 *     SPK_D_LINKS: { SPK_D_TARGET, SPK_D_DEGRADED, SPK_D_OF, SPK_D_BW_FACTOR, SPK_D_EXTRA_LAT, SPK_D_NAMES: [] },
 *     SPK_D_BACKGROUND: { SPK_D_LOAD, SPK_D_PATTERN, SPK_D_FLOW, SPK_D_RATE, SPK_D_HOSTS, SPK_D_FLOWS, SPK_BYTES },
 *     SPK_D_BASELINE: { SPK_TIME_PER_ITER: { SPK_MEAN }, SPK_PHASES: { name: s } }   (unless left out),
 *     SPK_D_SLOWDOWN: disturbed / baseline time per iteration,
 *     SPK_D_PHASE_SLOWDOWN: { name: ratio },
 *     SPK_ITERATIONS: [ { SPK_ITER, SPK_TIME, SPK_D_BASE_TIME, SPK_D_SLOWDOWN,
 *                         SPK_D_SLOWEST_RANK, SPK_D_SLOWEST_FACTOR, SPK_D_SLOWED (stragglers),
 *                         SPK_PHASES: { name: { SPK_TIME, SPK_D_BASE_TIME, SPK_D_SLOWDOWN, SPK_D_LAST_RANK,
 *                                               SPK_D_CRIT_RANK, SPK_D_CRIT_WORK,
 *                                               SPK_D_CRIT_MSG: { SPK_D_SRC, SPK_D_DST, SPK_TIME, SPK_D_ROUTE: [] } } } } ],
 *     SPK_D_SLICES, SPK_D_SLICES_DROPPED
 *   }
 * }
 */
#ifndef SPARSIM_SUMMARY_KEYS_H
#define SPARSIM_SUMMARY_KEYS_H

#define SPK_SCHEMA "schema_version"
#define SPK_SCHEMA_VERSION 1
#define SPK_VERSION "sparsim_version"
#define SPK_CONFIG "config"
#define SPK_BACKEND "backend"
#define SPK_K "k"
#define SPK_PLATFORM "platform"
#define SPK_ALPHA "alpha_s"
#define SPK_BANDWIDTH "bandwidth_Bps"
#define SPK_PHASES "phases"
#define SPK_ITERATIONS "iterations"
#define SPK_ITER "iter"
#define SPK_TIME "time_s"
#define SPK_T_START "t_start_s"
#define SPK_T_END "t_end_s"
#define SPK_VOLUME_BYTES "volume_bytes"
#define SPK_MESSAGES "messages"
#define SPK_BYTES "bytes"
#define SPK_DENSE_WARMUP "dense_warmup"
#define SPK_STATS "stats"
#define SPK_MIN "min"
#define SPK_MEAN "mean"
#define SPK_MAX "max"
#define SPK_SENT_MAX "sent_max_bytes"
#define SPK_RECV_MAX "recv_max_bytes"
#define SPK_TIME_PER_ITER "time_per_iter_s"
#define SPK_VOLUME "volume"
#define SPK_DEFINITION "definition"
#define SPK_VOL_MEAN "bytes_per_iter_mean"
#define SPK_VOL_MAX "bytes_per_iter_max"
#define SPK_VOL_WORDS_MAX "words_per_iter_max"
#define SPK_BOUND "bound"
#define SPK_FORMULA "formula"
#define SPK_SOURCE "source"
#define SPK_WORDS "words"
#define SPK_BYTES_KEY "bytes"
#define SPK_RATIO "ratio"
#define SPK_FLOOR_WORDS "floor_words"
#define SPK_LOWER_FORMULA "lower_formula"
#define SPK_LOWER_WORDS "lower_words"
#define SPK_LOWER_BYTES "lower_bytes"
#define SPK_PREDICTION "prediction"
#define SPK_MODEL "model"
#define SPK_MEASURED_OVER_PREDICTED "measured_over_predicted"
#define SPK_RANKS "ranks"
#define SPK_SENT_MEAN "sent_bytes_mean"
#define SPK_SENT_MAX_R "sent_bytes_max"
#define SPK_RECV_MEAN "recv_bytes_mean"
#define SPK_RECV_MAX_R "recv_bytes_max"
#define SPK_SENT_ARRAY "sent_bytes"
#define SPK_RECV_ARRAY "recv_bytes"
#define SPK_GPUS_PER_NODE "gpus_per_node"
#define SPK_NODES "nodes"
#define SPK_SENT_OFF_ARRAY "sent_bytes_off_node"
#define SPK_RECV_OFF_ARRAY "recv_bytes_off_node"
#define SPK_WALL "wall_seconds"
#define SPK_TRACE_DROPPED "trace_messages_dropped"
#define SPK_MSG_RATE "messages_per_wall_s"

/* where the simulator's time went (sim/driver/wall_profile.h) */
#define SPK_WALL_PROFILE "wall_profile"
#define SPK_WP_SAMPLES "samples"
#define SPK_WP_CPU "cpu_s"
#define SPK_WP_MODEL "network_model"
#define SPK_WP_ENGINE "engine"
#define SPK_WP_SPARSIM "sparsim"
#define SPK_WP_LIBS "libraries"

/* the flow engine's work: its sharing (sim/backends/flow/fluid.h) and its ranks' turns (flow_engine.c) */
#define SPK_FLOW_SOLVER "flow_solver"
#define SPK_FS_SOLVES "solves"
#define SPK_FS_RERATED "flows_rerated"
#define SPK_FS_SOLVED "flows_solved"
#define SPK_FS_OPENED "links_opened"
#define SPK_FS_ALONE "flows_alone"
#define SPK_FS_SWITCHES "rank_switches"
#define SPK_FS_LOOKED "wakes_without_switch"

/* whole training iterations (sim/driver/training.h) */
#define SPK_TRAINING "training"
#define SPK_TR_MODEL "model"
#define SPK_TR_COMPUTE "compute_s"
#define SPK_TR_FWD "forward_s"
#define SPK_TR_BWD "backward_s"
#define SPK_TR_SOURCE "compute_source"
#define SPK_TR_BATCH "batch"
#define SPK_TR_OVERLAP "overlap"
#define SPK_TR_OVERLAPPED "overlapped"
#define SPK_TR_RULE "overlap_rule"
#define SPK_TR_ALLREDUCE "allreduce_s"
#define SPK_TR_ITER "iteration_s"
#define SPK_TR_SAMPLES "samples_per_s"
#define SPK_TR_SPEEDUP "speedup_vs_dense"
#define SPK_TR_DENSE "dense_reference"

/* nccl-tests' figures of the allreduce (sp_nccl_figures_of) */
#define SPK_NCCL "nccl"
#define SPK_NC_SIZE "size_bytes"
#define SPK_NC_EFFECTIVE "effective_size"
#define SPK_NC_PAYLOAD "selection_bytes_per_rank"
#define SPK_NC_ALGBW "algbw_Bps"
#define SPK_NC_BUSBW "busbw_Bps"
#define SPK_NC_FACTOR "bus_factor"

/* a disturbed run (sim/shim/disturb.h) */
#define SPK_DISTURBANCE "disturbance"
#define SPK_D_STRAGGLERS "stragglers"
#define SPK_D_CHOSEN "chosen_ranks"
#define SPK_D_FRACTION "fraction"
#define SPK_D_FACTOR "factor"
#define SPK_D_CV "cv"
#define SPK_D_COMPUTE "compute_s"
#define SPK_D_NOISE "noise"
#define SPK_D_LENGTH "detour_s"
#define SPK_D_KIND "kind"
#define SPK_D_DETOURS "detours"
#define SPK_D_HELD "held_s"
#define SPK_D_LINKS "links"
#define SPK_D_TARGET "target"
#define SPK_D_DEGRADED "degraded"
#define SPK_D_OF "of"
#define SPK_D_BW_FACTOR "bandwidth_factor"
#define SPK_D_EXTRA_LAT "extra_latency_s"
#define SPK_D_NAMES "names"
#define SPK_D_BACKGROUND "background"
#define SPK_D_LOAD "load"
#define SPK_D_PATTERN "pattern"
#define SPK_D_FLOW "flow_bytes"
#define SPK_D_RATE "flows_per_s_per_host"
#define SPK_D_HOSTS "hosts"
#define SPK_D_FLOWS "flows"
#define SPK_D_BASELINE "baseline"
#define SPK_D_SLOWDOWN "slowdown"
#define SPK_D_PHASE_SLOWDOWN "phase_slowdown"
#define SPK_D_BASE_TIME "baseline_time_s"
#define SPK_D_SLOWEST_RANK "slowest_rank"
#define SPK_D_SLOWEST_FACTOR "slowest_factor"
#define SPK_D_SLOWED "slowed_ranks"
#define SPK_D_LAST_RANK "last_rank"
#define SPK_D_CRIT_RANK "critical_rank"
#define SPK_D_CRIT_WORK "critical_work_s"
#define SPK_D_CRIT_MSG "critical_message"
#define SPK_D_SRC "src"
#define SPK_D_DST "dst"
#define SPK_D_ROUTE "links"
#define SPK_D_SLICES "trace_slices"
#define SPK_D_SLICES_DROPPED "trace_slices_dropped"

/* the keys of "config" that the readers use (option names) */
#define SPK_CFG_ALGO "algo"
#define SPK_CFG_RANKS "ranks"
#define SPK_CFG_PLATFORM "platform"
#define SPK_CFG_N "n"
#define SPK_CFG_ITERS "iters"
#define SPK_CFG_PAYLOAD "payload"

#endif
