/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unix sockets by path: the address, checked for length once, and a
 * connection. Shared by the pool's server and client and the audit
 * daemon and its clients. */
#pragma once
#include <sys/un.h>

/* sa for path: 0, or -1 with errno ENAMETOOLONG when path and its NUL do
 * not fit in sun_path (107 bytes and the NUL on Linux). */
int rf_unix_addr(const char *path, struct sockaddr_un *sa);
/* A close-on-exec socket of type (SOCK_SEQPACKET, SOCK_STREAM) connected
 * to path: the descriptor, or -1 with errno (the socket closed). */
int rf_unix_connect(const char *path, int type);
