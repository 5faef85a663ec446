// zstd's streaming buffers, as zstd.h declares them (stable since zstd 1.0). dsh opens the
// system's libzstd.so.1 when it first reads a .zst file, rather than linking it: the library is
// on every Debian machine (dpkg and apt need it), its headers (libzstd-dev) are not.
#include <stddef.h>

typedef struct {
  const void *src;
  size_t size;
  size_t pos;
} dsh_zstd_in;

typedef struct {
  void *dst;
  size_t size;
  size_t pos;
} dsh_zstd_out;
