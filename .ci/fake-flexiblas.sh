#!/bin/sh
# .ci/fake-flexiblas.sh DIR - a stand-in for FlexiBLAS in DIR, for CI on
# Debian, which has no FlexiBLAS: a pkg-config module "flexiblas" whose
# CBLAS is OpenBLAS's, and a libflexiblas.so with the two functions of
# FlexiBLAS's API (flexiblas_api.h) the BLAS plugin calls, the first
# naming its backend FAKE-OPENBLAS.  It lets CI build the plugin with
# --with-flexiblas=yes and check what its description says; it is not
# FlexiBLAS (no backend switching).
set -eu
dir=$1
mkdir -p "$dir/include/flexiblas" "$dir/lib/pkgconfig"
cat > "$dir/include/flexiblas/flexiblas_api.h" <<'END'
/* The functions of FlexiBLAS's API that the BLAS plugin calls. */
#include <stddef.h>
int flexiblas_current_backend(char *name, size_t len);
void flexiblas_set_num_threads(int num);
END
cat > "$dir/fake-flexiblas.c" <<'END'
#include <stdio.h>
#include "flexiblas_api.h"
void openblas_set_num_threads(int num);
int flexiblas_current_backend(char *name, size_t len)
{
    return snprintf(name, len, "FAKE-OPENBLAS");
}
void flexiblas_set_num_threads(int num)
{
    openblas_set_num_threads(num);
}
END
# shellcheck disable=SC2046
cc -shared -fPIC -o "$dir/lib/libflexiblas.so" -I"$dir/include/flexiblas" "$dir/fake-flexiblas.c" \
    $(pkg-config --libs openblas)
cat > "$dir/lib/pkgconfig/flexiblas.pc" <<END
Name: flexiblas
Description: a stand-in for FlexiBLAS (CI of libggml-backend)
Version: 3.3.0
Cflags: -I$dir/include/flexiblas $(pkg-config --cflags openblas)
Libs: -L$dir/lib -lflexiblas $(pkg-config --libs openblas)
END
