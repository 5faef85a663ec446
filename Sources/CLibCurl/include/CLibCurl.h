// libcurl's entry points for FoundationNetworking, which dsh links statically: the library is
// opened when the web is first read (see lazy_libcurl.c).
#ifndef CLIBCURL_H
#define CLIBCURL_H

/// Opens libcurl if it is not open yet. NULL once it is open, else what the loader said.
const char *dsh_libcurl_open(void);

#endif
