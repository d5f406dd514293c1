/* fuzz_device.c - a device profile (--device FILE.json), as calibrate writes
 * them, loaded and asked for every kernel's time. */
#include "fuzz_input.h"
#include "topologies/device.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file("device.json", data, size);
    char err[2048];
    const sp_device *d = sp_device_load(path, err, sizeof err);
    if (d)
        for (int k = 0; k < SP_DEV_KERNELS; k++)
            sp_device_time(d, (sp_device_kernel)k, 1e6);
    return 0;
}
