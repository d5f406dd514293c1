/* devices.c - built-in device profiles.
 *
 * Each kernel costs a launch term plus the bytes it streams divided by the
 * device's memory bandwidth; exact top-k uses a fitted s * n * log2(n) law
 * where one is published.  Sources sit next to the numbers.
 */
#include "device.h"
#include "traces/trace.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* Sustained training FLOP/s (train_flops): FP32 peak from the vendor's
 * data sheet times 0.4, an assumed share of peak that cuDNN training of CNNs
 * and transformers sustains in FP32 (an assumption, not a measurement: give
 * --train-compute for a measured time per iteration).
 *
 * Host and copy overheads are zero in the plain profiles, so that their
 * results stay what they were; the -host profiles add them.  Their numbers
 * are [M] in the reference notes' sense (recalled, not measured here; the
 * calibrate command is where measured ones belong):
 *  - send_o / recv_o: LogGP's o (Alexandrov et al., SPAA 1995), host CPU per
 *    message posted and per message completed: about 1 us for MPI over Cray
 *    Aries plus about 1 us for mpi4py's Python call (Ok-Topk's code); about
 *    10 us for MPI over the kernel's TCP stack on 1 GbE (gTop-k's cluster).
 *  - call_o: the software overhead of one algorithm phase (the framework's
 *    Python, numpy and tensor calls around a collective): 20 us and 50 us.
 *  - copies: both papers' codes communicate from host buffers (reference
 *    notes section 1: mpi4py on numpy arrays with GPU<->CPU copies around
 *    it).  P100 on PCIe 3.0 x16: about 12 GB/s pinned, 10 us per copy; the
 *    P102-100 is a mining card wired as PCIe 1.1 x4: about 0.8 GB/s. */
