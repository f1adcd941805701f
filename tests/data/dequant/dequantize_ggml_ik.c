/* dequantize_ggml.c for ik_llama.cpp, whose ggml names the traits getter differently
 * (ggml_internal_get_type_traits, returning the struct):
 *   dequantize_ggml_ik TYPE_NAME IN.blocks OUT.f32
 * Built against an ik_llama.cpp build (see make_reference_ik.sh); not part of PagedChat's build. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  struct ggml_init_params params = {1 << 20, NULL, false};
  struct ggml_context* ctx = ggml_init(params);
  int type = -1;
  for (int t = 0; t < GGML_TYPE_COUNT; ++t) {
    const ggml_type_traits_t tr = ggml_internal_get_type_traits((enum ggml_type)t);
    if (tr.type_name && strcmp(tr.type_name, argv[1]) == 0) type = t;
  }
  if (type < 0) return 3;
  const ggml_type_traits_t tr = ggml_internal_get_type_traits((enum ggml_type)type);
  FILE* f = fopen(argv[2], "rb");
  if (!f) return 4;
  fseek(f, 0, SEEK_END);
  const long bytes = ftell(f);
  fseek(f, 0, SEEK_SET);
  void* src = malloc(bytes);
  if (fread(src, 1, bytes, f) != (size_t)bytes) return 5;
  fclose(f);
  const long n = bytes / (long)tr.type_size * tr.blck_size;
  float* dst = malloc(sizeof(float) * n);
  tr.to_float(src, dst, n);
  f = fopen(argv[3], "wb");
  fwrite(dst, sizeof(float), n, f);
  fclose(f);
  ggml_free(ctx);
  return 0;
}
