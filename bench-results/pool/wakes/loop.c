/* sched_init called repeatedly (the API's init/finalize cycle), with work each time; checks results and leaks */
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <errno.h>
#include "sched.h"
static atomic_long cnt;
static void leaf(void *c, struct scheduler *s) { (void)c; (void)s; atomic_fetch_add(&cnt, 1); }
static void root(void *c, struct scheduler *s) { long n = (long)c; for (long i = 0; i < n; i++) if (sched_spawn(leaf, NULL, s)) { if (errno != EAGAIN) abort(); leaf(NULL, s); } }
int main(int argc, char **argv) {
    int iters = argc > 1 ? atoi(argv[1]) : 1000, th = argc > 2 ? atoi(argv[2]) : 2; long n = argc > 3 ? atol(argv[3]) : 100;
    for (int i = 0; i < iters; i++) {
        atomic_store(&cnt, 0);
        int r = sched_init(th, 1024, root, (void *)n);
        if (r || cnt != n) { printf("iter %d: r=%d cnt=%ld\n", i, r, (long)cnt); return 1; }
    }
    printf("loop %d x sched_init(%d): OK\n", iters, th); return 0;
}
