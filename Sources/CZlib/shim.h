// zlib: gzip and zip files inflated as they are read, and the PNG pictures the tests read.
#include <zlib.h>
