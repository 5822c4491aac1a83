/* fugue-pool's C ABI: a pool of threads running tasks that spawn tasks.
 *
 * Include it as <fugue/sched.h> with -I crates/pool/include (or the flags of
 * `pkg-config --cflags fugue-pool`). That folder also holds this header's former name,
 * sched.h, which then stands for the system's <sched.h> in every file compiled with the flag:
 * it includes the system's header, then this one. So a file that includes <sched.h> or
 * <pthread.h> under that flag also declares sched_init, sched_spawn, sched_default_threads,
 * struct scheduler and taskfunc, and cannot use these names for its own.
 * Link with libfugue_pool.so or libfugue_pool.a (with -lpthread -ldl -lm for the static
 * library). The scheduling policy is read from the environment variable FUGUE_POOL_POLICY
 * (lifo-mutex, lifo-spin, steal-mutex, steal-backoff-shared, steal-backoff-local,
 * steal-condvar, steal; blanks around the name are ignored; default steal, also when it is
 * set but empty or blank). See docs/pool.md.
 * Plain C89 (`-std=c89`, `-ansi`) as well as C99 and later, and C++. */
#ifndef FUGUE_POOL_SCHED_H
#define FUGUE_POOL_SCHED_H

#include <unistd.h> /* kept for the programs that got sysconf from it */

#ifdef __cplusplus
extern "C" {
#endif

/* The scheduler a task runs in: pass it to sched_spawn from any of its tasks, and from any
 * other thread while a task of it is still running (a task that waits for that thread, say).
 * Once every task has finished, a spawn from another thread is refused (EINVAL, best
 * effort: such a spawn races sched_init's return, after which the pointer must not be used).
 * sched_init may return at any moment after the last task ends: a thread that may spawn late
 * must be waited for by a task (pthread_join) so that it stops using the pointer before then.
 * A task that blocks (in pthread_join, or waiting for a task it spawned: there is no join)
 * keeps its thread from other tasks: with as many blocked tasks as threads nothing else runs,
 * and a wait for a queued task never ends. So the thread that a task joins must not retry a
 * refused spawn (EAGAIN) for ever, but run the task itself, and a task must not wait for its
 * children unless fewer tasks wait than there are threads. */
struct scheduler;

/* A task: its closure and the scheduler it runs in. It must end by returning: pthread_exit()
 * or a C++ exception that leaves it ends the process, and a longjmp out of it is undefined
 * behaviour (docs/pool.md). A child that fork() makes in a task has no pool: it may call
 * only async-signal-safe functions until it calls exec or _exit. */
typedef void (*taskfunc)(void *, struct scheduler *);

/* The number of threads sched_init starts for nthreads <= 0 from this thread: the cores
 * the calling thread may run on (its CPU affinity, which the pool's threads inherit) within
 * the process's CPU quota rounded up (a quota of 1.5 CPUs gives 2), at least 1. Not the cores online: a process limited to 4 of 64
 * cores (taskset, a container's cpuset or --cpus) gets 4. */
int sched_default_threads(void);

/* Starts a pool of nthreads threads (nthreads <= 0: sched_default_threads(), the cores the
 * calling thread may run on), runs f(closure, s) in it, and returns 0 once every task (f and
 * everything spawned, transitively) has finished; the threads are then stopped. Each queue
 * holds at most qlen pending tasks. Each thread has a stack of 32 MiB (a task that needs more
 * ends the process with SIGSEGV). Several threads may call it at once, and a task may call it
 * (a pool inside a pool): each call has a pool of its own. errno is left unspecified when it
 * returns 0 (reading the CPU quota may set it).
 * Returns -1 with errno set on failure: EINVAL for qlen <= 0, a null f, a thread count above
 * 4096 or not below RLIMIT_NPROC (which counts the calling thread too), or an unknown
 * FUGUE_POOL_POLICY; EAGAIN when the system refuses a thread (each said in one sentence on
 * stderr); EIO if the library itself failed (a bug: it is said on stderr). May be called
 * again after it returned. */
int sched_init(int nthreads, int qlen, taskfunc f, void *closure);

/* Queues f(closure, s) to run in the pool of s. Returns 0, or -1 with errno = EAGAIN when
 * the queue that would take it already holds qlen tasks (the task is not queued: the caller
 * may run it itself), or EINVAL for a null f or s, or when every task of s has finished (a
 * spawn from a thread outside the pool that no running task waits for), or EIO if the
 * library itself failed (a bug, said on stderr). Each of these two
 * EINVAL cases is said on stderr the first time only, in a process: a program that spawns
 * in a loop does not flood it; errno says it every time.
 * A task queued (0 returned) runs before sched_init returns. Each queued task takes about
 * 64 bytes until it runs, and qlen bounds each queue: a queue that cannot get the memory it
 * needs ends the process (abort), as a failed allocation does in Rust; bound the tasks in
 * flight with qlen where memory is short. */
int sched_spawn(taskfunc f, void *closure, struct scheduler *s);

#ifdef __cplusplus
}
#endif

#endif
