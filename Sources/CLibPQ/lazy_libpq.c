// Each libpq function dsh calls, as a small function of the same name that opens libpq.so.5 on
// its first call and forwards to the library's own.
//
// Why not link libpq: a process pays at start for every shared library it links, and libpq
// brings Kerberos, LDAP, OpenSSL and a dozen more: about 5 ms of the 21 ms dsh took to start,
// on every run, for a server most runs never open. The definitions below are checked by the
// compiler against libpq-fe.h, and they are hidden: libpq's calls of its own functions stay
// inside libpq.
#include "CLibPQ.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *library;
static const char *failure;
static pthread_once_t opened = PTHREAD_ONCE_INIT;

static void open_library(void) {
  library = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
  // The loader's words, copied: its buffer is freed by the thread's next failing dl call.
  if (!library) failure = strdup(dlerror());
}

const char *dsh_libpq_open(void) {
  pthread_once(&opened, open_library);
  return library ? NULL : (failure ? failure : "libpq.so.5 could not be opened");
}

// The library's function `name`. A caller that did not ask dsh_libpq_open first, on a machine
// without libpq, stops here with the loader's reason rather than calling nothing.
static void *function_named(const char *name) {
  const char *problem = dsh_libpq_open();
  void *function = problem ? NULL : dlsym(library, name);
  if (!function) {
    fprintf(stderr, "dsh: libpq's %s is not available: %s\n", name, problem ? problem : dlerror());
    abort();
  }
  return function;
}

// One forwarding function: the library's pointer is looked up once and kept.
#define FORWARD(result, name, parameters, arguments)                                     \
  __attribute__((visibility("hidden"))) result name parameters {                        \
    static result(*found) parameters;                                                    \
    result(*function) parameters = __atomic_load_n(&found, __ATOMIC_ACQUIRE);            \
    if (!function) {                                                                     \
      function = (result(*) parameters)function_named(#name);                            \
      __atomic_store_n(&found, function, __ATOMIC_RELEASE);                              \
    }                                                                                    \
    return function arguments;                                                           \
  }

FORWARD(int, PQcancel, (PGcancel * cancel, char *errbuf, int errbufsize), (cancel, errbuf, errbufsize))
FORWARD(void, PQclear, (PGresult * res), (res))
FORWARD(PQconninfoOption *, PQconndefaults, (void), ())
FORWARD(PGconn *, PQconnectdbParams, (const char *const *keywords, const char *const *values, int expand_dbname),
        (keywords, values, expand_dbname))
FORWARD(int, PQconnectionNeedsPassword, (const PGconn *conn), (conn))
FORWARD(void, PQconninfoFree, (PQconninfoOption * connOptions), (connOptions))
FORWARD(PQconninfoOption *, PQconninfoParse, (const char *conninfo, char **errmsg), (conninfo, errmsg))
FORWARD(char *, PQerrorMessage, (const PGconn *conn), (conn))
FORWARD(PGresult *, PQexec, (PGconn * conn, const char *query), (conn, query))
FORWARD(void, PQfinish, (PGconn * conn), (conn))
FORWARD(char *, PQfname, (const PGresult *res, int field_num), (res, field_num))
FORWARD(void, PQfreeCancel, (PGcancel * cancel), (cancel))
FORWARD(void, PQfreemem, (void *ptr), (ptr))
FORWARD(Oid, PQftype, (const PGresult *res, int field_num), (res, field_num))
FORWARD(PGcancel *, PQgetCancel, (PGconn * conn), (conn))
FORWARD(PGresult *, PQgetResult, (PGconn * conn), (conn))
FORWARD(int, PQgetisnull, (const PGresult *res, int tup_num, int field_num), (res, tup_num, field_num))
FORWARD(int, PQgetlength, (const PGresult *res, int tup_num, int field_num), (res, tup_num, field_num))
FORWARD(char *, PQgetvalue, (const PGresult *res, int tup_num, int field_num), (res, tup_num, field_num))
FORWARD(int, PQnfields, (const PGresult *res), (res))
FORWARD(int, PQntuples, (const PGresult *res), (res))
FORWARD(const char *, PQparameterStatus, (const PGconn *conn, const char *paramName), (conn, paramName))
FORWARD(char *, PQresultErrorField, (const PGresult *res, int fieldcode), (res, fieldcode))
FORWARD(char *, PQresultErrorMessage, (const PGresult *res), (res))
FORWARD(ExecStatusType, PQresultStatus, (const PGresult *res), (res))
FORWARD(int, PQsendQueryParams,
        (PGconn * conn, const char *command, int nParams, const Oid *paramTypes, const char *const *paramValues,
         const int *paramLengths, const int *paramFormats, int resultFormat),
        (conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats, resultFormat))
FORWARD(int, PQserverVersion, (const PGconn *conn), (conn))
FORWARD(PQnoticeReceiver, PQsetNoticeReceiver, (PGconn * conn, PQnoticeReceiver proc, void *arg), (conn, proc, arg))
FORWARD(int, PQsetSingleRowMode, (PGconn * conn), (conn))
FORWARD(ConnStatusType, PQstatus, (const PGconn *conn), (conn))
FORWARD(PGTransactionStatusType, PQtransactionStatus, (const PGconn *conn), (conn))
