// zlib, for the tests that read the PNG pictures a browser draws.
#include <zlib.h>
