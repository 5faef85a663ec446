// libbz2: .bz2 data files decompressed as they are read.
#include <bzlib.h>
