/* A program written against the installed name: <pthread.h> and <sched.h> under _GNU_SOURCE,
 * then <fugue/sched.h>. Same checks as pthread_compat.c. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

#include <fugue/sched.h>

#include "pthread_tasks.h"

int main(void) { return run_checks("fugue"); }
