/* sweep_columns.c - the sweep CSV's column table (sweep_columns.h) as data. */
#include "sweep_columns.h"

#define SP_SC_ROW_(id, nm, ty, fmt, mn) [SP_SC_##id] = {.name = nm, .type = ty, .format = fmt, .meaning = mn},
const sp_sweep_column sp_sweep_columns[SP_SC_COUNT] = {SP_SWEEP_COLUMNS(SP_SC_ROW_)};
