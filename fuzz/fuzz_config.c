/* fuzz_config.c - a config file (--config FILE.json): read, applied to the
 * option table, then the cross-field checks of `sparsim run`. */
#include "fuzz_input.h"
#include "sim/driver/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file("config.json", data, size);
    char arg0[] = "--config", arg1[512], err[2048];
    snprintf(arg1, sizeof arg1, "%s", path);
    char *argv[] = {arg0, arg1, NULL};
    sp_plan p;
    sp_plan_defaults(&p);
    if (sp_plan_parse(&p, 2, argv, err, sizeof err) == 0)
        sp_plan_validate(&p, err, sizeof err);
    return 0;
}
