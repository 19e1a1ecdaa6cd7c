/*
 * libmaxminddb reference for `npm run bench` (group geo): looks up the addresses of a binary file
 * (4 bytes per IPv4 address or 16 per IPv6, network order) with MMDB_lookup_sockaddr (the tree
 * walk: entry and netmask, like gslbd's id and prefix; no record decoding) again and again for at
 * least SECONDS of wall time, and prints "lookups cpu-seconds found netmask-sum" (CPU time of the
 * process, so time descheduled by other work on a shared core does not count).
 *
 *   cc -O2 -o mmdb-harness mmdbHarness.c -lmaxminddb
 *   mmdb-harness DB.mmdb 4|6 ADDRESSES.bin SECONDS
 */
#include <arpa/inet.h>
#include <maxminddb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s DB.mmdb 4|6 ADDRESSES.bin SECONDS\n", argv[0]);
    return 2;
  }
  MMDB_s db;
  int status = MMDB_open(argv[1], MMDB_MODE_MMAP, &db);
  if (status != MMDB_SUCCESS) {
    fprintf(stderr, "%s: %s\n", argv[1], MMDB_strerror(status));
    return 1;
  }
  const int family = atoi(argv[2]);
  const size_t width = family == 4 ? 4 : 16;
  FILE *f = fopen(argv[3], "rb");
  if (f == NULL) {
    perror(argv[3]);
    return 1;
  }
  fseek(f, 0, SEEK_END);
  const size_t bytes = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *data = malloc(bytes);
  if (data == NULL || fread(data, 1, bytes, f) != bytes) {
    fprintf(stderr, "%s: read failed\n", argv[3]);
    return 1;
  }
  fclose(f);
  const size_t n = bytes / width;
  struct sockaddr_in *v4 = calloc(n, sizeof *v4);
  struct sockaddr_in6 *v6 = calloc(n, sizeof *v6);
  for (size_t i = 0; i < n; i++) {
    v4[i].sin_family = AF_INET;
    v6[i].sin6_family = AF_INET6;
    if (family == 4) memcpy(&v4[i].sin_addr, data + 4 * i, 4);
    else memcpy(&v6[i].sin6_addr, data + 16 * i, 16);
  }
  const double seconds = atof(argv[4]);
  unsigned long long lookups = 0, found = 0, netmask_sum = 0;
  const double start = now(CLOCK_MONOTONIC);
  const double cpu_start = now(CLOCK_PROCESS_CPUTIME_ID);
  do {
    for (size_t i = 0; i < n; i++) {
      int err = 0;
      const struct sockaddr *sa = family == 4 ? (const struct sockaddr *)&v4[i] : (const struct sockaddr *)&v6[i];
      MMDB_lookup_result_s r = MMDB_lookup_sockaddr(&db, sa, &err);
      found += r.found_entry;
      netmask_sum += r.netmask;
    }
    lookups += n;
  } while (now(CLOCK_MONOTONIC) - start < seconds);
  printf("%llu %.6f %llu %llu\n", lookups, now(CLOCK_PROCESS_CPUTIME_ID) - cpu_start, found, netmask_sum);
  MMDB_close(&db);
  return 0;
}
