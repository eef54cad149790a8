/* SPDX-License-Identifier: MIT */
/* maps a shard file, the file is truncated underneath: SIGBUS */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
int main(int argc, char **argv) {
    const char *p = argc > 1 ? argv[1] : "shard.bin";
    int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
    ftruncate(fd, 1 << 20);
    unsigned char *m = mmap(0, 1 << 20, PROT_READ, MAP_SHARED, fd, 0);
    printf("mapped %s (1048576 bytes)\n", p); fflush(stdout);
    ftruncate(fd, 4096);
    long s = 0;
    for (int i = 0; i < (1 << 20); i += 4096) s += m[i];
    printf("checksum %ld\n", s);
    return 0;
}
