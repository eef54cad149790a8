/* SPDX-License-Identifier: MIT */
/* copies a record into a fixed stack buffer without bounds check */
#include <stdio.h>
#include <string.h>
static void parse(const char *s) {
    char name[16];
    strcpy(name, s);
    printf("parsed record '%.8s...'\n", name);
    fflush(stdout);
}
int main(void) {
    parse("short");
    parse("a_very_long_record_name_that_does_not_fit_in_the_buffer_at_all");
    return 0;
}
