/*
 * ggml-backend-impl.h - the interface a backend implements.
 *
 * For authors of backends and plugins, not for applications.  A backend
 * fills the function tables below (C99 designated initializers are
 * recommended) and hands out the wrapping objects; the public functions
 * of ggml-backend.h check their arguments, supply the documented default
 * for every optional member left NULL, and then call the table.
 *
 * A plugin is a shared module exporting ggml_backend_init (and optionally
 * ggml_backend_score), most easily with GGML_BACKEND_DL_IMPL and
 * GGML_BACKEND_DL_SCORE_IMPL.  Its registry's api_version must equal
 * GGML_BACKEND_API_VERSION or the loader rejects it.  See
 * ggml-backend-plugins(7).
 */
#ifndef GGML_BACKEND_IMPL_H
#define GGML_BACKEND_IMPL_H

#include "ggml-backend.h"

#ifdef __cplusplus
extern "C" {
#endif

    /* Version of the structures below; changes whenever any of them does. */
    #define GGML_BACKEND_API_VERSION 2

    /* ------------------------------------------------------ buffer type */

    struct ggml_backend_buffer_type_i {
        /* name of the buffer type, e.g. "CPU" */
        const char *          (*get_name)      (ggml_backend_buffer_type_t buft);
        /* new buffer of size bytes (size may be 0), or NULL on failure */
        ggml_backend_buffer_t (*alloc_buffer)  (ggml_backend_buffer_type_t buft, size_t size);
        /* (optional) alignment required of tensor data in such buffers (defaults to GGML_MEM_ALIGN) */
        size_t                (*get_alignment) (ggml_backend_buffer_type_t buft);
        /* (optional) largest buffer that can be allocated (defaults to SIZE_MAX) */
        size_t                (*get_max_size)  (ggml_backend_buffer_type_t buft);
        /* (optional) bytes a tensor needs, padding included (defaults to ggml_nbytes) */
        size_t                (*get_alloc_size)(ggml_backend_buffer_type_t buft, const struct ggml_tensor * tensor);
        /* (optional) data is host memory in the standard layout (defaults to false) */
        bool                  (*is_host)       (ggml_backend_buffer_type_t buft);
    };

    struct ggml_backend_buffer_type {
        struct ggml_backend_buffer_type_i  iface;   /* implementation */
        ggml_backend_dev_t device;                  /* owning device, or NULL */
        void * context;                             /* backend data */
    };

    /* ----------------------------------------------------------- buffer */

    struct ggml_backend_buffer_i {
        /* (optional) releases the memory and the context (defaults to doing nothing) */
        void         (*free_buffer)  (ggml_backend_buffer_t buffer);
        /* address of the first byte */
        void *       (*get_base)     (ggml_backend_buffer_t buffer);
        /* (optional) prepares a tensor just placed in the buffer (defaults to GGML_STATUS_SUCCESS) */
        enum ggml_status (*init_tensor)(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor);
        /* (optional) sets size bytes of the tensor's data at offset to value (defaults to none: ggml_backend_tensor_memset then fails with a message) */
        void         (*memset_tensor)(ggml_backend_buffer_t buffer,       struct ggml_tensor * tensor,     uint8_t value, size_t offset, size_t size);
        /* copies size bytes from host memory into the tensor at offset */
        void         (*set_tensor)   (ggml_backend_buffer_t buffer,       struct ggml_tensor * tensor, const void * data, size_t offset, size_t size);
        /* copies size bytes of the tensor at offset into host memory */
        void         (*get_tensor)   (ggml_backend_buffer_t buffer, const struct ggml_tensor * tensor,       void * data, size_t offset, size_t size);
        /* (optional) n_copies runs of set_tensor / get_tensor at offset + i * stride_tensor in the tensor and
           data + i * stride_data on the host, n_copies > 1 (defaults to one set_tensor / get_tensor a run) */
        void         (*set_tensor_2d)(ggml_backend_buffer_t buffer,       struct ggml_tensor * tensor, const void * data, size_t offset, size_t size, size_t n_copies, size_t stride_tensor, size_t stride_data);
        void         (*get_tensor_2d)(ggml_backend_buffer_t buffer, const struct ggml_tensor * tensor,       void * data, size_t offset, size_t size, size_t n_copies, size_t stride_tensor, size_t stride_data);
        /* (optional) copies src (any buffer) into dst (this buffer); false if it cannot (defaults to false: the caller copies through host memory) */
        bool         (*cpy_tensor)   (ggml_backend_buffer_t buffer, const struct ggml_tensor * src, struct ggml_tensor * dst);
        /* sets every byte of the buffer to value */
        void         (*clear)        (ggml_backend_buffer_t buffer, uint8_t value);
        /* (optional) drops per-tensor state such as extras (defaults to doing nothing) */
        void         (*reset)        (ggml_backend_buffer_t buffer);
    };

    struct ggml_backend_buffer {
        struct ggml_backend_buffer_i  iface;   /* implementation */
        ggml_backend_buffer_type_t    buft;    /* type it was allocated from */
        void * context;                        /* backend data */
        size_t size;                           /* bytes */
        enum ggml_backend_buffer_usage usage;  /* hint, GGML_BACKEND_BUFFER_USAGE_ANY at first */
    };

    /* Wraps a backend's buffer into a new buffer object of type buft;
     * NULL (logged) when out of memory. */
    GGML_API ggml_backend_buffer_t ggml_backend_buffer_init(
                   ggml_backend_buffer_type_t buft,
            struct ggml_backend_buffer_i      iface,
                   void *                     context,
                   size_t                     size);

    /* Tries dst's buffer cpy_tensor; false when it cannot copy.  Use
     * ggml_backend_tensor_copy instead. */
    GGML_API bool ggml_backend_buffer_copy_tensor(const struct ggml_tensor * src, struct ggml_tensor * dst);

    /* A buffer made of n_buffers buffers (freed with it), for allocations
     * larger than one buffer may be. */
    GGML_API ggml_backend_buffer_t ggml_backend_multi_buffer_alloc_buffer(ggml_backend_buffer_t * buffers, size_t n_buffers);
    /* True when buffer was made by ggml_backend_multi_buffer_alloc_buffer. */
    GGML_API bool                  ggml_backend_buffer_is_multi_buffer(ggml_backend_buffer_t buffer);
    /* Sets the usage of a multi-buffer and of each buffer in it. */
    GGML_API void                  ggml_backend_multi_buffer_set_usage(ggml_backend_buffer_t buffer, enum ggml_backend_buffer_usage usage);

    /* --------------------------------------------------- backend (stream) */

    struct ggml_backend_i {
        /* name of the backend, e.g. "CPU" */
        const char * (*get_name)(ggml_backend_t backend);

        /* releases the backend and its context (pending work finished first) */
        void (*free)(ggml_backend_t backend);

        /* (optional) queues a host-to-tensor copy (defaults to a blocking ggml_backend_tensor_set) */
        void (*set_tensor_async)(ggml_backend_t backend,       struct ggml_tensor * tensor, const void * data, size_t offset, size_t size);
        /* (optional) queues a tensor-to-host copy (defaults to a blocking ggml_backend_tensor_get) */
        void (*get_tensor_async)(ggml_backend_t backend, const struct ggml_tensor * tensor,       void * data, size_t offset, size_t size);
        /* (optional) the queued forms of the buffer's set_tensor_2d / get_tensor_2d (defaults to one
           set_tensor_async / get_tensor_async a run) */
        void (*set_tensor_2d_async)(ggml_backend_t backend,       struct ggml_tensor * tensor, const void * data, size_t offset, size_t size, size_t n_copies, size_t stride_tensor, size_t stride_data);
        void (*get_tensor_2d_async)(ggml_backend_t backend, const struct ggml_tensor * tensor,       void * data, size_t offset, size_t size, size_t n_copies, size_t stride_tensor, size_t stride_data);
        /* (optional) queues a copy between backends; false if it cannot (defaults to false: synchronize and copy) */
        bool (*cpy_tensor_async)(ggml_backend_t backend_src, ggml_backend_t backend_dst, const struct ggml_tensor * src, struct ggml_tensor * dst);

        /* (optional) waits for all queued work; required with any async member (defaults to doing nothing) */
        void (*synchronize)(ggml_backend_t backend);

        /* (optional) prepares a reusable plan for a graph (defaults to NULL: plans unsupported) */
        ggml_backend_graph_plan_t (*graph_plan_create) (ggml_backend_t backend, const struct ggml_cgraph * cgraph);
        /* (optional) frees a plan; required with graph_plan_create (defaults to doing nothing) */
        void                      (*graph_plan_free)   (ggml_backend_t backend, ggml_backend_graph_plan_t plan);
        /* (optional) points a plan at a graph of the same topology (defaults to free and create) */
        void                      (*graph_plan_update) (ggml_backend_t backend, ggml_backend_graph_plan_t plan, const struct ggml_cgraph * cgraph);
        /* (optional) computes a plan; required with graph_plan_create (defaults to GGML_STATUS_FAILED) */
        enum ggml_status          (*graph_plan_compute)(ggml_backend_t backend, ggml_backend_graph_plan_t plan);

        /* computes a graph, asynchronously when the backend can */
        enum ggml_status          (*graph_compute)     (ggml_backend_t backend, struct ggml_cgraph * cgraph);

        /* (optional) records event at the end of this stream; required with device events (defaults to doing nothing) */
        void (*event_record)(ggml_backend_t backend, ggml_backend_event_t event);
        /* (optional) makes this stream wait for event; required with device events (defaults to synchronizing the event) */
        void (*event_wait)  (ggml_backend_t backend, ggml_backend_event_t event);

        /* (optional) reorders the nodes of a graph before computing it (defaults to leaving it unchanged) */
        void                      (*graph_optimize)    (ggml_backend_t backend, struct ggml_cgraph * cgraph);
    };

    struct ggml_backend {
        ggml_guid_t guid;                /* identifies the implementation */
        struct ggml_backend_i iface;     /* implementation */
        ggml_backend_dev_t device;       /* device it runs on */
        void * context;                  /* backend data */
    };

    struct ggml_backend_event {
        struct ggml_backend_device * device; /* device that made the event */
        void * context;                      /* backend data */
    };

    /* ----------------------------------------------------------- device */

    struct ggml_backend_device_i {
        /* short identifier, e.g. "CPU" or "CUDA0" */
        const char * (*get_name)(ggml_backend_dev_t dev);

        /* human-readable description, e.g. the model name */
        const char * (*get_description)(ggml_backend_dev_t dev);

        /* free and total memory in bytes */
        void         (*get_memory)(ggml_backend_dev_t dev, size_t * free, size_t * total);

        /* kind of device */
        enum ggml_backend_dev_type (*get_type)(ggml_backend_dev_t dev);

        /* fills every field of *props */
        void (*get_props)(ggml_backend_dev_t dev, struct ggml_backend_dev_props * props);

        /* new backend (stream) on the device; params may be NULL */
        ggml_backend_t (*init_backend)(ggml_backend_dev_t dev, const char * params);

        /* preferred buffer type */
        ggml_backend_buffer_type_t (*get_buffer_type)(ggml_backend_dev_t dev);

        /* (optional) pinned host buffer type for fast transfers (defaults to NULL) */
        ggml_backend_buffer_type_t (*get_host_buffer_type)(ggml_backend_dev_t dev);

        /* (optional) buffer wrapping host memory, e.g. a mapped model file (defaults to NULL) */
        ggml_backend_buffer_t (*buffer_from_host_ptr)(ggml_backend_dev_t dev, void * ptr, size_t size, size_t max_tensor_size);

        /* true when the device can compute the node */
        bool (*supports_op)(ggml_backend_dev_t dev, const struct ggml_tensor * op);

        /* true when the device can use tensors in buffers of type buft */
        bool (*supports_buft)(ggml_backend_dev_t dev, ggml_backend_buffer_type_t buft);

        /* (optional) true for costly nodes worth running here although their weights are elsewhere (defaults to false) */
        bool (*offload_op)(ggml_backend_dev_t dev, const struct ggml_tensor * op);

        /* (optional) new event; set with event_free and event_synchronize (defaults to NULL: no events) */
        ggml_backend_event_t (*event_new)         (ggml_backend_dev_t dev);
        /* (optional) frees an event (defaults to doing nothing) */
        void                 (*event_free)        (ggml_backend_dev_t dev, ggml_backend_event_t event);
        /* (optional) blocks until the event's point is reached (defaults to doing nothing) */
        void                 (*event_synchronize) (ggml_backend_dev_t dev, ggml_backend_event_t event);
    };

    struct ggml_backend_device {
        struct ggml_backend_device_i iface;  /* implementation */
        ggml_backend_reg_t reg;              /* registry providing the device */
        void * context;                      /* backend data */
    };

    /* --------------------------------------------------------- registry */

    struct ggml_backend_reg_i {
        /* name of the backend family, e.g. "CUDA" */
        const char * (*get_name)(ggml_backend_reg_t reg);

        /* number of devices */
        size_t             (*get_device_count)(ggml_backend_reg_t reg);
        /* device index, 0 <= index < get_device_count */
        ggml_backend_dev_t (*get_device)(ggml_backend_reg_t reg, size_t index);

        /* (optional) address of a backend-specific function by name (defaults to NULL) */
        void * (*get_proc_address)(ggml_backend_reg_t reg, const char * name);
    };

    struct ggml_backend_reg {
        int api_version;                /* GGML_BACKEND_API_VERSION */
        struct ggml_backend_reg_i iface; /* implementation */
        void * context;                  /* backend data */
    };

    /* Makes a backend that a plugin's own function created (not through
     * init_backend) known to the library; returns it, or NULL after freeing
     * it when it cannot be recorded.  A libggml-backend extension. */
    GGML_API ggml_backend_t ggml_backend_publish(ggml_backend_t backend);

    /* ------------------------------------------------- plugin entry points */

    /* ggml_backend_init: returns the plugin's registry, or NULL when it
     * cannot run here. */
    typedef ggml_backend_reg_t (*ggml_backend_init_t)(void);
    /* ggml_backend_score (optional): 0 when the plugin cannot run on this
     * system, else a preference (the highest of same-named plugins wins). */
    typedef int                (*ggml_backend_score_t)(void);

/*
 * GGML_BACKEND_DL_IMPL(reg_fn) defines the exported ggml_backend_init of a
 * plugin as a call to reg_fn; GGML_BACKEND_DL_SCORE_IMPL(score_fn) likewise
 * defines ggml_backend_score.  Both expand to nothing unless GGML_BACKEND_DL
 * is defined, so a backend's source builds either built in or as a plugin.
 * Use them once, at file scope.
 */
#ifdef GGML_BACKEND_DL
#    ifdef __cplusplus
#        define GGML_BACKEND_DL_IMPL(reg_fn)                                  \
            extern "C" {                                                      \
            GGML_BACKEND_API ggml_backend_reg_t ggml_backend_init(void);      \
            }                                                                 \
            ggml_backend_reg_t ggml_backend_init(void) { return reg_fn(); }
#        define GGML_BACKEND_DL_SCORE_IMPL(score_fn)                          \
            extern "C" {                                                      \
            GGML_BACKEND_API int ggml_backend_score(void);                    \
            }                                                                 \
            int ggml_backend_score(void) { return score_fn(); }
#    else
#        define GGML_BACKEND_DL_IMPL(reg_fn)                                  \
            GGML_BACKEND_API ggml_backend_reg_t ggml_backend_init(void);      \
            ggml_backend_reg_t ggml_backend_init(void) { return reg_fn(); }
#        define GGML_BACKEND_DL_SCORE_IMPL(score_fn)                          \
            GGML_BACKEND_API int ggml_backend_score(void);                    \
            int ggml_backend_score(void) { return score_fn(); }
#    endif
#else
#    define GGML_BACKEND_DL_IMPL(reg_fn)
#    define GGML_BACKEND_DL_SCORE_IMPL(score_fn)
#endif

#ifdef __cplusplus
}
#endif

#endif /* GGML_BACKEND_IMPL_H */