static const sp_device devices[] = {
    {.name = "none", .description = "local compute is free (pure communication models)", .source = "-"},
    /* Piz Daint's Tesla P100 (16 GB HBM2, 720 GB/s peak); ~75% of peak is a
     * typical achieved stream bandwidth.  Launch overhead ~5 us.  Exact top-k
     * uses the P102 fit below scaled by the bandwidth ratio (no published
     * P100 fit).  FP32 peak 9.3 TFLOP/s (NVIDIA Tesla P100 PCIe data sheet). */
    {.name = "p100",
     .description = "NVIDIA Tesla P100 16 GB (Piz Daint XC50 node)",
     .launch = 5e-6,
     .mem_bw = 540e9,
     .topk_coeff = 2.18896957e-10 * 440.0 / 720.0,
     .scatter_bw = 60e9,
     .source = "NVIDIA P100 datasheet (720 GB/s HBM2); top-k law from Shi et al. scaled by bandwidth",
     .train_flops = 0.4 * 9.3e12},
    /* NVIDIA P102-100 (10 GB GDDR5X, 440 GB/s) as in the gTop-k/Gaussian-k
     * authors' cluster; their code models exact top-k as
     * 2.18896957e-10 * n * log2(n) seconds (Shi et al. 2019, utils.py).
     * FP32 peak about 10.8 TFLOP/s (3200 CUDA cores at 1.68 GHz, [M]). */
    {.name = "p102",
     .description = "NVIDIA P102-100 (gTop-k / Gaussian-k authors' cluster)",
     .launch = 5e-6,
     .mem_bw = 330e9,
     .topk_coeff = 2.18896957e-10,
     .scatter_bw = 40e9,
     .source = "Shi et al., arXiv 1911.08772 (top-k fit); P102-100 spec 440 GB/s",
     .train_flops = 0.4 * 10.8e12},
    /* Today's data-centre GPUs, for the CUDA kernels of algorithms/select_cuda.cu.
     * Every number is derived from the vendor's published HBM bandwidth B:
     *  - mem_bw = 0.75 B, the share of peak the p100 row assumes for streaming
     *    kernels (an assumption [M]; `sparsim-mpi calibrate --select cuda`
     *    measures it on the GPU at hand);
     *  - scatter_bw = mem_bw / 8: a random 4-byte read-modify-write moves a
     *    32-byte sector each way (the 32-byte sector of global memory
     *    accesses: NVIDIA, CUDA C++ Best Practices Guide, "Coalesced Access to
     *    Global Memory"), 64 bytes for 8 bytes of pair;
     *  - exact top-k by the bandwidth law (topk_coeff 0: three reads of n
     *    floats), as the radix selection streams x a few times instead of
     *    sorting (no published n log n fit for these GPUs);
     *  - launch 5 us, as the rows above ([M]);
     *  - train_flops = 0.4 x the data sheet's FP32 peak, as above.
     * Copies are left out (copy_bw 0), as in the plain rows above. */
    /* Tesla V100 SXM2: 900 GB/s HBM2, 15.7 TFLOP/s FP32 (NVIDIA Tesla V100 GPU
     * Accelerator data sheet, 2018) */
    {.name = "v100",
     .description = "NVIDIA Tesla V100 SXM2 (HBM2, 900 GB/s)",
     .launch = 5e-6,
     .mem_bw = 0.75 * 900e9,
     .scatter_bw = 0.75 * 900e9 / 8,
     .source = "NVIDIA Tesla V100 data sheet (900 GB/s HBM2, 15.7 TFLOP/s FP32); shares as devices.c says",
     .train_flops = 0.4 * 15.7e12},
    /* A100 SXM4 40 GB: 1,555 GB/s HBM2, 19.5 TFLOP/s FP32 (NVIDIA A100 Tensor
     * Core GPU data sheet, 2021; the 80 GB part has 2,039 GB/s) */
    {.name = "a100",
     .description = "NVIDIA A100 SXM4 40 GB (HBM2, 1555 GB/s)",
     .launch = 5e-6,
     .mem_bw = 0.75 * 1555e9,
     .scatter_bw = 0.75 * 1555e9 / 8,
     .source = "NVIDIA A100 data sheet (1555 GB/s HBM2 for 40 GB SXM4, 19.5 TFLOP/s FP32); shares as devices.c says",
     .train_flops = 0.4 * 19.5e12},
    /* H100 SXM5 80 GB: 3.35 TB/s HBM3, 67 TFLOP/s FP32 (NVIDIA H100 Tensor Core
     * GPU data sheet, 2023) */
    {.name = "h100",
     .description = "NVIDIA H100 SXM5 80 GB (HBM3, 3.35 TB/s)",
     .launch = 5e-6,
     .mem_bw = 0.75 * 3.35e12,
     .scatter_bw = 0.75 * 3.35e12 / 8,
     .source = "NVIDIA H100 data sheet (3.35 TB/s HBM3 for SXM, 67 TFLOP/s FP32); shares as devices.c says",
     .train_flops = 0.4 * 67e12},
    /* H200 SXM 141 GB: 4.8 TB/s HBM3e, 67 TFLOP/s FP32 (NVIDIA H200 Tensor Core
     * GPU data sheet, 2024) */
    {.name = "h200",
     .description = "NVIDIA H200 SXM 141 GB (HBM3e, 4.8 TB/s)",
     .launch = 5e-6,
     .mem_bw = 0.75 * 4.8e12,
     .scatter_bw = 0.75 * 4.8e12 / 8,
     .source = "NVIDIA H200 data sheet (4.8 TB/s HBM3e, 67 TFLOP/s FP32); shares as devices.c says",
     .train_flops = 0.4 * 67e12},
    /* B200 (HGX / DGX B200, 1,000 W): 8 TB/s HBM3e, 80 TFLOP/s FP32 (NVIDIA's
     * Blackwell data sheet figures as G. Lockwood's glennklockwood.com
     * garden/processors/B200 tabulates them; the 1,200 W GB200 part: 90) */
    {.name = "b200",
     .description = "NVIDIA B200 (HGX/DGX B200; HBM3e, 8 TB/s)",
     .launch = 5e-6,
     .mem_bw = 0.75 * 8e12,
     .scatter_bw = 0.75 * 8e12 / 8,
     .source = "NVIDIA B200 data sheet figures (8 TB/s HBM3e, 80 TFLOP/s FP32 at 1000 W); shares as devices.c says",
     .train_flops = 0.4 * 80e12},
    /* GH200's Hopper GPU with 96 GB HBM3: 4 TB/s, 67 TFLOP/s FP32 (NVIDIA
     * GH200 Grace Hopper Superchip data sheet; the 144 GB HBM3e part has 4.9
     * TB/s).  Alps' GH200 modules are the 96 GB ones (recalled from CSCS'
     * documentation, not checked: give --device with a calibrated profile) */
    {.name = "gh200",
     .description = "NVIDIA GH200's Hopper GPU, 96 GB HBM3 (4 TB/s; Alps' nodes)",
     .launch = 5e-6,
     .mem_bw = 0.75 * 4e12,
     .scatter_bw = 0.75 * 4e12 / 8,
     .source = "NVIDIA GH200 data sheet (4 TB/s HBM3 for 96 GB, 67 TFLOP/s FP32); shares as devices.c says",
     .train_flops = 0.4 * 67e12},
    {.name = "p100-host",
     .description = "p100 with host and copy overheads (Ok-Topk on Piz Daint: Cray MPI over Aries, mpi4py)",
     .launch = 5e-6,
     .mem_bw = 540e9,
     .topk_coeff = 2.18896957e-10 * 440.0 / 720.0,
     .scatter_bw = 60e9,
     .source = "p100's kernels; o, call and copy overheads as devices.c says ([M])",
     .train_flops = 0.4 * 9.3e12,
     .send_o = 2e-6,
     .recv_o = 2e-6,
     .call_o = 20e-6,
     .copy_lat = 10e-6,
     .copy_bw = 12e9},
    {.name = "p102-host",
     .description = "p102 with host and copy overheads (gTop-k's cluster: MPI over TCP on 1 GbE, PCIe 1.1 x4)",
     .launch = 5e-6,
     .mem_bw = 330e9,
     .topk_coeff = 2.18896957e-10,
     .scatter_bw = 40e9,
     .source = "p102's kernels; o, call and copy overheads as devices.c says ([M])",
     .train_flops = 0.4 * 10.8e12,
     .send_o = 10e-6,
     .recv_o = 10e-6,
     .call_o = 50e-6,
     .copy_lat = 10e-6,
     .copy_bw = 0.8e9},
};

