// libpq, the PostgreSQL client library psql itself uses (Debian's libpq-dev).
#include <libpq-fe.h>
