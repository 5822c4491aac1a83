/* The C ABI's edge cases: errors and their errno, a full queue, a spawn from a thread that the
 * pool did not start, and sched_init called again. Exits 0 when every check passed; prints the
 * failed check and exits 1 otherwise. The policy comes from FUGUE_POOL_POLICY. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "sched.h"

static atomic_int ran;
static int failures;

#define CHECK(cond)                                                                         \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            fprintf(stderr, "check failed at line %d: %s\n", __LINE__, #cond);             \
            failures++;                                                                     \
        }                                                                                   \
    } while (0)

static void count(void *closure, struct scheduler *s) {
    (void)closure;
    (void)s;
    atomic_fetch_add(&ran, 1);
}

/* With one thread and qlen 1: the first spawn is queued, the second finds the queue full. */
static void fill(void *closure, struct scheduler *s) {
    int *results = closure;
    results[0] = sched_spawn(count, NULL, s);
    errno = 0;
    results[1] = sched_spawn(count, NULL, s);
    results[2] = errno;
}

static void *spawner_thread(void *s) {
    for (int i = 0; i < 100; i++) {
        while (sched_spawn(count, NULL, s) < 0) {
            /* full queue: wait for the pool */
        }
    }
    return NULL;
}

/* A task that starts a thread of its own which spawns into the pool. */
static void from_other_thread(void *closure, struct scheduler *s) {
    (void)closure;
    pthread_t t;
    if (pthread_create(&t, NULL, spawner_thread, s) != 0) {
        failures++;
        return;
    }
    pthread_join(t, NULL);
}

static void fan_out(void *closure, struct scheduler *s) {
    long depth = (long)closure;
    atomic_fetch_add(&ran, 1);
    if (depth > 0) {
        for (int i = 0; i < 2; i++) {
            if (sched_spawn(fan_out, (void *)(depth - 1), s) < 0) {
                fan_out((void *)(depth - 1), s); /* full queue: run it here */
            }
        }
    }
}

int main(void) {
    errno = 0;
    CHECK(sched_init(2, 0, count, NULL) == -1 && errno == EINVAL);
    errno = 0;
    CHECK(sched_init(2, -5, count, NULL) == -1 && errno == EINVAL);
    errno = 0;
    CHECK(sched_init(5000, 16, count, NULL) == -1 && errno == EINVAL);
    errno = 0;
    CHECK(sched_init(2, 16, NULL, NULL) == -1 && errno == EINVAL);
    CHECK(sched_default_threads() >= 1);

    int results[3] = {7, 7, 7};
    atomic_store(&ran, 0);
    CHECK(sched_init(1, 1, fill, results) == 0);
    CHECK(results[0] == 0);
    CHECK(results[1] == -1 && results[2] == EAGAIN);
    CHECK(atomic_load(&ran) == 1);

    atomic_store(&ran, 0);
    CHECK(sched_init(2, 8, from_other_thread, NULL) == 0);
    CHECK(atomic_load(&ran) == 100);

    /* sched_init again, several times, with the default thread count. */
    for (int round = 0; round < 3; round++) {
        atomic_store(&ran, 0);
        CHECK(sched_init(0, 64, fan_out, (void *)12L) == 0);
        CHECK(atomic_load(&ran) == (1 << 13) - 1);
    }
    if (failures) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    return 0;
}
