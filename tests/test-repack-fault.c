/*
 * test-repack-fault.c - a CPU_REPACK buffer (lib/cpu/repack.c) when
 * memory runs out while a packed tensor is partly written or read.
 *
 * The allocator of tests/fault-alloc.c fails the N-th allocation of one
 * ggml_backend_tensor_set, _memset or _get call covering part of a group
 * of rows, for every N the call makes.  Checked for each N:
 *   - the call logs one error and leaves the tensor as it was (set,
 *     memset), or gives zeros (get);
 *   - nothing allocated during the call is still live;
 *   - the same call with memory available then does its work (the
 *     buffer stays usable).
 * Skipped where the CPU device offers no CPU_REPACK type (no integer
 * tiles at this kernel level).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "fault-alloc.h"
#include "tap.h"

typedef ggml_backend_buffer_type_t *(*extra_bufts_fn)(ggml_backend_dev_t);

enum { K = 64, M = 32 };
enum call { SET, MEMSET, GET };
static const char *const call_names[] = { "ggml_backend_tensor_set", "ggml_backend_tensor_memset",
                                          "ggml_backend_tensor_get" };

static ggml_backend_buffer_type_t find_repack(void)
{
    ggml_backend_dev_t cpu = ggml_backend_reg_dev_get(ggml_backend_cpu_reg(), 0);
    extra_bufts_fn fn = (extra_bufts_fn) ggml_backend_reg_get_proc_address(ggml_backend_cpu_reg(),
                                                                           "ggml_backend_dev_get_extra_bufts");
    for (ggml_backend_buffer_type_t *b = fn != NULL ? fn(cpu) : NULL; b != NULL && *b != NULL; b++)
        if (strcmp(ggml_backend_buft_name(*b), "CPU_REPACK") == 0)
            return *b;
    return NULL;
}

/* One partial call on t: bytes [off, off + len) set from patch, set to 0x33, or read into out. */
static void run_call(enum call c, struct ggml_tensor *t, const unsigned char *patch, unsigned char *out,
                     size_t off, size_t len)
{
    if (c == SET)
        ggml_backend_tensor_set(t, patch, off, len);
    else if (c == MEMSET)
        ggml_backend_tensor_memset(t, 0x33, off, len);
    else
        ggml_backend_tensor_get(t, out + off, off, len);
}

int main(void)
{
    tap_capture_log();
    ggml_backend_buffer_type_t repack = find_repack();
    if (repack == NULL) {
        tap_skip(1, "the CPU device offers no CPU_REPACK at this kernel level");
        return tap_done();
    }
    struct ggml_init_params p = { 4 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context *ctx = ggml_init(p);
    struct ggml_tensor *t = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, K, M);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, repack);
    const size_t n = ggml_nbytes(t), off = 37, len = n / 3;
    unsigned char *want = malloc(n), *got = malloc(n), *patch = malloc(n);
    for (size_t i = 0; i < n; i++) {
        want[i] = (unsigned char) (i * 7 + 3);
        patch[i] = (unsigned char) (i * 13 + 5);
    }
    ggml_backend_tensor_set(t, want, 0, n);
    fault_load_unwinder();

    for (int c = SET; c <= GET; c++) {
        long fail_at = 1;
        bool all_ok = true;
        for (;; fail_at++) {
            tap_log_errors();
            memset(got, 0xee, n);
            fault_arm(fail_at);
            run_call((enum call) c, t, patch, got, off, len);
            const bool fired = fault_fired();
            const long live = fault_live_blocks();
            fault_disarm();
            if (!fired)
                break;
            const int errors = tap_log_errors();
            bool kept = true;
            if (c == GET) {
                for (size_t i = off; i < off + len; i++)
                    kept = kept && got[i] == 0;
            } else {
                ggml_backend_tensor_get(t, got, 0, n);
                kept = memcmp(got, want, n) == 0;
            }
            if (errors != 1 || !kept || live != 0) {
                all_ok = false;
                tap_diag("%s, allocation %ld failed: %d errors, %s, %ld blocks live", call_names[c], fail_at, errors,
                         kept ? "as documented" : "the tensor or the output changed", live);
            }
        }
        ok(all_ok && fail_at > 1, "%s of part of a group: each of its %ld allocations failing logs one error, "
           "changes nothing (zeros read), leaks nothing", call_names[c], fail_at - 1);
        /* and with memory, the call works */
        if (c == SET)
            memcpy(want + off, patch, len);
        else if (c == MEMSET)
            memset(want + off, 0x33, len);
        memset(got, 0, n);
        ggml_backend_tensor_get(t, got, 0, n);
        ok(memcmp(got, want, n) == 0 && tap_log_errors() == 0, "%s then works with memory available",
           call_names[c]);
    }
    free(want);
    free(got);
    free(patch);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    return tap_done();
}
