// Each libcurl function FoundationNetworking calls, as a small function of the same name that
// opens the system's libcurl on its first call and forwards to the library's own.
//
// Why: dsh links the Swift runtime and Foundation statically (a process pays at start for every
// shared library it links), and FoundationNetworking would bring libcurl, which brings GnuTLS
// or OpenSSL, Kerberos, LDAP, SSH, IDN and more: 8 ms of start on every run, for the web that
// most runs never read. dsh's link names Foundation's static libraries but not libcurl, so
// these definitions are the only ones: a libcurl function FoundationNetworking starts to call
// and this file does not define is a link error, not a silent slow start.
//
// The declarations are written here rather than taken from curl.h, whose headers are in a -dev
// package dsh does not otherwise need: handles are pointers, codes and options ints, as
// curl.h's enums are.
#include "CLibCurl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *library;
static const char *failure;
static pthread_once_t opened = PTHREAD_ONCE_INIT;

// FoundationNetworking is built against libcurl.so.4 (OpenSSL); the GnuTLS build has the same
// functions under another name.
static void open_library(void) {
  library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    // The loader's words for the first name, copied: its buffer is freed by the thread's next
    // failing dl call.
    failure = strdup(dlerror());
    library = dlopen("libcurl-gnutls.so.4", RTLD_NOW | RTLD_LOCAL);
  }
}

const char *dsh_libcurl_open(void) {
  pthread_once(&opened, open_library);
  return library ? NULL : (failure ? failure : "libcurl.so.4 could not be opened");
}

// The library's function `name`. dsh asks dsh_libcurl_open before its first request; a call
// without it, on a machine without libcurl, stops here with the loader's reason.
static void *function_named(const char *name) {
  const char *problem = dsh_libcurl_open();
  void *function = problem ? NULL : dlsym(library, name);
  if (!function) {
    fprintf(stderr, "dsh: libcurl's %s is not available: %s\n", name, problem ? problem : dlerror());
    abort();
  }
  return function;
}

// The library's pointer for `name`, looked up once and kept in `*found`.
static void *function_kept(void **found, const char *name) {
  void *function = __atomic_load_n(found, __ATOMIC_ACQUIRE);
  if (!function) {
    function = function_named(name);
    __atomic_store_n(found, function, __ATOMIC_RELEASE);
  }
  return function;
}

#define HIDDEN __attribute__((visibility("hidden")))

// One forwarding function of fixed parameters.
#define FORWARD(result, name, parameters, arguments)                   \
  HIDDEN result name parameters {                                      \
    static void *found;                                                \
    result(*function) parameters = function_kept(&found, #name);       \
    return function arguments;                                         \
  }

typedef void CURL;
typedef void CURLM;
typedef void CURLU;
struct curl_slist;

FORWARD(int, curl_global_init, (long flags), (flags))
FORWARD(CURL *, curl_easy_init, (void), ())
FORWARD(void, curl_easy_cleanup, (CURL * handle), (handle))
FORWARD(int, curl_easy_pause, (CURL * handle, int bitmask), (handle, bitmask))
FORWARD(const char *, curl_easy_strerror, (int code), (code))
FORWARD(void, curl_free, (void *pointer), (pointer))
FORWARD(CURLM *, curl_multi_init, (void), ())
FORWARD(int, curl_multi_cleanup, (CURLM * multi), (multi))
FORWARD(int, curl_multi_add_handle, (CURLM * multi, CURL *handle), (multi, handle))
FORWARD(int, curl_multi_remove_handle, (CURLM * multi, CURL *handle), (multi, handle))
FORWARD(int, curl_multi_assign, (CURLM * multi, int socket, void *pointer), (multi, socket, pointer))
FORWARD(void *, curl_multi_info_read, (CURLM * multi, int *left), (multi, left))
FORWARD(int, curl_multi_socket_action, (CURLM * multi, int socket, int mask, int *running),
        (multi, socket, mask, running))
FORWARD(struct curl_slist *, curl_slist_append, (struct curl_slist * list, const char *text), (list, text))
FORWARD(void, curl_slist_free_all, (struct curl_slist * list), (list))
FORWARD(CURLU *, curl_url, (void), ())
FORWARD(int, curl_url_get, (CURLU * url, int part, char **text, unsigned int flags), (url, part, text, flags))
FORWARD(int, curl_url_set, (CURLU * url, int part, const char *text, unsigned int flags), (url, part, text, flags))
FORWARD(char *, curl_version, (void), ())
FORWARD(void *, curl_version_info, (int age), (age))

// The three variadic functions take one argument after the option, whose type the option's
// number says (curl.h's CURLOPTTYPE_*): below 10000 a long, from 30000 a curl_off_t, else a
// pointer (an object, a function, a blob).
typedef int (*with_long)(void *, int, long);
typedef int (*with_pointer)(void *, int, void *);
typedef int (*with_offset)(void *, int, long long);

static int forward_option(void *function, void *handle, int option, va_list arguments) {
  if (option < 10000) return ((with_long)function)(handle, option, va_arg(arguments, long));
  if (option >= 30000 && option < 40000)
    return ((with_offset)function)(handle, option, va_arg(arguments, long long));
  return ((with_pointer)function)(handle, option, va_arg(arguments, void *));
}

// One forwarding function of an option and its argument.
#define FORWARD_OPTION(name, handle_type)                                                   \
  HIDDEN int name(handle_type *handle, int option, ...) {                                  \
    static void *found;                                                                    \
    va_list arguments;                                                                     \
    va_start(arguments, option);                                                           \
    int code = forward_option(function_kept(&found, #name), handle, option, arguments);    \
    va_end(arguments);                                                                     \
    return code;                                                                           \
  }

FORWARD_OPTION(curl_easy_setopt, CURL)
FORWARD_OPTION(curl_multi_setopt, CURLM)

// Every CURLINFO_* takes a pointer to where the answer goes.
HIDDEN int curl_easy_getinfo(CURL *handle, int info, ...) {
  static void *found;
  va_list arguments;
  va_start(arguments, info);
  void *answer = va_arg(arguments, void *);
  va_end(arguments);
  return ((with_pointer)function_kept(&found, "curl_easy_getinfo"))(handle, info, answer);
}