const sp_device *sp_device_find(const char *name)
{
    for (size_t i = 0; i < sizeof devices / sizeof devices[0]; i++)
        if (strcmp(devices[i].name, name) == 0)
            return &devices[i];
    return NULL;
}

/* A profile from a JSON file (as sparsim-mpi calibrate writes): keys name,
 * description, launch, mem_bw, topk_coeff, scatter_bw (seconds, bytes/s). */
const sp_device *sp_device_load(const char *path, char *err, size_t errlen)
{
    static sp_device loaded;
    static char name[64], desc[160], source[1100];
    char jerr[600];
    cJSON *j = sp_json_file_checked(path, 1 << 20, jerr, sizeof jerr);
    if (!j) {
        FILE *f = fopen(path, "rb");
        if (!f) {
            char known[400];
            size_t w = 0;
            known[0] = '\0';
            for (size_t i = 0; i < sizeof devices / sizeof devices[0] && w < sizeof known; i++)
                w += (size_t)snprintf(known + w, sizeof known - w, "%s, ", devices[i].name);
            snprintf(err, errlen, "unknown device profile '%s' (known: %sor a JSON file)", path, known);
        } else {
            fclose(f);
            snprintf(err, errlen, "device profile %s", jerr);
        }
        return NULL;
    }
    if (!cJSON_IsObject(j)) {
        snprintf(err, errlen, "device profile %s: not a JSON object", path);
        cJSON_Delete(j);
        return NULL;
    }
    const char *keys[] = {"launch", "mem_bw", "topk_coeff", "scatter_bw"};
    double v[4];
    for (int i = 0; i < 4; i++) {
        cJSON *x = cJSON_GetObjectItemCaseSensitive(j, keys[i]);
        if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0) || x->valuedouble > 1e300) {
            snprintf(err, errlen, "device profile %s: \"%s\" must be a non-negative number", path, keys[i]);
            cJSON_Delete(j);
            return NULL;
        }
        v[i] = x->valuedouble;
    }
    /* every kernel at the largest size a run can ask for (n below 2^31 on
     * each of up to 30000 ranks) must take a finite time, with room to add
     * up over a run: a tiny bandwidth would otherwise make simulated time
     * infinite */
    sp_device probe = {.name = "", .description = "", .launch = v[0], .mem_bw = v[1], .topk_coeff = v[2],
                       .scatter_bw = v[3] > 0 ? v[3] : v[1], .source = ""};
    const double largest = 2147483648.0 * 30000.0;
    static const char *const kernel_names[] = {"an exact top-k", "a threshold filter", "a scatter-add", "a merge",
                                               "a dense sum", "a copy", "a fused sum"};
    for (int k = 0; k < SP_DEV_KERNELS; k++) {
        double t = sp_device_time(&probe, (sp_device_kernel)k, largest);
        if (!(t <= 1e30)) {
            snprintf(err, errlen,
                     "device profile %s: %s of %.3g elements would take %g s (launch %g, mem_bw %g, topk_coeff %g, "
                     "scatter_bw %g): every kernel must take a finite time below 1e30 s",
                     path, kernel_names[k], largest, t, v[0], v[1], v[2], v[3]);
            cJSON_Delete(j);
            return NULL;
        }
    }
    /* optional: training FLOP/s, host and copy overheads (absent: 0) */
    const char *opt_keys[] = {"train_flops", "send_o", "recv_o", "call_o", "copy_lat", "copy_bw"};
    double ov[6] = {0, 0, 0, 0, 0, 0};
    for (int i = 0; i < 6; i++) {
        cJSON *x = cJSON_GetObjectItemCaseSensitive(j, opt_keys[i]);
        if (!x)
            continue;
        /* a per-message overhead above 1000 s would make any run's time meaningless */
        double cap = i == 0 || i == 5 ? 1e300 : 1e3;
        if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0) || x->valuedouble > cap) {
            snprintf(err, errlen, "device profile %s: \"%s\" must be a non-negative number%s", path, opt_keys[i],
                     cap < 1e300 ? " of at most 1000 seconds" : "");
            cJSON_Delete(j);
            return NULL;
        }
        ov[i] = x->valuedouble;
    }
    if (ov[4] > 0 && ov[5] <= 0) {
        snprintf(err, errlen, "device profile %s: \"copy_lat\" needs \"copy_bw\" (the copies' bandwidth)", path);
        cJSON_Delete(j);
        return NULL;
    }
    cJSON *nm = cJSON_GetObjectItemCaseSensitive(j, "name"), *ds = cJSON_GetObjectItemCaseSensitive(j, "description");
    snprintf(name, sizeof name, "%s", cJSON_IsString(nm) ? nm->valuestring : path);
    snprintf(desc, sizeof desc, "%s", cJSON_IsString(ds) ? ds->valuestring : "from a file");
    snprintf(source, sizeof source, "%s", path);
    cJSON_Delete(j);
    loaded = (sp_device){.name = name, .description = desc, .launch = v[0], .mem_bw = v[1], .topk_coeff = v[2],
                         .scatter_bw = v[3] > 0 ? v[3] : v[1], .source = source, .train_flops = ov[0],
                         .send_o = ov[1], .recv_o = ov[2], .call_o = ov[3], .copy_lat = ov[4], .copy_bw = ov[5]};
    return &loaded;
}

