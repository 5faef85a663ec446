// libpq, the PostgreSQL client library psql itself uses: its declarations from Debian's
// libpq-dev, its code from libpq.so.5, opened when a PostgreSQL source is first used rather than
// linked (see lazy_libpq.c).
#ifndef CLIBPQ_H
#define CLIBPQ_H

#include <postgresql/libpq-fe.h>

/// Opens libpq.so.5 if it is not open yet. NULL once it is open, else what the loader said.
/// Call it before any other function of libpq's.
const char *dsh_libpq_open(void);

#endif
