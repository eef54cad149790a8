/* SPDX-License-Identifier: MIT */
/* frees a batch buffer twice: glibc aborts */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) {
    char *buf = malloc(128);
    strcpy(buf, "batch");
    printf("collate: packed 64 samples into %zu bytes\n", strlen(buf));
    fflush(stdout);
    free(buf);
    free(buf);
    return 0;
}
