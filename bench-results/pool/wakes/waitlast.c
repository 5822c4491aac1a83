/* a task spawns K children and busy-waits until ALL of them ran (one waiter, th threads), repeated: relies on the other workers waking up */
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <sched.h>
#include <errno.h>
#include "sched.h"
static atomic_int done;
static void child(void *c, struct scheduler *s) { (void)c; (void)s; atomic_fetch_add(&done, 1); }
static void root(void *c, struct scheduler *s) {
    long k = (long)c; long q = 0;
    for (long i = 0; i < k; i++) { if (sched_spawn(child, NULL, s) == 0) q++; else child(NULL, s); }
    (void)q; while (atomic_load(&done) < k) sched_yield();
}
int main(int argc, char **argv) {
    int th = argc > 1 ? atoi(argv[1]) : 2, iters = argc > 2 ? atoi(argv[2]) : 3000;
    for (int i = 0; i < iters; i++) { atomic_store(&done, 0); long k = 1 + i % 5; if (sched_init(th, 64, root, (void *)k)) return 1; }
    printf("waitlast th=%d x%d OK\n", th, iters); return 0;
}
