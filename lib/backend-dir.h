#define GGML_BACKEND_DIR "/usr/local/lib/ggml-backend/backends0"
