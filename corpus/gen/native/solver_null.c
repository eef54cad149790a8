/* SPDX-License-Identifier: MIT */
/* sparse solver with a NULL row pointer: SIGSEGV */
#include <stdio.h>
#include <stdlib.h>
struct row { int n; double *v; };
int main(int argc, char **argv) {
    int rows = argc > 1 ? atoi(argv[1]) : 64;
    struct row *m = calloc(rows, sizeof *m);
    for (int i = 0; i < rows - 1; i++) { m[i].n = 4; m[i].v = calloc(4, sizeof(double)); }
    double acc = 0;
    for (int it = 0; it < 5; it++) {
        printf("[solver] iteration %d residual %.6e\n", it, 1.0 / (1 << (3 * it)));
        fflush(stdout);
    }
    for (int i = 0; i < rows; i++) acc += m[i].v[0];
    printf("sum %f\n", acc);
    return 0;
}
