/* stub_backend.c - the harnesses link the driver (the readers of options and
 * workloads live beside it) but never run ranks: a backend that refuses. */
#include "sim/shim/backend.h"


int sp_backend_run(sp_shim *sh, const sp_backend_config *cfg, sp_error *e)
{
    (void)sh;
    (void)cfg;
    return sp_error_set(e, SP_STATUS_FAILED, "the fuzzing harnesses run no ranks");
}

const char *sp_backend_name(void) { return "none"; }
int sp_backend_is_root(void) { return 1; }
