/* stub_backend.c - the harnesses link the driver (the readers of options and
 * workloads live beside it) but never run ranks: a backend that refuses. */
#include "sim/shim/backend.h"

#include <stdio.h>

int sp_backend_run(sp_shim *sh, const sp_backend_config *cfg, char *err, size_t errlen)
{
    (void)sh;
    (void)cfg;
    snprintf(err, errlen, "the fuzzing harnesses run no ranks");
    return 1;
}

const char *sp_backend_name(void) { return "none"; }
int sp_backend_is_root(void) { return 1; }
