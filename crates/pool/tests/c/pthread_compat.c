/* A program written against the old header name: <pthread.h> under _GNU_SOURCE (which needs the
 * system's cpu_set_t from <sched.h>), then "sched.h". Sums 1..N with tasks that spawn tasks and
 * uses the system's affinity calls; prints "sum N" and exits 0 when both work. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "sched.h"

#include "pthread_tasks.h"

int main(void) { return run_checks("compat"); }
