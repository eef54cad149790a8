/* SPDX-License-Identifier: MIT */
/* frees a misaligned pointer into a block: glibc aborts */
#include <stdio.h>
#include <stdlib.h>
int main(void) {
    float *w = malloc(64 * sizeof(float));
    for (int i = 0; i < 64; i++) w[i] = i * 0.5f;
    printf("loaded 64 weights, w[63]=%.1f\n", w[63]);
    fflush(stdout);
    free((char *)w + 8);
    return 0;
}