int sp_device_write_json(FILE *f, const char *name, const char *description, double launch, double mem_bw,
                         double topk_coeff, double scatter_bw, double send_o, double recv_o)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddStringToObject(o, "description", description);
    cJSON_AddNumberToObject(o, "launch", launch);
    cJSON_AddNumberToObject(o, "mem_bw", mem_bw);
    cJSON_AddNumberToObject(o, "topk_coeff", topk_coeff);
    cJSON_AddNumberToObject(o, "scatter_bw", scatter_bw);
    cJSON_AddNumberToObject(o, "send_o", send_o);
    cJSON_AddNumberToObject(o, "recv_o", recv_o);
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    int ok = text && fprintf(f, "%s\n", text) > 0;
    free(text);
    return ok ? 0 : -1;
}

const sp_device *sp_device_list(int *count)
{
    *count = (int)(sizeof devices / sizeof devices[0]);
    return devices;
}

/* a copy between host and device memory: latency plus bytes over the copy
 * bandwidth (PCIe), as the -host profiles say */
double sp_device_copy_time(const sp_device *d, double bytes)
{
    if (!d || d->copy_bw <= 0 || bytes <= 0)
        return 0.0;
    return d->copy_lat + bytes / d->copy_bw;
}

double sp_device_flops_time(const sp_device *d, double flops, double bytes)
{
    if (!d || d->mem_bw <= 0 || (flops <= 0 && bytes <= 0))
        return 0.0;
    double tf = d->train_flops > 0 && flops > 0 ? flops / d->train_flops : 0.0;
    double tb = bytes > 0 ? bytes / d->mem_bw : 0.0;
    return d->launch + (tf > tb ? tf : tb);
}

double sp_device_time(const sp_device *d, sp_device_kernel k, double size)
{
    if (!d || d->mem_bw <= 0 || size <= 0)
        return 0.0;
    switch (k) {
    case SP_DEV_TOPK:
        if (d->topk_coeff > 0 && size > 1)
            return d->launch + d->topk_coeff * size * log2(size);
        return d->launch + 3.0 * 4.0 * size / d->mem_bw;
    case SP_DEV_THRESHOLD: /* read n floats, write the (few) survivors */
        return d->launch + 4.0 * size / d->mem_bw;
    case SP_DEV_SCATTER_ADD: /* read 8-byte pairs, read-modify-write 4 bytes at random */
        return d->launch + 8.0 * size / d->mem_bw + 8.0 * size / d->scatter_bw;
    case SP_DEV_MERGE: /* read both inputs, write the output */
        return d->launch + 16.0 * size / d->mem_bw;
    case SP_DEV_DENSE_SUM: /* read two, write one */
        return d->launch + 12.0 * size / d->mem_bw;
    case SP_DEV_COPY:
        return d->launch + 2.0 * size / d->mem_bw;
    case SP_DEV_FUSED_SUM: /* read two, write one, inside a kernel already running */
        return 12.0 * size / d->mem_bw;
    default:
        return 0.0;
    }
}
