/*
 * cpu-private.h - internal declarations of the CPU backend.
 *
 * Not installed.  Include after config.h and ggml-impl.h.
 */
#ifndef GGML_BACKEND_CPU_PRIVATE_H
#define GGML_BACKEND_CPU_PRIVATE_H

#include <stdbool.h>

#include "ggml-cpu.h"

/* ------------------------------------------------------------ thread pool */

/*
 * A job: fn runs once on each of nth threads with ith = 0..nth-1; thread 0
 * is the caller of ggml__threadpool_run.  Inside fn, threads of the same job
 * may meet at ggml__threadpool_barrier.
 */
typedef void (*ggml__job_fn)(void *arg, int ith, int nth);

/*
 * Runs fn on n_threads threads of the pool (1 <= n_threads <= the pool's
 * size) and returns when every one has returned.  Resumes a paused pool.
 * Jobs of one pool must not overlap: the caller serialises them.
 */
void ggml__threadpool_run(struct ggml_threadpool *pool, int n_threads, ggml__job_fn fn, void *arg);

/* Blocks until all threads of the current job have reached it. */
void ggml__threadpool_barrier(struct ggml_threadpool *pool);

/* Number of physical cores the process may run on (at least 1). */
int ggml__cpu_physical_cores(void);

#endif
