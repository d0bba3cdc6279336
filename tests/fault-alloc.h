/*
 * fault-alloc.h - an allocator that fails the N-th allocation of a process,
 * for tests/test-fault.c.
 *
 * tests/fault-alloc.c defines malloc, calloc, realloc, reallocarray, free,
 * posix_memalign, aligned_alloc, memalign, valloc, pvalloc, strdup,
 * strndup, mmap, mmap64, munmap and pthread_create in the test program, so
 * every library of the process (libggml-backend, hwloc, libc itself)
 * allocates through them.  While armed, each call that allocates is one
 * event, numbered from 1; the event numbered fail_at returns what the real
 * function returns when memory is short (NULL / ENOMEM / MAP_FAILED /
 * EAGAIN) and every other event succeeds.  Only the arming thread and the
 * threads it and they create count (from their start routine on).  Blocks
 * and mappings made while armed are remembered until they are freed, so
 * what a run leaves behind can be counted after it.
 */
#ifndef GGML_BACKEND_TESTS_FAULT_ALLOC_H
#define GGML_BACKEND_TESTS_FAULT_ALLOC_H

/* FAULT_ASAN: built with AddressSanitizer (GCC says so with
 * __SANITIZE_ADDRESS__, clang with __has_feature). */
#if defined(__SANITIZE_ADDRESS__)
#    define FAULT_ASAN 1
#elif defined(__has_feature)
#    if __has_feature(address_sanitizer)
#        define FAULT_ASAN 1
#    endif
#endif

#include <stdbool.h>
#include <stddef.h>

/* The frames recorded where the injected failure happened. */
#define FAULT_MAX_FRAMES 24

/* Loads the unwinder that records where a failure happened (backtrace
 * dlopens it on first use), with LeakSanitizer off where built in;
 * fault_arm calls it, a program that forks may call it once first. */
void fault_load_unwinder(void);
/* Starts counting events; the fail_at-th fails (0: none does). */
void fault_arm(long fail_at);
/* Stops counting; later calls go straight to the real functions. */
void fault_disarm(void);
/* Events counted since fault_arm. */
long fault_events(void);
/* Whether the event numbered fail_at happened (and failed). */
bool fault_fired(void);
/* Blocks and mappings made while armed and not freed yet, and their bytes. */
long fault_live_blocks(void);
size_t fault_live_bytes(void);
/* The return addresses recorded where the failure was injected; their
 * number (0 when it has not fired). */
int fault_frames(void **frames, int max);

#endif
