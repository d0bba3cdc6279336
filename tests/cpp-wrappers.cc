// cpp-wrappers.cc - ggml-cpp.h in a C++17 program (built and run by
// tests/check-cpp.sh with -Wall -Wextra -Werror): every smart pointer
// owns one object made through the C API, computes with it, and frees it
// when it goes out of scope (the sanitizer build checks that nothing is
// leaked or freed twice).  Exit status 0 when every check holds.
#include "ggml-cpp.h"
#include "ggml-cpu.h"

#include <cmath>
#include <cstdio>
#include <utility>

static int failures = 0;

static void check(bool cond, const char * what)
{
    std::printf("%s: %s\n", cond ? "ok" : "FAILED", what);
    failures += cond ? 0 : 1;
}

int main()
{
    ggml_init_params ip = { 4 * ggml_tensor_overhead() + ggml_graph_overhead(), nullptr, true };
    ggml_context_ptr ctx(ggml_init(ip));
    check(ctx != nullptr, "ggml_context_ptr holds a context");
    ggml_tensor * a = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F32, 4);
    ggml_tensor * b = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F32, 4);
    ggml_tensor * sum = ggml_add(ctx.get(), a, b);
    ggml_cgraph * graph = ggml_new_graph(ctx.get());
    ggml_build_forward_expand(graph, sum);

    ggml_backend_ptr cpu(ggml_backend_cpu_init());
    check(cpu != nullptr, "ggml_backend_ptr holds the CPU backend");
    ggml_gallocr_ptr galloc(ggml_gallocr_new(ggml_backend_get_default_buffer_type(cpu.get())));
    check(galloc != nullptr && ggml_gallocr_alloc_graph(galloc.get(), graph), "ggml_gallocr_ptr allocates a graph");
    const float x[4] = { 1, 2, 3, 4 }, y[4] = { 0.5f, -2, 10, 0 };
    ggml_backend_tensor_set(a, x, 0, sizeof x);
    ggml_backend_tensor_set(b, y, 0, sizeof y);
    check(ggml_backend_graph_compute(cpu.get(), graph) == GGML_STATUS_SUCCESS, "the graph computes");
    float z[4];
    ggml_backend_tensor_get(sum, z, 0, sizeof z);
    check(z[0] == 1.5f && z[1] == 0 && z[2] == 13 && z[3] == 4, "with the right sums");

    ggml_backend_buffer_ptr buf(ggml_backend_alloc_buffer(cpu.get(), 1024));
    check(buf != nullptr && ggml_backend_buffer_get_size(buf.get()) >= 1024, "ggml_backend_buffer_ptr holds a buffer");
    ggml_backend_buffer_ptr moved = std::move(buf);
    check(buf == nullptr && moved != nullptr, "and moves like a unique_ptr");

    ggml_backend_event_ptr event(ggml_backend_event_new(ggml_backend_get_device(cpu.get())));
    std::printf("# event: %s\n", event ? "the CPU device has events" : "none (the CPU device need not have them)");

    ggml_backend_t backends[1] = { cpu.get() };
    ggml_backend_sched_ptr sched(ggml_backend_sched_new(backends, nullptr, 1, 64, false, true));
    check(sched != nullptr, "ggml_backend_sched_ptr holds a scheduler");

    gguf_context_ptr meta(gguf_init_empty());
    gguf_set_val_str(meta.get(), "general.name", "wrapped");
    check(gguf_get_n_kv(meta.get()) == 1, "gguf_context_ptr holds a GGUF context");

    // the scheduler goes before the backend it uses
    sched.reset();
    return failures == 0 ? 0 : 1;
}
