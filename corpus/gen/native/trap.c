/* SPDX-License-Identifier: MIT */
/* unreachable branch compiled to ud2: SIGILL */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    int mode = argc > 1 ? atoi(argv[1]) : 3;
    printf("kernel dispatch: mode %d\n", mode); fflush(stdout);
    switch (mode) { case 0: case 1: case 2: puts("ok"); break; default: __builtin_trap(); }
    return 0;
}
