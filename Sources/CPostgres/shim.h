#ifndef TODAYSIM_CPOSTGRES_SHIM_H
#define TODAYSIM_CPOSTGRES_SHIM_H
#include <libpq-fe.h>

/// PG_DIAG_SQLSTATE is a character-literal macro Swift does not import.
static inline int todaysim_pg_diag_sqlstate(void) {
    return PG_DIAG_SQLSTATE;
}
#endif
