/*
** cuda/plugin_info.c: prints what a backend plugin is, without starting it.
**
**   plugin_info PLUGIN.so
**       dlopens the plugin and prints the description its entry point
**       returns (engine/plugin.h), one key=value a line: abi, version,
**       cuda_major, cuda_runtime, archs.  init is never called; the last
**       line, driver_loaded, says whether the CUDA driver (libcuda.so.1) is
**       in the process afterwards (it must not be).
**   plugin_info --expected
**       the abi and version this build of dyng accepts (engine/backend.h,
**       config.h).
**   plugin_info --device-code PLUGIN.so
**       the device code in the plugin's .nv_fatbin section, one a line:
**       sm_XX for each SASS image, compute_XX for each PTX one.
**
** cuda/test_plugin_build.sh compares these with what configure asked for.
**
** How --device-code works: nvcc puts each object's fat binary into the ELF
** section .nv_fatbin, and the linker concatenates them (8-byte aligned).  A
** fat binary is a 16-byte header (magic 0xBA55ED50, version, header size,
** size of what follows) and then entries, each a header (kind: 1 PTX,
** 2 ELF; its header size; its payload size; the arch at offset 28) and a
** payload, which may be compressed and is not read.  The reader assumes a
** little-endian host, as every CUDA host is.
*/
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backend.h"
#include "engine/plugin.h"

#define FATBIN_MAGIC 0xBA55ED50u
#define FATBIN_KIND_PTX 1
#define FATBIN_KIND_ELF 2

static uint16_t get16(const unsigned char *p) {
  uint16_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
static uint32_t get32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
static uint64_t get64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* Reads the whole file; the buffer is new (caller frees), NULL on error. */
static unsigned char *read_file(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  unsigned char *buf = NULL;
  long len = -1;
  if (fseek(f, 0, SEEK_END) == 0) len = ftell(f);
  if (len > 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)len)) &&
      fread(buf, 1, (size_t)len, f) != (size_t)len) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *n = len > 0 ? (size_t)len : 0;
  return buf;
}

/* Finds section `name` of the ELF64 image img[0 .. n); 0 if absent. */
static int find_section(const unsigned char *img, size_t n, const char *name, size_t *off,
                        size_t *size) {
  Elf64_Ehdr eh;
  if (n < sizeof eh) return 0;
  memcpy(&eh, img, sizeof eh);
  if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64) return 0;
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum ||
      eh.e_shoff > n || (size_t)eh.e_shnum * sizeof(Elf64_Shdr) > n - eh.e_shoff)
    return 0;
  Elf64_Shdr strtab;
  memcpy(&strtab, img + eh.e_shoff + (size_t)eh.e_shstrndx * sizeof(Elf64_Shdr), sizeof strtab);
  for (size_t i = 0; i < eh.e_shnum; i++) {
    Elf64_Shdr sh;
    memcpy(&sh, img + eh.e_shoff + i * sizeof sh, sizeof sh);
    size_t name_off = (size_t)strtab.sh_offset + sh.sh_name;
    if (name_off >= n || strncmp((const char *)img + name_off, name, n - name_off) != 0) continue;
    if (sh.sh_offset > n || sh.sh_size > n - sh.sh_offset) return 0;
    *off = sh.sh_offset;
    *size = sh.sh_size;
    return 1;
  }
  return 0;
}

/* Prints the images of the fat binaries in sec[0 .. n).  Returns 0, or 1
** (with a message) when the section is not a sequence of fat binaries. */
static int list_fatbins(const unsigned char *sec, size_t n) {
  size_t pos = 0;
  while (pos + 16 <= n) {
    uint32_t magic = get32(sec + pos);
    if (magic == 0) { /* alignment padding between two objects' fat binaries */
      pos += 4;
      continue;
    }
    uint16_t header = get16(sec + pos + 6);
    uint64_t body = get64(sec + pos + 8);
    if (magic != FATBIN_MAGIC || header < 16 || body > n - pos - header) {
      fprintf(stderr, "plugin_info: .nv_fatbin: no fat binary at offset %zu\n", pos);
      return 1;
    }
    size_t entry = pos + header, end = entry + body;
    while (entry + 32 <= end) {
      uint16_t kind = get16(sec + entry);
      uint32_t entry_header = get32(sec + entry + 4);
      uint64_t payload = get64(sec + entry + 8);
      uint32_t arch = get32(sec + entry + 28);
      if (entry_header < 32 || payload > end - entry - entry_header) {
        fprintf(stderr, "plugin_info: .nv_fatbin: bad entry at offset %zu\n", entry);
        return 1;
      }
      if (kind == FATBIN_KIND_ELF)
        printf("sm_%u\n", arch);
      else if (kind == FATBIN_KIND_PTX)
        printf("compute_%u\n", arch);
      else
        printf("kind%u_%u\n", kind, arch);
      entry += entry_header + payload;
    }
    pos = end;
  }
  return 0;
}

static int device_code(const char *path) {
  size_t n = 0, off = 0, size = 0;
  unsigned char *img = read_file(path, &n);
  if (!img) {
    fprintf(stderr, "plugin_info: cannot read %s\n", path);
    return 1;
  }
  int rc = 0;
  if (!find_section(img, n, ".nv_fatbin", &off, &size)) {
    fprintf(stderr, "plugin_info: %s has no .nv_fatbin section\n", path);
    rc = 1;
  } else {
    rc = list_fatbins(img + off, size);
  }
  free(img);
  return rc;
}

static int description(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "plugin_info: %s\n", dlerror());
    return 1;
  }
  dyng_plugin_entry_fn entry = (dyng_plugin_entry_fn)dlsym(h, DYNG_PLUGIN_ENTRY);
  if (!entry) {
    fprintf(stderr, "plugin_info: %s has no %s\n", path, DYNG_PLUGIN_ENTRY);
    return 1;
  }
  const dyng_plugin *p = entry();
  if (!p) {
    fprintf(stderr, "plugin_info: %s() returned NULL\n", DYNG_PLUGIN_ENTRY);
    return 1;
  }
  printf("abi=%d\n", p->abi);
  printf("version=%s\n", p->version ? p->version : "(null)");
  printf("cuda_major=%d\n", p->cuda_major);
  printf("cuda_runtime=%d\n", p->cuda_runtime);
  printf("archs=%s\n", p->archs ? p->archs : "(null)");
  printf("init=%s\n", p->init ? "yes" : "no");
  printf("backend=%s\n", p->backend ? "yes" : "no");
  printf("driver_loaded=%s\n", dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD) ? "yes" : "no");
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--expected") == 0) {
    printf("abi=%d\nversion=%s\n", DYNG_BACKEND_ABI, PACKAGE_VERSION);
    return 0;
  }
  if (argc == 3 && strcmp(argv[1], "--device-code") == 0) return device_code(argv[2]);
  if (argc == 2 && argv[1][0] != '-') return description(argv[1]);
  fprintf(stderr, "usage: plugin_info PLUGIN.so | --expected | --device-code PLUGIN.so\n");
  return 2;
}
