#include <fugue/sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static void leaf(void *c, struct scheduler *s) { (void)c; (void)s; }
static void root(void *c, struct scheduler *s) {
    int n = *(int *)c;
    for (int i = 0; i < n; i++) sched_spawn(leaf, NULL, s);
}
int main(int argc, char **argv) {
    int threads = atoi(argv[1]), n = atoi(argv[2]);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int rc = sched_init(threads, 1000, root, &n);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("threads %d tasks %d rc %d: %.3f s\n", threads, n, rc, (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
    return 0;
}
